/* hold_open.c — a traced process that stays connected: one cudaMalloc (its
 * first CUDA call, which connects the shim to the collector), then one byte
 * 'r' on stdout, then it waits for EOF on stdin before its cudaFree and
 * exit. Many of them sharing one stdin pipe hold as many connections open
 * at once as the test likes (e2e/test_fd_limits.py). Exits 1 if a call
 * failed. */
#include <stdio.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

int main(void) {
  void *d = NULL;
  int failed = cudaMalloc(&d, 4096) != cudaSuccess;
  if (write(1, "r", 1) != 1)
    failed = 1;
  char buf[64];
  while (read(0, buf, sizeof buf) > 0)
    ;
  failed |= cudaFree(d) != cudaSuccess;
  return failed;
}
