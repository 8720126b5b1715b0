// graph_cache.cu — a server with a big CUDA graph cache, then a steady loop
// (e2e/test_rolling.py): a rolling set must keep the steady launches even
// though every file has to say how each graph was made.
//
// Usage: graph_cache GRAPHS NODES STEADY PAUSE_US
//   GRAPHS    graphs captured at start-up (one per "batch size"), each of
//             NODES kernel launches (of varied shapes), instantiated and
//             kept for the whole run
//   STEADY    steady iterations: one kernel launch (tick) each, a stream
//             synchronize and a PAUSE_US sleep every 100, and one launch of
//             graph 0 every 1000
//
// Prints "steady: N launches, M graph launches" and exits 0 when every call
// succeeded (the first failed call is printed, exit 1).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check_call.h"

__global__ void layer(float *x, int i) {
  if (x)
    x[threadIdx.x] += (float)i;
}
__global__ void tick(int i) {}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: graph_cache GRAPHS NODES STEADY PAUSE_US\n");
    return 2;
  }
  int graphs = atoi(argv[1]), nodes = atoi(argv[2]), steady = atoi(argv[3]);
  int pause_us = atoi(argv[4]);
  float *x;
  cudaStream_t s;
  CHECK(cudaMalloc(&x, 1 << 12));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t *execs = (cudaGraphExec_t *)calloc(graphs, sizeof *execs);
  for (int g = 0; g < graphs; g++) {
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int n = 0; n < nodes; n++)
      layer<<<dim3(1 + n % 61, 1 + g), 32 * (1 + n % 7), n % 5 * 64, s>>>(x, n);
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiateWithFlags(&execs[g], graph, 0));
  }
  int launches = 0, graph_launches = 0;
  for (int i = 0; i < steady; i++) {
    tick<<<1, 32, 0, s>>>(i);
    CHECK(cudaGetLastError());
    launches++;
    if (i % 1000 == 999) {
      CHECK(cudaGraphLaunch(execs[0], s));
      graph_launches++;
    }
    if (i % 100 == 99) {
      CHECK(cudaStreamSynchronize(s));
      usleep(pause_us);
    }
  }
  CHECK(cudaStreamSynchronize(s));
  printf("steady: %d launches, %d graph launches\n", launches, graph_launches);
  return 0;
}
