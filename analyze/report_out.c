/* report_out.c — printing a finished report (see report.h).
 *
 * Text: the run summary, the verdict with its figures (none without a CUDA
 * call; a close one names its runner-up) and the findings first, then
 * aligned tables in human units; severities and the verdict in ANSI colour
 * when opt.color (--color). JSON: one object whose
 * fields docs/report.md lists; times in ns, shares as fractions of 1.
 * Rows are sorted by cost (time), largest first; names are untrusted text
 * from the traced process, escaped in JSON (whole), made safe and
 * shortened to their column in tables (gt_name_fit; whole with --wide).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "notices.h"
#include "report.h"
#include "util.h"

#define CELL 32 /* cell buffer */

/* ---- ordering ---- */

static const struct report *sort_r;

static int by_api_total(const void *a, const void *b) {
  uint64_t x = sort_r->api[*(const unsigned *)a].durs.sum,
           y = sort_r->api[*(const unsigned *)b].durs.sum;
  return x < y ? 1 : x > y ? -1 : (int)*(const unsigned *)a - (int)*(const unsigned *)b;
}

static uint64_t kernel_cost(const struct rp_kernel *k) {
  return k->gpu_timed ? k->gpu_scaled_ns : k->cpu_ns;
}

static int by_kernel_cost(const void *a, const void *b) {
  const struct rp_kernel *x = &sort_r->kern[*(const size_t *)a],
                         *y = &sort_r->kern[*(const size_t *)b];
  uint64_t cx = kernel_cost(x), cy = kernel_cost(y);
  if (cx != cy)
    return cx < cy ? 1 : -1;
  return strcmp(sort_r->knames.strs[*(const size_t *)a],
                sort_r->knames.strs[*(const size_t *)b]);
}

static int by_range_total(const void *a, const void *b) {
  uint64_t x = sort_r->ranges[*(const size_t *)a].total_ns,
           y = sort_r->ranges[*(const size_t *)b].total_ns;
  if (x != y)
    return x < y ? 1 : -1;
  return strcmp(sort_r->rnames.strs[*(const size_t *)a],
                sort_r->rnames.strs[*(const size_t *)b]);
}

static unsigned *api_order(const struct report *r, size_t *n) {
  unsigned *o = gt_xcalloc(GT_API_COUNT, sizeof *o);
  *n = 0;
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    if (r->api[a].calls)
      o[(*n)++] = a;
  sort_r = r;
  qsort(o, *n, sizeof *o, by_api_total);
  return o;
}

static size_t *index_order(const struct report *r, size_t n,
                           int (*cmp)(const void *, const void *)) {
  size_t *o = gt_xcalloc(n, sizeof *o);
  for (size_t i = 0; i < n; i++)
    o[i] = i;
  sort_r = r;
  qsort(o, n, sizeof *o, cmp);
  return o;
}

size_t *rp_kernel_order(const struct report *r) {
  return index_order(r, r->knames.n, by_kernel_cost);
}

size_t *rp_range_order(const struct report *r) {
  return index_order(r, r->rnames.n, by_range_total);
}

static const char *xfer_name(unsigned row) {
  return row == RP_XFER_MEMSET ? "memset" : gt_dir_name(row);
}

static uint64_t traced_api_ns(const struct report *r) {
  uint64_t t = 0;
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    t += r->api[a].durs.sum;
  return t;
}

/* Bandwidth time of a transfer row: device time when measured, else the
 * host time of the calls that waited for their copy. */
static void xfer_bw(const struct rp_xfer *x, uint64_t *bytes, uint64_t *ns) {
  if (x->gpu_timed) {
    *bytes = x->gpu_bytes;
    *ns = x->gpu_ns;
  } else {
    *bytes = x->blocking_bytes;
    *ns = x->blocking_ns;
  }
}

/* ---- text ---- */

/* Pad by display width (UTF-8 continuation bytes take no column). */
static void cell(FILE *o, const char *s, int width, int right) {
  int w = 0;
  for (const char *p = s; *p; p++)
    w += ((unsigned char)*p & 0xC0) != 0x80;
  if (right)
    fprintf(o, "%*s%s", width > w ? width - w : 0, "", s);
  else
    fprintf(o, "%s%*s", s, width > w ? width - w : 0, "");
}

static void ns_cell(FILE *o, uint64_t ns, int width) {
  char b[CELL];
  cell(o, gt_fmt_ns(b, sizeof b, ns), width, 1);
}

static void u_cell(FILE *o, uint64_t v, int width) {
  char b[CELL];
  snprintf(b, sizeof b, "%" PRIu64, v);
  cell(o, b, width, 1);
}

/* A name from the traced process in a column: made safe for a terminal
 * (gt_text_clean), and shortened to the column (gt_name_fit) unless
 * --wide asked for every name whole. */
