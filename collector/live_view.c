/* live_view.c — the figures of `gputrace top` that /metrics has no series
 * for (live_view.h): per process live and peak device memory and launches,
 * and the allocation sites holding the most device memory, with their
 * symbolized frames (which must never become Prometheus labels).
 *
 * Each process has its own model (heap and symbol layers, model/model.h:
 * the allocations every command matches) and a table of sites: the stack
 * id of each allocation, with the live bytes and blocks of device memory
 * allocated there and not freed. A free finds its allocation's stack in
 * the heap layer's block, so both sides are a map probe. At publish the
 * sites are ranked (LV_SITES kept, a pass over every process's sites) and
 * only the kept ones are symbolized (symtab.h) — when an allocation, free,
 * stack or frame came since the last publish; otherwise the sites stay as
 * they were and only the processes' figures are copied. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "live_view.h"
#include "model.h"
#include "prom_series.h"
#include "symtab.h"
#include "util.h"

#define LV_TEXT 192 /* bytes of a function, file or module kept */

struct lv_site {
  uint32_t stack_id;
  uint64_t live, blocks;
};

struct lv_proc {
  uint32_t pid;
  uint64_t launches;
  struct gt_model *model;
  struct gt_map site_of; /* stack id -> index + 1 in sites */
  struct lv_site *sites;
  size_t nsites, csites;
};

struct lv_frame {
  char function[LV_TEXT], file[LV_TEXT], module[LV_TEXT];
  uint32_t line;
  int python;
};

struct lv_figures { /* what is published */
  unsigned nprocs, nsites;
  struct {
    uint32_t pid;
    uint64_t live, peak, launches;
  } procs[LV_PROCS];
  struct {
    uint32_t pid;
    uint64_t live, blocks;
    unsigned nframes;
    struct lv_frame frames[LV_FRAMES];
  } sites[LV_SITES];
};

struct gt_live_view {
  struct lv_proc *procs[LV_PROCS];
  unsigned nprocs;
  struct lv_proc *last; /* the process of the last record */
  int sites_changed;    /* since the last publish: blocks, stacks, frames, processes */
  struct lv_figures build;
  pthread_mutex_t mu;
  struct lv_figures snap; /* under mu */
};

struct gt_live_view *gt_live_view_new(void) {
  struct gt_live_view *v = calloc(1, sizeof *v);
  if (v)
    pthread_mutex_init(&v->mu, NULL);
  return v;
}

static void proc_free(struct lv_proc *p) {
  gt_model_free(p->model);
  gt_map_free(&p->site_of);
  free(p->sites);
  free(p);
}

void gt_live_view_free(struct gt_live_view *v) {
  if (!v)
    return;
  for (unsigned i = 0; i < v->nprocs; i++)
    proc_free(v->procs[i]);
  pthread_mutex_destroy(&v->mu);
  free(v);
}

/* The state of a process; made (create) at its start, first allocation or
 * launch, so that late records of a process that ended (frames symbolized
 * after its end) make none. NULL past LV_PROCS. */
static struct lv_proc *proc_of(struct gt_live_view *v, uint32_t pid, int create) {
  if (v->last && v->last->pid == pid)
    return v->last;
  for (unsigned i = 0; i < v->nprocs; i++)
    if (v->procs[i]->pid == pid)
      return v->last = v->procs[i];
  struct lv_proc *p;
  if (!create || v->nprocs == LV_PROCS || !(p = calloc(1, sizeof *p)))
    return NULL;
  if (!(p->model = gt_model_new(GT_LAYER_HEAP | GT_LAYER_SYMBOLS))) {
    free(p);
    return NULL;
  }
  p->pid = pid;
  gt_map_init(&p->site_of);
  v->procs[v->nprocs++] = p;
  return v->last = p;
}

static void proc_end(struct gt_live_view *v, struct lv_proc *p) {
  for (unsigned i = 0; i < v->nprocs; i++)
    if (v->procs[i] == p)
      v->procs[i] = v->procs[--v->nprocs];
  v->last = NULL;
  proc_free(p);
}

