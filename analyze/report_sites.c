/* report_sites.c — call sites for findings and the sync table (report.h).
 *
 * The streaming pass counts calls (or blocked ns) per (pid, stack id) for a
 * few kinds of call. Here each stack is named by its user frame — the
 * innermost Python frame, else the innermost native frame outside the CUDA
 * runtime and its header's C++ wrappers (gt_leaks_origin, as `gputrace
 * leaks` names allocation sites) — and stacks with the same name are added
 * up, so one line of code counts once however many paths reach it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"
#include "report.h"
#include "util.h"

#define MAX_FRAMES 64

static void site_name(struct report *r, uint64_t key, char *buf, size_t len) {
  struct gt_frame f[MAX_FRAMES];
  uint32_t pid = (uint32_t)(key >> 32), id = (uint32_t)key;
  int n = gt_symtab_stack(r->symtab, pid, id, f, MAX_FRAMES);
  const struct gt_frame *o = gt_leaks_origin(f, n);
  /* Without line tables the header's wrappers (cudaMalloc<T> and the like,
   * demangled "cudaError cuda...") are not skipped by file: skip by name. */
  while (o && !o->python && o + 1 < f + n && !strncmp(o->function, "cudaError cuda", 14))
    o++;
  if (!o) {
    snprintf(buf, len, "pid %u stack %u", pid, id);
    return;
  }
  if (o->file[0])
    snprintf(buf, len, "%s at %s:%u", o->function, gt_base_name(o->file), o->line);
  else if (o->module[0])
    snprintf(buf, len, "%s in %s", o->function, gt_base_name(o->module));
  else
    snprintf(buf, len, "%s", o->function);
}

void rp_site_text(struct report *r, uint32_t pid, uint32_t stack, char *buf, size_t len) {
  if (!stack)
    snprintf(buf, len, "-");
  else
    site_name(r, (uint64_t)pid << 32 | stack, buf, len);
}

int rp_top_sites(struct report *r, int which, struct rp_site out[3]) {
  const struct gt_map *m = which == RP_SITES ? &r->sync_site_ns : &r->sites[which];
  struct gt_strtab names = {0};
  struct rp_site *by = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->used[i] != 1)
      continue;
    char name[sizeof by->name];
    site_name(r, m->keys[i], name, sizeof name);
    size_t k = gt_strtab_intern(&names, name);
    if (k >= cap) {
      size_t old = cap;
      by = gt_grow(by, &cap, k + 1, sizeof *by);
      memset(by + old, 0, (cap - old) * sizeof *by);
    }
    if (!by[k].value || m->vals[i] > by[k].value) { /* name it by its biggest stack */
      by[k].pid = (uint32_t)(m->keys[i] >> 32);
      by[k].stack_id = (uint32_t)m->keys[i];
    }
    snprintf(by[k].name, sizeof by[k].name, "%s", name);
    by[k].value += m->vals[i];
  }
  int n = 0;
  for (size_t k = 0; k < names.n; k++) { /* top 3, largest first; ties: first seen */
    int at = n;
    while (at > 0 && by[k].value > out[at - 1].value)
      at--;
    if (at >= 3)
      continue;
    memmove(out + at + 1, out + at, (size_t)((n < 3 ? n : 2) - at) * sizeof *out);
    out[at] = by[k];
    n += n < 3;
  }
  free(by);
  gt_strtab_free(&names);
  return n;
}

const char *rp_stack_sites(struct report *r, int which, char *buf, size_t len) {
  struct rp_site top[3];
  int n = rp_top_sites(r, which, top);
  if (!n)
    return NULL;
  size_t off = 0;
  buf[0] = '\0';
  for (int k = 0; k < n && off < len; k++) {
    char v[32];
    if (which == RP_SITES)
      gt_fmt_ns(v, sizeof v, top[k].value);
    else
      snprintf(v, sizeof v, "×%" PRIu64, top[k].value);
    off +=
        (size_t)snprintf(buf + off, len - off, "%s%s %s", k ? "; " : "", top[k].name, v);
  }
  return buf;
}

/* ---- GPU time by launching line ---- */

static int by_gpu_desc(const void *a, const void *b) {
  const struct rp_gpu_line *x = a, *y = b;
  return x->gpu_ns < y->gpu_ns   ? 1
         : x->gpu_ns > y->gpu_ns ? -1
                                 : strcmp(x->site, y->site);
}

/* Kernel sites with a launch stack, named by their user line and added up
 * by name; the 20 with the most GPU time are kept. */
void rp_gpu_lines(struct report *r) {
  gt_gpu_attr_finish(&r->gattr);
  struct gt_strtab names = {0};
  struct rp_gpu_line *all = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < r->gattr.nsites; i++) {
    const struct gt_gpu_site *x = &r->gattr.sites[i];
    if (x->kind != GT_KIND_LAUNCH || !x->stack_id)
      continue;
    char site[200];
    site_name(r, (uint64_t)x->pid << 32 | x->stack_id, site, sizeof site);
    size_t k = gt_strtab_intern(&names, site);
    if (k >= cap) {
      size_t old = cap;
      all = gt_grow(all, &cap, k + 1, sizeof *all);
      memset(all + old, 0, (cap - old) * sizeof *all);
    }
    snprintf(all[k].site, sizeof all[k].site, "%s", site);
    all[k].launches += x->calls;
    all[k].gpu_ns += x->gpu_ns;
    r->gpu_lines_ns += x->gpu_ns;
  }
  if (names.n)
    qsort(all, names.n, sizeof *all, by_gpu_desc);
  r->ngpu_lines = names.n < 20 ? names.n : 20;
  if (r->ngpu_lines) /* all is NULL when nothing launched */
    memcpy(r->gpu_lines, all, r->ngpu_lines * sizeof *all);
  free(all);
  gt_strtab_free(&names);
}
