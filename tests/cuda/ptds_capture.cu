// ptds_capture.cu — built with --default-stream per-thread: stream 0 is the
// thread's per-thread default stream, which may capture (the legacy stream
// may not). Captures a kernel and a host function on it in global mode,
// replays the graph REPLAYS times and prints how often each ran
// (e2e/test_graphs.py: the host function is a node of the graph, not an
// eager call).
#include <cstdio>

#include "check_call.h"

#define REPLAYS 4

__global__ void step(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}

static int host_runs;
static void CUDART_CB on_host(void *) {
  host_runs++;
}

int main() {
  const int n = 1024;
  float *x;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  cudaGraph_t g;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
  step<<<n / 256, 256>>>(x, n);
  CHECK(cudaLaunchHostFunc(0, on_host, nullptr));
  CHECK(cudaStreamEndCapture(0, &g));
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  for (int i = 0; i < REPLAYS; i++)
    CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaStreamSynchronize(0));
  printf("host function ran %d times\n", host_runs);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaFree(x));
  return 0;
}
