// sync_loop.cu — the anti-patterns `gputrace report` should name: argv[1]
// iterations (default 200), each an NVTX "req" range around a cudaMalloc of
// 1 MiB, a 4 KiB synchronous host-to-device copy, one kernel launch, a
// cudaDeviceSynchronize right after it, and the cudaFree of the buffer.
// Prints "sync_loop: N iterations"; exits 1 if a call failed.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void step(char *p) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200, bad = 0;
  static char small[4096];
  for (int i = 0; i < n; i++) {
    nvtxRangePushA("req");
    char *buf;
    bad += cudaMalloc(&buf, 1 << 20) != cudaSuccess;
    bad += cudaMemcpy(buf, small, sizeof small, cudaMemcpyHostToDevice) != cudaSuccess;
    step<<<8, 128>>>(buf);
    bad += cudaDeviceSynchronize() != cudaSuccess;
    bad += cudaFree(buf) != cudaSuccess;
    nvtxRangePop();
  }
  printf("sync_loop: %d iterations\n", n);
  return bad ? 1 : 0;
}
