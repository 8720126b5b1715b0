/* launch.h — the launch hot path: every LAUNCH record (kernels, host
 * functions, graphs; runtime and driver) is written here.
 *
 * Contract:
 *  - A launch hook is made by GT_LAUNCH_HOOK (below): two functions. The
 *    exported one is the fast form (GT_TRACE_LAUNCH_FAST), for the usual
 *    case: tracing on with rdtsc stamps, and device timing off or not
 *    timing this launch. It makes no call before the real one, so the
 *    arguments stay in their registers (a call would put them in
 *    callee-saved ones: docs/PERFORMANCE.md, "Figures moved out of code
 *    comments"). Anything else goes to the general form
 *    (GT_TRACE_LAUNCH_GENERAL), a function of its own that is given the
 *    call site: among it, every launch while a stream
 *    capture is open (GT_MODE_CAPTURE: the general form asks whether the
 *    launch's stream captures, capture.h) or outside a capture range
 *    (GT_MODE_PAUSED: forwarded untraced, range.h) — bits that make the
 *    fast form's one mode comparison fail, so they cost it nothing. No
 *    errno save/restore on the fast path, as nothing on it can change
 *    errno (no call, no syscall); every slow path saves and restores it.
 *  - Grid and block travel as xy and z (gt_xy: a dim3's first 8 bytes are
 *    x | y << 32), so that the width checks and the frame's stores take
 *    them in 64-bit words; hooks taking a dim3 by value take it so
 *    (cuda_abi.h GT_DIM3_PARAM).
 *  - The record is a one-slot compact frame (ring.h struct gt_frame_launch)
 *    in the calling thread's sub-ring, written around the real call:
 *    gt_launch_pre, before it, checks everything unusual it can (no room,
 *    a new call site, a sampled stack, a timed launch, values the frame
 *    cannot hold) and writes all but the times and the result into the
 *    next slot (the result as 0); gt_launch_post, after it, writes the
 *    times and commits (one release store of the sub-ring's head) when the
 *    call succeeded. So only the slot's address and t0 live across the
 *    call. Kernels are recorded as the hook got them (a stub, a cudaKernel_t
 *    or a CUfunction): their names come from KERNEL_NAME records keyed by
 *    each (registry.c), never looked up here.
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
 *    65535), a failed call (its result rewritten there), and a launch
 *    stack.
 *  - Launch stacks: every launch carries its call site's stack id (the
 *    key: gt_launch_site — for a <<<>>> the line that pushed its
 *    configuration, else the hook's return address — xor the kernel),
 *    taken at the key's first launch in the process (a per-process set),
 *    cached per thread with the key; then one launch in N per thread takes
 *    a stack of its own instead: N adapts after each sample so that stack
 *    capture stays within 1 % of the thread's time (launch.c;
 *    GPUTRACE_LAUNCH_STACKS=N fixes it; GPUTRACE_STACKS=all takes every
 *    launch's, =none none). On the fast path: one TLS load and compare for
 *    the site, one TLS load for its stack id, one TLS decrement for the
 *    count, and for the <<<>>> APIs a TLS load and store of the pushed line.
 */
#ifndef GPUTRACE_LAUNCH_H
#define GPUTRACE_LAUNCH_H

#include "devtime.h"
#include "gputrace/ring.h"
#include "range.h"

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
  const void *site; /* gt_launch_site: the <<<>>> line, or the hook's return address */
  uint32_t stack;   /* read back from a compact frame: its stack id */
};

/* A launch's call-site key: never 0 (an empty cache slot). */
static inline uintptr_t gt_st_key(const void *site, const void *kernel) {
  return ((uintptr_t)site ^ (uintptr_t)kernel) | 1u;
}

static inline unsigned gt_st_slot(uintptr_t key) {
  return ((uint32_t)key * 0x9E3779B9u) >> (32u - GT_ST_SITE_BITS);
}

/* A launch's grid or block travels as xy (x | y << 32: a dim3's first 8
 * bytes, which the x86-64 ABI passes in one register) and z, so that the
 * checks and the frame take it whole. */
static inline __attribute__((always_inline)) uint64_t gt_xy(uint32_t x, uint32_t y) {
  return (uint64_t)x | (uint64_t)y << 32;
}

static inline uint64_t gt_dim3_xy(dim3 d) {
  uint64_t xy;
  __builtin_memcpy(&xy, &d, sizeof xy);
  return xy;
}

/* 1 when values known before the call do not fit the compact frame: grid
 * y/z or block dims over 16 bits, shared memory over 32. */
