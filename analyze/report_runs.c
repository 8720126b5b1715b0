/* report_runs.c — sorted lists of busy stretches (struct rp_runs, see
 * report.h): a process's device time as merged intervals, so memory grows
 * with the device's idle gaps, not its work. Kept by the streaming pass
 * (report_collect.c), read by the device pass (report_device.c). */
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

static int raw_next(struct rp_uwalk *w, uint64_t *s, uint64_t *e) {
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

int rp_uwalk_next(struct rp_uwalk *w, uint64_t *s, uint64_t *e) {
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
