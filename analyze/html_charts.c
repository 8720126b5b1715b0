/* html_charts.c — the SVG of `gputrace html`: time charts, the range
 * histogram and the flame graphs (see html.h).
 *
 * Contract:
 *  - Every chart is inline SVG in a viewBox of CW x CH units (scaled to the
 *    page's width), time on x in seconds from the window's start, the
 *    value's unit on y, its axes labelled. Hover values: a time chart
 *    carries its buckets (data-dt, each line's data-v: the largest value
 *    of each bucket, carried over buckets without a change) for the
 *    page's tooltip script; every other shape has a <title>.
 *  - The memory chart (svg#memory) carries data-peak, the largest live
 *    device+managed bytes of its series, and data-peak-pid.
 *  - Flame graphs (icicles: the root on top) are frames of data-x/data-w
 *    (fractions of the root) and data-d (depth), which the page's script
 *    rescales to zoom; frames under FLAME_MIN of the root, deeper than
 *    FLAME_DEPTH or past FLAME_MAX frames or HT_PART_BYTES are left out,
 *    and counted under the graph. Frames read "function (file:line)";
 *    the CUDA runtime's frames and nvcc's launch stubs are left out
 *    (gt_glue_frames) unless a stack has nothing else.
 *  - Sizes are bounded by the series' buckets, HT_MARKS (names cut at
 *    HT_TITLE_MAX), FLAME_MAX and HT_PART_BYTES, and the range names shown
 *    (HIST_MAX), never by the trace's records (html.h); what is left out is
 *    said under the chart.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_attr.h"
#include "html.h"
#include "util.h"

#define CW 1100.0 /* chart: width, height, margins */
#define CH 250.0
#define ML 84.0
#define MR 16.0
#define MT 14.0
#define MB 40.0
#define PW (CW - ML - MR)
#define PH (CH - MT - MB)
#define FLAME_MIN 0.001
#define FLAME_MAX 1000
#define FLAME_ROW 18.0
#define FLAME_DEPTH 48
#define HIST_MAX 16
#define MAX_FRAMES 256

static const char *const palette[] = {"#2563eb", "#dc2626", "#16a34a", "#9333ea",
                                      "#ea580c", "#0891b2", "#ca8a04", "#db2777"};
#define COLOR(i) palette[(i) % (sizeof palette / sizeof palette[0])]

void ht_fmt(char *buf, size_t len, double v, enum ht_unit u) {
  switch (u) {
  case HT_BYTES:
    gt_fmt_bytes(buf, len, v > 0 ? (uint64_t)v : 0);
    break;
  case HT_PCT:
    snprintf(buf, len, "%.0f %%", v);
    break;
  case HT_NS:
    gt_fmt_ns(buf, len, v > 0 ? (uint64_t)v : 0);
    break;
  default:
    snprintf(buf, len, "%.4g", v);
  }
}

static const char *unit_name(enum ht_unit u) {
  return u == HT_BYTES ? "bytes" : u == HT_PCT ? "pct" : u == HT_NS ? "ns" : "plain";
}

/* A "nice" step (1, 2, 5 times a power of ten; of 1024 for bytes) giving
 * about `n` ticks up to top. */
static double nice_step(double top, int n, enum ht_unit u) {
  if (top <= 0)
    return 1;
  double scale = 1;
  if (u == HT_BYTES)
    while (scale * 1024 <= top)
      scale *= 1024;
  double raw = top / scale / n, p = pow(10, floor(log10(raw))), f = raw / p;
  return scale * p * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10);
}

static void fmt_time(char *buf, size_t len, double s) {
  if (s == 0)
    snprintf(buf, len, "0");
  else if (s >= 1)
    snprintf(buf, len, "%g s", s);
  else if (s >= 1e-3)
    snprintf(buf, len, "%g ms", s * 1e3);
  else
    snprintf(buf, len, "%g µs", s * 1e6);
}

struct frame {     /* a time chart's scales */
  double t1, ymax; /* x: 0..t1 seconds; y: 0..ymax */
  enum ht_unit unit;
};

static double X(const struct frame *f, double s) {
  return ML + (f->t1 > 0 ? s / f->t1 : 0) * PW;
}
static double Y(const struct frame *f, double v) {
  return MT + PH - (f->ymax > 0 ? v / f->ymax : 0) * PH;
}