static inline __attribute__((always_inline)) int
gt_frame_wide_config(uint64_t gxy, unsigned gz, uint64_t bxy, unsigned bz,
                     uint64_t shmem) {
  return ((gxy >> 48) | ((gz | bz) >> 16) | (bxy & 0xffff0000ffff0000ull) |
          (shmem >> 32)) != 0;
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
  return gt_frame_wide_config(gt_xy(l->grid[0], l->grid[1]), l->grid[2],
                              gt_xy(l->block[0], l->block[1]), l->block[2], l->shmem) |
         gt_frame_wide_outcome(l->t0, l->t1, l->result);
}

/* Where gt_frame_fill's 64-bit words land: grid_x, y, z; block_x, y, z and
 * the result; shared_mem and stack_id. A macro: it takes field names, in a
 * constant expression. */
#define GT_FRAME_AT(field, base, plus)                                                   \
  (offsetof(struct gt_frame_launch, field) ==                                            \
   offsetof(struct gt_frame_launch, base) + (plus))
_Static_assert(GT_FRAME_AT(grid_y, grid_x, 4) && GT_FRAME_AT(grid_z, grid_x, 6) &&
                   GT_FRAME_AT(block_x, grid_x, 8) && GT_FRAME_AT(block_y, block_x, 2) &&
                   GT_FRAME_AT(block_z, block_x, 4) && GT_FRAME_AT(result, block_x, 6) &&
                   GT_FRAME_AT(stack_id, shared_mem, 4),
               "gt_frame_fill's words");

/* All of a compact frame but its times and result (the values fit): the
 * grid, the block (with a 0 result) and shared memory with the stack id
 * are one 64-bit store each. */
static inline __attribute__((always_inline)) void
gt_frame_fill(struct gt_frame_launch *f, const struct gt_ring_producer *p, unsigned api,
              const void *kernel, uint64_t gxy, unsigned gz, uint64_t bxy, unsigned bz,
              uint64_t shmem, const void *stream, uint32_t stack_id) {
  f->frame = GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)api << 16 | p->tid;
  f->corr = gt_tls_corr;
  f->kernel = (uint64_t)(uintptr_t)kernel;
  f->stream = (uint64_t)(uintptr_t)stream;
  uint64_t grid = gxy | (uint64_t)gz << 48;
  uint64_t block = (uint32_t)(bxy | bxy >> 16) | (uint64_t)bz << 32;
  uint64_t shmem_and_stack = (uint64_t)stack_id << 32 | (uint32_t)shmem;
  __builtin_memcpy(&f->grid_x, &grid, sizeof grid);
  __builtin_memcpy(&f->block_x, &block, sizeof block);
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
  gt_frame_fill(f, p, l->api, l->kernel, gt_xy(l->grid[0], l->grid[1]), l->grid[2],
                gt_xy(l->block[0], l->block[1]), l->block[2], l->shmem, l->stream,
                stack_id);
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
gt_launch_keep(int dt_token, unsigned api, const void *kernel, uint64_t gxy, unsigned gz,
               uint64_t bxy, unsigned bz, uint64_t shmem, const void *stream,
               const void *site) {
  gt_tls_pend = (struct gt_launch){.api = api,
                                   .kernel = kernel,
                                   .grid = {(uint32_t)gxy, (uint32_t)(gxy >> 32), gz},
                                   .block = {(uint32_t)bxy, (uint32_t)(bxy >> 32), bz},
                                   .shmem = shmem,
                                   .stream = stream,
                                   .site = site};
  gt_tls_pend_dt = dt_token;
  return GT_LAUNCH_PENDING;
}

/* Before the real call of a launch device timing times: the slow path,
 * after the sampled-stack countdown as for any launch. */
static inline __attribute__((always_inline)) struct gt_frame_launch *
gt_launch_timed(int dt_token, unsigned api, const void *kernel, uint64_t gxy, unsigned gz,
                uint64_t bxy, unsigned bz, uint64_t shmem, const void *stream,
                const void *site) {
  --gt_tls_st_left;
  return gt_launch_keep(dt_token, api, kernel, gxy, gz, bxy, bz, shmem, stream, site);
}

/* The call site a launch is counted at (its key, with the kernel): for a
 * <<<>>> launch (nvcc's stub calling __cudaLaunchKernel, or
 * cudaLaunchKernel under CUDA 12) the return address of the
 * __cudaPushCallConfiguration that configured it (hooks_launch.c: the
 * <<<>>> line itself, however many stubs nvcc put between it and the
 * runtime: one per kernel, two more for a template), taken once (cleared:
 * a later cudaLaunchKernel of the user's own is at its own line); else the
 * hook's return address `ra`. A TLS load and store, for those APIs only
 * (`api` is a constant). */