/* A device block allocated (sign 1) or freed (-1) at its stack. */
static void site_add(struct lv_proc *p, uint32_t stack_id, uint64_t bytes, int sign) {
  uint64_t at;
  if (!gt_map_get(&p->site_of, stack_id, &at)) {
    if (sign < 0)
      return;
    p->sites = gt_grow(p->sites, &p->csites, p->nsites + 1, sizeof *p->sites);
    p->sites[p->nsites] = (struct lv_site){stack_id, 0, 0};
    if (gt_map_put(&p->site_of, stack_id, p->nsites + 1) != 0)
      return;
    at = ++p->nsites;
  }
  struct lv_site *s = &p->sites[at - 1];
  if (sign > 0) {
    s->live += bytes, s->blocks++;
    return;
  }
  s->live -= bytes < s->live ? bytes : s->live;
  s->blocks -= s->blocks > 0;
  if (s->blocks)
    return;
  gt_map_del(&p->site_of, stack_id); /* no block left: the last site takes its place */
  if (at - 1 != --p->nsites) {
    *s = p->sites[p->nsites];
    gt_map_put(&p->site_of, s->stack_id, at);
  }
}

static void heap_event(struct lv_proc *p, const struct gt_record *r,
                       const struct gt_event *ev) {
  const struct gt_block *b = ev->block;
  if (r->kind == GT_KIND_ALLOC && r->result == 0 && r->u.mem.memory == GT_MEM_DEVICE)
    site_add(p, r->stack_id, r->u.mem.bytes, 1);
  if (b && b->memory == GT_MEM_DEVICE &&
      (r->kind == GT_KIND_ALLOC || ev->free_status == GT_FREE_OK))
    site_add(p, b->stack_id, b->bytes, -1); /* replaced, or freed */
}

void gt_live_view_observe(struct gt_live_view *v, const struct gt_record *r) {
  if (!v)
    return;
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
  case GT_KIND_LAUNCH:
  case GT_KIND_STACK:
  case GT_KIND_FRAME:
  case GT_KIND_PYFRAME:
  case GT_KIND_MODULE:
  case GT_KIND_PROCESS:
    break;
  default:
    return;
  }
  int end = r->kind == GT_KIND_PROCESS && r->u.proc.phase == GT_PROC_END;
  struct lv_proc *p = proc_of(v, r->pid,
                              (r->kind == GT_KIND_PROCESS && !end) ||
                                  r->kind == GT_KIND_ALLOC || r->kind == GT_KIND_LAUNCH);
  if (!p)
    return;
  if (end) {
    v->sites_changed = 1;
    proc_end(v, p);
    return;
  }
  if (r->kind == GT_KIND_LAUNCH) {
    p->launches++; /* as /metrics counts them, failed ones too */
    return;
  }
  struct gt_event ev;
  gt_model_feed(p->model, r, &ev);
  v->sites_changed = 1;
  if (r->kind == GT_KIND_ALLOC || r->kind == GT_KIND_FREE)
    heap_event(p, r, &ev);
}

/* ---- publish (the drain loop) ---- */

static void frames_of(struct lv_proc *p, uint32_t stack_id, unsigned *n,
                      struct lv_frame *out) {
  struct gt_frame f[LV_FRAMES];
  int k = gt_symtab_stack(gt_model_symtab(p->model), p->pid, stack_id, f, LV_FRAMES);
  *n = k > 0 ? (unsigned)k : 0;
  for (unsigned i = 0; i < *n; i++) {
    snprintf(out[i].function, LV_TEXT, "%s", f[i].function ? f[i].function : "??");
    snprintf(out[i].file, LV_TEXT, "%s", f[i].file ? f[i].file : "");
    snprintf(out[i].module, LV_TEXT, "%s", f[i].module ? f[i].module : "");
    out[i].line = f[i].line;
    out[i].python = f[i].python;
  }
}

/* The top LV_SITES sites of every process by live bytes, largest first
 * (an insertion into a short sorted list: O(sites x LV_SITES) at worst). */
