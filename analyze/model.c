/* model.c — see model.h. */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_file.h"
#include "heap.h"
#include "util.h"

struct process {
  uint32_t pid;
  char *cmdline;
  uint64_t peak[4];
  uint64_t peak_device_total; /* device + managed */
};

struct open_range {
  char *name;
  uint64_t start_ns;
  uint64_t domain;
  uint32_t tid;
  uint64_t tag; /* from the open hook */
  uint32_t pid; /* for gt_model_open_ranges */
};

struct range_stack { /* pushes of one (pid, tid, domain) */
  struct open_range *items;
  size_t len, cap;
};

struct gt_model {
  struct gt_map kernels;    /* (pid, stub) -> char* */
  struct gt_heap *heap;     /* live allocations (heap.c, shared with leaks) */
  struct gt_map proc_index; /* pid -> index in procs */
  struct process *procs;
  size_t nprocs, cap_procs;
  struct gt_map stack_index; /* (pid, tid ^ domain) -> index in stacks */
  struct range_stack *stacks;
  size_t nstacks, cap_stacks;
  struct gt_map started; /* (pid, range id) -> struct open_range* */
  struct gt_model_totals totals;
  char *closed_name; /* name of the last completed range */
  char text[GT_TEXT_MAX + 1];
  char fallback[64];
  uint64_t (*open_hook)(void *ctx, const struct gt_record *open);
  void *open_ctx;
};

struct gt_model *gt_model_new(void) {
  struct gt_model *m = gt_xcalloc(1, sizeof *m);
  m->heap = gt_heap_new();
  return m;
}

static void free_values(struct gt_map *map) {
  for (size_t i = 0; i < map->cap; i++)
    if (map->used[i] == 1)
      free((void *)(uintptr_t)map->vals[i]);
  gt_map_free(map);
}

void gt_model_free(struct gt_model *m) {
  if (!m)
    return;
  free_values(&m->kernels);
  gt_heap_free(m->heap);
  gt_map_free(&m->proc_index);
  for (size_t i = 0; i < m->nprocs; i++)
    free(m->procs[i].cmdline);
  free(m->procs);
  gt_map_free(&m->stack_index);
  for (size_t i = 0; i < m->nstacks; i++) {
    for (size_t j = 0; j < m->stacks[i].len; j++)
      free(m->stacks[i].items[j].name);
    free(m->stacks[i].items);
  }
  free(m->stacks);
  for (size_t i = 0; i < m->started.cap; i++)
    if (m->started.used[i] == 1) {
      struct open_range *r = (void *)(uintptr_t)m->started.vals[i];
      free(r->name);
      free(r);
    }
  gt_map_free(&m->started);
  free(m->closed_name);
  free(m);
}

static struct process *process(struct gt_model *m, uint32_t pid) {
  uint64_t idx;
  if (gt_map_get(&m->proc_index, pid, &idx))
    return &m->procs[idx];
  m->procs = gt_grow(m->procs, &m->cap_procs, m->nprocs + 1, sizeof *m->procs);
  struct process *p = &m->procs[m->nprocs];
  memset(p, 0, sizeof *p);
  p->pid = pid;
  gt_map_put(&m->proc_index, pid, m->nprocs++);
  return p;
}

const char *gt_model_text(struct gt_model *m, const struct gt_record *rec) {
  gt_record_text(rec, gt_record_text_len(rec), m->text, sizeof m->text);
  return m->text;
}

static void track_memory(struct gt_model *m, struct gt_record *r) {
  if (r->kind == GT_KIND_FREE) {
    struct gt_block b;
    if (gt_heap_release(m->heap, r, &b) == GT_FREE_OK) {
      r->u.mem.bytes = b.bytes; /* a free learns what it freed */
      r->u.mem.memory = b.memory;
    }
    return;
  }
  gt_heap_alloc(m->heap, r, 0);
  /* cuMemMap/cuMemUnmap hold no memory: cuMemCreate/cuMemRelease do */
  if (r->result != 0 || r->u.mem.ptr == 0 || (r->flags & GT_F_VMM_MAP))
    return;
  struct process *p = process(m, r->pid);
  unsigned mem = r->u.mem.memory & 3;
  uint64_t live = gt_heap_live_bytes(m->heap, r->pid, mem);
  if (live > p->peak[mem])
    p->peak[mem] = live;
  uint64_t resident = gt_heap_live_bytes(m->heap, r->pid, GT_MEM_DEVICE) +
                      gt_heap_live_bytes(m->heap, r->pid, GT_MEM_MANAGED);
  if (resident > p->peak_device_total)
    p->peak_device_total = resident;
}

