/* floor_shim.c — the floor of a launch hook, for bench/run.sh to quote beside
 * gputrace's figures: an LD_PRELOAD library whose
 * __cudaLaunchKernel takes two rdtsc and stores one 64-byte record into a
 * thread-local array, then forwards. No ring, no consumer, no correctness:
 * what no tracer can go below.
 *
 * The array is never read, so without the empty asm below GCC removes the
 * store (the floor would measure two rdtsc and a counter); and TLS is
 * initial-exec, as in any shim that cares (global-dynamic costs a
 * __tls_get_addr call per access from a dlopen-able library).
 *
 * Built with FLOOR_SHARED (libfloor_shared.so), the store goes instead to
 * the next line of a 64 MiB shared memfd mapping, prefetched for writing 16
 * records ahead, as a tracer's records must go somewhere its consumer can
 * read them: what that costs before any consumer reads a line (a 256 KiB
 * array stays in L2; a stream does not). */
#define _GNU_SOURCE
#include <stdint.h>
#include <x86intrin.h>
#ifdef FLOOR_SHARED
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "launch_abi.h"

struct rec {
  uint64_t ts, dur;
  const void *kernel;
  void *stream;
  unsigned g[3], b[3];
  uint64_t pad;
} __attribute__((aligned(64)));

#define GT_TLS_IE __attribute__((tls_model("initial-exec")))
static __thread unsigned tls_n GT_TLS_IE;
#ifdef FLOOR_SHARED
#define NRECS (1u << 20) /* 64 MiB */
static struct rec *recs;

__attribute__((constructor)) static void map_stream(void) {
  int fd = memfd_create("floor", 0);
  if (fd < 0 || ftruncate(fd, (off_t)NRECS * sizeof *recs) != 0)
    _exit(99);
  recs = mmap(NULL, NRECS * sizeof *recs, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_POPULATE, fd, 0);
  if (recs == MAP_FAILED)
    _exit(99);
}

static struct rec *next_rec(void) {
  unsigned n = tls_n++;
  __asm__("prefetchw %0" : : "m"(recs[(n + 16) & (NRECS - 1)]));
  return &recs[n & (NRECS - 1)];
}
#else
#define NRECS 4096u /* 256 KiB */
static __thread struct rec tls_recs[NRECS] GT_TLS_IE;

static struct rec *next_rec(void) {
  return &tls_recs[tls_n++ & (NRECS - 1)];
}
#endif

__attribute__((visibility("default"))) int __cudaLaunchKernel(const void *k, dim3 g,
                                                              dim3 b, void **args,
                                                              size_t shmem,
                                                              void *stream) {
  uint64_t t0 = __rdtsc();
  int r = real_launch()(k, g, b, args, shmem, stream);
  struct rec *x = next_rec();
  *x = (struct rec){t0, __rdtsc() - t0, k, stream, {g.x, g.y, g.z}, {b.x, b.y, b.z}, 0};
  __asm__ volatile("" : : "r"(x) : "memory"); /* the store happens */
  return r;
}
