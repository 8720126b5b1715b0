/* cmd_diff.c — `gputrace diff A B [--json] [--wide] [--threshold PCT]
 * [--min-share PCT] [--all]`: what changed between two traces of the same
 * workload. Text rows name their API, kernel or range in 60 columns
 * (gt_name_fit), or whole with --wide.
 *
 * Both traces are reported (report_*.c, the same figures `gputrace report`
 * prints), then compared metric by metric: per API (calls, total, p50 and
 * fastest call), per kernel (launches, launch time, GPU time and mean when
 * both traces have device timing), per transfer direction (count, bytes,
 * host time, GPU time), per NVTX range (count, p50 and fastest of the warm
 * occurrences, p90), the peak device memory, the leaked bytes (live at the
 * end, as `leaks` counts them) and the growth rate of growing groups. Every
 * metric is "more is worse": a change of at least --threshold percent
 * (default 15) is a regression when B is larger and an improvement when it
 * is smaller — if it matters: a time metric only when its row holds at
 * least --min-share percent (default 1) of its trace's traced time (GPU
 * time: of all kernels' GPU time) and moved by at least MIN_EFFECT_NS a
 * call, a count when the larger side is at least 10, memory when it is at
 * least 1 MiB.
 *
 * Noise: a busy machine preempts the traced process inside its calls and
 * wakes it late from waits, which moves host times — totals, means,
 * medians, tails — by tens of percent, and even the fastest calls a
 * little; it does not move the whole distribution past itself. So a
 * distribution is judged by its p50 and its fastest together: a p50 that
 * moved by the threshold (and the minimum effect) is a change when the two
 * runs' distributions are apart — B's fastest slower than A's p50 (a
 * regression), or B's p50 faster than A's fastest (an improvement); else
 * it, and a fastest that moved, are "noise" (said, not counted). Host-time
 * totals and p90s follow the load: shown, never judged alone (status
 * "info" when they moved). GPU times are the device's: judged as measured.
 *
 * Exit: 0 no regression, 1 regressions, 2 bad usage or an unreadable
 * trace, 3 a damaged trace (compared as far as it could be read).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "notices.h"
#include "report.h"
#include "shared_options.h"
#include "util.h"

enum { UNCHANGED, REGRESSION, IMPROVEMENT, NOISE, INFO };
/* TIME, GPUTIME: a p50, whose next row is its distribution's fastest
 * (FASTEST, GPUFASTEST): they are judged together; TOTAL: a total or a
 * tail, shown, never judged alone. */
enum { COUNT, TIME, GPUTIME, MEMORY, FASTEST, GPUFASTEST, TOTAL };
#define MIN_EFFECT_NS 1000ull /* a time row's least change a call: 1 us */

struct drow {
  const char *section, *name, *metric;
  uint64_t a, b;
  uint64_t weight_a, weight_b; /* the row's time, for the significance gate */
  int type, status;
};

struct diff {
  struct report *a, *b;
  double threshold, min_share;
  struct drow *rows;
  size_t n, cap;
  uint64_t gpu_a, gpu_b; /* all kernels' GPU time */
};

static void row(struct diff *d, const char *section, const char *name, const char *metric,
                int type, uint64_t a, uint64_t b, uint64_t wa, uint64_t wb) {
  d->rows = gt_grow(d->rows, &d->cap, d->n + 1, sizeof *d->rows);
  d->rows[d->n++] = (struct drow){section, name, metric, a, b, wa, wb, type, UNCHANGED};
}

static double change_pct(uint64_t a, uint64_t b) {
  if (a == 0)
    return b ? INFINITY : 0;
  return 100.0 * ((double)b - (double)a) / (double)a;
}

static int significant(const struct diff *d, const struct drow *w) {
  uint64_t big = w->a > w->b ? w->a : w->b;
  switch (w->type) {
  case COUNT:
    return big >= 10;
  case MEMORY:
    return big >= (1u << 20);
  case GPUTIME:
  case GPUFASTEST:
    return 100.0 * (double)w->weight_a >= d->min_share * (double)d->gpu_a ||
           100.0 * (double)w->weight_b >= d->min_share * (double)d->gpu_b;
  default:
    return 100.0 * (double)w->weight_a >= d->min_share * (double)d->a->sh.traced ||
           100.0 * (double)w->weight_b >= d->min_share * (double)d->b->sh.traced;
  }
}

