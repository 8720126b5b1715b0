/* streams_events.c — streams, events and the synchronize/query calls.
 *
 * Contract:
 *  - Stream handles: NULL is the legacy default stream, or the calling
 *    thread's per-thread default stream when passed to a _ptsz/_ptds entry
 *    point; cudaStreamLegacy and cudaStreamPerThread always name those two.
 *    The legacy stream synchronizes with blocking streams (timeline.c); the
 *    per-thread default stream is a blocking stream owned by its thread.
 *  - An event records the tail of its stream at record time (a zero-length
 *    op on the stream, so recording on the legacy stream also waits for the
 *    blocking streams). cudaEventElapsedTime is end - start in ms and may be
 *    negative; events created with cudaEventDisableTiming, or never
 *    recorded, give cudaErrorInvalidResourceHandle as with the real runtime.
 *  - Synchronize calls sleep until the relevant simulated time; queries
 *    return cudaErrorNotReady before it. With the timeline off nothing ever
 *    waits and every query is ready.
 *  - Stream priorities are stored and reported but do not affect scheduling.
 *  - cudaStreamSetAttribute / cudaStreamGetAttribute take the attributes
 *    valid for streams (access policy window, synchronization policy,
 *    priority, memory sync domain and its map), check each value's range
 *    and store it; nothing reads them. Any other id is cudaErrorInvalidValue.
 *  - Stream capture (capture.c): the synchronize and query calls are
 *    potentially unsafe (cudaErrorStreamCaptureUnsupported when the capture
 *    rules prohibit them for the calling thread) and refuse a capturing
 *    stream; an event whose last record was in a capture was never recorded
 *    on the timeline: cudaEventQuery / cudaEventSynchronize /
 *    cudaEventElapsedTime on it give cudaErrorCapturedEvent until it is
 *    recorded again outside a capture. Records into and waits from
 *    capturing streams go to capture.c (si_cap_event_record /
 *    si_cap_wait_event); destroying a stream leaves or ends its capture.
 *    Without any capture the paths cost one relaxed load more.
 */
#include <string.h>

#include "standin.h"

#define PRIORITY_LEAST 0
#define PRIORITY_GREATEST (-5)

struct si_stream si_legacy_stream = {.magic = SI_MAGIC_STREAM, .kind = SI_STREAM_LEGACY};

static _Thread_local struct si_stream pt_stream = {
    .magic = SI_MAGIC_STREAM, .kind = SI_STREAM_PER_THREAD, .blocking = 1};

static struct si_pool stream_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                     .obj_size = sizeof(struct si_stream)};
static struct si_pool event_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                    .obj_size = sizeof(struct si_event)};

struct si_stream *si_stream_resolve(cudaStream_t h, int per_thread) {
  if (h == NULL)
    return per_thread ? &pt_stream : &si_legacy_stream;
  if (h == cudaStreamLegacy)
    return &si_legacy_stream;
  if (h == cudaStreamPerThread)
    return &pt_stream;
  struct si_stream *s = (struct si_stream *)h;
  return __atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) == SI_MAGIC_STREAM ? s : NULL;
}

struct si_event *si_event_resolve(cudaEvent_t h) {
  struct si_event *e = (struct si_event *)h;
  if (e == NULL || __atomic_load_n(&e->magic, __ATOMIC_ACQUIRE) != SI_MAGIC_EVENT)
    return NULL;
  return e;
}

void si_event_stamp(struct si_event *e, uint64_t ts) {
  uint64_t *shared = __atomic_load_n(&e->shared_ts, __ATOMIC_ACQUIRE);
  __atomic_store_n(shared != NULL ? shared : &e->ts, ts, __ATOMIC_RELEASE);
  __atomic_store_n(&e->cap_id, 0, __ATOMIC_RELEASE);
}

/* Whether the event's last record was in a capture sequence: it was never
 * recorded on the timeline, so it cannot be waited for or timed. */
static int captured_event(const struct si_event *e) {
  return __atomic_load_n(&e->cap_id, __ATOMIC_ACQUIRE) != 0;
}

void si_streams_events_reset(void) {
  si_pool_reset(&stream_pool);
  si_pool_reset(&event_pool);
}

/* ---- streams ------------------------------------------------------------------ */

