// requests.cu — an inference server in miniature for the fleet metrics
// (tests/e2e/test_fleet_metrics.py): argv[1] requests (default 30), each an
// NVTX "request" push range around a 256 KiB cudaMalloc, a 64 KiB async
// host-to-device copy, 2 launches of `encode`, a nested "decode" range of
// 3 launches of `decode`, a stream synchronize, the cudaFree and a sleep
// of (1 + i % 10) ms (so requests take ~1..10 ms); then argv[3] (default 0)
// launches of a CUDA graph captured from one request's kernels (2 encode,
// 3 decode), outside any range; then holds argv[2] ms (default 0) before
// exiting, so that a scrape sees every request.
// Prints "requests: N"; exits 1 if a call failed.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

__global__ void encode(float *x) {}
__global__ void decode(float *x) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 30, hold_ms = argc > 2 ? atoi(argv[2]) : 0;
  int replays = argc > 3 ? atoi(argv[3]) : 0;
  float *host, *act;
  cudaStream_t s;
  int bad = cudaMallocHost(&host, 64 << 10) != cudaSuccess;
  bad += cudaStreamCreate(&s) != cudaSuccess;
  for (int i = 0; i < n; i++) {
    nvtxRangePushA("request");
    bad += cudaMalloc(&act, 256 << 10) != cudaSuccess;
    bad += cudaMemcpyAsync(act, host, 64 << 10, cudaMemcpyHostToDevice, s) != cudaSuccess;
    for (int k = 0; k < 2; k++)
      encode<<<256, 256, 0, s>>>(act);
    nvtxRangePushA("decode");
    for (int k = 0; k < 3; k++)
      decode<<<1024, 256, 0, s>>>(act);
    nvtxRangePop();
    bad += cudaStreamSynchronize(s) != cudaSuccess;
    bad += cudaFree(act) != cudaSuccess;
    usleep((1 + i % 10) * 1000);
    nvtxRangePop();
  }
  if (replays > 0) {
    cudaGraph_t g;
    cudaGraphExec_t exec;
    bad += cudaMalloc(&act, 256 << 10) != cudaSuccess;
    bad += cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess;
    for (int k = 0; k < 2; k++)
      encode<<<256, 256, 0, s>>>(act);
    for (int k = 0; k < 3; k++)
      decode<<<1024, 256, 0, s>>>(act);
    bad += cudaStreamEndCapture(s, &g) != cudaSuccess;
    bad += cudaGraphInstantiate(&exec, g, 0) != cudaSuccess;
    for (int r = 0; r < replays; r++)
      bad += cudaGraphLaunch(exec, s) != cudaSuccess;
    bad += cudaStreamSynchronize(s) != cudaSuccess;
    bad += cudaGraphExecDestroy(exec) != cudaSuccess;
    bad += cudaGraphDestroy(g) != cudaSuccess;
    bad += cudaFree(act) != cudaSuccess;
  }
  bad += cudaStreamDestroy(s) != cudaSuccess;
  bad += cudaFreeHost(host) != cudaSuccess;
  printf("requests: %d\n", n);
  fflush(stdout);
  usleep(hold_ms * 1000);
  return bad ? 1 : 0;
}
