// compute_loop.cu — a compute-bound loop for `gputrace report` and `diff`
// tests: argv[1] iterations (default 50) of an NVTX "step" range around
// argv[2] (default 1) async host-to-device copies of argv[4] KiB (default
// 1024) from pinned memory, argv[3] (default 10) launches of a kernel of 4096 x 256 threads
// (on the stand-in: 2 us + 1048576 x KERNEL_PS_PER_THREAD ps each) and one
// cudaStreamSynchronize. Prints "compute_loop: N iterations"; exits 1 if a
// call failed.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void layer(float *x, int n) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50;
  int copies = argc > 2 ? atoi(argv[2]) : 1;
  int kernels = argc > 3 ? atoi(argv[3]) : 10;
  const size_t bytes = (size_t)(argc > 4 ? atoi(argv[4]) : 1024) << 10;
  float *host, *dev;
  cudaStream_t s;
  int bad = cudaMallocHost(&host, bytes) != cudaSuccess;
  bad += cudaMalloc(&dev, bytes) != cudaSuccess;
  bad += cudaStreamCreate(&s) != cudaSuccess;
  for (int i = 0; i < n; i++) {
    nvtxRangePushA("step");
    for (int c = 0; c < copies; c++)
      bad += cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s) != cudaSuccess;
    for (int k = 0; k < kernels; k++)
      layer<<<4096, 256, 0, s>>>(dev, 1 << 20);
    bad += cudaStreamSynchronize(s) != cudaSuccess;
    nvtxRangePop();
  }
  bad += cudaStreamDestroy(s) != cudaSuccess;
  bad += cudaFree(dev) != cudaSuccess;
  bad += cudaFreeHost(host) != cudaSuccess;
  printf("compute_loop: %d iterations\n", n);
  return bad ? 1 : 0;
}
