// sample_mix.cu — long and short kernels on several streams, for device
// timing under sampling (tests/e2e/test_devtime.py): for each of 3 streams in
// turn, argv[1] (default 20000) launches of `short_k` <<<1, 32>>> and, after
// every 100th, one `long_k` <<<4096, 256>>>, then a cudaStreamSynchronize.
// One stream is busy at a time, so a kernel's span from its stream's order is
// its own duration (on the stand-in: KERNEL_BASE_NS + threads x
// KERNEL_PS_PER_THREAD / 1000 ns) and the totals have an exact reference.
// Prints "sample_mix: 3 streams x N launches, 0 failures".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void short_k(int *p) {
  if (p) p[0] = 1;
}
__global__ void long_k(int *p) {
  if (p) p[0] = 2;
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 20000, failures = 0;
  const int streams = 3;
  for (int k = 0; k < streams; k++) {
    cudaStream_t s;
    failures += cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
    for (int i = 0; i < launches; i++) {
      short_k<<<1, 32, 0, s>>>(nullptr);
      if (i % 100 == 99) long_k<<<4096, 256, 0, s>>>(nullptr);
    }
    failures += cudaStreamSynchronize(s) != cudaSuccess;
    failures += cudaStreamDestroy(s) != cudaSuccess;
  }
  failures += cudaGetLastError() != cudaSuccess;
  printf("sample_mix: %d streams x %d launches, %d failures\n", streams, launches, failures);
  return failures != 0;
}
