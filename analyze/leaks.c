/* leaks.c — see leaks.h. */
#include "leaks.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "gputrace/trace_file.h"
#include "util.h"

#define MAX_FRAMES 256

/* ---- groups: (pid, stack, memory) -> struct gt_group ---- */

struct groups {
  struct gt_map index;
  struct gt_group *items;
  size_t n, cap;
};

static uint64_t group_key(uint32_t pid, uint32_t stack, unsigned memory) {
  return gt_pid_key(pid, ((uint64_t)stack << 2) | (memory & 3));
}

static struct gt_group *group(struct groups *g, uint32_t pid, uint32_t stack,
                              unsigned memory) {
  uint64_t key = group_key(pid, stack, memory), i;
  if (gt_map_get(&g->index, key, &i))
    return &g->items[i];
  g->items = gt_grow(g->items, &g->cap, g->n + 1, sizeof *g->items);
  memset(&g->items[g->n], 0, sizeof g->items[0]);
  g->items[g->n].pid = pid;
  g->items[g->n].stack_id = stack;
  g->items[g->n].memory = (uint8_t)memory;
  gt_map_put(&g->index, key, g->n);
  return &g->items[g->n++];
}

static void groups_free(struct groups *g) {
  gt_map_free(&g->index);
  free(g->items);
}

/* ---- per-run state ---- */

struct thread_range { /* outermost NVTX push range open on a thread */
  uint32_t depth;
  uint32_t name; /* range id (1-based) */
};

struct run {
  struct gt_leaks *out;
  struct gt_heap *heap;
  struct gt_map threads;    /* (pid, tid) -> depth << 32 | name */
  struct gt_map proc_index; /* pid -> index in out->procs */
  size_t procs_cap, names_cap, invalid_cap;
  struct groups allocated, live;
  uint64_t record; /* index of the current record */
  int pass;
  uint64_t bucket_ns;
  int bucket;
};

static struct gt_proc_summary *proc(struct run *r, uint32_t pid) {
  uint64_t i;
  struct gt_leaks *o = r->out;
  if (gt_map_get(&r->proc_index, pid, &i))
    return &o->procs[i];
  o->procs = gt_grow(o->procs, &r->procs_cap, o->nprocs + 1, sizeof *o->procs);
  memset(&o->procs[o->nprocs], 0, sizeof o->procs[0]);
  o->procs[o->nprocs].pid = pid;
  gt_map_put(&r->proc_index, pid, o->nprocs);
  return &o->procs[o->nprocs++];
}

static uint32_t range_id(struct run *r, const char *name) {
  struct gt_leaks *o = r->out;
  size_t idx = gt_strtab_intern(&o->ranges, name);
  if (idx >= r->names_cap) {
    size_t old = r->names_cap;
    o->range_counts =
        gt_grow(o->range_counts, &r->names_cap, idx + 1, sizeof *o->range_counts);
    memset(o->range_counts + old, 0, (r->names_cap - old) * sizeof *o->range_counts);
  }
  return (uint32_t)idx + 1;
}

/* Track the outermost push range per thread; returns its id for allocations. */
static void track_nvtx(struct run *r, const struct gt_record *rec) {
  uint64_t key = gt_pid_key(rec->pid, rec->tid), v = 0;
  gt_map_get(&r->threads, key, &v);
  uint32_t depth = (uint32_t)(v >> 32), name = (uint32_t)v;
  if (rec->u.nvtx.op == GT_NVTX_PUSH) {
    if (depth == 0) {
      char text[GT_TEXT_MAX + 1];
      gt_record_text(rec, rec->u.nvtx.text_len, text, sizeof text);
      name = range_id(r, text);
      if (r->pass == 1)
        r->out->range_counts[name - 1]++;
    }
    depth++;
  } else if (rec->u.nvtx.op == GT_NVTX_POP && depth > 0) {
    depth--;
  }
  gt_map_put(&r->threads, key, (uint64_t)depth << 32 | (depth ? name : 0));
}

static uint32_t current_range(struct run *r, const struct gt_record *rec) {
  uint64_t v = 0;
  gt_map_get(&r->threads, gt_pid_key(rec->pid, rec->tid), &v);
  return (uint32_t)(v >> 32) ? (uint32_t)v : 0;
}

static void note_invalid(struct run *r, const struct gt_record *rec,
                         enum gt_free_status st, const struct gt_block *b) {
  struct gt_leaks *o = r->out;
  o->invalid_total++;
  if (o->ninvalid >= GT_MAX_INVALID)
    return;
  o->invalid = gt_grow(o->invalid, &r->invalid_cap, o->ninvalid + 1, sizeof *o->invalid);
  int known =
      st == GT_FREE_WRONG_KIND || (st == GT_FREE_FAILED && b->ptr == rec->u.mem.ptr);
  o->invalid[o->ninvalid++] =
      (struct gt_invalid_free){.pid = rec->pid,
                               .tid = rec->tid,
                               .stack_id = rec->stack_id,
                               .alloc_stack = known ? b->stack_id : 0,
                               .ptr = rec->u.mem.ptr,
                               .ts_ns = rec->ts_ns,
                               .api = rec->api,
                               .result = rec->result,
                               .status = st,
                               .alloc_memory = known ? b->memory : GT_MEM_UNKNOWN};
}

