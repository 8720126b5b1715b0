// launch_loop.cu — launch cost: N empty-kernel launches (argv[1], default
// 1,000,000) after 10,000 warm-up launches, made from a call chain argv[2]
// frames deep (default 1: from main; deeper chains make each sampled launch
// stack cost more); prints "ns_per_launch X".
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) double launches(int depth, long n) {
  if (depth > 1) {
    double r = launches(depth - 1, n);
    asm volatile("" ::: "memory"); // keep the frame: no tail call
    return r;
  }
  for (int i = 0; i < 10000; i++) empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  double t0 = now_ns();
  for (long i = 0; i < n; i++) empty_kernel<<<1, 1>>>();
  double t1 = now_ns();
  cudaDeviceSynchronize();
  return (t1 - t0) / n;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int depth = argc > 2 ? atoi(argv[2]) : 1;
  printf("ns_per_launch %.2f\n", launches(depth < 1 ? 1 : depth, n));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
