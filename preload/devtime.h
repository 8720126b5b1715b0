/* devtime.h — device-side timing of launches, copies and memsets: what the
 * hooks use (docs/devtime.md has the design).
 *
 * Contract for hooks:
 *  - Every copy and memset hook body is GT_TRACE_TIMED (launch hooks:
 *    launch.h GT_TRACE_LAUNCH_GENERAL, the same steps around a record
 *    written in place; GT_TRACE_LAUNCH_FAST takes the untimed ones): its
 *    gt_dt_start gives the call its correlation id (gt_tls_corr, per
 *    thread, never 0) and asks gt_dt_sampled() and gt_dt_before() whether
 *    to time it — gt_dt_before, when timing, records a start event on the
 *    call's stream — then it runs the real call, and gt_dt_after() records
 *    the end event. The statements that build the host record must store
 *    gt_call_corr() (capture.h) in its corr field and, after
 *    gt_emit(), pass the record to gt_dt_commit(), which queues the op for
 *    resolution with the record's metadata (api, tid, stream, kernel,
 *    bytes, dir, flags).
 *  - `what` is GT_DT_NONE for calls that get a corr but are never timed
 *    (host functions). `key` selects the sampling counter (the kernel, the
 *    graph, or the entry point for copies and memsets). `ptsz` says the
 *    entry point treats stream 0 as the per-thread default stream.
 *  - With timing off the added cost is a TLS increment and one load; a launch
 *    that sampling leaves untimed adds a TLS counter test, no call.
 */
#ifndef GPUTRACE_DEVTIME_H
#define GPUTRACE_DEVTIME_H

#include "capture.h" /* gt_capture_of: gt_dt_start */
#include "shim.h"

enum gt_dt_what { GT_DT_NONE = 0, GT_DT_LAUNCH = 1, GT_DT_COPY = 2, GT_DT_SET = 3 };

/* Device timing is wanted (GPUTRACE_GPU_TIMING != off) and usable while
 * gt_mode has GT_MODE_DT (shim.h). */

/* Sampling, decided inline (no call for a launch that is not timed): per
 * thread and per key (kernel or graph; copies and memsets by entry point),
 * the first call and then one in gt_tls_dt_n is timed. gt_tls_dt_n is the
 * fixed GPUTRACE_GPU_TIMING_SAMPLE, or by default adapts every
 * GT_DT_WINDOW launches so that what timing its launches costs this thread
 * stays under GPUTRACE_GPU_TIMING_BUDGET of its time (gt_dt_adapt,
 * devtime.c). In the adaptive mode copies and memsets are always timed, and
 * their cost is not counted: N cannot lower it. */
#define GT_DT_WINDOW 256u
extern int gt_dt_adaptive;
/* gt_tls_dt_n, gt_tls_dt_calls, gt_tls_dt_skip[GT_DT_KEYS],
 * gt_tls_dt_skip_api[GT_API_COUNT]: shim.h. */
void gt_dt_adapt(void);

/* The sampling countdown of a launch's `key` (a kernel or a graph: hashed,
 * two keys may share one). */
