// segv.cu — 100 launches and 2 allocations, then a NULL write: the program
// dies of SIGSEGV exactly as it would untraced, and its events are kept.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void before_crash() {}

int main() {
  void *a, *b;
  cudaMalloc(&a, 100);
  cudaMalloc(&b, 200);
  for (int i = 0; i < 100; i++) before_crash<<<1, 1>>>();
  printf("about to crash\n");
  fflush(stdout);
  volatile int *null_ptr = nullptr;
  *null_ptr = 1;
  return 0;
}
