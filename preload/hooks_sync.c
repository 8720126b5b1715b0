/* hooks_sync.c — synchronization, stream and event hooks (kinds SYNC,
 * STREAM, EVENT).
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature (the _ptsz
 *    per-thread-stream twins included), forwards to the real function and
 *    returns its result and errno untouched.
 *  - All three kinds fill u.handle:
 *     SYNC: handle = the stream or event waited on (0 for
 *       cudaDeviceSynchronize); cudaStreamWaitEvent: handle = stream,
 *       handle2 = event, flags. Queries are recorded with their result
 *       (cudaErrorNotReady included).
 *     STREAM: handle = the created stream (only when the call succeeded and
 *       the out-pointer is non-NULL) or the destroyed one; flags, priority.
 *     EVENT: handle = the created / destroyed / recorded event; flags;
 *       cudaEventRecord(WithFlags): handle2 = the stream.
 *  - A stream destroyed (cudaStreamDestroy succeeded, traced or not) ends
 *    the capture it was the origin of (capture.h gt_capture_stream_
 *    destroyed), so that launches leave the general form.
 */
#include "capture.h"

static void emit_handle(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                        const void *handle, const void *handle2, uint32_t flags,
                        int32_t priority) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.u.handle.handle = (uint64_t)(uintptr_t)handle;
  rec.u.handle.handle2 = (uint64_t)(uintptr_t)handle2;
  rec.u.handle.flags = flags;
  rec.u.handle.priority = priority;
  gt_emit(&rec);
}

/* The handle a create call returned through `out`, or NULL on failure. */
static inline void *created(cudaError_t r, void *const *out) {
  return r == 0 && out != NULL ? *out : NULL;
}

/* A hook `name(type h)` recording h as the handle. This and the other
 * GT_HOOK_* macros below define the hooks they are given (macros: shim.h). */
#define GT_HOOK_ONE_HANDLE(name, type)                                                   \
  GT_EXPORT cudaError_t name(type h) {                                                   \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(h), emit_handle(GT_API_##name, t0, t1, r, h, NULL, 0, 0)); \
  }

/* ---- synchronization ---- */

GT_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  GT_REAL(cudaDeviceSynchronize);
  GT_TRACE_CALL(real_cudaDeviceSynchronize(),
                emit_handle(GT_API_cudaDeviceSynchronize, t0, t1, r, NULL, NULL, 0, 0));
}

GT_HOOK_ONE_HANDLE(cudaStreamSynchronize, cudaStream_t)
GT_HOOK_ONE_HANDLE(cudaStreamSynchronize_ptsz, cudaStream_t)
GT_HOOK_ONE_HANDLE(cudaEventSynchronize, cudaEvent_t)
GT_HOOK_ONE_HANDLE(cudaStreamQuery, cudaStream_t)
GT_HOOK_ONE_HANDLE(cudaStreamQuery_ptsz, cudaStream_t)
GT_HOOK_ONE_HANDLE(cudaEventQuery, cudaEvent_t)

#define GT_HOOK_STREAM_WAIT_EVENT(name)                                                  \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaEvent_t event,                     \
                             unsigned int flags) {                                       \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(stream, event, flags),                                     \
                  emit_handle(GT_API_##name, t0, t1, r, stream, event, flags, 0));       \
  }
GT_HOOK_STREAM_WAIT_EVENT(cudaStreamWaitEvent)
GT_HOOK_STREAM_WAIT_EVENT(cudaStreamWaitEvent_ptsz)

/* ---- streams ---- */

GT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
  GT_REAL(cudaStreamCreate);
  GT_TRACE_CALL(
      real_cudaStreamCreate(pStream),
      emit_handle(GT_API_cudaStreamCreate, t0, t1, r, created(r, pStream), NULL, 0, 0));
}

GT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                                unsigned int flags) {
  GT_REAL(cudaStreamCreateWithFlags);
  GT_TRACE_CALL(real_cudaStreamCreateWithFlags(pStream, flags),
                emit_handle(GT_API_cudaStreamCreateWithFlags, t0, t1, r,
                            created(r, pStream), NULL, flags, 0));
}

GT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream,
                                                   unsigned int flags, int priority) {
  GT_REAL(cudaStreamCreateWithPriority);
  GT_TRACE_CALL(real_cudaStreamCreateWithPriority(pStream, flags, priority),
                emit_handle(GT_API_cudaStreamCreateWithPriority, t0, t1, r,
                            created(r, pStream), NULL, flags, priority));
}

/* A destroyed stream's capture is over (capture.h), traced or not. */
GT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  GT_REAL(cudaStreamDestroy);
  int traced = gt_hook_enter();
  uint64_t t0 = traced ? gt_now() : 0;
  cudaError_t r = real_cudaStreamDestroy(stream);
  int saved_errno = errno;
  uint64_t t1 = traced ? gt_now() : 0;
  if (r == 0)
    gt_capture_stream_destroyed(stream);
  if (traced) {
    emit_handle(GT_API_cudaStreamDestroy, t0, t1, r, stream, NULL, 0, 0);
    gt_hook_leave();
  }
  errno = saved_errno;
  return r;
}

/* ---- events ---- */

GT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event) {
  GT_REAL(cudaEventCreate);
  GT_TRACE_CALL(
      real_cudaEventCreate(event),
      emit_handle(GT_API_cudaEventCreate, t0, t1, r, created(r, event), NULL, 0, 0));
}

GT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  GT_REAL(cudaEventCreateWithFlags);
  GT_TRACE_CALL(real_cudaEventCreateWithFlags(event, flags),
                emit_handle(GT_API_cudaEventCreateWithFlags, t0, t1, r, created(r, event),
                            NULL, flags, 0));
}

GT_HOOK_ONE_HANDLE(cudaEventDestroy, cudaEvent_t)

#define GT_HOOK_EVENT_RECORD(name)                                                       \
  GT_EXPORT cudaError_t name(cudaEvent_t event, cudaStream_t stream) {                   \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(event, stream),                                            \
                  emit_handle(GT_API_##name, t0, t1, r, event, stream, 0, 0));           \
  }
GT_HOOK_EVENT_RECORD(cudaEventRecord)
GT_HOOK_EVENT_RECORD(cudaEventRecord_ptsz)

#define GT_HOOK_EVENT_RECORD_FLAGS(name)                                                 \
  GT_EXPORT cudaError_t name(cudaEvent_t event, cudaStream_t stream,                     \
                             unsigned int flags) {                                       \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(event, stream, flags),                                     \
                  emit_handle(GT_API_##name, t0, t1, r, event, stream, flags, 0));       \
  }
GT_HOOK_EVENT_RECORD_FLAGS(cudaEventRecordWithFlags)
GT_HOOK_EVENT_RECORD_FLAGS(cudaEventRecordWithFlags_ptsz)
