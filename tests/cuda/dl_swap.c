/* dl_swap.c — a library dlclose'd and another loaded at its address while
 * a thread allocates (tests/e2e/test_leaks.py): libswap_alpha.so leaks 40
 * blocks of 64 KiB from alpha_site, is dlclose'd, libswap_beta.so is loaded
 * at its address and leaks 20 blocks of 128 KiB from beta_site; meanwhile
 * a worker thread leaks 30 blocks of 32 KiB from worker_site, 10 before,
 * 10 during and 10 after the swap. Prints "dl_swap: same address" (or
 * "dl_swap: moved" when beta did not land where alpha was: the case then
 * tests nothing) and "dl_swap: 90 leaks". argv[1], argv[2]: the libraries. */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_phase, g_leaks; /* phase: 0 before, 1 swapping, 2 after */

__attribute__((noinline)) static int worker_site(void) {
  void *p = NULL;
  return cudaMalloc(&p, 32u << 10) == cudaSuccess;
}

static void wait_phase(int phase) {
  pthread_mutex_lock(&g_mu);
  while (g_phase < phase)
    pthread_cond_wait(&g_cv, &g_mu);
  pthread_mutex_unlock(&g_mu);
}

static void set_phase(int phase) {
  pthread_mutex_lock(&g_mu);
  g_phase = phase;
  pthread_cond_broadcast(&g_cv);
  pthread_mutex_unlock(&g_mu);
}

static void *worker(void *arg) {
  (void)arg;
  int made = 0;
  for (int phase = 0; phase < 3; phase++) {
    wait_phase(phase);
    for (int i = 0; i < 10; i++)
      made += worker_site();
  }
  __atomic_fetch_add(&g_leaks, made, __ATOMIC_RELAXED);
  return NULL;
}

/* Opens path, leaks n blocks from its site; its load address in *base. */
static void *run_lib(const char *path, int n, uintptr_t *base) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  struct link_map *lm = NULL;
  int (*entry)(int) = h ? (int (*)(int))dlsym(h, "swap_entry") : NULL;
  if (!entry || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0) {
    fprintf(stderr, "dl_swap: %s: %s\n", path, dlerror());
    return NULL;
  }
  *base = lm->l_addr;
  __atomic_fetch_add(&g_leaks, entry(n), __ATOMIC_RELAXED);
  return h;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  void *warm = NULL;
  cudaMalloc(&warm, 16); /* the runtime started (and freed below) */
  cudaFree(warm);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  uintptr_t base_a = 0, base_b = 0;
  void *a = run_lib(argv[1], 40, &base_a);
  set_phase(1);
  if (!a || dlclose(a) != 0)
    return 1;
  void *b = run_lib(argv[2], 20, &base_b);
  set_phase(2);
  pthread_join(t, NULL);
  if (!b)
    return 1;
  printf("dl_swap: %s\n", base_a == base_b ? "same address" : "moved");
  printf("dl_swap: %d leaks\n", g_leaks);
  return 0;
}
