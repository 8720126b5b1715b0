/* report_requests.c — request types: the per-type breakdown (text, JSON)
 * and the findings judged per type (report.h; docs/report.md, "Requests").
 *
 * Contract:
 *  - A request is an outermost NVTX push range on its thread; its type is
 *    the range's name. report_collect.c gives each type (struct rp_req) the
 *    partition of its occurrences' time — the calls its thread made while
 *    one was open, split as the whole process's are (copies, kernels,
 *    launch, sync, api) and "host", the rest (time in no call) — and the
 *    host time of its pageable copies with their sites.
 *  - rp_request_findings: `request_pageable` for each type whose pageable
 *    copies take at least 5 % of its time (high from 25 %), so a rare
 *    type's copies are not diluted by the other types or by idle threads.
 *  - Rows are listed by time, largest first; a type with no outermost
 *    occurrence is not a request type.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

#define CELL 32
#define RP_REQ_TEXT_ROWS 30 /* the text table's rows; JSON has every type */

struct by_time {
  uint64_t ns;
  size_t idx;
};

static int by_time_desc(const void *a, const void *b) {
  const struct by_time *x = a, *y = b;
  if (x->ns != y->ns)
    return x->ns < y->ns ? 1 : -1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Range indexes of the request types, by time, largest first (ties: by
 * name index); *n of them. */
static size_t *request_order(const struct report *r, size_t *n) {
  size_t cap = r->rnames.n ? r->rnames.n : 1;
  struct by_time *t = malloc(cap * sizeof *t);
  size_t *ord = malloc(cap * sizeof *ord);
  if (!t || !ord)
    gt_oom();
  *n = 0;
  for (size_t i = 0; i < r->rnames.n; i++)
    if (r->ranges[i].req.sh.traced)
      t[(*n)++] = (struct by_time){r->ranges[i].req.sh.traced, i};
  if (*n)
    qsort(t, *n, sizeof *t, by_time_desc);
  for (size_t i = 0; i < *n; i++)
    ord[i] = t[i].idx;
  free(t);
  return ord;
}

static void pct(FILE *o, uint64_t part, uint64_t whole) {
  fprintf(o, " %6.1f", whole ? 100.0 * (double)part / (double)whole : 0.0);
}

void rp_requests_text(FILE *o, const struct report *r) {
  size_t n;
  size_t *ord = request_order(r, &n);
  char a[CELL], b[CELL];
  if (n)
    fprintf(
        o,
        "\nRequests (outermost NVTX ranges by name: where each type's time went, %% of "
        "its time; GPU: its own work's device time per request)\n  %-24s %8s %10s %11s "
        "%6s %7s %6s %6s %6s %6s %11s\n",
        "type", "requests", "time", "per request", "copies", "kernels", "launch", "sync",
        "api", "host", "GPU");
  for (size_t i = 0; i < n && i < RP_REQ_TEXT_ROWS; i++) {
    const struct rp_req *q = &r->ranges[ord[i]].req;
    const char *raw = r->rnames.strs[ord[i]];
    size_t len = strlen(raw) + 1; /* gt_text_clean: one byte for one */
    char *clean = gt_xcalloc(len, 1),
         *fit = gt_name_fit(gt_text_clean(clean, len, raw), 24);
    fprintf(o, "  %-24s %8" PRIu64 " %10s %11s", r->opt.wide ? clean : fit, q->n,
            gt_fmt_ns(a, sizeof a, q->sh.traced),
            gt_fmt_ns(b, sizeof b, q->n ? q->sh.traced / q->n : q->sh.traced));
    pct(o, q->sh.copy, q->sh.traced);
    fputc(' ', o);
    pct(o, q->sh.kernel, q->sh.traced);
    pct(o, q->sh.launch, q->sh.traced);
    pct(o, q->sh.sync, q->sh.traced);
    pct(o, q->sh.api, q->sh.traced);
    pct(o, q->sh.idle, q->sh.traced);
    const struct rp_range *g = &r->ranges[ord[i]];
    if (r->dev_records && g->n)
      fprintf(o, " %11s", gt_fmt_ns(a, sizeof a, (g->gpu_ns + g->cold.gpu_ns) / g->n));
    else
      fprintf(o, " %11s", "-");
    fputc('\n', o);
    free(fit);
    free(clean);
  }
  if (n > RP_REQ_TEXT_ROWS)
    fprintf(o, "  ... %zu more request types (--json lists them all)\n",
            n - RP_REQ_TEXT_ROWS);
  free(ord);
}

static double frac(uint64_t part, uint64_t whole) {
  return whole ? (double)part / (double)whole : 0;
}

/* ",\"requests\":[{name, count, time_ns, copy, kernel, launch, sync, api,
 * host, and their _ns}]" */
void rp_requests_json(FILE *o, const struct report *r) {
  size_t n;
  size_t *ord = request_order(r, &n);
  fputs("\"requests\":[", o);
  for (size_t i = 0; i < n; i++) {
    const struct rp_req *q = &r->ranges[ord[i]].req;
    const struct rp_shares *s = &q->sh;
    fprintf(o, "%s\n {\"name\":", i ? "," : "");
    gt_json_str(o, r->rnames.strs[ord[i]]);
    fprintf(o,
            ",\"count\":%" PRIu64 ",\"time_ns\":%" PRIu64
            ",\"copy\":%.6f,\"kernel\":%.6f,\"launch\":%.6f,\"sync\":%.6f,\"api\":%.6f,"
            "\"host\":%.6f,\"copy_ns\":%" PRIu64 ",\"kernel_ns\":%" PRIu64
            ",\"launch_ns\":%" PRIu64 ",\"sync_ns\":%" PRIu64 ",\"api_ns\":%" PRIu64
            ",\"host_ns\":%" PRIu64 ",\"pageable_ns\":%" PRIu64,
            q->n, s->traced, frac(s->copy, s->traced), frac(s->kernel, s->traced),
            frac(s->launch, s->traced), frac(s->sync, s->traced), frac(s->api, s->traced),
            frac(s->idle, s->traced), s->copy, s->kernel, s->launch, s->sync, s->api,
            s->idle, q->pageable_ns);
    const struct rp_range *g = &r->ranges[ord[i]];
    uint64_t gpu = g->gpu_ns + g->cold.gpu_ns; /* range_gpu.h: its own work */
    if (r->dev_records)
      fprintf(o, ",\"gpu_ns\":%" PRIu64 ",\"gpu_per_request_ns\":%" PRIu64, gpu,
              g->n ? gpu / g->n : 0);
    fputc('}', o);
  }
  fputs("],\n", o);
  free(ord);
}

/* "site; site" of a type's pageable copies, most host time first. */
static void pageable_sites(struct report *r, const struct rp_req *q, char *buf,
                           size_t len) {
  int done[RP_REQ_SITES] = {0};
  buf[0] = '\0';
  for (int k = 0; k < RP_REQ_SITES; k++) {
    int best = -1;
    for (int i = 0; i < RP_REQ_SITES; i++)
      if (q->sites[i].ns && !done[i] && (best < 0 || q->sites[i].ns > q->sites[best].ns))
        best = i;
    if (best < 0)
      return;
    done[best] = 1;
    char site[200];
    rp_site_text(r, q->sites[best].pid, q->sites[best].stack, site, sizeof site);
    size_t at = strlen(buf), add = strlen(site) + (at ? 2 : 0);
    if (at + add >= len)
      return; /* the sites that fit */
    memcpy(buf + at, "; ", at ? 2 : 0);
    memcpy(buf + at + (at ? 2 : 0), site, strlen(site) + 1);
  }
}

void rp_request_findings(struct report *r) {
  size_t n;
  size_t *ord = request_order(r, &n);
  for (size_t i = 0; i < n; i++) {
    const struct rp_req *q = &r->ranges[ord[i]].req;
    double share = frac(q->pageable_ns, q->sh.traced);
    if (!q->pageable_n || share < RP_SHARE_MEDIUM)
      continue;
    char sites[200];
    pageable_sites(r, q, sites, sizeof sites);
    struct rp_finding *f = rp_add_finding(
        r, "request_pageable", share >= RP_SHARE_HIGH ? "high" : "medium",
        "Stage this request type's copies through pinned buffers (cudaMallocHost, or "
        "cudaHostRegister once) and cudaMemcpyAsync: its requests wait for pageable "
        "copies at a fraction of the bandwidth.",
        "\"%.60s\": %.1f %% of its time (%" PRIu64 " requests) in %" PRIu64
        " pageable copies%s%s",
        r->rnames.strs[ord[i]], 100 * share, q->n, q->pageable_n, sites[0] ? " at " : "",
        sites);
    rp_ev_str(f, "request", r->rnames.strs[ord[i]]);
    rp_ev_u(f, "requests", RP_EV_U64, q->n);
    rp_ev_u(f, "copies", RP_EV_U64, q->pageable_n);
    rp_ev_u(f, "host_ns", RP_EV_NS, q->pageable_ns);
    rp_ev_u(f, "request_ns", RP_EV_NS, q->sh.traced);
    rp_ev_frac(f, "share", share);
    if (sites[0])
      rp_ev_str(f, "call_sites", sites);
  }
  free(ord);
}
