/* launch.h — the launch hot path: every LAUNCH record (kernels, host
 * functions, graphs; runtime and driver) is written here.
 *
 * Contract:
 *  - A launch hook's body is GT_TRACE_LAUNCH_PRE (below): no errno
 *    save/restore on the fast path, as nothing on it can change errno (no
 *    call, no syscall); every slow path saves and restores it.
 *  - The record is a one-slot compact frame (ring.h struct gt_frame_launch)
 *    in the calling thread's sub-ring, written around the real call:
 *    gt_launch_pre, before it, checks everything unusual it can (no room,
 *    a new call site, a sampled stack, a timed launch, values the frame
 *    cannot hold) and writes all but the times and the result into the
 *    next slot; gt_launch_post, after it, writes those and commits (one
 *    release store of the sub-ring's head). So only the slot's address and
 *    t0 live across the call. Kernels are recorded as the hook got them (a
 *    stub, a cudaKernel_t or a CUfunction): their names come from
 *    KERNEL_NAME records keyed by each (registry.c), never looked up here.
 *  - While the slot waits, the thread is at GT_DEPTH_LAUNCH (shim.h):
 *    nested hooks forward untraced as always, and any record the thread
 *    writes meanwhile (a kernel registered inside the call) goes to the
 *    shared ring (core.c), never over the slot; a child forked inside the
 *    call leaves the slot, the parent's, alone (gt_launch_post checks that
 *    it is still the thread's next).
 *  - Unusual, and taken out of line (gt_launch_post_slow, launch.c), with
 *    the values kept in gt_tls_pend or read back from the slot: no sub-ring
 *    yet or no room in it (claim, re-read the consumer's tail, or drop and
 *    count exactly: dropped[LAUNCH]), a device-timed launch (its record
 *    goes to devtime), values the compact frame cannot hold (a full frame
 *    instead: also a call that took 2^32 ticks or more, or a result over
 *    65535), and a launch stack.
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

/* A launch's call-site key: never 0 (an empty cache slot). */
static inline uintptr_t gt_st_key(const void *site, const void *kernel) {
  return ((uintptr_t)site ^ (uintptr_t)kernel) | 1u;
}

static inline unsigned gt_st_slot(uintptr_t key) {
  return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64u - GT_ST_SITE_BITS));
}

/* 1 when values known before the call do not fit the compact frame: grid
 * y/z or block dims over 16 bits, shared memory over 32. */
static inline __attribute__((always_inline)) int
gt_frame_wide_config(unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     uint64_t shmem) {
  return (((gy | gz | bx | by | bz) >> 16) | (shmem >> 32)) != 0;
}

/* 1 when values known after it do not: a call of 2^32 ticks or more, a
 * result over 65535. */
static inline __attribute__((always_inline)) int
gt_frame_wide_outcome(uint64_t t0, uint64_t t1, int result) {
  return (((t1 - t0) >> 32) | ((uint32_t)result >> 16)) != 0;
}

/* 1 when the compact frame cannot hold the launch's values. */
static inline __attribute__((always_inline)) int
gt_launch_wide(const struct gt_launch *l) {
  return gt_frame_wide_config(l->grid[1], l->grid[2], l->block[0], l->block[1],
                              l->block[2], l->shmem) |
         gt_frame_wide_outcome(l->t0, l->t1, l->result);
}

/* All of a compact frame but its times and result (the values fit). */
static inline __attribute__((always_inline)) void
gt_frame_fill(struct gt_frame_launch *f, const struct gt_ring_producer *p, unsigned api,
              const void *kernel, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
              unsigned by, unsigned bz, uint64_t shmem, const void *stream,
              uint32_t stack_id) {
  f->frame = GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)api << 16 | p->tid;
  f->corr = gt_tls_corr;
  f->kernel = (uint64_t)(uintptr_t)kernel;
  f->stream = (uint64_t)(uintptr_t)stream;
  f->grid_x = gx;
  f->grid_y = (uint16_t)gy;
  f->grid_z = (uint16_t)gz;
  f->block_x = (uint16_t)bx;
  f->block_y = (uint16_t)by;
  f->block_z = (uint16_t)bz;
  /* shared_mem and stack_id, adjacent: one store */
  uint64_t shmem_and_stack = (uint64_t)stack_id << 32 | (uint32_t)shmem;
  __builtin_memcpy(&f->shared_mem, &shmem_and_stack, sizeof shmem_and_stack);
}

/* The frame's times and result (they fit). */
static inline __attribute__((always_inline)) void
gt_frame_finish(struct gt_frame_launch *f, uint64_t t0, uint64_t t1, int result) {
  f->ts = t0;
  f->dur = (uint32_t)(t1 - t0);
  f->result = (uint16_t)result;
}

/* Write the compact frame at the producer's next slot (room checked) and
 * commit it: the slow path's form (launch.c). */
static inline __attribute__((always_inline)) void
gt_put_launch(struct gt_ring_producer *p, const struct gt_launch *l, uint32_t stack_id) {
  struct gt_frame_launch *f = gt_ring_slot(p);
  gt_frame_fill(f, p, l->api, l->kernel, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                l->block[1], l->block[2], l->shmem, l->stream, stack_id);
  gt_frame_finish(f, l->t0, l->t1, l->result);
  gt_ring_commit1(p);
}

/* ---- the frame written around the call ---- */

/* A launch that gt_launch_pre sent to the slow path: its values until the
 * call returns (launch.c). */
