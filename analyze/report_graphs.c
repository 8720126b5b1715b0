/* report_graphs.c — report's "graphs" section: one row per executable
 * graph the session's graph layer saw (graphs.h), in text and JSON.
 *
 * Contract:
 *  - A row: launches (successful graph launches), failed launches, its
 *    kernels with their count per launch (by demangled name, in node
 *    order of first appearance; host functions are nodes, not kernels), GPU total (the
 * timed launches' device time, each weighted by its sample: an estimate when sampled),
 * mean and p99 per timed launch, where its graph was captured (the BeginCapture's line;
 * "-" for a graph built node by node) and where it was instantiated, what instantiation
 * took, and how many times its graph was instantiated.
 *  - The section is left out when no graph was instantiated.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graphs.h"
#include "report.h"
#include "session.h"
#include "util.h"

struct kcount {
  const char *name;
  unsigned count;
};

/* The executable's kernels by name, with how many nodes run each. */
static size_t kernels_of(struct report *r, const struct gt_graph_exec *x,
                         struct kcount *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < x->nnodes; i++) {
    const struct gt_graph_node *nd = &x->nodes[i];
    if (nd->kind != GT_KIND_LAUNCH || (nd->flags & GT_F_HOST_FN))
      continue;
    const char *name = gt_model_kernel_of(r->model, x->pid, nd->kernel, nd->flags);
    size_t j = 0;
    while (j < n && strcmp(out[j].name, name) != 0)
      j++;
    if (j == n) {
      if (n == max)
        continue;
      /* the model's fallback buffer is reused: keep a copy */
      char *copy = strdup(name);
      if (!copy)
        gt_oom();
      out[n++] = (struct kcount){copy, 0};
    }
    out[j].count++;
  }
  return n;
}

static void free_kernels(struct kcount *k, size_t n) {
  for (size_t i = 0; i < n; i++)
    free((void *)k[i].name);
}

static void per_launch(struct gt_graph_exec *x, uint64_t *mean, uint64_t *p99) {
  static const unsigned pcts[] = {99};
  *mean = x->durs.n ? x->durs.sum / x->durs.n : 0;
  gt_durs_percentiles(&x->durs, pcts, 1, p99);
}

#define GR_MAX_KERNELS 64

void rp_graphs_text(FILE *o, struct report *r) {
  size_t n;
  struct gt_graph_exec *x = gt_graphs_execs(gt_session_graphs(r->session), &n);
  if (!n)
    return;
  fprintf(o,
          "\nGraphs (each executable graph; GPU per launch from its timed launches)\n");
  for (size_t i = 0; i < n; i++) {
    struct kcount k[GR_MAX_KERNELS];
    size_t nk = kernels_of(r, &x[i], k, GR_MAX_KERNELS);
    uint64_t mean, p99;
    per_launch(&x[i], &mean, &p99);
    char a[32], b[32], c[32], d[32], site[200];
    fprintf(o, "  graph 0x%" PRIx64 " (pid %u): %" PRIu64 " launches, %zu nodes",
            x[i].handle, x[i].pid, x[i].launches, x[i].nnodes);
    if (x[i].failed)
      fprintf(o, ", %" PRIu64 " failed", x[i].failed);
    if (x[i].timed)
      fprintf(o, ", GPU %s (mean %s, p99 %s per launch)",
              gt_fmt_ns(a, sizeof a, (uint64_t)(x[i].gpu_ns + 0.5)),
              gt_fmt_ns(b, sizeof b, mean), gt_fmt_ns(c, sizeof c, p99));
    fputc('\n', o);
    for (size_t j = 0; j < nk; j++)
      fprintf(o, "    %3u x %s\n", k[j].count, k[j].name);
    rp_site_text(r, x[i].pid, x[i].capture_stack, site, sizeof site);
    fprintf(o, "    %s %s\n", x[i].captured ? "captured at" : "built (not captured)",
            x[i].captured ? site : "");
    rp_site_text(r, x[i].pid, x[i].instance_stack, site, sizeof site);
    fprintf(o, "    instantiated at %s in %s (instantiation %u of its graph)\n", site,
            gt_fmt_ns(d, sizeof d, x[i].instance_ns), x[i].instantiations);
    free_kernels(k, nk);
  }
}

void rp_graphs_json(FILE *o, struct report *r) {
  size_t n;
  struct gt_graph_exec *x = gt_graphs_execs(gt_session_graphs(r->session), &n);
  fputs("\"graphs\":[", o);
  for (size_t i = 0; i < n; i++) {
    struct kcount k[GR_MAX_KERNELS];
    size_t nk = kernels_of(r, &x[i], k, GR_MAX_KERNELS);
    uint64_t mean, p99;
    per_launch(&x[i], &mean, &p99);
    char site[200];
    fprintf(o,
            "%s\n {\"graph\":\"0x%" PRIx64 "\",\"pid\":%u,\"launches\":%" PRIu64
            ",\"failed\":%" PRIu64 ",\"nodes\":%zu,\"kernels\":[",
            i ? "," : "", x[i].handle, x[i].pid, x[i].launches, x[i].failed, x[i].nnodes);
    for (size_t j = 0; j < nk; j++) {
      fputs(j ? ",{\"name\":" : "{\"name\":", o);
      gt_json_str(o, k[j].name);
      fprintf(o, ",\"count\":%u}", k[j].count);
    }
    fprintf(o,
            "],\"timed\":%" PRIu64 ",\"gpu_total_ns\":%.0f,\"gpu_mean_ns\":%" PRIu64
            ",\"gpu_p99_ns\":%" PRIu64 ",\"captured\":%s,\"captured_at\":",
            x[i].timed, x[i].gpu_ns, mean, p99, x[i].captured ? "true" : "false");
    rp_site_text(r, x[i].pid, x[i].capture_stack, site, sizeof site);
    gt_json_str(o, site);
    fputs(",\"instantiated_at\":", o);
    rp_site_text(r, x[i].pid, x[i].instance_stack, site, sizeof site);
    gt_json_str(o, site);
    fprintf(o, ",\"instantiate_ns\":%" PRIu64 ",\"instantiations\":%u}", x[i].instance_ns,
            x[i].instantiations);
    free_kernels(k, nk);
  }
  fprintf(o, "],\n\"graph_launches_during_capture\":%" PRIu64 ",\n",
          gt_graphs_launched_during_capture(gt_session_graphs(r->session)));
}
