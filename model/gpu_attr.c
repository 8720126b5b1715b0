/* gpu_attr.c — see gpu_attr.h. */
#include "gpu_attr.h"
#include "graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct gt_gpu_group {
  uint32_t pid;
  size_t name;
  unsigned kind;
  uint64_t calls, timed, bytes;
  uint64_t stacked; /* calls with a stack (their site's or a sampled one) */
  double stacked_bytes, timed_ns;
};

void gt_gpu_attr_init(struct gt_gpu_attr *g) {
  memset(g, 0, sizeof *g);
  gt_map_init(&g->group_index);
  gt_map_init(&g->site_index);
  gt_map_init(&g->fast_index);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

static struct gt_gpu_group *group(struct gt_gpu_attr *g, uint32_t pid, const char *name,
                                  unsigned kind) {
  size_t n = gt_strtab_intern(&g->names, name), at;
  int added;
  g->groups = gt_find_or_add(&g->group_index, (uint64_t)pid << 32 | n, g->groups,
                             &g->ngroups, &g->cgroups, sizeof *g->groups, &at, &added);
  struct gt_gpu_group *x = &g->groups[at];
  if (added) {
    x->pid = pid;
    x->name = n;
    x->kind = kind;
  }
  return x;
}

static struct gt_gpu_site *site(struct gt_gpu_attr *g, const struct gt_gpu_group *x,
                                uint32_t stack, uint32_t inner) {
  size_t at;
  int added;
  uint64_t key = mix(mix(mix((uint64_t)x->pid << 32 | stack, x->name), x->kind), inner);
  g->sites = gt_find_or_add(&g->site_index, key, g->sites, &g->nsites, &g->csites,
                            sizeof *g->sites, &at, &added);
  struct gt_gpu_site *s = &g->sites[at];
  if (added) {
    s->pid = x->pid;
    s->stack_id = stack;
    s->inner_id = inner;
    s->name = x->name;
    s->kind = x->kind;
  }
  return s;
}

/* The group of a fast_index key, or NULL. */
static struct gt_gpu_group *fast_get(struct gt_gpu_attr *g, uint64_t key) {
  uint64_t at;
  return gt_map_get(&g->fast_index, key, &at) ? &g->groups[at - 1] : NULL;
}

static void fast_put(struct gt_gpu_attr *g, uint64_t key, const struct gt_gpu_group *x) {
  gt_map_put(&g->fast_index, key, (uint64_t)(x - g->groups) + 1);
}

static uint64_t kernel_key(uint32_t pid, uint64_t kernel, uint32_t flags) {
  return mix(gt_pid_key(pid, kernel), flags);
}

/* kernel_group's miss: fast_index, else by name (then into fast_index once
 * the name is known); fills the hot slot h. */
static struct gt_gpu_group *kernel_group_slow(struct gt_gpu_attr *g, struct gt_model *m,
                                              struct gt_gpu_hot *h, uint32_t pid,
                                              uint64_t kernel, uint32_t flags) {
  uint64_t key = kernel_key(pid, kernel, flags);
  struct gt_gpu_group *x = fast_get(g, key);
  if (!x) {
    x = group(g, pid, gt_model_kernel_of(m, pid, kernel, flags), GT_KIND_LAUNCH);
    if (!gt_model_kernel_known(m, pid, kernel))
      return x; /* named later: looked up again until then */
    fast_put(g, key, x);
  }
  *h = (struct gt_gpu_hot){
      .kernel = kernel, .pid = pid, .flags = flags, .at = (uint64_t)(x - g->groups) + 1};
  return x;
}

/* A kernel's group, found without its name (a hot slot by handle):
 * launches are most of the records, and the collector's live profiles run
 * this for every launch it drains. */
static inline struct gt_gpu_group *kernel_group(struct gt_gpu_attr *g, struct gt_model *m,
                                                uint32_t pid, uint64_t kernel,
                                                uint32_t flags) {
  flags &= GT_F_HOST_FN | GT_F_GRAPH;
  size_t n = sizeof g->hot / sizeof g->hot[0];
  struct gt_gpu_hot *h = &g->hot[(kernel >> 4 ^ kernel >> 12 ^ pid) & (n - 1)];
  if (h->at && h->kernel == kernel && h->pid == pid && h->flags == flags)
    return &g->groups[h->at - 1];
  return kernel_group_slow(g, m, h, pid, kernel, flags);
}

/* A handle registered again: its next launch looks its name up anew. */
static void forget_kernel(struct gt_gpu_attr *g, uint32_t pid, uint64_t kernel) {
  static const uint32_t variants[] = {0, GT_F_HOST_FN, GT_F_GRAPH,
                                      GT_F_HOST_FN | GT_F_GRAPH};
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    gt_map_del(&g->fast_index, kernel_key(pid, kernel, variants[i]));
  memset(g->hot, 0, sizeof g->hot);
}

/* The group of copies ("memcpy HtoD", ...) or memsets. */
static struct gt_gpu_group *work_group(struct gt_gpu_attr *g, uint32_t pid, unsigned kind,
                                       unsigned dir) {
  uint64_t key = mix(gt_pid_key(pid, (uint64_t)kind << 8 | dir), UINT64_MAX);
  struct gt_gpu_group *x = fast_get(g, key);
  if (x)
    return x;
  char name[48];
  if (kind == GT_KIND_MEMSET)
    snprintf(name, sizeof name, "memset");
  else
    snprintf(name, sizeof name, "memcpy %s", gt_dir_name(dir));
  x = group(g, pid, name, kind);
  fast_put(g, key, x);
  return x;
}

static int in_window(const struct gt_gpu_attr *g, const struct gt_record *rec) {
  return (!g->has_pid || rec->pid == g->pid) && rec->ts_ns >= g->from_ns &&
         (!g->to_ns || rec->ts_ns < g->to_ns);
}

void gt_gpu_attr_feed(struct gt_gpu_attr *g, struct gt_model *m,
                      const struct gt_record *rec) {
  if (rec->kind == GT_KIND_KERNEL_NAME) {
    forget_kernel(g, rec->pid, rec->u.kname.kernel);
    return;
  }
  if (rec->kind == GT_KIND_LAUNCH && (rec->flags & GT_F_EXPANDED)) {
    g->run_pid = rec->pid; /* its nodes' records follow */
    g->run_stack = rec->stack_id;
  }
  if (!in_window(g, rec) || (rec->flags & GT_F_EXPANDED))
    return; /* an expanded graph launch: its nodes' records come instead */
  struct gt_gpu_group *x;
  if (rec->kind == GT_KIND_DEVICE) {
    const struct gt_device_args *d = &rec->u.device;
    if (d->of_kind == GT_KIND_LAUNCH)
      x = kernel_group(g, m, rec->pid, d->kernel, rec->flags);
    else if (d->of_kind == GT_KIND_MEMCPY || d->of_kind == GT_KIND_MEMSET)
      x = work_group(g, rec->pid, d->of_kind, d->of_kind == GT_KIND_MEMCPY ? d->dir : 0);
    else
      return;
    x->timed++;
    x->timed_ns += (double)rec->dur_ns;
    return;
  }
  uint64_t bytes = 0;
  if (rec->kind == GT_KIND_LAUNCH) {
    x = kernel_group(g, m, rec->pid, rec->u.launch.kernel, rec->flags);
  } else if (rec->kind == GT_KIND_MEMCPY || rec->kind == GT_KIND_MEMSET) {
    unsigned dir = rec->kind == GT_KIND_MEMCPY ? rec->u.copy.dir : 0;
    bytes = rec->kind == GT_KIND_MEMCPY ? rec->u.copy.bytes : rec->u.set.bytes;
    x = work_group(g, rec->pid, rec->kind, dir);
  } else {
    return;
  }
  if (rec->result != 0)
    return; /* nothing was queued */
  x->calls++;
  x->bytes += bytes;
  uint32_t stack = rec->stack_id, inner = 0;
  if ((rec->flags & GT_F_GRAPH_RUN) && rec->pid == g->run_pid && g->run_stack) {
    inner = stack; /* a node's work, under its graph launch's line */
    stack = g->run_stack;
  }
  if (!stack)
    return;
  struct gt_gpu_site *s = site(g, x, stack, inner);
  x->stacked++;
  x->stacked_bytes += (double)bytes;
  if (rec->flags & GT_F_STACK_SAMPLED)
    s->sampled++;
  else
    s->exact++;
  s->exact_bytes += (double)bytes;
}

/* A site's figures (gpu_attr.h): its calls and bytes as counted, its GPU
 * time its calls times its group's mean. */
static void finish_site(struct gt_gpu_site *s, const struct gt_gpu_group *x) {
  double mean = x->timed ? x->timed_ns / (double)x->timed : 0;
  s->calls = (double)(s->exact + s->sampled);
  s->bytes = s->exact_bytes;
  s->gpu_ns = mean * s->calls;
}

void gt_gpu_attr_finish(struct gt_gpu_attr *g) {
  for (size_t i = 0; i < g->nsites; i++) {
    uint64_t idx;
    struct gt_gpu_site *s = &g->sites[i];
    if (gt_map_get(&g->group_index, (uint64_t)s->pid << 32 | s->name, &idx))
      finish_site(s, &g->groups[idx]);
  }
  size_t ngroups = g->ngroups;
  for (size_t i = 0; i < ngroups; i++) {
    const struct gt_gpu_group *x = &g->groups[i];
    if (x->calls == x->stacked)
      continue;
    /* The calls without a stack (stacks off, or not taken): at stack 0. */
    struct gt_gpu_site *s = site(g, &g->groups[i], 0, 0);
    double mean = x->timed ? x->timed_ns / (double)x->timed : 0;
    s->calls = (double)(x->calls - x->stacked);
    s->bytes = (double)x->bytes - x->stacked_bytes;
    s->gpu_ns = mean * s->calls;
  }
}

int gt_gpu_site_frames(const struct gt_gpu_site *x, struct gt_symtab *st,
                       struct gt_frame *f, int max) {
  int n = 0;
  if (x->inner_id) {
    n = gt_symtab_stack(st, x->pid, x->inner_id, f, max);
    int k = 0; /* the capturing line: the first address's inline levels */
    while (k < n && !f[k].python && f[k].ip == f[0].ip)
      k++;
    n = n ? (k ? k : 1) : 0;
  }
  if (!x->stack_id || n >= max)
    return n;
  return n + gt_symtab_stack(st, x->pid, x->stack_id, f + n, max - n);
}

double gt_gpu_attr_total_ns(const struct gt_gpu_attr *g, unsigned kind) {
  double t = 0;
  for (size_t i = 0; i < g->nsites; i++)
    if (g->sites[i].kind == kind)
      t += g->sites[i].gpu_ns;
  return t;
}

void gt_gpu_attr_free(struct gt_gpu_attr *g) {
  gt_strtab_free(&g->names);
  gt_map_free(&g->group_index);
  gt_map_free(&g->site_index);
  gt_map_free(&g->fast_index);
  free(g->groups);
  free(g->sites);
  memset(g, 0, sizeof *g);
}
