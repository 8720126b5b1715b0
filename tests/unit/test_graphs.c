/* test_graphs.c — the graph layer (model/graphs.h) on records made here:
 * what a capture holds, what a graph launch runs, how a launch's measured
 * span is shared over its nodes (events), CUPTI's per-node records, a
 * DEVICE record held until its launch, an executable never seen, and
 * graphs changed after they were made (kernel nodes set, runtime and
 * driver; an update; a capture into a graph with nodes). */
#include <stdio.h>
#include <string.h>

#include "check.h"

#include "graphs.h"

enum { PID = 7, TID = 8, CAPTURE = 5, GRAPH = 0x1000, EXEC = 0x2000 };
enum { K1 = 0x100, K2 = 0x200 };

static struct gt_record rec(unsigned kind, unsigned api, uint32_t flags) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.pid = PID;
  r.tid = TID;
  r.kind = (uint8_t)kind;
  r.api = (uint16_t)api;
  r.flags = flags;
  r.nslots = 1;
  return r;
}

static struct gt_record graph_op(unsigned api, uint64_t graph, uint64_t exec) {
  struct gt_record r = rec(GT_KIND_GRAPH, api, 0);
  r.u.graph.capture = CAPTURE;
  r.u.graph.graph = graph;
  r.u.graph.exec = exec;
  return r;
}

static struct gt_record captured_launch(uint64_t kernel) {
  struct gt_record r = rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, GT_F_CAPTURED);
  r.u.launch.kernel = kernel;
  r.u.launch.corr = CAPTURE;
  return r;
}

static struct gt_record device(uint64_t kernel, unsigned of_kind, uint64_t ts,
                               uint64_t dur, uint32_t corr, unsigned source) {
  struct gt_record r = rec(GT_KIND_DEVICE, GT_API___cudaLaunchKernel, 0);
  r.ts_ns = ts;
  r.dur_ns = dur;
  r.u.device.kernel = kernel;
  r.u.device.of_kind = (uint8_t)of_kind;
  r.u.device.corr = corr;
  r.u.device.sample = 1;
  r.u.device.source = (uint8_t)source;
  return r;
}

static struct gt_record graph_device(uint64_t exec, unsigned of_kind, uint64_t ts,
                                     uint64_t dur, uint32_t corr, unsigned source) {
  struct gt_record r = device(exec, of_kind, ts, dur, corr, source);
  r.api = GT_API_cudaGraphLaunch;
  r.flags = GT_F_GRAPH;
  return r;
}

static struct gt_record graph_launch(uint64_t exec, uint32_t corr) {
  struct gt_record r = rec(GT_KIND_LAUNCH, GT_API_cudaGraphLaunch, GT_F_GRAPH);
  r.u.launch.kernel = exec;
  r.u.launch.corr = corr;
  return r;
}

/* A capture of K1, K2 and a 1000-byte copy, instantiated as `exec`. */
static void capture(struct gt_graphs *g, uint64_t graph, uint64_t exec) {
  struct gt_record r = graph_op(GT_API_cudaStreamBeginCapture, 0, 0);
  CHECK_MSG(gt_graphs_feed(g, &r) == GT_GRAPHS_PASS, "begin capture");
  r = captured_launch(K1);
  CHECK_MSG(gt_graphs_feed(g, &r) == GT_GRAPHS_HIDE, "a captured launch is hidden");
  r = captured_launch(K2);
  gt_graphs_feed(g, &r);
  r = rec(GT_KIND_MEMCPY, GT_API_cudaMemcpyAsync, GT_F_CAPTURED);
  r.u.copy.bytes = 1000;
  r.u.copy.dir = GT_DIR_DTOD;
  r.u.copy.corr = CAPTURE;
  CHECK_MSG(gt_graphs_feed(g, &r) == GT_GRAPHS_HIDE, "a captured copy is hidden");
  r = graph_op(GT_API_cudaStreamEndCapture, graph, 0);
  gt_graphs_feed(g, &r);
  r = graph_op(GT_API_cudaGraphInstantiate, graph, exec);
  gt_graphs_feed(g, &r);
}

