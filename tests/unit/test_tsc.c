/* test_tsc.c — collector/tsc.c's conversion of TSC ticks to monotonic ns,
 * fed simulated (tsc, monotonic) samples: a 2.5 GHz TSC, each sample off
 * by up to ±40 ns (the jitter of reading two clocks), a refresh every
 * 100 ms.
 *
 * What it holds (tsc.c's contract): a tick converts to the same ns before
 * and after a refresh; ticks in order convert to times in order across
 * 300 refreshes (the old re-anchoring on each sample broke both: a record
 * drained after a refresh could come out before one drained before it);
 * the line stays within 150 ns of the true clock once past its first
 * second; a clock that steps forward is followed from the next refresh, one
 * that falls behind the line is slewed toward, never stepped back; a late
 * refresh after a correction does not overshoot; a tick older than every
 * kept segment still converts, in order. */
#include <stdint.h>

#include "check.h"
#include "collector.h"

#define GHZ 2.5
#define MS 1000000ull
#define TICKS(ns) ((uint64_t)((double)(ns)*GHZ))

static const uint64_t t0 = 1000000000000ull; /* the TSC at the run's start */
static const uint64_t m0 = 5000000000ull;    /* CLOCK_MONOTONIC then */
static int64_t step_ns;                      /* the true clock's steps so far */

/* The true monotonic time at tick t (after any step). */
static uint64_t true_ns(uint64_t t) {
  return m0 + (uint64_t)((double)(t - t0) / GHZ) + (uint64_t)step_ns;
}

/* A sample's monotonic time: the truth off by up to ±40 ns. */
static uint64_t jittered(uint64_t t, unsigned k) {
  int64_t j = (int64_t)((k * 2654435761u) % 81u) - 40;
  return (uint64_t)((int64_t)true_ns(t) + j);
}

static uint64_t absdiff(uint64_t a, uint64_t b) {
  return a > b ? a - b : b - a;
}

static void start(void) {
  step_ns = 0;
  gt_tsc_start(t0, jittered(t0, 1), t0 + TICKS(5 * MS), jittered(t0 + TICKS(5 * MS), 2));
}

/* 300 refreshes; between each, 1000 ticks converted in order, the last
 * before the refresh converted again after it. */
static void test_continuous_in_order(void) {
  start();
  uint64_t prev = 0, worst = 0, back = 0, moved = 0;
  for (unsigned r = 1; r <= 300; r++) {
    uint64_t anchor = t0 + TICKS(r * 100 * MS);
    uint64_t last = 0, last_ns = 0;
    for (uint64_t t = anchor - TICKS(100 * MS); t < anchor; t += TICKS(100 * MS) / 1000) {
      uint64_t ns = gt_tsc_to_ns(t);
      back += ns < prev;
      prev = ns;
      last = t;
      last_ns = ns;
      if (r > 10 && absdiff(ns, true_ns(t)) > worst)
        worst = absdiff(ns, true_ns(t));
    }
    gt_tsc_anchor(anchor, jittered(anchor, r + 3));
    moved += gt_tsc_to_ns(last) != last_ns;
  }
  CHECK_EQ_U64(back, 0);  /* ticks in order, times in order */
  CHECK_EQ_U64(moved, 0); /* a tick's time is the same after a refresh */
  CHECK_MSG(worst <= 150, "within 150 ns of the clock after 1 s: %llu ns",
            (unsigned long long)worst);
}

/* Ticks 1 ns of TSC time apart, on either side of each refresh. */
static void test_refresh_between_close_ticks(void) {
  start();
  uint64_t back = 0;
  for (unsigned r = 1; r <= 50; r++) {
    uint64_t anchor = t0 + TICKS(r * 100 * MS);
    uint64_t before = gt_tsc_to_ns(anchor - 3);
    gt_tsc_anchor(anchor, jittered(anchor, r * 7));
    back += gt_tsc_to_ns(anchor - 1) < before;
    back += gt_tsc_to_ns(anchor) < gt_tsc_to_ns(anchor - 1);
    back += gt_tsc_to_ns(anchor + 1) < gt_tsc_to_ns(anchor);
  }
  CHECK_EQ_U64(back, 0);
}

/* A run of n refreshes as usual, 100 ms apart. */
static void run_refreshes(unsigned n) {
  start();
  for (unsigned r = 1; r <= n; r++)
    gt_tsc_anchor(t0 + TICKS(r * 100 * MS), jittered(t0 + TICKS(r * 100 * MS), r));
}