/* -1, 0, 1: the row moved down, not enough, up (threshold, gate, effect). */
static int moved(const struct diff *d, const struct drow *w) {
  double c = change_pct(w->a, w->b);
  uint64_t delta = w->a > w->b ? w->a - w->b : w->b - w->a;
  /* equal figures are never a change, not even at --threshold 0 */
  if (w->a == w->b || (c < 0 ? -c : c) < d->threshold || !significant(d, w))
    return 0;
  if (w->type != COUNT && w->type != MEMORY && w->type != TOTAL &&
      delta < MIN_EFFECT_NS && d->threshold > 0)
    return 0;
  return c > 0 ? 1 : -1;
}

static void judge(struct diff *d) {
  for (size_t i = 0; i < d->n; i++) {
    struct drow *w = &d->rows[i];
    if (w->type == TOTAL) {
      w->status = moved(d, w) ? INFO : UNCHANGED;
      continue;
    }
    if (i + 1 < d->n && ((w->type == TIME && d->rows[i + 1].type == FASTEST) ||
                         (w->type == GPUTIME && d->rows[i + 1].type == GPUFASTEST))) {
      struct drow *f = &d->rows[++i]; /* the p50 and the fastest, together */
      int p = moved(d, w), q = moved(d, f);
      /* apart: B's fastest slower than A's p50, or B's p50 faster than A's
       * fastest — not two draws of one distribution */
      int apart = p > 0 ? f->b > w->a : p < 0 ? w->b < f->a : 0;
      if (apart)
        w->status = f->status = p > 0 ? REGRESSION : IMPROVEMENT;
      else
        w->status = p ? NOISE : UNCHANGED, f->status = q ? NOISE : UNCHANGED;
      continue;
    }
    int m = moved(d, w);
    if (m)
      w->status = m > 0 ? REGRESSION : IMPROVEMENT;
  }
}

/* The fastest of a distribution (its values, in any order). */
static uint64_t fastest(const struct gt_durs *x) {
  uint64_t lo = UINT64_MAX;
  for (size_t i = 0; i < x->n; i++) {
    uint64_t v = x->wide ? ((const uint64_t *)x->v)[i] : ((const uint32_t *)x->v)[i];
    lo = v < lo ? v : lo;
  }
  return x->n ? lo : 0;
}

/* ---- the metrics ---- */

static void api_rows(struct diff *d) {
  for (unsigned a = 0; a < GT_API_COUNT; a++) {
    const struct rp_api *x = &d->a->api[a], *y = &d->b->api[a];
    if (!x->calls && !y->calls)
      continue;
    const char *n = gt_api_name(a);
    row(d, "api", n, "calls", COUNT, x->calls, y->calls, 0, 0);
    row(d, "api", n, "total_ns", TOTAL, x->durs.sum, y->durs.sum, x->durs.sum,
        y->durs.sum);
    row(d, "api", n, "p50_ns", TIME, x->p50, y->p50, x->durs.sum, y->durs.sum);
    row(d, "api", n, "fastest_ns", FASTEST, fastest(&x->durs), fastest(&y->durs),
        x->durs.sum, y->durs.sum);
  }
}

static const struct rp_kernel *kernel_in(const struct report *r, const char *name) {
  size_t i = gt_strtab_find(&r->knames, name);
  return i == SIZE_MAX ? NULL : &r->kern[i];
}