/* The node shares of the last feed: (kind, kernel, start offset, dur). */
static void check_shares(struct gt_graphs *g, uint64_t t0, const uint64_t want[][4],
                         size_t nwant, uint32_t flags, const char *what) {
  size_t n;
  const struct gt_record *o = gt_graphs_expansion(g, &n);
  size_t skip = n > 0 && (o[0].flags & GT_F_EXPANDED) ? 1 : 0; /* a held span first */
  CHECK_MSG(n - skip == nwant, "%s: %zu records, want %zu", what, n - skip, nwant);
  for (size_t i = 0; i < nwant && i + skip < n; i++) {
    const struct gt_record *r = &o[i + skip];
    CHECK_MSG(r->kind == GT_KIND_DEVICE && r->u.device.of_kind == want[i][0] &&
                  r->u.device.kernel == want[i][1] && r->ts_ns - t0 == want[i][2] &&
                  r->dur_ns == want[i][3] && r->flags == flags,
              "%s %zu: of_kind %u kernel %#llx at +%llu for %llu flags %#x", what, i,
              r->u.device.of_kind, (unsigned long long)r->u.device.kernel,
              (unsigned long long)(r->ts_ns - t0), (unsigned long long)r->dur_ns,
              r->flags);
  }
}

/* ---- graphs changed after they were made ---- */

enum { K3 = 0x300 };

/* A kernel node added to `graph` with the tag `tag`. */
static void add_node(struct gt_graphs *g, uint64_t graph, uint64_t kernel, uint32_t tag) {
  struct gt_record r = rec(GT_KIND_LAUNCH, GT_API_cudaGraphAddKernelNode, GT_F_NODE);
  r.u.launch.kernel = kernel;
  r.u.launch.stream = graph;
  r.u.launch.node = tag;
  CHECK_MSG(gt_graphs_feed(g, &r) == GT_GRAPHS_HIDE, "an added node is hidden");
}

/* A kernel node's parameters set: `owner` an executable, or 0 (a graph's). */
static void set_node(struct gt_graphs *g, unsigned api, uint64_t owner, uint32_t tag,
                     uint64_t kernel, uint32_t grid, int result) {
  struct gt_record r = rec(GT_KIND_LAUNCH, api, GT_F_NODE);
  r.u.launch.kernel = kernel;
  r.u.launch.grid[0] = grid;
  r.u.launch.stream = owner;
  r.u.launch.node = tag;
  r.result = result;
  CHECK_MSG(gt_graphs_feed(g, &r) == GT_GRAPHS_HIDE, "an edit is hidden");
}

static void op(struct gt_graphs *g, unsigned api, uint64_t graph, uint64_t exec) {
  struct gt_record r = graph_op(api, graph, exec);
  gt_graphs_feed(g, &r);
}

/* Launch `exec`: the kernels its runs name, in order, and the first's grid. */
static void check_runs(struct gt_graphs *g, uint64_t exec, const uint64_t *want,
                       size_t nwant, uint32_t grid, const char *what) {
  struct gt_record l = graph_launch(exec, 40);
  gt_graphs_feed(g, &l);
  size_t n;
  const struct gt_record *o = gt_graphs_expansion(g, &n);
  CHECK_MSG(n == nwant, "%s: %zu runs, want %zu", what, n, nwant);
  for (size_t i = 0; i < n && i < nwant; i++)
    CHECK_MSG(o[i].u.launch.kernel == want[i], "%s: run %zu is %#llx, want %#llx", what,
              i, (unsigned long long)o[i].u.launch.kernel, (unsigned long long)want[i]);
  CHECK_MSG(n == 0 || o[0].u.launch.grid[0] == grid, "%s: grid %u, want %u", what,
            n ? o[0].u.launch.grid[0] : 0, grid);
}

