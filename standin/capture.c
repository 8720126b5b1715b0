/* capture.c — stream capture: capture sequences, the rules on potentially
 * unsafe calls during capture, and the capture side of stream operations.
 *
 * Contract (the rules of the CUDA runtime documentation, as strictly as it
 * states them: a stand-in more lenient than CUDA hides bugs):
 *  - cudaStreamBeginCapture(ToGraph)(_ptsz) starts a capture sequence on a
 *    stream: a unique id (1, 2, 3, ... never reused), its mode (global,
 *    thread-local, relaxed), the thread that began it and the graph it
 *    builds (new, or the one given). The legacy stream cannot capture
 *    (cudaErrorStreamCaptureUnsupported); a stream already capturing gives
 *    cudaErrorIllegalState.
 *  - While a stream captures, its operations are checked as eagerly and
 *    become nodes (si_cap_op), depending on the stream's dependency set,
 *    which then becomes the new node: they take no simulated time and
 *    move no bytes. cudaEventRecord in a capturing stream records the
 *    stream's dependency set in the event (a node only with
 *    cudaEventRecordExternal); cudaStreamWaitEvent on such an event joins
 *    the waiting stream into that capture (same id) or, if it already takes
 *    part, adds the set to its dependencies; waiting on an event recorded
 *    outside the capture is cudaErrorStreamCaptureIsolation (a wait node
 *    with cudaEventWaitExternal), on another active capture's event
 *    cudaErrorStreamCaptureMerge; a capturing stream cannot be synchronized
 *    or queried and operations that cannot be captured are refused
 *    (cudaErrorStreamCaptureUnsupported); all of these invalidate the
 *    capture. Operations on a stream of an invalidated capture give
 *    cudaErrorStreamCaptureInvalidated. A call with wrong arguments fails
 *    as the eager call does and leaves the capture alone.
 *  - An event whose last record was in a capture never ran: querying,
 *    synchronizing or timing it is cudaErrorCapturedEvent
 *    (streams_events.c), as is a wait on it once its capture ended.
 *  - The legacy stream while a blocking stream takes part in a capture:
 *    every operation on it fails with cudaErrorStreamCaptureImplicit and
 *    invalidates those captures; cudaStreamIsCapturing and
 *    cudaStreamGetCaptureInfo on it return that error without invalidating.
 *  - Potentially unsafe calls (si_cap_unsafe: cudaEventQuery/Synchronize,
 *    cudaStreamQuery/Synchronize, cudaDeviceSynchronize, cudaDeviceReset,
 *    cudaMalloc and its kin, cudaFree(Host), the synchronous copies and
 *    memsets) are prohibited for a thread whose mode
 *    (cudaThreadExchangeStreamCaptureMode, default global) is global while
 *    any other thread has a capture begun in global mode, and for a
 *    global or thread-local thread that has its own capture not begun in
 *    relaxed mode. A relaxed thread is never prohibited. A prohibited call
 *    returns cudaErrorStreamCaptureUnsupported, does nothing else, and
 *    invalidates the captures that prohibit it.
 *  - cudaStreamEndCapture(_ptsz) on the origin stream only
 *    (cudaErrorStreamCaptureUnmatched on another stream of the capture,
 *    which invalidates it; cudaErrorIllegalState if not capturing), from
 *    the origin thread unless relaxed (cudaErrorStreamCaptureWrongThread),
 *    ends the capture on every stream that joined it. It returns
 *    cudaErrorStreamCaptureInvalidated with a NULL graph for an invalidated
 *    capture, cudaErrorStreamCaptureUnjoined with a NULL graph when a node
 *    the capture added is not an ancestor of (or one of) the origin
 *    stream's final dependencies (a forked stream not joined back); a
 *    graph made by cudaStreamBeginCapture is destroyed then.
 *  - Destroying a capture's origin stream ends the capture (its graph
 *    destroyed); destroying a joined stream leaves it.
 *  - One lock (graph.c's) guards all of it; si_cap_count lets every other
 *    path skip it with one relaxed load when no capture exists.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"

struct si_capture {
  uint64_t id;
  enum cudaStreamCaptureMode mode;
  int invalidated;
  int own_graph; /* made by cudaStreamBeginCapture (destroyed on failure) */
  const void *thread;
  struct si_stream *origin;
  struct si_graph *graph;
  unsigned nblocking; /* blocking streams that joined (the origin included) */
  struct si_capture *next;
};

