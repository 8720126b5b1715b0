// lines_server.cu — a server-like program built -O2 -g, for launches by
// line (tests/e2e/test_lines.py): the same kernels launched from several
// lines, eagerly and by graph replay; a template kernel with two instances;
// a kernel in a namespace launched from a thread's lambda; the
// cudaLaunchKernelEx and cudaLaunchCooperativeKernel paths. Each launching
// line ends in a "// L:name" marker the test finds; the counts per line are
// the program's own (the constants below, printed at the end):
//   gemm_f  PREFILL * ROUNDS      gemm_i  PREFILL * ROUNDS
//   mlp_pre PREFILL * ROUNDS      mlp_dec DECODE * ROUNDS
//   rms_thr THREAD * ROUNDS       mlp_ex  EX * ROUNDS     mlp_coop COOP * ROUNDS
//   graph: mlp_cap captured once (1 node), replayed GRAPH_A times from
//   graph_a and GRAPH_B from graph_b per round (in main: -O2's identical
//   code folding would make two one-line functions one).
// Every kernel's configuration is the same at each of its lines (grid 4,
// block 128; fill, once a round from fill_thr: grid 4096, block 1024), so
// its per-launch device time is one figure.
// usage: lines_server [ROUNDS=1]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <thread>

// A failed call ends the program (CHECK returns from main only).
#define OK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      printf("%s: %s\n", #call, cudaGetErrorName(e_));                                   \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

enum {
  PREFILL = 300,
  DECODE = 900,
  THREAD = 40,
  EX = 3,
  COOP = 2,
  GRAPH_A = 10,
  GRAPH_B = 4
};

// a long signature: its instances' names are shortened in tables, and must
// still tell them apart
template <typename T, int K>
__global__ void gemm_tiled(T *c, int n, const T *a, const T *b, float alpha) {
  if (threadIdx.x < n && a == nullptr && b == nullptr)
    c[threadIdx.x] *= (T)(K * alpha);
}

namespace srv {
__global__ void fill(float *x, int n) { // grid 4096, block 1024: the worker's first
  if (threadIdx.x < n)
    x[threadIdx.x] = 1.0f;
}
__global__ void rmsnorm(float *x, int n) {
  if (threadIdx.x < n)
    x[threadIdx.x] *= 0.5f;
}
} // namespace srv

__global__ void mlp_fused(float *x, int n) {
  if (threadIdx.x < n)
    x[threadIdx.x] += 1.0f;
}

__attribute__((noinline)) static void prefill(float *x, int *y, int n, cudaStream_t s) {
  gemm_tiled<float, 16><<<4, 128, 0, s>>>(x, n, nullptr, nullptr, 1.0f); // L:gemm_f
  gemm_tiled<int, 8><<<4, 128, 0, s>>>(y, n, nullptr, nullptr, 1.0f);    // L:gemm_i
  mlp_fused<<<4, 128, 0, s>>>(x, n);                                     // L:mlp_pre
}

__attribute__((noinline)) static void decode(float *x, int n, cudaStream_t s) {
  mlp_fused<<<4, 128, 0, s>>>(x, n); // L:mlp_dec
}

__attribute__((noinline)) static void launch_ex(float *x, int n, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(4);
  cfg.blockDim = dim3(128);
  cfg.stream = s;
  OK(cudaLaunchKernelEx(&cfg, mlp_fused, x, n)); // L:mlp_ex
}

__attribute__((noinline)) static void launch_coop(float *x, int n, cudaStream_t s) {
  void *args[] = {&x, &n};
  const void *k = (const void *)mlp_fused;
  OK(cudaLaunchCooperativeKernel(k, dim3(4), dim3(128), args, 0, s)); // L:mlp_coop
}

__attribute__((noinline)) static cudaGraphExec_t capture(float *x, int n,
                                                         cudaStream_t s) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  mlp_fused<<<4, 128, 0, s>>>(x, n); // L:mlp_cap
  OK(cudaStreamEndCapture(s, &g));
  OK(cudaGraphInstantiate(&exec, g, 0));
  OK(cudaGraphDestroy(g));
  return exec;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 128;
  float *x, *z;
  int *y;
  cudaStream_t s;
  OK(cudaMalloc(&x, n * sizeof *x));
  OK(cudaMalloc(&z, n * sizeof *z));
  OK(cudaMalloc(&y, n * sizeof *y));
  OK(cudaStreamCreate(&s));
  cudaGraphExec_t exec = capture(x, n, s);
  for (int r = 0; r < rounds; r++) {
    // the worker's kernels run alone (their device times are the model's,
    // not a wait behind stream s)
    OK(cudaStreamSynchronize(s));
    std::thread worker([&] {
      // a long kernel first: the others queue behind it, so their device
      // times are the model's even when the host is slow between a launch
      // and the events around it
      srv::fill<<<4096, 1024>>>(z, n); // L:fill_thr
      for (int i = 0; i < THREAD; i++)
        srv::rmsnorm<<<4, 128>>>(z, n); // L:rms_thr
      OK(cudaStreamSynchronize(0));
    });
    worker.join();
    for (int i = 0; i < DECODE; i++) {
      if (i % 3 == 0)
        prefill(x, y, n, s);
      decode(x, n, s);
      if (i % 90 == 0)
        OK(cudaGraphLaunch(exec, s)); // L:graph_a
      if (i % 225 == 0)
        OK(cudaGraphLaunch(exec, s)); // L:graph_b
    }
    for (int i = 0; i < EX; i++)
      launch_ex(x, n, s);
    for (int i = 0; i < COOP; i++)
      launch_coop(x, n, s);
  }
  OK(cudaStreamSynchronize(s));
  OK(cudaGraphExecDestroy(exec));
  printf("lines_server: gemm_f=%d gemm_i=%d mlp_pre=%d mlp_dec=%d rms_thr=%d mlp_ex=%d "
         "mlp_coop=%d graph_a=%d graph_b=%d\n",
         PREFILL * rounds, PREFILL * rounds, PREFILL * rounds, DECODE * rounds,
         THREAD * rounds, EX * rounds, COOP * rounds, GRAPH_A * rounds, GRAPH_B * rounds);
  return 0;
}
