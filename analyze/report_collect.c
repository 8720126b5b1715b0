/* report_collect.c — the streaming pass of `gputrace report` (see report.h).
 *
 * Every record goes through the shared gt_model first (kernel names,
 * allocation matching, NVTX ranges), then, if it is in scope (--pid, and
 * --from/--to by its start time), into the aggregates: per API, per kernel,
 * per transfer direction, per sync API, per range name, and the time
 * partition of each host thread (launch / copy / kernel / sync / api / idle).
 *
 * The time partition needs to know what a blocked host was waiting for.
 * Each process keeps, per stream, the work queued and not yet waited for
 * (estimated copy time, kernels). A blocking call (a synchronize, a
 * synchronous or pageable copy, a memset of host memory) drains what it
 * waits for and splits its duration by rp_cpu_split: copies get their
 * estimated time, queued kernels the rest. The first RP_UNDECIDED_MAX
 * blocking calls, and every one after a DEVICE record was seen, are kept
 * instead and split at the end by measured device intervals
 * (report_device.c): device-timing sources write DEVICE records after the
 * work ran, so the first synchronizes come before the first of them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "gputrace/protocol.h"
#include "graphs.h"
#include "progress.h"
#include "report.h"
#include "session.h"
#include "util.h"

#define PER_THREAD_STREAM (1ull << 63) /* stream key of a per-thread default stream */
#define SCOPE_ALL UINT64_MAX           /* a call that waits for every stream */

/* ---- processes, threads, streams ---- */

static struct rp_thread *thread_add(struct report *r, uint32_t pid, uint32_t tid) {
  size_t proc = (size_t)(rp_proc_of(r, pid) - r->procs), i;
  int added;
  r->threads = gt_find_or_add(&r->thread_idx, gt_pid_key(pid, tid), r->threads,
                              &r->nthreads, &r->cthreads, sizeof *r->threads, &i, &added);
  if (added)
    r->threads[i] = (struct rp_thread){.pid = pid, .tid = tid, .proc = proc};
  r->thread_cache[(tid ^ pid) & 63] = (uint32_t)i + 1;
  return &r->threads[i];
}

/* A few threads make most calls: a small cache before the map, inline (it
 * runs for most records: docs/PERFORMANCE.md, Figures moved out of code
 * comments). */
static inline struct rp_thread *thread_of(struct report *r, uint32_t pid, uint32_t tid) {
  uint32_t slot = r->thread_cache[(tid ^ pid) & 63];
  if (slot && r->threads[slot - 1].tid == tid && r->threads[slot - 1].pid == pid)
    return &r->threads[slot - 1];
  return thread_add(r, pid, tid);
}

static uint64_t stream_key(unsigned api, uint64_t stream, uint32_t tid) {
  if (stream == 2 || (stream == 0 && api < GT_API_COUNT && gt_apis[api].per_thread))
    return PER_THREAD_STREAM | tid;
  return stream == 1 ? 0 : stream; /* cudaStreamLegacy is stream 0 */
}

static struct rp_stream *stream_of(struct report *r, struct rp_proc *p, uint64_t key) {
  uint64_t mk = gt_pid_key(p->pid, key ^ 0x5bd1e995ull);
  size_t idx;
  struct rp_thread *t = r->cur; /* a thread mostly queues on one stream */
  if (t && t->last_stream == mk + 1) {
    idx = t->last_stream_idx;
  } else {
    int added;
    r->streams = gt_find_or_add(&r->stream_idx, mk, r->streams, &r->nstreams,
                                &r->cstreams, sizeof *r->streams, &idx, &added);
    if (added)
      r->streams[idx].epoch = p->epoch;
  }
  if (t) {
    t->last_stream = mk + 1;
    t->last_stream_idx = idx;
  }
  struct rp_stream *s = &r->streams[idx];
  if (s->epoch != p->epoch) { /* a wait for every stream came since */
    memset(&s->pend, 0, sizeof s->pend);
    s->epoch = p->epoch;
  }
  return s;
}

/* ---- the CPU-side device model: queue, drain, idle gaps ---- */

static void gap_end(struct rp_proc *p, uint64_t now) {
  if (p->idle_since && now > p->idle_since && now - p->idle_since >= RP_GAP_NS) {
    uint64_t g = now - p->idle_since;
    p->gaps.count++;
    p->gaps.total_ns += g;
    if (g > p->gaps.max_ns) {
      p->gaps.max_ns = g;
      p->gaps.max_at = p->idle_since;
    }
  }
  p->idle_since = 0;
}

static void queue_work(struct report *r, struct rp_proc *p, uint64_t key, uint64_t est,
                       int kernel, uint64_t now) {
  if (p->pend.ops == 0)
    gap_end(p, now);
  struct rp_stream *s = stream_of(r, p, key);
  s->pend.copy_est_ns += kernel ? 0 : est;
  s->pend.kernels += kernel != 0;
  s->pend.ops++;
  p->pend.copy_est_ns += kernel ? 0 : est;
  p->pend.kernels += kernel != 0;
  p->pend.ops++;
}

