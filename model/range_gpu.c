/* range_gpu.c — see range_gpu.h.
 *
 * Occurrences live in a pool of slots (handle = slot + 1) with a count of
 * the remembered calls that refer to them; each thread keeps the handles
 * of its open occurrences in open order. Work calls go into a ring of
 * entries, found by (pid, tid, corr) through a map; an entry leaving the
 * ring or matched by its DEVICE record drops its references. */
#include "range_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "util.h"

struct occ {
  uint64_t user;
  double ns;
  uint32_t refs, thr; /* thr: its thread's index */
  uint8_t used, closed;
};

struct thr {
  uint32_t *open; /* handles, outermost first */
  size_t n, cap;
};

struct ent {
  uint32_t pid, tid, corr;
  uint8_t n, graph, live, matched;
  uint32_t occ[GT_RGPU_DEPTH];
};

struct early { /* DEVICE records before their call (a synchronous copy's) */
  uint32_t pid, tid, corr, live;
  double ns;
};

#define EARLY_N 4096 /* DEVICE records kept waiting for their call */

struct gt_rgpu {
  struct gt_rgpu_hooks h;
  struct early early[EARLY_N];
  uint64_t early_seq;
  struct gt_map early_idx; /* key -> early index */
  struct occ *occs;
  size_t nocc, cocc;
  uint32_t *free_occ;
  size_t nfree, cfree;
  struct thr *thrs;
  size_t nthr, cthr;
  struct gt_map thr_idx;
  struct ent *ring;
  size_t ring_n;
  uint64_t seq;
  struct gt_map ent_idx; /* key -> ring index */
  uint64_t late;
};

struct gt_rgpu *gt_rgpu_new(size_t ring, const struct gt_rgpu_hooks *hooks) {
  struct gt_rgpu *g = gt_xcalloc(1, sizeof *g);
  g->ring_n = ring ? ring : GT_RGPU_RING_DEFAULT;
  g->ring = gt_xcalloc(g->ring_n, sizeof *g->ring);
  if (hooks)
    g->h = *hooks;
  gt_map_init(&g->thr_idx);
  gt_map_init(&g->ent_idx);
  gt_map_init(&g->early_idx);
  return g;
}

void gt_rgpu_free(struct gt_rgpu *g) {
  if (!g)
    return;
  for (size_t i = 0; i < g->nthr; i++)
    free(g->thrs[i].open);
  free(g->thrs);
  free(g->occs);
  free(g->free_occ);
  free(g->ring);
  gt_map_free(&g->thr_idx);
  gt_map_free(&g->ent_idx);
  gt_map_free(&g->early_idx);
  free(g);
}

static struct thr *thread_of(struct gt_rgpu *g, uint32_t pid, uint32_t tid, int add,
                             uint32_t *idx) {
  uint64_t key = gt_pid_key(pid, tid), i;
  if (!add) {
    if (!gt_map_get(&g->thr_idx, key, &i))
      return NULL;
    *idx = (uint32_t)i;
    return &g->thrs[i];
  }
  size_t at;
  int added;
  g->thrs = gt_find_or_add(&g->thr_idx, key, g->thrs, &g->nthr, &g->cthr, sizeof *g->thrs,
                           &at, &added);
  *idx = (uint32_t)at;
  return &g->thrs[at];
}

static void finish_occ(struct gt_rgpu *g, uint32_t handle) {
  struct occ *o = &g->occs[handle - 1];
  if (g->h.done)
    g->h.done(g->h.ctx, o->user, o->ns);
  o->used = 0;
  g->free_occ = gt_grow(g->free_occ, &g->cfree, g->nfree + 1, sizeof *g->free_occ);
  g->free_occ[g->nfree++] = handle;
}

uint64_t gt_rgpu_open(struct gt_rgpu *g, uint32_t pid, uint32_t tid, uint64_t user) {
  uint32_t h;
  if (g->nfree) {
    h = g->free_occ[--g->nfree];
  } else {
    g->occs = gt_grow(g->occs, &g->cocc, g->nocc + 1, sizeof *g->occs);
    h = (uint32_t)++g->nocc;
  }
  uint32_t ti;
  struct thr *t = thread_of(g, pid, tid, 1, &ti);
  g->occs[h - 1] = (struct occ){.user = user, .thr = ti, .used = 1};
  t->open = gt_grow(t->open, &t->cap, t->n + 1, sizeof *t->open);
  t->open[t->n++] = h;
  return h;
}

void gt_rgpu_close(struct gt_rgpu *g, uint64_t handle) {
  if (!handle || handle > g->nocc || !g->occs[handle - 1].used ||
      g->occs[handle - 1].closed)
    return;
  struct occ *o = &g->occs[handle - 1];
  struct thr *t = &g->thrs[o->thr];
  for (size_t j = t->n; j-- > 0;) /* the innermost first: pops close it */
    if (t->open[j] == handle) {
      memmove(&t->open[j], &t->open[j + 1], (t->n - j - 1) * sizeof *t->open);
      t->n--;
      break;
    }
  o->closed = 1;
  if (!o->refs)
    finish_occ(g, (uint32_t)handle);
}

static uint64_t ent_key(uint32_t pid, uint32_t tid, uint32_t corr) {
  return gt_pid_key(pid, (uint64_t)tid << 32 | corr);
}

static void release(struct gt_rgpu *g, struct ent *e) {
  if (!e->live)
    return;
  e->live = 0;
  g->late += !e->matched;
  uint64_t key = ent_key(e->pid, e->tid, e->corr), at;
  if (gt_map_get(&g->ent_idx, key, &at) && &g->ring[at] == e)
    gt_map_del(&g->ent_idx, key);
  for (unsigned i = 0; i < e->n; i++) {
    struct occ *o = &g->occs[e->occ[i] - 1];
    if (--o->refs == 0 && o->closed)
      finish_occ(g, e->occ[i]);
  }
}