/* The y axis, grid and label; ymax is rounded up to a tick. */
static void y_axis(FILE *o, struct frame *f, const char *ylabel) {
  char b[64];
  double ys = nice_step(f->ymax, 5, f->unit);
  f->ymax = f->ymax > 0 ? ceil(f->ymax / ys) * ys : 1;
  fprintf(o, "<g class=\"ax\">");
  for (double v = 0; v <= f->ymax * 1.0001; v += ys) {
    ht_fmt(b, sizeof b, v, f->unit);
    fprintf(o, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML, CW - MR,
            Y(f, v), Y(f, v));
    fprintf(o, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", ML - 6,
            Y(f, v) + 4, b);
  }
  fprintf(o,
          "<text class=\"lbl\" transform=\"translate(14 %.0f) rotate(-90)\" "
          "text-anchor=\"middle\">%s</text></g>\n",
          MT + PH / 2, ylabel);
}

/* Both axes of a time chart. */
static void axes(FILE *o, struct frame *f, const char *ylabel) {
  char b[64];
  y_axis(o, f, ylabel);
  double xs = nice_step(f->t1, 8, HT_PLAIN);
  fprintf(o, "<g class=\"ax\">");
  for (double s = 0; f->t1 > 0 && s <= f->t1 * 1.0001; s += xs) {
    fmt_time(b, sizeof b, s);
    fprintf(o, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>", X(f, s),
            CH - MB + 16, b);
    fprintf(o, "<line class=\"tk\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\"/>",
            X(f, s), X(f, s), MT + PH, MT + PH + 4);
  }
  fprintf(o,
          "<text class=\"lbl\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time since "
          "the window's start</text></g>\n",
          ML + PW / 2, CH - 4);
}

static void svg_open(FILE *o, const char *id, const struct ht_data *d, enum ht_unit u,
                     const char *extra) {
  fprintf(
      o,
      "<svg class=\"chart tchart\" id=\"%s\" viewBox=\"0 0 %.0f %.0f\" data-nb=\"%d\" "
      "data-dt=\"%.9g\" data-unit=\"%s\" data-ml=\"%.0f\" data-pw=\"%.0f\"%s>\n",
      id, CW, CH, d->nb, (double)d->width / 1e9, unit_name(u), ML, PW, extra);
}

/* One series as a polyline (min and max of each bucket), with its values. */
static void line(FILE *o, const struct frame *f, const struct ht_data *d,
                 const struct ht_series *s, const char *color, const char *label) {
  fprintf(o, "<polyline class=\"ln\" stroke=\"%s\" data-name=\"", color);
  ht_text(o, label);
  fputs("\" data-v=\"", o);
  int seen = 0;
  double carry = 0;
  for (int i = 0; i < d->nb; i++) {
    if (s->has[i])
      carry = s->max[i], seen = 1;
    if (seen)
      fprintf(o, f->unit == HT_BYTES ? "%.0f" : "%.4g", carry);
    fputc(i + 1 < d->nb ? ',' : '"', o);
  }
  if (!d->nb)
    fputc('"', o);
  fputs(" points=\"", o);
  seen = 0;
  for (int i = 0; i < d->nb; i++) {
    double x = X(f, ht_bucket_s(d, i) + (double)d->width / 2e9);
    if (s->has[i]) {
      int up = s->last[i] >= s->min[i] + (s->max[i] - s->min[i]) / 2;
      fprintf(o, "%.1f,%.1f %.1f,%.1f ", x, Y(f, up ? s->min[i] : s->max[i]), x,
              Y(f, up ? s->max[i] : s->min[i]));
      carry = s->last[i], seen = 1;
    } else if (seen) {
      fprintf(o, "%.1f,%.1f ", x, Y(f, carry));
    }
  }
  fputs("\"/>\n", o);
}

static void legend(FILE *o, const char *const *labels, int n) {
  fputs("<div class=\"legend\">", o);
  for (int i = 0; i < n; i++) {
    fprintf(o, "<span><i style=\"background:%s\"></i>", COLOR(i));
    ht_text(o, labels[i]);
    fputs("</span>", o);
  }
  fputs("</div>\n", o);
}

