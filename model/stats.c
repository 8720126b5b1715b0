/* stats.c — see stats.h. */
#include "stats.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- durations ---- */

static void widen(struct gt_durs *d) {
  uint64_t *w = gt_xcalloc(d->cap ? d->cap : 1, sizeof *w);
  const uint32_t *s = d->v;
  for (size_t i = 0; i < d->n; i++)
    w[i] = s[i];
  free(d->v);
  d->v = w;
  d->wide = 1;
}

void gt_durs_add(struct gt_durs *d, uint64_t ns) {
  if (ns > UINT32_MAX && !d->wide)
    widen(d);
  if (d->n == d->cap) {
    size_t cap = d->cap;
    d->v = gt_grow(d->v, &cap, d->n + 1, d->wide ? 8 : 4);
    d->cap = cap;
  }
  if (d->wide)
    ((uint64_t *)d->v)[d->n++] = ns;
  else
    ((uint32_t *)d->v)[d->n++] = (uint32_t)ns;
  d->sum += ns;
  if (ns > d->max)
    d->max = ns;
}

size_t gt_rank(unsigned pct, size_t n) {
  if (n == 0)
    return 0;
  /* k = ceil(pct * n / 100), 1-based, in integers (exact for any n). */
  size_t k = (size_t)(((unsigned __int128)pct * n + 99) / 100);
  if (k < 1)
    k = 1;
  if (k > n)
    k = n;
  return k - 1;
}

/* Quickselect (Hoare partition, median-of-three pivot): afterwards a[k] is
 * the value sorted order puts there, a[lo..k) <= a[k] <= a(k..hi]. One
 * definition for both element widths. */
#define GT_SELECT(NAME, T)                                                               \
  static void NAME(T *a, size_t lo, size_t hi, size_t k) {                               \
    while (hi > lo) {                                                                    \
      size_t mid = lo + (hi - lo) / 2;                                                   \
      T x = a[lo], y = a[mid], z = a[hi];                                                \
      T pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));   \
      size_t i = lo, j = hi;                                                             \
      while (i <= j) {                                                                   \
        while (a[i] < pivot)                                                             \
          i++;                                                                           \
        while (a[j] > pivot)                                                             \
          j--;                                                                           \
        if (i <= j) {                                                                    \
          T t = a[i];                                                                    \
          a[i] = a[j];                                                                   \
          a[j] = t;                                                                      \
          i++;                                                                           \
          if (j == 0)                                                                    \
            break;                                                                       \
          j--;                                                                           \
        }                                                                                \
      }                                                                                  \
      if (k <= j)                                                                        \
        hi = j;                                                                          \
      else if (k >= i)                                                                   \
        lo = i;                                                                          \
      else                                                                               \
        return;                                                                          \
    }                                                                                    \
  }
GT_SELECT(select32, uint32_t)
GT_SELECT(select64, uint64_t)

/* One counting pass of radix_select32 over a[0..n): the high 16 bits of
 * every value (nd == 0), or the low 16 bits of the values whose high bits
 * are distinct[d], into hist[d * 65536 + low]. */
struct radix_pass {
  const uint32_t *a;
  size_t n;
  uint32_t *hist;
  const uint32_t *distinct;
  size_t nd;
};

static void *radix_count(void *arg) {
  const struct radix_pass *p = arg;
  const uint32_t *a = p->a;
  if (p->nd == 0) {
    for (size_t i = 0; i < p->n; i++)
      p->hist[a[i] >> 16]++;
  } else if (p->nd == 1) {
    /* The usual case, without the inner loop: faster (docs/PERFORMANCE.md,
     * Figures moved out of code comments). */
    for (size_t i = 0; i < p->n; i++)
      if (a[i] >> 16 == p->distinct[0])
        p->hist[a[i] & 0xffff]++;
  } else {
    for (size_t i = 0; i < p->n; i++)
      for (size_t d = 0; d < p->nd; d++)
        if (a[i] >> 16 == p->distinct[d])
          p->hist[d * 65536 + (a[i] & 0xffff)]++;
  }
  return NULL;
}

/* A pass over many values: the second half counted on a helper thread into
 * its own histogram, then added in. The report computes percentiles after
 * the trace is read, when the decompression threads are done and their
 * cores idle (the report's finish: docs/PERFORMANCE.md, One session for
 * every command). */
#define RADIX_SPLIT_MIN (1u << 20)
static void radix_count_split(struct radix_pass p) {
  size_t len = 65536 * (p.nd ? p.nd : 1);
  pthread_t helper;
  struct radix_pass second = p;
  if (p.n < RADIX_SPLIT_MIN || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    radix_count(&p);
    return;
  }
  second.a += p.n / 2;
  second.n -= p.n / 2;
  second.hist = gt_xcalloc(len, sizeof *second.hist);
  p.n /= 2;
  int threaded = pthread_create(&helper, NULL, radix_count, &second) == 0;
  radix_count(&p);
  if (threaded)
    pthread_join(helper, NULL);
  else
    radix_count(&second);
  for (size_t i = 0; i < len; i++)
    p.hist[i] += second.hist[i];
  free(second.hist);
}

/* Exact k-th smallest of 32-bit values for up to 8 ranks in two passes
 * (no reordering): count the high 16 bits, then, within the bucket each
 * rank falls in, the low 16 bits. Faster than quickselect on millions.
 * Ranks often fall in one bucket (durations under 65.5 µs are all in
 * bucket 0): each distinct bucket is counted once. */
