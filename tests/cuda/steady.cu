// steady.cu — a steady serving loop for fault tests: argv[1] iterations
// (default 300) of one kernel launch, a synchronize and a 2 ms sleep, then
// "steady: N iterations"; exits 0 if every call succeeded.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void tick(int i) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 300, bad = 0;
  for (int i = 0; i < n; i++) {
    tick<<<1, 32>>>(i);
    bad += cudaDeviceSynchronize() != cudaSuccess;
    usleep(2000);
  }
  printf("steady: %d iterations\n", n);
  return bad ? 1 : 0;
}
