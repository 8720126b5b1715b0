// launch_loop.cu — launch cost: N empty-kernel launches (argv[1], default
// 1,000,000) after 10,000 warm-up launches, made from a call chain argv[2]
// frames deep (default 1: from main; deeper chains make each sampled launch
// stack cost more); prints "ns_per_launch X". argv[3] = B > 0: synchronize
// after every B launches, outside the timed part: on a GPU the launch queue
// then never fills, so the figure is the host's cost per launch, not the
// device's rate of empty kernels; a second line, "best_batch_ns X", gives the
// fastest batch's cost per launch (the code's cost: on a GPU a launch costs
// ~4 us with ±10 % between runs, which hides a hook's tens of ns). argv[4] =
// "destroyed-capture": first a stream begins a capture, captures a launch and
// is destroyed (which ends the capture), as bench/destroyed_capture.sh
// measures.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) double launches(int depth, long n, long batch, double *best) {
  if (depth > 1) {
    double r = launches(depth - 1, n, batch, best);
    asm volatile("" ::: "memory"); // keep the frame: no tail call
    return r;
  }
  for (int i = 0; i < 10000; i++) empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  if (batch <= 0 || batch > n)
    batch = n;
  double timed = 0;
  for (long done = 0; done < n; done += batch) {
    long m = n - done < batch ? n - done : batch;
    double t0 = now_ns();
    for (long i = 0; i < m; i++) empty_kernel<<<1, 1>>>();
    double took = now_ns() - t0;
    timed += took;
    if (m == batch && (*best == 0 || took / m < *best))
      *best = took / m;
    cudaDeviceSynchronize();
  }
  return timed / n;
}

// A capture ended by destroying its stream (launch_loop's argv[4]).
static int destroyed_capture() {
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
    return 1;
  empty_kernel<<<1, 1, 0, s>>>();
  return cudaStreamDestroy(s) != cudaSuccess;
}

int main(int argc, char **argv) {
  if (argc > 4 && strcmp(argv[4], "destroyed-capture") == 0 && destroyed_capture()) {
    printf("destroyed-capture: a call failed\n");
    return 1;
  }
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int depth = argc > 2 ? atoi(argv[2]) : 1;
  long batch = argc > 3 ? atol(argv[3]) : 0;
  double best = 0;
  printf("ns_per_launch %.2f\n", launches(depth < 1 ? 1 : depth, n, batch, &best));
  if (batch > 0)
    printf("best_batch_ns %.2f\n", best);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
