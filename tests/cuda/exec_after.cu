// exec_after.cu — N allocations (argv[1]), then exec of argv[2...] under the
// same pid: the collector must end this image's ring at the exec, whether
// the new image is traced again (a new connection from the same pid) or
// not (the ring is no longer mapped).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  int n = atoi(argv[1]);
  for (int i = 0; i < n; i++) {
    void *p = nullptr;
    if (cudaMalloc(&p, 4096) != cudaSuccess)
      return 1;
  }
  fflush(stdout);
  execvp(argv[2], argv + 2);
  perror("exec_after: exec");
  return 127;
}