int si_cap_count;
static struct si_capture *captures; /* active (not ended), graph lock */
static uint64_t next_cap_id = 1;
static _Thread_local char tl_self; /* its address names the thread */
static _Thread_local enum cudaStreamCaptureMode tl_mode; /* 0: global */

/* ---- state (graph lock held) --------------------------------------------------- */

static struct si_capture *cap_find(uint64_t id) {
  for (struct si_capture *c = captures; c != NULL; c = c->next)
    if (c->id == id)
      return c;
  return NULL;
}

/* The active capture s takes part in, or NULL (then s is reset). */
static struct si_capture *stream_cap(struct si_stream *s) {
  if (s->cap_id == 0)
    return NULL;
  struct si_capture *c = cap_find(s->cap_id);
  if (c == NULL) { /* its capture ended */
    s->cap_id = 0;
    s->ndeps = 0;
  }
  return c;
}

static int blocking_capture(void) {
  for (struct si_capture *c = captures; c != NULL; c = c->next)
    if (c->nblocking != 0)
      return 1;
  return 0;
}

static void invalidate_blocking(void) {
  for (struct si_capture *c = captures; c != NULL; c = c->next)
    if (c->nblocking != 0)
      c->invalidated = 1;
}

static int deps_set(struct si_stream *s, struct si_node *const *d, size_t n) {
  if (n > s->deps_cap) {
    struct si_node **p = realloc(s->deps, n * sizeof(*p));
    if (p == NULL)
      return -1;
    s->deps = p;
    s->deps_cap = n;
  }
  if (n != 0)
    memmove(s->deps, d, n * sizeof(*d));
  s->ndeps = n;
  return 0;
}

/* s's dependencies plus d[0..n) (each once). */
static int deps_add(struct si_stream *s, struct si_node *const *d, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < s->ndeps && s->deps[k] != d[i])
      k++;
    if (k < s->ndeps)
      continue;
    if (s->ndeps == s->deps_cap) {
      size_t cap = s->deps_cap ? 2 * s->deps_cap : 4;
      struct si_node **p = realloc(s->deps, cap * sizeof(*p));
      if (p == NULL)
        return -1;
      s->deps = p;
      s->deps_cap = cap;
    }
    s->deps[s->ndeps++] = d[i];
  }
  return 0;
}

/* End capture c (unlinked, counted down, freed); its graph stays unless
 * destroy is set. */
static void cap_end(struct si_capture *c, int destroy) {
  struct si_capture **pp = &captures;
  while (*pp != c)
    pp = &(*pp)->next;
  *pp = c->next;
  __atomic_fetch_sub(&si_cap_count, 1, __ATOMIC_RELAXED);
  si_graph_set_capturing(c->graph, 0);
  if (destroy)
    si_graph_free_locked(c->graph);
  free(c);
}

/* Add d as a node of c's graph after s's dependencies; s then depends on it. */
static cudaError_t cap_add(struct si_capture *c, struct si_stream *s,
                           struct si_node_desc *d) {
  uint64_t gid = si_graph_id(c->graph);
  if (d->type == cudaGraphNodeTypeMemAlloc) {
    cudaError_t e = si_mem_graph_reserve(&d->u.mem.ptr, d->u.mem.bytes, gid);
    if (e != cudaSuccess)
      return e;
  } else if (d->type == cudaGraphNodeTypeMemFree) {
    /* must name a graph allocation (documented), freed once per graph */
    if (si_graph_frees_locked(c->graph, d->u.mem.ptr))
      return cudaErrorInvalidValue;
    cudaError_t e = si_mem_graph_free_check(d->u.mem.ptr, gid);
    if (e != cudaSuccess)
      return e;
  }
  struct si_node *n = si_graph_add_locked(c->graph, d, s->deps, s->ndeps);
  if (n == NULL || deps_set(s, &n, 1) != 0) {
    if (n == NULL && d->type == cudaGraphNodeTypeMemAlloc)
      si_mem_graph_ref(d->u.mem.ptr, 0); /* release the reservation */
    return cudaErrorMemoryAllocation;
  }
  si_node_set_capture(n, c->id);
  return cudaSuccess;
}

