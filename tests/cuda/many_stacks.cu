// many_stacks.cu — N allocations, each from a distinct call stack: a walk
// 17 levels deep takes the left or the right call site at each level by one
// bit of the allocation's number (2^17 = 131,072 distinct stacks at most).
// A first pass allocates once (number 0) and frees through free_all, so the
// free's stack is interned before the others; the second pass allocates
// numbers 0..N-1 (0 again: its stack is known) and frees them all through
// the same free_all call site. Distinct stacks: N allocation + 1 free.
// With THREADS, the second pass runs on THREADS threads at once, each
// allocating numbers 0..N-1 (the same N stacks, interned concurrently:
// threads race for the same slots and segments): N + 2 distinct stacks
// (the threads' N, main's number 0, the free).
// usage: many_stacks N [THREADS]   expect: alloc = THREADS * N + 1
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <cuda_runtime.h>


#define LEVELS 17

static void **g_ptrs;
static int g_n, g_count;
volatile int g_sink; /* after each call: no tail calls, no merged sites */

__attribute__((noinline)) static void leaf() {
  if (cudaMalloc(&g_ptrs[__atomic_fetch_add(&g_n, 1, __ATOMIC_RELAXED)], 16) !=
      cudaSuccess)
    exit(1);
  g_sink++;
}

__attribute__((noinline)) static void walk(int level, unsigned bits);

__attribute__((noinline)) static void left(int level, unsigned bits) {
  walk(level - 1, bits);
  g_sink++;
}

__attribute__((noinline)) static void right(int level, unsigned bits) {
  walk(level - 1, bits);
  g_sink++;
}

__attribute__((noinline)) static void walk(int level, unsigned bits) {
  if (level == 0)
    leaf();
  else if (bits & 1)
    left(level, bits >> 1);
  else
    right(level, bits >> 1);
  g_sink++;
}

__attribute__((noinline)) static void free_all() {
  for (int i = 0; i < g_n; i++)
    if (cudaFree(g_ptrs[i]) != cudaSuccess)
      exit(1);
  g_n = 0;
}

static void *worker(void *) {
  for (int i = 0; i < g_count; i++)
    walk(LEVELS, (unsigned)i);
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000, threads = argc > 2 ? atoi(argv[2]) : 0;
  if (n < 1 || n > (1 << LEVELS) || threads < 0 || threads > 64)
    return 2;
  g_count = n;
  g_ptrs = (void **)calloc((size_t)n * (threads ? threads : 1), sizeof *g_ptrs);
  for (int pass = 0; pass < 2; pass++) {
    if (pass && threads) {
      pthread_t t[64];
      for (int k = 0; k < threads; k++)
        pthread_create(&t[k], NULL, worker, NULL);
      for (int k = 0; k < threads; k++)
        pthread_join(t[k], NULL);
    } else {
      for (int i = 0; i < (pass ? n : 1); i++)
        walk(LEVELS, (unsigned)i);
    }
    free_all();
  }
  printf("many_stacks: %d allocations from distinct stacks\n", n);
  return 0;
}
