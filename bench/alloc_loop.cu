// alloc_loop.cu — stack-capture cost: N cudaMalloc/cudaFree pairs (argv[1],
// default 200,000) made from a call chain argv[2] frames deep (default 30),
// so every traced allocation and free unwinds that many frames. Prints
// "ns_per_call X" (one malloc or one free).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) double deep(int depth, long n) {
  if (depth > 1) {
    double r = deep(depth - 1, n);
    asm volatile("" ::: "memory"); // keep the frame: no tail call
    return r;
  }
  void *p = nullptr;
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    cudaMalloc(&p, 256);
    cudaFree(p);
  }
  return (now_ns() - t0) / (2.0 * n);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  int depth = argc > 2 ? atoi(argv[2]) : 30;
  deep(depth, 1000); // warm-up
  printf("ns_per_call %.1f\n", deep(depth, n));
  return 0;
}
