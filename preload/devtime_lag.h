/* devtime_lag.h — a device's submission lag from recent ops' lags
 * (devtime_resolve.c): how long a command queued on an idle stream takes
 * to run, measured as an op's start (its start event, on the host clock)
 * minus the host time just after that event was recorded, anchor error
 * included. A pure function, tested alone (tests/unit/test_devtime_lag.c).
 *
 * The lowest dense group of the lags: k of them within
 * GT_DT_LAG_DENSE_NS, k = n/16 and at least 4, its middle value. An idle
 * stream's ops cluster there, a busy stream's lie above and spread; a host
 * preempted between recording the start event and reading the clock gives
 * a rare outlier below, which the least lag would take (figures:
 * docs/PERFORMANCE.md, Figures moved out of code comments). None from
 * fewer than GT_DT_LAG_MIN_OPS lags, nor above
 * GT_DT_LAG_MAX_NS (no queueing delay is that long: a busy pipeline's
 * steady backlog). */
#ifndef GPUTRACE_DEVTIME_LAG_H
#define GPUTRACE_DEVTIME_LAG_H

#include <stdint.h>

#define GT_DT_LAG_MIN_OPS 16
#define GT_DT_LAG_DENSE_NS 1000ll
#define GT_DT_LAG_MAX_NS 50000ll

/* Sorts v (n values) in place; 1 and *lag when there is an estimate. No
 * qsort: glibc's may allocate, and the resolver is the app's guest. */
static inline int gt_dt_lag_estimate(int64_t *v, uint32_t n, int64_t *lag) {
  if (n < GT_DT_LAG_MIN_OPS)
    return 0;
  for (uint32_t i = 1; i < n; i++) {
    int64_t x = v[i];
    uint32_t j = i;
    for (; j > 0 && v[j - 1] > x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
  uint32_t k = n / 16 > 4 ? n / 16 : 4;
  for (uint32_t i = 0; i + k <= n; i++)
    if (v[i + k - 1] - v[i] <= GT_DT_LAG_DENSE_NS) {
      if (v[i + k / 2] > GT_DT_LAG_MAX_NS)
        return 0;
      *lag = v[i + k / 2];
      return 1;
    }
  return 0;
}

#endif