static inline __attribute__((always_inline)) const void *gt_launch_site(unsigned api,
                                                                        const void *ra) {
  if (api != GT_API___cudaLaunchKernel && api != GT_API___cudaLaunchKernel_ptsz &&
      api != GT_API_cudaLaunchKernel && api != GT_API_cudaLaunchKernel_ptsz)
    return ra;
  const void *pushed = gt_tls_push_ra;
  gt_tls_push_ra = NULL;
  return pushed ? pushed : ra;
}

/* Before the real call of a launch device timing does not time: everything
 * but the times and the result, written into the thread's next slot (the
 * frame, or GT_LAUNCH_PENDING). `site` is gt_launch_site's, taken once by
 * the hook. */
static inline __attribute__((always_inline)) struct gt_frame_launch *
gt_launch_pre(unsigned api, const void *kernel, uint64_t gxy, unsigned gz, uint64_t bxy,
              unsigned bz, uint64_t shmem, const void *stream, const void *site) {
  struct gt_ring_producer *p = &gt_tls_prod;
  uintptr_t key = gt_st_key(site, kernel);
  if (__builtin_expect(--gt_tls_st_left == 0, 0) ||
      __builtin_expect(p->next == p->end, 0) ||
      __builtin_expect(gt_tls_st_site[gt_st_slot(key)] != key, 0) ||
      __builtin_expect(gt_frame_wide_config(gxy, gz, bxy, bz, shmem), 0))
    return gt_launch_keep(0, api, kernel, gxy, gz, bxy, bz, shmem, stream, site);
  struct gt_frame_launch *f = gt_ring_slot(p);
  gt_frame_fill(f, p, api, kernel, gxy, gz, bxy, bz, shmem, stream,
                gt_tls_st_id[gt_st_slot(key)]);
  return f;
}

/* After the call: the times and the result, and the commit. */
static inline __attribute__((always_inline)) void
gt_launch_post(struct gt_frame_launch *f, uint64_t t0, uint64_t t1, int result) {
  /* The slot is still the thread's next unless the launch took the slow
   * path, or the call forked and this is the child (launch.c). */
  if (__builtin_expect(gt_tls_prod.next == (unsigned char *)f &&
                           ((t1 - t0) >> 32 | (uint32_t)result) == 0,
                       1)) {
    f->ts = t0; /* the result, 0, went in with the block (gt_frame_fill) */
    f->dur = (uint32_t)(t1 - t0);
    gt_ring_commit_slot(&gt_tls_prod, f);
    return;
  }
  gt_launch_post_slow(f, t0, t1, result);
}

/* A field of a hook's launch configuration `config`: a NULL config is
 * recorded with zero dims (cudaLaunchKernelExC, cuLaunchKernelEx). Macros:
 * they take a field name (of two struct types), and are read only where
 * GT_LAUNCH_HOOK's forms use the value. */
#define GT_LAUNCH_CFG(field) (config ? config->field : 0)
#define GT_LAUNCH_CFG_XY(field) (config ? gt_dim3_xy(config->field) : 0)

/* A launch hook's general form (any state of the shim): `call` is the real
 * call, the rest the values to record, `site` the hook's return address.
 * The frame goes through the slow path when device timing times the
 * launch or it goes into a capture (a full record: GT_F_CAPTURED,
 * capture.h). Only the frame's address and t0 live across the call. A
 * macro: it returns from the hook, `call` is code, and the values are
 * expressions of the hook's parameters, each evaluated where it is used (a
 * launch config's fields are not all read up front, as a function's
 * arguments would be). */
#define GT_TRACE_LAUNCH_GENERAL(what, call, api, kernel, gxy, gz, bxy, bz, shmem,        \
                                stream, ptsz, site)                                      \
  do {                                                                                   \
    const void *site_ = gt_launch_site((api), (site)); /* taken, traced or not */        \
    if (gt_tls_depth != 0 ||                                                             \
        (!(gt_mode_now() & GT_MODE_ACTIVE) && !gt_hook_enter_slow()) ||                  \
        ((gt_mode_now() & GT_MODE_PAUSED) &&                                             \
         gt_range_skips_launch((const void *)(stream), (ptsz))))                         \
      return call;                                                                       \
    gt_tls_depth = GT_DEPTH_LAUNCH;                                                      \
    int dt_token_ =                                                                      \
        gt_dt_start((what), (const void *)(kernel), (const void *)(stream), (ptsz));     \
    struct gt_frame_launch *frame_ =                                                     \
        __builtin_expect((dt_token_ | gt_tls_cap) != 0, 0)                               \
            ? gt_launch_timed(dt_token_, (api), (const void *)(kernel), (gxy), (gz),     \
                              (bxy), (bz), (shmem), (const void *)(stream), site_)       \
            : gt_launch_pre((api), (const void *)(kernel), (gxy), (gz), (bxy), (bz),     \
                            (shmem), (const void *)(stream), site_);                     \
    uint64_t t0 = gt_now();                                                              \
    int r = call;                                                                        \
    uint64_t t1 = gt_now();                                                              \
    gt_launch_post(frame_, t0, t1, r); /* and gt_dt_after, when timed */                 \
    gt_hook_leave();                                                                     \
    return r;                                                                            \
  } while (0)