static void name_cell(FILE *o, const struct report *r, const char *s, int width) {
  size_t n = strlen(s) + 1;
  char *c = gt_xcalloc(n, 1), *fit = gt_name_fit(gt_text_clean(c, n, s), width);
  fprintf(o, "  ");
  cell(o, r->opt.wide ? c : fit, width, 0);
  free(fit);
  free(c);
}

static void text_summary(FILE *o, const struct report *r, const char *path) {
  char a[CELL], b[CELL];
  uint64_t dur = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
  fprintf(o, "gputrace report: %s\n", path);
  fprintf(o, "  wall time %s · %zu process%s · %zu thread%s · %" PRIu64 " events",
          gt_fmt_ns(a, sizeof a, dur), r->nprocs, r->nprocs == 1 ? "" : "es", r->nthreads,
          r->nthreads == 1 ? "" : "s", r->events);
  if (r->opt.from_ns || r->opt.to_ns != UINT64_MAX) {
    fprintf(o, " · window +%s", gt_fmt_ns(a, sizeof a, r->opt.from_ns));
    if (r->opt.to_ns != UINT64_MAX)
      fprintf(o, " .. +%s", gt_fmt_ns(b, sizeof b, r->opt.to_ns));
  }
  if (r->opt.has_pid)
    fprintf(o, " · pid %u", r->opt.pid);
  fputc('\n', o);
  /* calls without their stack (past the stack cap) undercount nothing */
  uint64_t dropped = r->dropped - r->dropped_by_kind[GT_KIND_STACK];
  if (dropped || r->lost)
    fprintf(o,
            "  !! %" PRIu64 " records dropped, %" PRIu64
            " lost — figures below undercount\n",
            dropped, r->lost);
  char lost[256];
  if (gt_notice_stacks_lost(r->dropped_by_kind[GT_KIND_STACK], lost, sizeof lost))
    fprintf(o, "  !! %s\n", lost);
  if (r->damaged)
    fprintf(o, "  !! the trace is damaged: figures cover what could be read\n");
}

/* ANSI SGR colours (--color): a finding's severity, and the verdict. */
static const char *sgr(const struct report *r, const char *what) {
  if (!r->opt.color)
    return "";
  return !strcmp(what, "high")     ? "\033[1;31m"
         : !strcmp(what, "medium") ? "\033[33m"
         : !strcmp(what, "low")    ? "\033[36m"
         : !strcmp(what, "end")    ? "\033[0m"
                                   : "\033[1m";
}

/* "Verdict: X", or no verdict when the window has no CUDA call; a near
 * tie names the runner-up (RP_VERDICT_CLOSE). */
static int text_verdict_line(FILE *o, const struct report *r) {
  char a[CELL], b[CELL];
  if (!r->verdict) {
    fprintf(o, "\nVerdict: none — no data (no CUDA calls%s)\n",
            r->opt.has_pid || r->opt.from_ns || r->opt.to_ns != UINT64_MAX
                ? " in this window"
                : "");
    return 0;
  }
  fprintf(o, "\nVerdict: %s%s%s", sgr(r, "verdict"), r->verdict, sgr(r, "end"));
  if (r->runner_up)
    fprintf(o, " (close: %s %s against %s)", r->runner_up,
            gt_fmt_pct(a, CELL, r->runner_up_share, 1),
            gt_fmt_pct(b, CELL, r->verdict_share, 1));
  fputc('\n', o);
  return 1;
}

static void text_shares(FILE *o, const struct rp_shares *s, const char *lead,
                        const char *idle) {
  char p[6][CELL];
  double w = (double)s->traced;
  fprintf(o, "%scopies %s · kernels %s · launch %s · sync %s · api %s · %s %s\n", lead,
          gt_fmt_pct(p[0], CELL, (double)s->copy, w),
          gt_fmt_pct(p[1], CELL, (double)s->kernel, w),
          gt_fmt_pct(p[2], CELL, (double)s->launch, w),
          gt_fmt_pct(p[3], CELL, (double)s->sync, w),
          gt_fmt_pct(p[4], CELL, (double)s->api, w), idle,
          gt_fmt_pct(p[5], CELL, (double)s->idle, w));
}

