/* export_rows.c — ex_run (export.h): one pass over a trace, each record
 * made into the row of its table.
 *
 * Contract:
 *  - File order, with the heap, NVTX and symbol layers. A call lands in
 *    the table of its kind (launches, copies, memsets, allocations, frees)
 *    or in api_calls (sync, stream, event, graph, NVTX marks); NVTX
 *    ranges (their push and pop, start and end) in nvtx_ranges — written
 *    once closed and their own work's DEVICE records came (gpu_ns:
 *    model/range_gpu.h), open ones at the end — METRIC
 *    records in metrics. A DEVICE record goes into its call's row (the
 *    device columns), or, when no call row took it, into device_unmatched.
 *  - A launch, copy or memset with a correlation id waits for its DEVICE
 *    record (same pid, tid and corr, the kind it timed) to fill its device
 *    columns, and a DEVICE record written before its call (a synchronous
 *    copy's) waits for the call, in one ring of EX_HOLD rows: one still
 *    waiting when the ring comes round to it (EX_HOLD held rows later), or
 *    at the end, is written unmatched (device sampled 1 in N, or untimed;
 *    a DEVICE record: into device_unmatched).
 *  - An allocation is written when its life ends: freed (with its free's
 *    id and time), replaced (a new allocation at its address, its free not
 *    seen), or live at the end of the trace; one the heap does not track
 *    (failed, a cuMemMap mapping, a NULL pointer) at once, as failed or
 *    untracked. Memory: the heap's live blocks, no more.
 *  - Stacks and frames are written at the end, for each STACK record seen
 *    (frames come from FRAME records that may follow it); processes and
 *    threads too (first and last call, calls), and the metadata.
 *  - Filters: rows of other pids than --pid are left out (machine-wide
 *    metrics stay: they have no process); call, device, range and metric
 *    rows outside --from/--to by their start. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "gputrace/version.h"
#include "range_gpu.h"
#include "util.h"

#define EX_HOLD 262144u
#define EX_MAX_FRAMES 256

struct held { /* a work row waiting for its DEVICE record */
  struct gt_record rec;
  uint64_t id;
  unsigned table, used;
};

struct proc {
  uint32_t pid, ppid, exited;
  int64_t start, end; /* INT64_MIN: not recorded */
  char *cmdline;
  uint64_t records, dropped, lost;
};

struct thread {
  uint32_t pid, tid;
  uint64_t first, last, calls;
};

struct stack {
  uint32_t pid, id, depth, python;
};

struct range {       /* an NVTX range's row, waiting for its own work's device time */
  struct gt_range g; /* g.name: strdup'd */
  uint64_t handle;   /* gt_rgpu's */
  double gpu_ns;
  int closed, done;
};

struct ex {
  struct gt_rgpu *rgpu; /* GPU time of ranges (range_gpu.h) */
  struct range *ranges; /* by nvtx tag - 1 */
  size_t nranges, cranges;
  uint64_t *free_ranges;
  size_t nfree_ranges, cfree_ranges;
  struct ex_writer *w;
  const struct ex_filter *f;
  struct gt_session *s;
  struct gt_model *m;
  uint64_t origin;
  struct ex_value v[EX_MAX_COLUMNS];
  char *tbuf[EX_MAX_COLUMNS];
  size_t tcap[EX_MAX_COLUMNS];
  unsigned nv;
  uint64_t next_id[EX_NTABLES], rows, unmatched, hold_seq;
  int failed;
  struct held *hold;
  struct gt_map hold_idx, dev_idx;
  struct proc *procs;
  size_t nprocs, cprocs;
  struct gt_map proc_idx;
  struct thread *threads;
  size_t nthreads, cthreads;
  struct gt_map thread_idx;
  struct stack *stacks;
  size_t nstacks, cstacks;
  struct gt_map stack_idx;
};

/* ---- rows ---- */

