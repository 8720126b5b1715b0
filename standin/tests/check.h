// check.h — what the stand-in's test programs (test_standin.cu,
// test_capture.cu) share: CHECK and CHECK_ERR print every checked value,
// "ok  " or "FAIL" before it, and `failures` counts the mismatches (each
// program returns non-zero when there was one); a long kernel to keep a
// stream busy (timings through events on busy streams are exact), the
// host clock, and the elapsed time of two events.
#ifndef GPUTRACE_STANDIN_TESTS_CHECK_H
#define GPUTRACE_STANDIN_TESTS_CHECK_H

#include <cstdio>
#include <time.h>

static int failures;

#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    bool ok_ = (cond);                                                                   \
    printf("%s ", ok_ ? "ok  " : "FAIL");                                                \
    printf(__VA_ARGS__);                                                                 \
    printf("\n");                                                                        \
    if (!ok_)                                                                            \
      failures++;                                                                        \
  } while (0)

#define CHECK_ERR(expr, want)                                                            \
  do {                                                                                   \
    cudaError_t got_ = (expr);                                                           \
    CHECK(got_ == (want), "%s -> %d (%s), want %d", #expr, (int)got_,                    \
          cudaGetErrorName(got_), (int)(want));                                          \
  } while (0)

__global__ void busy() {}

static double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Keep `s` busy for about `ms` (10^7 threads per ms at 0.1 ns/thread).
static void keep_busy(cudaStream_t s, int ms) {
  busy<<<ms * 10000, 1000, 0, s>>>();
}

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = -1;
  cudaError_t e = cudaEventElapsedTime(&ms, a, b);
  if (e != cudaSuccess)
    printf("     cudaEventElapsedTime -> %s\n", cudaGetErrorName(e));
  return ms;
}

#endif