static void text_verdict(FILE *o, const struct report *r) {
  const struct rp_shares *s = &r->sh;
  char t[CELL], bl[CELL];
  if (!text_verdict_line(o, r))
    return;
  if (r->serve.traced) { /* a server: shares of the time inside requests */
    text_shares(o, &r->serve, "  ", "host");
    fprintf(o,
            "  of %s in requests (outermost NVTX ranges, summed over threads); blocked "
            "in calls %s\n",
            gt_fmt_ns(t, sizeof t, r->serve.traced),
            gt_fmt_ns(bl, sizeof bl, r->serve.blocked));
    text_shares(o, s, "  whole process: ", "idle");
    fprintf(o,
            "  of %s traced host time (summed over threads, waiting for work included)\n",
            gt_fmt_ns(t, sizeof t, s->traced));
  } else {
    text_shares(o, s, "  ", "idle");
    fprintf(o, "  of %s traced host time (summed over threads); blocked in calls %s\n",
            gt_fmt_ns(t, sizeof t, s->traced), gt_fmt_ns(bl, sizeof bl, s->blocked));
  }
  if (r->dev_records)
    fprintf(o, "  device timing: %" PRIu64 " DEVICE records%s%s\n", r->dev_records,
            r->dev_sample > 1 ? ", sampled 1 in " : "",
            r->dev_sample > 1 ? (snprintf(t, sizeof t, "%u (scaled)", r->dev_sample), t)
                              : "");
  else
    fprintf(o, "  device timing: none — blocked time split by the CPU-side model\n");
}

static void text_ev(FILE *o, const struct rp_ev *e) {
  char b[CELL];
  fprintf(o, " %s=", e->key);
  switch (e->type) {
  case RP_EV_U64:
    fprintf(o, "%" PRIu64, e->u);
    break;
  case RP_EV_NS:
    fputs(gt_fmt_ns(b, sizeof b, e->u), o);
    break;
  case RP_EV_BYTES:
    fputs(gt_fmt_bytes(b, sizeof b, e->u), o);
    break;
  case RP_EV_FRAC:
    fprintf(o, "%.1f%%", 100 * e->d);
    break;
  case RP_EV_JSON:
    fputs(e->s, o);
    break;
  case RP_EV_STR: {
    char *b2 = gt_xcalloc(1, strlen(e->s) + 1); /* the clean text is no longer */
    fprintf(o, "\"%s\"", gt_text_clean(b2, strlen(e->s) + 1, e->s));
    free(b2);
    break;
  }
  }
}

static void text_findings(FILE *o, const struct report *r) {
  fprintf(o, "\nFindings (%zu)\n", r->nfindings);
  if (!r->nfindings)
    fprintf(o, "  none\n");
  for (size_t i = 0; i < r->nfindings; i++) {
    const struct rp_finding *f = &r->findings[i];
    char *m = gt_xcalloc(1, strlen(f->message) + 1); /* the clean text is no longer */
    fprintf(o, "  %s[%s]%s %s: %s\n        evidence:", sgr(r, f->severity), f->severity,
            sgr(r, "end"), f->rule, gt_text_clean(m, strlen(f->message) + 1, f->message));
    free(m);
    for (int k = 0; k < f->nev; k++)
      text_ev(o, &f->ev[k]);
    fprintf(o, "\n        advice: %s\n", f->advice);
  }
}

static void text_api(FILE *o, const struct report *r) {
  size_t n;
  unsigned *ord = api_order(r, &n);
  uint64_t all = traced_api_ns(r);
  char b[CELL];
  fprintf(o, "\nCUDA API (host time in calls)\n");
  fprintf(o, "  %-32s %9s %10s %7s %10s %10s %10s %10s %10s\n", "api", "calls", "total",
          "share", "mean", "p50", "p90", "p99", "max");
  for (size_t i = 0; i < n; i++) {
    const struct rp_api *a = &r->api[ord[i]];
    name_cell(o, r, gt_api_name(ord[i]), 32);
    u_cell(o, a->calls, 10);
    ns_cell(o, a->durs.sum, 11);
    cell(o, gt_fmt_pct(b, sizeof b, (double)a->durs.sum, (double)all), 8, 1);
    ns_cell(o, a->durs.sum / a->calls, 11);
    ns_cell(o, a->p50, 11);
    ns_cell(o, a->p90, 11);
    ns_cell(o, a->p99, 11);
    ns_cell(o, a->durs.max, 11);
    fputc('\n', o);
  }
  free(ord);
}

/* GPU time by the line that launched it: needs launch stacks. */
static void text_gpu_lines(FILE *o, const struct report *r) {
  if (!r->ngpu_lines)
    return;
  char a[CELL];
  fprintf(o, "\nGPU time by launching line (launches counted per call site)\n");
  fprintf(o, "  %-60s %10s %11s %7s\n", "line", "launches", "GPU time", "share");
  for (size_t i = 0; i < r->ngpu_lines; i++) {
    const struct rp_gpu_line *g = &r->gpu_lines[i];
    name_cell(o, r, g->site, 60);
    fprintf(o, " %10.0f", g->launches);
    ns_cell(o, (uint64_t)(g->gpu_ns + 0.5), 12);
    fprintf(o, " %7s\n", gt_fmt_pct(a, sizeof a, g->gpu_ns, r->gpu_lines_ns));
  }
}