static void kernel_row(struct diff *d, const char *n, const struct rp_kernel *x,
                       const struct rp_kernel *y) {
  static const struct rp_kernel none;
  x = x ? x : &none;
  y = y ? y : &none;
  row(d, "kernel", n, "launches", COUNT, x->launches, y->launches, 0, 0);
  row(d, "kernel", n, "cpu_total_ns", TOTAL, x->cpu_ns, y->cpu_ns, x->cpu_ns, y->cpu_ns);
  if (d->a->dev_records && d->b->dev_records) {
    /* the total follows the launches (and a sample's luck): shown; the
     * launches' durations are judged as a distribution */
    row(d, "kernel", n, "gpu_total_ns", TOTAL, x->gpu_scaled_ns, y->gpu_scaled_ns,
        x->gpu_scaled_ns, y->gpu_scaled_ns);
    struct gt_durs xd = x->gpu_d, yd = y->gpu_d; /* (read-only copies for selection) */
    uint64_t p50[2];
    static const unsigned half[] = {50};
    gt_durs_percentiles(&xd, half, 1, &p50[0]);
    gt_durs_percentiles(&yd, half, 1, &p50[1]);
    row(d, "kernel", n, "gpu_p50_ns", GPUTIME, p50[0], p50[1], x->gpu_scaled_ns,
        y->gpu_scaled_ns);
    row(d, "kernel", n, "gpu_fastest_ns", GPUFASTEST, fastest(&x->gpu_d),
        fastest(&y->gpu_d), x->gpu_scaled_ns, y->gpu_scaled_ns);
  }
}

static void kernel_rows(struct diff *d) {
  for (size_t i = 0; i < d->a->knames.n; i++)
    d->gpu_a += d->a->kern[i].gpu_scaled_ns;
  for (size_t i = 0; i < d->b->knames.n; i++)
    d->gpu_b += d->b->kern[i].gpu_scaled_ns;
  for (size_t i = 0; i < d->a->knames.n; i++) {
    const char *n = d->a->knames.strs[i];
    kernel_row(d, n, &d->a->kern[i], kernel_in(d->b, n));
  }
  for (size_t i = 0; i < d->b->knames.n; i++) {
    const char *n = d->b->knames.strs[i];
    if (!kernel_in(d->a, n))
      kernel_row(d, n, NULL, &d->b->kern[i]);
  }
}

static void transfer_rows(struct diff *d) {
  static const char *const names[RP_XFER_ROWS] = {"HtoH",    "HtoD", "DtoH",  "DtoD",
                                                  "default", "peer", "memset"};
  for (unsigned t = 0; t < RP_XFER_ROWS; t++) {
    const struct rp_xfer *x = &d->a->xfer[t], *y = &d->b->xfer[t];
    if (!x->count && !y->count)
      continue;
    row(d, "transfer", names[t], "count", COUNT, x->count, y->count, 0, 0);
    row(d, "transfer", names[t], "bytes", COUNT, x->bytes, y->bytes, 0, 0);
    row(d, "transfer", names[t], "host_ns", TOTAL, x->host_ns, y->host_ns, x->host_ns,
        y->host_ns);
    if (d->a->dev_records && d->b->dev_records)
      row(d, "transfer", names[t], "gpu_total_ns", TOTAL, x->gpu_scaled_ns,
          y->gpu_scaled_ns, x->gpu_scaled_ns, y->gpu_scaled_ns);
  }
}

static void range_row(struct diff *d, const char *n, const struct rp_range *x,
                      const struct rp_range *y) {
  static const struct rp_range none;
  uint64_t tx = x ? x->total_ns : 0, ty = y ? y->total_ns : 0;
  x = x ? x : &none;
  y = y ? y : &none;
  row(d, "range", n, "count", COUNT, x->n, y->n, 0, 0);
  row(d, "range", n, "p50_ns", TIME, x->p50, y->p50, tx, ty);
  row(d, "range", n, "fastest_ns", FASTEST, fastest(&x->warm_d), fastest(&y->warm_d), tx,
      ty);
  row(d, "range", n, "p90_ns", TOTAL, x->p90, y->p90, tx, ty);
}

static const struct rp_range *range_in(const struct report *r, const char *name) {
  size_t i = gt_strtab_find(&r->rnames, name);
  return i == SIZE_MAX ? NULL : &r->ranges[i];
}