/* ---- memory ---- */

static void range_bands(FILE *o, const struct frame *f, const struct ht_data *d) {
  char a[32], b[32];
  fputs("<g class=\"bands\">", o);
  for (int i = 0; i < d->nmarks; i++) {
    const struct ht_mark *m = &d->marks[i];
    double s = (double)(m->start > d->base ? m->start - d->base : 0) / 1e9,
           e = (double)(m->end > d->base ? m->end - d->base : 0) / 1e9;
    double x0 = fmin(X(f, s), CW - MR - 1), x1 = fmin(fmax(X(f, e), x0 + 1), CW - MR);
    fprintf(o, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\"><title>", x0,
            MT, x1 - x0, PH);
    ht_text_cut(o, d->mark_names.strs[m->name], HT_TITLE_MAX);
    fmt_time(a, sizeof a, s);
    fprintf(o, " (pid %u) at %s, %s</title></rect>", m->pid, a,
            gt_fmt_ns(b, sizeof b, m->end - m->start));
  }
  fputs("</g>\n", o);
}

/* Leaks' growing stacks of a process, summed: dashed, over the leak
 * analysis's GT_GROWTH_BUCKETS steps of the run. */
static int growth_line(FILE *o, const struct frame *f, const struct ht_data *d,
                       const struct gt_leaks *l, uint32_t pid) {
  double sum[GT_GROWTH_BUCKETS] = {0};
  int any = 0;
  for (size_t i = 0; i < l->nleaks; i++)
    if (l->leaks[i].growing && l->leaks[i].pid == pid &&
        l->leaks[i].memory != GT_MEM_PINNED_HOST) {
      for (int k = 0; k < GT_GROWTH_BUCKETS; k++)
        sum[k] += (double)l->leaks[i].series[k];
      any = 1;
    }
  if (!any || l->last_ns <= l->first_ns)
    return 0;
  double step = (double)(l->last_ns - l->first_ns) / GT_GROWTH_BUCKETS;
  fputs("<polyline class=\"grow\" points=\"", o);
  for (int k = 0; k < GT_GROWTH_BUCKETS; k++) {
    double t = ((double)l->first_ns + (k + 1) * step - (double)d->base) / 1e9;
    if (t >= 0 && t <= f->t1)
      fprintf(o, "%.1f,%.1f ", X(f, t), Y(f, sum[k]));
  }
  fprintf(o, "\"><title>pid %u: stacks whose live memory grows steadily (gputrace leaks)",
          pid);
  fputs("</title></polyline>\n", o);
  return 1;
}

void ht_memory_chart(FILE *o, const struct ht_data *d, const struct gt_leaks *l) {
  if (!d->nmem) {
    fputs("<p class=\"none\">No device memory was allocated in the window.</p>\n", o);
    return;
  }
  struct frame f = {.t1 = ht_bucket_s(d, d->nb), .unit = HT_BYTES};
  const struct ht_series *top = d->mem[0];
  for (int i = 0; i < d->nmem; i++) {
    if (d->mem[i]->peak > top->peak)
      top = d->mem[i];
    f.ymax = d->mem[i]->peak > f.ymax ? d->mem[i]->peak : f.ymax;
  }
  char extra[96], b[32], t[32];
  snprintf(extra, sizeof extra, " data-peak=\"%.0f\" data-peak-pid=\"%u\"", top->peak,
           top->key);
  svg_open(o, "memory", d, HT_BYTES, extra);
  axes(o, &f, "live device + managed memory");
  range_bands(o, &f, d);
  const char *labels[HT_MAX_SERIES];
  char names[HT_MAX_SERIES][32];
  int grows = 0;
  for (int i = 0; i < d->nmem; i++) {
    snprintf(names[i], sizeof names[i], "pid %u", d->mem[i]->key);
    labels[i] = names[i];
    line(o, &f, d, d->mem[i], COLOR(i), names[i]);
    grows |= growth_line(o, &f, d, l, d->mem[i]->key);
  }
  double px = X(&f, (double)(top->peak_ts - d->base) / 1e9), py = Y(&f, top->peak);
  gt_fmt_bytes(b, sizeof b, (uint64_t)top->peak);
  fmt_time(t, sizeof t, (double)(top->peak_ts - d->base) / 1e9);
  fprintf(
      o,
      "<circle class=\"pk\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>peak %s (pid %u) at "
      "%s</title></circle><text class=\"pkl\" x=\"%.1f\" y=\"%.1f\" "
      "text-anchor=\"%s\">peak %s</text>\n</svg>\n",
      px, py, b, top->key, t, px + (px > CW / 2 ? -8 : 8),
      py < MT + 20 ? py + 16 : py - 8, px > CW / 2 ? "end" : "start", b);
  legend(o, labels, d->nmem);
  fputs("<p class=\"note\">Shaded: NVTX ranges (outermost", o);
  if (d->mark_stride > 1)
    fprintf(o, ", evenly thinned: %d of %" PRIu64, d->nmarks, d->mark_seen);
  fprintf(o, ").%s",
          grows ? " Dashed red: stacks whose memory grows steadily (leaks)." : "");
  if (d->mem_pids_left)
    fprintf(o, " %" PRIu64 " changes of processes past the first %d are not drawn.",
            d->mem_pids_left, HT_MAX_SERIES);
  fputs("</p>\n", o);
}