static void text_kernels(FILE *o, const struct report *r) {
  if (!r->knames.n)
    return;
  size_t *ord = index_order(r, r->knames.n, by_kernel_cost);
  fprintf(o, "\nKernels%s\n",
          r->dev_sample > 1 ? " (GPU times scaled from sampled DEVICE records)" : "");
  fprintf(o, "  %-44s %9s %12s %11s %11s %11s%s\n", "kernel", "launches", "launch total",
          "launch mean", "GPU total", "GPU mean",
          r->dev_sample > 1 ? "  timed  ±95 %" : "");
  int any_upper = 0;
  for (size_t i = 0; i < r->knames.n; i++) {
    const struct rp_kernel *k = &r->kern[ord[i]];
    if (!k->launches && !k->gpu_timed)
      continue;
    name_cell(o, r, rp_kernel_name(r, ord[i]), 44);
    u_cell(o, k->launches, 10);
    ns_cell(o, k->cpu_ns, 13);
    ns_cell(o, k->launches ? k->cpu_ns / k->launches : 0, 12);
    if (k->gpu_timed) {
      ns_cell(o, k->gpu_scaled_ns, 12);
      ns_cell(o, k->gpu_ns / k->gpu_timed, 12);
      if (k->gpu_estimated) /* apportioned from graph launches (graphs.h) */
        fputs(" est.", o);
      if (k->gpu_upper) /* events spans that overlapped other streams' work */
        fputs(" upper bound", o);
      if (k->sample > 1) /* an estimate: how many were timed, and how sure it is */
        fprintf(o, " %6" PRIu64 " %6.1f%%", k->gpu_timed,
                k->gpu_scaled_ns
                    ? 100.0 * (double)k->gpu_ci95_ns / (double)k->gpu_scaled_ns
                    : 0.0);
    } else {
      cell(o, "-", 12, 1);
      cell(o, "-", 12, 1);
    }
    fputc('\n', o);
    any_upper |= k->gpu_timed && k->gpu_upper;
  }
  free(ord);
  if (any_upper)
    fputs("  upper bound: timed with CUDA events while another stream's work ran on the "
          "same\n"
          "  device; the figure may include time spent waiting behind it "
          "(GPUTRACE_GPU_TIMING="
          "cupti\n  measures run time)\n",
          o);
}

static void text_transfers(FILE *o, const struct report *r) {
  int any = 0;
  char b[CELL];
  for (unsigned d = 0; d < RP_XFER_ROWS; d++)
    any |= r->xfer[d].count || r->xfer[d].gpu_timed;
  if (!any)
    return;
  fprintf(o, "\nTransfers (bandwidth: device time if timed, else host time of blocking "
             "calls)\n");
  fprintf(o, "  %-8s %8s %11s %9s %7s %11s %9s %11s %11s\n", "dir", "count", "bytes",
          "pageable", "async", "host time", "blocking", "GPU time", "bandwidth");
  for (unsigned d = 0; d < RP_XFER_ROWS; d++) {
    const struct rp_xfer *x = &r->xfer[d];
    if (!x->count && !x->gpu_timed)
      continue;
    uint64_t bb, bn;
    xfer_bw(x, &bb, &bn);
    fprintf(o, "  %-8s", xfer_name(d));
    u_cell(o, x->count, 9);
    cell(o, gt_fmt_bytes(b, sizeof b, x->bytes), 12, 1);
    u_cell(o, x->pageable, 10);
    u_cell(o, x->async, 8);
    ns_cell(o, x->host_ns, 12);
    u_cell(o, x->blocking, 10);
    if (x->gpu_timed)
      ns_cell(o, x->gpu_scaled_ns, 12);
    else
      cell(o, "-", 12, 1);
    cell(o, gt_fmt_gbps(b, sizeof b, bb, bn), 12, 1);
    fputc('\n', o);
  }
}

static void text_sync(FILE *o, struct report *r) {
  int any = 0;
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    any |= r->sync[a].calls != 0;
  if (!any)
    return;
  fprintf(o, "\nSynchronization (host blocked, and what the device was doing)\n");
  fprintf(o, "  %-32s %9s %11s %11s %11s %11s %11s\n", "api", "calls", "blocked", "max",
          "kernels", "copies", "unexplained");
  for (unsigned a = 0; a < GT_API_COUNT; a++) {
    const struct rp_sync *s = &r->sync[a];
    if (!s->calls)
      continue;
    name_cell(o, r, gt_api_name(a), 32);
    u_cell(o, s->calls, 10);
    ns_cell(o, s->total_ns, 12);
    ns_cell(o, s->max_ns, 12);
    ns_cell(o, s->kernel_ns, 12);
    ns_cell(o, s->copy_ns, 12);
    ns_cell(o, s->sync_ns, 12);
    fputc('\n', o);
  }
  char sites[600], c[600];
  if (rp_stack_sites(r, RP_SITES, sites, sizeof sites))
    fprintf(o, "  blocked most at: %s\n", gt_text_clean(c, sizeof c, sites));
}