static uint64_t sub(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

/* Work a call waits for: everything (SCOPE_ALL) or one stream. Returns what
 * was pending and forgets it. */
static struct rp_pending drain(struct report *r, struct rp_proc *p, uint64_t scope) {
  struct rp_pending got;
  if (scope == SCOPE_ALL || scope == 0) { /* the legacy stream waits for all */
    got = p->pend;
    memset(&p->pend, 0, sizeof p->pend);
    p->epoch++;
    return got;
  }
  struct rp_stream *s = stream_of(r, p, scope);
  got = s->pend;
  p->pend.copy_est_ns = sub(p->pend.copy_est_ns, got.copy_est_ns);
  p->pend.kernels = sub(p->pend.kernels, got.kernels);
  p->pend.ops = sub(p->pend.ops, got.ops);
  memset(&s->pend, 0, sizeof s->pend);
  return got;
}

static uint64_t copy_estimate(uint64_t bytes, unsigned dir, int pinned) {
  uint64_t bpns = dir == GT_DIR_DTOD || dir == GT_DIR_PEER ? RP_DTOD_BPNS
                  : pinned                                 ? RP_PINNED_BPNS
                                                           : RP_PAGEABLE_BPNS;
  return dir == GT_DIR_HTOH ? 0 : RP_COPY_LATENCY_NS + bytes / bpns;
}

/* A call the host waited in: split it now (CPU-side model) or keep it for
 * the device pass. */
static void blocked(struct report *r, struct rp_proc *p, const struct gt_record *rec,
                    uint64_t own_est, int copy_call, uint64_t scope) {
  if (p->pend.ops == 0 && copy_call)
    gap_end(p, rec->ts_ns); /* the device was idle until this copy */
  struct rp_pending w = drain(r, p, scope);
  unsigned flags = (copy_call ? RP_BL_COPYCALL : 0) |
                   (w.kernels ? RP_BL_PEND_KERNELS : 0) |
                   (w.ops > w.kernels ? RP_BL_PEND_COPIES : 0);
  uint64_t est = own_est + w.copy_est_ns;
  RP_SHARE(r, r->cur_req, blocked, rec->dur_ns);
  if (r->device_active == 0 && ++r->undecided > RP_UNDECIDED_MAX) {
    /* No DEVICE record by now: a CPU-side trace. Split what was kept and
     * stop keeping (memory stays bounded). */
    for (size_t i = 0; i < r->nprocs; i++)
      rp_attribute_blocked(r, &r->procs[i]);
    r->device_active = -1;
  }
  if (r->device_active >= 0) {
    p->bl = gt_grow(p->bl, &p->capbl, p->nbl + 1, sizeof *p->bl);
    p->bl[p->nbl++] =
        (struct rp_blocked){rec->ts_ns, rec->ts_ns + rec->dur_ns, est,
                            rec->api,   (uint8_t)flags,           r->cur_req_idx};
  } else {
    uint64_t k, c, s;
    rp_cpu_split(rec->dur_ns, est, flags, &k, &c, &s);
    RP_SHARE(r, r->cur_req, kernel, k);
    RP_SHARE(r, r->cur_req, copy, c);
    RP_SHARE(r, r->cur_req, sync, s);
    if (rp_is_sync_api(rec->api)) {
      r->sync[rec->api].kernel_ns += k;
      r->sync[rec->api].copy_ns += c;
      r->sync[rec->api].sync_ns += s;
    }
  }
  if (p->pend.ops == 0)
    p->idle_since = rec->ts_ns + rec->dur_ns;
}

static void site(struct report *r, int which, const struct gt_record *rec) {
  if (!rec->stack_id)
    return;
  uint64_t key = (uint64_t)rec->pid << 32 | rec->stack_id, n = 0;
  gt_map_get(&r->sites[which], key, &n);
  gt_map_put(&r->sites[which], key, n + 1);
}

/* ---- per kind ---- */

static size_t kernel_index(struct report *r, uint32_t pid, uint64_t stub,
                           const struct gt_record *launch) {
  uint64_t key = gt_pid_key(pid, stub), v;
  /* Multiplicative: stubs a few cache lines apart must not share the low
   * bits' slots (docs/PERFORMANCE.md, One session for every command). */
  unsigned slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 56);
  if (r->kc_key[slot] == key + 1)
    return r->kc_idx[slot];
  if (gt_map_get(&r->kcache, key, &v)) {
    r->kc_key[slot] = key + 1;
    r->kc_idx[slot] = (uint32_t)(v - 1);
    return (size_t)v - 1;
  }
  /* A DEVICE record (no launch): the name its launch would have. */
  size_t idx = gt_strtab_intern(
      &r->knames, gt_model_kernel_of(r->model, pid, stub, launch ? launch->flags : 0));
  if (idx >= r->kcap) {
    size_t old = r->kcap;
    r->kern = gt_grow(r->kern, &r->kcap, idx + 1, sizeof *r->kern);
    memset(r->kern + old, 0, (r->kcap - old) * sizeof *r->kern);
  }
  gt_map_put(&r->kcache, key, idx + 1);
  if (launch && (launch->flags & GT_F_HOST_FN) && !r->kern[idx].fn_addr) {
    r->kern[idx].fn_pid = pid;
    r->kern[idx].fn_addr = stub;
  }
  return idx;
}

