/* top_view.c — the lines of `gputrace top` (top.h) from two samples: the
 * figures of the later one and rates over the time between them.
 *
 * Layout (80x24 and up; every line cut to the width, in display columns):
 *   a title: the source, the interval, NVML's GPU utilization, drops;
 *   when the sample is incomplete (top.h's loss), what it lacks;
 *   processes: PID, live and peak device memory, launches/s, GPU busy %
 *     (its kernels' device time over the interval), sorted by the key;
 *   copies: each direction that moved bytes, its bandwidth and total;
 *   kernels: the top ones by device time in the last interval;
 *   requests (when the collector counts NVTX ranges): each range name's
 *     requests/s over the interval, its GPU time per request (the
 *     collector's totals: the device time of each range's own work,
 *     model/range_gpu.h, over its count) and its GPU % over the interval;
 *   allocation sites: the user's frame (leaks.h's gt_leaks_origin) of the
 *     stacks holding the most live device memory;
 *   the keys (when asked for a footer).
 * Rows are shared out so that each table keeps at least its header.
 * Figures become text through checked conversions (a rate of a counter
 * that went back is 0, one past 2^64 is 2^64 - 1), and a kernel's earlier
 * figure is found by a binary search of the earlier sample's names sorted:
 * a screen costs O(n log n) in the series kept. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/schema.h"
#include "leaks.h"
#include "stats.h"
#include "top.h"
#include "util.h"

#define NAME_MIN 20 /* columns a name keeps whatever the width */

struct out {
  char **lines;
  size_t n, cap, max;
  int width;
};

/* One line, cut to the width (the text is ASCII but for fitted names). */
__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt,
                                                      ...) {
  if (o->n >= o->max)
    return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t i = gt_text_cut(buf, o->width);
  buf[i] = '\0';
  o->lines = gt_grow(o->lines, &o->cap, o->n + 1, sizeof *o->lines);
  o->lines[o->n] = gt_xcalloc(i + 1, 1);
  memcpy(o->lines[o->n++], buf, i + 1);
}

/* A name fitted to `width` columns and padded to them. */
static void fit(char *dst, size_t len, const char *name, int width) {
  size_t n = strlen(name) + 1;
  char *clean = gt_text_clean(gt_xcalloc(n, 1), n, name), *f = gt_name_fit(clean, width);
  int pad = width - gt_text_width(f);
  snprintf(dst, len, "%s%*s", f, pad > 0 ? pad : 0, "");
  free(f);
  free(clean);
}

static const struct top_proc *find_proc(const struct top_sample *s, uint32_t pid) {
  uint64_t at;
  return s && gt_map_get(&s->proc_index, pid, &at) ? &s->procs[at] : NULL;
}

/* A figure as bytes or ns: NaN and negatives 0, the too large UINT64_MAX
 * (a cast of either is undefined). */
static uint64_t to_count(double v) {
  return !(v > 0) ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)(v + 0.5);
}

struct prow {
  const struct top_proc *p;
  double launches_s, busy; /* < 0: unknown (no earlier sample) */
};

static int sort_key;
static int by_key(const void *a, const void *b) {
  const struct prow *x = a, *y = b;
  double u = sort_key == TOP_SORT_GPU        ? x->busy
             : sort_key == TOP_SORT_LAUNCHES ? x->launches_s
                                             : (double)x->p->live;
  double v = sort_key == TOP_SORT_GPU        ? y->busy
             : sort_key == TOP_SORT_LAUNCHES ? y->launches_s
                                             : (double)y->p->live;
  return u < v ? 1 : u > v ? -1 : x->p->pid < y->p->pid ? -1 : x->p->pid > y->p->pid;
}