static inline uint32_t *gt_dt_skip_of(const void *key) {
  return &gt_tls_dt_skip[((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 57];
}

/* A copy's or memset's: its entry point's own (the key is its GT_API_*), so
 * no kernel, whose hash depends on where the program was loaded, shares an
 * entry point's countdown and moves which of its calls are timed. */
static inline uint32_t *gt_dt_skip_api(const void *key) {
  uintptr_t api = (uintptr_t)key;
  return &gt_tls_dt_skip_api[api < GT_API_COUNT ? api : 0];
}

static inline int gt_dt_sampled(unsigned what, const void *key) {
  if (what != GT_DT_LAUNCH && gt_dt_adaptive)
    return 1;
  if (__builtin_expect(++gt_tls_dt_calls >= GT_DT_WINDOW, 0))
    gt_dt_adapt();
  uint32_t *skip = what == GT_DT_LAUNCH ? gt_dt_skip_of(key) : gt_dt_skip_api(key);
  if (*skip != 0) {
    --*skip;
    return 0;
  }
  *skip = gt_tls_dt_n - 1;
  return 1;
}

/* gt_dt_sampled(GT_DT_LAUNCH, key) for the launch fast path (launch.h),
 * when it needs no call: 1 (the counters moved as gt_dt_sampled moves them)
 * when the launch is not timed; 0, nothing moved, when gt_dt_sampled must
 * decide (a timed launch, or the window's end). */
static inline int gt_dt_untimed_launch(const void *key) {
  uint32_t *skip = gt_dt_skip_of(key);
  if (gt_tls_dt_calls + 1 >= GT_DT_WINDOW || *skip == 0)
    return 0;
  ++gt_tls_dt_calls;
  --*skip;
  return 1;
}

/* Read the environment; the shim's constructor calls it once. */
void gt_dt_configure(void);
/* In a child process (core.c): forget the parent's pool, thread, anchors. */
void gt_dt_after_fork(void);

/* Before the real call: returns a token for gt_dt_after (0: not timed). */
int gt_dt_before(unsigned what, const void *key, const void *stream, int ptsz);
/* After the real call, with its result; errno is the caller's to restore. */
void gt_dt_after(int token, cudaError_t result);
void gt_dt_commit_slow(const struct gt_record *rec);

void gt_corr_wrapped(void) __attribute__((cold)); /* devtime.c: 0 -> 1 */

/* A branch to a cold call rather than GCC's cmove: every launch runs this. */
static inline void gt_corr_next(void) {
  if (__builtin_expect(++gt_tls_corr == 0, 0))
    gt_corr_wrapped();
}

/* After gt_emit(rec): hand the host record to the timed op, if any. */
static inline void gt_dt_commit(const struct gt_record *rec) {
  if (__builtin_expect(gt_tls_dt_token != 0, 0))
    gt_dt_commit_slow(rec);
}

/* A timed hook's start: its correlation id; while a capture is open
 * anywhere, gt_tls_cap, the capture the call's stream is in (work queued
 * into a capture runs nothing: never timed); and the device-timing
 * decision it returns, gt_dt_before's token (0: not timed; gt_dt_before's
 * CUDA calls must not change the caller's errno). */
static inline __attribute__((always_inline)) int
gt_dt_start(unsigned what, const void *key, const void *stream, int ptsz) {
  gt_corr_next();
  int dt_token = 0;
  gt_tls_cap = __builtin_expect(gt_mode_now() & GT_MODE_CAPTURE, 0)
                   ? gt_capture_of(stream, ptsz)
                   : 0;
  if (what != GT_DT_NONE && (gt_mode_now() & GT_MODE_DT) && !gt_range_paused() &&
      gt_tls_cap == 0 && gt_dt_sampled(what, key)) {
    int dt_errno = errno;
    dt_token = gt_dt_before(what, key, stream, ptsz);
    errno = dt_errno;
  }
  return dt_token;
}

/* GT_TRACE_CALL (shim.h) for copies and memsets (launches: launch.h
 * GT_LAUNCH_HOOK). The events are recorded outside [t0, t1]: the host
 * record's duration stays the call's. A macro, as GT_TRACE_CALL. */
#define GT_TRACE_TIMED(what, key, stream, ptsz, call, ...)                               \
  do {                                                                                   \
    if (!gt_hook_enter())                                                                \
      return call;                                                                       \
    gt_tls_call_ra = __builtin_return_address(0); /* its call site (core.c) */           \
    int dt_token = gt_dt_start((what), (key), (const void *)(stream), (ptsz));           \
    uint64_t t0 = gt_now();                                                              \
    cudaError_t r = call;                                                                \
    uint64_t t1 = gt_now();                                                              \
    int saved_errno = errno;                                                             \
    if (__builtin_expect(dt_token != 0, 0))                                              \
      gt_dt_after(dt_token, r);                                                          \
    __VA_ARGS__;                                                                         \
    errno = saved_errno;                                                                 \
    gt_hook_leave();                                                                     \
    return r;                                                                            \
  } while (0)

/* Count DEVICE records that will never exist (untimed work): they reach
 * the trace as DROP records with of_kind = GT_KIND_DEVICE (core.c). */
void gt_count_dropped(unsigned kind, uint64_t n);

#endif