static void on_launch(struct report *r, struct rp_thread *t, struct rp_proc *p,
                      const struct gt_record *rec) {
  if (!(rec->flags & GT_F_EXPANDED)) { /* an expanded graph's kernels count */
    size_t ki = kernel_index(r, rec->pid, rec->u.launch.kernel, rec); /* moves r->kern */
    struct rp_kernel *k = &r->kern[ki];
    k->launches++;
    k->cpu_ns += rec->dur_ns;
  }
  RP_SHARE(r, r->cur_req, launch, rec->dur_ns);
  t->c.launches++;
  p->c.launches++;
  if (t->pending_launch)
    r->rs.unsynced_launches++;
  t->pending_launch = 1;
  if (rec->result == 0 && !(rec->flags & GT_F_HOST_FN))
    queue_work(r, p, stream_key(rec->api, rec->u.launch.stream, rec->tid), 0, 1,
               rec->ts_ns);
}

static int blocking_copy(const struct gt_record *rec) {
  unsigned dir = rec->u.copy.dir;
  if (dir == GT_DIR_HTOH || dir == GT_DIR_DTOD || dir == GT_DIR_PEER)
    return 0; /* host-only, or asynchronous to the host */
  return !(rec->flags & GT_F_ASYNC) || (rec->flags & GT_F_PAGEABLE);
}

/* A pageable copy made in a request: its type's figures and sites. */
static void req_pageable(struct rp_req *q, const struct gt_record *rec) {
  q->pageable_n++;
  q->pageable_ns += rec->dur_ns;
  if (!rec->stack_id)
    return;
  int i = 0;
  while (i < RP_REQ_SITES && q->sites[i].ns &&
         !(q->sites[i].pid == rec->pid && q->sites[i].stack == rec->stack_id))
    i++;
  if (i == RP_REQ_SITES)
    return; /* a fifth site: the first four are kept */
  q->sites[i].pid = rec->pid;
  q->sites[i].stack = rec->stack_id;
  q->sites[i].ns += rec->dur_ns;
}

static void copy_rules(struct report *r, const struct gt_record *rec) {
  unsigned dir = rec->u.copy.dir;
  uint64_t b = rec->u.copy.bytes;
  /* Pageable host memory, except synchronous host-to-device copies of 64 KB
   * or less: the runtime stages those and returns early (as nsys skips them). */
  int staged = !(rec->flags & GT_F_ASYNC) && dir == GT_DIR_HTOD && b <= 65536;
  if ((rec->flags & GT_F_PAGEABLE) && (dir == GT_DIR_HTOD || dir == GT_DIR_DTOH) &&
      !staged) {
    r->rs.pageable_n++;
    r->rs.pageable_async += (rec->flags & GT_F_ASYNC) != 0;
    r->rs.pageable_ns += rec->dur_ns;
    r->rs.pageable_bytes += b;
    site(r, RP_SITE_PAGEABLE, rec);
    if (r->cur_req)
      req_pageable(r->cur_req, rec);
  }
  /* Like nsys cuda_memcpy_sync: host<->device copies that block, except
   * host-to-device ones of 64 KB or less (staged and returned early). */
  if (!(rec->flags & GT_F_ASYNC) && ((dir == GT_DIR_HTOD && b > 65536) ||
                                     dir == GT_DIR_DTOH || dir == GT_DIR_DEFAULT)) {
    r->rs.sync_copy_n++;
    r->rs.sync_copy_ns += rec->dur_ns;
    r->rs.sync_copy_bytes += b;
    site(r, RP_SITE_SYNC_COPY, rec);
  }
}

static void on_copy(struct report *r, struct rp_thread *t, struct rp_proc *p,
                    const struct gt_record *rec) {
  unsigned dir = rec->u.copy.dir < RP_XFER_MEMSET ? rec->u.copy.dir : GT_DIR_DEFAULT;
  struct rp_xfer *x = &r->xfer[dir];
  uint64_t b = rec->u.copy.bytes;
  x->count++;
  x->done += rec->result == 0;
  x->bytes += b;
  x->host_ns += rec->dur_ns;
  x->pageable += (rec->flags & GT_F_PAGEABLE) != 0;
  x->async += (rec->flags & GT_F_ASYNC) != 0;
  x->small += b < RP_SMALL_BYTES;
  t->c.bytes += b;
  p->c.bytes += b;
  copy_rules(r, rec);
  uint64_t est = copy_estimate(b, dir, (rec->flags & GT_F_PINNED) != 0);
  if (rec->result != 0 || dir == GT_DIR_HTOH) {
    RP_SHARE(r, r->cur_req, copy, rec->dur_ns);
  } else if (blocking_copy(rec)) {
    x->blocking++;
    x->blocking_bytes += b;
    x->blocking_ns += rec->dur_ns;
    uint64_t scope = rec->flags & GT_F_ASYNC
                         ? stream_key(rec->api, rec->u.copy.stream, rec->tid)
                         : SCOPE_ALL;
    blocked(r, p, rec, est, 1, scope);
  } else {
    RP_SHARE(r, r->cur_req, copy, rec->dur_ns);
    queue_work(r, p, stream_key(rec->api, rec->u.copy.stream, rec->tid), est, 0,
               rec->ts_ns);
  }
}

