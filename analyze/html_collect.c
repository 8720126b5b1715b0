/* html_collect.c — the time series of `gputrace html` (see html.h).
 *
 * Contract: ht_init hooks ht_data onto the report's pass (report.tap), so
 * the trace is read once for the report and the series together. What is
 * gathered, for the window (--from/--to) and the process (--pid) asked for:
 *  - each process's live device+managed bytes after every allocation and
 *    free (the allocation layer's count: its largest value is the layer's
 *    peak, the report's "peak device+managed"), at most HT_MAX_SERIES
 *    processes (those past it are counted); a rolling set's first file read
 *    adds the peak it carries, when it was reached, and what was live as it
 *    opened;
 *  - NVML readings (METRIC records) that vary in time, per reading and
 *    device, at most HT_MAX_SERIES series (readings of others counted);
 *  - outermost NVTX ranges (push ranges at depth 0, start/end ranges), at
 *    most HT_MARKS, one in every `stride` kept when there are more.
 * Buckets: HT_BUCKETS of one width for every series; when a record falls
 * past the last, neighbours are merged and the width doubled. Memory is
 * fixed: a few hundred KiB.
 */
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "util.h"

#define FIRST_WIDTH_NS 1000ull /* 1 us: a run of 0.5 ms fills the buckets */

void ht_free(struct ht_data *d) {
  for (int i = 0; i < d->nmem; i++)
    free(d->mem[i]);
  for (int i = 0; i < d->nmetric; i++)
    free(d->metric[i]);
  gt_strtab_free(&d->mark_names);
}

double ht_bucket_s(const struct ht_data *d, int i) {
  return (double)((uint64_t)i * d->width) / 1e9;
}

static void merge_series(struct ht_series *s) {
  for (int i = 0; i < HT_BUCKETS / 2; i++) {
    int a = 2 * i, b = 2 * i + 1;
    double mn = s->has[a] ? s->min[a] : s->min[b], mx = s->has[a] ? s->max[a] : s->max[b];
    if (s->has[a] && s->has[b]) {
      mn = s->min[b] < mn ? s->min[b] : mn;
      mx = s->max[b] > mx ? s->max[b] : mx;
    }
    s->has[i] = s->has[a] | s->has[b];
    s->min[i] = mn;
    s->max[i] = mx;
    s->last[i] = s->has[b] ? s->last[b] : s->last[a];
  }
  memset(s->has + HT_BUCKETS / 2, 0, HT_BUCKETS - HT_BUCKETS / 2);
}

static void widen(struct ht_data *d) {
  for (int i = 0; i < d->nmem; i++)
    merge_series(d->mem[i]);
  for (int i = 0; i < d->nmetric; i++)
    merge_series(d->metric[i]);
  d->width *= 2;
  d->nb = (d->nb + 1) / 2;
}

static int bucket_of(struct ht_data *d, uint64_t ts) {
  uint64_t rel = ts > d->base ? ts - d->base : 0;
  while (rel / d->width >= HT_BUCKETS)
    widen(d);
  int i = (int)(rel / d->width);
  if (i + 1 > d->nb)
    d->nb = i + 1;
  return i;
}

/* The series of `key` in list (added if there is room), or NULL. */
static struct ht_series *series(struct ht_series **list, int *n, uint32_t key) {
  for (int i = 0; i < *n; i++)
    if (list[i]->key == key)
      return list[i];
  if (*n == HT_MAX_SERIES)
    return NULL;
  struct ht_series *s = gt_xcalloc(1, sizeof *s);
  s->key = key;
  list[(*n)++] = s;
  return s;
}

static void add(struct ht_data *d, struct ht_series *s, uint64_t ts, double v) {
  int i = bucket_of(d, ts);
  if (!s->has[i] || v < s->min[i])
    s->min[i] = v;
  if (!s->has[i] || v > s->max[i])
    s->max[i] = v;
  s->has[i] = 1;
  s->last[i] = v;
  if (!s->peak_ts || v > s->peak) {
    s->peak = v;
    s->peak_ts = ts;
  }
}

