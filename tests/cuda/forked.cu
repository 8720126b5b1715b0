// forked.cu — the parent allocates and launches, forks; the child makes its
// own calls (2 allocs, 7 launches, 2 frees) and exits; the parent waits and
// launches 3 more. Each process's events must carry its own pid.
#include <cstdio>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void parent_kernel() {}
__global__ void child_kernel() {}

int main() {
  void *p = nullptr;
  cudaMalloc(&p, 1000);
  parent_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void *a = nullptr, *b = nullptr;
    cudaMalloc(&a, 2000);
    cudaMalloc(&b, 3000);
    for (int i = 0; i < 7; i++) child_kernel<<<2, 2>>>();
    cudaFree(a);
    cudaFree(b);
    printf("child %d done\n", (int)getpid());
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  for (int i = 0; i < 3; i++) parent_kernel<<<1, 1>>>();
  cudaFree(p);
  printf("parent %d child %d status %d\n", (int)getpid(), (int)pid, status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
