/* unwind_bench.c — preload/unwind.c's cost per stack against backtrace()'s,
 * in one run, alternating, ROUNDS rounds:
 *  - warm: gt_unwind at 30 frames deep, its rules cached, N captures;
 *  - backtrace: backtrace() at the same place, N captures;
 *  - cold: the first gt_unwind of a fresh 30-deep chain of distinct
 *    functions (every return address new: 30 rules computed), one capture
 *    per round, each round its own chain; with the page faults it took
 *    (first touches of the static rule cache's pages, mostly).
 * Prints ns per capture, fastest and median of the rounds, the depth, the
 * rules computed and fallbacks, and the rule cache's size.
 * Usage: gputrace-unwind-bench [N=200000] */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "unwind.h"

#define ROUNDS 9
#define DEPTH 30
#define MAXF 64

static volatile uint64_t sink;
static void keep(uint64_t v) {
  sink = v;
  __asm__ volatile("" ::: "memory");
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- warm and backtrace: N captures at the bottom of a recursion ---- */

static long g_n = 200000;
static int g_depth; /* frames gt_unwind gave at the bottom */

__attribute__((noinline)) static uint64_t loop_unwind(void) {
  void *ips[MAXF];
  int n = 0;
  uint64_t t0 = now_ns();
  for (long i = 0; i < g_n; i++) {
    n = gt_unwind(ips, MAXF, NULL);
    __asm__ volatile("" ::: "memory");
  }
  uint64_t t = now_ns() - t0;
  g_depth = n;
  return t;
}

__attribute__((noinline)) static uint64_t loop_backtrace(void) {
  void *ips[MAXF];
  uint64_t t0 = now_ns();
  for (long i = 0; i < g_n; i++) {
    backtrace(ips, MAXF);
    __asm__ volatile("" ::: "memory");
  }
  return now_ns() - t0;
}

__attribute__((noinline)) static uint64_t count_frames(void) {
  void *ips[MAXF];
  return (uint64_t)gt_unwind(ips, MAXF, NULL);
}

/* Recurses `left` levels, then runs fn there. */
__attribute__((noinline)) static uint64_t at_depth(int left, uint64_t (*fn)(void)) {
  uint64_t r = left <= 1 ? fn() : at_depth(left - 1, fn);
  keep(r);
  return r;
}

/* ---- cold: ROUNDS chains of DEPTH distinct functions ---- */

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static long g_cold_faults[ROUNDS], g_cold_frames;
static int g_round;

__attribute__((noinline)) static uint64_t cold_capture(void) {
  void *ips[MAXF];
  long f0 = minor_faults();
  uint64_t t0 = now_ns();
  g_cold_frames = gt_unwind(ips, MAXF, NULL);
  uint64_t t = now_ns() - t0;
  g_cold_faults[g_round] = minor_faults() - f0;
  return t;
}

/* Function k of chain c calls k+1; each adds its own constant, so no two
 * are identical (no identical-code folding merges them). */
#define COLD(c, k, next)                                                                 \
  __attribute__((noinline)) static uint64_t cold_##c##_##k(void) {                       \
    uint64_t r = next();                                                                 \
    keep(r + c * 100u + k);                                                              \
    return r;                                                                            \
  }
/* clang-format off */
#define CHAIN(c)                                                                         \
  COLD(c, 29, cold_capture)                                                              \
  COLD(c, 28, cold_##c##_29) COLD(c, 27, cold_##c##_28) COLD(c, 26, cold_##c##_27)       \
  COLD(c, 25, cold_##c##_26) COLD(c, 24, cold_##c##_25) COLD(c, 23, cold_##c##_24)       \
  COLD(c, 22, cold_##c##_23) COLD(c, 21, cold_##c##_22) COLD(c, 20, cold_##c##_21)       \
  COLD(c, 19, cold_##c##_20) COLD(c, 18, cold_##c##_19) COLD(c, 17, cold_##c##_18)       \
  COLD(c, 16, cold_##c##_17) COLD(c, 15, cold_##c##_16) COLD(c, 14, cold_##c##_15)       \
  COLD(c, 13, cold_##c##_14) COLD(c, 12, cold_##c##_13) COLD(c, 11, cold_##c##_12)       \
  COLD(c, 10, cold_##c##_11) COLD(c, 9, cold_##c##_10) COLD(c, 8, cold_##c##_9)          \
  COLD(c, 7, cold_##c##_8) COLD(c, 6, cold_##c##_7) COLD(c, 5, cold_##c##_6)             \
  COLD(c, 4, cold_##c##_5) COLD(c, 3, cold_##c##_4) COLD(c, 2, cold_##c##_3)             \
  COLD(c, 1, cold_##c##_2) COLD(c, 0, cold_##c##_1)
CHAIN(0) CHAIN(1) CHAIN(2) CHAIN(3) CHAIN(4) CHAIN(5) CHAIN(6) CHAIN(7) CHAIN(8)
    /* clang-format on */
    static uint64_t (*const cold_chains[ROUNDS])(void) = {cold_0_0, cold_1_0, cold_2_0,
                                                          cold_3_0, cold_4_0, cold_5_0,
                                                          cold_6_0, cold_7_0, cold_8_0};

/* ---- results ---- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *ns, double per) {
  qsort(ns, ROUNDS, sizeof *ns, cmp_u64);
  printf("%-10s fastest %10.1f ns  median %10.1f ns\n", what, (double)ns[0] / per,
         (double)ns[ROUNDS / 2] / per);
}

int main(int argc, char **argv) {
  if (argc > 1)
    g_n = atol(argv[1]) > 0 ? atol(argv[1]) : g_n;
  gt_unwind_init(1, dlsym);
  /* levels of at_depth that make the loops' stacks DEPTH frames deep */
  int levels = DEPTH - ((int)at_depth(1, count_frames) - 1);
  uint64_t warm[ROUNDS], bt[ROUNDS], cold[ROUNDS];
  long faults[ROUNDS];
  struct gt_unwind_counts c0, c1;
  at_depth(levels, loop_unwind); /* the rules of this chain, cached */
  gt_unwind_counts(&c0);
  for (int r = 0; r < ROUNDS; r++) {
    warm[r] = at_depth(levels, loop_unwind);
    bt[r] = at_depth(levels, loop_backtrace);
    g_round = r;
    cold[r] = cold_chains[r]();
    faults[r] = g_cold_faults[r];
  }
  gt_unwind_counts(&c1);
  printf("gt_unwind vs backtrace(): %d frames deep, %ld captures a round, %d rounds\n",
         g_depth, g_n, ROUNDS);
  report("warm", warm, (double)g_n);
  report("backtrace", bt, (double)g_n);
  report("cold", cold, 1.0);
  qsort(faults, ROUNDS, sizeof *faults, cmp_long);
  printf("cold: %ld frames a capture, page faults in it: fewest %ld, median %ld\n",
         g_cold_frames, faults[0], faults[ROUNDS / 2]);
  printf("rules computed in the rounds %llu (%.1f per cold chain), stacks cut %llu\n",
         (unsigned long long)(c1.rules - c0.rules),
         (double)(c1.rules - c0.rules) / ROUNDS, (unsigned long long)(c1.cut - c0.cut));
  printf("cache_bytes %llu\n", (unsigned long long)c1.cache_bytes);
  return 0;
}
