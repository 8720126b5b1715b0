/* report_device.c — device intervals and what they explain (see report.h).
 *
 * DEVICE records say when queued work really ran. Per process they are
 * merged into two sorted lists of busy stretches (kernels; copies and
 * memsets), so memory grows with the device's idle gaps, not its work.
 * At the end (rp_device_finish):
 *  - each blocking call kept by the streaming pass is split exactly: the
 *    part of its interval the device spent in kernels, then in copies
 *    (only where no kernel ran), then the rest (device idle while the host
 *    waited: sync overhead; or, when the device records are sampled 1 in N,
 *    work nobody timed, split by the CPU-side rule); calls of processes
 *    without DEVICE records use the CPU-side rule;
 *  - each NVTX range occurrence gets the time its process's device was
 *    busy inside it;
 *  - device idle gaps and utilization per chunk come from the same lists;
 *    processes without DEVICE records keep the CPU-side model's gaps.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void runs_insert(struct rp_runs *x, size_t at, uint64_t s, uint64_t e) {
  size_t cap = x->cap, cap2 = x->cap;
  x->s = gt_grow(x->s, &cap, x->n + 1, sizeof *x->s);
  x->e = gt_grow(x->e, &cap2, x->n + 1, sizeof *x->e);
  x->cap = cap;
  memmove(x->s + at + 1, x->s + at, (x->n - at) * sizeof *x->s);
  memmove(x->e + at + 1, x->e + at, (x->n - at) * sizeof *x->e);
  x->s[at] = s;
  x->e[at] = e;
  x->n++;
}

/* First run ending after t (binary search). */
static size_t first_after(const struct rp_runs *x, uint64_t t) {
  size_t lo = 0, hi = x->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (x->e[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void rp_runs_add(struct rp_runs *x, uint64_t s, uint64_t e) {
  if (e <= s)
    return;
  size_t n = x->n;
  /* Device records come mostly in order: append, or extend the last run. */
  if (n == 0 || s > x->e[n - 1]) {
    runs_insert(x, n, s, e);
    return;
  }
  if (s >= x->s[n - 1]) {
    if (e > x->e[n - 1])
      x->e[n - 1] = e;
    return;
  }
  /* The runs that overlap or touch [s, e] merge with it: from the first
   * one ending at or after s (e > s - 1) to the last starting by e. */
  size_t lo = first_after(x, s ? s - 1 : 0), hi;
  for (hi = lo; hi < n && x->s[hi] <= e; hi++)
    ;
  if (hi == lo) {
    runs_insert(x, lo, s, e);
    return;
  }
  uint64_t ns = s < x->s[lo] ? s : x->s[lo], ne = e > x->e[hi - 1] ? e : x->e[hi - 1];
  x->s[lo] = ns;
  x->e[lo] = ne;
  memmove(x->s + lo + 1, x->s + hi, (n - hi) * sizeof *x->s);
  memmove(x->e + lo + 1, x->e + hi, (n - hi) * sizeof *x->e);
  x->n = n - (hi - lo - 1);
}

uint64_t rp_runs_overlap(const struct rp_runs *x, uint64_t s, uint64_t e) {
  uint64_t total = 0;
  for (size_t i = first_after(x, s); i < x->n && x->s[i] < e; i++)
    total += (x->e[i] < e ? x->e[i] : e) - (x->s[i] > s ? x->s[i] : s);
  return total;
}

/* Walks the union of two run lists as merged, sorted stretches. */
struct uwalk {
  const struct rp_runs *a, *b;
  size_t i, j;
  int has;
  uint64_t cs, ce;
};

static int raw_next(struct uwalk *w, uint64_t *s, uint64_t *e) {
  int ta = w->i < w->a->n, tb = w->j < w->b->n;
  if (!ta && !tb)
    return 0;
  if (ta && (!tb || w->a->s[w->i] <= w->b->s[w->j])) {
    *s = w->a->s[w->i];
    *e = w->a->e[w->i++];
  } else {
    *s = w->b->s[w->j];
    *e = w->b->e[w->j++];
  }
  return 1;
}

static int uwalk_next(struct uwalk *w, uint64_t *s, uint64_t *e) {
  if (!w->has && !(w->has = raw_next(w, &w->cs, &w->ce)))
    return 0;
  *s = w->cs;
  *e = w->ce;
  w->has = 0;
  uint64_t ns, ne;
  while (raw_next(w, &ns, &ne)) {
    if (ns <= *e) {
      if (ne > *e)
        *e = ne;
    } else {
      w->cs = ns;
      w->ce = ne;
      w->has = 1;
      break;
    }
  }
  return 1;
}

uint64_t rp_union_overlap(const struct rp_runs *a, const struct rp_runs *b, uint64_t s,
                          uint64_t e) {
  /* Merge only the runs that start before e: a busy stretch reaching far
   * past e must not be walked to its end (that made this quadratic). */
  size_t i = first_after(a, s), j = first_after(b, s);
  uint64_t total = 0, cs = 0, ce = 0;
  int have = 0;
  for (;;) {
    int ta = i < a->n && a->s[i] < e, tb = j < b->n && b->s[j] < e;
    uint64_t ns, ne;
    if (!ta && !tb)
      break;
    if (ta && (!tb || a->s[i] <= b->s[j])) {
      ns = a->s[i];
      ne = a->e[i++];
    } else {
      ns = b->s[j];
      ne = b->e[j++];
    }
    ns = ns > s ? ns : s;
    ne = ne < e ? ne : e;
    if (have && ns <= ce) {
      ce = ne > ce ? ne : ce;
    } else {
      total += have ? ce - cs : 0;
      cs = ns;
      ce = ne;
      have = 1;
    }
  }
  return total + (have ? ce - cs : 0);
}

/* ---- the end-of-trace pass ---- */

static void attribute(struct report *r, const struct rp_proc *p,
                      const struct rp_blocked *b) {
  uint64_t len = b->end - b->start, k = 0, c = 0, s = 0;
  if (p->kruns.n || p->cruns.n) {
    uint64_t kd = rp_runs_overlap(&p->kruns, b->start, b->end);
    uint64_t u = rp_union_overlap(&p->kruns, &p->cruns, b->start, b->end);
    uint64_t rest = len - u;
    if (p->dev_sample <= 1) { /* everything was timed: the device was idle */
      k = kd;
      c = u - kd + (b->flags & RP_BL_COPYCALL ? rest : 0);
      s = b->flags & RP_BL_COPYCALL ? 0 : rest;
    } else { /* work nobody timed: the CPU-side rule for the rest */
      uint64_t est = b->copy_est > u - kd ? b->copy_est - (u - kd) : 0;
      rp_cpu_split(rest, est, b->flags, &k, &c, &s);
      k += kd;
      c += u - kd;
    }
  } else {
    rp_cpu_split(len, b->copy_est, b->flags, &k, &c, &s);
  }
  r->sh.kernel += k;
  r->sh.copy += c;
  r->sh.sync += s;
  if (rp_is_sync_api(b->api)) {
    r->sync[b->api].kernel_ns += k;
    r->sync[b->api].copy_ns += c;
    r->sync[b->api].sync_ns += s;
  }
}

static uint64_t busy_in(struct report *r, uint32_t pid, uint64_t s, uint64_t e) {
  const struct rp_proc *p = rp_proc_of(r, pid);
  return rp_union_overlap(&p->kruns, &p->cruns, s, e);
}

static void range_gpu(struct report *r) {
  for (size_t i = 0; i < r->rnames.n; i++) {
    struct rp_range *g = &r->ranges[i];
    g->cold.gpu_ns = busy_in(r, g->cold.pid, g->cold.start, g->cold.end);
    for (size_t j = 0; j < g->nspans; j++)
      g->gpu_ns += busy_in(r, g->spans[j].pid, g->spans[j].start, g->spans[j].end);
  }
}

static void add_gap(struct rp_gaps *g, uint64_t at, uint64_t len) {
  g->count++;
  g->total_ns += len;
  if (len > g->max_ns) {
    g->max_ns = len;
    g->max_at = at;
  }
}

/* Gaps between busy stretches, and busy time per chunk of the window. */
static void walk_device(struct report *r, const struct rp_proc *p, double *busy) {
  uint64_t t0 = r->first_ns, span = r->last_ns > t0 ? r->last_ns - t0 : 0, s, e, prev = 0;
  struct uwalk w = {&p->kruns, &p->cruns, 0, 0, 0, 0, 0};
  while (uwalk_next(&w, &s, &e)) {
    if (prev && s - prev >= RP_GAP_NS && s > t0 && prev < r->last_ns)
      add_gap(&r->gaps, prev, s - prev);
    prev = e;
    if (!span)
      continue;
    uint64_t cs = s > t0 ? s : t0, ce = e < r->last_ns ? e : r->last_ns;
    for (uint64_t c = (cs - t0) * RP_UTIL_CHUNKS / span; ce > cs && c < RP_UTIL_CHUNKS;
         c++) {
      uint64_t lo = t0 + span * c / RP_UTIL_CHUNKS,
               hi = t0 + span * (c + 1) / RP_UTIL_CHUNKS;
      if (lo >= ce)
        break;
      uint64_t a = cs > lo ? cs : lo, b = ce < hi ? ce : hi;
      if (b > a)
        busy[c] += (double)(b - a);
    }
  }
}

void rp_attribute_blocked(struct report *r, struct rp_proc *p) {
  for (size_t j = 0; j < p->nbl; j++)
    attribute(r, p, &p->bl[j]);
  free(p->bl);
  p->bl = NULL;
  p->nbl = p->capbl = 0;
}

void rp_device_finish(struct report *r) {
  double busy[RP_UTIL_CHUNKS] = {0};
  for (size_t i = 0; i < r->nprocs; i++) {
    struct rp_proc *p = &r->procs[i];
    rp_attribute_blocked(r, p);
    if (p->dev_records) {
      r->gaps_measured = 1;
      walk_device(r, p, busy);
    } else if (p->gaps.count) {
      r->gaps.count += p->gaps.count;
      r->gaps.total_ns += p->gaps.total_ns;
      if (p->gaps.max_ns > r->gaps.max_ns) {
        r->gaps.max_ns = p->gaps.max_ns;
        r->gaps.max_at = p->gaps.max_at;
      }
    }
  }
  if (r->dev_records)
    range_gpu(r);
  uint64_t span = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
  for (int c = 0; c < RP_UTIL_CHUNKS && span; c++) {
    double len = (double)(span * (c + 1) / RP_UTIL_CHUNKS - span * c / RP_UTIL_CHUNKS);
    r->util[c] = len > 0 ? (busy[c] / len > 1 ? 1 : busy[c] / len) : 0;
  }
}
