// killed.cu — launches N kernels (argv[1], default 5000) and allocates 3
// buffers, then SIGKILLs itself: every event made before the kill must be in
// the trace.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void before_kill(int n) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  void *p[3];
  for (int i = 0; i < 3; i++) cudaMalloc(&p[i], 1 << 20);
  for (int i = 0; i < n; i++) before_kill<<<1, 64>>>(i);
  printf("launched %d\n", n);
  fflush(stdout);
  kill(getpid(), SIGKILL);
  return 0;
}
