/* lttng_shim.c — an LTTng-UST peer for bench/peers.sh: an LD_PRELOAD library
 * whose __cudaLaunchKernel takes two rdtsc around the real one, as the floor
 * shim does (bench/floor_shim.c), and fires one LTTng-UST tracepoint with
 * the same payload (lttng_tp.h) instead of a store: what a user who traced
 * launches with LTTng would pay, measured under a live session (peers.sh
 * starts lttng-sessiond and enables the event). peers.sh builds it with the
 * system's compiler against Debian's liblttng-ust-dev; it is no part of the
 * build, which must not need LTTng. */
#define _GNU_SOURCE
#include <stdint.h>
#include <x86intrin.h>

#include "launch_abi.h"

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"

__attribute__((visibility("default"))) int __cudaLaunchKernel(const void *k, dim3 g,
                                                              dim3 b, void **args,
                                                              size_t shmem,
                                                              void *stream) {
  uint64_t t0 = __rdtsc();
  int r = real_launch()(k, g, b, args, shmem, stream);
  unsigned gv[3] = {g.x, g.y, g.z}, bv[3] = {b.x, b.y, b.z};
  lttng_ust_tracepoint(gputrace_bench, launch, t0, __rdtsc() - t0, k, stream, gv, bv);
  return r;
}