/* 20 refreshes as usual: 2 s of run. */
static void run_two_seconds(void) {
  run_refreshes(20);
}

/* The host stops for 5 ms (the true clock steps forward): the line jumps
 * to it at the next refresh, leaves the past where it was, and keeps to
 * the clock after (the step is not taken for a faster tick). */
static void test_forward_step(void) {
  run_two_seconds();
  uint64_t at = t0 + TICKS(2000 * MS), before = gt_tsc_to_ns(at);
  step_ns = 5 * (int64_t)MS;
  for (unsigned r = 1; r <= 10; r++)
    gt_tsc_anchor(at + TICKS(r * 100 * MS), jittered(at + TICKS(r * 100 * MS), 90 + r));
  CHECK(gt_tsc_to_ns(at) == before);
  uint64_t worst = 0;
  for (uint64_t t = at + TICKS(100 * MS); t < at + TICKS(1000 * MS); t += TICKS(MS))
    if (absdiff(gt_tsc_to_ns(t), true_ns(t)) > worst)
      worst = absdiff(gt_tsc_to_ns(t), true_ns(t));
  CHECK_MSG(worst <= 150, "after a 5 ms step forward: %llu ns off",
            (unsigned long long)worst);
}

/* The clock falls 300 µs behind the line (as a test can set it): never
 * stepped back; slewed toward at 0.1 %, within 20 µs of it 2 s later (the
 * step still in the run's tick length then: 300 µs over 4 s). */
static void test_clock_behind(void) {
  run_two_seconds();
  uint64_t at = t0 + TICKS(2000 * MS);
  step_ns = -300000;
  uint64_t prev = gt_tsc_to_ns(at), back = 0;
  for (unsigned r = 1; r <= 20; r++) {
    uint64_t a = at + TICKS(r * 100 * MS);
    for (uint64_t t = a - TICKS(100 * MS); t < a; t += TICKS(MS)) {
      back += gt_tsc_to_ns(t) < prev;
      prev = gt_tsc_to_ns(t);
    }
    gt_tsc_anchor(a, jittered(a, r + 50));
  }
  CHECK_EQ_U64(back, 0);
  uint64_t late = at + TICKS(2000 * MS) + 1000;
  CHECK_MSG(absdiff(gt_tsc_to_ns(late), true_ns(late)) <= 20000,
            "2 s after the clock fell 300 µs behind: %llu ns off",
            (unsigned long long)absdiff(gt_tsc_to_ns(late), true_ns(late)));
}

/* One sample 60 ns off, taken up by the next 100 ms, then the run's rate:
 * a refresh 2 s late finds the line near the clock, not 20 times the
 * error past it (a slope held until the next refresh would be). */
static void test_no_overshoot(void) {
  run_two_seconds();
  uint64_t a = t0 + TICKS(2100 * MS);
  gt_tsc_anchor(a, true_ns(a) + 60);
  uint64_t late = a + TICKS(2000 * MS);
  CHECK_MSG(absdiff(gt_tsc_to_ns(late), true_ns(late)) <= 150,
            "2 s after a correction: %llu ns off",
            (unsigned long long)absdiff(gt_tsc_to_ns(late), true_ns(late)));
}

/* Records drained so late that their ticks precede every kept segment
 * (256: 128 refreshes or more) still convert, in order, near the clock. */
static void test_older_than_kept(void) {
  run_refreshes(400);
  uint64_t old = t0 + TICKS(50 * MS), back = 0, worst = 0;
  for (uint64_t t = old; t < t0 + TICKS(40000 * MS); t += TICKS(10 * MS)) {
    back += gt_tsc_to_ns(t + TICKS(10 * MS)) < gt_tsc_to_ns(t);
    if (absdiff(gt_tsc_to_ns(t), true_ns(t)) > worst)
      worst = absdiff(gt_tsc_to_ns(t), true_ns(t));
  }
  CHECK_EQ_U64(back, 0);
  CHECK_MSG(worst <= 150, "40 s of ticks, the oldest before every segment: %llu ns off",
            (unsigned long long)worst);
}

int main(void) {
  test_continuous_in_order();
  test_refresh_between_close_ticks();
  test_forward_step();
  test_clock_behind();
  test_no_overshoot();
  test_older_than_kept();
  return check_finish("test_tsc");
}
