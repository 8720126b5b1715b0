/* leaks.c — see leaks.h.
 *
 * One session over the trace (allocations, frees and NVTX records in time
 * order), with the allocation, NVTX, symbol and graph layers. The allocation
 * layer matches frees and keeps what is live;
 * this file adds, per (process, stack, memory kind), what was allocated,
 * the growth series and the stacks at each process's peak. The series'
 * time steps need the run's span: when the first and last chunks of a
 * plain file tell it (gt_trace_peek_ends), every change to live bytes
 * goes into the series as it comes and the groups keep their bytes at
 * their process's latest peak lazily (snap_*: taken at a group's first
 * change after a peak), and the span read is checked against the guess at
 * the end. Otherwise, or when the guess was wrong, the changes are replayed
 * once the whole trace has been read: from a log (32 bytes per successful
 * alloc or free) or, past its bound (o->log_max), from a second session
 * over the file.
 */
#include "leaks.h"
#include "progress.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "session.h"
#include "util.h"

#define MAX_FRAMES 256
#define LOG_MAX_DEFAULT (1u << 21) /* 64 MiB of log */

/* ---- groups: (pid, stack, memory) -> struct gt_group ---- */

#define GROUP_CACHE 16 /* direct-mapped, by stack: a run's few busy stacks */

struct groups {
  struct gt_map index;
  struct gt_group *items;
  size_t n, cap;
  uint64_t cache_key[GROUP_CACHE];
  size_t cache_item[GROUP_CACHE]; /* index + 1; 0: empty */
};

static uint64_t group_key(uint32_t pid, uint32_t stack, unsigned memory) {
  return gt_pid_key(pid, ((uint64_t)stack << 2) | (memory & 3));
}

static struct gt_group *group_slow(struct groups *g, uint32_t pid, uint32_t stack,
                                   unsigned memory, uint64_t key, unsigned c);

/* The group, from the cache when it is there (inline: the common case is a
 * compare, without the slow path's register saves). */
static inline struct gt_group *group(struct groups *g, uint32_t pid, uint32_t stack,
                                     unsigned memory) {
  uint64_t key = group_key(pid, stack, memory);
  unsigned c = (stack ^ pid) % GROUP_CACHE;
  if (g->cache_item[c] && g->cache_key[c] == key)
    return &g->items[g->cache_item[c] - 1];
  return group_slow(g, pid, stack, memory, key, c);
}

__attribute__((noinline)) static struct gt_group *group_slow(struct groups *g,
                                                             uint32_t pid, uint32_t stack,
                                                             unsigned memory,
                                                             uint64_t key, unsigned c) {
  size_t i;
  int added;
  g->items = gt_find_or_add(&g->index, key, g->items, &g->n, &g->cap, sizeof *g->items,
                            &i, &added);
  g->cache_key[c] = key;
  g->cache_item[c] = i + 1;
  if (added) {
    g->items[i].pid = pid;
    g->items[i].stack_id = stack;
    g->items[i].memory = (uint8_t)memory;
  }
  return &g->items[i];
}

static void groups_free(struct groups *g) {
  gt_map_free(&g->index);
  free(g->items);
}

/* Largest first; ties by process, stack and memory kind (a stable report). */
static int by_bytes_desc(const void *a, const void *b) {
  const struct gt_group *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->stack_id != y->stack_id)
    return x->stack_id < y->stack_id ? -1 : 1;
  return (int)x->memory - (int)y->memory;
}

static void sort_groups(struct gt_group *g, size_t n) {
  if (n) /* qsort's pointer must not be NULL, even for no items */
    qsort(g, n, sizeof *g, by_bytes_desc);
}

/* ---- per-run state ---- */

struct change { /* live bytes of a group went up or down */
  uint64_t ts, bytes;
  uint32_t pid, stack_id;
  uint8_t memory, up;
};