static struct range_stack *stack_of(struct gt_model *m, const struct gt_record *r) {
  uint64_t key = gt_pid_key(r->pid, (uint64_t)r->tid ^ (r->u.nvtx.domain << 32)), idx;
  if (gt_map_get(&m->stack_index, key, &idx))
    return &m->stacks[idx];
  m->stacks = gt_grow(m->stacks, &m->cap_stacks, m->nstacks + 1, sizeof *m->stacks);
  memset(&m->stacks[m->nstacks], 0, sizeof m->stacks[0]);
  gt_map_put(&m->stack_index, key, m->nstacks);
  return &m->stacks[m->nstacks++];
}

static void close_range(struct gt_model *m, struct open_range *o, uint32_t pid,
                        uint64_t end, int depth, struct gt_range *out) {
  free(m->closed_name);
  m->closed_name = o->name;
  *out = (struct gt_range){.pid = pid,
                           .tid = o->tid,
                           .start_ns = o->start_ns,
                           .end_ns = end,
                           .depth = depth,
                           .domain = o->domain,
                           .name = o->name,
                           .tag = o->tag};
}

static uint64_t open_tag(struct gt_model *m, const struct gt_record *r) {
  return m->open_hook ? m->open_hook(m->open_ctx, r) : 0;
}

void gt_model_set_open_hook(struct gt_model *m,
                            uint64_t (*hook)(void *ctx, const struct gt_record *open),
                            void *ctx) {
  m->open_hook = hook;
  m->open_ctx = ctx;
}

static int track_nvtx(struct gt_model *m, const struct gt_record *r,
                      struct gt_range *out) {
  switch (r->u.nvtx.op) {
  case GT_NVTX_PUSH: {
    struct range_stack *s = stack_of(m, r);
    s->items = gt_grow(s->items, &s->cap, s->len + 1, sizeof *s->items);
    s->items[s->len++] = (struct open_range){strdup(gt_model_text(m, r)),
                                             r->ts_ns,
                                             r->u.nvtx.domain,
                                             r->tid,
                                             open_tag(m, r),
                                             r->pid};
    return 0;
  }
  case GT_NVTX_POP: {
    struct range_stack *s = stack_of(m, r);
    if (s->len == 0)
      return 0; /* a pop without a push we saw (tracing started inside it) */
    s->len--;
    close_range(m, &s->items[s->len], r->pid, r->ts_ns, (int)s->len, out);
    return 1;
  }
  case GT_NVTX_START: {
    struct open_range *o = malloc(sizeof *o);
    if (!o)
      return 0;
    *o = (struct open_range){strdup(gt_model_text(m, r)),
                             r->ts_ns,
                             r->u.nvtx.domain,
                             r->tid,
                             open_tag(m, r),
                             r->pid};
    gt_map_put(&m->started, gt_pid_key(r->pid, r->u.nvtx.range_id),
               (uint64_t)(uintptr_t)o);
    return 0;
  }
  case GT_NVTX_END: {
    uint64_t key = gt_pid_key(r->pid, r->u.nvtx.range_id), v;
    if (!gt_map_get(&m->started, key, &v))
      return 0;
    gt_map_del(&m->started, key);
    struct open_range *o = (void *)(uintptr_t)v;
    close_range(m, o, r->pid, r->ts_ns, -1, out);
    free(o);
    return 1;
  }
  }
  return 0;
}