/* ---- what other files call --------------------------------------------------------- */

cudaError_t si_cap_unsafe(void) {
  int prohibited = 0;
  enum cudaStreamCaptureMode mode = tl_mode;
  if (mode == cudaStreamCaptureModeRelaxed)
    return cudaSuccess;
  si_graph_lock();
  for (struct si_capture *c = captures; c != NULL; c = c->next) {
    int mine = c->thread == &tl_self;
    if ((mine && c->mode != cudaStreamCaptureModeRelaxed) ||
        (!mine && c->mode == cudaStreamCaptureModeGlobal &&
         mode == cudaStreamCaptureModeGlobal)) {
      c->invalidated = 1;
      prohibited = 1;
    }
  }
  si_graph_unlock();
  return prohibited ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

cudaError_t si_cap_op(struct si_stream *s, struct si_node_desc *d, cudaError_t refuse,
                      int *captured) {
  cudaError_t e = cudaSuccess;
  *captured = 0;
  si_graph_lock();
  if (s->kind == SI_STREAM_LEGACY) {
    if (blocking_capture()) {
      invalidate_blocking();
      e = cudaErrorStreamCaptureImplicit;
    }
  } else {
    struct si_capture *c = stream_cap(s);
    if (c != NULL) {
      if (c->invalidated) {
        e = cudaErrorStreamCaptureInvalidated;
      } else if (d == NULL) {
        c->invalidated = 1;
        e = refuse;
      } else {
        e = cap_add(c, s, d);
        *captured = e == cudaSuccess;
      }
    }
  }
  si_graph_unlock();
  return e;
}

cudaError_t si_cap_event_record(struct si_event *e, struct si_stream *s, unsigned flags,
                                int *handled) {
  cudaError_t err = cudaSuccess;
  *handled = 0;
  si_graph_lock();
  struct si_capture *c = s->kind == SI_STREAM_LEGACY ? NULL : stream_cap(s);
  if (s->kind == SI_STREAM_LEGACY && blocking_capture()) {
    invalidate_blocking();
    err = cudaErrorStreamCaptureImplicit;
    *handled = 1;
  } else if (c != NULL) {
    *handled = 1;
    if (c->invalidated) {
      err = cudaErrorStreamCaptureInvalidated;
    } else {
      if (flags & cudaEventRecordExternal) { /* an event record node */
        struct si_node_desc d = {.type = cudaGraphNodeTypeEventRecord,
                                 .u.ev = (cudaEvent_t)e};
        err = cap_add(c, s, &d);
      }
      struct si_node **deps = NULL;
      if (err == cudaSuccess && s->ndeps != 0) {
        deps = malloc(s->ndeps * sizeof(*deps));
        if (deps == NULL)
          err = cudaErrorMemoryAllocation;
        else
          memcpy(deps, s->deps, s->ndeps * sizeof(*deps));
      }
      if (err == cudaSuccess) {
        free(e->cap_deps);
        e->cap_deps = deps;
        e->cap_ndeps = s->ndeps;
        __atomic_store_n(&e->cap_id, c->id, __ATOMIC_RELEASE);
      }
    }
  }
  si_graph_unlock();
  return err;
}

cudaError_t si_cap_wait_event(struct si_stream *s, struct si_event *e, unsigned flags,
                              int *handled) {
  cudaError_t err = cudaSuccess;
  *handled = 1;
  si_graph_lock();
  uint64_t eid = __atomic_load_n(&e->cap_id, __ATOMIC_ACQUIRE);
  struct si_capture *ce = eid ? cap_find(eid) : NULL; /* the event's capture, if active */
  struct si_capture *c = s->kind == SI_STREAM_LEGACY ? NULL : stream_cap(s);
  if (s->kind == SI_STREAM_LEGACY && blocking_capture()) {
    invalidate_blocking();
    err = cudaErrorStreamCaptureImplicit;
  } else if (s->kind == SI_STREAM_LEGACY && ce != NULL) {
    ce->invalidated = 1; /* the legacy stream cannot join a capture */
    err = cudaErrorStreamCaptureUnsupported;
  } else if (c != NULL) { /* s captures */
    if (c->invalidated) {
      err = cudaErrorStreamCaptureInvalidated;
    } else if (ce == c) { /* join: depend on what the event recorded */
      if (deps_add(s, e->cap_deps, e->cap_ndeps) != 0)
        err = cudaErrorMemoryAllocation;
    } else if (eid == 0 && (flags & cudaEventWaitExternal)) { /* a wait node */
      struct si_node_desc d = {.type = cudaGraphNodeTypeWaitEvent,
                               .u.ev = (cudaEvent_t)e};
      err = cap_add(c, s, &d);
    } else if (eid == 0 && si_event_ts(e) == 0) {
      /* never recorded: nothing to wait for */
    } else {
      c->invalidated = 1;
      if (ce != NULL) {
        ce->invalidated = 1;
        err = cudaErrorStreamCaptureMerge;
      } else {
        err = eid ? cudaErrorCapturedEvent : cudaErrorStreamCaptureIsolation;
      }
    }
  } else if (eid != 0) { /* s does not capture; the event was recorded in one */
    if (ce == NULL) {
      err = cudaErrorCapturedEvent; /* that capture ended: never on the timeline */
    } else if (ce->invalidated) {
      err = cudaErrorStreamCaptureInvalidated;
    } else if (deps_set(s, e->cap_deps, e->cap_ndeps) != 0) {
      err = cudaErrorMemoryAllocation;
    } else { /* s joins the capture */
      s->cap_id = ce->id;
      ce->nblocking += s->blocking;
    }
  } else {
    *handled = 0; /* an eager wait */
  }
  si_graph_unlock();
  return err;
}

void si_cap_stream_destroy(struct si_stream *s) {
  if (!si_cap_any() && s->deps == NULL && s->edata == NULL)
    return; /* never took part in a capture: no lock */
  si_graph_lock();
  struct si_capture *c = stream_cap(s);
  if (c != NULL && c->origin == s)
    cap_end(c, c->own_graph);
  else if (c != NULL && s->blocking && c->nblocking != 0)
    c->nblocking--;
  free(s->deps);
  free(s->edata);
  s->deps = NULL;
  s->edata = NULL;
  s->cap_id = 0;
  s->ndeps = s->deps_cap = s->edata_cap = 0;
  si_graph_unlock();
}

void si_cap_event_destroy(struct si_event *e) {
  if (e->cap_deps == NULL)
    return; /* never recorded a capture's dependencies: no lock */
  si_graph_lock();
  free(e->cap_deps);
  e->cap_deps = NULL;
  e->cap_ndeps = 0;
  si_graph_unlock();
}

/* Graph lock held (graph.c's reset): every capture ends; their graphs go
 * with the graph pools. */
void si_cap_reset(void) {
  while (captures != NULL) {
    struct si_capture *c = captures;
    captures = c->next;
    free(c);
  }
  __atomic_store_n(&si_cap_count, 0, __ATOMIC_RELAXED);
}

/* ---- the capture API ----------------------------------------------------------------
 */

static int mode_ok(enum cudaStreamCaptureMode m) {
  return m == cudaStreamCaptureModeGlobal || m == cudaStreamCaptureModeThreadLocal ||
         m == cudaStreamCaptureModeRelaxed;
}

static cudaError_t begin_capture(cudaStream_t stream, cudaGraph_t graph,
                                 const cudaGraphNode_t *deps,
                                 const cudaGraphEdgeData *edata, size_t ndeps,
                                 enum cudaStreamCaptureMode mode, int into, int pt) {
  if (!mode_ok(mode))
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (s->kind == SI_STREAM_LEGACY)
    return cudaErrorStreamCaptureUnsupported;
  struct si_graph *g = NULL;
  if (into) {
    g = si_graph_resolve(graph);
    if (g == NULL || (ndeps != 0 && deps == NULL))
      return cudaErrorInvalidValue;
    static const cudaGraphEdgeData zero;
    for (size_t i = 0; edata != NULL && i < ndeps; i++)
      if (memcmp(&edata[i], &zero, sizeof(zero)) != 0)
        return cudaErrorInvalidValue; /* only default edges are modelled */
  }
  cudaError_t e = cudaSuccess;
  struct si_capture *c = NULL;
  si_graph_lock();
  if (stream_cap(s) != NULL) {
    e = cudaErrorIllegalState;
    goto out;
  }
  if (into) {
    if (si_graph_capturing(g))
      e = cudaErrorIllegalState;
    for (size_t i = 0; i < ndeps && e == cudaSuccess; i++)
      if (!si_node_in_graph((struct si_node *)deps[i], g))
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
      goto out;
  } else if ((g = si_graph_new_locked()) == NULL) {
    e = cudaErrorMemoryAllocation;
    goto out;
  }
  c = calloc(1, sizeof(*c));
  if (c == NULL || deps_set(s, (struct si_node *const *)deps, into ? ndeps : 0) != 0) {
    if (!into)
      si_graph_free_locked(g);
    free(c);
    e = cudaErrorMemoryAllocation;
    goto out;
  }
  c->id = next_cap_id++;
  c->mode = mode;
  c->own_graph = !into;
  c->thread = &tl_self;
  c->origin = s;
  c->graph = g;
  c->nblocking = s->blocking;
  c->next = captures;
  captures = c;
  si_graph_set_capturing(g, 1);
  s->cap_id = c->id;
  __atomic_fetch_add(&si_cap_count, 1, __ATOMIC_RELAXED);
out:
  si_graph_unlock();
  return e;
}

SI_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                          enum cudaStreamCaptureMode mode) {
  return si_ret(begin_capture(stream, NULL, NULL, NULL, 0, mode, 0, 0));
}