static void v_int(struct ex *x, int64_t i) {
  x->v[x->nv++] = (struct ex_value){.i = i};
}
static void v_null(struct ex *x) {
  x->v[x->nv++] = (struct ex_value){.null = 1};
}
static void v_real(struct ex *x, double d) {
  x->v[x->nv++] = (struct ex_value){.d = d};
}
/* Text from the trace: made valid UTF-8. NULL: a NULL value. */
static void v_text(struct ex *x, const char *s) {
  if (!s) {
    v_null(x);
    return;
  }
  unsigned i = x->nv++;
  x->v[i] = (struct ex_value){.s = gt_text_utf8(s, &x->tbuf[i], &x->tcap[i])};
}
/* Text of our own (names from the tables): ASCII. */
static void v_name(struct ex *x, const char *s) {
  x->v[x->nv++] = (struct ex_value){.s = s};
}
static void v_ns(struct ex *x, uint64_t ts) {
  v_int(x, (int64_t)(ts - x->origin));
}

static void emit(struct ex *x, unsigned table) {
  if (x->nv != ex_tables[table].ncols) { /* the table and this file disagree */
    fprintf(stderr, "gputrace export: internal: %s got %u values for %u columns\n",
            ex_tables[table].name, x->nv, ex_tables[table].ncols);
    abort();
  }
  for (unsigned i = 0; i < x->nv; i++) /* an empty text is NULL, in both formats */
    if (ex_tables[table].cols[i].type == EX_TEXT && (!x->v[i].s || !x->v[i].s[0]))
      x->v[i].null = 1;
  x->nv = 0;
  if (x->failed)
    return;
  if (x->w->row(x->w->ctx, table, x->v) != 0)
    x->failed = 1;
  x->rows++;
}

/* ---- scope ---- */

static int pid_in(const struct ex *x, uint32_t pid) {
  return !x->f->has_pid || pid == x->f->pid;
}

static int in_scope(const struct ex *x, uint32_t pid, uint64_t ts) {
  uint64_t rel = ts > x->origin ? ts - x->origin : 0;
  return pid_in(x, pid) && rel >= x->f->from_ns && rel < x->f->to_ns;
}

/* ---- processes, threads ---- */

static struct proc *proc_of(struct ex *x, uint32_t pid) {
  size_t i;
  int added;
  x->procs = gt_find_or_add(&x->proc_idx, pid, x->procs, &x->nprocs, &x->cprocs,
                            sizeof *x->procs, &i, &added);
  if (added)
    x->procs[i] = (struct proc){.pid = pid, .start = INT64_MIN, .end = INT64_MIN};
  return &x->procs[i];
}

static void on_process(struct ex *x, const struct gt_record *r) {
  if (!pid_in(x, r->pid))
    return;
  struct proc *p = proc_of(x, r->pid);
  if (r->u.proc.phase == GT_PROC_START) {
    p->ppid = r->u.proc.ppid;
    p->start = (int64_t)(r->ts_ns - x->origin);
    free(p->cmdline);
    p->cmdline = strdup(gt_model_text(x->m, r));
    if (!p->cmdline)
      gt_oom();
  } else {
    p->end = (int64_t)(r->ts_ns - x->origin);
    p->exited = r->u.proc.exited;
    p->records = r->u.proc.records;
    p->dropped = r->u.proc.dropped;
    p->lost = r->u.proc.lost;
  }
}

static void count_call(struct ex *x, const struct gt_record *r) {
  size_t i;
  int added;
  x->threads = gt_find_or_add(&x->thread_idx, gt_pid_key(r->pid, r->tid), x->threads,
                              &x->nthreads, &x->cthreads, sizeof *x->threads, &i, &added);
  struct thread *t = &x->threads[i];
  if (added) {
    *t = (struct thread){.pid = r->pid, .tid = r->tid, .first = r->ts_ns};
    proc_of(x, r->pid);
  }
  t->calls++;
  if (r->ts_ns + r->dur_ns > t->last)
    t->last = r->ts_ns + r->dur_ns;
}

/* id, pid, tid, api, start_ns, dur_ns, result, stack_id */
static void call_columns(struct ex *x, uint64_t id, const struct gt_record *r) {
  v_int(x, (int64_t)id);
  v_int(x, r->pid);
  v_int(x, r->tid);
  v_name(x, gt_api_name(r->api));
  v_ns(x, r->ts_ns);
  v_int(x, (int64_t)r->dur_ns);
  v_int(x, r->result);
  v_int(x, r->stack_id);
}

static void graph_flags(struct ex *x, const struct gt_record *r) {
  v_int(x, (r->flags & GT_F_CAPTURED) != 0);
  v_int(x, (r->flags & GT_F_NODE) != 0);
}

static const char *source_name(unsigned s) {
  return s == GT_DEVTIME_EVENTS ? "events" : s == GT_DEVTIME_CUPTI ? "cupti" : NULL;
}

