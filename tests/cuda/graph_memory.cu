// graph_memory.cu — graph memory: allocations that belong to a graph and
// exist while it runs, not at capture.
//   1. a captured step that allocates 1 MiB (cudaMallocAsync), uses it and
//      frees it (cudaFreeAsync) inside the graph: launched 3 times;
//   2. a captured allocation of 2 MiB the graph leaves allocated: launched
//      once, then freed by the application with cudaFree;
//   3. a graph built with an allocation node of 4 MiB and a free node.
// Every call's result is printed; exits 1 on the first failure.
#include <cuda_runtime.h>
#include <stdio.h>

#include "check_call.h"

__global__ void touch(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1.0f;
}


enum { MiB = 1 << 20 };

int main() {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  touch<<<1, 256, 0, s>>>(nullptr, 0); // eager warm-up
  CHECK(cudaStreamSynchronize(s));

  // 1. allocated and freed inside the graph
  cudaGraph_t g1;
  cudaGraphExec_t x1;
  float *tmp;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync((void **)&tmp, MiB, s));
  touch<<<MiB / 4 / 256, 256, 0, s>>>(tmp, MiB / 4);
  CHECK(cudaFreeAsync(tmp, s));
  CHECK(cudaStreamEndCapture(s, &g1));
  CHECK(cudaGraphInstantiate(&x1, g1, 0));
  for (int i = 0; i < 3; i++)
    CHECK(cudaGraphLaunch(x1, s));
  CHECK(cudaStreamSynchronize(s));
  printf("in-graph allocation: 3 launches\n");

  // 2. left allocated by the graph, freed by the application
  cudaGraph_t g2;
  cudaGraphExec_t x2;
  float *kept;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync((void **)&kept, 2 * MiB, s));
  touch<<<2 * MiB / 4 / 256, 256, 0, s>>>(kept, 2 * MiB / 4);
  CHECK(cudaStreamEndCapture(s, &g2));
  CHECK(cudaGraphInstantiate(&x2, g2, 0));
  CHECK(cudaGraphLaunch(x2, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaFree(kept));
  printf("graph allocation freed by the application\n");

  // 3. built with memory nodes
  cudaGraph_t g3;
  cudaGraphExec_t x3;
  cudaGraphNode_t alloc, kern, dealloc;
  CHECK(cudaGraphCreate(&g3, 0));
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = 4 * MiB;
  CHECK(cudaGraphAddMemAllocNode(&alloc, g3, NULL, 0, &ap));
  int n = 4 * MiB / 4;
  float *p = (float *)ap.dptr;
  void *args[] = {&p, &n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)touch;
  kp.gridDim = dim3(n / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&kern, g3, &alloc, 1, &kp));
  CHECK(cudaGraphAddMemFreeNode(&dealloc, g3, &kern, 1, ap.dptr));
  CHECK(cudaGraphInstantiate(&x3, g3, 0));
  for (int i = 0; i < 2; i++)
    CHECK(cudaGraphLaunch(x3, s));
  CHECK(cudaStreamSynchronize(s));
  printf("built with memory nodes: 2 launches\n");

  CHECK(cudaGraphExecDestroy(x1));
  CHECK(cudaGraphExecDestroy(x2));
  CHECK(cudaGraphExecDestroy(x3));
  CHECK(cudaGraphDestroy(g1));
  CHECK(cudaGraphDestroy(g2));
  CHECK(cudaGraphDestroy(g3));
  CHECK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
