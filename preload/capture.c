/* capture.c — stream capture: the open captures, the capture hooks
 * (cudaStreamBeginCapture*, cudaStreamEndCapture; the driver's and the
 * graph hooks are in hooks_graph.c), and what capture.h promises the other
 * hooks.
 *
 * Contract:
 *  - A table of the captures begun through a hook and not yet ended (the
 *    origin stream, the runtime's capture id, the beginning thread), under
 *    a mutex taken only by the capture hooks and, while a capture is open,
 *    by device timing's slow path. GT_MODE_CAPTURE is set from just before
 *    a BeginCapture until the last open capture ends (its bit is cleared
 *    when the table empties), so no launch into a new capture slips past
 *    the general form.
 *  - A capture ends at a successful EndCapture, and at a failed one after
 *    which its stream no longer captures (asked: an invalidated capture
 *    ends with its error; one ended from the wrong thread goes on); when
 *    its origin stream is destroyed (cudaStreamDestroy succeeded: the
 *    handle names no stream now, and a stream made later may have it);
 *    when a BeginCapture succeeds on the same stream (it cannot capture
 *    twice: the stream was destroyed where no hook saw it); and at a
 *    successful cudaDeviceReset (every stream goes). Captures beyond the
 *    table's room (64 open at once) still keep the bit set; they are
 *    counted and forgotten one per unmatched EndCapture (or reset).
 *  - GRAPH records: BeginCapture (stream, capture id, mode; ToGraph: the
 *    graph), EndCapture (stream, capture id, the graph it returned, or 0;
 *    capture 0 too when it failed and the capture goes on);
 *    gt_capture_emit writes them (and range.c's profiler records).
 *  - Queries (cudaStreamGetCaptureInfo, cudaPeekAtLastError,
 *    cudaThreadExchangeStreamCaptureMode) are made through pointers from
 *    gt_resolve, inside a hook or with the recursion guard held, so they are
 *    never traced; an error they raise is cleared unless the thread had
 *    one already.
 *  - Fork: the child has no capture open (a capture does not survive
 *    fork); its table and bit start empty.
 */
#include <pthread.h>
#include <unistd.h>

#include "capture.h"

#define CAP_MAX 64
#define CAP_LEGACY 0x1u     /* cudaStreamLegacy */
#define CAP_PER_THREAD 0x2u /* cudaStreamPerThread */

struct cap_entry {
  uint64_t stream; /* as normalized by gt_capture_stream */
  uint64_t id;
  uint32_t tid; /* the beginning thread (and, for the per-thread stream, its owner) */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cap_entry g_open[CAP_MAX];
static unsigned g_nopen, g_untracked, g_beginning;

typedef cudaError_t (*info_fn)(cudaStream_t, int *, unsigned long long *, cudaGraph_t *,
                               const void **, const void **, size_t *);
typedef cudaError_t (*exchange_fn)(int *);
typedef cudaError_t (*err_fn)(void);
static info_fn g_info;
static exchange_fn g_exchange;
static err_fn g_peek, g_get_last;
static int g_resolved;

static void resolve_once(void) {
  if (__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))
    return;
  /* cudaStreamGetCaptureInfo keeps its first three parameters in every
   * CUDA 12 and 13 form; the rest are NULL here. */
  g_info = (info_fn)gt_resolve("cudaStreamGetCaptureInfo");
  g_exchange = (exchange_fn)gt_resolve("cudaThreadExchangeStreamCaptureMode");
  g_peek = (err_fn)gt_resolve("cudaPeekAtLastError");
  g_get_last = (err_fn)gt_resolve("cudaGetLastError");
  __atomic_store_n(&g_resolved, 1, __ATOMIC_RELEASE);
}

/* The stream a call names: stream 0 of a _ptsz entry point is the
 * per-thread stream, of any other the legacy stream. */
uint64_t gt_capture_stream(const void *stream, int ptsz) {
  uintptr_t h = (uintptr_t)stream;
  return h == 0 ? (ptsz ? CAP_PER_THREAD : CAP_LEGACY) : h;
}