/* The call's DEVICE record, which has no row of its own then: when the
 * work ran and what only the DEVICE record knows (sample, source, device,
 * estimated, wait). */
static void device_columns(struct ex *x, const struct gt_record *dev) {
  if (!dev) {
    for (int i = 0; i < EX_DEVICE_COLUMNS; i++)
      v_null(x);
    return;
  }
  const struct gt_device_args *d = &dev->u.device;
  v_ns(x, dev->ts_ns);
  v_ns(x, dev->ts_ns + dev->dur_ns);
  v_int(x, (int64_t)dev->dur_ns);
  v_int(x, d->sample ? d->sample : 1);
  v_name(x, source_name(d->source));
  v_int(x, d->device);
  v_int(x, (dev->flags & GT_F_ESTIMATED) != 0);
  v_int(x, d->wait_ns);
  v_int(x, (dev->flags & GT_F_UPPER_BOUND) != 0);
}

/* ---- launches, copies, memsets ---- */

static void launch_row(struct ex *x, const struct held *h, const struct gt_record *dev) {
  const struct gt_record *r = &h->rec;
  const struct gt_launch_args *l = &r->u.launch;
  call_columns(x, h->id, r);
  /* The name now, not when the launch was held: a kernel registered again
   * meanwhile frees the name it replaces. */
  v_text(x, gt_model_kernel(x->m, r));
  for (int i = 0; i < 3; i++)
    v_int(x, l->grid[i]);
  for (int i = 0; i < 3; i++)
    v_int(x, l->block[i]);
  v_int(x, (int64_t)l->shared_mem);
  v_int(x, (int64_t)l->stream);
  v_int(x, l->corr);
  v_int(x, (r->flags & GT_F_GRAPH) != 0);
  graph_flags(x, r);
  device_columns(x, dev);
  emit(x, EX_LAUNCHES);
}

static void copy_row(struct ex *x, const struct held *h, const struct gt_record *dev) {
  const struct gt_record *r = &h->rec;
  const struct gt_copy_args *c = &r->u.copy;
  call_columns(x, h->id, r);
  v_name(x, gt_dir_name(c->dir));
  v_int(x, (int64_t)c->bytes);
  v_int(x, (int64_t)c->stream);
  v_int(x, (int64_t)c->dst);
  v_int(x, (int64_t)c->src);
  v_int(x, c->width);
  v_int(x, c->height);
  v_int(x, (r->flags & GT_F_PINNED) != 0);
  v_int(x, (r->flags & GT_F_PAGEABLE) != 0);
  v_int(x, (r->flags & GT_F_ASYNC) != 0);
  v_int(x, c->corr);
  graph_flags(x, r);
  device_columns(x, dev);
  emit(x, EX_COPIES);
}

static void memset_row(struct ex *x, const struct held *h, const struct gt_record *dev) {
  const struct gt_record *r = &h->rec;
  const struct gt_set_args *m = &r->u.set;
  call_columns(x, h->id, r);
  v_int(x, (int64_t)m->ptr);
  v_int(x, (int64_t)m->bytes);
  v_int(x, m->value);
  v_int(x, (int64_t)m->stream);
  v_int(x, m->corr);
  graph_flags(x, r);
  device_columns(x, dev);
  emit(x, EX_MEMSETS);
}

/* Ids are given as rows are written, so that each table's come in order
 * (SQLite appends them: no search). */
static void work_row(struct ex *x, struct held *h, const struct gt_record *dev) {
  h->id = ++x->next_id[h->table];
  if (h->table == EX_LAUNCHES)
    launch_row(x, h, dev);
  else if (h->table == EX_COPIES)
    copy_row(x, h, dev);
  else
    memset_row(x, h, dev);
}

static uint64_t hold_key(uint32_t pid, uint32_t tid, uint32_t corr) {
  return gt_pid_key(pid, (uint64_t)tid << 32 | corr);
}

/* Held rows: calls waiting for their DEVICE record (hold_idx), and DEVICE
 * records that came before their call (dev_idx: a synchronous copy's comes
 * while the call is still running), both in one ring. */
static struct gt_map *idx_of(struct ex *x, const struct held *h) {
  return h->table == EX_DEVICE_UNMATCHED ? &x->dev_idx : &x->hold_idx;
}

