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
 * took, how many times its graph was instantiated, and how many of its
 * kernel nodes' parameters were set (node_edits). Above the rows (JSON:
 * graph_edits_not_followed), the edits the graph layer could not follow
 * (graphs.h).
 *  - The section is left out when no graph was instantiated.
 *  - Findings (rp_graph_findings; docs/report.md states each rule):
 *    graph_reinstantiated, a graph instantiated 3 times or more (capture
 *    and instantiation every step); graph_capture_while_serving, graphs
 *    instantiated after the process had launched 100 graphs; graph_launch_in_
 *    capture, graph launches while a capture was open; graph_host_function,
 *    host nodes in graphs launched 10 times or more.
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
  struct gt_graphs *g = gt_session_graphs(r->session);
  struct gt_graph_exec *x = gt_graphs_execs(g, &n);
  if (!n)
    return;
  fprintf(o,
          "\nGraphs (each executable graph; GPU per launch from its timed launches)\n");
  uint64_t lost = gt_graphs_edits_not_followed(g);
  if (lost)
    fprintf(o,
            "  NOTE: %" PRIu64 " kernel node edits not followed (nodes the trace did not "
            "see added): their graphs' kernels are as last seen\n",
            lost);
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
    if (x[i].edits)
      fprintf(o, ", %" PRIu64 " node edits", x[i].edits);
    if (x[i].timed)
      fprintf(o, ", GPU %s (mean %s, p99 %s per launch)",
              gt_fmt_ns(a, sizeof a, (uint64_t)(gt_graph_exec_gpu_ns(&x[i]) + 0.5)),
              gt_fmt_ns(b, sizeof b, mean), gt_fmt_ns(c, sizeof c, p99));
    fputc('\n', o);
    for (size_t j = 0; j < nk; j++)
      fprintf(o, "    %3u x %s\n", k[j].count, k[j].name);
    rp_site_text(r, x[i].pid, x[i].capture_stack, site, sizeof site);
    if (x[i].captured)
      fprintf(o, "    captured at %s\n", site);
    else
      fprintf(o, "    built node by node (not captured)\n");
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
            x[i].timed, gt_graph_exec_gpu_ns(&x[i]), mean, p99,
            x[i].captured ? "true" : "false");
    rp_site_text(r, x[i].pid, x[i].capture_stack, site, sizeof site);
    gt_json_str(o, site);
    fputs(",\"instantiated_at\":", o);
    rp_site_text(r, x[i].pid, x[i].instance_stack, site, sizeof site);
    gt_json_str(o, site);
    fprintf(o,
            ",\"instantiate_ns\":%" PRIu64
            ",\"instantiations\":%u,\"node_edits\":%" PRIu64 "}",
            x[i].instance_ns, x[i].instantiations, x[i].edits);
    free_kernels(k, nk);
  }
  struct gt_graphs *g = gt_session_graphs(r->session);
  fprintf(o,
          "],\n\"graph_launches_during_capture\":%" PRIu64
          ",\n\"graph_edits_not_followed\":%" PRIu64 ",\n",
          gt_graphs_launched_during_capture(g), gt_graphs_edits_not_followed(g));
}

/* ---- findings ---- */

struct graph_tally {
  uint64_t reinst_execs, reinst_max, reinst_ns;
  uint64_t late_execs, late_ns, host_execs, host_launches;
};

static int has_host_node(const struct gt_graph_exec *x) {
  for (size_t i = 0; i < x->nnodes; i++)
    if (x->nodes[i].flags & GT_F_HOST_FN)
      return 1;
  return 0;
}

static void tally(struct graph_tally *t, const struct gt_graph_exec *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (x[i].instantiations >= RP_GRAPH_REINST_MIN) {
      t->reinst_execs++;
      t->reinst_ns += x[i].instance_ns;
      if (x[i].instantiations > t->reinst_max)
        t->reinst_max = x[i].instantiations;
    }
    if (x[i].launches_before >= RP_GRAPH_SERVING) {
      t->late_execs++;
      t->late_ns += x[i].instance_ns;
    }
    if (x[i].launches >= RP_GRAPH_HOST_FN_LAUNCHES && has_host_node(&x[i])) {
      t->host_execs++;
      t->host_launches += x[i].launches;
    }
  }
}

void rp_graph_findings(struct report *r) {
  size_t n;
  struct gt_graphs *g = gt_session_graphs(r->session);
  struct gt_graph_exec *x = gt_graphs_execs(g, &n);
  struct graph_tally t = {0};
  tally(&t, x, n);
  struct rp_finding *f;
  if (t.reinst_execs) {
    f = rp_add_finding(r, "graph_reinstantiated", "medium",
                       "Capture and instantiate each graph once and replay it; for new "
                       "arguments update the executable (cudaGraphExecUpdate, "
                       "cudaGraphExecKernelNodeSetParams) instead of capturing again.",
                       "%" PRIu64
                       " graphs were instantiated again and again (up to %" PRIu64
                       " times each): capture and instantiation on every step",
                       t.reinst_execs, t.reinst_max);
    rp_ev_u(f, "graphs", RP_EV_U64, t.reinst_execs);
    rp_ev_u(f, "max_instantiations", RP_EV_U64, t.reinst_max);
    rp_ev_u(f, "instantiate_ns", RP_EV_NS, t.reinst_ns);
  }
  if (t.late_execs) {
    f = rp_add_finding(
        r, "graph_capture_while_serving", "low",
        "Capture every shape before serving (warm-up over the batch sizes, "
        "or pad to a few fixed sizes): a capture while serving stalls that "
        "request.",
        "%" PRIu64 " graphs were captured or instantiated after graphs were "
        "already being replayed",
        t.late_execs);
    rp_ev_u(f, "graphs", RP_EV_U64, t.late_execs);
    rp_ev_u(f, "instantiate_ns", RP_EV_NS, t.late_ns);
  }
  uint64_t during = gt_graphs_launched_during_capture(g);
  if (during) {
    f = rp_add_finding(
        r, "graph_launch_in_capture", "low",
        "Launch graphs from one thread while no capture is open, or capture "
        "in thread-local mode: a launch into or beside a global capture "
        "can invalidate it.",
        "%" PRIu64 " graph launches were made while a capture was open", during);
    rp_ev_u(f, "launches", RP_EV_U64, during);
  }
  if (t.host_execs) {
    f = rp_add_finding(
        r, "graph_host_function", "low",
        "Move host work out of the replayed graph: a host node makes the GPU "
        "wait for a CPU thread on every replay.",
        "%" PRIu64 " graphs run host functions (%" PRIu64 " launches)", t.host_execs,
        t.host_launches);
    rp_ev_u(f, "graphs", RP_EV_U64, t.host_execs);
    rp_ev_u(f, "launches", RP_EV_U64, t.host_launches);
  }
}