static void on_memset(struct report *r, struct rp_proc *p, const struct gt_record *rec) {
  struct rp_xfer *x = &r->xfer[RP_XFER_MEMSET];
  uint64_t b = rec->u.set.bytes;
  x->count++;
  x->done += rec->result == 0;
  x->bytes += b;
  x->host_ns += rec->dur_ns;
  x->async += (rec->flags & GT_F_ASYNC) != 0;
  x->small += b < RP_SMALL_BYTES;
  uint64_t est = RP_COPY_LATENCY_NS + b / RP_MEMSET_BPNS;
  unsigned mem = gt_model_alloc_memory(r->model, rec->pid, rec->u.set.ptr);
  /* A synchronous memset of pinned or managed memory blocks the host (nsys
   * cuda_memset_sync); of device memory it does not. */
  int blocks =
      !(rec->flags & GT_F_ASYNC) && (mem == GT_MEM_PINNED_HOST || mem == GT_MEM_MANAGED);
  if (rec->result != 0) {
    RP_SHARE(r, r->cur_req, copy, rec->dur_ns);
  } else if (blocks) {
    x->blocking++;
    x->blocking_bytes += b;
    x->blocking_ns += rec->dur_ns;
    r->rs.sync_set_n++;
    r->rs.sync_set_ns += rec->dur_ns;
    blocked(r, p, rec, est, 1, SCOPE_ALL);
  } else {
    RP_SHARE(r, r->cur_req, copy, rec->dur_ns);
    queue_work(r, p, stream_key(rec->api, rec->u.set.stream, rec->tid), est, 0,
               rec->ts_ns);
  }
}

static uint64_t event_scope(struct report *r, const struct gt_record *rec, int *known) {
  uint64_t key;
  *known = gt_map_get(&r->event_stream, gt_pid_key(rec->pid, rec->u.handle.handle), &key);
  return *known ? key : 0;
}

static void on_sync(struct report *r, struct rp_thread *t, struct rp_proc *p,
                    const struct gt_record *rec) {
  unsigned api = rec->api;
  int known = 1;
  uint64_t scope = SCOPE_ALL;
  struct rp_sync *s = &r->sync[api];
  s->calls++;
  s->total_ns += rec->dur_ns;
  if (rec->dur_ns > s->max_ns)
    s->max_ns = rec->dur_ns;
  unsigned fl = gt_api_flags(api);
  if (!(fl & GT_AF_BLOCKING)) { /* queries and stream waits never block */
    RP_SHARE(r, r->cur_req, sync, rec->dur_ns);
    s->sync_ns += rec->dur_ns;
    if (rec->result != 0 || !(fl & GT_AF_QUERY))
      return; /* a stream wait orders work on the device: nothing is done */
    if (fl & GT_AF_ON_EVENT)
      scope = event_scope(r, rec, &known);
    else
      scope = stream_key(api, rec->u.handle.handle, rec->tid);
    if (known) { /* the query says the work is done */
      drain(r, p, scope);
      if (p->pend.ops == 0 && !p->idle_since)
        p->idle_since = rec->ts_ns + rec->dur_ns;
    }
    return;
  }
  site(r, RP_SITE_SYNC, rec);
  if (rec->stack_id) { /* where the host waited (a hook for per-site tables) */
    uint64_t key = (uint64_t)rec->pid << 32 | rec->stack_id, ns = 0;
    gt_map_get(&r->sync_site_ns, key, &ns);
    gt_map_put(&r->sync_site_ns, key, ns + rec->dur_ns);
  }
  if (t->pending_launch)
    r->rs.synced_launches++;
  t->pending_launch = 0;
  if (fl & GT_AF_ON_STREAM)
    scope = stream_key(api, rec->u.handle.handle, rec->tid);
  else if (fl & GT_AF_ON_EVENT)
    scope = event_scope(r, rec, &known);
  if (!known) { /* an event never recorded: nothing to wait for */
    RP_SHARE(r, r->cur_req, blocked, rec->dur_ns);
    RP_SHARE(r, r->cur_req, sync, rec->dur_ns);
    s->sync_ns += rec->dur_ns;
    return;
  }
  blocked(r, p, rec, 0, 0, scope);
}

static void on_mem(struct report *r, struct rp_thread *t, struct rp_proc *p,
                   const struct gt_record *rec) {
  RP_SHARE(r, r->cur_req, api, rec->dur_ns);
  int alloc = rec->kind == GT_KIND_ALLOC;
  if (alloc) {
    r->rs.alloc_n++;
    r->rs.alloc_ns += rec->dur_ns;
  } else {
    r->rs.free_n++;
    r->rs.free_ns += rec->dur_ns;
  }
  if (rec->result != 0 || rec->u.mem.ptr == 0)
    return;
  /* Reuse opportunities: an allocation of a size this process freed before
   * (same memory kind) could have kept the old buffer. Arrays and IPC
   * mappings are no buffer another allocation could have reused. */
  int reusable = !(gt_api_flags(rec->api) & (GT_AF_ARRAY | GT_AF_IPC));
  uint64_t key = gt_pid_key(rec->pid, rec->u.mem.bytes * 8 + (rec->u.mem.memory & 7)),
           n = 0;
  if (reusable)
    gt_map_get(&r->freed, key, &n);
  if (alloc) {
    t->c.allocs++;
    p->c.allocs++;
    if (n) { /* churn: its site, of its kind (a site never freed is none) */
      int async = (rec->flags & GT_F_ASYNC) != 0;
      p->churn++;
      p->churn_async += (uint64_t)async;
      site(r, async ? RP_SITE_ALLOC_ASYNC : RP_SITE_ALLOC, rec);
      gt_map_put(&r->freed, key, n - 1);
    }
  } else if (reusable && rec->u.mem.bytes) {
    gt_map_put(&r->freed, key, n + 1);
  }
}

