// pageable_loop.cu — a transfer-bound loop for `gputrace report` tests:
// argv[1] iterations (default 20) of an NVTX "iter" range around one
// synchronous host-to-device copy of argv[2] MiB (default 16) from pageable
// memory (a std::vector), one tiny kernel and a cudaDeviceSynchronize.
// Prints "pageable_loop: N iterations"; exits 1 if a call failed.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <vector>

__global__ void touch(float *p) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 16) << 20;
  std::vector<char> host(bytes, 1); // filled: no page faults inside the copies
  float *dev;
  int bad = cudaMalloc(&dev, bytes) != cudaSuccess;
  for (int i = 0; i < n; i++) {
    nvtxRangePushA("iter");
    bad += cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess;
    touch<<<1, 32>>>(dev);
    bad += cudaDeviceSynchronize() != cudaSuccess;
    nvtxRangePop();
  }
  bad += cudaFree(dev) != cudaSuccess;
  printf("pageable_loop: %d iterations\n", n);
  return bad ? 1 : 0;
}