/* 1 when a launch can take the fast form: tracing on with rdtsc stamps,
 * and device timing off, or on and not timing this launch (the sampling
 * counters then moved as gt_dt_sampled would have moved them). */
static inline __attribute__((always_inline)) int gt_launch_fast_mode(unsigned what,
                                                                     const void *key) {
  int mode = gt_mode_now();
  if (__builtin_expect(mode == GT_MODE_ACTIVE + GT_MODE_TSC, 1))
    return 1;
  return mode == GT_MODE_ACTIVE + GT_MODE_TSC + GT_MODE_DT &&
         (what == GT_DT_NONE || gt_dt_untimed_launch(key));
}

/* A launch hook's fast form, the usual case: the real function known, the
 * thread outside any hook, no corr wrap, and gt_launch_fast_mode. Anything
 * else goes to `general` (GT_TRACE_LAUNCH_GENERAL in a function of its
 * own), so that no call before the real one holds the arguments in
 * callee-saved registers; but a launch nested in a hook (libcudart's calls
 * to the driver on a real GPU: every runtime launch) is forwarded here, by
 * a call kept a call by the empty asm: as a sibling call GCC would stage
 * the stack arguments on entry, on every launch's path. `fn_t` is the real
 * function's type, `args` its arguments in parentheses. A macro for the
 * general form's reasons, and `general` is the call that forwards. */
#define GT_TRACE_LAUNCH_FAST(what, general, fn_t, args, api, kernel, gxy, gz, bxy, bz,   \
                             shmem, stream)                                              \
  do {                                                                                   \
    fn_t real_ = (fn_t)__atomic_load_n(&gt_slot[api], __ATOMIC_ACQUIRE);                 \
    if (__builtin_expect(gt_tls_depth != 0, 0) && real_ != NULL) {                       \
      int nested_ = real_ args;                                                          \
      __asm__("" : "+r"(nested_));                                                       \
      return nested_;                                                                    \
    }                                                                                    \
    if (__builtin_expect(real_ == NULL || gt_tls_corr + 1 == 0 ||                        \
                             !gt_launch_fast_mode((what), (const void *)(kernel)),       \
                         0))                                                             \
      return general;                                                                    \
    ++gt_tls_corr;                                                                       \
    gt_tls_depth = GT_DEPTH_LAUNCH;                                                      \
    struct gt_frame_launch *frame_ = gt_launch_pre(                                      \
        (api), (const void *)(kernel), (gxy), (gz), (bxy), (bz), (shmem),                \
        (const void *)(stream), gt_launch_site((api), __builtin_return_address(0)));     \
    uint64_t t0 = gt_now_tsc();                                                          \
    int r = real_ args;                                                                  \
    uint64_t t1 = gt_now_tsc();                                                          \
    gt_launch_post(frame_, t0, t1, r);                                                   \
    gt_hook_leave();                                                                     \
    return r;                                                                            \
  } while (0)

/* A launch hook `name` (an apis.h entry) taking `params` (its type in
 * hook_sigs.h, the real function's gt_fn_<name>_t: shim.h), whose names in
 * order are `args`, and returning `fail` when its real function cannot be
 * found; the rest as GT_TRACE_LAUNCH_GENERAL. Two functions: the exported
 * fast form and `name`_general, which also gets the call site (a macro: it
 * defines them, shim.h). */
#define GT_LAUNCH_HOOK(ret, fail, name, params, args, what, kernel, gxy, gz, bxy, bz,    \
                       shmem, stream, ptsz)                                              \
  static __attribute__((noinline))                                                       \
  ret name##_general(GT_UNPAREN params, const void *site) {                              \
    gt_fn_##name##_t real_ = (gt_fn_##name##_t)gt_real_fn(GT_API_##name);                \
    if (real_ == NULL)                                                                   \
      return (fail);                                                                     \
    GT_TRACE_LAUNCH_GENERAL(what, real_ args, GT_API_##name, kernel, gxy, gz, bxy, bz,   \
                            shmem, stream, ptsz, site);                                  \
  }                                                                                      \
  GT_EXPORT ret name params {                                                            \
    GT_TRACE_LAUNCH_FAST(                                                                \
        what, name##_general(GT_UNPAREN args, __builtin_return_address(0)),              \
        gt_fn_##name##_t, args, GT_API_##name, kernel, gxy, gz, bxy, bz, shmem, stream); \
  }

#endif