/* The request a call is made in: the outermost push range open on its
 * thread (its tag, open_hook's), when that one is in scope. */
static void set_request(struct report *r, const struct gt_record *rec) {
  uint64_t tag = gt_model_outer_tag(r->model, rec->pid, rec->tid);
  r->cur_req = NULL;
  r->cur_req_idx = 0;
  if (!tag || tag > r->nsnaps)
    return;
  size_t idx = r->snaps[tag - 1].range;
  r->cur_req = &r->ranges[idx].req;
  r->cur_req_idx = (uint32_t)idx + 1;
}

/* A call: the API table and the thread's span; `work` also counts what it
 * queued or waited for (a captured or added graph node ran nothing). */
static void on_call(struct report *r, const struct gt_record *rec, int work) {
  if (rec->flags & GT_F_REPLAYED)
    return; /* a graph's making, repeated from before this rolling file */
  struct rp_thread *t = r->cur = thread_of(r, rec->pid, rec->tid);
  struct rp_proc *p = &r->procs[t->proc];
  uint64_t end = rec->ts_ns + rec->dur_ns;
  if (!t->first || rec->ts_ns < t->first)
    t->first = rec->ts_ns;
  if (end > t->last)
    t->last = end;
  if (!r->first_ns || rec->ts_ns < r->first_ns)
    r->first_ns = rec->ts_ns;
  if (end > r->last_ns)
    r->last_ns = end;
  if (rec->kind == GT_KIND_NVTX) {
    r->cur = NULL;
    return;
  }
  set_request(r, rec);
  struct rp_api *a = &r->api[rec->api];
  a->calls++;
  if (rec->result != 0) {
    uint64_t key = (uint64_t)rec->api << 32 | (uint32_t)rec->result, n = 0;
    gt_map_get(&r->errs, key, &n);
    gt_map_put(&r->errs, key, n + 1);
    a->errors++;
  }
  gt_durs_add(&a->durs, rec->dur_ns);
  t->busy += rec->dur_ns;
  p->calls++;
  switch (work ? rec->kind : GT_KIND_NONE) {
  case GT_KIND_LAUNCH:
    on_launch(r, t, p, rec);
    break;
  case GT_KIND_MEMCPY:
    on_copy(r, t, p, rec);
    break;
  case GT_KIND_MEMSET:
    on_memset(r, p, rec);
    break;
  case GT_KIND_SYNC:
    on_sync(r, t, p, rec);
    break;
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    on_mem(r, t, p, rec);
    break;
  case GT_KIND_EVENT:
    if (rec->u.handle.handle2 || (gt_api_flags(rec->api) & GT_AF_RECORD))
      gt_map_put(&r->event_stream, gt_pid_key(rec->pid, rec->u.handle.handle),
                 stream_key(rec->api, rec->u.handle.handle2, rec->tid));
    RP_SHARE(r, r->cur_req, api, rec->dur_ns);
    break;
  default:
    RP_SHARE(r, r->cur_req, api, rec->dur_ns);
    break;
  }
  r->cur = NULL; /* threads may move before the next record */
  r->cur_req = NULL;
  r->cur_req_idx = 0;
}

static void on_api(struct report *r, const struct gt_record *rec) {
  on_call(r, rec, 1);
}

/* A kernel, copy or memset node run by a graph launch (graphs.h): work, not
 * a call — the graph launch was the call. */
static void on_graph_run(struct report *r, const struct gt_record *rec) {
  if (rec->kind == GT_KIND_LAUNCH) {
    size_t ki = kernel_index(r, rec->pid, rec->u.launch.kernel, rec);
    r->kern[ki].launches++;
    r->kern[ki].graph_runs++;
  } else if (rec->kind == GT_KIND_MEMCPY || rec->kind == GT_KIND_MEMSET) {
    unsigned row = rec->kind == GT_KIND_MEMSET        ? RP_XFER_MEMSET
                   : rec->u.copy.dir < RP_XFER_MEMSET ? rec->u.copy.dir
                                                      : GT_DIR_DEFAULT;
    r->xfer[row].count++;
    r->xfer[row].done++;
    r->xfer[row].bytes +=
        rec->kind == GT_KIND_MEMSET ? rec->u.set.bytes : rec->u.copy.bytes;
  }
  gt_gpu_attr_feed(&r->gattr, r->model, rec);
}