/* ---- utilization ---- */

static void busy_add(double *busy, const struct ht_data *d, uint64_t s, uint64_t e) {
  uint64_t end = d->base + (uint64_t)d->nb * d->width;
  s = s < d->base ? d->base : s;
  e = e > end ? end : e;
  while (s < e) {
    uint64_t i = (s - d->base) / d->width, be = d->base + (i + 1) * d->width;
    uint64_t stop = e < be ? e : be;
    busy[i] += (double)(stop - s);
    s = stop;
  }
}

void ht_util_chart(FILE *o, const struct ht_data *d) {
  const struct report *r = d->r;
  if (!r->dev_records || !d->nb) {
    fputs("<p class=\"none\">No DEVICE records: the trace has no device timing "
          "(docs/devtime.md).</p>\n",
          o);
    return;
  }
  struct frame f = {.t1 = ht_bucket_s(d, d->nb), .ymax = 100, .unit = HT_PCT};
  svg_open(o, "util", d, HT_PCT, "");
  axes(o, &f, "device busy (kernels, copies)");
  const char *labels[HT_MAX_SERIES] = {0};
  char names[HT_MAX_SERIES][32];
  int n = 0, left = 0;
  struct ht_series *s = gt_xcalloc(1, sizeof *s);
  for (size_t p = 0; p < r->nprocs; p++) {
    const struct rp_proc *pr = &r->procs[p];
    if (!pr->dev_records || (d->has_pid && pr->pid != d->pid))
      continue;
    if (n == HT_MAX_SERIES) {
      left++;
      continue;
    }
    double busy[HT_BUCKETS] = {0};
    struct rp_uwalk w = {.a = &pr->kruns, .b = &pr->cruns};
    uint64_t a, b;
    while (rp_uwalk_next(&w, &a, &b))
      busy_add(busy, d, a, b);
    memset(s, 0, sizeof *s);
    for (int i = 0; i < d->nb; i++) {
      s->has[i] = 1;
      s->min[i] = s->max[i] = s->last[i] = 100.0 * busy[i] / (double)d->width;
    }
    snprintf(names[n], sizeof names[n], "pid %u", pr->pid);
    labels[n] = names[n];
    line(o, &f, d, s, COLOR(n), names[n]);
    n++;
  }
  free(s);
  fputs("</svg>\n", o);
  legend(o, labels, n);
  if (left)
    fprintf(o,
            "<p class=\"note more\">%d more processes with DEVICE records are not drawn "
            "(the chart keeps the first %d).</p>\n",
            left, HT_MAX_SERIES);
}

/* ---- NVML readings ---- */

static enum ht_unit metric_unit(unsigned m) {
  return m == GT_METRIC_GPU_UTIL || m == GT_METRIC_MEM_UTIL ? HT_PCT
         : m == GT_METRIC_MEM_USED                          ? HT_BYTES
                                                            : HT_PLAIN;
}