static uint64_t held_key(const struct held *h) {
  const struct gt_record *r = &h->rec;
  return hold_key(r->pid, r->tid,
                  h->table == EX_DEVICE_UNMATCHED ? r->u.device.corr : gt_record_corr(r));
}

static void device_row(struct ex *x, const struct gt_record *r);

/* Write a held row without its match, and free its place. */
static void hold_flush(struct ex *x, struct held *h) {
  gt_map_del(idx_of(x, h), held_key(h));
  h->used = 0;
  if (h->table == EX_DEVICE_UNMATCHED) {
    device_row(x, &h->rec);
  } else {
    work_row(x, h, NULL);
  }
}

/* A slot of the first round was never written: not read either. Reading
 * a fresh page of the calloc'ed ring maps the zero page, and the write that
 * follows then replaces it with a TLB shootdown of the writer thread's core:
 * 4-5 % of an export's samples (perf), gone. */
static void hold_put(struct ex *x, const struct held *h) {
  uint64_t slot = x->hold_seq % EX_HOLD;
  if (x->hold_seq++ >= EX_HOLD && x->hold[slot].used)
    hold_flush(x, &x->hold[slot]);
  x->hold[slot] = *h;
  if (gt_map_put(idx_of(x, h), held_key(h), slot) != 0)
    gt_oom();
}

/* Take the row held in `map` under key if it is of `kind` (a call's kind,
 * a DEVICE record's of_kind): 1 and *out. */
static int hold_take(struct ex *x, struct gt_map *map, uint64_t key, unsigned kind,
                     struct held *out) {
  uint64_t slot;
  if (!gt_map_get(map, key, &slot))
    return 0;
  struct held *h = &x->hold[slot];
  if ((h->table == EX_DEVICE_UNMATCHED ? h->rec.u.device.of_kind : h->rec.kind) != kind)
    return 0;
  *out = *h;
  h->used = 0;
  gt_map_del(map, key);
  return 1;
}

static void on_work(struct ex *x, const struct gt_record *r, unsigned table) {
  struct held h = {.rec = *r, .table = table, .used = 1}, d;
  uint32_t corr = gt_record_corr(r);
  if (!corr || r->result != 0 || (r->flags & (GT_F_CAPTURED | GT_F_NODE))) {
    work_row(x, &h, NULL); /* nothing ran, or nothing will say when */
    return;
  }
  if (hold_take(x, &x->dev_idx, hold_key(r->pid, r->tid, corr), r->kind, &d)) {
    work_row(x, &h, &d.rec);
    return;
  }
  hold_put(x, &h);
}

static unsigned table_of_work(unsigned kind) {
  return kind == GT_KIND_LAUNCH   ? EX_LAUNCHES
         : kind == GT_KIND_MEMCPY ? EX_COPIES
         : kind == GT_KIND_MEMSET ? EX_MEMSETS
                                  : EX_NTABLES;
}

/* A DEVICE record no call row took: its row of device_unmatched. */
static void device_row(struct ex *x, const struct gt_record *r) {
  const struct gt_device_args *d = &r->u.device;
  int launch = d->of_kind == GT_KIND_LAUNCH;
  x->unmatched++;
  v_int(x, (int64_t)++x->next_id[EX_DEVICE_UNMATCHED]);
  v_int(x, r->pid);
  v_int(x, r->tid);
  v_name(x, gt_kind_is_record(d->of_kind) ? gt_kind_name(d->of_kind) : NULL);
  v_name(x, gt_api_name(r->api));
  v_text(x, launch ? gt_model_kernel_of(x->m, r->pid, d->kernel, 0) : NULL);
  v_ns(x, r->ts_ns);
  v_ns(x, r->ts_ns + r->dur_ns);
  v_int(x, (int64_t)r->dur_ns);
  v_int(x, (int64_t)d->stream);
  v_int(x, (int64_t)d->bytes);
  v_name(x, d->of_kind == GT_KIND_MEMCPY ? gt_dir_name(d->dir) : NULL);
  v_int(x, d->corr);
  v_int(x, d->sample ? d->sample : 1);
  v_name(x, source_name(d->source));
  v_int(x, d->device);
  v_int(x, (r->flags & GT_F_ESTIMATED) != 0);
  v_int(x, d->wait_ns);
  v_int(x, (r->flags & GT_F_UPPER_BOUND) != 0);
  emit(x, EX_DEVICE_UNMATCHED);
}

