/* gpu_attr.c — see gpu_attr.h. */
#include "gpu_attr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct gt_gpu_group {
  uint32_t pid;
  size_t name;
  unsigned kind;
  uint64_t calls, timed, bytes;
  uint64_t exact, sampled; /* calls with a first-launch stack, with a sampled one */
  double exact_bytes, timed_ns;
};

void gt_gpu_attr_init(struct gt_gpu_attr *g) {
  memset(g, 0, sizeof *g);
  gt_map_init(&g->group_index);
  gt_map_init(&g->site_index);
  gt_map_init(&g->kernel_index);
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
                                uint32_t stack) {
  size_t at;
  int added;
  uint64_t key = mix(mix((uint64_t)x->pid << 32 | stack, x->name), x->kind);
  g->sites = gt_find_or_add(&g->site_index, key, g->sites, &g->nsites, &g->csites,
                            sizeof *g->sites, &at, &added);
  struct gt_gpu_site *s = &g->sites[at];
  if (added) {
    s->pid = x->pid;
    s->stack_id = stack;
    s->name = x->name;
    s->kind = x->kind;
  }
  return s;
}

/* A kernel's group. Launches are most of the records: a kernel whose name
 * is known is found by (pid, kernel) without demangled-name hashing (the
 * collector's live profiles run this for every launch it drains). */
static struct gt_gpu_group *kernel_group(struct gt_gpu_attr *g, struct gt_model *m,
                                         uint32_t pid, uint64_t kernel, uint32_t flags) {
  uint64_t key = mix(gt_pid_key(pid, kernel), flags & (GT_F_HOST_FN | GT_F_GRAPH)), v;
  if (gt_map_get(&g->kernel_index, key, &v))
    return &g->groups[v - 1];
  struct gt_gpu_group *x =
      group(g, pid, gt_model_kernel_of(m, pid, kernel, flags), GT_KIND_LAUNCH);
  if (gt_model_kernel_known(m, pid, kernel))
    gt_map_put(&g->kernel_index, key, (uint64_t)(x - g->groups) + 1);
  return x;
}

/* "memcpy HtoD", "memset": what copies and memsets are grouped as. */
static const char *work_name(unsigned kind, unsigned dir, char *buf, size_t len) {
  if (kind == GT_KIND_MEMSET)
    return "memset";
  snprintf(buf, len, "memcpy %s", gt_dir_name(dir));
  return buf;
}

static int in_window(const struct gt_gpu_attr *g, const struct gt_record *rec) {
  return (!g->has_pid || rec->pid == g->pid) && rec->ts_ns >= g->from_ns &&
         (!g->to_ns || rec->ts_ns < g->to_ns);
}

void gt_gpu_attr_feed(struct gt_gpu_attr *g, struct gt_model *m,
                      const struct gt_record *rec) {
  char buf[48];
  if (!in_window(g, rec))
    return;
  struct gt_gpu_group *x;
  if (rec->kind == GT_KIND_DEVICE) {
    const struct gt_device_args *d = &rec->u.device;
    if (d->of_kind == GT_KIND_LAUNCH)
      x = kernel_group(g, m, rec->pid, d->kernel, rec->flags);
    else if (d->of_kind == GT_KIND_MEMCPY || d->of_kind == GT_KIND_MEMSET)
      x = group(g, rec->pid, work_name(d->of_kind, d->dir, buf, sizeof buf), d->of_kind);
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
    x = group(g, rec->pid, work_name(rec->kind, dir, buf, sizeof buf), rec->kind);
  } else {
    return;
  }
  if (rec->result != 0)
    return; /* nothing was queued */
  x->calls++;
  x->bytes += bytes;
  if (!rec->stack_id)
    return;
  struct gt_gpu_site *s = site(g, x, rec->stack_id);
  if (rec->flags & GT_F_STACK_SAMPLED) {
    x->sampled++;
    s->sampled++;
  } else {
    x->exact++;
    x->exact_bytes += (double)bytes;
    s->exact++;
    s->exact_bytes += (double)bytes;
  }
}

/* A site's estimates from its group (gpu_attr.h): its first launches
 * exactly, and its share of the rest by samples (or, without samples, by
 * first launches). */
static void estimate(struct gt_gpu_site *s, const struct gt_gpu_group *x) {
  double rest = (double)(x->calls - x->exact),
         rest_bytes = (double)x->bytes - x->exact_bytes;
  double share = x->sampled ? (double)s->sampled / (double)x->sampled
                 : x->exact ? (double)s->exact / (double)x->exact
                            : 0;
  double mean = x->timed ? x->timed_ns / (double)x->timed : 0;
  s->calls = (double)s->exact + share * rest;
  s->bytes = s->exact_bytes + share * rest_bytes;
  s->gpu_ns = mean * s->calls;
}

void gt_gpu_attr_finish(struct gt_gpu_attr *g) {
  for (size_t i = 0; i < g->nsites; i++) {
    uint64_t idx;
    struct gt_gpu_site *s = &g->sites[i];
    if (gt_map_get(&g->group_index, (uint64_t)s->pid << 32 | s->name, &idx))
      estimate(s, &g->groups[idx]);
  }
  size_t ngroups = g->ngroups;
  for (size_t i = 0; i < ngroups; i++) {
    if (g->groups[i].exact || g->groups[i].sampled || !g->groups[i].calls)
      continue;
    struct gt_gpu_site *s = site(g, &g->groups[i], 0); /* no call of it had a stack */
    const struct gt_gpu_group *x = &g->groups[i];
    s->calls = (double)x->calls;
    s->bytes = (double)x->bytes;
    s->gpu_ns = x->timed ? x->timed_ns / (double)x->timed * (double)x->calls : 0;
  }
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
  gt_map_free(&g->kernel_index);
  free(g->groups);
  free(g->sites);
  memset(g, 0, sizeof *g);
}