static void metric_chart(FILE *o, const struct ht_data *d, unsigned m) {
  struct frame f = {.t1 = ht_bucket_s(d, d->nb), .unit = metric_unit(m)};
  const char *labels[HT_MAX_SERIES];
  char names[HT_MAX_SERIES][32], id[32], yl[96];
  int n = 0;
  for (int i = 0; i < d->nmetric; i++)
    if (d->metric[i]->key >> 8 == m && d->metric[i]->peak > f.ymax)
      f.ymax = d->metric[i]->peak;
  if (f.unit == HT_PCT)
    f.ymax = 100;
  snprintf(id, sizeof id, "nvml-%s", gt_metric_name(m));
  snprintf(yl, sizeof yl, "%s (%s)", gt_metric_name(m), gt_metric_unit(m));
  fputs("<h3>", o);
  ht_text(o, yl);
  fputs("</h3>\n", o);
  svg_open(o, id, d, f.unit, "");
  axes(o, &f, gt_metric_unit(m));
  for (int i = 0; i < d->nmetric; i++) {
    if (d->metric[i]->key >> 8 != m)
      continue;
    snprintf(names[n], sizeof names[n], "GPU %u", d->metric[i]->key & 255);
    labels[n] = names[n];
    line(o, &f, d, d->metric[i], COLOR(n), names[n]);
    n++;
  }
  fputs("</svg>\n", o);
  legend(o, labels, n);
}

void ht_metric_charts(FILE *o, const struct ht_data *d) {
  if (!d->nmetric) {
    fputs("<p class=\"none\">No NVML readings (METRIC records) in the window.</p>\n", o);
    return;
  }
  for (unsigned m = 1; m < GT_METRIC_COUNT; m++)
    for (int i = 0; i < d->nmetric; i++)
      if (d->metric[i]->key >> 8 == m) {
        metric_chart(o, d, m);
        break;
      }
  if (d->metric_left)
    fprintf(o,
            "<p class=\"note more\">%" PRIu64 " readings of more series (reading and "
            "device) are not drawn: the charts keep the first %d series.</p>\n",
            d->metric_left, HT_MAX_SERIES);
}

/* ---- P50/P99 per NVTX range name ---- */

static void hist_bar(FILE *o, const struct frame *f, double x, double w, double v,
                     const char *cls) {
  fprintf(o, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
          cls, x, Y(f, v), w, MT + PH - Y(f, v));
}

void ht_range_histogram(FILE *o, const struct report *r) {
  size_t n = r->rnames.n, *ord = rp_range_order(r); /* report's, the table's */
  n = n > HIST_MAX ? HIST_MAX : n;
  struct frame f = {.t1 = 1, .unit = HT_NS};
  for (size_t i = 0; i < n; i++)
    if ((double)r->ranges[ord[i]].p99 > f.ymax)
      f.ymax = (double)r->ranges[ord[i]].p99;
  fprintf(o, "<svg class=\"chart\" id=\"ranges\" viewBox=\"0 0 %.0f %.0f\">\n", CW, CH);
  y_axis(o, &f, "duration (warm ranges)");
  double slot = PW / (double)(n ? n : 1), bw = slot * 0.35 > 40 ? 40 : slot * 0.35;
  char a[32], b[32];
  for (size_t i = 0; i < n; i++) {
    const struct rp_range *g = &r->ranges[ord[i]];
    const char *name = r->rnames.strs[ord[i]];
    double x = ML + slot * (double)i + slot / 2;
    fputs("<g class=\"bar\"><title>", o);
    ht_text(o, name);
    fprintf(o, ": %zu ranges, p50 %s, p99 %s (warm ones, docs/report.md)</title>", g->n,
            gt_fmt_ns(a, sizeof a, g->p50), gt_fmt_ns(b, sizeof b, g->p99));
    hist_bar(o, &f, x - bw, bw, (double)g->p50, "p50");
    hist_bar(o, &f, x, bw, (double)g->p99, "p99");
    char *fit = gt_name_fit(name, (int)(slot / 7.5) - 8);
    fprintf(o, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">", x, CH - MB + 16);
    ht_text(o, fit);
    if (g->warm)
      fprintf(o, " (%" PRIu64 " warm)</text></g>\n", g->warm);
    else
      fputs(" (cold only)</text></g>\n", o);
    free(fit);
  }
  fputs("</svg>\n<div class=\"legend\"><span><i class=\"p50\"></i>p50</span>"
        "<span><i class=\"p99\"></i>p99</span></div>\n",
        o);
  if (r->rnames.n > n)
    fprintf(o,
            "<p class=\"note more\">The %zu range names with the most time are drawn; "
            "%zu more are not.</p>\n",
            n, r->rnames.n - n);
  free(ord);
}