static void text_ranges(FILE *o, const struct report *r) {
  if (!r->rnames.n)
    return;
  char b[CELL];
  size_t *ord = index_order(r, r->rnames.n, by_range_total);
  fprintf(
      o,
      "\nNVTX ranges (first occurrence apart; others: percentiles, means per range)\n");
  fprintf(o, "  %-24s %7s %10s %10s %10s %10s %10s %9s %10s %7s %10s\n", "range", "count",
          "first", "p50", "p90", "p99", "max", "launches", "copied", "allocs", "GPU");
  for (size_t i = 0; i < r->rnames.n; i++) {
    const struct rp_range *g = &r->ranges[ord[i]];
    const struct rp_occ *c = &g->cold;
    uint64_t w = g->warm ? g->warm : 1;
    name_cell(o, r, r->rnames.strs[ord[i]], 24);
    u_cell(o, g->n, 8);
    ns_cell(o, c->end - c->start, 11);
    if (g->warm) {
      ns_cell(o, g->p50, 11);
      ns_cell(o, g->p90, 11);
      ns_cell(o, g->p99, 11);
      ns_cell(o, g->max, 11);
      snprintf(b, sizeof b, "%.1f", (double)g->launches / (double)w);
      cell(o, b, 10, 1);
      cell(o, gt_fmt_bytes(b, sizeof b, g->bytes / w), 11, 1);
      snprintf(b, sizeof b, "%.1f", (double)g->allocs / (double)w);
      cell(o, b, 8, 1);
      if (r->dev_records)
        ns_cell(o, g->gpu_ns / w, 11);
      else
        cell(o, "-", 11, 1);
    } else {
      fprintf(o, "  (once)");
    }
    fputc('\n', o);
  }
  free(ord);
}

static void text_memory(FILE *o, const struct report *r) {
  char a[CELL], b[CELL];
  fprintf(o, "\nMemory: peak device+managed %s",
          gt_fmt_bytes(a, sizeof a, r->peak_device_bytes));
  if (r->peak_device_bytes)
    fprintf(o, " (pid %u)", r->peak_pid);
  if (r->opt.device_memory)
    fprintf(o, " of %s device memory (%s)\n",
            gt_fmt_bytes(b, sizeof b, r->opt.device_memory),
            gt_fmt_pct(a, sizeof a, (double)r->peak_device_bytes,
                       (double)r->opt.device_memory));
  else
    fprintf(o, "; device memory: unknown (pass --device-memory SIZE)\n");
  for (size_t i = 0; i < sizeof r->held / sizeof r->held[0] && r->held[i].holder; i++)
    fprintf(o, "  held at the end by %s: %s — %s\n", r->held[i].holder->name,
            gt_fmt_bytes(a, sizeof a, r->held[i].bytes), r->held[i].holder->meaning);
}

/* What each switch note says, in text and JSON. */
static const char *const switch_text[] = {
    [RP_STOPPED] = "stopped by gputrace stop",
    [RP_STARTED] = "started by gputrace start",
    [RP_CUT] = "a flight recorder snapshot's records from here (snapshot --last)"};
static const char *const switch_json[] = {
    [RP_STOPPED] = "stopped", [RP_STARTED] = "started", [RP_CUT] = "snapshot_cut"};

/* gputrace start/stop's notes, a snapshot's cut: what the recording holds. */
static void text_switches(FILE *o, const struct report *r) {
  if (!r->nswitches)
    return;
  fprintf(o, "\nRecording (flight recorder: gputrace start/stop, snapshot --last)\n");
  for (size_t i = 0; i < r->nswitches; i++)
    fprintf(o, "  %10.3f s  %s\n",
            (double)(int64_t)(r->switches[i].ts_ns - r->origin) / 1e9,
            switch_text[r->switches[i].what]);
}

static void json_switches(FILE *o, const struct report *r) {
  fputs(",\"recording\":[", o);
  for (size_t i = 0; i < r->nswitches; i++)
    fprintf(o, "%s{\"ts_ns\":%" PRIu64 ",\"event\":\"%s\"}", i ? "," : "",
            r->switches[i].ts_ns, switch_json[r->switches[i].what]);
  fputs("]", o);
}

void rp_print_text(FILE *o, struct report *r, const char *path) {
  for (size_t i = 0; i < r->nfindings; i++) /* the first thing to know, first */
    if (strcmp(r->findings[i].rule, "out_of_memory") == 0)
      fprintf(o, "%s\n", r->findings[i].message);
  text_summary(o, r, path);
  text_verdict(o, r);
  text_findings(o, r);
  text_api(o, r);
  text_kernels(o, r);
  rp_graphs_text(o, r);
  text_gpu_lines(o, r);
  text_transfers(o, r);
  text_sync(o, r);
  text_ranges(o, r);
  rp_requests_text(o, r);
  text_memory(o, r);
  rp_hw_text(o, r);
  text_switches(o, r);
}

