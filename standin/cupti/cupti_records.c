/* cupti_records.c — the stand-in libcupti's activity records and buffers:
 * what the stand-in runtime reports (attach.h) becomes CUPTI records in
 * buffers the client lends (cuptiActivityRegisterCallbacks).
 *
 * Contract:
 *  - API records (RUNTIME, for the calls whose collection is on: the kind,
 *    or cuptiActivityEnableRuntimeApi) and the EXTERNAL_CORRELATION records
 *    of such a call (one per kind whose stack is not empty at its entry)
 *    go to the calling thread's own buffer; device records (kernels,
 *    copies, peer copies as MEMCPY2, memsets) to the device buffer. A buffer
 *    is requested from the thread that first needs it: the application's
 *    thread for API records, a flushing caller or the worker thread for
 *    device records.
 *  - A device record is written once its operation ended on the simulated
 *    timeline (never before: incomplete records do not enter buffers).
 *    cuptiActivityFlushAll(0) delivers every non-empty buffer, after writing
 *    the ended operations; CUPTI_ACTIVITY_FLAG_FLUSH_FORCED also writes the
 *    operations still running, with start = end = 0 ("not collected"),
 *    and those are gone. The worker (every 10 ms) writes ended operations
 *    and delivers buffers that are full.
 *  - A record for which no buffer could be had (the client gave none) is
 *    dropped and counted (cuptiActivityGetNumDroppedRecords).
 *  - Buffers are delivered in the order the knob says (thread buffers
 *    first, the device buffer first, or shuffled), never with cs.mu held.
 *  - Knobs (GPUTRACE_STANDIN_CUPTI_*): zeroed or reversed timestamps every
 *    Nth device record, every Nth device record dropped (counted), buffer
 *    order, an nsys subscribed at load, a CLOCK_REALTIME step after N
 *    device records, a late Kineto (cupti_kineto.c), a cuptiGetTimestamp
 *    caller preempted (docs/standin.md).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_int.h"

_Static_assert(CUPTI_API_VERSION >= 130001, "the records of CUPTI 13.0 (CUDA 13)");
_Static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6");
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4");
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4");
_Static_assert(sizeof(CUpti_ActivityAPI) == 40, "API");
_Static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24, "ExternalCorrelation");
_Static_assert(offsetof(CUpti_ActivityKernel10, graphNodeId) == 144,
               "Kernel10.graphNodeId");
_Static_assert(offsetof(CUpti_ActivityKernel10, graphId) == 156, "Kernel10.graphId");

struct cs_thread {
  struct cs_buf buf;
  struct cs_thread *next;
};
static __thread struct cs_thread *tls_thread;

/* The call in progress on this thread (api_enter .. api_exit). */
struct cs_call {
  uint32_t corr;
  int cbid, collected;
  uint64_t start;
  uint64_t ext[CS_EXT_KINDS];
};
static __thread struct cs_call tls_call;

size_t cs_record_size(uint32_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return sizeof(CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    return sizeof(CUpti_ActivityMemcpyPtoP4);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return sizeof(CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return sizeof(CUpti_ActivityAPI);
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    return sizeof(CUpti_ActivityExternalCorrelation);
  default:
    return 0;
  }
}

/* ---- knobs ---- */

static void knob_u64(const char *name, uint64_t *out) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0')
    fprintf(stderr, "gputrace standin: ignoring invalid %s=%s\n", name, v);
  else
    *out = (uint64_t)x;
}