/* ---- what other hooks ask ---- */

uint32_t gt_capture_of(const void *stream, int ptsz) {
  uint64_t h = gt_capture_stream(stream, ptsz);
  if (h == CAP_LEGACY)
    return 0;
  resolve_once();
  if (g_info == NULL)
    return 0;
  int saved_errno = errno;
  cudaError_t before = g_peek ? g_peek() : 0;
  int status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaError_t r =
      g_info((cudaStream_t)(uintptr_t)h, &status, &id, NULL, NULL, NULL, NULL);
  if (r != 0 && before == 0 && g_get_last)
    g_get_last();
  errno = saved_errno;
  if (r != 0 || status == cudaStreamCaptureStatusNone)
    return 0;
  return (uint32_t)id != 0 ? (uint32_t)id : UINT32_MAX; /* never 0: "none" */
}

int gt_capture_thread_captures(void) {
  uint32_t tid = gt_current_tid();
  int found = 0;
  pthread_mutex_lock(&g_mu);
  for (unsigned i = 0; i < g_nopen && !found; i++)
    found = g_open[i].tid == tid;
  pthread_mutex_unlock(&g_mu);
  return found;
}

int gt_capture_relax(void) {
  resolve_once();
  if (g_exchange == NULL)
    return -1;
  int mode = cudaStreamCaptureModeRelaxed;
  if (g_exchange(&mode) != 0) {
    if (g_get_last)
      g_get_last(); /* the runtime cannot (no driver): nothing to keep legal */
    return -1;
  }
  return mode;
}

void gt_capture_restore(int prev) {
  if (prev >= 0 && g_exchange != NULL)
    g_exchange(&prev);
}

void gt_capture_after_fork(void) {
  g_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
  g_nopen = g_untracked = g_beginning = 0;
  gt_mode_set(GT_MODE_CAPTURE, 0);
}

/* ---- the table ---- */

/* Caller holds g_mu: the bit follows what is open or about to be. */
static void update_bit_locked(void) {
  gt_mode_set(GT_MODE_CAPTURE, g_nopen + g_untracked + g_beginning != 0);
}

void gt_capture_begin_pending(void) {
  pthread_mutex_lock(&g_mu);
  g_beginning++;
  update_bit_locked();
  pthread_mutex_unlock(&g_mu);
}

static int entry_matches(const struct cap_entry *e, uint64_t stream, uint32_t tid) {
  return e->stream == stream && (stream != CAP_PER_THREAD || e->tid == tid);
}

/* Caller holds g_mu: forget every capture whose origin is `stream` (the
 * per-thread stream: the thread's own); 1 if there was one. */
static int forget_locked(uint64_t stream, uint32_t tid) {
  int found = 0;
  for (unsigned i = 0; i < g_nopen;)
    if (entry_matches(&g_open[i], stream, tid)) {
      g_open[i] = g_open[--g_nopen];
      found = 1;
    } else {
      i++;
    }
  return found;
}

/* After the real BeginCapture: the capture is open (ok) or not. */
void gt_capture_begin_done(uint64_t stream, uint64_t id, int ok) {
  uint32_t tid = gt_current_tid();
  pthread_mutex_lock(&g_mu);
  g_beginning--;
  if (ok)
    forget_locked(stream, tid); /* an entry left from a stream destroyed unseen */
  if (ok && g_nopen < CAP_MAX)
    g_open[g_nopen++] = (struct cap_entry){stream, id, tid};
  else if (ok)
    g_untracked++;
  update_bit_locked();
  pthread_mutex_unlock(&g_mu);
}

/* The capture `stream` is the origin of, 0 if none we know. */
uint64_t gt_capture_open_id(uint64_t stream) {
  uint32_t tid = gt_current_tid();
  uint64_t id = 0;
  pthread_mutex_lock(&g_mu);
  for (unsigned i = 0; i < g_nopen && id == 0; i++)
    if (entry_matches(&g_open[i], stream, tid))
      id = g_open[i].id;
  pthread_mutex_unlock(&g_mu);
  return id;
}