/* ---- JSON ---- */

static void json_ev(FILE *o, const struct rp_finding *f) {
  fputs("{", o);
  for (int k = 0; k < f->nev; k++) {
    const struct rp_ev *e = &f->ev[k];
    fprintf(o, "%s\"%s\":", k ? "," : "", e->key);
    if (e->type == RP_EV_FRAC)
      fprintf(o, "%.6f", e->d);
    else if (e->type == RP_EV_STR)
      gt_json_str(o, e->s);
    else if (e->type == RP_EV_JSON)
      fputs(e->s, o);
    else
      fprintf(o, "%" PRIu64, e->u);
  }
  fputs("}", o);
}

/* A share of the traced time, 0..1: a part said to be larger (a damaged
 * process's figures) is all of it, as gt_fmt_pct has it in text. */
static double share_of(uint64_t part, double whole) {
  return (double)part >= whole ? 1.0 : (double)part / whole;
}

/* {"traced_ns", "blocked_ns", the six shares and their ns} */
static void json_shares(FILE *o, const struct rp_shares *s) {
  double w = s->traced ? (double)s->traced : 1;
  fprintf(o,
          "{\"traced_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
          ",\"copy\":%.6f,\"kernel\":%.6f,\"launch\":%.6f,\"sync\":%.6f,\"api\":%.6f,"
          "\"idle\":%.6f,\"copy_ns\":%" PRIu64 ",\"kernel_ns\":%" PRIu64
          ",\"launch_ns\":%" PRIu64 ",\"sync_ns\":%" PRIu64 ",\"api_ns\":%" PRIu64
          ",\"idle_ns\":%" PRIu64 "}",
          s->traced, s->blocked, share_of(s->copy, w), share_of(s->kernel, w),
          share_of(s->launch, w), share_of(s->sync, w), share_of(s->api, w),
          share_of(s->idle, w), s->copy, s->kernel, s->launch, s->sync, s->api, s->idle);
}

static void json_head(FILE *o, const struct report *r) {
  fprintf(o,
          "{\"schema_version\":%d,\"duration_ns\":%" PRIu64 ",\"records\":%" PRIu64
          ",\"events\":%" PRIu64 ",\"processes\":%zu,\"threads\":%zu,\"dropped\":%" PRIu64
          ",\"lost\":%" PRIu64 ",\"stacks_lost\":%" PRIu64
          ",\"damaged\":%s,\"window\":{\"from_ns\":%" PRIu64 ",\"to_ns\":",
          GT_JSON_SCHEMA_VERSION, r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0,
          r->records, r->events, r->nprocs, r->nthreads, r->dropped, r->lost,
          r->dropped_by_kind[GT_KIND_STACK], r->damaged ? "true" : "false",
          r->opt.from_ns);
  if (r->opt.to_ns == UINT64_MAX)
    fputs("null", o);
  else
    fprintf(o, "%" PRIu64, r->opt.to_ns);
  fprintf(o,
          "},\n\"device_timing\":%s,\"device_records\":%" PRIu64 ",\"device_sample\":%u,",
          r->dev_records ? "true" : "false", r->dev_records,
          r->dev_sample ? r->dev_sample : 1);
  fprintf(o,
          "\n\"verdict\":%s%s%s,\"no_data\":%s,\"runner_up\":%s%s%s,\"shares_of\":\"%s\","
          "\"shares\":",
          r->verdict ? "\"" : "", r->verdict ? r->verdict : "null",
          r->verdict ? "\"" : "", r->verdict ? "false" : "true", r->runner_up ? "\"" : "",
          r->runner_up ? r->runner_up : "null", r->runner_up ? "\"" : "",
          r->serve.traced ? "requests" : "threads");
  json_shares(o, &r->sh);
  fputs(",\"request_shares\":", o);
  if (r->serve.traced)
    json_shares(o, &r->serve);
  else
    fputs("null", o);
  fputs(",\n\"findings\":[", o);
  for (size_t i = 0; i < r->nfindings; i++) {
    const struct rp_finding *f = &r->findings[i];
    fprintf(o, "%s\n {\"rule\":\"%s\",\"severity\":\"%s\",\"message\":", i ? "," : "",
            f->rule, f->severity);
    gt_json_str(o, f->message);
    fputs(",\"advice\":", o);
    gt_json_str(o, f->advice);
    fputs(",\"evidence\":", o);
    json_ev(o, f);
    fputs("}", o);
  }
  fputs("],\n", o);
}

