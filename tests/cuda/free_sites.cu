// free_sites.cu — frees at known lines, for their stacks
// (tests/e2e/test_free_stacks.py):
//   release(), line 16: every block's cudaFree, called from from_a()
//   (line 21) and from_b() (line 26), N times each, interleaved;
//   bad_free(), line 30: a cudaFree of a pointer never allocated (fails);
//   keep(), line 34: one 4096-byte block never freed (a leak at its line).
// usage: free_sites [N=100]
//   expect: 2N+1 cudaMalloc, 2N+1 cudaFree (the last failed), 4096 bytes leaked
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static void *g_kept;

__attribute__((noinline)) void release(void *p) {
  cudaFree(p);
}

__attribute__((noinline)) void from_a(void) {
  void *p = nullptr;
  if (cudaMalloc(&p, 1024) == cudaSuccess) release(p);
}

__attribute__((noinline)) void from_b(void) {
  void *p = nullptr;
  if (cudaMalloc(&p, 2048) == cudaSuccess) release(p);
}

__attribute__((noinline)) int bad_free(void) {
  return (int)cudaFree((void *)0x1230);
}

__attribute__((noinline)) void keep(void) {
  cudaMalloc(&g_kept, 4096);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < n; i++) {
    from_a();
    from_b();
  }
  int bad = bad_free();
  keep();
  printf("free_sites: %d pairs, bad free %d\n", 2 * n, bad);
  return 0;
}