static void on_device(struct ex *x, const struct gt_record *r) {
  const struct gt_device_args *d = &r->u.device;
  struct held w, h = {.rec = *r, .table = EX_DEVICE_UNMATCHED, .used = 1};
  if (!d->corr) {
    device_row(x, r);
  } else if (hold_take(x, &x->hold_idx, hold_key(r->pid, r->tid, d->corr), d->of_kind,
                       &w)) {
    work_row(x, &w, r);
  } else {
    hold_put(x, &h);
  }
}

/* ---- allocations, frees ---- */

/* An allocation whose life ended (or that the heap does not track): its
 * row, with its free when `fr` is the free that ended it. */
static uint64_t alloc_row(struct ex *x, const struct gt_block *b, int32_t result,
                          const char *ended, const struct gt_record *fr,
                          uint64_t free_id) {
  uint64_t id = ++x->next_id[EX_ALLOCATIONS];
  v_int(x, (int64_t)id);
  v_int(x, b->pid);
  v_int(x, b->tid);
  v_name(x, gt_api_name(b->api));
  v_ns(x, b->ts_ns);
  v_int(x, result);
  v_int(x, b->stack_id);
  v_name(x, gt_memory_name(b->memory));
  v_int(x, (int64_t)b->ptr);
  v_int(x, (int64_t)b->bytes);
  v_name(x, ended);
  if (free_id)
    v_int(x, (int64_t)free_id);
  else
    v_null(x);
  if (fr) {
    v_ns(x, fr->ts_ns);
    v_int(x, fr->tid);
    v_name(x, gt_api_name(fr->api));
    v_int(x, fr->stack_id);
  } else {
    for (int i = 0; i < 4; i++)
      v_null(x);
  }
  emit(x, EX_ALLOCATIONS);
  return id;
}

static int block_in_scope(const struct ex *x, const struct gt_block *b) {
  return in_scope(x, b->pid, b->ts_ns);
}

static void on_alloc(struct ex *x, const struct gt_event *ev) {
  const struct gt_record *r = ev->rec;
  if (ev->block && block_in_scope(x, ev->block)) /* its free was not seen */
    alloc_row(x, ev->block, 0, "replaced", NULL, 0);
  int tracked = r->result == 0 && r->u.mem.ptr && !(r->flags & GT_F_VMM_MAP);
  if (tracked || !in_scope(x, r->pid, r->ts_ns))
    return; /* written when its life ends */
  struct gt_block b = {.ptr = r->u.mem.ptr,
                       .bytes = r->u.mem.bytes,
                       .ts_ns = r->ts_ns,
                       .pid = r->pid,
                       .tid = r->tid,
                       .stack_id = r->stack_id,
                       .api = r->api,
                       .memory = r->u.mem.memory};
  alloc_row(x, &b, r->result, r->result ? "failed" : "untracked", NULL, 0);
}

static void on_free(struct ex *x, const struct gt_event *ev) {
  const struct gt_record *r = ev->rec;
  const struct gt_block *b = ev->block;
  int scoped = in_scope(x, r->pid, r->ts_ns);
  uint64_t free_id = scoped ? ++x->next_id[EX_FREES] : 0, alloc_id = 0;
  if (ev->free_status == GT_FREE_OK && b && block_in_scope(x, b))
    alloc_id = alloc_row(x, b, 0, "freed", r, free_id);
  if (!scoped)
    return;
  call_columns(x, free_id, r);
  v_int(x, (int64_t)r->u.mem.ptr);
  v_name(x, gt_free_status_name(ev->free_status));
  v_name(x, gt_memory_name(b ? b->memory : r->u.mem.memory));
  if (b)
    v_int(x, (int64_t)b->bytes);
  else
    v_null(x);
  if (alloc_id)
    v_int(x, (int64_t)alloc_id);
  else
    v_null(x);
  emit(x, EX_FREES);
}

static void live_cb(void *ctx, const struct gt_block *b) {
  struct ex *x = ctx;
  if (block_in_scope(x, b))
    alloc_row(x, b, 0, "live", NULL, 0);
}

/* ---- NVTX, other calls, metrics ---- */

