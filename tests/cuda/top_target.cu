// top_target.cu — a program for `gputrace top` to watch (tests/e2e/test_top.py):
// it holds 13 MiB of device memory from two sites at known lines,
//   line 29: 3 blocks of 4 MiB (12 MiB),
//   line 30: 1 block of 1 MiB,
// after allocating and freeing a 2 MiB block (line 32: the peak is 15 MiB),
// then for argv[1] seconds (default 5) launches a kernel and copies 64 KiB
// to and from the device every millisecond, frees everything and prints
// "top_target: N launches". Build with -g (the sites' file:line).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <unistd.h>

#include "check_call.h"

__global__ void spin(int i) {}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  void *big[3], *small, *scratch;
  for (int i = 0; i < 3; i++)
    CHECK(cudaMalloc(&big[i], 4 << 20));
  CHECK(cudaMalloc(&small, 1 << 20));
  static char host[64 << 10];
  CHECK(cudaMalloc(&scratch, 2 << 20));
  CHECK(cudaFree(scratch));
  long n = 0;
  for (double end = now_s() + seconds; now_s() < end; n++) {
    spin<<<1, 32>>>((int)n);
    CHECK(cudaMemcpy(small, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(host, small, sizeof host, cudaMemcpyDeviceToHost));
    usleep(1000);
  }
  for (int i = 0; i < 3; i++)
    CHECK(cudaFree(big[i]));
  CHECK(cudaFree(small));
  printf("top_target: %ld launches\n", n);
  return 0;
}
