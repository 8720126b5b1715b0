/* swap_lib.c — built twice (tests/CMakeLists.txt): libswap_alpha.so, whose
 * site is alpha_site, and libswap_beta.so (SWAP_BETA), whose site is
 * beta_site, with the same layout, so that beta loads where a dlclose'd
 * alpha was (tests/cuda/dl_swap.c). swap_entry(n) leaks n blocks of
 * SWAP_BYTES from its site. */
#include <stddef.h>

#include <cuda_runtime.h>

#ifdef SWAP_BETA
#define SITE beta_site
#define SWAP_BYTES (128u << 10)
#else
#define SITE alpha_site
#define SWAP_BYTES (64u << 10)
#endif

static volatile int swap_sink;

__attribute__((noinline)) int SITE(void) {
  void *p = NULL;
  int ok = cudaMalloc(&p, SWAP_BYTES) == cudaSuccess;
  swap_sink = ok;
  return ok;
}

int swap_entry(int n) {
  int made = 0;
  for (int i = 0; i < n; i++)
    made += SITE();
  return made;
}