static cudaError_t stream_create(cudaStream_t *out, unsigned flags, int priority) {
  if (out == NULL || (flags & ~(unsigned)cudaStreamNonBlocking))
    return cudaErrorInvalidValue;
  struct si_stream *s = si_pool_get(&stream_pool);
  if (s == NULL)
    return cudaErrorMemoryAllocation;
  /* Out-of-range priorities are clamped, as documented for the real API. */
  if (priority > PRIORITY_LEAST)
    priority = PRIORITY_LEAST;
  if (priority < PRIORITY_GREATEST)
    priority = PRIORITY_GREATEST;
  s->kind = SI_STREAM_USER;
  s->blocking = !(flags & cudaStreamNonBlocking);
  s->flags = flags;
  s->priority = priority;
  __atomic_store_n(&s->magic, SI_MAGIC_STREAM, __ATOMIC_RELEASE);
  *out = (cudaStream_t)s;
  return cudaSuccess;
}

SI_API cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
  return si_ret(stream_create(pStream, cudaStreamDefault, 0));
}

SI_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags) {
  return si_ret(stream_create(pStream, flags, 0));
}

SI_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                int priority) {
  return si_ret(stream_create(pStream, flags, priority));
}

SI_API cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  struct si_stream *s = si_stream_resolve(stream, 0);
  /* Queued work still completes at its simulated time; nothing to wait for. */
  if (s == NULL || s->kind != SI_STREAM_USER)
    return si_ret(cudaErrorInvalidResourceHandle);
  si_cap_stream_destroy(s);
  si_pool_put(&stream_pool, s);
  return cudaSuccess;
}

static cudaError_t stream_priority(cudaStream_t h, int *priority, int per_thread) {
  if (priority == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  *priority = s->priority;
  return cudaSuccess;
}

SI_API cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority) {
  return si_ret(stream_priority(hStream, priority, 0));
}

SI_API cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority) {
  return si_ret(stream_priority(hStream, priority, 1));
}

SI_API cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                                    int *greatestPriority) {
  if (leastPriority != NULL)
    *leastPriority = PRIORITY_LEAST;
  if (greatestPriority != NULL)
    *greatestPriority = PRIORITY_GREATEST;
  return cudaSuccess;
}

/* ---- synchronization ------------------------------------------------------------ */

/* A synchronize or query of stream s while captures exist: potentially
 * unsafe, and a capturing stream (or the legacy one while a blocking stream
 * captures) cannot be synchronized. */
static cudaError_t capture_sync(struct si_stream *s) {
  int captured;
  return si_cap_op(s, NULL, cudaErrorStreamCaptureUnsupported, &captured);
}

static cudaError_t stream_sync(cudaStream_t h, int per_thread) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return e;
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any()) && (e = capture_sync(s)) != cudaSuccess)
    return e;
  if (si_config()->timeline)
    si_sleep_until(si_tl_tail(s));
  return cudaSuccess;
}

SI_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return si_ret(stream_sync(stream, 0));
}

SI_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return si_ret(stream_sync(stream, 1));
}

static cudaError_t stream_query(cudaStream_t h, int per_thread) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return e;
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any()) && (e = capture_sync(s)) != cudaSuccess)
    return e;
  if (si_config()->timeline && si_now() < si_tl_tail(s))
    return cudaErrorNotReady;
  return cudaSuccess;
}

SI_API cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return si_ret(stream_query(stream, 0));
}

SI_API cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return si_ret(stream_query(stream, 1));
}

static cudaError_t stream_wait_event(cudaStream_t h, cudaEvent_t ev, unsigned flags,
                                     int per_thread) {
  struct si_stream *s = si_stream_resolve(h, per_thread);
  struct si_event *e = si_event_resolve(ev);
  if (flags & ~(unsigned)cudaEventWaitExternal)
    return cudaErrorInvalidValue;
  if (s == NULL || e == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any() || captured_event(e))) {
    int handled;
    cudaError_t err = si_cap_wait_event(s, e, flags, &handled);
    if (err != cudaSuccess || handled)
      return err;
  }
  uint64_t ts = si_event_ts(e);
  /* Waiting on a never-recorded event is a no-op, as documented. */
  if (ts != 0 && si_config()->timeline)
    si_tl_extend(s, ts);
  return cudaSuccess;
}

SI_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                       unsigned int flags) {
  return si_ret(stream_wait_event(stream, event, flags, 0));
}

SI_API cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                            unsigned int flags) {
  return si_ret(stream_wait_event(stream, event, flags, 1));
}

SI_API cudaError_t cudaDeviceSynchronize(void) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return si_ret(e);
  if (si_config()->timeline)
    si_sleep_until(si_tl_device_tail());
  return cudaSuccess;
}

/* ---- stream attributes ---------------------------------------------------------- */

/* The attributes valid for streams (cudaLaunchAttributeID's "Valid for
 * streams"), each value checked against its documented range. */