SI_API cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                               enum cudaStreamCaptureMode mode) {
  return si_ret(begin_capture(stream, NULL, NULL, NULL, 0, mode, 0, 1));
}

SI_API cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                 const cudaGraphNode_t *dependencies,
                                                 const cudaGraphEdgeData *dependencyData,
                                                 size_t numDependencies,
                                                 enum cudaStreamCaptureMode mode) {
  return si_ret(begin_capture(stream, graph, dependencies, dependencyData,
                              numDependencies, mode, 1, 0));
}

SI_API cudaError_t cudaStreamBeginCaptureToGraph_ptsz(
    cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *dependencies,
    const cudaGraphEdgeData *dependencyData, size_t numDependencies,
    enum cudaStreamCaptureMode mode) {
  return si_ret(begin_capture(stream, graph, dependencies, dependencyData,
                              numDependencies, mode, 1, 1));
}

static cudaError_t end_capture(cudaStream_t stream, cudaGraph_t *out, int pt) {
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (out == NULL)
    return cudaErrorInvalidValue;
  cudaError_t e = cudaSuccess;
  si_graph_lock();
  struct si_capture *c = s->kind == SI_STREAM_LEGACY ? NULL : stream_cap(s);
  if (c == NULL) {
    e = cudaErrorIllegalState;
  } else if (c->origin != s) { /* not where it began */
    c->invalidated = 1;
    e = cudaErrorStreamCaptureUnmatched;
  } else if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != &tl_self) {
    e = cudaErrorStreamCaptureWrongThread;
  } else {
    struct si_graph *g = c->graph;
    if (c->invalidated)
      e = cudaErrorStreamCaptureInvalidated;
    else if (!si_graph_joined_locked(g, c->id, s->deps, s->ndeps))
      e = cudaErrorStreamCaptureUnjoined;
    cap_end(c, e != cudaSuccess && c->own_graph);
    s->cap_id = 0;
    s->ndeps = 0;
    *out = e == cudaSuccess ? (cudaGraph_t)g : NULL;
  }
  si_graph_unlock();
  return e;
}