struct run {
  struct gt_leaks *out;
  struct gt_model *model;
  struct gt_map proc_index; /* pid -> index in out->procs */
  size_t procs_cap, names_cap, invalid_cap;
  struct groups allocated, live;
  struct change *log; /* NULL once past log_max: replayed from the file */
  size_t nlog, log_cap, log_max;
  uint64_t changes;   /* index of the next change */
  uint64_t device_up; /* 1 + index of the last allocation of device memory */
  uint64_t bucket_ns; /* the series' step: changes go into it as they come */
  uint64_t next_edge; /* when the step after `bucket` ends (close_buckets') */
  int bucket;
  int one_pass;        /* bucket_ns from a guessed span; peaks kept lazily */
  int second;          /* the second session: only the changes again */
  uint32_t cached_pid; /* proc_cached's: the last process asked for, */
  size_t cached_proc;  /* ... its index in out->procs (+1; 0: none) */
  int no_wait;         /* gt_leaks_opts.no_wait, for the second session */
};

static struct gt_proc_summary *proc(struct run *r, uint32_t pid) {
  struct gt_leaks *o = r->out;
  size_t i;
  int added;
  o->procs = gt_find_or_add(&r->proc_index, pid, o->procs, &o->nprocs, &r->procs_cap,
                            sizeof *o->procs, &i, &added);
  o->procs[i].pid = pid;
  return &o->procs[i];
}

/* proc() for the process of the last call, without a lookup: one process
 * makes the changes of a run of records. */
__attribute__((noinline)) static void proc_cache(struct run *r, uint32_t pid) {
  r->cached_proc = (size_t)(proc(r, pid) - r->out->procs) + 1;
  r->cached_pid = pid;
}
static inline struct gt_proc_summary *proc_cached(struct run *r, uint32_t pid) {
  if (!r->cached_proc || r->cached_pid != pid)
    proc_cache(r, pid);
  return &r->out->procs[r->cached_proc - 1];
}

/* The NVTX layer's open hook: the outermost push range of a thread gets
 * the id (1-based) of its name, which allocations inside it carry. */
static uint64_t range_open(void *ctx, const struct gt_record *rec) {
  struct run *r = ctx;
  struct gt_leaks *o = r->out;
  if (rec->u.nvtx.op != GT_NVTX_PUSH ||
      gt_model_thread_depth(r->model, rec->pid, rec->tid))
    return 0;
  size_t idx = gt_strtab_intern(&o->ranges, gt_model_text(r->model, rec));
  if (idx >= r->names_cap) {
    size_t old = r->names_cap;
    o->range_counts =
        gt_grow(o->range_counts, &r->names_cap, idx + 1, sizeof *o->range_counts);
    memset(o->range_counts + old, 0, (r->names_cap - old) * sizeof *o->range_counts);
  }
  o->range_counts[idx]++;
  return idx + 1;
}

static void note_invalid(struct run *r, const struct gt_event *ev) {
  struct gt_leaks *o = r->out;
  const struct gt_record *rec = ev->rec;
  const struct gt_block *b = ev->block; /* the allocation, when it is known */
  o->invalid_total++;
  if (o->ninvalid >= GT_MAX_INVALID)
    return;
  o->invalid = gt_grow(o->invalid, &r->invalid_cap, o->ninvalid + 1, sizeof *o->invalid);
  o->invalid[o->ninvalid++] =
      (struct gt_invalid_free){.pid = rec->pid,
                               .tid = rec->tid,
                               .stack_id = rec->stack_id,
                               .alloc_stack = b ? b->stack_id : 0,
                               .ptr = rec->u.mem.ptr,
                               .ts_ns = rec->ts_ns,
                               .api = rec->api,
                               .result = rec->result,
                               .status = ev->free_status,
                               .alloc_memory = b ? b->memory : GT_MEM_UNKNOWN};
}

/* ---- the replay: growth steps and peaks ---- */

static void snapshot_peak(struct run *r, struct gt_proc_summary *p) {
  struct gt_group *at = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < r->live.n; i++) {
    const struct gt_group *g = &r->live.items[i];
    if (g->pid != p->pid || g->memory != GT_MEM_DEVICE || !g->blocks)
      continue;
    at = gt_grow(at, &cap, n + 1, sizeof *at);
    at[n] = *g;
    memset(at[n++].series, 0, sizeof at->series);
  }
  sort_groups(at, n);
  p->at_peak = at;
  p->nat_peak = n;
}

/* Record live bytes for every step that ended before `ts` (all of them for
 * ts == UINT64_MAX, at the end). */
