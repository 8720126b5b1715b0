/* asan_alloc.c — a program built with -fsanitize=address (gcc links its
 * runtime, libasan.so, dynamically: it must be the first library loaded)
 * calling the CUDA runtime (e2e/test_sanitized_program.py): three
 * cudaMalloc of 4096, 8192 and 12288 bytes, a cudaMemset and a cudaFree of
 * each. Prints "asan_alloc: F failures". */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void) {
  int failures = 0;
  for (int i = 1; i <= 3; i++) {
    void *d = NULL;
    failures += cudaMalloc(&d, 4096u * (unsigned)i) != cudaSuccess;
    failures += cudaMemset(d, i, 4096u * (unsigned)i) != cudaSuccess;
    failures += cudaFree(d) != cudaSuccess;
  }
  printf("asan_alloc: %d failures\n", failures);
  return failures != 0;
}
