// fork_storm.cu — forks argv[1] children (default 16) in quick succession,
// each making 50 launches and one allocation, while the parent keeps
// launching; waits for all. Every child's events carry its own pid.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void in_child(int i) {}
__global__ void in_parent(int i) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 16;
  in_parent<<<1, 1>>>(0);
  pid_t pids[256];
  for (int c = 0; c < n && c < 256; c++) {
    pids[c] = fork();
    if (pids[c] == 0) {
      void *p = nullptr;
      cudaMalloc(&p, 4096 * (c + 1));
      for (int i = 0; i < 50; i++) in_child<<<1, 1>>>(i);
      _exit(cudaDeviceSynchronize() == cudaSuccess ? 0 : 1);
    }
    in_parent<<<1, 1>>>(c + 1);
  }
  int failed = 0;
  for (int c = 0; c < n && c < 256; c++) {
    int status = 0;
    waitpid(pids[c], &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  printf("fork_storm: %d children, %d failed\n", n, failed);
  return failed ? 1 : 0;
}