void cs_knobs_load(void) {
  uint64_t zero = 0, rev = 0, drop = 0, nsys = 0, step = 0, at = 0, kineto = 0, stall = 0;
  knob_u64("GPUTRACE_STANDIN_CUPTI_KINETO_AT", &kineto);
  knob_u64("GPUTRACE_STANDIN_CUPTI_ZERO_EVERY", &zero);
  knob_u64("GPUTRACE_STANDIN_CUPTI_REVERSE_EVERY", &rev);
  knob_u64("GPUTRACE_STANDIN_CUPTI_DROP_EVERY", &drop);
  knob_u64("GPUTRACE_STANDIN_CUPTI_NSYS", &nsys);
  knob_u64("GPUTRACE_STANDIN_CUPTI_CLOCK_STEP_NS", &step);
  knob_u64("GPUTRACE_STANDIN_CUPTI_CLOCK_STEP_AT", &at);
  knob_u64("GPUTRACE_STANDIN_CUPTI_STALL_EVERY", &stall);
  const char *order = getenv("GPUTRACE_STANDIN_CUPTI_ORDER");
  cs.knobs = (struct cs_knobs){
      (uint32_t)zero, (uint32_t)rev,    (uint32_t)drop, 0, nsys != 0, (int64_t)step,
      (uint32_t)at,   (uint32_t)kineto, (uint32_t)stall};
  if (order && strcmp(order, "device-first") == 0)
    cs.knobs.order = 1;
  else if (order && strcmp(order, "shuffle") == 0)
    cs.knobs.order = 2;
  else if (order && *order && strcmp(order, "threads-first") != 0)
    fprintf(stderr,
            "gputrace standin: ignoring invalid GPUTRACE_STANDIN_CUPTI_ORDER=%s\n",
            order);
}

/* ---- buffers ---- */

/* cs.mu held; b's records to the ready list (b emptied). */
static void retire_locked(struct cs_buf *b) {
  if (b->p == NULL)
    return;
  if (cs.nready == cs.cap_ready) {
    size_t cap = cs.cap_ready ? 2 * cs.cap_ready : 16;
    struct cs_buf *r = realloc(cs.ready, cap * sizeof *r);
    if (r == NULL)
      abort(); /* the stand-in's own memory: a test machine out of memory */
    cs.ready = r;
    cs.cap_ready = cap;
  }
  cs.ready[cs.nready++] = *b;
  *b = (struct cs_buf){0};
}

/* cs.mu held, released and retaken around the client's request callback.
 * Room for n bytes in b; 0 when the client lends no buffer (drop). */
static int room_locked(struct cs_buf *b, size_t n) {
  if (b->p &&
      (b->size - b->used < n || (b->max_records && b->nrecords == b->max_records)))
    retire_locked(b);
  if (b->p)
    return 1;
  CUpti_BuffersCallbackRequestFunc req = cs.request;
  if (req == NULL)
    return 0;
  uint8_t *p = NULL;
  size_t size = 0, max = 0;
  pthread_mutex_unlock(&cs.mu);
  req(&p, &size, &max);
  pthread_mutex_lock(&cs.mu);
  if (p == NULL || size < n || ((uintptr_t)p & 7) != 0)
    return 0; /* no buffer, too small, or misaligned: CUPTI drops too */
  if (b->p)   /* a flush retired it meanwhile? no: ours again */
    retire_locked(b);
  *b = (struct cs_buf){p, size, 0, max, 0};
  return 1;
}

/* cs.mu held. Append a record of kind rec's to b, or count it dropped. */
static void put_locked(struct cs_buf *b, const void *rec) {
  uint32_t kind;
  memcpy(&kind, rec, sizeof kind);
  size_t n = cs_record_size(kind);
  if (!room_locked(b, n)) {
    cs.dropped++;
    return;
  }
  memcpy(b->p + b->used, rec, n);
  b->used += (n + 7) & ~(size_t)7;
  b->nrecords++;
}

static struct cs_thread *thread_locked(void) {
  if (tls_thread == NULL) {
    tls_thread = calloc(1, sizeof *tls_thread);
    if (tls_thread == NULL)
      abort();
    tls_thread->next = cs.threads; /* kept after the thread exits: flushed */
    cs.threads = tls_thread;
  }
  return tls_thread;
}

/* ---- device records ---- */