/* ---- pass 2: peaks and growth ---- */

static void snapshot_cb(void *ctx, const struct gt_block *b) {
  void **args = ctx;
  struct groups *g = args[0];
  const uint32_t *pid = args[1];
  if (b->pid != *pid || b->memory != GT_MEM_DEVICE || (gt_api_flags(b->api) & GT_AF_IPC))
    return; /* an IPC mapping is not in the peak (heap.h) */
  struct gt_group *grp = group(g, b->pid, b->stack_id, b->memory);
  grp->bytes += b->bytes;
  grp->blocks++;
}

static int by_bytes_desc(const void *a, const void *b) {
  const struct gt_group *x = a, *y = b;
  return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static void snapshot_peak(struct run *r, struct gt_proc_summary *p) {
  struct groups g = {0};
  void *args[2] = {&g, &p->pid};
  gt_heap_foreach(r->heap, snapshot_cb, args);
  if (g.n)
    qsort(g.items, g.n, sizeof *g.items, by_bytes_desc);
  p->at_peak = g.items;
  p->nat_peak = g.n;
  gt_map_free(&g.index);
}

/* Record live bytes for every step that ended before `ts` (all of them for
 * ts == UINT64_MAX, at the end). */
static void close_buckets(struct run *r, uint64_t ts) {
  if (!r->bucket_ns)
    return;
  uint64_t steps =
      ts == UINT64_MAX ? GT_GROWTH_BUCKETS : (ts - r->out->first_ns) / r->bucket_ns;
  int b = steps > GT_GROWTH_BUCKETS - 1 && ts != UINT64_MAX ? GT_GROWTH_BUCKETS - 1
                                                            : (int)steps;
  for (; r->bucket < b; r->bucket++)
    for (size_t i = 0; i < r->live.n; i++)
      r->live.items[i].series[r->bucket] = r->live.items[i].bytes;
}

/* ---- both passes ---- */

static void on_memory(struct run *r, const struct gt_record *rec) {
  if (rec->flags & GT_F_VMM_MAP) /* cuMemMap/cuMemUnmap: cuMemCreate holds the memory */
    return;
  if (rec->kind == GT_KIND_ALLOC) {
    gt_heap_alloc(r->heap, rec, current_range(r, rec));
    if (rec->result != 0 || !rec->u.mem.ptr)
      return;
    unsigned mem = rec->u.mem.memory & 3;
    struct groups *g = r->pass == 1 ? &r->allocated : &r->live;
    struct gt_group *grp = group(g, rec->pid, rec->stack_id, mem);
    grp->bytes += rec->u.mem.bytes;
    grp->blocks++;
    if (r->pass == 1 && mem == GT_MEM_DEVICE) {
      struct gt_proc_summary *p = proc(r, rec->pid);
      uint64_t live = gt_heap_live_bytes(r->heap, rec->pid, GT_MEM_DEVICE);
      if (live > p->peak_device) {
        p->peak_device = live;
        p->peak_ts = rec->ts_ns;
        p->peak_record = r->record;
      }
    }
    return;
  }
  struct gt_block b = {0};
  enum gt_free_status st = gt_heap_release(r->heap, rec, &b);
  if (st == GT_FREE_OK && r->pass == 2) {
    struct gt_group *grp = group(&r->live, b.pid, b.stack_id, b.memory);
    grp->bytes -= b.bytes;
    grp->blocks--;
  } else if (st != GT_FREE_OK && st != GT_FREE_NULL && st != GT_FREE_UNTRACKED &&
             r->pass == 1) {
    note_invalid(r, rec, st, &b);
  }
}

static void on_record(struct run *r, const struct gt_record *rec) {
  struct gt_leaks *o = r->out;
  if (r->pass == 1) {
    gt_symtab_feed(o->symtab, rec);
    if (rec->kind < GT_KIND_PROCESS && rec->ts_ns) {
      if (!o->first_ns || rec->ts_ns < o->first_ns)
        o->first_ns = rec->ts_ns;
      if (rec->ts_ns > o->last_ns)
        o->last_ns = rec->ts_ns;
    }
    if (rec->kind == GT_KIND_PROCESS && rec->u.proc.phase == GT_PROC_END) {
      struct gt_proc_summary *p = proc(r, rec->pid);
      p->ended = 1;
      p->exited |= rec->u.proc.exited != 0;
    }
  } else if (rec->kind < GT_KIND_PROCESS && rec->ts_ns) {
    close_buckets(r, rec->ts_ns);
  }
  if (rec->kind == GT_KIND_NVTX)
    track_nvtx(r, rec);
  else if (rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE)
    on_memory(r, rec);
  if (r->pass == 2 && rec->kind == GT_KIND_ALLOC)
    for (size_t i = 0; i < o->nprocs; i++)
      if (o->procs[i].pid == rec->pid && o->procs[i].peak_record == r->record &&
          o->procs[i].peak_device && !o->procs[i].at_peak)
        snapshot_peak(r, &o->procs[i]);
}

static int read_pass(struct run *r, const char *path, char *err, size_t errlen) {
  struct gt_reader *rd = gt_reader_open(path, err, errlen);
  if (!rd)
    return -1;
  if (r->pass == 2)
    gt_reader_set_quiet(rd, 1); /* pass 1 has said it all */
  const struct gt_record *rec;
  r->record = 0;
  while (gt_reader_next(rd, &rec) == 1) {
    on_record(r, rec);
    r->record++;
  }
  if (gt_reader_warnings(rd))
    r->out->damaged = 1;
  gt_reader_close(rd);
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
static void judge_growth(struct gt_group *g, double step_min) {
  const uint64_t *s = g->series;
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
  double den = n * sxx - sx * sx;
  g->bytes_per_min = den > 0 ? (n * sxy - sx * sy) / den : 0;
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
  r->bucket_ns = r->bucket_ns ? r->bucket_ns : 1;
  close_buckets(r, UINT64_MAX); /* the steps left, the last included */
  struct groups leaked = {0};
  gt_heap_foreach(r->heap, leak_cb, &leaked);
  double step_min = (double)r->bucket_ns / 6e10;
  struct gt_frame frames[MAX_FRAMES];
  for (size_t i = 0; i < leaked.n; i++) {
    struct gt_group *g = &leaked.items[i];
    uint64_t idx;
    if (gt_map_get(&r->live.index, group_key(g->pid, g->stack_id, g->memory), &idx))
      memcpy(g->series, r->live.items[idx].series, sizeof g->series);
    judge_growth(g, step_min);
    int n = gt_symtab_stack(o->symtab, g->pid, g->stack_id, frames, MAX_FRAMES);
    g->suppressed = suppressed(sup, frames, n);
    if (g->suppressed) {
      o->suppressed_bytes += g->bytes;
      o->suppressed_blocks += g->blocks;
    }
  }
  if (leaked.n) /* qsort's pointer must not be NULL, even for no items */
    qsort(leaked.items, leaked.n, sizeof *leaked.items, by_bytes_desc);
  if (r->allocated.n)
    qsort(r->allocated.items, r->allocated.n, sizeof *r->allocated.items, by_bytes_desc);
  o->leaks = leaked.items;
  o->nleaks = leaked.n;
  o->allocated = r->allocated.items;
  o->nallocated = r->allocated.n;
  gt_map_free(&leaked.index);
  gt_map_free(&r->allocated.index);
}

int gt_leaks_run(const char *path, const struct gt_suppressions *sup,
                 struct gt_leaks *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->symtab = gt_symtab_new();
  struct run r = {.out = out, .heap = gt_heap_new(), .pass = 1};
  int rc = read_pass(&r, path, err, errlen);
  if (rc == 0) {
    gt_heap_free(r.heap);
    r.heap = gt_heap_new();
    gt_map_free(&r.threads);
    r.pass = 2;
    uint64_t span = out->last_ns > out->first_ns ? out->last_ns - out->first_ns : 0;
    r.bucket_ns = span / GT_GROWTH_BUCKETS + 1;
    rc = read_pass(&r, path, err, errlen);
  }
  if (rc == 0)
    finish(&r, sup);
  else
    groups_free(&r.allocated);
  gt_heap_free(r.heap);
  groups_free(&r.live);
  gt_map_free(&r.threads);
  gt_map_free(&r.proc_index);
  return rc;
}

void gt_leaks_free(struct gt_leaks *l) {
  gt_symtab_free(l->symtab);
  free(l->leaks);
  free(l->allocated);
  free(l->invalid);
  for (size_t i = 0; i < l->nprocs; i++)
    free(l->procs[i].at_peak);
  free(l->procs);
  gt_strtab_free(&l->ranges);
  free(l->range_counts);
  memset(l, 0, sizeof *l);
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

const struct gt_frame *gt_leaks_origin(const struct gt_frame *f, int n) {
  /* Python code that allocated (through an extension or ctypes) is the
   * answer to "which line": the innermost Python frame. */
  for (int i = 0; i < n; i++)
    if (f[i].python)
      return &f[i];
  for (int i = 0; i < n; i++) {
    /* cuda_runtime.h's C++ wrappers (cudaMallocHost<T> -> cudaHostAlloc)
     * and the runtime itself are not where the user's code asked. */
    if (ends_with(f[i].file, "cuda_runtime.h") ||
        ends_with(f[i].file, "cuda_runtime_api.h") ||
        strncmp(f[i].module, "libcudart", 9) == 0 ||
        strncmp(f[i].function, "cudaError cuda", 14) == 0) /* the same without -g */
      continue;
    return &f[i];
  }
  return n ? &f[0] : NULL;
}
