// graph_edits.cu — graphs changed after they were made (e2e/test_graphs.py,
// test_graph_edits): what each executable runs is what its nodes were set
// to at the time, not what they were added as.
//  1. A graph's kernel node set (cudaGraphKernelNodeSetParams) before an
//     instantiation, twice: the executable made before the edit keeps
//     running kA; the one made after runs kC (at a new grid) then kB.
//  2. An executable's node set (cudaGraphExecKernelNodeSetParams) between
//     its launches: kA before, kD after (at a new grid, 1000 times the
//     threads: its run takes 14 times as long on the stand-in); its graph keeps kA
//     (an executable instantiated from it later runs kA). A set naming a
//     node of another graph fails (cudaErrorInvalidValue) and changes
//     nothing.
//  3. A capture into a graph that has a node already
//     (cudaStreamBeginCaptureToGraph, depending on it): kE and the captured
//     kB both run.
//  4. A captured node (found with cudaGraphGetNodes) set in its executable:
//     the trace never saw that node's handle; never launched.
//  5. An executable updated from another graph (cudaGraphExecUpdate) between
//     launches: kB, then kC; then its node, named by the graph it was
//     instantiated from, set to kE.
// Prints each step; the launch counts are the L_* constants below.
#include <cuda_runtime.h>
#include <stdio.h>

#include "check_call.h"

__global__ void kA(float *x) {
  x[threadIdx.x] += 1.0f;
}
__global__ void kB(float *x) {
  x[threadIdx.x] *= 2.0f;
}
__global__ void kC(float *x) {
  x[threadIdx.x] -= 1.0f;
}
__global__ void kD(float *x) {
  x[threadIdx.x] = 0.0f;
}
__global__ void kE(float *x) {
  x[threadIdx.x] += 3.0f;
}
__global__ void kF(float *x) {
  x[threadIdx.x] += 4.0f;
}

enum { L_BEFORE = 3, L_AFTER = 10, L_EXEC_A = 4, L_EXEC_D = 6, L_LATER = 2, L_TO = 5 };
enum { L_UPD_B = 2, L_UPD_C = 3, L_UPD_E = 1 };

static float *x;
static void *args[] = {&x};

static cudaKernelNodeParams kernel(void *func, unsigned grid) {
  cudaKernelNodeParams p = {};
  p.func = func;
  p.gridDim = dim3(grid, 1, 1);
  p.blockDim = dim3(64, 1, 1);
  p.kernelParams = args;
  return p;
}

static int launch(cudaGraphExec_t e, int times, cudaStream_t s) {
  for (int i = 0; i < times; i++)
    CHECK(cudaGraphLaunch(e, s));
  return 0;
}