static void close_buckets(struct run *r, uint64_t ts) {
  uint64_t steps =
      ts == UINT64_MAX ? GT_GROWTH_BUCKETS : (ts - r->out->first_ns) / r->bucket_ns;
  int b = steps > GT_GROWTH_BUCKETS - 1 && ts != UINT64_MAX ? GT_GROWTH_BUCKETS - 1
                                                            : (int)steps;
  for (; r->bucket < b; r->bucket++)
    for (size_t i = 0; i < r->live.n; i++)
      r->live.items[i].series[r->bucket] = r->live.items[i].bytes;
  /* a change before this time closes nothing: replay skips the division */
  r->next_edge = r->bucket >= GT_GROWTH_BUCKETS - 1
                     ? UINT64_MAX
                     : r->out->first_ns + (uint64_t)(r->bucket + 1) * r->bucket_ns;
}

/* One pass: a device group about to change keeps what it held at its
 * process's latest peak, if it has not changed since. */
static inline void keep_at_peak(struct run *r, struct gt_group *g) {
  uint64_t epoch = proc_cached(r, g->pid)->peak_epoch;
  if (g->snap_epoch != epoch) {
    g->snap_bytes = g->bytes;
    g->snap_blocks = g->blocks;
    g->snap_epoch = epoch;
  }
}

/* One pass, at the end: each process's stacks at its peak from the snaps. */
static void peaks_from_snaps(struct run *r) {
  for (size_t k = 0; k < r->out->nprocs; k++) {
    struct gt_proc_summary *p = &r->out->procs[k];
    if (!p->peak_device || !p->peak_epoch || p->peak_record == UINT64_MAX)
      continue;
    struct gt_group *at = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < r->live.n; i++) {
      const struct gt_group *g = &r->live.items[i];
      int snapped = g->snap_epoch == p->peak_epoch;
      uint64_t blocks = snapped ? g->snap_blocks : g->blocks;
      if (g->pid != p->pid || g->memory != GT_MEM_DEVICE || !blocks)
        continue;
      at = gt_grow(at, &cap, n + 1, sizeof *at);
      at[n] = *g;
      at[n].bytes = snapped ? g->snap_bytes : g->bytes;
      at[n].blocks = blocks;
      memset(at[n++].series, 0, sizeof at->series);
    }
    sort_groups(at, n);
    p->at_peak = at;
    p->nat_peak = n;
  }
}

/* Inline: change() calls it for every allocation and free. */
static inline __attribute__((always_inline)) void
replay(struct run *r, const struct change *c, uint64_t index) {
  if (c->ts && c->ts >= r->next_edge)
    close_buckets(r, c->ts);
  struct gt_group *g = group(&r->live, c->pid, c->stack_id, c->memory);
  if (r->one_pass && c->memory == GT_MEM_DEVICE)
    keep_at_peak(r, g);
  g->bytes += c->up ? c->bytes : -c->bytes;
  g->blocks += c->up ? 1 : (uint64_t)-1;
  if (!c->ts && c->up)
    g->carried += c->bytes;
  if (!c->up || c->memory != GT_MEM_DEVICE || r->one_pass)
    return;
  struct gt_proc_summary *p = proc(r, c->pid);
  if (p->peak_record == index && p->peak_device && !p->at_peak)
    snapshot_peak(r, p);
}

/* A change to live bytes: logged in the first session, replayed at once in
 * the second. */
static void change(struct run *r, const struct gt_record *rec, const struct gt_block *b,
                   int up) {
  if (gt_api_flags(b->api) & GT_AF_IPC)
    return; /* another process's memory: not in this one's growth or peak (heap.h) */
  /* a carried block (a rolling file's start) was live before the first step */
  uint64_t ts = rec->flags & GT_F_CARRIED ? 0 : rec->ts_ns;
  struct change c = {ts,         b->bytes, b->pid, b->stack_id, (uint8_t)(b->memory & 3),
                     (uint8_t)up};
  uint64_t index = r->changes++;
  if (r->bucket_ns) {
    replay(r, &c, index);
  } else if (r->log && r->nlog < r->log_max) {
    r->log = gt_grow(r->log, &r->log_cap, r->nlog + 1, sizeof *r->log);
    r->log[r->nlog++] = c;
  } else {
    free(r->log); /* too long: replayed from the file instead */
    r->log = NULL;
  }
}

/* ---- the session's handlers ---- */

