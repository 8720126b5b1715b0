/* profiles.c — see profiles.h. */
#include "profiles.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "util.h"

#define MAX_FRAMES 256

/* ---- stacks as locations ---- */

/* A stack as pprof locations, leaf first: inline levels of one address
 * share a location; Python frames are locations of their own. */
static size_t frame_locations(struct gt_pprof *p, struct gt_symtab *st, uint32_t pid,
                              const struct gt_frame *f, int n, uint64_t *out,
                              size_t room) {
  size_t k = 0;
  for (int i = 0; i < n && k < room;) {
    if (f[i].python) {
      out[k++] =
          gt_pprof_source(p, gt_pprof_function(p, f[i].function, f[i].file), f[i].line);
      i++;
      continue;
    }
    struct gt_pprof_line lines[16];
    size_t nl = 0;
    int j = i;
    for (; j < n && !f[j].python && f[j].ip == f[i].ip && nl < 16; j++)
      lines[nl++] = (struct gt_pprof_line){gt_pprof_function(p, f[j].function, f[j].file),
                                           (int64_t)f[j].line};
    struct gt_module_range m;
    uint64_t map = gt_symtab_module_of(st, pid, f[i].ip, &m)
                       ? gt_pprof_mapping(p, m.start, m.end, m.start - m.bias, m.path, "")
                       : 0;
    out[k++] = gt_pprof_native(p, map, gt_stack_addr(f[i].ip), lines, nl);
    i = j;
  }
  if (k == 0 && room)
    out[k++] = gt_pprof_source(p, gt_pprof_function(p, "[no stack]", ""), 0);
  return k;
}

static size_t locations(struct gt_pprof *p, struct gt_symtab *st, uint32_t pid,
                        uint32_t stack, uint64_t *out, size_t room) {
  struct gt_frame f[MAX_FRAMES];
  int n = stack ? gt_symtab_stack(st, pid, stack, f, MAX_FRAMES) : 0;
  return frame_locations(p, st, pid, f, n, out, room);
}

/* ---- device memory ---- */

struct live { /* a block allocated since the start, still live */
  uint64_t ptr, bytes;
  uint32_t pid;
  uint32_t site;
};

struct site { /* allocations of one (pid, stack, memory kind) */
  uint32_t pid, stack_id;
  uint8_t memory;
  int64_t values[4]; /* alloc_objects, alloc_space, inuse_objects, inuse_space */
};

struct gt_memprof {
  struct gt_map live_index; /* (pid, ptr) -> live index + 1 */
  struct live *live;
  size_t nlive, clive;
  struct gt_map site_index; /* (pid, stack, memory) -> site index */
  struct site *sites;
  size_t nsites, csites;
};

struct gt_memprof *gt_memprof_new(void) {
  struct gt_memprof *m = gt_xcalloc(1, sizeof *m);
  gt_map_init(&m->live_index);
  gt_map_init(&m->site_index);
  return m;
}

/* The block ends: the last one takes its place, so the array stays as
 * long as the live blocks (a days-long live run frees most of what it
 * allocates). */
static void forget(struct gt_memprof *m, uint32_t pid, uint64_t ptr) {
  uint64_t idx;
  if (!gt_map_get(&m->live_index, gt_pid_key(pid, ptr), &idx))
    return;
  gt_map_del(&m->live_index, gt_pid_key(pid, ptr));
  size_t at = (size_t)idx - 1, last = m->nlive - 1;
  if (at != last) {
    m->live[at] = m->live[last];
    gt_map_put(&m->live_index, gt_pid_key(m->live[at].pid, m->live[at].ptr), at + 1);
  }
  m->nlive--;
}

static size_t site_of(struct gt_memprof *m, uint32_t pid, uint32_t stack,
                      unsigned memory) {
  size_t at;
  int added;
  uint64_t key = gt_pid_key(pid, (uint64_t)stack << 2 | memory);
  m->sites = gt_find_or_add(&m->site_index, key, m->sites, &m->nsites, &m->csites,
                            sizeof *m->sites, &at, &added);
  struct site *x = &m->sites[at];
  if (added)
    x->pid = pid, x->stack_id = stack, x->memory = (uint8_t)memory;
  return at;
}

