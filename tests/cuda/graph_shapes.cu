// graph_shapes.cu — one kernel at two launch configurations, as a GEMM
// library runs one kernel for several layer shapes: warmed up eagerly at
// both, captured into a graph in global mode with both, and replayed. A
// graph node's eager reference must be its own configuration's: the
// stand-in's kernel time grows with the threads launched.
//
// Usage: graph_shapes [replays]   (default 20; 3 eager warm-up steps)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_call.h"

__global__ void gemm_like(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] * 0.5f + 1.0f;
}

enum { N = 1 << 18, SMALL = 64, LARGE = 1024, BLOCK = 256 };

static void step(cudaStream_t s, float *x) {
  gemm_like<<<SMALL, BLOCK, 0, s>>>(x, N);
  gemm_like<<<LARGE, BLOCK, 0, s>>>(x, N);
}

int main(int argc, char **argv) {
  int replays = argc > 1 ? atoi(argv[1]) : 20;
  float *x;
  cudaStream_t s;
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 3; i++)
    step(s, x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  step(s, x);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  for (int i = 0; i < replays; i++)
    CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  printf("replays: %d\n", replays);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  return 0;
}