extern __thread struct gt_launch gt_tls_pend __attribute__((tls_model("initial-exec")));
extern __thread int gt_tls_pend_dt __attribute__((tls_model("initial-exec")));
void gt_launch_post_slow(struct gt_frame_launch *f, uint64_t t0, uint64_t t1, int result)
    __attribute__((cold));

/* What gt_launch_pre returns for a launch it sends to the slow path (its
 * values then wait in gt_tls_pend): never a slot, so one comparison after
 * the call tells both cases from a slot that is no longer the next. */
#define GT_LAUNCH_PENDING ((struct gt_frame_launch *)(void *)&gt_tls_pend)

/* The slow path's launch: kept until the call returns. */
static inline __attribute__((always_inline)) struct gt_frame_launch *
gt_launch_keep(int dt_token, unsigned api, const void *kernel, unsigned gx, unsigned gy,
               unsigned gz, unsigned bx, unsigned by, unsigned bz, uint64_t shmem,
               const void *stream, const void *site) {
  gt_tls_pend = (struct gt_launch){.api = api,
                                   .kernel = kernel,
                                   .grid = {gx, gy, gz},
                                   .block = {bx, by, bz},
                                   .shmem = shmem,
                                   .stream = stream,
                                   .site = site};
  gt_tls_pend_dt = dt_token;
  return GT_LAUNCH_PENDING;
}

/* Before the real call of a launch device timing times: the slow path,
 * after the sampled-stack countdown as for any launch. */
static inline __attribute__((always_inline)) struct gt_frame_launch *
gt_launch_timed(int dt_token, unsigned api, const void *kernel, unsigned gx, unsigned gy,
                unsigned gz, unsigned bx, unsigned by, unsigned bz, uint64_t shmem,
                const void *stream, const void *site) {
  --gt_tls_st_left;
  return gt_launch_keep(dt_token, api, kernel, gx, gy, gz, bx, by, bz, shmem, stream,
                        site);
}

/* Before the real call of a launch device timing does not time: everything
 * but the times and the result, written into the thread's next slot (the
 * frame, or GT_LAUNCH_PENDING). */
static inline __attribute__((always_inline)) struct gt_frame_launch *
gt_launch_pre(unsigned api, const void *kernel, unsigned gx, unsigned gy, unsigned gz,
              unsigned bx, unsigned by, unsigned bz, uint64_t shmem, const void *stream,
              const void *site) {
  struct gt_ring_producer *p = &gt_tls_prod;
  uint32_t left = --gt_tls_st_left;
  uintptr_t key = gt_st_key(site, kernel);
  if (__builtin_expect(p->room == 0, 0) || __builtin_expect(left == 0, 0) ||
      __builtin_expect(gt_tls_st_site[gt_st_slot(key)] != key, 0) ||
      __builtin_expect(gt_frame_wide_config(gy, gz, bx, by, bz, shmem), 0))
    return gt_launch_keep(0, api, kernel, gx, gy, gz, bx, by, bz, shmem, stream, site);
  struct gt_frame_launch *f = gt_ring_slot(p);
  gt_frame_fill(f, p, api, kernel, gx, gy, gz, bx, by, bz, shmem, stream, 0);
  return f;
}

/* After the call: the times and the result, and the commit. */
static inline __attribute__((always_inline)) void
gt_launch_post(struct gt_frame_launch *f, uint64_t t0, uint64_t t1, int result) {
  /* The slot is still the thread's next unless the launch took the slow
   * path, or the call forked and this is the child (launch.c). */
  if (__builtin_expect(gt_tls_prod.next == (unsigned char *)f &&
                           !gt_frame_wide_outcome(t0, t1, result),
                       1)) {
    gt_frame_finish(f, t0, t1, result);
    gt_ring_commit1(&gt_tls_prod);
    return;
  }
  gt_launch_post_slow(f, t0, t1, result);
}

/* A field of a hook's launch configuration `config`: a NULL config is
 * recorded with zero dims (cudaLaunchKernelExC, cuLaunchKernelEx). */
#define GT_LAUNCH_CFG(field) (config ? config->field : 0)

/* A launch hook's body: `call` is the real call, the rest the values to
 * record (kernel: a stub, cudaKernel_t, CUfunction, host function or
 * graph; the call site is the hook's return address). Only the frame's
 * address and t0 live across the call. */
#define GT_TRACE_LAUNCH_PRE(what, call, api, kernel, gx, gy, gz, bx, by, bz, shmem,      \
                            stream, ptsz)                                                \
  do {                                                                                   \
    if (!gt_hook_enter_launch())                                                         \
      return call;                                                                       \
    GT_DT_START(what, kernel, stream, ptsz);                                             \
    struct gt_frame_launch *frame_ =                                                     \
        __builtin_expect(dt_token != 0, 0)                                               \
            ? gt_launch_timed(dt_token, (api), (const void *)(kernel), (gx), (gy), (gz), \
                              (bx), (by), (bz), (shmem), (const void *)(stream),         \
                              __builtin_return_address(0))                               \
            : gt_launch_pre((api), (const void *)(kernel), (gx), (gy), (gz), (bx), (by), \
                            (bz), (shmem), (const void *)(stream),                       \
                            __builtin_return_address(0));                                \
    uint64_t t0 = gt_now();                                                              \
    cudaError_t r = call;                                                                \
    uint64_t t1 = gt_now();                                                              \
    gt_launch_post(frame_, t0, t1, r); /* and gt_dt_after, when timed */                 \
    gt_hook_leave();                                                                     \
    return r;                                                                            \
  } while (0)

#endif