static void json_api(FILE *o, const struct report *r) {
  size_t n;
  unsigned *ord = api_order(r, &n);
  double all = (double)traced_api_ns(r);
  fputs("\"api\":[", o);
  for (size_t i = 0; i < n; i++) {
    const struct rp_api *a = &r->api[ord[i]];
    fprintf(o,
            "%s\n {\"api\":\"%s\",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
            ",\"mean_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64
            ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
            ",\"share\":%.6f,\"errors\":%" PRIu64 "}",
            i ? "," : "", gt_api_name(ord[i]), a->calls, a->durs.sum,
            a->durs.sum / a->calls, a->p50, a->p90, a->p99, a->durs.max,
            all > 0 ? (double)a->durs.sum / all : 0, a->errors);
  }
  fputs("],\n", o);
  free(ord);
}

static void json_gpu_lines(FILE *o, const struct report *r) {
  fputs("\"gpu_by_line\":[", o);
  for (size_t i = 0; i < r->ngpu_lines; i++) {
    const struct rp_gpu_line *g = &r->gpu_lines[i];
    fprintf(o, "%s\n {\"site\":", i ? "," : "");
    gt_json_str(o, g->site);
    fprintf(o, ",\"launches\":%.0f,\"gpu_ns\":%.0f}", g->launches, g->gpu_ns);
  }
  fputs("],\n", o);
}

static void json_kernels(FILE *o, const struct report *r) {
  size_t *ord = index_order(r, r->knames.n, by_kernel_cost);
  fputs("\"kernels\":[", o);
  for (size_t i = 0, first = 1; i < r->knames.n; i++) {
    const struct rp_kernel *k = &r->kern[ord[i]];
    if (!k->launches && !k->gpu_timed)
      continue;
    fprintf(o, "%s\n {\"kernel\":", first ? "" : ",");
    first = 0;
    gt_json_str(o, rp_kernel_name(r, ord[i]));
    fprintf(o,
            ",\"launches\":%" PRIu64 ",\"cpu_total_ns\":%" PRIu64
            ",\"cpu_mean_ns\":%" PRIu64,
            k->launches, k->cpu_ns, k->launches ? k->cpu_ns / k->launches : 0);
    fprintf(o, ",\"graph_launches\":%" PRIu64, k->graph_runs);
    if (k->gpu_timed && k->gpu_estimated)
      fprintf(o, ",\"gpu_estimated\":%" PRIu64, k->gpu_estimated);
    if (k->gpu_timed && k->gpu_upper)
      fprintf(o, ",\"gpu_upper_bound\":%" PRIu64, k->gpu_upper);
    if (k->gpu_timed && k->gpu_cupti) /* CUPTI measured runs; absent: events only */
      fprintf(o, ",\"gpu_source\":\"%s\"",
              k->gpu_cupti == k->gpu_timed ? "cupti" : "cupti+events");
    if (k->gpu_timed)
      fprintf(o,
              ",\"gpu_total_ns\":%" PRIu64 ",\"gpu_mean_ns\":%" PRIu64
              ",\"gpu_max_ns\":%" PRIu64 ",\"gpu_timed\":%" PRIu64 ",\"gpu_sample\":%u"
              ",\"gpu_total_ci95_ns\":%" PRIu64,
              k->gpu_scaled_ns, k->gpu_ns / k->gpu_timed, k->gpu_max_ns, k->gpu_timed,
              k->sample, k->gpu_ci95_ns);
    fputs("}", o);
  }
  fputs("],\n", o);
  free(ord);
}

static void json_transfers(FILE *o, struct report *r) {
  fputs("\"transfers\":[", o);
  for (unsigned d = 0, first = 1; d < RP_XFER_ROWS; d++) {
    const struct rp_xfer *x = &r->xfer[d];
    if (!x->count && !x->gpu_timed)
      continue;
    uint64_t bb, bn;
    xfer_bw(x, &bb, &bn);
    fprintf(o,
            "%s\n {\"dir\":\"%s\",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
            ",\"pageable_count\":%" PRIu64 ",\"async_count\":%" PRIu64
            ",\"small_count\":%" PRIu64 ",\"host_ns\":%" PRIu64
            ",\"blocking_count\":%" PRIu64 ",\"blocking_bytes\":%" PRIu64
            ",\"blocking_ns\":%" PRIu64,
            first ? "" : ",", xfer_name(d), x->count, x->bytes, x->pageable, x->async,
            x->small, x->host_ns, x->blocking, x->blocking_bytes, x->blocking_ns);
    first = 0;
    if (x->gpu_timed)
      fprintf(o,
              ",\"gpu_total_ns\":%" PRIu64 ",\"gpu_timed\":%" PRIu64
              ",\"gpu_timed_bytes\":%" PRIu64 ",\"gpu_sample\":%u",
              x->gpu_scaled_ns, x->gpu_timed, x->gpu_bytes, x->sample);
    if (bn)
      fprintf(o, ",\"bandwidth_gbps\":%.6f", (double)bb / (double)bn);
    fputs("}", o);
  }
  fputs("],\n\"sync\":[", o);
  for (unsigned a = 0, first = 1; a < GT_API_COUNT; a++) {
    const struct rp_sync *s = &r->sync[a];
    if (!s->calls)
      continue;
    fprintf(o,
            "%s\n {\"api\":\"%s\",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
            ",\"max_ns\":%" PRIu64 ",\"kernel_ns\":%" PRIu64 ",\"copy_ns\":%" PRIu64
            ",\"unexplained_ns\":%" PRIu64 "}",
            first ? "" : ",", gt_api_name(a), s->calls, s->total_ns, s->max_ns,
            s->kernel_ns, s->copy_ns, s->sync_ns);
    first = 0;
  }
  fputs("],\n\"sync_sites\":[", o);
  struct rp_site top[3];
  int n = rp_top_sites(r, RP_SITES, top);
  for (int k = 0; k < n; k++) {
    fprintf(o, "%s{\"pid\":%u,\"stack_id\":%u,\"site\":", k ? "," : "", top[k].pid,
            top[k].stack_id);
    gt_json_str(o, top[k].name);
    fprintf(o, ",\"blocked_ns\":%" PRIu64 "}", top[k].value);
  }
  fputs("],\n", o);
}

