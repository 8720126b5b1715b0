/* tsc.c — the collector's clock (CLOCK_MONOTONIC ns, the clock of every
 * record's ts_ns) and converting TSC ticks to it (see collector.h). */
#include <stdint.h>
#include <time.h>

#include "collector.h"

struct pair {
  uint64_t tsc;
  uint64_t mono;
};

uint64_t gt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct pair first, latest;
static double ns_per_tick;

static uint64_t rdtsc(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return 0;
#endif
}

/* A (tsc, monotonic) pair read as close together as we can manage: the
 * tightest of a few tries, the TSC taken between two clock reads. */
static struct pair sample(void) {
  struct pair best = {0, 0};
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t a = gt_now_ns();
    uint64_t t = rdtsc();
    uint64_t b = gt_now_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      best = (struct pair){t, a + (b - a) / 2};
    }
  }
  return best;
}

void gt_tsc_calibrate(void) {
  first = sample();
  struct timespec pause = {0, 5000000};
  nanosleep(&pause, NULL);
  latest = sample();
  ns_per_tick = (double)(latest.mono - first.mono) / (double)(latest.tsc - first.tsc);
}

void gt_tsc_refresh(uint64_t now_ns) {
  if (now_ns - latest.mono < 100000000ull)
    return;
  latest = sample();
  ns_per_tick = (double)(latest.mono - first.mono) / (double)(latest.tsc - first.tsc);
}

uint64_t gt_tsc_to_ns(uint64_t ticks) {
  int64_t d = (int64_t)(ticks - latest.tsc);
  return latest.mono + (uint64_t)(int64_t)((double)d * ns_per_tick);
}

uint64_t gt_tsc_span_ns(uint64_t ticks) {
  return (uint64_t)((double)ticks * ns_per_tick + 0.5);
}