static void rank_sites(struct gt_live_view *v, struct lv_figures *f,
                       struct lv_site **site, struct lv_proc **owner) {
  f->nsites = 0;
  for (unsigned i = 0; i < v->nprocs; i++)
    for (size_t j = 0; j < v->procs[i]->nsites; j++) {
      struct lv_site *s = &v->procs[i]->sites[j];
      unsigned k = f->nsites < LV_SITES ? f->nsites++ : LV_SITES;
      while (k > 0 && site[k - 1]->live < s->live) {
        if (k < LV_SITES)
          site[k] = site[k - 1], owner[k] = owner[k - 1];
        k--;
      }
      if (k < LV_SITES)
        site[k] = s, owner[k] = v->procs[i];
    }
}

void gt_live_view_publish(struct gt_live_view *v) {
  if (!v)
    return;
  struct lv_figures *f = &v->build;
  f->nprocs = v->nprocs;
  for (unsigned i = 0; i < v->nprocs; i++) {
    struct lv_proc *p = v->procs[i];
    struct gt_heap *h = gt_model_heap(p->model);
    f->procs[i].pid = p->pid;
    f->procs[i].live = gt_heap_live_bytes(h, p->pid, GT_MEM_DEVICE);
    f->procs[i].peak = gt_heap_peak_bytes(h, p->pid, GT_MEM_DEVICE);
    f->procs[i].launches = p->launches;
  }
  struct lv_site *site[LV_SITES];
  struct lv_proc *owner[LV_SITES];
  if (v->sites_changed)
    rank_sites(v, f, site, owner);
  for (unsigned i = 0; v->sites_changed && i < f->nsites; i++) {
    f->sites[i].pid = owner[i]->pid;
    f->sites[i].live = site[i]->live;
    f->sites[i].blocks = site[i]->blocks;
    frames_of(owner[i], site[i]->stack_id, &f->sites[i].nframes, f->sites[i].frames);
  }
  v->sites_changed = 0;
  pthread_mutex_lock(&v->mu);
  v->snap = *f;
  pthread_mutex_unlock(&v->mu);
}

/* ---- /top.jsonl (the HTTP thread) ---- */

static void put_string(struct prom_buf *b, const char *s) {
  prom_put(b, "\"");
  for (const unsigned char *q = (const unsigned char *)s; *q; q++)
    if (*q == '"' || *q == '\\')
      prom_put(b, "\\%c", *q);
    else if (*q < 0x20 || *q == 0x7f)
      prom_put(b, "\\u%04x", *q);
    else
      prom_put(b, "%c", *q);
  prom_put(b, "\"");
}

static void put_site(struct prom_buf *b, const struct lv_figures *f, unsigned i) {
  prom_put(b, "{\"site\":%u,\"pid\":%u,\"live_bytes\":%llu,\"blocks\":%llu}\n", i + 1,
           f->sites[i].pid, (unsigned long long)f->sites[i].live,
           (unsigned long long)f->sites[i].blocks);
  for (unsigned k = 0; k < f->sites[i].nframes; k++) {
    const struct lv_frame *fr = &f->sites[i].frames[k];
    prom_put(b, "{\"frame\":%u,\"function\":", i + 1);
    put_string(b, fr->function);
    prom_put(b, ",\"file\":");
    put_string(b, fr->file);
    prom_put(b, ",\"line\":%u,\"module\":", fr->line);
    put_string(b, fr->module);
    prom_put(b, ",\"python\":%d}\n", fr->python);
  }
}

char *gt_live_view_format(struct gt_live_view *v, size_t *len) {
  struct lv_figures *f = v ? malloc(sizeof *f) : NULL;
  if (!f)
    return NULL;
  pthread_mutex_lock(&v->mu);
  *f = v->snap;
  pthread_mutex_unlock(&v->mu);
  struct prom_buf b = {0};
  prom_put(&b, "{\"gputrace_top\":1}\n");
  for (unsigned i = 0; i < f->nprocs; i++)
    prom_put(&b,
             "{\"process\":%u,\"live_bytes\":%llu,\"peak_bytes\":%llu,"
             "\"launches\":%llu}\n",
             f->procs[i].pid, (unsigned long long)f->procs[i].live,
             (unsigned long long)f->procs[i].peak,
             (unsigned long long)f->procs[i].launches);
  for (unsigned i = 0; i < f->nsites; i++)
    put_site(&b, f, i);
  free(f);
  *len = b.len;
  return b.s;
}