static void on_alloc(void *ctx, const struct gt_event *ev) {
  struct run *r = ctx;
  const struct gt_record *rec = ev->rec;
  if (!r->second) /* the first read: the last allocation, out of memory or not */
    gt_oom_see(&r->out->oom, r->model, rec, r->changes);
  if (rec->result != 0 || !rec->u.mem.ptr || (rec->flags & GT_F_VMM_MAP))
    return;      /* cuMemMap holds no memory: cuMemCreate does */
  if (ev->block) /* a live block at this address whose free we did not see */
    change(r, rec, ev->block, 0);
  struct gt_block b = {.bytes = rec->u.mem.bytes,
                       .api = rec->api,
                       .pid = rec->pid,
                       .stack_id = rec->stack_id,
                       .memory = rec->u.mem.memory & 3};
  uint64_t index = r->changes;
  change(r, rec, &b, 1);
  if (r->second) /* the replaying session: the rest is known */
    return;
  if (!(rec->flags & GT_F_CARRIED)) { /* carried: allocated before the first file */
    struct gt_group *grp = group(&r->allocated, rec->pid, rec->stack_id, b.memory);
    grp->bytes += b.bytes;
    grp->blocks++;
  }
  if (b.memory == GT_MEM_DEVICE) {
    r->device_up = index + 1;
    struct gt_proc_summary *p = proc_cached(r, rec->pid);
    uint64_t live = gt_model_live_bytes(r->model, rec->pid, GT_MEM_DEVICE);
    if (live > p->peak_device) {
      p->peak_device = live;
      p->peak_ts = rec->ts_ns;
      p->peak_record = index;
      p->peak_epoch++; /* one pass: what the groups hold now is at the peak */
    }
  }
}

static void on_free(void *ctx, const struct gt_event *ev) {
  struct run *r = ctx;
  if (ev->free_status == GT_FREE_OK)
    change(r, ev->rec, ev->block, 0);
  else if (ev->free_status != GT_FREE_NULL && ev->free_status != GT_FREE_UNTRACKED &&
           !r->second)
    note_invalid(r, ev);
}

/* A rolling file's carried peaks (the first file read): the files before
 * it went higher, or as high as what it carries (then the carried blocks
 * are the stacks at the peak). */
static void on_heap(void *ctx, const struct gt_event *ev) {
  struct run *r = ctx;
  const struct gt_record *rec = ev->rec;
  if (!(rec->flags & GT_F_CARRIED) || r->second)
    return;
  struct gt_proc_summary *p = proc(r, rec->pid);
  uint64_t peak = rec->u.heap.peak[GT_MEM_DEVICE];
  if (!peak || peak < p->peak_device)
    return; /* (equal: the carried blocks reached it; when is the record's) */
  p->peak_device = peak;
  p->peak_ts = rec->u.heap.peak_ts_ns[0];
  p->peak_record =
      peak == gt_model_live_bytes(r->model, rec->pid, GT_MEM_DEVICE) && r->device_up
          ? r->device_up - 1
          : UINT64_MAX; /* the stacks then are in a deleted file */
  p->peak_epoch++;      /* one pass: the carried blocks just came */
}

static void on_process(void *ctx, const struct gt_event *ev) {
  struct run *r = ctx;
  if (ev->rec->u.proc.phase != GT_PROC_END || r->second)
    return;
  struct gt_proc_summary *p = proc(r, ev->rec->pid);
  p->ended = 1;
  p->exited |= ev->rec->u.proc.exited != 0;
}

static struct gt_session *open_session(const char *path, unsigned layers, int quiet,
                                       int no_wait, struct gt_progress *pg,
                                       const char *cmd, char *err, size_t errlen) {
  /* Time order where it changes the result: frees and allocations of one
   * address from two threads, the range an allocation is made in. */
  struct gt_session_opts o = {.path = path,
                              .layers = layers,
                              .ordered = GT_ORDER_KIND(GT_KIND_ALLOC) |
                                         GT_ORDER_KIND(GT_KIND_FREE) |
                                         GT_ORDER_KIND(GT_KIND_NVTX),
                              .quiet = quiet,
                              .threads = -1,
                              .no_wait = no_wait};
  if (pg && cmd)
    gt_progress_watch(pg, cmd, 0, &o);
  return gt_session_open(&o, err, errlen);
}