int gt_model_feed(struct gt_model *m, struct gt_record *r, struct gt_range *range) {
  struct gt_model_totals *t = &m->totals;
  t->records++;
  if (r->kind < GT_KIND_PROCESS && r->ts_ns) {
    if (!t->first_ns || r->ts_ns < t->first_ns)
      t->first_ns = r->ts_ns;
    if (r->ts_ns + r->dur_ns > t->last_ns)
      t->last_ns = r->ts_ns + r->dur_ns;
  }
  switch (r->kind) {
  case GT_KIND_KERNEL_NAME: {
    uint64_t key = gt_pid_key(r->pid, r->u.kname.kernel), old;
    if (gt_map_get(&m->kernels, key, &old))
      free((void *)(uintptr_t)old);
    gt_map_put(&m->kernels, key, (uint64_t)(uintptr_t)gt_demangle(gt_model_text(m, r)));
    break;
  }
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    track_memory(m, r);
    break;
  case GT_KIND_PROCESS:
    if (r->u.proc.phase == GT_PROC_START) {
      struct process *p = process(m, r->pid);
      free(p->cmdline);
      p->cmdline = strdup(gt_model_text(m, r));
      t->processes++;
    }
    break;
  case GT_KIND_DROP:
    t->dropped += r->u.count.count;
    if (r->u.count.of_kind < GT_KIND_COUNT)
      t->dropped_by_kind[r->u.count.of_kind] += r->u.count.count;
    break;
  case GT_KIND_LOST:
    t->lost += r->u.count.count;
    break;
  case GT_KIND_NVTX:
    return track_nvtx(m, r, range);
  }
  return 0;
}

const char *gt_model_kernel(struct gt_model *m, const struct gt_record *r) {
  uint64_t v;
  if (gt_map_get(&m->kernels, gt_pid_key(r->pid, r->u.launch.kernel), &v))
    return (const char *)(uintptr_t)v;
  snprintf(m->fallback, sizeof m->fallback, "%s0x%" PRIx64,
           r->flags & GT_F_HOST_FN ? "host function "
           : r->flags & GT_F_GRAPH ? "graph "
                                   : "",
           r->u.launch.kernel);
  return m->fallback;
}

const char *gt_model_cmdline(struct gt_model *m, uint32_t pid) {
  uint64_t idx;
  if (!gt_map_get(&m->proc_index, pid, &idx) || !m->procs[idx].cmdline)
    return "";
  return m->procs[idx].cmdline;
}

uint64_t gt_model_live_bytes(struct gt_model *m, uint32_t pid, unsigned memory) {
  return gt_heap_live_bytes(m->heap, pid, memory);
}

uint64_t gt_model_peak_bytes(struct gt_model *m, uint32_t pid, unsigned memory) {
  uint64_t idx;
  return memory < 4 && gt_map_get(&m->proc_index, pid, &idx) ? m->procs[idx].peak[memory]
                                                             : 0;
}

const struct gt_model_totals *gt_model_totals(const struct gt_model *m) {
  return &m->totals;
}

uint64_t gt_model_peak_device_total(struct gt_model *m, uint32_t pid) {
  uint64_t idx;
  return gt_map_get(&m->proc_index, pid, &idx) ? m->procs[idx].peak_device_total : 0;
}

unsigned gt_model_alloc_memory(const struct gt_model *m, uint32_t pid, uint64_t ptr) {
  struct gt_block b;
  return gt_heap_find(m->heap, pid, ptr, &b) ? b.memory : GT_MEM_UNKNOWN;
}

static void report_open(const struct open_range *o, int depth,
                        void (*fn)(void *ctx, const struct gt_range *r), void *ctx) {
  struct gt_range r = {.pid = o->pid,
                       .tid = o->tid,
                       .start_ns = o->start_ns,
                       .end_ns = 0,
                       .depth = depth,
                       .domain = o->domain,
                       .name = o->name,
                       .tag = o->tag};
  fn(ctx, &r);
}

void gt_model_open_ranges(struct gt_model *m,
                          void (*fn)(void *ctx, const struct gt_range *r), void *ctx) {
  for (size_t i = 0; i < m->nstacks; i++)
    for (size_t j = 0; j < m->stacks[i].len; j++)
      report_open(&m->stacks[i].items[j], (int)j, fn, ctx);
  for (size_t i = 0; i < m->started.cap; i++)
    if (m->started.used[i] == 1)
      report_open((void *)(uintptr_t)m->started.vals[i], -1, fn, ctx);
}