static void processes(struct out *o, const struct top_screen *scr,
                      const struct top_sample *prev, const struct top_sample *cur,
                      double dt, size_t rows) {
  static const char *const mark[] = {"LIVE*", "GPU%*", "LAUNCH/S*"};
  put(o, "%-8s %11s %11s %11s %7s", "PID",
      scr->sort == TOP_SORT_MEMORY ? mark[0] : "LIVE", "PEAK",
      scr->sort == TOP_SORT_LAUNCHES ? mark[2] : "LAUNCH/S",
      scr->sort == TOP_SORT_GPU ? mark[1] : "GPU%");
  struct prow *r = gt_xcalloc(cur->nprocs + 1, sizeof *r);
  for (size_t i = 0; i < cur->nprocs; i++) {
    const struct top_proc *p = &cur->procs[i], *q = find_proc(prev, p->pid);
    r[i] = (struct prow){p, -1, -1};
    if (q && dt > 0) {
      r[i].launches_s =
          p->launches >= q->launches ? (double)(p->launches - q->launches) / dt : 0;
      r[i].busy = p->gpu_s >= q->gpu_s ? 100 * (p->gpu_s - q->gpu_s) / dt : 0;
    }
  }
  sort_key = scr->sort;
  qsort(r, cur->nprocs, sizeof *r, by_key);
  for (size_t i = 0; i < cur->nprocs && i < rows; i++) {
    char live[32] = "-", peak[32], ls[32], busy[32];
    if (r[i].p->has_live)
      gt_fmt_bytes(live, sizeof live, r[i].p->live);
    if (r[i].p->has_view)
      gt_fmt_bytes(peak, sizeof peak, r[i].p->peak);
    else
      snprintf(peak, sizeof peak, "-");
    snprintf(ls, sizeof ls, r[i].launches_s < 0 || !r[i].p->has_view ? "-" : "%.1f",
             r[i].launches_s);
    snprintf(busy, sizeof busy, r[i].busy < 0 ? "-" : "%.1f", r[i].busy);
    put(o, "%-8u %11s %11s %11s %7s", r[i].p->pid, live, peak, ls, busy);
  }
  if (!cur->nprocs)
    put(o, "(no traced process yet)");
  free(r);
}

static void copies(struct out *o, const struct top_sample *prev,
                   const struct top_sample *cur, double dt) {
  char line[512] = "COPIES";
  size_t n = strlen(line);
  int any = 0;
  for (unsigned d = 0; d < TOP_DIRS; d++) {
    if (!cur->copy_bytes[d])
      continue;
    uint64_t moved = prev && cur->copy_bytes[d] >= prev->copy_bytes[d]
                         ? cur->copy_bytes[d] - prev->copy_bytes[d]
                         : 0;
    char total[32], bw[40];
    if (prev && dt > 0) /* per second: MiB/s reads better than 0.05 GB/s */
      snprintf(bw, sizeof bw, "%s/s",
               gt_fmt_bytes(total, sizeof total, to_count((double)moved / dt)));
    else
      snprintf(bw, sizeof bw, "-");
    gt_fmt_bytes(total, sizeof total, cur->copy_bytes[d]);
    n += (size_t)snprintf(line + n, sizeof line - n, "  %s %s (%s)", gt_dir_name(d), bw,
                          total);
    any = 1;
  }
  put(o, "%s%s", line, any ? "" : "  none");
}

struct krow {
  const char *name;
  double s;
};
static int by_time(const void *a, const void *b) {
  const struct krow *x = a, *y = b;
  return x->s < y->s ? 1 : x->s > y->s ? -1 : strcmp(x->name, y->name);
}
static int by_name(const void *a, const void *b) {
  const struct top_kernel *const *x = a, *const *y = b;
  int c = strcmp((*x)->name, (*y)->name);
  return c ? c : *x < *y ? -1 : *x > *y; /* a name twice: the first first */
}

/* The earlier sample's kernels, sorted by name (a name twice: the first). */
static const struct top_kernel **sorted_kernels(const struct top_sample *prev,
                                                size_t *n) {
  *n = prev ? prev->nkernels : 0;
  const struct top_kernel **k = gt_xcalloc(*n + 1, sizeof *k);
  for (size_t i = 0; i < *n; i++)
    k[i] = &prev->kernels[i];
  qsort(k, *n, sizeof *k, by_name);
  return k;
}

static double gpu_before(const struct top_kernel **sorted, size_t n, const char *name) {
  size_t lo = 0, hi = n; /* the first name >= name */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid]->name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && !strcmp(sorted[lo]->name, name) ? sorted[lo]->gpu_s : 0;
}