static void kernel_record(const struct cs_op *o, uint64_t start, uint64_t end) {
  CUpti_ActivityKernel10 k = {0};
  k.kind = cs.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]
               ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
               : CUPTI_ACTIVITY_KIND_KERNEL;
  k.start = start;
  k.end = end;
  k.completed = end;
  k.streamId = o->op.stream_id;
  k.contextId = 1;
  k.gridX = o->op.grid[0], k.gridY = o->op.grid[1], k.gridZ = o->op.grid[2];
  k.blockX = o->op.block[0], k.blockY = o->op.block[1], k.blockZ = o->op.block[2];
  k.dynamicSharedMemory = (int32_t)o->op.shmem;
  k.correlationId = o->corr;
  k.name = o->op.name;
  k.graphNodeId = o->op.graph_node_id;
  k.graphId = o->op.graph_id;
  put_locked(&cs.device, &k);
}

static void bytes_record(const struct cs_op *o, uint64_t start, uint64_t end) {
  static const uint8_t copy_kind[] = {
      0, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
      CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP};
  uint8_t host = o->op.pinned ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                              : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  uint8_t dev = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if (o->op.kind == SI_CUPTI_MEMSET) {
    CUpti_ActivityMemset4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMSET,
                               .bytes = o->op.bytes,
                               .start = start,
                               .end = end,
                               .contextId = 1,
                               .streamId = o->op.stream_id,
                               .correlationId = o->corr,
                               .memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                               .graphNodeId = o->op.graph_node_id,
                               .graphId = o->op.graph_id};
    put_locked(&cs.device, &m);
  } else if (o->op.dir == SI_CUPTI_PEER) {
    CUpti_ActivityMemcpyPtoP4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
                                   .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
                                   .srcKind = dev,
                                   .dstKind = dev,
                                   .bytes = o->op.bytes,
                                   .start = start,
                                   .end = end,
                                   .contextId = 1,
                                   .streamId = o->op.stream_id,
                                   .srcContextId = 1,
                                   .dstContextId = 1,
                                   .correlationId = o->corr,
                                   .graphNodeId = o->op.graph_node_id,
                                   .graphId = o->op.graph_id};
    put_locked(&cs.device, &m);
  } else {
    CUpti_ActivityMemcpy6 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
                               .copyKind = copy_kind[o->op.dir < 5 ? o->op.dir : 0],
                               .srcKind = o->op.dir == SI_CUPTI_HTOD ? host : dev,
                               .dstKind = o->op.dir == SI_CUPTI_DTOH ? host : dev,
                               .bytes = o->op.bytes,
                               .start = start,
                               .end = end,
                               .contextId = 1,
                               .streamId = o->op.stream_id,
                               .correlationId = o->corr,
                               .graphNodeId = o->op.graph_node_id,
                               .graphId = o->op.graph_id};
    put_locked(&cs.device, &m);
  }
}

/* cs.mu held. The record of o (ended, or forced out: 0/0), knobs applied. */
static void device_record_locked(const struct cs_op *o, int ended) {
  uint64_t n = __atomic_add_fetch(&cs.device_records, 1, __ATOMIC_RELAXED);
  const struct cs_knobs *kn = &cs.knobs;
  if (kn->drop_every && n % kn->drop_every == 0) {
    cs.dropped++;
    return;
  }
  uint64_t start = 0, end = 0;
  if (ended && !(kn->zero_every && n % kn->zero_every == 0)) {
    cs_device_ts(o->op.start, o->op.end, &start, &end);
    if (kn->reverse_every && n % kn->reverse_every == 0) {
      uint64_t t = start;
      start = end + 1000;
      end = t;
    }
  }
  if (o->op.kind == SI_CUPTI_KERNEL)
    kernel_record(o, start, end);
  else
    bytes_record(o, start, end);
}

static uint64_t mono_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Serializes whoever writes device records (a flushing caller, the
 * worker): taken before cs.mu. */
static pthread_mutex_t device_mu = PTHREAD_MUTEX_INITIALIZER;

/* device_mu and cs.mu held. Write the pending operations that ended (all,
 * when forced). Writing may drop cs.mu (a buffer request), so the pending
 * list is taken first; operations queued meanwhile join what is kept. */
