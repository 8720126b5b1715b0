/* capture.h — stream capture as the shim sees it (capture.c): which
 * captures are open, whether a call's stream is capturing, and the shim's
 * own CUDA calls kept legal while another thread captures.
 *
 * Contract:
 *  - GT_MODE_CAPTURE (shim.h) is set while a capture begun through a hook
 *    is open anywhere in the process: every launch then takes the general
 *    form, and gt_dt_start (devtime.h) asks gt_capture_of whether the
 *    call's stream captures. With no capture open, none of this costs the
 *    launch fast path anything (the bit fails its one mode comparison).
 *  - gt_capture_of: the id of the capture a stream is in (the runtime's
 *    cudaStreamGetCaptureInfo; a stream that joined a capture through an
 *    event has its origin's id), 0 when it is not capturing. The legacy
 *    stream is never asked (it cannot capture, and using it while a
 *    blocking stream captures invalidates that capture). The thread's last
 *    CUDA error is left as it was.
 *  - A call queued into a capturing stream ran nothing: its record carries
 *    GT_F_CAPTURED and the capture's id in its corr field (gt_call_corr),
 *    and device timing leaves it alone (never counted missing).
 *  - gt_capture_relax / gt_capture_restore bracket the shim's own CUDA
 *    calls that CUDA calls "potentially unsafe" during a global-mode
 *    capture (event queries and syncs, event creation): the calling thread
 *    in cudaStreamCaptureModeRelaxed, so they neither fail nor invalidate
 *    the application's capture. The device-timing thread relaxes itself
 *    for life (devtime_resolve.c).
 */
#ifndef GPUTRACE_CAPTURE_H
#define GPUTRACE_CAPTURE_H

#include "shim.h"

uint32_t gt_capture_of(const void *stream, int ptsz);
/* 1 when the calling thread began a capture that is still open. */
int gt_capture_thread_captures(void);
/* The thread's previous capture mode (for gt_capture_restore), or -1 when
 * the runtime has no cudaThreadExchangeStreamCaptureMode. */
int gt_capture_relax(void);
void gt_capture_restore(int prev);
void gt_capture_after_fork(void);

/* ---- the capture hooks' machinery: the runtime's (capture.c) and the
 * driver's twins (hooks_graph.c) share it ---- */

/* The stream a call names, as the table keys it: stream 0 of a _ptsz entry
 * point is the per-thread stream (0x2), of any other the legacy one (0x1);
 * the driver's CU_STREAM_LEGACY / CU_STREAM_PER_THREAD are the same. */
uint64_t gt_capture_stream(const void *stream, int ptsz);
/* Around a BeginCapture: pending before the real call (the bit goes up),
 * done after it with the capture's id (gt_capture_of: its low 32 bits, as
 * captured records' corr holds it) and whether it began. */
void gt_capture_begin_pending(void);
void gt_capture_begin_done(uint64_t stream, uint64_t id, int ok);
/* Around an EndCapture: the id of the capture `stream` is the origin of
 * (asked before the call), and its end after the call returned r (a
 * failed one ends it only if the stream no longer captures: 0 when it
 * goes on). */
uint64_t gt_capture_open_id(uint64_t stream);
int gt_capture_end(uint64_t stream, int r);
/* After a successful cudaStreamDestroy (traced or not): a capture that
 * stream was the origin of is over. Costs one load when none is open. */
void gt_capture_stream_destroyed(const void *stream);
/* After a successful cudaDeviceReset: every capture is over. */
void gt_capture_reset(void);
/* A GRAPH record of a capture call (or profiler start/stop). */
void gt_capture_emit(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                     uint64_t stream, uint64_t id, uint64_t graph, uint32_t mode);

/* The real call of a capture hook that does not record (tracing is off, or
 * inside another hook), with the thread marked as inside a hook: the
 * driver's twins that libcudart's own call may reach forward untouched
 * (hooks_graph.c), so the capture is kept once, by the outer hook. A
 * macro: `stmt` declares the result the caller goes on with. */
