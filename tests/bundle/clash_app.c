/* clash_app.c — a program with its own libzstd and libunwind (the fakes of
 * this directory, linked, found through LD_LIBRARY_PATH) that makes CUDA
 * runtime calls: 3 cudaMalloc, 3 cudaFree. Traced from a gputrace bundle it
 * must still see its own copies, and the trace must hold every call
 * (tests/bundle/test_bundle.py). Prints "clash: zstd Z unwind U failures F". */
#include <cuda_runtime_api.h>
#include <stdio.h>

unsigned ZSTD_versionNumber(void);
int unw_backtrace(void **buffer, int size);

int main(void) {
  void *p[3], *frames[4];
  int failures = 0;
  for (int i = 0; i < 3; i++)
    failures += cudaMalloc(&p[i], (size_t)(i + 1) << 20) != cudaSuccess;
  for (int i = 0; i < 3; i++)
    failures += cudaFree(p[i]) != cudaSuccess;
  printf("clash: zstd %u unwind %d failures %d\n", ZSTD_versionNumber(),
         unw_backtrace(frames, 4), failures);
  return failures != 0;
}