static void write_ended_locked(int forced) {
  uint64_t now = mono_now();
  struct cs_op *ops = cs.pending;
  size_t n = cs.npending, cap = cs.cap_pending, kept = 0;
  cs.pending = NULL;
  cs.npending = cs.cap_pending = 0;
  for (size_t i = 0; i < n; i++) {
    if (ops[i].op.end <= now || forced)
      device_record_locked(&ops[i], ops[i].op.end <= now);
    else
      ops[kept++] = ops[i];
  }
  for (size_t i = 0; i < cs.npending; i++) { /* queued while cs.mu was dropped */
    if (kept == cap) {
      cap = cap ? 2 * cap : 64;
      ops = realloc(ops, cap * sizeof *ops);
      if (ops == NULL)
        abort();
    }
    ops[kept++] = cs.pending[i];
  }
  free(cs.pending);
  cs.pending = ops;
  cs.npending = kept;
  cs.cap_pending = cap;
}

/* ---- the runtime's reports (attach.h) ---- */

static uint32_t on_api_enter(const char *api) {
  pthread_mutex_lock(&cs.mu);
  uint32_t corr = ++cs.next_corr;
  if (corr == 0)
    corr = ++cs.next_corr;
  int cbid = cs_runtime_cbid(api);
  int collected = cbid != 0 && cs_api_collected(cbid);
  pthread_mutex_unlock(&cs.mu);
  tls_call = (struct cs_call){corr, cbid, collected, collected ? cs_host_now() : 0, {0}};
  if (collected) {
    cs_ext_tops(tls_call.ext);
    cs_kineto_ext(tls_call.ext);
  }
  return corr;
}