static void json_ranges(FILE *o, const struct report *r) {
  size_t *ord = index_order(r, r->rnames.n, by_range_total);
  fputs("\"ranges\":[", o);
  for (size_t i = 0; i < r->rnames.n; i++) {
    const struct rp_range *g = &r->ranges[ord[i]];
    const struct rp_occ *c = &g->cold;
    fprintf(o, "%s\n {\"name\":", i ? "," : "");
    gt_json_str(o, r->rnames.strs[ord[i]]);
    fprintf(o,
            ",\"count\":%zu,\"warm_count\":%" PRIu64 ",\"p50_ns\":%" PRIu64
            ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
            ",\"mean_ns\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"bytes\":%" PRIu64
            ",\"allocs\":%" PRIu64,
            g->n, g->warm, g->p50, g->p90, g->p99, g->max, g->mean, g->launches, g->bytes,
            g->allocs);
    if (r->dev_records)
      fprintf(o, ",\"gpu_ns\":%" PRIu64, g->gpu_ns);
    fprintf(o, ",\"cold_count\":%" PRIu64, g->n ? 1 + g->colds : 0); /* one a process */
    fprintf(o,
            ",\"cold\":{\"start_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64 ",\"launches\":%u"
            ",\"bytes\":%" PRIu64 ",\"allocs\":%u",
            c->start, c->end - c->start, c->launches, c->bytes, c->allocs);
    if (r->dev_records)
      fprintf(o, ",\"gpu_ns\":%" PRIu64, c->gpu_ns);
    fputs("}}", o);
  }
  fputs("],\n", o);
  free(ord);
}

static void json_memory(FILE *o, const struct report *r) {
  fprintf(o,
          "\"memory\":{\"peak_device_bytes\":%" PRIu64
          ",\"pid\":%u,\"device_memory_bytes\":",
          r->peak_device_bytes, r->peak_pid);
  if (r->opt.device_memory) {
    double f = (double)r->peak_device_bytes / (double)r->opt.device_memory;
    fprintf(o, "%" PRIu64 ",\"fraction\":%.6f,\"pressure\":\"%s\"", r->opt.device_memory,
            f,
            f >= 0.90   ? "high"
            : f >= 0.85 ? "medium"
                        : "ok");
  } else {
    fputs("null,\"fraction\":null,\"pressure\":\"unknown\"", o);
  }
  fputs(",\"held_at_end\":[", o);
  for (size_t i = 0; i < sizeof r->held / sizeof r->held[0] && r->held[i].holder; i++)
    fprintf(o, "%s{\"holder\":\"%s\",\"bytes\":%" PRIu64 "}", i ? "," : "",
            r->held[i].holder->id, r->held[i].bytes);
  fprintf(o,
          "]},\n\"leaks\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64
          ",\"growing_bytes\":%" PRIu64 ",\"growth_bytes_per_min\":",
          r->leak.bytes, r->leak.blocks, r->leak.growing_bytes);
  if (r->leak.rated)
    fprintf(o, "%.1f}", r->leak.bytes_per_min);
  else
    fputs("null}", o);
}

void rp_print_json(FILE *o, struct report *r) {
  json_head(o, r);
  json_api(o, r);
  json_kernels(o, r);
  rp_graphs_json(o, r);
  json_gpu_lines(o, r);
  json_transfers(o, r);
  json_ranges(o, r);
  rp_requests_json(o, r);
  json_memory(o, r);
  rp_hw_json(o, r);
  json_switches(o, r);
  fputs("}\n", o);
}