static void edits(void) {
  struct gt_graphs *g = gt_graphs_new(NULL);
  /* a graph's node set (the driver's), a clone of it, instantiations */
  add_node(g, 0x10, K1, 0x11);
  add_node(g, 0x10, K2, 0x22);
  op(g, GT_API_cudaGraphInstantiate, 0x10, 0x80); /* before the edit */
  set_node(g, GT_API_cuGraphKernelNodeSetParams_v2, 0, 0x11, K3, 9, 0);
  set_node(g, GT_API_cudaGraphKernelNodeSetParams, 0, 0x11, K1, 5, 1); /* failed */
  struct gt_record c = graph_op(GT_API_cudaGraphClone, 0x10, 0);
  c.u.graph.arg = 0x20;
  gt_graphs_feed(g, &c);
  op(g, GT_API_cudaGraphInstantiate, 0x10, 0x81);
  op(g, GT_API_cudaGraphInstantiate, 0x20, 0x82);
  check_runs(g, 0x80, (const uint64_t[]){K1, K2}, 2, 0, "made before the graph's edit");
  check_runs(g, 0x81, (const uint64_t[]){K3, K2}, 2, 9, "made after it");
  check_runs(g, 0x82, (const uint64_t[]){K3, K2}, 2, 9, "its clone");
  /* an executable's node set: that executable only; the clone's nodes have
   * handles of their own (not followed) */
  set_node(g, GT_API_cudaGraphExecKernelNodeSetParams, 0x81, 0x22, K1, 7, 0);
  check_runs(g, 0x81, (const uint64_t[]){K3, K1}, 2, 9, "set in its executable");
  check_runs(g, 0x80, (const uint64_t[]){K1, K2}, 2, 0, "the other executable");
  set_node(g, GT_API_cuGraphExecKernelNodeSetParams_v2, 0x82, 0x11, K2, 3, 0);
  check_runs(g, 0x82, (const uint64_t[]){K3, K2}, 2, 9, "the clone's, not followed");
  set_node(g, GT_API_cudaGraphExecKernelNodeSetParams, 0x99, 0x11, K2, 3, 0); /* unseen */
  CHECK_MSG(gt_graphs_edits_not_followed(g) == 1, "not followed: %llu",
            (unsigned long long)gt_graphs_edits_not_followed(g));

  /* an update: the executable's nodes are named by its graph's handles and
   * by the update's */
  add_node(g, 0x30, K1, 0x33);
  op(g, GT_API_cudaGraphInstantiate, 0x30, 0x83);
  add_node(g, 0x40, K2, 0x44);
  op(g, GT_API_cuGraphExecUpdate_v2, 0x40, 0x83);
  check_runs(g, 0x83, (const uint64_t[]){K2}, 1, 0, "updated");
  set_node(g, GT_API_cudaGraphExecKernelNodeSetParams, 0x83, 0x33, K3, 2, 0);
  check_runs(g, 0x83, (const uint64_t[]){K3}, 1, 2, "set by its graph's node");
  set_node(g, GT_API_cudaGraphExecKernelNodeSetParams, 0x83, 0x44, K1, 4, 0);
  check_runs(g, 0x83, (const uint64_t[]){K1}, 1, 4, "set by the update's node");

  /* a tag two live graphs have names neither; a destroyed graph's, none */
  add_node(g, 0x50, K1, 0x55);
  add_node(g, 0x60, K2, 0x55);
  set_node(g, GT_API_cudaGraphKernelNodeSetParams, 0, 0x55, K3, 1, 0);
  add_node(g, 0x70, K1, 0x77);
  op(g, GT_API_cudaGraphDestroy, 0x70, 0);
  set_node(g, GT_API_cudaGraphKernelNodeSetParams, 0, 0x77, K3, 1, 0);
  op(g, GT_API_cudaGraphInstantiate, 0x50, 0x85);
  check_runs(g, 0x85, (const uint64_t[]){K1}, 1, 0, "a tag twice: unchanged");
  CHECK_MSG(gt_graphs_edits_not_followed(g) == 3, "not followed: %llu",
            (unsigned long long)gt_graphs_edits_not_followed(g));

  /* a capture into a graph with a node (the driver's): after it */
  add_node(g, 0x90, K1, 0x99);
  struct gt_record r = graph_op(GT_API_cuStreamBeginCaptureToGraph, 0x90, 0);
  r.u.graph.capture = 6;
  gt_graphs_feed(g, &r);
  r = captured_launch(K2);
  r.u.launch.corr = 6;
  gt_graphs_feed(g, &r);
  r = graph_op(GT_API_cuStreamEndCapture, 0x90, 0);
  r.u.graph.capture = 6;
  gt_graphs_feed(g, &r);
  op(g, GT_API_cudaGraphInstantiate, 0x90, 0x86);
  check_runs(g, 0x86, (const uint64_t[]){K1, K2}, 2, 0, "captured into a graph");
  set_node(g, GT_API_cudaGraphKernelNodeSetParams, 0, 0x99, K3, 8, 0);
  op(g, GT_API_cudaGraphInstantiate, 0x90, 0x87);
  check_runs(g, 0x87, (const uint64_t[]){K3, K2}, 2, 8, "its own node set");

  size_t nx;
  struct gt_graph_exec *x = gt_graphs_execs(g, &nx);
  CHECK_MSG(nx == 7 && x[1].edits == 1 && x[2].edits == 0 && x[3].edits == 2,
            "edits per executable");
  CHECK_MSG(gt_graphs_edits_not_followed(g) == 3, "not followed at the end");
  gt_graphs_free(g);
}