static void range_row(struct ex *x, const struct gt_range *g, double gpu_ns) {
  if (!in_scope(x, g->pid, g->start_ns))
    return;
  v_int(x, (int64_t)++x->next_id[EX_NVTX_RANGES]);
  v_int(x, g->pid);
  v_int(x, g->tid);
  v_text(x, g->name);
  v_ns(x, g->start_ns);
  if (g->end_ns) {
    v_ns(x, g->end_ns);
    v_int(x, (int64_t)(g->end_ns - g->start_ns));
  } else { /* still open at the end */
    v_null(x);
    v_null(x);
  }
  v_int(x, g->depth);
  v_int(x, (int64_t)g->domain);
  v_int(x, (int64_t)(gpu_ns + 0.5));
  emit(x, EX_NVTX_RANGES);
}

/* A range opens: a row waits for it to close and for its own work's
 * device records (range_gpu.h); its tag is the row's index + 1. */
static uint64_t range_open(void *ctx, const struct gt_record *r) {
  struct ex *x = ctx;
  size_t i;
  if (x->nfree_ranges) {
    i = x->free_ranges[--x->nfree_ranges];
  } else {
    x->ranges = gt_grow(x->ranges, &x->cranges, x->nranges + 1, sizeof *x->ranges);
    i = x->nranges++;
  }
  memset(&x->ranges[i], 0, sizeof x->ranges[i]);
  x->ranges[i].handle = gt_rgpu_open(x->rgpu, r->pid, r->tid, i + 1);
  return i + 1;
}

static void range_free(struct ex *x, size_t i) {
  free((char *)x->ranges[i].g.name);
  x->ranges[i].g.name = NULL;
  x->free_ranges = gt_grow(x->free_ranges, &x->cfree_ranges, x->nfree_ranges + 1,
                           sizeof *x->free_ranges);
  x->free_ranges[x->nfree_ranges++] = i;
}

/* gt_rgpu: a range's GPU time is whole; a closed range's row is written. */
static void range_done(void *ctx, uint64_t user, double gpu_ns) {
  struct ex *x = ctx;
  struct range *q = &x->ranges[user - 1];
  q->gpu_ns = gpu_ns;
  q->done = 1;
  if (q->closed) {
    range_row(x, &q->g, q->gpu_ns);
    range_free(x, user - 1);
  }
}

static void range_closed(struct ex *x, const struct gt_range *g) {
  if (!g->tag || g->tag > x->nranges)
    return;
  struct range *q = &x->ranges[g->tag - 1];
  q->g = *g;
  if (!(q->g.name = strdup(g->name)))
    gt_oom();
  q->closed = 1;
  gt_rgpu_close(x->rgpu, q->handle); /* may write the row */
}

static void open_range_cb(void *ctx, const struct gt_range *g) {
  struct ex *x = ctx;
  double gpu = g->tag && g->tag <= x->nranges ? x->ranges[g->tag - 1].gpu_ns : 0;
  range_row(x, g, gpu);
}

static void other_call(struct ex *x, const struct gt_record *r) {
  call_columns(x, ++x->next_id[EX_API_CALLS], r);
  v_name(x, gt_kind_name(r->kind));
  if (r->kind == GT_KIND_GRAPH) {
    v_int(x, (int64_t)r->u.graph.graph);
    v_int(x, (int64_t)r->u.graph.exec);
  } else if (r->kind == GT_KIND_NVTX) {
    v_int(x, (int64_t)r->u.nvtx.domain);
    v_int(x, (int64_t)r->u.nvtx.range_id);
  } else {
    v_int(x, (int64_t)r->u.handle.handle);
    v_int(x, (int64_t)r->u.handle.handle2);
  }
  emit(x, EX_API_CALLS);
}

static void on_metric(struct ex *x, const struct gt_record *r) {
  const struct gt_metric_args *m = &r->u.metric;
  if (!in_scope(x, x->f->has_pid && m->pid ? m->pid : x->f->pid, r->ts_ns))
    return; /* a process's reading of another process, or outside the window */
  v_int(x, (int64_t)++x->next_id[EX_METRICS]);
  v_ns(x, r->ts_ns);
  v_int(x, m->device);
  v_name(x, gt_metric_name(m->metric));
  v_name(x, gt_metric_unit(m->metric));
  v_real(x, m->value);
  if (m->pid)
    v_int(x, m->pid);
  else
    v_null(x);
  emit(x, EX_METRICS);
}