static void run_session(struct gt_session *s, struct run *r) {
  struct gt_tool tool = {.ctx = r, .range_open = range_open};
  tool.on[GT_KIND_ALLOC] = on_alloc;
  tool.on[GT_KIND_FREE] = on_free;
  tool.on[GT_KIND_PROCESS] = on_process;
  tool.on[GT_KIND_HEAP] = on_heap;
  r->model = gt_session_model(s);
  gt_session_run(s, &tool);
}

/* The changes again, from a second session (the log was too long). */
static int replay_from_file(struct run *r, const char *path, char *err, size_t errlen) {
  struct gt_session *s = open_session(path, GT_LAYER_HEAP | GT_LAYER_GRAPHS, 1,
                                      r->no_wait, NULL, NULL, err, errlen);
  if (!s)
    return -1;
  struct gt_model *first = r->model;
  r->changes = 0;
  r->second = 1;
  run_session(s, r);
  gt_session_close(s);
  r->model = first;
  return 0;
}

/* ---- results ---- */

static void leak_cb(void *ctx, const struct gt_block *b) {
  struct groups *g = ctx;
  struct gt_group *grp = group(g, b->pid, b->stack_id, b->memory);
  grp->bytes += b->bytes;
  grp->blocks++;
  if (b->range) {
    grp->range_bytes += b->bytes;
    grp->range_name = b->range; /* refined below to the main one */
  }
}

/* Growth: see docs/leaks.md. The series holds live bytes at the end of
 * each of GT_GROWTH_BUCKETS equal steps of the run. */
static void judge_growth(struct gt_group *g, double step_min, int rated) {
  uint64_t s[GT_GROWTH_BUCKETS]; /* what came on top of the blocks carried in */
  for (int i = 0; i < GT_GROWTH_BUCKETS; i++)
    s[i] = g->series[i] - (g->series[i] < g->carried ? g->series[i] : g->carried);
  int ups = 0, downs = 0;
  for (int i = 1; i < GT_GROWTH_BUCKETS; i++) {
    ups += s[i] > s[i - 1];
    downs += s[i] < s[i - 1];
  }
  uint64_t last = s[GT_GROWTH_BUCKETS - 1];
  uint64_t quarter = s[GT_GROWTH_BUCKETS / 4 - 1], half = s[GT_GROWTH_BUCKETS / 2 - 1];
  g->growing =
      last > 0 && ups >= 3 && ups >= 2 * downs && last >= 2 * quarter && last > half;
  /* Least-squares slope of bytes over time. */
  double n = GT_GROWTH_BUCKETS, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < GT_GROWTH_BUCKETS; i++) {
    double x = (i + 1) * step_min, y = (double)s[i];
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double den = n * sxx - sx * sx, v = den > 0 ? (n * sxy - sx * sy) / den : 0;
  g->rated = rated;
  /* under a tenth of a byte a minute is flat: 0, never printed as -0.0 */
  g->bytes_per_min = rated && fabs(v) >= 0.05 ? v : 0;
}

static int suppressed(const struct gt_suppressions *sup, const struct gt_frame *f,
                      int n) {
  for (size_t p = 0; sup && p < sup->n; p++)
    for (int i = 0; i < n; i++)
      if (!fnmatch(sup->patterns[p], f[i].function, 0) ||
          !fnmatch(sup->patterns[p], f[i].file, 0) ||
          !fnmatch(sup->patterns[p], f[i].module, 0))
        return 1;
  return 0;
}

static void finish(struct run *r, const struct gt_suppressions *sup) {
  struct gt_leaks *o = r->out;
  struct groups leaked = {0};
  gt_heap_foreach(gt_model_heap(r->model), leak_cb, &leaked);
  double step_min = (double)r->bucket_ns / 6e10;
  struct gt_frame frames[MAX_FRAMES];
  for (size_t i = 0; i < leaked.n; i++) {
    struct gt_group *g = &leaked.items[i];
    uint64_t idx;
    if (gt_map_get(&r->live.index, group_key(g->pid, g->stack_id, g->memory), &idx))
      memcpy(g->series, r->live.items[idx].series, sizeof g->series),
          g->carried = r->live.items[idx].carried;
    judge_growth(g, step_min, o->last_ns - o->first_ns >= GT_GROWTH_MIN_NS);
    int n = gt_symtab_stack(o->symtab, g->pid, g->stack_id, frames, MAX_FRAMES);
    g->suppressed = suppressed(sup, frames, n);
    if (g->suppressed) {
      o->suppressed_bytes += g->bytes;
      o->suppressed_blocks += g->blocks;
    }
  }
  sort_groups(leaked.items, leaked.n);
  sort_groups(r->allocated.items, r->allocated.n);
  o->leaks = leaked.items;
  o->nleaks = leaked.n;
  o->allocated = r->allocated.items;
  o->nallocated = r->allocated.n;
  gt_map_free(&leaked.index);
  gt_map_free(&r->allocated.index);
}

