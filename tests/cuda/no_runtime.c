/* no_runtime.c — a program with no CUDA runtime loaded that still finds
 * the shim's cudaMalloc (dlsym(RTLD_DEFAULT)): the hook must degrade — no
 * crash, cudaErrorNotSupported (801) — when the real symbol is missing. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*sync_fn)(void);

int main(void) {
  malloc_fn cuda_malloc = (malloc_fn)dlsym(RTLD_DEFAULT, "cudaMalloc");
  sync_fn cuda_sync = (sync_fn)dlsym(RTLD_DEFAULT, "cudaDeviceSynchronize");
  if (!cuda_malloc || !cuda_sync) {
    printf("no cudaMalloc in the process (run with LD_PRELOAD=libgputrace.so)\n");
    return 2;
  }
  void *p = (void *)0x1;
  int r1 = cuda_malloc(&p, 256);
  int r2 = cuda_sync();
  printf("cudaMalloc=%d cudaDeviceSynchronize=%d ptr=%p\n", r1, r2, p);
  return r1 == 801 && r2 == 801 && p == (void *)0x1 ? 0 : 1;
}