/* ---- flame graphs ---- */

struct fnode {
  size_t name; /* in ftree.names */
  double v;
  int first, next; /* children: the first, and this one's next sibling; -1: none */
};

/* A child is found by (parent, name) in one probe: a node may have as many
 * children as the trace has kernels. */
struct ftree {
  struct fnode *n; /* n[0]: the root */
  size_t len, cap;
  struct gt_strtab names;
  struct gt_map kids; /* parent << 32 | name -> the child's index */
  int depth;          /* deepest row drawn */
  struct ht_cut cut;  /* frames drawn */
};

static int fchild(struct ftree *t, int parent, const char *name, double v) {
  size_t id = gt_strtab_intern(&t->names, name);
  uint64_t key = (uint64_t)parent << 32 | id, c;
  if (!gt_map_get(&t->kids, key, &c)) {
    t->n = gt_grow(t->n, &t->cap, t->len + 1, sizeof *t->n);
    c = t->len++;
    t->n[c] = (struct fnode){id, 0, -1, t->n[parent].first};
    t->n[parent].first = (int)c;
    if (gt_map_put(&t->kids, key, c) != 0)
      gt_oom();
  }
  t->n[c].v += v;
  return (int)c;
}

/* "pid N", then the stack outermost first (glue left out unless it is
 * all), then `leaf` if given. */
static void add_stack(struct ftree *t, struct gt_symtab *st, uint32_t pid, uint32_t stack,
                      double v, const char *leaf) {
  struct gt_frame f[MAX_FRAMES];
  int n = stack ? gt_symtab_stack(st, pid, stack, f, MAX_FRAMES) : 0, users = 0;
  char glue[MAX_FRAMES] = {0}, name[640];
  for (int i = 0, k; i < n; i += k ? k : 1) {
    k = gt_glue_frames(f, n, i);
    memset(glue + i, 1, (size_t)k);
    users += !k;
  }
  t->n[0].v += v;
  snprintf(name, sizeof name, "pid %u", pid);
  int cur = fchild(t, 0, name, v);
  if (n == 0)
    cur = fchild(t, cur, "[no stack]", v);
  for (int i = n - 1; i >= 0; i--) {
    if (glue[i] && users)
      continue;
    if (f[i].file[0] && f[i].line)
      snprintf(name, sizeof name, "%s (%s:%u)", f[i].function, gt_base_name(f[i].file),
               f[i].line);
    else if (f[i].file[0])
      snprintf(name, sizeof name, "%s (%s)", f[i].function, gt_base_name(f[i].file));
    else
      snprintf(name, sizeof name, "%s", f[i].function);
    cur = fchild(t, cur, name, v);
  }
  if (leaf)
    fchild(t, cur, leaf, v);
}

static int by_value_desc(const void *a, const void *b, void *ctx) {
  const struct ftree *t = ctx;
  double x = t->n[*(const int *)a].v, y = t->n[*(const int *)b].v;
  return x < y ? 1 : x > y ? -1 : 0;
}

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static void emit(FILE *o, struct ftree *t, int node, double x, int depth,
                 enum ht_flame which) {
  double total = t->n[0].v, w = t->n[node].v / total;
  if (w < FLAME_MIN || depth > FLAME_DEPTH || !ht_cut_room(&t->cut))
    return;
  t->depth = depth > t->depth ? depth : t->depth;
  char b[32];
  ht_fmt(b, sizeof b, t->n[node].v, which == HT_FLAME_GPU ? HT_NS : HT_BYTES);
  const char *name = t->names.strs[t->n[node].name];
  unsigned h = hash(name);
  fprintf(o, "<g class=\"fr\" data-x=\"%.6f\" data-w=\"%.6f\" data-d=\"%d\"><title>", x,
          w, depth);
  ht_text(o, name);
  fprintf(o,
          "\n%s (%.1f %%)</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
          "height=\"%.0f\" fill=\"hsl(%u,%u%%,%u%%)\"/><text x=\"%.1f\" "
          "y=\"%.0f\"></text></g>\n",
          b, 100 * w, x * CW, depth * FLAME_ROW, w * CW, FLAME_ROW - 1,
          (which == HT_FLAME_GPU ? 170 : 8) + h % 45, 55 + (h >> 8) % 25,
          55 + (h >> 16) % 15, x * CW + 3, depth * FLAME_ROW + 13);
  int nc = 0, *kids = NULL;
  size_t cap = 0;
  for (int c = t->n[node].first; c >= 0; c = t->n[c].next) {
    kids = gt_grow(kids, &cap, (size_t)nc + 1, sizeof *kids);
    kids[nc++] = c;
  }
  if (nc)
    qsort_r(kids, (size_t)nc, sizeof *kids, by_value_desc, t);
  for (int i = 0; i < nc; i++) {
    emit(o, t, kids[i], x, depth + 1, which);
    x += t->n[kids[i]].v / total;
  }
  free(kids);
}

