// fork_leak.cu — the parent allocates and frees; a forked child leaks 777
// bytes from child_work and exits: the leak is the child's, under its pid.
#include <cstdio>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void child_work() {
  void *p = nullptr;
  cudaMalloc(&p, 777);
}

int main() {
  void *p = nullptr;
  cudaMalloc(&p, 1000);
  pid_t pid = fork();
  if (pid == 0) {
    child_work();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  cudaFree(p);
  printf("parent %d child %d\n", (int)getpid(), (int)pid);
  return status;
}