static void kernels(struct out *o, const struct top_sample *prev,
                    const struct top_sample *cur, double dt, size_t rows) {
  int w = o->width - 22 > NAME_MIN ? o->width - 22 : NAME_MIN;
  char head[256];
  fit(head, sizeof head, "KERNEL (GPU time in the last interval)", w);
  put(o, "%s %11s %8s", head, "GPU TIME", "GPU%");
  size_t nbefore;
  const struct top_kernel **before = sorted_kernels(prev, &nbefore);
  struct krow *k = gt_xcalloc(cur->nkernels + 1, sizeof *k);
  size_t n = 0;
  for (size_t i = 0; prev && i < cur->nkernels; i++) {
    double was = gpu_before(before, nbefore, cur->kernels[i].name);
    if (cur->kernels[i].gpu_s > was)
      k[n++] = (struct krow){cur->kernels[i].name, cur->kernels[i].gpu_s - was};
  }
  qsort(k, n, sizeof *k, by_time);
  for (size_t i = 0; i < n && i < rows; i++) {
    char name[1024], t[32];
    fit(name, sizeof name, k[i].name, w);
    put(o, "%s %11s %8.1f", name, gt_fmt_ns(t, sizeof t, to_count(k[i].s * 1e9)),
        dt > 0 ? 100 * k[i].s / dt : 0.0);
  }
  if (!n)
    put(o, "(no kernel ran)");
  free(k);
  free(before);
}

struct rrow {
  const struct top_request *q;
  double per_s, gpu_s; /* over the interval */
};
static int by_gpu(const void *a, const void *b) {
  const struct rrow *x = a, *y = b;
  return x->gpu_s < y->gpu_s   ? 1
         : x->gpu_s > y->gpu_s ? -1
                               : strcmp(x->q->name, y->q->name);
}

static const struct top_request *request_before(const struct top_sample *prev,
                                                const char *name) {
  for (size_t i = 0; prev && i < prev->nrequests; i++) /* at most TOP_REQUESTS_MAX */
    if (!strcmp(prev->requests[i].name, name))
      return &prev->requests[i];
  return NULL;
}

static void requests(struct out *o, const struct top_sample *prev,
                     const struct top_sample *cur, double dt, size_t rows) {
  int w = o->width - 32 > NAME_MIN ? o->width - 32 : NAME_MIN;
  char head[256];
  fit(head, sizeof head, "REQUEST (NVTX range)", w);
  put(o, "%s %9s %11s %8s", head, "REQ/S", "GPU/REQ", "GPU%");
  struct rrow *r = gt_xcalloc(cur->nrequests + 1, sizeof *r);
  size_t n = 0;
  for (size_t i = 0; i < cur->nrequests; i++) {
    const struct top_request *q = &cur->requests[i], *b = request_before(prev, q->name);
    if (!q->count)
      continue;
    r[n] = (struct rrow){q, -1, -1};
    if (prev && dt > 0) {
      uint64_t was = b ? b->count : 0;
      double gpu_was = b ? b->gpu_s : 0;
      r[n].per_s = q->count >= was ? (double)(q->count - was) / dt : 0;
      r[n].gpu_s = q->gpu_s >= gpu_was ? q->gpu_s - gpu_was : 0;
    }
    n++;
  }
  qsort(r, n, sizeof *r, by_gpu);
  for (size_t i = 0; i < n && i < rows; i++) {
    char name[1024], per_s[32] = "-", per_req[32], busy[32] = "-";
    fit(name, sizeof name, r[i].q->name, w);
    if (r[i].per_s >= 0)
      snprintf(per_s, sizeof per_s, "%.1f", r[i].per_s);
    if (r[i].gpu_s >= 0)
      snprintf(busy, sizeof busy, "%.1f", 100 * r[i].gpu_s / dt);
    gt_fmt_ns(per_req, sizeof per_req,
              to_count(r[i].q->gpu_s * 1e9 / (double)r[i].q->count));
    put(o, "%s %9s %11s %8s", name, per_s, per_req, busy);
  }
  if (!n)
    put(o, "(no request yet)");
  free(r);
}

