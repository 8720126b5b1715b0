/* launch.h — the launch hot path: every LAUNCH record (kernels, host
 * functions, graphs; runtime and driver) is written here.
 *
 * Contract:
 *  - GT_TRACE_LAUNCH is GT_TRACE_TIMED (devtime.h) for launch hooks, with
 *    no errno save/restore on the fast path: nothing on it can change errno
 *    (no call, no syscall), and every slow path saves and restores it.
 *  - gt_emit_launch writes the record in place, as a one-slot compact frame
 *    (ring.h struct gt_frame_launch), into the calling thread's sub-ring:
 *    one branch on "anything unusual", a handful of stores, one release
 *    store of the sub-ring's head. Kernels are recorded as the hook got them
 *    (a stub, a cudaKernel_t or a CUfunction): their names come from
 *    KERNEL_NAME records keyed by each (registry.c), never looked up here.
 *  - Unusual, and taken out of line (gt_emit_launch_slow, launch.c): no
 *    sub-ring yet or no room in it (claim, re-read the consumer's tail, or
 *    drop and count exactly: dropped[LAUNCH]), a device-timed launch (its
 *    record goes to devtime), values the compact frame cannot hold (a full
 *    frame instead), and a launch stack.
 *  - Launch stacks (issue 16): the first launch of each kernel from each
 *    call site (the key: the hook's return address xor the kernel, since
 *    nvcc routes every <<<>>> of a file through one helper, whose return
 *    address alone would make one site per file), seen per thread and
 *    checked against a per-process set so that each key's first launch in
 *    the process gets one; then one launch in N per thread: N adapts after
 *    each sample so that stack capture stays within 1 % of the thread's
 *    time (launch.c; GPUTRACE_LAUNCH_STACKS=N fixes it;
 *    GPUTRACE_STACKS=all takes every launch's, =none none). On the fast
 *    path: one TLS load and compare for the site, one TLS decrement for
 *    the count.
 */
#ifndef GPUTRACE_LAUNCH_H
#define GPUTRACE_LAUNCH_H

#include "devtime.h"
#include "gputrace/ring.h"

/* gt_tls_prod, gt_tls_st_site (a thread's cache of the call sites it has
 * seen) and gt_tls_st_left: struct gt_tls (shim.h). */

struct gt_launch {
  unsigned api;
  int result;
  uint64_t t0, t1;
  const void *kernel;
  unsigned grid[3], block[3];
  uint64_t shmem;
  const void *stream;
  const void *site; /* the hook's return address */
};

void gt_emit_launch_slow(const struct gt_launch *l) __attribute__((cold));

/* A launch's call-site key: never 0 (an empty cache slot). */
static inline uintptr_t gt_st_key(const void *site, const void *kernel) {
  return ((uintptr_t)site ^ (uintptr_t)kernel) | 1u;
}

static inline unsigned gt_st_slot(uintptr_t key) {
  return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64u - GT_ST_SITE_BITS));
}

/* Write the compact frame at the producer's next slot (room checked) and
 * commit it. */
static inline __attribute__((always_inline)) void
gt_put_launch(struct gt_ring_producer *p, const struct gt_launch *l, uint32_t stack_id) {
  struct gt_frame_launch *f = gt_ring_slot(p);
  f->frame = GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)l->api << 16 | p->tid;
  f->ts = l->t0;
  f->dur = (uint32_t)(l->t1 - l->t0);
  f->corr = gt_tls_corr;
  f->kernel = (uint64_t)(uintptr_t)l->kernel;
  f->stream = (uint64_t)(uintptr_t)l->stream;
  f->grid_x = l->grid[0];
  f->grid_y = (uint16_t)l->grid[1];
  f->grid_z = (uint16_t)l->grid[2];
  f->block_x = (uint16_t)l->block[0];
  f->block_y = (uint16_t)l->block[1];
  f->block_z = (uint16_t)l->block[2];
  f->result = (uint16_t)l->result;
  f->shared_mem = (uint32_t)l->shmem;
  f->stack_id = stack_id;
  gt_ring_commit1(p);
}

/* 1 when the compact frame cannot hold the launch's values. */
static inline __attribute__((always_inline)) int
gt_launch_wide(const struct gt_launch *l) {
  return (((l->t1 - l->t0) >> 32) |
          ((l->grid[1] | l->grid[2] | l->block[0] | l->block[1] | l->block[2]) >> 16) |
          (l->shmem >> 32) | ((uint32_t)l->result >> 16)) != 0;
}

/* The launch's values come as scalars, so that the struct gt_launch the
 * slow path takes is built only there (its address escapes). */
static inline __attribute__((always_inline)) void
gt_emit_launch(unsigned api, int result, uint64_t t0, uint64_t t1, const void *kernel,
               unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, uint64_t shmem, const void *stream, const void *site) {
  struct gt_ring_producer *p = &gt_tls_prod;
  const struct gt_launch l = {api,          result,       t0,    t1,     kernel,
                              {gx, gy, gz}, {bx, by, bz}, shmem, stream, site};
  uint32_t left = --gt_tls_st_left;
  uintptr_t key = gt_st_key(site, kernel);
  /* Everything unusual folded into one word, tested by one branch: a new
   * call site, a sampled stack, no room, a timed launch, wide values. */
  uint64_t odd = gt_launch_wide(&l) | (gt_tls_st_site[gt_st_slot(key)] ^ key) |
                 (uint32_t)gt_tls_dt_token | (uint64_t)(p->room == 0) |
                 (uint64_t)(left == 0);
  if (__builtin_expect(odd != 0, 0)) {
    struct gt_launch copy = l; /* only this copy's address escapes */
    gt_emit_launch_slow(&copy);
    return;
  }
  gt_put_launch(p, &l, 0);
}

/* A launch hook's body is GT_TRACE_LAUNCH (devtime.h): the statements
 * in `...` (with t0, t1 and r in scope) call gt_emit_launch. */

#endif