#define GT_CAPTURE_UNTRACED(stmt)                                                        \
  int d_ = gt_tls_depth;                                                                 \
  gt_tls_depth = d_ != 0 ? d_ : 1;                                                       \
  stmt;                                                                                  \
  gt_tls_depth = d_

/* A BeginCapture hook's body around `call`: the bit is up before the
 * capture can exist, and stays up only if it does. A macro, as
 * GT_TRACE_CALL (shim.h): it returns from the hook and `call` is code. */
#define GT_BEGIN_CAPTURE(api, call, stream, ptsz, graph, mode)                           \
  do {                                                                                   \
    uint64_t h_ = gt_capture_stream(stream, ptsz);                                       \
    gt_capture_begin_pending();                                                          \
    if (!gt_hook_enter()) {                                                              \
      GT_CAPTURE_UNTRACED(cudaError_t r_ = call);                                        \
      int e_ = errno;                                                                    \
      gt_capture_begin_done(                                                             \
          h_, r_ == 0 ? gt_capture_of((const void *)(uintptr_t)h_, 0) : 0, r_ == 0);     \
      errno = e_;                                                                        \
      return r_;                                                                         \
    }                                                                                    \
    uint64_t t0 = gt_now();                                                              \
    cudaError_t r = call;                                                                \
    uint64_t t1 = gt_now();                                                              \
    int saved_errno = errno;                                                             \
    uint64_t id_ = r == 0 ? gt_capture_of((const void *)(uintptr_t)h_, 0) : 0;           \
    gt_capture_begin_done(h_, id_, r == 0);                                              \
    gt_capture_emit(api, t0, t1, r, h_, id_, (uint64_t)(uintptr_t)(graph),               \
                    (uint32_t)(mode));                                                   \
    gt_hook_leave();                                                                     \
    errno = saved_errno;                                                                 \
    return r;                                                                            \
  } while (0)

/* An EndCapture hook's body around `call` (graph: the cudaGraph_t * / CUgraph *
 * out-parameter): the capture ends as gt_capture_end says, traced or not;
 * the record names it only if it ended. A macro, as GT_BEGIN_CAPTURE. */
#define GT_END_CAPTURE(api, call, stream, ptsz, graph)                                   \
  do {                                                                                   \
    uint64_t h_ = gt_capture_stream(stream, ptsz), id_ = gt_capture_open_id(h_);         \
    if (!gt_hook_enter()) {                                                              \
      GT_CAPTURE_UNTRACED(cudaError_t r_ = call);                                        \
      int e_ = errno;                                                                    \
      (void)gt_capture_end(h_, r_);                                                      \
      errno = e_;                                                                        \
      return r_;                                                                         \
    }                                                                                    \
    uint64_t t0 = gt_now();                                                              \
    cudaError_t r = call;                                                                \
    uint64_t t1 = gt_now();                                                              \
    int saved_errno = errno;                                                             \
    id_ = gt_capture_end(h_, r) ? id_ : 0;                                               \
    gt_capture_emit(api, t0, t1, r, h_, id_,                                             \
                    r == 0 && (graph) ? (uint64_t)(uintptr_t) * (graph) : 0, 0);         \
    gt_hook_leave();                                                                     \
    errno = saved_errno;                                                                 \
    return r;                                                                            \
  } while (0)

/* The corr field of a launch, copy or memset record: the thread's
 * correlation id, or, for a call queued into a capture (gt_dt_start set
 * gt_tls_cap), the capture's id with GT_F_CAPTURED on the record. */
static inline uint32_t gt_call_corr(struct gt_record *rec) {
  uint32_t cap = gt_tls_cap;
  if (__builtin_expect(cap == 0, 1))
    return gt_tls_corr;
  rec->flags |= GT_F_CAPTURED;
  gt_tls_cap = 0; /* used: a later record of the thread is its own */
  return cap;
}

#endif
