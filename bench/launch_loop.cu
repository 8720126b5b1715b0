// launch_loop.cu — launch cost: N empty-kernel launches (argv[1], default
// 1,000,000) after 10,000 warm-up launches; prints "ns_per_launch X".
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

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  for (int i = 0; i < 10000; i++) empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  double t0 = now_ns();
  for (long i = 0; i < n; i++) empty_kernel<<<1, 1>>>();
  double t1 = now_ns();
  cudaDeviceSynchronize();
  printf("ns_per_launch %.2f\n", (t1 - t0) / n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