static void on_device(struct report *r, const struct gt_record *rec) {
  const struct gt_device_args *d = &rec->u.device;
  struct rp_proc *p = rp_proc_of(r, rec->pid);
  uint32_t sample = d->sample ? d->sample : 1;
  uint64_t s = rec->ts_ns, e = rec->ts_ns + rec->dur_ns;
  r->device_active = 1; /* keep every blocking call from now on */
  if (sample > r->dev_sample)
    r->dev_sample = sample;
  if (sample > p->dev_sample)
    p->dev_sample = sample;
  if (d->of_kind == GT_KIND_LAUNCH) {
    size_t ki = kernel_index(r, rec->pid, d->kernel, NULL); /* may move r->kern */
    struct rp_kernel *k = &r->kern[ki];
    k->gpu_timed++;
    k->gpu_estimated += (rec->flags & GT_F_ESTIMATED) != 0;
    k->gpu_upper += (rec->flags & GT_F_UPPER_BOUND) != 0;
    k->gpu_cupti += d->source == GT_DEVTIME_CUPTI;
    k->gpu_ns += rec->dur_ns;
    k->gpu_sq += (double)rec->dur_ns * (double)rec->dur_ns;
    gt_durs_add(&k->gpu_d, rec->dur_ns);
    k->gpu_scaled_ns += rec->dur_ns * sample;
    if (rec->dur_ns > k->gpu_max_ns)
      k->gpu_max_ns = rec->dur_ns;
    if (sample > k->sample)
      k->sample = sample;
    rp_runs_add(&p->kruns, s, e);
    return;
  }
  if (d->of_kind != GT_KIND_MEMCPY && d->of_kind != GT_KIND_MEMSET)
    return;
  unsigned row = d->of_kind == GT_KIND_MEMSET ? RP_XFER_MEMSET
                 : d->dir < RP_XFER_MEMSET    ? d->dir
                                              : GT_DIR_DEFAULT;
  struct rp_xfer *x = &r->xfer[row];
  x->gpu_timed++;
  x->gpu_bytes += d->bytes;
  x->gpu_ns += rec->dur_ns;
  x->gpu_scaled_ns += rec->dur_ns * sample;
  if (sample > x->sample)
    x->sample = sample;
  rp_runs_add(&p->cruns, s, e);
}

/* ---- NVTX ranges: counters at the open, differences at the close ---- */

static int in_window(const struct report *r, uint64_t ts) {
  uint64_t rel = ts > r->origin ? ts - r->origin : 0;
  return rel >= r->opt.from_ns && rel < r->opt.to_ns;
}

/* A range name's index in rnames and ranges (added if new). */
static size_t range_at(struct report *r, const char *name) {
  size_t idx = gt_strtab_intern(&r->rnames, name);
  if (idx >= r->rcap) {
    size_t old = r->rcap;
    r->ranges = gt_grow(r->ranges, &r->rcap, idx + 1, sizeof *r->ranges);
    memset(r->ranges + old, 0, (r->rcap - old) * sizeof *r->ranges);
  }
  return idx;
}

static uint64_t open_hook(void *ctx, const struct gt_record *rec) {
  struct report *r = ctx;
  if ((r->opt.has_pid && rec->pid != r->opt.pid) || !in_window(r, rec->ts_ns))
    return 0;
  struct rp_counters c = rec->u.nvtx.op == GT_NVTX_PUSH
                             ? thread_of(r, rec->pid, rec->tid)->c
                             : rp_proc_of(r, rec->pid)->c;
  size_t idx;
  if (r->nfree_snaps) {
    idx = r->free_snaps[--r->nfree_snaps];
  } else {
    r->snaps = gt_grow(r->snaps, &r->csnaps, r->nsnaps + 1, sizeof *r->snaps);
    idx = r->nsnaps++;
  }
  size_t ri = range_at(r, gt_model_text(r->model, rec));
  struct rp_range *rg = &r->ranges[ri];
  r->snaps[idx].c = c;
  r->snaps[idx].range = ri;
  r->snaps[idx].gpu = gt_rgpu_open(r->rgpu, rec->pid, rec->tid,
                                   (uint64_t)ri << 1 | (rg->cold_opened == 0));
  rg->cold_opened = 1;
  return idx + 1;
}