/* Readings that draw as a line over time (not events, counts or limits). */
static int drawn_metric(unsigned m) {
  switch (m) {
  case GT_METRIC_GPU_UTIL:
  case GT_METRIC_MEM_UTIL:
  case GT_METRIC_MEM_USED:
  case GT_METRIC_TEMP:
  case GT_METRIC_POWER:
  case GT_METRIC_SM_CLOCK:
  case GT_METRIC_MEM_CLOCK:
  case GT_METRIC_PCIE_TX:
  case GT_METRIC_PCIE_RX:
    return 1;
  default:
    return 0;
  }
}

static void mark(struct ht_data *d, const struct gt_range *g) {
  if (g->depth > 0 || (d->mark_seen++ % d->mark_stride))
    return;
  if (d->nmarks == HT_MARKS) { /* keep every other one, and from now on */
    for (int i = 0; i < HT_MARKS / 2; i++)
      d->marks[i] = d->marks[2 * i];
    d->nmarks = HT_MARKS / 2;
    d->mark_stride *= 2;
    if ((d->mark_seen - 1) % d->mark_stride)
      return;
  }
  d->marks[d->nmarks++] = (struct ht_mark){g->start_ns, g->end_ns, g->pid,
                                           gt_strtab_intern(&d->mark_names, g->name)};
}

static void on_memory(struct ht_data *d, const struct gt_record *rec) {
  struct ht_series *s = series(d->mem, &d->nmem, rec->pid);
  if (!s) {
    d->mem_pids_left++;
    return;
  }
  struct gt_model *m = d->r->model;
  uint64_t live = gt_model_live_bytes(m, rec->pid, GT_MEM_DEVICE) +
                  gt_model_live_bytes(m, rec->pid, GT_MEM_MANAGED);
  add(d, s, rec->ts_ns, (double)live);
}

/* A rolling set's first file read carries what was live when it opened
 * (its ALLOC records, given their own times but not their frees': no
 * point each) and the peak before it: two points, the peak when it was
 * reached and what was live as the file opened. */
static void on_carried(struct ht_data *d, const struct gt_record *rec) {
  struct ht_series *s = series(d->mem, &d->nmem, rec->pid);
  if (!s) {
    d->mem_pids_left++;
    return;
  }
  uint64_t ts = rec->u.heap.peak_ts_ns[1];
  if (rec->u.heap.peak[GT_MEM_RESIDENT] && ts >= d->from && ts < d->to)
    add(d, s, ts, (double)rec->u.heap.peak[GT_MEM_RESIDENT]);
  on_memory(d, rec);
}

static void tap(void *ctx, const struct gt_event *ev) {
  struct ht_data *d = ctx;
  const struct gt_record *rec = ev->rec;
  if (!d->base) {
    if (!d->r->origin)
      return;
    const struct rp_options *o = &d->r->opt;
    d->base = d->from = d->r->origin + o->from_ns;
    d->to = o->to_ns == UINT64_MAX ? UINT64_MAX : d->r->origin + o->to_ns;
  }
  if (rec->ts_ns < d->from || rec->ts_ns >= d->to)
    return;
  if (rec->kind == GT_KIND_METRIC) {
    unsigned m = rec->u.metric.metric;
    if (!drawn_metric(m))
      return;
    struct ht_series *s =
        series(d->metric, &d->nmetric, m << 8 | (rec->u.metric.device & 255));
    if (s)
      add(d, s, rec->ts_ns, rec->u.metric.value);
    else
      d->metric_left++;
    return;
  }
  if (d->has_pid && rec->pid != d->pid)
    return;
  if (ev->range)
    mark(d, ev->range);
  if ((rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE) &&
      !(rec->flags & GT_F_CARRIED))
    on_memory(d, rec);
  else if (rec->kind == GT_KIND_HEAP && (rec->flags & GT_F_CARRIED))
    on_carried(d, rec);
}

void ht_init(struct ht_data *d, struct report *r) {
  memset(d, 0, sizeof *d);
  d->r = r;
  d->has_pid = r->opt.has_pid;
  d->pid = r->opt.pid;
  d->width = FIRST_WIDTH_NS;
  d->mark_stride = 1;
  r->tap = tap;
  r->tap_ctx = d;
}