static void on_stack(struct ex *x, const struct gt_record *r) {
  size_t i;
  int added;
  if (!pid_in(x, r->pid))
    return;
  x->stacks = gt_find_or_add(&x->stack_idx, gt_pid_key(r->pid, r->u.stack.id), x->stacks,
                             &x->nstacks, &x->cstacks, sizeof *x->stacks, &i, &added);
  x->stacks[i] =
      (struct stack){r->pid, r->u.stack.id, r->u.stack.depth, r->u.stack.python};
}

static void on_event(void *ctx, const struct gt_event *ev) {
  struct ex *x = ctx;
  const struct gt_record *r = ev->rec;
  if (!x->origin) /* set once a record with a timestamp was read */
    x->origin = gt_session_origin(x->s);
  if (ev->range)
    range_closed(x, ev->range);
  if (r->kind == GT_KIND_DEVICE)
    gt_rgpu_device(x->rgpu, r);
  else if (gt_rgpu_is_work(r))
    gt_rgpu_call(x->rgpu, r);
  switch (r->kind) {
  case GT_KIND_PROCESS:
    on_process(x, r);
    return;
  case GT_KIND_STACK:
    on_stack(x, r);
    return;
  case GT_KIND_METRIC:
    on_metric(x, r);
    return;
  case GT_KIND_ALLOC:
    on_alloc(x, ev); /* a replaced block is in scope by its own time */
    break;
  case GT_KIND_FREE:
    on_free(x, ev);
    break;
  case GT_KIND_DEVICE:
    if (in_scope(x, r->pid, r->ts_ns))
      on_device(x, r);
    return;
  default:
    break;
  }
  if (!gt_kind_is_call(r->kind) || !in_scope(x, r->pid, r->ts_ns))
    return;
  count_call(x, r);
  unsigned t = table_of_work(r->kind);
  if (t != EX_NTABLES)
    on_work(x, r, t);
  else if (r->kind != GT_KIND_ALLOC && r->kind != GT_KIND_FREE &&
           (r->kind != GT_KIND_NVTX || r->u.nvtx.op == GT_NVTX_MARK))
    other_call(x, r); /* an NVTX range's calls are its nvtx_ranges row */
}

/* ---- the end ---- */

static void hold_flush_all(struct ex *x) {
  uint64_t first = x->hold_seq > EX_HOLD ? x->hold_seq - EX_HOLD : 0;
  for (uint64_t n = first; n < x->hold_seq; n++) { /* oldest first; slots written */
    struct held *h = &x->hold[n % EX_HOLD];
    if (h->used)
      hold_flush(x, h);
  }
}

static void stack_rows(struct ex *x, const struct stack *st) {
  struct gt_frame f[EX_MAX_FRAMES];
  int n = gt_symtab_stack(gt_model_symtab(x->m), st->pid, st->id, f, EX_MAX_FRAMES);
  v_int(x, st->pid);
  v_int(x, st->id);
  v_int(x, st->depth);
  v_int(x, st->python);
  emit(x, EX_STACKS);
  for (int i = 0; i < n; i++) {
    v_int(x, st->pid);
    v_int(x, st->id);
    v_int(x, i);
    v_text(x, f[i].function);
    v_text(x, f[i].file);
    v_int(x, f[i].line);
    v_text(x, f[i].module);
    v_int(x, f[i].python != 0);
    if (f[i].python || f[i].ip == 0) /* (0: the mark of a stack cut short) */
      v_null(x);
    else
      v_int(x, (int64_t)gt_stack_addr(f[i].ip));
    emit(x, EX_FRAMES);
  }
}

static void opt_ns(struct ex *x, int64_t ns) {
  if (ns == INT64_MIN)
    v_null(x);
  else
    v_int(x, ns);
}

static void proc_rows(struct ex *x) {
  for (size_t i = 0; i < x->nprocs; i++) {
    const struct proc *p = &x->procs[i];
    int ended = p->end != INT64_MIN;
    v_int(x, p->pid);
    v_int(x, p->ppid);
    opt_ns(x, p->start);
    opt_ns(x, p->end);
    v_int(x, p->exited);
    v_text(x, p->cmdline);
    for (int k = 0; k < 3; k++) {
      uint64_t n = k == 0 ? p->records : k == 1 ? p->dropped : p->lost;
      if (ended)
        v_int(x, (int64_t)n);
      else
        v_null(x);
    }
    emit(x, EX_PROCESSES);
  }
  for (size_t i = 0; i < x->nthreads; i++) {
    const struct thread *t = &x->threads[i];
    v_int(x, t->pid);
    v_int(x, t->tid);
    v_ns(x, t->first);
    v_ns(x, t->last);
    v_int(x, (int64_t)t->calls);
    emit(x, EX_THREADS);
  }
}