void gt_memprof_feed(struct gt_memprof *m, const struct gt_event *ev) {
  const struct gt_record *rec = ev->rec;
  if (rec->kind == GT_KIND_FREE) {
    if (ev->free_status == GT_FREE_OK && ev->block)
      forget(m, ev->block->pid, ev->block->ptr);
    return;
  }
  if (rec->kind != GT_KIND_ALLOC || rec->result != 0 || !rec->u.mem.ptr ||
      (rec->flags & GT_F_VMM_MAP))
    return; /* cuMemMap holds no memory: cuMemCreate does */
  /* A live block at this address was freed unseen (ev->block): it ends. */
  forget(m, rec->pid, rec->u.mem.ptr);
  size_t s = site_of(m, rec->pid, rec->stack_id, rec->u.mem.memory & 3);
  m->sites[s].values[0]++;
  m->sites[s].values[1] += (int64_t)rec->u.mem.bytes;
  m->live = gt_grow(m->live, &m->clive, m->nlive + 1, sizeof *m->live);
  m->live[m->nlive++] =
      (struct live){rec->u.mem.ptr, rec->u.mem.bytes, rec->pid, (uint32_t)s};
  gt_map_put(&m->live_index, gt_pid_key(rec->pid, rec->u.mem.ptr), m->nlive);
}

void gt_memprof_restart(struct gt_memprof *m) {
  for (size_t i = 0; i < m->nsites; i++)
    m->sites[i].values[0] = m->sites[i].values[1] = 0;
}

struct gt_pprof *gt_memprof_profile(struct gt_memprof *m, struct gt_symtab *st) {
  static const char *types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                "inuse_space"};
  static const char *units[] = {"count", "bytes", "count", "bytes"};
  for (size_t i = 0; i < m->nsites; i++)
    m->sites[i].values[2] = m->sites[i].values[3] = 0;
  for (size_t i = 0; i < m->nlive; i++) {
    struct site *x = &m->sites[m->live[i].site];
    x->values[2]++;
    x->values[3] += (int64_t)m->live[i].bytes;
  }
  struct gt_pprof *p = gt_pprof_new(types, units, 4, 3); /* inuse_space */
  for (size_t i = 0; i < m->nsites; i++) {
    const struct site *x = &m->sites[i];
    if (!x->values[0] && !x->values[1] && !x->values[2] && !x->values[3])
      continue;
    uint64_t locs[MAX_FRAMES];
    size_t n = locations(p, st, x->pid, x->stack_id, locs, MAX_FRAMES);
    struct gt_pprof_label labels[] = {{"memory", gt_memory_name(x->memory), 0},
                                      {"pid", NULL, (int64_t)x->pid}};
    gt_pprof_add(p, locs, n, x->values, labels, 2);
  }
  return p;
}

void gt_memprof_free(struct gt_memprof *m) {
  if (!m)
    return;
  gt_map_free(&m->live_index);
  gt_map_free(&m->site_index);
  free(m->live);
  free(m->sites);
  free(m);
}

/* ---- GPU time ---- */

struct gt_pprof *gt_gpuprof_profile(const struct gt_gpu_attr *g, struct gt_symtab *st) {
  static const char *types[] = {"launches", "gpu_time", "bytes"};
  static const char *units[] = {"count", "nanoseconds", "bytes"};
  struct gt_pprof *p = gt_pprof_new(types, units, 3, 1); /* gpu_time */
  for (size_t i = 0; i < g->nsites; i++) {
    const struct gt_gpu_site *x = &g->sites[i];
    uint64_t locs[MAX_FRAMES + 1];
    locs[0] = gt_pprof_source(p, gt_pprof_function(p, g->names.strs[x->name], ""), 0);
    struct gt_frame f[MAX_FRAMES];
    int nf = gt_gpu_site_frames(x, st, f, MAX_FRAMES);
    size_t n = 1 + frame_locations(p, st, x->pid, f, nf, locs + 1, MAX_FRAMES);
    int64_t v[3] = {(int64_t)(x->calls + 0.5), (int64_t)(x->gpu_ns + 0.5),
                    (int64_t)(x->bytes + 0.5)};
    const char *kind = x->kind == GT_KIND_LAUNCH   ? "kernel"
                       : x->kind == GT_KIND_MEMCPY ? "memcpy"
                                                   : "memset";
    struct gt_pprof_label labels[] = {{"kind", kind, 0}, {"pid", NULL, (int64_t)x->pid}};
    gt_pprof_add(p, locs, n, v, labels, 2);
  }
  return p;
}
