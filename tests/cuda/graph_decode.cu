// graph_decode.cu — a decode step as inference servers run it: warmed up
// eagerly, captured once into a CUDA graph in global mode (PyTorch's
// default) while timed work is still running on another stream, and
// replayed; then an explicitly built graph, host functions and a
// cudaProfilerStart/Stop range.
//
// Usage: graph_decode [replays] [capture_ms]
//   replays     graph launches of the captured step (default 40)
//   capture_ms  how long the capture stays open (default 30): the resolver
//               thread of the tracer polls its events meanwhile
//
// The step: attn_block, a fork to a side stream (mlp_up there), a join,
// attn_block again, mlp_act, mlp_down, a device-to-device copy and a host
// function. Every call's result is printed; the program exits 1 on the
// first failure, so a tracer that breaks the capture changes the output.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check_call.h"

__global__ void attn_block(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 0.5f;
}
__global__ void mlp_up(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}
__global__ void mlp_act(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] > 0 ? x[i] : 0;
}
__global__ void mlp_down(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] -= 1.0f;
}
__global__ void busy(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 0;
}
__global__ void ranged(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1;
}

static int host_runs;
static void on_host(void *p) {
  ++*(int *)p;
}


enum { N = 1 << 16, GRID = 256, BLOCK = 256, COPY = 1024 };

// The step's work on s (and side), eager or captured alike.
static int step(cudaStream_t s, cudaStream_t side, cudaEvent_t fork, cudaEvent_t join,
                float *x, float *y) {
  attn_block<<<GRID, BLOCK, 0, s>>>(x, N);
  CHECK(cudaEventRecord(fork, s));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  mlp_up<<<GRID * 2, BLOCK, 0, side>>>(y, N);
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(s, join, 0));
  attn_block<<<GRID, BLOCK, 0, s>>>(x, N);
  mlp_act<<<GRID, BLOCK, 0, s>>>(x, N);
  mlp_down<<<GRID * 4, BLOCK, 0, s>>>(x, N);
  // small: the stand-in moves bytes on the host at the call, which a large
  // copy's measured time would include
  CHECK(cudaMemcpyAsync(y, x, COPY * sizeof(float), cudaMemcpyDeviceToDevice, s));
  CHECK(cudaLaunchHostFunc(s, on_host, &host_runs));
  return 0;
}

int main(int argc, char **argv) {
  int replays = argc > 1 ? atoi(argv[1]) : 40;
  int capture_ms = argc > 2 ? atoi(argv[2]) : 30;
  float *x, *y, *z;
  cudaStream_t s, side, other;
  cudaEvent_t fork, join;
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  CHECK(cudaMalloc(&z, N * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  // Warm-up, eagerly, as servers do before capturing.
  for (int i = 0; i < 3; i++)
    if (step(s, side, fork, join, x, y))
      return 1;
  CHECK(cudaStreamSynchronize(s));
  printf("warm-up: host function ran %d time(s)\n", host_runs);

  // Work still running on another stream during the capture: a tracer
  // times it, and polls its events while the capture is open.
  busy<<<4096 * 64, 1024, 0, other>>>(z, N);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  if (step(s, side, fork, join, x, y))
    return 1;
  usleep(capture_ms * 1000); // the capture stays open, as a long Python capture does
  CHECK(cudaStreamEndCapture(s, &graph));
  printf("capture: ok, host function ran %d time(s) so far\n", host_runs);
  CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  for (int i = 0; i < replays; i++)
    CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  printf("replays: %d, host function ran %d time(s)\n", replays, host_runs);

  // An explicitly built graph: a kernel, a memset and a host node in a chain.
  cudaGraph_t built;
  cudaGraphExec_t built_exec;
  cudaGraphNode_t kn, mn, hn;
  CHECK(cudaGraphCreate(&built, 0));
  int n = N;
  void *kargs[] = {&y, &n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)mlp_up;
  kp.gridDim = dim3(GRID * 2);
  kp.blockDim = dim3(BLOCK);
  kp.kernelParams = kargs;
  CHECK(cudaGraphAddKernelNode(&kn, built, NULL, 0, &kp));
  cudaMemsetParams mp = {};
  mp.dst = z;
  mp.value = 0;
  mp.elementSize = 4;
  mp.width = N;
  mp.height = 1;
  CHECK(cudaGraphAddMemsetNode(&mn, built, &kn, 1, &mp));
  cudaHostNodeParams hp = {};
  hp.fn = on_host;
  hp.userData = &host_runs;
  CHECK(cudaGraphAddHostNode(&hn, built, &mn, 1, &hp));
  CHECK(cudaGraphInstantiate(&built_exec, built, 0));
  for (int i = 0; i < 5; i++)
    CHECK(cudaGraphLaunch(built_exec, s));
  CHECK(cudaStreamSynchronize(s));
  printf("built graph: 5 launches, host function ran %d time(s)\n", host_runs);

  // A profiler range: 3 eager launches inside, 2 outside.
  ranged<<<GRID, BLOCK, 0, s>>>(x, N);
  CHECK(cudaProfilerStart());
  for (int i = 0; i < 3; i++)
    ranged<<<GRID, BLOCK, 0, s>>>(x, N);
  CHECK(cudaProfilerStop());
  ranged<<<GRID, BLOCK, 0, s>>>(x, N);
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaGraphExecDestroy(built_exec));
  CHECK(cudaGraphDestroy(built));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(z));
  printf("done\n");
  return 0;
}
