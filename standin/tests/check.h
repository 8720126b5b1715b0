// check.h — what the stand-in's test programs (test_standin.cu,
// test_capture.cu) check with: every checked value printed, "ok  " or
// "FAIL" before it; `failures` counts the mismatches (each program returns
// non-zero when there was one).
#ifndef GPUTRACE_STANDIN_TESTS_CHECK_H
#define GPUTRACE_STANDIN_TESTS_CHECK_H

#include <cstdio>

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

#endif