static void sites(struct out *o, const struct top_sample *cur, size_t rows) {
  int w = o->width - 37 > NAME_MIN ? o->width - 37 : NAME_MIN;
  char head[256];
  fit(head, sizeof head, "ALLOCATION SITE (live device memory)", w);
  put(o, "%s %8s %11s %7s", head, "PID", "LIVE", "BLOCKS");
  for (int i = 0; i < cur->nsites && (size_t)i < rows; i++) {
    const struct top_site *s = &cur->sites[i];
    const struct gt_frame *f = gt_leaks_origin(s->frames, s->nframes);
    char where[1024], name[1024], live[32];
    if (f && f->file[0])
      snprintf(where, sizeof where, "%s:%u %s", gt_base_name(f->file), f->line,
               f->function);
    else
      snprintf(where, sizeof where, "%s", f ? f->function : "(no stack)");
    fit(name, sizeof name, where, w);
    put(o, "%s %8u %11s %7llu", name, s->pid, gt_fmt_bytes(live, sizeof live, s->live),
        (unsigned long long)s->blocks);
  }
  if (!cur->nsites)
    put(o, "(no live device memory)");
}

/* What the sample lacks (top.h's loss), on one line under the title. */
static void incomplete(struct out *o, const struct top_loss *l) {
  char line[256] = "incomplete:";
  size_t n = strlen(line);
  const char *cut = l->cut == (TOP_CUT_METRICS | TOP_CUT_VIEW) ? "both answers"
                    : l->cut == TOP_CUT_METRICS                ? "/metrics"
                                                               : "/top.jsonl";
  if (l->cut)
    n += (size_t)snprintf(line + n, sizeof line - n, " %s cut at %u MiB,", cut,
                          TOP_BODY_MAX >> 20);
  if (l->over_caps)
    n += (size_t)snprintf(line + n, sizeof line - n, " %llu series over the caps,",
                          (unsigned long long)l->over_caps);
  if (l->bad_lines)
    n += (size_t)snprintf(line + n, sizeof line - n, " %llu bad lines skipped,",
                          (unsigned long long)l->bad_lines);
  line[n - 1] = '\0'; /* the last comma */
  put(o, "%s", line);
}

size_t top_view_lines(const struct top_screen *scr, const struct top_sample *prev,
                      const struct top_sample *cur, char ***lines) {
  struct out o = {.max = scr->height > 0 ? (size_t)scr->height : 1, .width = scr->width};
  double dt = prev ? cur->t - prev->t : 0;
  char util[32] = "-";
  if (cur->gpu_util >= 0)
    snprintf(util, sizeof util, "%.0f %%", cur->gpu_util);
  put(&o, "gputrace top %s  every %.1fs  GPU util %s  dropped %llu", scr->source,
      dt > 0 ? dt : 0.0, util, (unsigned long long)cur->dropped);
  const struct top_loss *l = &cur->loss;
  int lacks = l->cut || l->over_caps || l->bad_lines;
  if (lacks)
    incomplete(&o, l);
  /* rows beyond the title (and what it lacks), the four headers (five
   * with requests), the copies and the footer */
  int has_req = cur->nrequests != 0;
  size_t fixed = 6 + (size_t)has_req + (size_t)lacks + (scr->footer != 0),
         room = o.max > fixed ? o.max - fixed : 0;
  size_t np = cur->nprocs ? cur->nprocs : 1, nk = cur->nkernels ? cur->nkernels : 1;
  size_t pr = np < room / 3 ? np : room / 3 ? room / 3 : 1;
  size_t kr = nk < (room - pr) / 2 ? nk : (room - pr) / 2 ? (room - pr) / 2 : 1;
  size_t left = room > pr + kr ? room - pr - kr : 0;
  size_t rr = !has_req                    ? 0
              : cur->nrequests < left / 2 ? cur->nrequests
              : left / 2                  ? left / 2
                                          : 1;
  size_t sr = left > rr ? left - rr : 1;
  size_t body = o.max - (scr->footer != 0);
  o.max = body;
  processes(&o, scr, prev, cur, dt, pr);
  copies(&o, prev, cur, dt);
  kernels(&o, prev, cur, dt, kr);
  if (has_req)
    requests(&o, prev, cur, dt, rr);
  sites(&o, cur, sr);
  while (scr->footer && o.n < body) /* the keys on the bottom line */
    put(&o, "%s", "");
  o.max = body + (scr->footer != 0);
  if (scr->footer)
    put(&o, "q quit  m sort by memory  g by GPU time  l by launches");
  *lines = o.lines;
  return o.n;
}

void top_lines_free(char **lines, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);
}