static void set_span(struct run *r, uint64_t first, uint64_t last_start) {
  uint64_t span = last_start > first ? last_start - first : 0;
  r->out->first_ns = first;
  r->out->last_ns = last_start;
  r->bucket_ns = span / GT_GROWTH_BUCKETS + 1;
  r->next_edge = 0; /* the first change computes it */
}

/* The span the totals will have, from the first and last chunks. */
struct span_guess {
  uint64_t first, last_start;
};
static void guess_span(void *ctx, const struct gt_record *rec) {
  struct span_guess *g = ctx;
  if (!gt_record_timed(rec))
    return;
  if (!g->first || rec->ts_ns < g->first)
    g->first = rec->ts_ns;
  if (rec->ts_ns > g->last_start)
    g->last_start = rec->ts_ns;
}

/* One pass when the span can be guessed: the log is not kept. */
#define GUESS_TAIL_CHUNKS 3
static void try_one_pass(struct run *r, const char *path) {
  struct span_guess g = {0};
  if (gt_trace_peek_ends(path, GUESS_TAIL_CHUNKS, guess_span, &g) != 0 || !g.first)
    return;
  set_span(r, g.first, g.last_start);
  r->one_pass = 1;
  free(r->log);
  r->log = NULL;
}

/* The growth steps and peaks: kept in one pass (when its guess holds),
 * else from the log or a second session. */
static int replay_changes(struct run *r, const char *path, char *err, size_t errlen) {
  const struct gt_model_totals *t = gt_model_totals(r->model);
  if (r->one_pass && t->first_ns == r->out->first_ns &&
      t->last_start_ns == r->out->last_ns) {
    close_buckets(r, UINT64_MAX);
    peaks_from_snaps(r);
    return 0;
  }
  if (r->one_pass) { /* the span read is not the one guessed: again, from the file */
    groups_free(&r->live);
    memset(&r->live, 0, sizeof r->live);
    r->bucket = 0;
    r->one_pass = 0;
  }
  set_span(r, t->first_ns, t->last_start_ns);
  int rc = 0;
  if (r->log) {
    for (size_t i = 0; i < r->nlog; i++)
      replay(r, &r->log[i], i);
  } else {
    rc = replay_from_file(r, path, err, errlen);
  }
  close_buckets(r, UINT64_MAX); /* the steps left, the last included */
  return rc;
}

int gt_leaks_run(const char *path, const struct gt_leaks_opts *opts, struct gt_leaks *out,
                 char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  struct gt_progress pg = {0};
  struct gt_session *s = open_session(
      path, GT_LAYER_HEAP | GT_LAYER_NVTX | GT_LAYER_SYMBOLS | GT_LAYER_GRAPHS, 0,
      opts->no_wait, &pg, opts->cmd, err, errlen);
  if (!s)
    return -1;
  struct run r = {.out = out,
                  .log_max = opts->log_max ? opts->log_max : LOG_MAX_DEFAULT,
                  .no_wait = opts->no_wait};
  r.log = gt_grow(NULL, &r.log_cap, 1, sizeof *r.log);
  if (!opts->no_guess)
    try_one_pass(&r, path);
  run_session(s, &r);
  gt_progress_done(&pg);
  out->session = s;
  out->symtab = gt_model_symtab(r.model);
  out->damaged = gt_session_damaged(s);
  int rc = replay_changes(&r, path, err, errlen);
  out->passes = r.second ? 2 : 1;
  if (rc == 0)
    finish(&r, opts->sup);
  if (rc == 0)
    gt_oom_finish(&out->oom, out->symtab);
  else
    groups_free(&r.allocated);
  free(r.log);
  groups_free(&r.live);
  gt_map_free(&r.proc_index);
  return rc;
}