static cudaError_t set_attribute(struct si_stream *s, cudaStreamAttrID id,
                                 const cudaStreamAttrValue *v) {
  switch (id) {
  case cudaStreamAttributeAccessPolicyWindow: {
    const struct cudaAccessPolicyWindow *w = &v->accessPolicyWindow;
    if (w->num_bytes > SI_ACCESS_POLICY_MAX_WINDOW || !(w->hitRatio >= 0.0f) ||
        w->hitRatio > 1.0f || (unsigned)w->hitProp > cudaAccessPropertyPersisting ||
        (unsigned)w->missProp > cudaAccessPropertyStreaming)
      return cudaErrorInvalidValue;
    s->apw = *w;
    return cudaSuccess;
  }
  case cudaStreamAttributeSynchronizationPolicy:
    if ((unsigned)v->syncPolicy < cudaSyncPolicyAuto ||
        (unsigned)v->syncPolicy > cudaSyncPolicyBlockingSync)
      return cudaErrorInvalidValue;
    s->sync_policy = v->syncPolicy;
    return cudaSuccess;
  case cudaStreamAttributePriority: /* clamped, as at creation */
    s->priority = v->priority > PRIORITY_LEAST      ? PRIORITY_LEAST
                  : v->priority < PRIORITY_GREATEST ? PRIORITY_GREATEST
                                                    : v->priority;
    return cudaSuccess;
  case cudaStreamAttributeMemSyncDomainMap:
    if (v->memSyncDomainMap.default_ >= SI_MEM_SYNC_DOMAINS ||
        v->memSyncDomainMap.remote >= SI_MEM_SYNC_DOMAINS)
      return cudaErrorInvalidValue;
    s->dmap = v->memSyncDomainMap;
    s->dmap_set = 1;
    return cudaSuccess;
  case cudaStreamAttributeMemSyncDomain:
    if ((unsigned)v->memSyncDomain > cudaLaunchMemSyncDomainRemote)
      return cudaErrorInvalidValue;
    s->mem_domain = v->memSyncDomain;
    return cudaSuccess;
  default:
    return cudaErrorInvalidValue;
  }
}

static cudaError_t get_attribute(const struct si_stream *s, cudaStreamAttrID id,
                                 cudaStreamAttrValue *v) {
  cudaStreamAttrValue out;
  memset(&out, 0, sizeof out);
  switch (id) {
  case cudaStreamAttributeAccessPolicyWindow:
    out.accessPolicyWindow = s->apw;
    break;
  case cudaStreamAttributeSynchronizationPolicy:
    out.syncPolicy = s->sync_policy ? (enum cudaSynchronizationPolicy)s->sync_policy
                                    : cudaSyncPolicyAuto;
    break;
  case cudaStreamAttributePriority:
    out.priority = s->priority;
    break;
  case cudaStreamAttributeMemSyncDomainMap:
    out.memSyncDomainMap = s->dmap_set ? s->dmap : (cudaLaunchMemSyncDomainMap){0, 1};
    break;
  case cudaStreamAttributeMemSyncDomain:
    out.memSyncDomain = (cudaLaunchMemSyncDomain)s->mem_domain;
    break;
  default:
    return cudaErrorInvalidValue;
  }
  *v = out;
  return cudaSuccess;
}

static cudaError_t stream_set_attribute(cudaStream_t h, cudaStreamAttrID attr,
                                        const cudaStreamAttrValue *value,
                                        int per_thread) {
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  return value == NULL ? cudaErrorInvalidValue : set_attribute(s, attr, value);
}

static cudaError_t stream_get_attribute(cudaStream_t h, cudaStreamAttrID attr,
                                        cudaStreamAttrValue *value, int per_thread) {
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  return value == NULL ? cudaErrorInvalidValue : get_attribute(s, attr, value);
}

SI_API cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                          const cudaStreamAttrValue *value) {
  return si_ret(stream_set_attribute(hStream, attr, value, 0));
}

SI_API cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream,
                                               cudaStreamAttrID attr,
                                               const cudaStreamAttrValue *value) {
  return si_ret(stream_set_attribute(hStream, attr, value, 1));
}

SI_API cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                          cudaStreamAttrValue *value_out) {
  return si_ret(stream_get_attribute(hStream, attr, value_out, 0));
}

SI_API cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream,
                                               cudaStreamAttrID attr,
                                               cudaStreamAttrValue *value_out) {
  return si_ret(stream_get_attribute(hStream, attr, value_out, 1));
}

/* ---- events ---------------------------------------------------------------------- */

