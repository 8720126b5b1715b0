/* test_devtime_lag.c — preload/devtime_lag.h: the submission lag found
 * among recent ops' lags as the H200 showed them, and refused where there
 * is no idle stream's cluster to find. */
#include <stdint.h>

#include "check.h"
#include "devtime_lag.h"

static uint64_t seed = 88172645463325252ull;
static int64_t uniform(int64_t lo, int64_t hi) { /* xorshift64, [lo, hi] */
  seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
  return lo + (int64_t)(seed % (uint64_t)(hi - lo + 1));
}

/* 256 lags as a loaded H200 gave them: 200 idle-stream ops at 3.1-3.5 us,
 * 50 busy-stream ops spread over 10-60 us, and 6 preempted hosts far below. */
static void h200(int64_t *v) {
  uint32_t n = 0;
  for (int i = 0; i < 200; i++)
    v[n++] = uniform(3100, 3500);
  for (int i = 0; i < 50; i++)
    v[n++] = uniform(10000, 60000);
  const int64_t preempted[] = {-20000, -9000, -5000, -2600, -1200, 900};
  for (int i = 0; i < 6; i++)
    v[n++] = preempted[i];
  for (uint32_t i = n - 1; i > 0; i--) { /* arrival order: shuffled */
    uint32_t j = (uint32_t)uniform(0, i);
    int64_t t = v[i];
    v[i] = v[j], v[j] = t;
  }
}

int main(void) {
  int64_t v[256], lag = 0;
  h200(v);
  CHECK(gt_dt_lag_estimate(v, 256, &lag) == 1);
  CHECK_MSG(lag >= 3100 && lag <= 3500, "the idle cluster's lag, not an outlier: %lld",
            (long long)lag);
  CHECK(v[0] == -20000); /* sorted in place: the least was the outlier */

  /* no cluster: every op found its stream busy, lags spread over 10-60 us */
  for (int i = 0; i < 256; i++)
    v[i] = 10000 + i * 196;
  CHECK(gt_dt_lag_estimate(v, 256, &lag) == 0);

  /* a busy pipeline's steady backlog clusters at 200 us: no queueing delay */
  for (int i = 0; i < 256; i++)
    v[i] = uniform(200000, 200400);
  CHECK(gt_dt_lag_estimate(v, 256, &lag) == 0);

  /* the stand-in: events complete at the host's call, lags about 0 */
  for (int i = 0; i < 16; i++)
    v[i] = uniform(-80, 40);
  CHECK(gt_dt_lag_estimate(v, 15, &lag) == 0); /* too few ops yet */
  CHECK(gt_dt_lag_estimate(v, 16, &lag) == 1);
  CHECK(lag >= -80 && lag <= 40);
  return check_finish("test_devtime_lag");
}