void gt_leaks_free(struct gt_leaks *l) {
  free(l->leaks);
  free(l->allocated);
  free(l->invalid);
  for (size_t i = 0; i < l->nprocs; i++)
    free(l->procs[i].at_peak);
  free(l->procs);
  gt_strtab_free(&l->ranges);
  free(l->range_counts);
  free(l->oom.stacks);
  gt_session_close(l->session); /* the symbols with it */
  memset(l, 0, sizeof *l);
}

void gt_leaks_site(struct gt_symtab *t, uint32_t pid, uint32_t stack_id, char *buf,
                   size_t len) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(t, pid, stack_id, f, MAX_FRAMES);
  const struct gt_frame *o = gt_leaks_origin(f, n);
  if (!o)
    snprintf(buf, len, "pid %u stack %u", pid, stack_id);
  else if (o->file[0])
    snprintf(buf, len, "%s at %s:%u", o->function, gt_base_name(o->file), o->line);
  else
    snprintf(buf, len, "%s", o->function);
}

/* ---- suppressions ---- */

int gt_suppressions_load(const char *path, struct gt_suppressions *s, char *err,
                         size_t len) {
  memset(s, 0, sizeof *s);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, len, "cannot read suppressions %s: %m", path);
    return -1;
  }
  char line[1024];
  size_t cap = 0;
  int lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '#')
      continue;
    if (strncmp(p, "leak:", 5) != 0 || p[5] == '\0') {
      snprintf(err, len, "%s:%d: expected 'leak:PATTERN', got '%s'", path, lineno, p);
      fclose(f);
      gt_suppressions_free(s);
      return -1;
    }
    /* LSan matches a substring: *PATTERN* */
    size_t n = strlen(p + 5) + 3;
    char *pat = malloc(n);
    if (!pat)
      abort();
    snprintf(pat, n, "*%s*", p + 5);
    s->patterns = gt_grow(s->patterns, &cap, s->n + 1, sizeof *s->patterns);
    s->patterns[s->n++] = pat;
  }
  fclose(f);
  return 0;
}

void gt_suppressions_free(struct gt_suppressions *s) {
  for (size_t i = 0; i < s->n; i++)
    free(s->patterns[i]);
  free(s->patterns);
  memset(s, 0, sizeof *s);
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The CUDA runtime and the code nvcc and its headers put between the
 * user's call and it: cuda_runtime.h's C++ wrappers (cudaMallocHost<T> ->
 * cudaHostAlloc), a <<<>>> launch's __cudaLaunchKernel_helper
 * (crt/device_functions.h) and __device_stub__ (the generated stub file). */
static int runtime_frame(const struct gt_frame *f) {
  return ends_with(f->file, "cuda_runtime.h") ||
         ends_with(f->file, "cuda_runtime_api.h") ||
         ends_with(f->file, "device_functions.h") || strstr(f->file, ".cudafe1.stub.c") ||
         strncmp(f->module, "libcudart", 9) == 0 ||
         strncmp(f->function, "cudaError cuda", 14) == 0 || /* the same without -g */
         strncmp(f->function, "__cudaLaunchKernel", 18) == 0 ||
         strncmp(f->function, "__device_stub__", 15) == 0;
}

int gt_glue_frames(const struct gt_frame *f, int n, int i) {
  if (f[i].python || !runtime_frame(&f[i]))
    return 0;
  /* A stub's caller is nvcc's host function named as the kernel (at the
   * kernel's declaration): the user's call is the frame after it. */
  if (strncmp(f[i].function, "__device_stub__", 15) == 0 && i + 1 < n)
    return 2;
  return 1;
}

const struct gt_frame *gt_leaks_origin(const struct gt_frame *f, int n) {
  /* Python code that allocated (through an extension or ctypes) is the
   * answer to "which line": the innermost Python frame. */
  for (int i = 0; i < n; i++)
    if (f[i].python)
      return &f[i];
  for (int i = 0, k; i < n; i += k)
    if ((k = gt_glue_frames(f, n, i)) == 0)
      return &f[i];
  return n ? &f[0] : NULL;
}