static void fill(struct ftree *t, const struct ht_data *d, const struct gt_leaks *l,
                 enum ht_flame which) {
  const struct report *r = d->r;
  if (which == HT_FLAME_GPU) {
    for (size_t i = 0; i < r->gattr.nsites; i++) {
      const struct gt_gpu_site *x = &r->gattr.sites[i];
      if (x->gpu_ns >= 0.5 && (!d->has_pid || x->pid == d->pid))
        add_stack(t, r->symtab, x->pid, x->stack_id, x->gpu_ns,
                  r->gattr.names.strs[x->name]);
    }
    return;
  }
  for (size_t p = 0; which == HT_FLAME_PEAK && p < l->nprocs; p++)
    for (size_t i = 0; i < l->procs[p].nat_peak; i++) {
      const struct gt_group *g = &l->procs[p].at_peak[i];
      if (!d->has_pid || g->pid == d->pid)
        add_stack(t, l->symtab, g->pid, g->stack_id, (double)g->bytes, NULL);
    }
  for (size_t i = 0; which == HT_FLAME_EXIT && i < l->nleaks; i++) {
    const struct gt_group *g = &l->leaks[i];
    if (!d->has_pid || g->pid == d->pid)
      add_stack(t, l->symtab, g->pid, g->stack_id, (double)g->bytes, NULL);
  }
}

void ht_flame(FILE *o, const struct ht_data *d, const struct gt_leaks *l,
              enum ht_flame which) {
  struct ftree t = {0};
  gt_map_init(&t.kids);
  t.n = gt_grow(NULL, &t.cap, 1, sizeof *t.n);
  t.n[0] = (struct fnode){gt_strtab_intern(&t.names, "all"), 0, -1, -1};
  t.len = 1;
  fill(&t, d, l, which);
  static const char *const none[] = {
      "No device memory was live at a peak.", "Nothing was left allocated at the end.",
      "No GPU time to attribute: no launch with a stack, or no DEVICE records."};
  if (t.n[0].v <= 0) {
    fprintf(o, "<p class=\"none\">%s</p>\n", none[which]);
  } else {
    char *body = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&body, &len);
    if (!m)
      gt_oom();
    ht_cut_open(&t.cut, m, FLAME_MAX);
    emit(m, &t, 0, 0, 0, which);
    if (fclose(m) != 0)
      gt_oom();
    fprintf(o, "<svg class=\"flame\" viewBox=\"0 0 %.0f %.0f\">\n", CW,
            (t.depth + 1) * FLAME_ROW);
    fwrite(body, 1, len, o);
    fputs("</svg>\n", o);
    free(body);
    if (t.len > t.cut.shown)
      fprintf(o,
              "<p class=\"note more\">%zu of %zu frames not drawn (under %.1f %% of the "
              "whole, deeper than %d, or past the graph's %d frames or %u KiB): their "
              "share is in their callers' frames.</p>\n",
              t.len - t.cut.shown, t.len, 100 * FLAME_MIN, FLAME_DEPTH, FLAME_MAX,
              HT_PART_BYTES >> 10);
  }
  gt_strtab_free(&t.names);
  gt_map_free(&t.kids);
  free(t.n);
}
