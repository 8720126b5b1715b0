/* model.c — see model.h. */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"
#include "util.h"

struct gt_model {
  unsigned layers;
  struct gt_map kernels;  /* (pid, stub) -> char* */
  struct gt_map cmdlines; /* pid -> char* */
  struct gt_heap *heap;   /* GT_LAYER_HEAP */
  struct gt_nvtx *nvtx;   /* GT_LAYER_NVTX */
  struct gt_symtab *symtab;
  struct gt_model_totals totals;
  uint32_t *pids; /* processes started or calling, in the order seen */
  size_t npids, cpids;
  uint32_t last_pid;     /* of the last call record */
  struct gt_block block; /* the event's */
  struct gt_range range; /* the event's */
  char text[GT_TEXT_MAX + 1];
  char fallback[64];
};

struct gt_model *gt_model_new(unsigned layers) {
  struct gt_model *m = gt_xcalloc(1, sizeof *m);
  m->layers = layers;
  if (layers & GT_LAYER_HEAP)
    m->heap = gt_heap_new();
  if (layers & GT_LAYER_NVTX)
    m->nvtx = gt_nvtx_new();
  if (layers & GT_LAYER_SYMBOLS)
    m->symtab = gt_symtab_new();
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
  free_values(&m->cmdlines);
  gt_heap_free(m->heap);
  gt_nvtx_free(m->nvtx);
  gt_symtab_free(m->symtab);
  free(m->pids);
  free(m);
}

unsigned gt_model_layers(const struct gt_model *m) {
  return m->layers;
}

void gt_model_set_open_hook(struct gt_model *m, gt_range_open_fn hook, void *ctx) {
  if (m->nvtx)
    gt_nvtx_set_open_hook(m->nvtx, hook, ctx);
}

const char *gt_model_text(struct gt_model *m, const struct gt_record *rec) {
  gt_record_text(rec, gt_record_text_len(rec), m->text, sizeof m->text);
  return m->text;
}

/* Replace the string a map holds for key (names and command lines change
 * on re-registration and exec). */
static void put_string(struct gt_map *map, uint64_t key, char *s) {
  uint64_t old;
  if (gt_map_get(map, key, &old))
    free((void *)(uintptr_t)old);
  gt_map_put(map, key, (uint64_t)(uintptr_t)s);
}

static void heap_layer(struct gt_model *m, const struct gt_record *r,
                       struct gt_event *ev) {
  if (r->kind == GT_KIND_FREE) {
    m->block = (struct gt_block){0};
    ev->free_status = gt_heap_release(m->heap, r, &m->block);
    if (ev->free_status == GT_FREE_OK ||
        ((ev->free_status == GT_FREE_WRONG_KIND || ev->free_status == GT_FREE_FAILED) &&
         m->block.ptr == r->u.mem.ptr && m->block.pid == r->pid))
      ev->block = &m->block;
    return;
  }
  uint32_t tag = m->nvtx ? (uint32_t)gt_nvtx_outer_tag(m->nvtx, r->pid, r->tid) : 0;
  if (gt_heap_alloc(m->heap, r, tag, &m->block))
    ev->block = &m->block;
}

static void add_pid(struct gt_model *m, uint32_t pid) {
  for (size_t i = 0; i < m->npids; i++)
    if (m->pids[i] == pid)
      return;
  if (m->npids == m->cpids) {
    m->cpids = m->cpids ? 2 * m->cpids : 8;
    m->pids = gt_xrealloc(m->pids, m->cpids * sizeof *m->pids);
  }
  m->pids[m->npids++] = pid;
}

static void count(struct gt_model_totals *t, const struct gt_record *r) {
  t->records++;
  /* a graph's making replayed at a rolling file's start is from before it */
  if (gt_record_timed(r)) {
    if (!t->first_ns || r->ts_ns < t->first_ns)
      t->first_ns = r->ts_ns;
    if (r->ts_ns + r->dur_ns > t->last_ns)
      t->last_ns = r->ts_ns + r->dur_ns;
    if (r->ts_ns > t->last_start_ns)
      t->last_start_ns = r->ts_ns;
  }
  t->cuda_calls += gt_record_cuda_calls(r);
  if (gt_kind_is_call(r->kind))
    return; /* the rest counts losses */
  if (r->kind == GT_KIND_DROP) {
    t->dropped += r->u.count.count;
    if (gt_kind_in_table(r->u.count.of_kind))
      t->dropped_by_kind[r->u.count.of_kind] += r->u.count.count;
  } else if (r->kind == GT_KIND_LOST) {
    t->lost += r->u.count.count;
  }
}

/* A process is known by its start, or by its calls (its start may be in a
 * rolling set's deleted file); records come in runs of one process, so the
 * list is searched once per run. */
static void count_process(struct gt_model *m, const struct gt_record *r) {
  if (r->pid != m->last_pid && gt_kind_is_call(r->kind)) {
    m->last_pid = r->pid;
    add_pid(m, r->pid);
  }
}

void gt_model_count(struct gt_model *m, const struct gt_record *r) {
  count(&m->totals, r);
  count_process(m, r);
}

void gt_model_feed(struct gt_model *m, const struct gt_record *r, struct gt_event *ev) {
  count(&m->totals, r);
  count_process(m, r);
  gt_model_feed_made(m, r, ev);
}

