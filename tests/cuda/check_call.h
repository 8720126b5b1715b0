// check_call.h — CHECK(call) for the test programs that print a failed
// call's result and stop: "cudaX(...): 901 (cudaErrorStreamCaptureInvalidated)",
// then `return 1` from the function it is in (main: the exit status).
#ifndef GPUTRACE_TESTS_CHECK_CALL_H
#define GPUTRACE_TESTS_CHECK_CALL_H

#include <cuda_runtime.h>
#include <stdio.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      printf("%s: %d (%s)\n", #call, (int)e_, cudaGetErrorName(e_));                     \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

#endif