static cudaError_t event_create(cudaEvent_t *out, unsigned flags) {
  const unsigned valid =
      cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (out == NULL || (flags & ~valid))
    return cudaErrorInvalidValue;
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))
    return cudaErrorInvalidValue;
  struct si_event *e = si_event_new(flags);
  if (e == NULL)
    return cudaErrorMemoryAllocation;
  *out = (cudaEvent_t)e;
  return cudaSuccess;
}

struct si_event *si_event_new(unsigned flags) {
  struct si_event *e = si_pool_get(&event_pool);
  if (e == NULL)
    return NULL;
  e->flags = flags;
  __atomic_store_n(&e->magic, SI_MAGIC_EVENT, __ATOMIC_RELEASE);
  return e;
}

SI_API cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return si_ret(event_create(event, cudaEventDefault));
}

SI_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  return si_ret(event_create(event, flags));
}

SI_API cudaError_t cudaEventDestroy(cudaEvent_t event) {
  struct si_event *e = si_event_resolve(event);
  if (e == NULL)
    return si_ret(cudaErrorInvalidResourceHandle);
  si_cap_event_destroy(e);
  si_ipc_event_release(e);
  si_pool_put(&event_pool, e);
  return cudaSuccess;
}

static cudaError_t event_record(cudaEvent_t ev, cudaStream_t h, unsigned flags,
                                int per_thread) {
  struct si_event *e = si_event_resolve(ev);
  struct si_stream *s = si_stream_resolve(h, per_thread);
  if (flags & ~(unsigned)cudaEventRecordExternal)
    return cudaErrorInvalidValue;
  if (e == NULL || s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any())) {
    int handled;
    cudaError_t err = si_cap_event_record(e, s, flags, &handled);
    if (err != cudaSuccess || handled)
      return err;
  }
  uint64_t ts = si_config()->timeline ? si_tl_enqueue(s, SI_ENG_NONE, 0, 0) : si_now();
  si_event_stamp(e, ts);
  return cudaSuccess;
}

SI_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return si_ret(event_record(event, stream, 0, 0));
}

SI_API cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return si_ret(event_record(event, stream, 0, 1));
}

SI_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                            unsigned int flags) {
  return si_ret(event_record(event, stream, flags, 0));
}

SI_API cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                 unsigned int flags) {
  return si_ret(event_record(event, stream, flags, 1));
}

static cudaError_t event_query(cudaEvent_t event) {
  cudaError_t err = si_cap_prohibited();
  if (err != cudaSuccess)
    return err;
  struct si_event *e = si_event_resolve(event);
  if (e == NULL)
    return cudaErrorInvalidResourceHandle;
  if (captured_event(e))
    return cudaErrorCapturedEvent;
  uint64_t ts = si_event_ts(e);
  if (ts != 0 && si_config()->timeline && si_now() < ts)
    return cudaErrorNotReady;
  return cudaSuccess;
}

SI_API cudaError_t cudaEventQuery(cudaEvent_t event) {
  return si_ret(event_query(event));
}

static cudaError_t event_sync(cudaEvent_t event) {
  cudaError_t err = si_cap_prohibited();
  if (err != cudaSuccess)
    return err;
  struct si_event *e = si_event_resolve(event);
  if (e == NULL)
    return cudaErrorInvalidResourceHandle;
  if (captured_event(e))
    return cudaErrorCapturedEvent;
  uint64_t ts = si_event_ts(e);
  if (ts != 0 && si_config()->timeline)
    si_sleep_until(ts);
  return cudaSuccess;
}

SI_API cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return si_ret(event_sync(event));
}

cudaError_t si_event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == NULL)
    return cudaErrorInvalidValue;
  struct si_event *a = si_event_resolve(start), *b = si_event_resolve(end);
  if (a == NULL || b == NULL)
    return cudaErrorInvalidResourceHandle;
  if (captured_event(a) || captured_event(b))
    return cudaErrorCapturedEvent;
  if ((a->flags | b->flags) & cudaEventDisableTiming)
    return cudaErrorInvalidResourceHandle;
  uint64_t ta = si_event_ts(a);
  uint64_t tb = si_event_ts(b);
  if (ta == 0 || tb == 0)
    return cudaErrorInvalidResourceHandle;
  if (si_config()->timeline) {
    uint64_t now = si_now();
    if (now < ta || now < tb)
      return cudaErrorNotReady;
  }
  double diff = tb >= ta ? (double)(tb - ta) : -(double)(ta - tb);
  *ms = (float)(diff / 1e6);
  return cudaSuccess;
}

SI_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  return si_ret(si_event_elapsed(ms, start, end));
}
