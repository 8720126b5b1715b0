// two_sites.cu — one kernel launched from three call sites at known lines,
// for the weighting of sampled launch stacks (tests/e2e/test_pprof.py):
//   hot,  line 22: 1000 launches (<<<>>>)
//   cold, line 27: 100 launches (cudaLaunchKernel), every 11th of the loop
//   rare, line 32: 3 launches (cudaLaunchKernel) after the loop
// Each site is its own "first launch" site (a return address of its own);
// hot and cold are interleaved with period 11, so one-in-N sampling (N prime
// to 11) hits them in proportion to their launches.
// usage: two_sites [ROUNDS=1]  expect: launch=1100*ROUNDS+3 (the loop ROUNDS times) sync=1
#include <cstdio>
#include <cuda_runtime.h>

__global__ void step(int i) {}

static void *args_of(int *i) {
  static void *a[1];
  a[0] = i;
  return a;
}

__attribute__((noinline)) void hot(int i) {
  step<<<1, 32>>>(i);
}

__attribute__((noinline)) void cold(int i) {
  void **a = (void **)args_of(&i);
  cudaLaunchKernel((const void *)step, dim3(1), dim3(32), a, 0, 0);
}

__attribute__((noinline)) void rare(int i) {
  void **a = (void **)args_of(&i);
  cudaLaunchKernel((const void *)step, dim3(1), dim3(32), a, 0, 0);
}

int main(int argc, char **argv) {
  long rounds = 1;
  if (argc > 1)
    sscanf(argv[1], "%ld", &rounds);
  for (long i = 0; i < 1100 * rounds; i++) {
    if (i % 11 == 5)
      cold((int)i);
    else
      hot((int)i);
  }
  for (int i = 0; i < 3; i++)
    rare(i);
  cudaDeviceSynchronize();
  printf("two_sites: %ld launches\n", 1100 * rounds + 3);
  return 0;
}
