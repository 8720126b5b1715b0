/* odd_frames.c — device memory allocated under a frame whose rbp holds
 * something else (tests/unit/odd_rbp.S: ordinary frame-pointer CFI, rbp
 * loaded with another value around the call), three ways
 * (tests/e2e/test_unwind.py):
 *   1 MiB  rbp a small integer (0x1000);
 *   2 MiB  rbp a heap block laid out as a saved frame (rbp 0x10, then a
 *          return address into uw_bad_rbp: an unwinder that follows it
 *          reads address 0x18);
 *   3 MiB  rbp the first byte above the stack, on a thread whose stack has
 *          a PROT_NONE page above it.
 * Each block is leaked, by alloc_leak. Prints "odd_frames: 3 leaks". */
#define _GNU_SOURCE /* pthread_attr_setstack, MAP_ANONYMOUS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>

int uw_bad_rbp(int (*back)(int), int arg, uintptr_t fake_rbp);
void uw_bad_rbp_ret(void);

static int leaks;

__attribute__((noinline)) static int alloc_leak(int mib) {
  void *p = NULL;
  if (cudaMalloc(&p, (size_t)mib << 20) == cudaSuccess)
    leaks++;
  return mib;
}

static void *above_the_stack(void *top) {
  uw_bad_rbp(alloc_leak, 3, (uintptr_t)top);
  return NULL;
}

int main(void) {
  uw_bad_rbp(alloc_leak, 1, 0x1000);
  uintptr_t *frame = malloc(2 * sizeof *frame);
  if (!frame)
    return 1;
  frame[0] = 0x10;
  frame[1] = (uintptr_t)uw_bad_rbp_ret;
  uw_bad_rbp(alloc_leak, 2, (uintptr_t)frame);
  free(frame);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 256 << 10;
  char *m =
      mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m + size, page, PROT_NONE) != 0)
    return 1;
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, m, size);
  if (pthread_create(&t, &attr, above_the_stack, m + size) != 0)
    return 1;
  pthread_join(t, NULL);
  printf("odd_frames: %d leaks\n", leaks);
  return 0;
}