static void meta(struct ex *x, const char *key, uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, v);
  v_name(x, key);
  v_name(x, b);
  emit(x, EX_METADATA);
}

static void meta_rows(struct ex *x, const char *path) {
  const struct gt_file_header *h = gt_session_header(x->s);
  meta(x, "schema_version", EX_SCHEMA_VERSION);
  v_name(x, "gputrace_version");
  v_name(x, GT_VERSION);
  emit(x, EX_METADATA);
  v_name(x, "trace");
  v_text(x, path);
  emit(x, EX_METADATA);
  meta(x, "origin_ns", x->origin); /* CLOCK_MONOTONIC */
  if (h && h->realtime_ns)
    meta(x, "origin_realtime_ns", h->realtime_ns + (x->origin - h->monotonic_ns));
  if (x->f->has_pid)
    meta(x, "pid", x->f->pid);
  meta(x, "from_ns", x->f->from_ns);
  if (x->f->to_ns != UINT64_MAX)
    meta(x, "to_ns", x->f->to_ns);
  meta(x, "records", gt_model_totals(x->m)->records);
  meta(x, "unmatched_device", x->unmatched);
}

static void finish_rows(struct ex *x, const char *path) {
  hold_flush_all(x);
  gt_heap_foreach(gt_model_heap(x->m), live_cb, x);
  gt_rgpu_flush(x->rgpu); /* closed ranges' rows; open ones' GPU time */
  gt_model_open_ranges(x->m, open_range_cb, x);
  for (size_t i = 0; i < x->nstacks; i++)
    stack_rows(x, &x->stacks[i]);
  proc_rows(x);
  meta_rows(x, path);
}

static void ex_free(struct ex *x) {
  gt_rgpu_free(x->rgpu);
  for (size_t i = 0; i < x->nranges; i++)
    free((char *)x->ranges[i].g.name);
  free(x->ranges);
  free(x->free_ranges);
  for (unsigned i = 0; i < EX_MAX_COLUMNS; i++)
    free(x->tbuf[i]);
  free(x->hold);
  gt_map_free(&x->hold_idx);
  gt_map_free(&x->dev_idx);
  for (size_t i = 0; i < x->nprocs; i++)
    free(x->procs[i].cmdline);
  free(x->procs);
  gt_map_free(&x->proc_idx);
  free(x->threads);
  gt_map_free(&x->thread_idx);
  free(x->stacks);
  gt_map_free(&x->stack_idx);
}

int ex_run(struct gt_session_opts *so, const struct ex_filter *f, struct ex_writer *w,
           struct ex_result *res, char *err, size_t errlen) {
  memset(res, 0, sizeof *res);
  so->layers = GT_LAYER_HEAP | GT_LAYER_NVTX | GT_LAYER_SYMBOLS;
  so->ordered = 0;
  if (!(res->session = gt_session_open(so, err, errlen)))
    return -1;
  struct ex x = {.w = w, .f = f, .s = res->session};
  x.m = gt_session_model(x.s);
  x.hold = gt_xcalloc(EX_HOLD, sizeof *x.hold);
  gt_map_init(&x.hold_idx);
  gt_map_init(&x.dev_idx);
  gt_map_init(&x.proc_idx);
  gt_map_init(&x.thread_idx);
  gt_map_init(&x.stack_idx);
  struct gt_rgpu_hooks hooks = {.ctx = &x, .done = range_done};
  x.rgpu = gt_rgpu_new(0, &hooks);
  struct gt_tool tool = {.ctx = &x, .range_open = range_open};
  gt_tool_all(&tool, on_event);
  gt_session_run(x.s, &tool);
  if (!x.origin)
    x.origin = gt_session_origin(x.s);
  finish_rows(&x, so->path);
  if (!x.failed && w->finish(w->ctx) != 0)
    x.failed = 1;
  res->rows = x.rows;
  res->unmatched_device = x.unmatched;
  res->failed = x.failed;
  ex_free(&x);
  return 0;
}