/* ns of device time for the occurrences a call was made in. */
static void apply(struct gt_rgpu *g, struct ent *e, double ns) {
  e->matched = 1;
  for (unsigned i = 0; i < e->n; i++) {
    struct occ *o = &g->occs[e->occ[i] - 1];
    o->ns += ns;
    if (g->h.add)
      g->h.add(g->h.ctx, o->user, ns);
  }
  if (!e->graph)
    release(g, e);
}

/* A DEVICE record that came before its call: ns, and forgets it; 0 when none. */
static int take_early(struct gt_rgpu *g, uint64_t key, const struct ent *e, double *ns) {
  uint64_t at;
  if (!gt_map_get(&g->early_idx, key, &at))
    return 0;
  struct early *x = &g->early[at];
  gt_map_del(&g->early_idx, key);
  if (!x->live || x->pid != e->pid || x->tid != e->tid || x->corr != e->corr)
    return 0;
  x->live = 0;
  *ns = x->ns;
  return 1;
}

/* A call's several early records (a graph launch's nodes) add up in one. */
static void keep_early(struct gt_rgpu *g, const struct gt_record *d, double ns) {
  uint64_t key = ent_key(d->pid, d->tid, d->u.device.corr), was;
  if (gt_map_get(&g->early_idx, key, &was)) {
    struct early *x = &g->early[was];
    if (x->live && x->pid == d->pid && x->tid == d->tid && x->corr == d->u.device.corr) {
      x->ns += ns;
      return;
    }
  }
  size_t at = g->early_seq++ % EARLY_N;
  struct early *x = &g->early[at];
  if (x->live)
    gt_map_del(&g->early_idx, ent_key(x->pid, x->tid, x->corr));
  *x = (struct early){d->pid, d->tid, d->u.device.corr, 1, ns};
  if (gt_map_put(&g->early_idx, key, at) != 0)
    gt_oom();
}

int gt_rgpu_is_work(const struct gt_record *r) {
  return (r->kind == GT_KIND_LAUNCH || r->kind == GT_KIND_MEMCPY ||
          r->kind == GT_KIND_MEMSET) &&
         r->result == 0 && gt_record_corr(r) != 0 &&
         !(r->flags & (GT_F_CAPTURED | GT_F_NODE | GT_F_GRAPH_RUN | GT_F_HOST_FN));
}

void gt_rgpu_call(struct gt_rgpu *g, const struct gt_record *r) {
  if (!gt_rgpu_is_work(r))
    return;
  uint32_t ti;
  struct thr *t = thread_of(g, r->pid, r->tid, 0, &ti);
  if (!t || !t->n)
    return;
  struct ent *e = &g->ring[g->seq++ % g->ring_n];
  release(g, e); /* the oldest call: its DEVICE record did not come in time */
  uint64_t key = ent_key(r->pid, r->tid, gt_record_corr(r)), at;
  if (gt_map_get(&g->ent_idx, key, &at))
    release(g, &g->ring[at]); /* a correlation id used again */
  *e = (struct ent){.pid = r->pid,
                    .tid = r->tid,
                    .corr = gt_record_corr(r),
                    .graph = r->kind == GT_KIND_LAUNCH && (r->flags & GT_F_GRAPH) != 0,
                    .live = 1};
  size_t from = t->n > GT_RGPU_DEPTH ? t->n - GT_RGPU_DEPTH : 0;
  for (size_t i = from; i < t->n; i++) {
    e->occ[e->n++] = t->open[i];
    g->occs[t->open[i] - 1].refs++;
  }
  if (gt_map_put(&g->ent_idx, key, (uint64_t)(e - g->ring)) != 0)
    gt_oom();
  double ns;
  if (g->early_idx.count && take_early(g, key, e, &ns))
    apply(g, e, ns);
}

int gt_rgpu_counts(const struct gt_record *d) {
  return d->kind == GT_KIND_DEVICE && (d->flags & (GT_F_GRAPH_RUN | GT_F_ESTIMATED)) !=
                                          (GT_F_GRAPH_RUN | GT_F_ESTIMATED);
}

void gt_rgpu_device(struct gt_rgpu *g, const struct gt_record *d) {
  if (!gt_rgpu_counts(d))
    return;
  double ns = (double)d->dur_ns * (d->u.device.sample > 1 ? d->u.device.sample : 1);
  uint64_t at;
  if (!gt_map_get(&g->ent_idx, ent_key(d->pid, d->tid, d->u.device.corr), &at)) {
    /* its call may follow: a synchronous copy's, or work that ended before
     * its thread, preempted, wrote the call (a graph launch's node records) */
    keep_early(g, d, ns);
    return;
  }
  struct ent *e = &g->ring[at];
  if (e->live && e->pid == d->pid && e->tid == d->tid && e->corr == d->u.device.corr)
    apply(g, e, ns);
}

void gt_rgpu_flush(struct gt_rgpu *g) {
  for (size_t i = 0; i < g->ring_n; i++)
    release(g, &g->ring[i]);
  for (size_t i = 0; i < g->nthr; i++)
    g->thrs[i].n = 0;
  for (size_t h = 1; h <= g->nocc; h++)
    if (g->occs[h - 1].used)
      finish_occ(g, (uint32_t)h);
}

uint64_t gt_rgpu_late(const struct gt_rgpu *g) {
  return g->late;
}