static void radix_select32(const uint32_t *a, size_t n, const size_t *ks, size_t nk,
                           uint64_t *out) {
  uint32_t *hist = gt_xcalloc(65536, sizeof *hist); /* counts fit: n < 2^32 checked */
  uint32_t bucket[8], distinct[8];
  size_t before[8], which[8], nd = 0;
  radix_count_split((struct radix_pass){a, n, hist, NULL, 0});
  for (size_t j = 0; j < nk; j++) {
    size_t acc = 0;
    uint32_t b = 0;
    while (acc + hist[b] <= ks[j])
      acc += hist[b++];
    bucket[j] = b;
    before[j] = acc;
    for (which[j] = 0; which[j] < nd && distinct[which[j]] != b; which[j]++)
      ;
    if (which[j] == nd)
      distinct[nd++] = b;
  }
  uint32_t *low = gt_xcalloc(65536 * nd, sizeof *low);
  radix_count_split((struct radix_pass){a, n, low, distinct, nd});
  for (size_t j = 0; j < nk; j++) {
    const uint32_t *lw = low + which[j] * 65536;
    size_t acc = before[j];
    uint32_t v = 0;
    while (acc + lw[v] <= ks[j])
      acc += lw[v++];
    out[j] = (uint64_t)bucket[j] << 16 | v;
  }
  free(hist);
  free(low);
}

void gt_durs_percentiles(struct gt_durs *d, const unsigned *pcts, size_t npcts,
                         uint64_t *out) {
  if (!d->wide && d->n >= 4096 && d->n < UINT32_MAX && npcts <= 8) {
    size_t ks[8];
    for (size_t i = 0; i < npcts; i++)
      ks[i] = gt_rank(pcts[i], d->n);
    radix_select32(d->v, d->n, ks, npcts, out);
    return;
  }
  /* Ascending ranks: each select only has to look right of the last one. */
  size_t lo = 0;
  for (size_t i = 0; i < npcts; i++) {
    if (d->n == 0) {
      out[i] = 0;
      continue;
    }
    size_t k = gt_rank(pcts[i], d->n);
    if (k < lo)
      k = lo; /* pcts not ascending: cannot happen with our callers */
    if (d->wide) {
      select64(d->v, lo, d->n - 1, k);
      out[i] = ((uint64_t *)d->v)[k];
    } else {
      select32(d->v, lo, d->n - 1, k);
      out[i] = ((uint32_t *)d->v)[k];
    }
    lo = k;
  }
}

size_t gt_durs_bytes(const struct gt_durs *d) {
  return d->cap * (d->wide ? 8 : 4);
}

void gt_durs_free(struct gt_durs *d) {
  free(d->v);
  memset(d, 0, sizeof *d);
}

/* ---- string table ---- */

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

size_t gt_strtab_intern(struct gt_strtab *t, const char *s) {
  uint64_t h = fnv1a(s), idx;
  /* Collisions of different strings: probe h+1, h+2, ... */
  for (;; h++) {
    if (!gt_map_get(&t->index, h, &idx))
      break;
    if (strcmp(t->strs[idx], s) == 0)
      return idx;
  }
  t->strs = gt_grow(t->strs, &t->cap, t->n + 1, sizeof *t->strs);
  if (!(t->strs[t->n] = strdup(s)) || gt_map_put(&t->index, h, t->n) != 0)
    gt_oom();
  return t->n++;
}

size_t gt_strtab_find(const struct gt_strtab *t, const char *s) {
  uint64_t idx;
  for (uint64_t h = fnv1a(s); gt_map_get(&t->index, h, &idx); h++)
    if (strcmp(t->strs[idx], s) == 0)
      return idx;
  return SIZE_MAX;
}

void gt_strtab_free(struct gt_strtab *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->strs[i]);
  free(t->strs);
  gt_map_free(&t->index);
  memset(t, 0, sizeof *t);
}

/* ---- human units ---- */

const char *gt_fmt_ns(char *buf, size_t len, uint64_t ns) {
  double v = (double)ns;
  if (ns < 1000)
    snprintf(buf, len, "%" PRIu64 " ns", ns);
  else if (ns < 1000000)
    snprintf(buf, len, "%.*f µs", v < 1e4 ? 2 : v < 1e5 ? 1 : 0, v / 1e3);
  else if (ns < 1000000000)
    snprintf(buf, len, "%.*f ms", v < 1e7 ? 2 : v < 1e8 ? 1 : 0, v / 1e6);
  else
    snprintf(buf, len, "%.2f s", v / 1e9);
  return buf;
}

const char *gt_fmt_bytes(char *buf, size_t len, uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    snprintf(buf, len, "%" PRIu64 " B", bytes);
    return buf;
  }
  double v = (double)bytes / 1024;
  unsigned u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
  return buf;
}

const char *gt_fmt_gbps(char *buf, size_t len, uint64_t bytes, uint64_t ns) {
  if (ns == 0)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.2f GB/s", (double)bytes / (double)ns);
  return buf;
}

const char *gt_fmt_pct(char *buf, size_t len, double part, double whole) {
  if (whole <= 0)
    snprintf(buf, len, "-");
  else /* a part of a whole: a part said to be larger (damage) is all of it */
    snprintf(buf, len, "%.1f %%",
             part >= whole ? 100.0
             : part <= 0   ? 0.0
                           : 100.0 * part / whole);
  return buf;
}