static void range_rows(struct diff *d) {
  for (size_t i = 0; i < d->a->rnames.n; i++)
    range_row(d, d->a->rnames.strs[i], &d->a->ranges[i],
              range_in(d->b, d->a->rnames.strs[i]));
  for (size_t i = 0; i < d->b->rnames.n; i++)
    if (!range_in(d->a, d->b->rnames.strs[i]))
      range_row(d, d->b->rnames.strs[i], NULL, &d->b->ranges[i]);
}

/* ---- output ---- */

static const char *status_name(int s) {
  static const char *const names[] = {"unchanged", "regression", "improvement", "noise",
                                      "info"};
  return names[s];
}

static void value(char *buf, size_t len, const struct drow *w, uint64_t v) {
  if (w->type != COUNT && w->type != MEMORY)
    gt_fmt_ns(buf, len, v);
  else if (w->type == MEMORY || !strcmp(w->metric, "bytes"))
    gt_fmt_bytes(buf, len, v);
  else
    snprintf(buf, len, "%" PRIu64, v);
}

/* A row's name: made safe for a terminal, in 60 columns unless `wide`. */
static void print_name(const char *name, int wide) {
  size_t n = strlen(name) + 1;
  char *c = gt_text_clean(gt_xcalloc(n, 1), n, name), *fit = gt_name_fit(c, 60);
  fputs(wide ? c : fit, stdout);
  free(fit);
  free(c);
}

static void print_text(const struct diff *d, const char *pa, const char *pb, int all,
                       int wide, size_t regressions, size_t improvements) {
  printf("gputrace diff: %s -> %s (threshold %.1f %%, min share %.1f %%)\n", pa, pb,
         d->threshold, d->min_share);
  printf("  verdict: %s -> %s\n", d->a->verdict ? d->a->verdict : "none",
         d->b->verdict ? d->b->verdict : "none");
  size_t noise = 0;
  for (size_t i = 0; i < d->n; i++)
    noise += d->rows[i].status == NOISE;
  printf("  %zu regression%s, %zu improvement%s", regressions,
         regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s");
  if (noise)
    printf(", %zu within noise (the two runs' distributions overlap: the machine's load)",
           noise);
  putchar('\n');
  for (size_t i = 0; i < d->n; i++) {
    const struct drow *w = &d->rows[i];
    if (!all && (w->status == UNCHANGED || w->status == INFO))
      continue;
    char a[32], b[32], c[32];
    double pct = change_pct(w->a, w->b);
    value(a, sizeof a, w, w->a);
    value(b, sizeof b, w, w->b);
    if (isinf(pct))
      snprintf(c, sizeof c, "new");
    else
      snprintf(c, sizeof c, "%+.1f %%", pct);
    printf("  %-12s %-8s ", status_name(w->status), w->section);
    print_name(w->name, wide);
    printf(" %s: %s -> %s (%s)\n", w->metric, a, b, c);
  }
}

/* A verdict as a JSON string, or null where there was no data (report.h). */
#define JSON_VERDICT(r)                                                                  \
  (r)->verdict ? "\"" : "", (r)->verdict ? (r)->verdict : "null", (r)->verdict ? "\"" : ""

static void print_json(const struct diff *d, size_t regressions, size_t improvements) {
  size_t noise = 0;
  for (size_t i = 0; i < d->n; i++)
    noise += d->rows[i].status == NOISE;
  printf("{\"schema_version\":%d,\"threshold_pct\":%.6g,\"min_share_pct\":%.6g,"
         "\"min_effect_ns\":%llu,\"verdict\":{\"a\":%s%s%s,\"b\":%s%s%s},"
         "\"regressions\":%zu,\"improvements\":%zu,\"noise\":%zu,\"changes\":[",
         GT_JSON_SCHEMA_VERSION, d->threshold, d->min_share, MIN_EFFECT_NS,
         JSON_VERDICT(d->a), JSON_VERDICT(d->b), regressions, improvements, noise);
  for (size_t i = 0; i < d->n; i++) {
    const struct drow *w = &d->rows[i];
    double pct = change_pct(w->a, w->b);
    printf("%s\n {\"section\":\"%s\",\"name\":", i ? "," : "", w->section);
    gt_json_str(stdout, w->name);
    printf(",\"metric\":\"%s\",\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"change_pct\":",
           w->metric, w->a, w->b);
    if (isinf(pct))
      printf("null");
    else
      printf("%.6f", pct);
    printf(",\"status\":\"%s\"}", status_name(w->status));
  }
  printf("]}\n");
}

/* ---- the command ---- */

static int load(struct report *r, const char *path, int no_wait) {
  struct rp_options o = {.to_ns = UINT64_MAX, .no_wait = no_wait};
  rp_init(r, &o);
  if (rp_read(r, path, "diff") != 0)
    return 2;
  gt_notice_no_cuda("gputrace diff", path, r->session);
  rp_finish(r);
  return 0;
}

/* --threshold, --min-share: a percentage into the double o->value. */
static int parse_pct(const struct gt_option *o, const char *s, char *want, size_t len) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0 && v < 1e300)) { /* also NaN, inf */
    snprintf(want, len, "a percentage: 0 or more");
    return -1;
  }
  *(double *)o->value = v;
  return 0;
}