SI_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph) {
  return si_ret(end_capture(stream, pGraph, 0));
}

SI_API cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph) {
  return si_ret(end_capture(stream, pGraph, 1));
}

static cudaError_t is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                int pt) {
  if (status == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (!si_cap_any()) { /* the profiler asks at every launch: no lock then */
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  cudaError_t e = cudaSuccess;
  si_graph_lock();
  if (s->kind == SI_STREAM_LEGACY) {
    if (blocking_capture())
      e = cudaErrorStreamCaptureImplicit; /* not invalidated (documented) */
    else
      *status = cudaStreamCaptureStatusNone;
  } else {
    struct si_capture *c = stream_cap(s);
    *status = c == NULL        ? cudaStreamCaptureStatusNone
              : c->invalidated ? cudaStreamCaptureStatusInvalidated
                               : cudaStreamCaptureStatusActive;
  }
  si_graph_unlock();
  return e;
}

SI_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                         enum cudaStreamCaptureStatus *pCaptureStatus) {
  return si_ret(is_capturing(stream, pCaptureStatus, 0));
}

SI_API cudaError_t cudaStreamIsCapturing_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus) {
  return si_ret(is_capturing(stream, pCaptureStatus, 1));
}

cudaError_t si_capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                            unsigned long long *id, cudaGraph_t *graph,
                            const cudaGraphNode_t **deps, const cudaGraphEdgeData **edata,
                            size_t *ndeps, int pt) {
  if (status == NULL || (edata != NULL && deps == NULL))
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  cudaError_t e = cudaSuccess;
  si_graph_lock();
  struct si_capture *c = s->kind == SI_STREAM_LEGACY ? NULL : stream_cap(s);
  if (s->kind == SI_STREAM_LEGACY && blocking_capture()) {
    e = cudaErrorStreamCaptureImplicit;
    goto out;
  }
  *status = c == NULL        ? cudaStreamCaptureStatusNone
            : c->invalidated ? cudaStreamCaptureStatusInvalidated
                             : cudaStreamCaptureStatusActive;
  int active = c != NULL && !c->invalidated;
  if (active && edata != NULL && s->ndeps > s->edata_cap) { /* all default edges */
    cudaGraphEdgeData *p = realloc(s->edata, s->ndeps * sizeof(*p));
    if (p == NULL) {
      e = cudaErrorMemoryAllocation;
      goto out;
    }
    s->edata = p;
    s->edata_cap = s->ndeps;
  }
  if (active && edata != NULL && s->ndeps != 0)
    memset(s->edata, 0, s->ndeps * sizeof(*s->edata));
  if (id != NULL)
    *id = c != NULL ? c->id : 0;
  if (graph != NULL)
    *graph = active ? (cudaGraph_t)c->graph : NULL;
  if (deps != NULL)
    *deps = active ? (const cudaGraphNode_t *)s->deps : NULL;
  if (edata != NULL)
    *edata = active ? s->edata : NULL;
  if (ndeps != NULL)
    *ndeps = active ? s->ndeps : 0;
out:
  si_graph_unlock();
  return e;
}

#if SI_CUDART_MAJOR >= 13 /* CUDA 12's take fewer arguments (compat12.c) */
SI_API cudaError_t cudaStreamGetCaptureInfo(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out,
    size_t *numDependencies_out) {
  return si_ret(si_capture_info(stream, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out, 0));
}

SI_API cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out,
    const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out,
    size_t *numDependencies_out) {
  return si_ret(si_capture_info(stream, captureStatus_out, id_out, graph_out,
                                dependencies_out, edgeData_out, numDependencies_out, 1));
}
#endif

SI_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  if (mode == NULL || !mode_ok(*mode))
    return si_ret(cudaErrorInvalidValue);
  enum cudaStreamCaptureMode old = tl_mode;
  tl_mode = *mode;
  *mode = old;
  return si_ret(cudaSuccess);
}