static uint32_t delta32(uint64_t now, uint64_t then) {
  uint64_t d = now - then;
  return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

static void range_done(struct report *r, const struct gt_range *g) {
  if (!g->tag)
    return;
  size_t si = (size_t)g->tag - 1;
  struct rp_counters then = r->snaps[si].c;
  gt_rgpu_close(r->rgpu, r->snaps[si].gpu);
  r->free_snaps =
      gt_grow(r->free_snaps, &r->cfree_snaps, r->nfree_snaps + 1, sizeof(size_t));
  r->free_snaps[r->nfree_snaps++] = si;
  struct rp_counters now =
      g->depth >= 0 ? thread_of(r, g->pid, g->tid)->c : rp_proc_of(r, g->pid)->c;
  size_t idx = range_at(r, g->name);
  struct rp_occ o = {.start = g->start_ns,
                     .end = g->end_ns > g->start_ns ? g->end_ns : g->start_ns,
                     .bytes = now.bytes - then.bytes,
                     .pid = g->pid,
                     .launches = delta32(now.launches, then.launches),
                     .allocs = delta32(now.allocs, then.allocs)};
  struct rp_range *rg = &r->ranges[idx];
  /* The cold start is each process's first of the name: another process's
   * first is cold too, never warm; the table shows the earliest process's. */
  uint64_t seen_key = gt_pid_key(g->pid, idx);
  int first_here = !gt_map_get(&r->range_seen, seen_key, NULL);
  if (first_here)
    gt_map_put(&r->range_seen, seen_key, 1);
  if (g->depth == 0) { /* outermost on its thread: a request */
    rg->req.n++;
    rg->req.sh.traced += o.end - o.start;
  }
  uint64_t cold_gpu = rg->cold.gpu_ns; /* range_gpu_add's: the first opened one's */
  if (rg->n++ == 0) {
    rg->cold = o;
    rg->cold.gpu_ns = cold_gpu;
    return;
  }
  if (first_here && o.pid != rg->cold.pid) {
    rg->colds++;
    if (o.start < rg->cold.start) {
      struct rp_occ t = rg->cold;
      rg->cold = o;
      o = t;
      rg->cold.gpu_ns = cold_gpu;
    }
    rg->colds_ns += o.end - o.start;
    return;
  }
  if (o.pid == rg->cold.pid && o.start < rg->cold.start) { /* an earlier one (an outer
                                                               range of the same name) */
    struct rp_occ t = rg->cold;
    rg->cold = o;
    o = t;
    rg->cold.gpu_ns = cold_gpu;
  }
  gt_durs_add(&rg->warm_d, o.end - o.start);
  rg->launches += o.launches;
  rg->bytes += o.bytes;
  rg->allocs += o.allocs;
}

/* ---- the pass ---- */

/* Device time of an occurrence's own work (range_gpu.h): user is its
 * range index << 1 | 1 for the cold (first opened) one. */
static void range_gpu_add(void *ctx, uint64_t user, double ns) {
  struct report *r = ctx;
  struct rp_range *rg = &r->ranges[user >> 1];
  if (user & 1)
    rg->cold.gpu_ns += (uint64_t)ns;
  else
    rg->gpu_ns += (uint64_t)ns;
}

void rp_init(struct report *r, const struct rp_options *opt) {
  memset(r, 0, sizeof *r);
  r->opt = *opt;
  gt_gpu_attr_init(&r->gattr);
  struct gt_rgpu_hooks h = {.ctx = r, .add = range_gpu_add};
  r->rgpu = gt_rgpu_new(0, &h);
}

/* A note of gputrace start/stop's or of a snapshot's cut, kept for the
 * Recording lines. */
static void note_switch(struct report *r, const struct gt_record *rec) {
  static const char *const texts[] = {[RP_STOPPED] = GT_NOTE_STOPPED,
                                      [RP_STARTED] = GT_NOTE_STARTED,
                                      [RP_CUT] = GT_NOTE_WINDOW};
  const char *text = gt_model_text(r->model, rec);
  for (unsigned k = 0; k < sizeof texts / sizeof texts[0]; k++)
    if (!strcmp(text, texts[k]) && r->nswitches < RP_SWITCHES_MAX)
      r->switches[r->nswitches++] =
          (struct rp_switch){rec->ts_ns, (enum rp_switch_kind)k};
}

static void feed(struct report *r, const struct gt_record *rec,
                 const struct gt_range *range) {
  if (!r->origin) /* set once a record with a timestamp was read */
    r->origin = gt_session_origin(r->session);
  /* records of the trace, as dump counts them: not the graph-node runs the
   * graph layer makes of a graph launch */
  r->records += !(rec->flags & GT_F_GRAPH_RUN);
  if (rec->kind == GT_KIND_METRIC || rec->kind == GT_KIND_NOTE) { /* machine-wide */
    if (rec->kind == GT_KIND_NOTE && in_window(r, rec->ts_ns))
      note_switch(r, rec);
    if (in_window(r, rec->ts_ns))
      rp_hw_feed(r, rec);
    r->events += !r->opt.has_pid; /* no process's event */
    return;
  }
  if (r->opt.has_pid && rec->pid != r->opt.pid)
    return;
  if (range)
    range_done(r, range);
  switch (rec->kind) {
  case GT_KIND_DROP:
    r->dropped += rec->u.count.count;
    if (gt_kind_in_table(rec->u.count.of_kind))
      r->dropped_by_kind[rec->u.count.of_kind] += rec->u.count.count;
    r->events++;
    return;
  case GT_KIND_LOST:
    r->lost += rec->u.count.count;
    r->events++;
    return;
  case GT_KIND_KERNEL_NAME: /* a (re)registration: names may change */
    gt_map_del(&r->kcache, gt_pid_key(rec->pid, rec->u.kname.kernel));
    memset(r->kc_key, 0, sizeof r->kc_key);
    gt_gpu_attr_feed(&r->gattr, r->model, rec);
    r->events++;
    return;
  case GT_KIND_PROCESS:
    rp_proc_of(r, rec->pid);
    r->events++;
    return;
  case GT_KIND_NONE:
    return;
  case GT_KIND_DEVICE:
    gt_rgpu_device(r->rgpu, rec); /* a range's own work, wherever it ran */
    if (in_window(r, rec->ts_ns)) {
      r->events += !(rec->flags & GT_F_GRAPH_RUN);
      if (!(rec->flags & GT_F_GRAPH_RUN)) { /* the trace's DEVICE records, as dump's */
        r->dev_records++;
        rp_proc_of(r, rec->pid)->dev_records++;
      }
      r->device_active = 1;
      if (rec->flags & GT_F_EXPANDED)
        return; /* its nodes' shares follow */
      on_device(r, rec);
      gt_gpu_attr_feed(&r->gattr, r->model, rec);
    }
    return;
  default:
    if (rec->flags & GT_F_GRAPH_RUN) { /* a node's run in a graph launch */
      if (in_window(r, rec->ts_ns))
        on_graph_run(r, rec);
      return;
    }
    gt_rgpu_call(r->rgpu, rec);
    if (gt_kind_is_def(rec->kind)) { /* stacks, modules, frames: for call sites */
      r->events++;
    } else if (gt_kind_is_call(rec->kind) && !(rec->flags & GT_F_CARRIED) &&
               in_window(r, rec->ts_ns)) { /* carried: a block allocated before */
      r->events++;
      r->cuda_calls += rec->kind != GT_KIND_NVTX;
      on_api(r, rec);
      if (rec->kind == GT_KIND_LAUNCH || rec->kind == GT_KIND_MEMCPY ||
          rec->kind == GT_KIND_MEMSET)
        gt_gpu_attr_feed(&r->gattr, r->model, rec);
    }
  }
}

/* A captured or added graph node: a call (host time) that queued nothing. */
static void graph_node_cb(void *ctx, const struct gt_event *ev) {
  struct report *r = ctx;
  const struct gt_record *rec = ev->rec;
  r->records++;
  if ((r->opt.has_pid && rec->pid != r->opt.pid) || !in_window(r, rec->ts_ns))
    return;
  r->events++;
  r->cuda_calls++;
  on_call(r, rec, 0);
}

static void feed_cb(void *ctx, const struct gt_event *ev) {
  struct gt_record scratch; /* frees with the bytes they freed */
  struct report *r = ctx;
  if (ev->rec->kind == GT_KIND_FREE && ev->free_status == GT_FREE_OK && ev->block)
    gt_map_put(&r->freed_sites, (uint64_t)ev->block->pid << 32 | ev->block->stack_id, 1);
  feed(r, ev->rec->kind == GT_KIND_FREE ? gt_event_record(ev, &scratch) : ev->rec,
       ev->range);
  if (r->tap)
    r->tap(r->tap_ctx, ev);
}

int rp_read(struct report *r, const char *path, const char *cmd) {
  char err[512];
  struct gt_session_opts o = {.path = path,
                              .layers = GT_LAYER_HEAP | GT_LAYER_NVTX | GT_LAYER_SYMBOLS |
                                        GT_LAYER_GRAPHS,
                              .threads = -1,
                              .no_wait = r->opt.no_wait};
  char name[64];
  struct gt_progress pg;
  snprintf(name, sizeof name, "gputrace %s", cmd);
  gt_progress_watch(&pg, name, 0, &o);
  if (!(r->session = gt_session_open(&o, err, sizeof err))) {
    fprintf(stderr, "gputrace %s: %s\n", cmd, err);
    return 2;
  }
  r->path = path;
  r->model = gt_session_model(r->session);
  r->symtab = gt_model_symtab(r->model);
  struct gt_tool tool = {.ctx = r, .range_open = open_hook, .graph_node = graph_node_cb};
  gt_tool_all(&tool, feed_cb);
  gt_session_run(r->session, &tool);
  gt_progress_done(&pg);
  r->damaged = gt_session_damaged(r->session);
  return 0;
}

static void free_runs(struct rp_runs *x) {
  free(x->s);
  free(x->e);
}

void rp_free(struct report *r) {
  gt_gpu_attr_free(&r->gattr);
  gt_rgpu_free(r->rgpu);
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    gt_durs_free(&r->api[a].durs);
  for (size_t i = 0; i < r->knames.n; i++)
    gt_durs_free(&r->kern[i].gpu_d);
  gt_strtab_free(&r->knames);
  free(r->kern);
  gt_map_free(&r->kcache);
  for (size_t i = 0; i < r->rnames.n; i++) {
    gt_durs_free(&r->ranges[i].warm_d);
  }
  gt_strtab_free(&r->rnames);
  free(r->ranges);
  for (size_t i = 0; i < r->nprocs; i++) {
    free_runs(&r->procs[i].kruns);
    free_runs(&r->procs[i].cruns);
    free(r->procs[i].bl);
  }
  free(r->procs);
  gt_map_free(&r->proc_idx);
  free(r->threads);
  gt_map_free(&r->thread_idx);
  free(r->streams);
  gt_map_free(&r->stream_idx);
  gt_map_free(&r->event_stream);
  gt_map_free(&r->range_seen);
  gt_map_free(&r->freed_sites);
  gt_map_free(&r->freed);
  free(r->snaps);
  free(r->free_snaps);
  for (int i = 0; i < RP_SITES; i++)
    gt_map_free(&r->sites[i]);
  gt_map_free(&r->errs);
  gt_map_free(&r->sync_site_ns);
  rp_hw_free(r);
  for (size_t i = 0; i < r->nfindings; i++) {
    free(r->findings[i].message);
    for (int k = 0; k < r->findings[i].nev; k++)
      free(r->findings[i].ev[k].s);
  }
  free(r->findings);
  gt_session_close(r->session); /* the model and symbols with it */
  memset(r, 0, sizeof *r);
}