struct diff_opts {
  const char *a, *b;
  int json, all, no_wait, wide;
};

static int run(struct diff *d, const struct diff_opts *op) {
  if (load(d->a, op->a, op->no_wait) || load(d->b, op->b, op->no_wait))
    return 2;
  api_rows(d);
  kernel_rows(d);
  transfer_rows(d);
  range_rows(d);
  row(d, "memory", "device", "peak_bytes", MEMORY, d->a->peak_device_bytes,
      d->b->peak_device_bytes, 0, 0);
  /* what `leaks` says is live at the end, and how fast growing groups grew */
  row(d, "memory", "device", "leaked_bytes", MEMORY, d->a->leak.bytes, d->b->leak.bytes,
      0, 0);
  row(d, "memory", "device", "growth_bytes_per_min", MEMORY,
      (uint64_t)(d->a->leak.bytes_per_min > 0 ? d->a->leak.bytes_per_min + 0.5 : 0),
      (uint64_t)(d->b->leak.bytes_per_min > 0 ? d->b->leak.bytes_per_min + 0.5 : 0), 0,
      0);
  judge(d);
  size_t reg = 0, imp = 0;
  for (size_t i = 0; i < d->n; i++) {
    reg += d->rows[i].status == REGRESSION;
    imp += d->rows[i].status == IMPROVEMENT;
  }
  if (op->json)
    print_json(d, reg, imp);
  else
    print_text(d, op->a, op->b, op->all, op->wide, reg, imp);
  return gt_exit_status("gputrace diff", d->a->damaged || d->b->damaged, reg ? 1 : 0);
}

int cmd_diff(int argc, char **argv) {
  struct diff d = {.threshold = 15, .min_share = 1};
  struct diff_opts op = {0};
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_JSON(&op.json),
      GT_OPT_WIDE(&op.wide),
      GT_OPT_CALLBACK(0, "threshold", &d.threshold, parse_pct, "PCT",
                      "a change of PCT % or more counts (default 15)"),
      GT_OPT_CALLBACK(0, "min-share", &d.min_share, parse_pct, "PCT",
                      "time rows need PCT % of the total (default 1)"),
      {.name = "all",
       .type = GT_OPTION_FLAG,
       .help = "list unchanged metrics too (JSON has them all)",
       .value = GT_OPT_VALUE_PTR(&op.all, int),
       .excludes = "json"},
      GT_OPT_NO_WAIT(&op.no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd = {.prog = "gputrace diff",
                                 .options = options,
                                 .args = "A B",
                                 .min_args = 2,
                                 .max_args = 2,
                                 .about = "what changed from trace A to trace B"};
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  op.a = argv[0], op.b = argv[1];
  d.a = gt_xcalloc(1, sizeof *d.a);
  d.b = gt_xcalloc(1, sizeof *d.b);
  st = run(&d, &op);
  rp_free(d.a);
  rp_free(d.b);
  free(d.a);
  free(d.b);
  free(d.rows);
  return st;
}