static void on_api_exit(uint32_t corr) {
  struct cs_call c = tls_call;
  tls_call.corr = 0;
  if (!c.collected || c.corr != corr)
    return;
  CUpti_ActivityAPI a = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME,
                         .cbid = (CUpti_CallbackId)c.cbid,
                         .start = c.start,
                         .end = cs_host_now(),
                         .processId = (uint32_t)getpid(),
                         .threadId = (uint32_t)gettid(),
                         .correlationId = corr};
  pthread_mutex_lock(&cs.mu);
  struct cs_thread *t = thread_locked();
  if (cs.kind_on[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
    for (int k = 0; k < CS_EXT_KINDS; k++)
      if (c.ext[k] != 0) {
        CUpti_ActivityExternalCorrelation e = {
            .kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
            .externalKind = (CUpti_ExternalCorrelationKind)k,
            .externalId = c.ext[k],
            .correlationId = corr};
        put_locked(&t->buf, &e);
      }
  put_locked(&t->buf, &a);
  pthread_mutex_unlock(&cs.mu);
}

static int op_enabled_locked(const struct si_cupti_op *op) {
  if (op->kind == SI_CUPTI_KERNEL)
    return cs.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ||
           cs.kind_on[CUPTI_ACTIVITY_KIND_KERNEL];
  if (op->kind == SI_CUPTI_MEMSET)
    return cs.kind_on[CUPTI_ACTIVITY_KIND_MEMSET];
  return cs.kind_on[op->dir == SI_CUPTI_PEER ? CUPTI_ACTIVITY_KIND_MEMCPY2
                                             : CUPTI_ACTIVITY_KIND_MEMCPY];
}

static void on_op(uint32_t corr, const struct si_cupti_op *op) {
  pthread_mutex_lock(&cs.mu);
  if (op_enabled_locked(op)) {
    if (cs.npending == cs.cap_pending) {
      size_t cap = cs.cap_pending ? 2 * cs.cap_pending : 64;
      struct cs_op *p = realloc(cs.pending, cap * sizeof *p);
      if (p == NULL)
        abort();
      cs.pending = p;
      cs.cap_pending = cap;
    }
    cs.pending[cs.npending++] = (struct cs_op){corr, *op};
  }
  pthread_mutex_unlock(&cs.mu);
}

const struct si_cupti_client cs_client = {on_api_enter, on_api_exit, on_op};

/* ---- delivery ---- */

/* cs.mu held on entry, released on return: hand the ready buffers to the
 * client in the knob's order. */
static void deliver_unlock(size_t device_at) {
  struct cs_buf *list = cs.ready;
  size_t n = cs.nready;
  cs.ready = NULL;
  cs.nready = cs.cap_ready = 0;
  CUpti_BuffersCallbackCompleteFunc done = cs.complete;
  int order = cs.knobs.order;
  pthread_mutex_unlock(&cs.mu);
  if (order == 1 && device_at < n) { /* the device's buffer first */
    struct cs_buf d = list[device_at];
    memmove(list + 1, list, device_at * sizeof *list);
    list[0] = d;
  } else if (order == 2) {
    for (size_t i = n; i > 1; i--) { /* a fixed shuffle: reproducible */
      size_t j = (i * 2654435761u) % i;
      struct cs_buf t = list[i - 1];
      list[i - 1] = list[j];
      list[j] = t;
    }
  }
  for (size_t i = 0; i < n; i++)
    if (done != NULL)
      done(NULL, 0, list[i].p, list[i].size, list[i].used);
  free(list);
}

CUptiResult cs_flush(uint32_t flag) {
  pthread_mutex_lock(&device_mu);
  pthread_mutex_lock(&cs.mu);
  if (cs.request == NULL) {
    pthread_mutex_unlock(&cs.mu);
    pthread_mutex_unlock(&device_mu);
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  write_ended_locked((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
  for (struct cs_thread *t = cs.threads; t != NULL; t = t->next)
    if (t->buf.used > 0)
      retire_locked(&t->buf);
  size_t device_at = cs.nready;
  if (cs.device.used > 0)
    retire_locked(&cs.device);
  deliver_unlock(device_at);
  pthread_mutex_unlock(&device_mu);
  return CUPTI_SUCCESS;
}

static void *worker_main(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&device_mu);
    pthread_mutex_lock(&cs.mu);
    if (cs.worker == 2) {
      pthread_mutex_unlock(&cs.mu);
      pthread_mutex_unlock(&device_mu);
      return NULL;
    }
    if (cs.request != NULL)
      write_ended_locked(0);
    cs_kineto_maybe_start_locked();
    deliver_unlock(cs.nready); /* only what filled up */
    pthread_mutex_unlock(&device_mu);
  }
}

void cs_start_worker_locked(void) {
  if (cs.worker != 0)
    return;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, worker_main, NULL) == 0)
    cs.worker = 1;
  pthread_attr_destroy(&attr);
}

/* ---- exported ---- */

CS_API CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                               CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == NULL || complete == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&cs.mu);
  cs.request = request;
  cs.complete = complete;
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  return cs_flush(flag);
}

CS_API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer,
                                              size_t validBufferSizeBytes,
                                              CUpti_Activity **record) {
  if (buffer == NULL || record == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  size_t at = 0;
  if (*record != NULL) {
    uint8_t *r = (uint8_t *)*record;
    if (r < buffer || r >= buffer + validBufferSizeBytes)
      return CUPTI_ERROR_INVALID_PARAMETER;
    at = (size_t)(r - buffer) + ((cs_record_size((*record)->kind) + 7) & ~(size_t)7);
  }
  if (at >= validBufferSizeBytes)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  uint32_t kind;
  memcpy(&kind, buffer + at, sizeof kind);
  size_t n = cs_record_size(kind);
  if (n == 0 || at + n > validBufferSizeBytes)
    return CUPTI_ERROR_INVALID_KIND;
  *record = (CUpti_Activity *)(buffer + at);
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                     size_t *dropped) {
  (void)context, (void)streamId;
  if (dropped == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&cs.mu);
  *dropped = (size_t)cs.dropped; /* read and reset, as the real library */
  cs.dropped = 0;
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}
