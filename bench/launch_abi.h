/* launch_abi.h — what the bench's launch hooks (floor_shim.c, lttng_shim.c)
 * share: __cudaLaunchKernel's ABI, declared here rather than taken from
 * cuda_runtime.h so that they build with a plain C compiler, and the real
 * one, looked up once. */
#ifndef GPUTRACE_BENCH_LAUNCH_ABI_H
#define GPUTRACE_BENCH_LAUNCH_ABI_H

#include <dlfcn.h>
#include <stddef.h>

typedef struct {
  unsigned x, y, z;
} dim3;
typedef int (*launch_fn)(const void *, dim3, dim3, void **, size_t, void *);

static inline launch_fn real_launch(void) {
  static launch_fn real;
  if (!real)
    real = (launch_fn)dlsym(RTLD_NEXT, "__cudaLaunchKernel");
  return real;
}

#endif