int main(void) {
  struct gt_graphs *g = gt_graphs_new(NULL);
  /* eager references: K1's shortest 3000 ns, K2 1000 ns, copies 2 ns a byte */
  struct gt_record e = device(K1, GT_KIND_LAUNCH, 10, 5000, 1, GT_DEVTIME_EVENTS);
  gt_graphs_feed(g, &e);
  e = device(K1, GT_KIND_LAUNCH, 10, 3000, 2, GT_DEVTIME_EVENTS);
  gt_graphs_feed(g, &e);
  e = device(K2, GT_KIND_LAUNCH, 10, 1000, 3, GT_DEVTIME_EVENTS);
  gt_graphs_feed(g, &e);
  e = device(0, GT_KIND_MEMCPY, 10, 200, 4, GT_DEVTIME_EVENTS);
  e.u.device.bytes = 100;
  e.u.device.dir = GT_DIR_DTOD;
  CHECK_MSG(gt_graphs_feed(g, &e) == GT_GRAPHS_PASS, "an eager copy passes");
  capture(g, GRAPH, EXEC);

  /* the launch runs its three nodes */
  struct gt_record l = graph_launch(EXEC, 9);
  l.ts_ns = 999000;
  CHECK_MSG(gt_graphs_feed(g, &l) == GT_GRAPHS_EXPAND, "a known graph launch expands");
  size_t n;
  const struct gt_record *o = gt_graphs_expansion(g, &n);
  CHECK_MSG(n == 3 && o[0].kind == GT_KIND_LAUNCH && o[0].u.launch.kernel == K1 &&
                o[1].u.launch.kernel == K2 && o[2].kind == GT_KIND_MEMCPY &&
                o[2].u.copy.bytes == 1000 && o[0].flags == GT_F_GRAPH_RUN &&
                o[0].u.launch.corr == 9 && o[0].ts_ns == 999000,
            "node runs: %zu", n);

  /* events: a 10 us span; the nodes take their references, 4 us stay the graph's */
  struct gt_record d = graph_device(EXEC, GT_KIND_LAUNCH, 1000000, 10000, 9, 1);
  CHECK_MSG(gt_graphs_feed(g, &d) == GT_GRAPHS_EXPAND, "its DEVICE record expands");
  const uint64_t wide[][4] = {{GT_KIND_LAUNCH, K1, 0, 3000},
                              {GT_KIND_LAUNCH, K2, 3000, 1000},
                              {GT_KIND_MEMCPY, 0, 4000, 2000}};
  check_shares(g, 1000000, wide, 3, GT_F_GRAPH_RUN | GT_F_ESTIMATED, "wide span");
  /* a 3 us span: the references (6 us) scaled to it */
  d = graph_device(EXEC, GT_KIND_LAUNCH, 2000000, 3000, 10, GT_DEVTIME_EVENTS);
  gt_graphs_feed(g, &d);
  const uint64_t narrow[][4] = {{GT_KIND_LAUNCH, K1, 0, 1500},
                                {GT_KIND_LAUNCH, K2, 1500, 500},
                                {GT_KIND_MEMCPY, 0, 2000, 1000}};
  check_shares(g, 2000000, narrow, 3, GT_F_GRAPH_RUN | GT_F_ESTIMATED, "narrow span");

  /* CUPTI: each node's own record, given to the nodes in order, exact */
  l = graph_launch(EXEC, 11);
  gt_graphs_feed(g, &l);
  const uint64_t cupti[][3] = {
      {GT_KIND_LAUNCH, 2900, K1}, {GT_KIND_LAUNCH, 900, K2}, {GT_KIND_MEMCPY, 1900, 0}};
  for (int i = 0; i < 3; i++) {
    d = graph_device(EXEC, (unsigned)cupti[i][0], 3000000 + 10000 * (uint64_t)i,
                     cupti[i][1], 11, GT_DEVTIME_CUPTI);
    CHECK_MSG(gt_graphs_feed(g, &d) == GT_GRAPHS_HIDE, "a CUPTI node record is hidden");
    const uint64_t one[][4] = {{cupti[i][0], cupti[i][2], 0, cupti[i][1]}};
    check_shares(g, 3000000 + 10000 * (uint64_t)i, one, 1, GT_F_GRAPH_RUN, "cupti");
  }
  CHECK_MSG(gt_graphs_in_flight(g) == 0, "a complete CUPTI launch leaves %zu entries",
            gt_graphs_in_flight(g));
  size_t nx;
  struct gt_graph_exec *x = gt_graphs_execs(g, &nx);
  CHECK_MSG(nx == 1 && x[0].launches == 2 && x[0].timed == 3 && x[0].nnodes == 3 &&
                x[0].captured && x[0].gpu_ns == 10000 + 3000 + 2900 + 900 + 1900,
            "exec: %zu, launches %llu, timed %llu, gpu %.0f", nx,
            (unsigned long long)(nx ? x[0].launches : 0),
            (unsigned long long)(nx ? x[0].timed : 0), nx ? x[0].gpu_ns : 0.0);

  /* a DEVICE record before its executable's instantiation: held, then
   * passed on after its launch, expanded */
  d = graph_device(0x3000, GT_KIND_LAUNCH, 5000000, 10000, 20, GT_DEVTIME_EVENTS);
  CHECK_MSG(gt_graphs_feed(g, &d) == GT_GRAPHS_HIDE, "held");
  capture(g, 0x1001, 0x3000);
  l = graph_launch(0x3000, 20);
  CHECK_MSG(gt_graphs_feed(g, &l) == GT_GRAPHS_EXPAND, "its launch");
  o = gt_graphs_expansion(g, &n);
  CHECK_MSG(n == 7 && o[0].kind == GT_KIND_DEVICE && (o[0].flags & GT_F_EXPANDED) &&
                o[1].kind == GT_KIND_DEVICE && o[4].kind == GT_KIND_LAUNCH,
            "held span, 3 shares, 3 runs: %zu", n);

  /* an executable the trace never saw made: a "graph" as before */
  l = graph_launch(0x9999, 30);
  CHECK_MSG(gt_graphs_feed(g, &l) == GT_GRAPHS_PASS, "an unknown graph passes");
  gt_graphs_expansion(g, &n);
  CHECK_MSG(n == 0, "nothing follows it");
  gt_graphs_free(g);
  edits();
  return check_finish("test_graphs");
}