/* 1 when `stream` still captures, asked with the recursion guard held. */
static int still_captures(uint64_t stream) {
  int d = gt_tls_depth;
  gt_tls_depth = d != 0 ? d : 1;
  int on = gt_capture_of((const void *)(uintptr_t)stream, 0) != 0;
  gt_tls_depth = d;
  return on;
}

/* An EndCapture on `stream` returned `r`: its capture (if open) is over,
 * unless the call failed and the stream still captures (then 0). */
int gt_capture_end(uint64_t stream, int r) {
  if (r != 0 && still_captures(stream))
    return 0;
  uint32_t tid = gt_current_tid();
  pthread_mutex_lock(&g_mu);
  unsigned i = 0;
  while (i < g_nopen && !entry_matches(&g_open[i], stream, tid))
    i++;
  if (i < g_nopen)
    g_open[i] = g_open[--g_nopen];
  else if (g_untracked > 0)
    g_untracked--;
  update_bit_locked();
  pthread_mutex_unlock(&g_mu);
  return 1;
}

void gt_capture_stream_destroyed(const void *stream) {
  if (!(gt_mode_now() & GT_MODE_CAPTURE) || stream == NULL)
    return; /* no capture open: the table is empty (the usual case, no lock) */
  uint32_t tid = gt_current_tid();
  pthread_mutex_lock(&g_mu);
  if (forget_locked((uint64_t)(uintptr_t)stream, tid))
    update_bit_locked();
  pthread_mutex_unlock(&g_mu);
}

void gt_capture_reset(void) {
  pthread_mutex_lock(&g_mu);
  g_nopen = g_untracked = 0;
  update_bit_locked(); /* a BeginCapture under way keeps it up */
  pthread_mutex_unlock(&g_mu);
}

/* ---- the hooks ---- */

void gt_capture_emit(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                     uint64_t stream, uint64_t id, uint64_t graph, uint32_t mode) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r); /* a BeginCapture's stack: GT_AF_STACK */
  rec.u.graph.stream = stream;
  rec.u.graph.capture = id;
  rec.u.graph.graph = graph;
  rec.u.graph.mode = mode;
  gt_emit(&rec);
}

/* The capture hooks: GT_HOOK_* define the hooks they are given (macros:
 * shim.h), one per twin. */
#define GT_HOOK_BEGIN_CAPTURE(name, ptsz)                                                \
  GT_EXPORT cudaError_t name(cudaStream_t stream, enum cudaStreamCaptureMode mode) {     \
    GT_REAL(name);                                                                       \
    GT_BEGIN_CAPTURE(GT_API_##name, real_##name(stream, mode), stream, ptsz, 0, mode);   \
  }
GT_HOOK_BEGIN_CAPTURE(cudaStreamBeginCapture, 0)
GT_HOOK_BEGIN_CAPTURE(cudaStreamBeginCapture_ptsz, 1)

#define GT_HOOK_BEGIN_CAPTURE_TO_GRAPH(name, ptsz)                                       \
  GT_EXPORT cudaError_t name(                                                            \
      cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,               \
      const cudaGraphEdgeData *edges, size_t n, enum cudaStreamCaptureMode mode) {       \
    GT_REAL(name);                                                                       \
    GT_BEGIN_CAPTURE(GT_API_##name, real_##name(stream, graph, deps, edges, n, mode),    \
                     stream, ptsz, graph, mode);                                         \
  }
GT_HOOK_BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph, 0)
GT_HOOK_BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph_ptsz, 1)

#define GT_HOOK_END_CAPTURE(name, ptsz)                                                  \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaGraph_t *graph) {                  \
    GT_REAL(name);                                                                       \
    GT_END_CAPTURE(GT_API_##name, real_##name(stream, graph), stream, ptsz, graph);      \
  }
GT_HOOK_END_CAPTURE(cudaStreamEndCapture, 0)
GT_HOOK_END_CAPTURE(cudaStreamEndCapture_ptsz, 1)