void gt_model_feed_made(struct gt_model *m, const struct gt_record *r,
                        struct gt_event *ev) {
  *ev = (struct gt_event){.rec = r};
  switch (r->kind) {
  case GT_KIND_KERNEL_NAME:
    put_string(&m->kernels, gt_pid_key(r->pid, r->u.kname.kernel),
               gt_demangle(gt_model_text(m, r)));
    break;
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    if (m->heap)
      heap_layer(m, r, ev);
    break;
  case GT_KIND_HEAP:
    if (m->heap)
      gt_heap_carry(m->heap, r);
    break;
  case GT_KIND_NOTE:
    if (!strcmp(gt_model_text(m, r), GT_NOTE_WINDOW))
      m->totals.window_from_ns = r->ts_ns;
    break;
  case GT_KIND_PROCESS:
    if (r->u.proc.phase == GT_PROC_START) {
      char *cmd = strdup(gt_model_text(m, r));
      if (!cmd)
        gt_oom();
      put_string(&m->cmdlines, r->pid, cmd);
      m->totals.processes++;
      add_pid(m, r->pid);
    }
    break;
  case GT_KIND_NVTX: /* only an opening range needs its text */
    if (m->nvtx &&
        gt_nvtx_feed(m->nvtx, r,
                     r->u.nvtx.op == GT_NVTX_PUSH || r->u.nvtx.op == GT_NVTX_START
                         ? gt_model_text(m, r)
                         : "",
                     &m->range))
      ev->range = &m->range;
    break;
  case GT_KIND_STACK:
  case GT_KIND_FRAME:
  case GT_KIND_PYFRAME:
  case GT_KIND_MODULE:
    if (m->symtab)
      gt_symtab_feed(m->symtab, r);
    break;
  }
}

const struct gt_record *gt_event_record(const struct gt_event *ev,
                                        struct gt_record *scratch) {
  if (ev->rec->kind != GT_KIND_FREE || ev->free_status != GT_FREE_OK)
    return ev->rec;
  *scratch = *ev->rec; /* frees carry no text: the first slot is the record */
  scratch->u.mem.bytes = ev->block->bytes;
  scratch->u.mem.memory = ev->block->memory;
  return scratch;
}

const char *gt_model_kernel_of(struct gt_model *m, uint32_t pid, uint64_t kernel,
                               uint32_t flags) {
  uint64_t v;
  if (gt_map_get(&m->kernels, gt_pid_key(pid, kernel), &v))
    return (const char *)(uintptr_t)v;
  snprintf(m->fallback, sizeof m->fallback, "%s0x%" PRIx64,
           flags & GT_F_HOST_FN ? "host function "
           : flags & GT_F_GRAPH ? "graph "
                                : "",
           kernel);
  return m->fallback;
}

const char *gt_model_kernel(struct gt_model *m, const struct gt_record *r) {
  return gt_model_kernel_of(m, r->pid, r->u.launch.kernel, r->flags);
}

int gt_model_kernel_known(const struct gt_model *m, uint32_t pid, uint64_t kernel) {
  uint64_t v;
  return gt_map_get(&m->kernels, gt_pid_key(pid, kernel), &v);
}

const char *gt_model_cmdline(struct gt_model *m, uint32_t pid) {
  uint64_t v;
  return gt_map_get(&m->cmdlines, pid, &v) ? (const char *)(uintptr_t)v : "";
}

uint64_t gt_model_live_bytes(struct gt_model *m, uint32_t pid, unsigned memory) {
  return m->heap ? gt_heap_live_bytes(m->heap, pid, memory) : 0;
}

uint64_t gt_model_peak_bytes(struct gt_model *m, uint32_t pid, unsigned memory) {
  return m->heap && memory < 4 ? gt_heap_peak_bytes(m->heap, pid, memory) : 0;
}

uint64_t gt_model_peak_device_total(struct gt_model *m, uint32_t pid) {
  return m->heap ? gt_heap_peak_bytes(m->heap, pid, GT_MEM_RESIDENT) : 0;
}

unsigned gt_model_alloc_memory(const struct gt_model *m, uint32_t pid, uint64_t ptr) {
  struct gt_block b;
  return m->heap && gt_heap_find(m->heap, pid, ptr, &b) ? b.memory : GT_MEM_UNKNOWN;
}

struct gt_heap *gt_model_heap(struct gt_model *m) {
  return m->heap;
}

struct gt_symtab *gt_model_symtab(struct gt_model *m) {
  return m->symtab;
}

const struct gt_model_totals *gt_model_totals(const struct gt_model *m) {
  return &m->totals;
}

const uint32_t *gt_model_pids(const struct gt_model *m, size_t *n) {
  *n = m->npids;
  return m->pids;
}

unsigned gt_model_thread_depth(const struct gt_model *m, uint32_t pid, uint32_t tid) {
  return m->nvtx ? gt_nvtx_depth(m->nvtx, pid, tid) : 0;
}

uint64_t gt_model_outer_tag(const struct gt_model *m, uint32_t pid, uint32_t tid) {
  return m->nvtx ? gt_nvtx_outer_tag(m->nvtx, pid, tid) : 0;
}

void gt_model_open_ranges(struct gt_model *m,
                          void (*fn)(void *ctx, const struct gt_range *r), void *ctx) {
  if (m->nvtx)
    gt_nvtx_open_ranges(m->nvtx, fn, ctx);
}
