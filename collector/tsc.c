/* tsc.c — the collector's clock (CLOCK_MONOTONIC ns, the clock of every
 * record's ts_ns) and converting TSC ticks to it (see collector.h).
 *
 * Contract:
 *  - Ticks map to ns along a continuous, increasing, piecewise-linear line:
 *    each refresh starts a segment at the current tick, at the value the
 *    line already has there, so a tick converts to the same ns whenever it
 *    is drained (before or after a refresh) and a thread's later tick never
 *    gets an earlier time. (Re-anchoring the line on each fresh (tsc,
 *    monotonic) sample would move it by the sample's jitter, tens of ns:
 *    two records of one thread drained across a refresh could swap.)
 *  - The line keeps to CLOCK_MONOTONIC by slewing: from an anchor its
 *    slope is the run's tick length (first sample to latest) changed by up
 *    to GT_TSC_SLEW until it has taken up its error against the fresh
 *    sample (over one refresh interval, or longer at that bound), then the
 *    run's tick length again: never past the sample's line. A line behind
 *    by more than GT_TSC_JUMP_NS (the host stopped, a clock step) jumps
 *    to it at once, forward only, so it still never goes back, and the
 *    tick length is measured from there on (a step is none).
 *  - The last GT_TSC_SEGS segments are kept (two an anchor: 12 s or more);
 *    a tick before the oldest (a record drained that late) is taken back
 *    from the oldest's start at the run's tick length.
 *  - One thread: the collector's main loop drains and refreshes.
 */
#include <stdint.h>
#include <time.h>

#include "collector.h"

#define GT_TSC_SEGS 256                /* a power of two */
#define GT_TSC_REFRESH_NS 100000000ull /* 100 ms */
#define GT_TSC_SLEW 0.001              /* the slope changed by 0.1 % at most */
#define GT_TSC_JUMP_NS 1000000ull      /* 1 ms behind: jump, not slew */

struct pair {
  uint64_t tsc;
  uint64_t mono;
};

struct segment { /* from tsc on: ns + (ticks - tsc) * slope */
  uint64_t tsc, ns;
  double slope; /* ns a tick */
};

static struct pair first;                /* the first sample: the run's rate from it */
static struct pair anchored;             /* the latest sample */
static double ns_per_tick;               /* the run's tick length, first to latest */
static struct segment segs[GT_TSC_SEGS]; /* a ring, the last pushed at newest */
static unsigned nsegs, newest;

uint64_t gt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static uint64_t on_segment(const struct segment *s, uint64_t ticks) {
  int64_t d = (int64_t)(ticks - s->tsc);
  return s->ns + (uint64_t)(int64_t)((double)d * s->slope);
}

static void push_segment(uint64_t tsc, uint64_t ns, double slope) {
  newest = nsegs ? (newest + 1) & (GT_TSC_SEGS - 1) : 0;
  nsegs += nsegs < GT_TSC_SEGS;
  segs[newest] = (struct segment){tsc, ns, slope};
}

void gt_tsc_start(uint64_t tsc0, uint64_t mono0, uint64_t tsc1, uint64_t mono1) {
  first = (struct pair){tsc0, mono0};
  anchored = (struct pair){tsc1, mono1};
  ns_per_tick = (double)(mono1 - mono0) / (double)(tsc1 - tsc0);
  nsegs = 0;
  push_segment(tsc0, mono0, ns_per_tick);
}

void gt_tsc_anchor(uint64_t tsc, uint64_t mono) {
  if (tsc <= anchored.tsc || mono <= anchored.mono)
    return; /* no time passed on one clock: nothing to learn */
  double before = ns_per_tick;
  anchored = (struct pair){tsc, mono};
  ns_per_tick = (double)(mono - first.mono) / (double)(tsc - first.tsc);
  uint64_t at = gt_tsc_to_ns(tsc); /* where the line is now */
  int64_t error = (int64_t)(mono - at);
  if (error > (int64_t)GT_TSC_JUMP_NS) {
    /* Behind by a step: catch up, and measure the rate from here on (the
     * step is no tick length); until a refresh has, the rate before it. */
    ns_per_tick = before;
    first = anchored;
    push_segment(tsc, mono, ns_per_tick);
    return;
  }
  double slew = (double)error / (double)GT_TSC_REFRESH_NS; /* of the slope */
  slew = slew > GT_TSC_SLEW ? GT_TSC_SLEW : slew < -GT_TSC_SLEW ? -GT_TSC_SLEW : slew;
  push_segment(tsc, at, ns_per_tick * (1.0 + slew));
  if (error == 0)
    return;
  /* Then, once the error is taken up, the run's rate again. */
  uint64_t taken_up = tsc + (uint64_t)((double)error / (ns_per_tick * slew));
  push_segment(taken_up, on_segment(&segs[newest], taken_up), ns_per_tick);
}

void gt_tsc_calibrate(void) {
  struct pair a = sample();
  struct timespec pause = {0, 5000000};
  nanosleep(&pause, NULL);
  struct pair b = sample();
  gt_tsc_start(a.tsc, a.mono, b.tsc, b.mono);
}

void gt_tsc_refresh(uint64_t now_ns) {
  if (now_ns - anchored.mono < GT_TSC_REFRESH_NS)
    return;
  struct pair p = sample();
  gt_tsc_anchor(p.tsc, p.mono);
}

/* Along the last segment pushed that starts at or before ticks (the newest
 * or one of the few before it, for a record just drained; a segment that
 * starts later than a later anchor is never reached); the oldest kept when
 * ticks is before them all. */
uint64_t gt_tsc_to_ns(uint64_t ticks) {
  const struct segment *s = &segs[newest];
  for (unsigned i = newest, k = 1; (int64_t)(ticks - s->tsc) < 0; k++) {
    if (k == nsegs) { /* before them all */
      struct segment back = {s->tsc, s->ns, ns_per_tick};
      return on_segment(&back, ticks);
    }
    i = (i - 1) & (GT_TSC_SEGS - 1);
    s = &segs[i];
  }
  return on_segment(s, ticks);
}

uint64_t gt_tsc_span_ns(uint64_t ticks) {
  return (uint64_t)((double)ticks * ns_per_tick + 0.5);
}