int main() {
  cudaStream_t s;
  CHECK(cudaMalloc(&x, 64 * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // 1: the graph's node set before an instantiation
  cudaGraph_t g1;
  cudaGraphNode_t a1, b1;
  cudaGraphExec_t before, after;
  CHECK(cudaGraphCreate(&g1, 0));
  cudaKernelNodeParams p = kernel((void *)kA, 4);
  CHECK(cudaGraphAddKernelNode(&a1, g1, nullptr, 0, &p));
  p = kernel((void *)kB, 4);
  CHECK(cudaGraphAddKernelNode(&b1, g1, &a1, 1, &p));
  CHECK(cudaGraphInstantiate(&before, g1, 0));
  p = kernel((void *)kD, 8);
  CHECK(cudaGraphKernelNodeSetParams(a1, &p));
  p = kernel((void *)kC, 16);
  CHECK(cudaGraphKernelNodeSetParams(a1, &p));
  CHECK(cudaGraphInstantiate(&after, g1, 0));
  if (launch(before, L_BEFORE, s) || launch(after, L_AFTER, s))
    return 1;
  printf("graph node set: %d launches before, %d after\n", L_BEFORE, L_AFTER);

  // 2: the executable's node set between launches
  cudaGraph_t g2;
  cudaGraphNode_t a2;
  cudaGraphExec_t e2, later;
  CHECK(cudaGraphCreate(&g2, 0));
  p = kernel((void *)kA, 4);
  CHECK(cudaGraphAddKernelNode(&a2, g2, nullptr, 0, &p));
  CHECK(cudaGraphInstantiate(&e2, g2, 0));
  if (launch(e2, L_EXEC_A, s))
    return 1;
  p = kernel((void *)kD, 4096);
  CHECK(cudaGraphExecKernelNodeSetParams(e2, a2, &p));
  cudaError_t wrong = cudaGraphExecKernelNodeSetParams(e2, b1, &p);
  printf("a node of another graph: %d (%s)\n", (int)wrong, cudaGetErrorName(wrong));
  cudaGetLastError(); /* the failure is the thread's last error: cleared */
  if (launch(e2, L_EXEC_D, s))
    return 1;
  CHECK(cudaGraphInstantiate(&later, g2, 0));
  if (launch(later, L_LATER, s))
    return 1;
  printf("executable node set: %d launches before, %d after, %d of the graph\n", L_EXEC_A,
         L_EXEC_D, L_LATER);

  // 3: a capture into a graph with a node
  cudaGraph_t g3, g3_out = nullptr;
  cudaGraphNode_t e3_node;
  cudaGraphExec_t e3;
  CHECK(cudaGraphCreate(&g3, 0));
  p = kernel((void *)kE, 4);
  CHECK(cudaGraphAddKernelNode(&e3_node, g3, nullptr, 0, &p));
  CHECK(cudaStreamBeginCaptureToGraph(s, g3, &e3_node, nullptr, 1,
                                      cudaStreamCaptureModeGlobal));
  kB<<<4, 64, 0, s>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(s, &g3_out));
  size_t n3 = 0;
  CHECK(cudaGraphGetNodes(g3, nullptr, &n3));
  CHECK(cudaGraphInstantiate(&e3, g3, 0));
  if (launch(e3, L_TO, s))
    return 1;
  printf("capture into a graph: %s, %zu nodes, %d launches\n",
         g3_out == g3 ? "the same graph" : "another graph", n3, L_TO);

  // 4: a captured node set in its executable
  cudaGraph_t g4;
  cudaGraphNode_t f4;
  size_t n4 = 1;
  cudaGraphExec_t e4;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  kF<<<4, 64, 0, s>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(s, &g4));
  CHECK(cudaGraphGetNodes(g4, &f4, &n4));
  CHECK(cudaGraphInstantiate(&e4, g4, 0));
  p = kernel((void *)kA, 4);
  CHECK(cudaGraphExecKernelNodeSetParams(e4, f4, &p));
  printf("captured node set: %zu node\n", n4);

  // 5: an executable updated between launches, then its node set
  cudaGraph_t g5, g6;
  cudaGraphNode_t b5, c6;
  cudaGraphExec_t e5;
  CHECK(cudaGraphCreate(&g5, 0));
  p = kernel((void *)kB, 4);
  CHECK(cudaGraphAddKernelNode(&b5, g5, nullptr, 0, &p));
  CHECK(cudaGraphInstantiate(&e5, g5, 0));
  if (launch(e5, L_UPD_B, s))
    return 1;
  CHECK(cudaGraphCreate(&g6, 0));
  p = kernel((void *)kC, 4);
  CHECK(cudaGraphAddKernelNode(&c6, g6, nullptr, 0, &p));
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(e5, g6, &info));
  if (launch(e5, L_UPD_C, s))
    return 1;
  p = kernel((void *)kE, 4);
  CHECK(cudaGraphExecKernelNodeSetParams(e5, b5, &p));
  if (launch(e5, L_UPD_E, s))
    return 1;
  printf("executable updated: %d launches before, %d after, %d after its node set\n",
         L_UPD_B, L_UPD_C, L_UPD_E);

  CHECK(cudaStreamSynchronize(s));
  cudaGraphExec_t execs[] = {before, after, e2, later, e3, e4, e5};
  for (cudaGraphExec_t e : execs)
    CHECK(cudaGraphExecDestroy(e));
  cudaGraph_t graphs[] = {g1, g2, g3, g4, g5, g6};
  for (cudaGraph_t g : graphs)
    CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  return 0;
}
