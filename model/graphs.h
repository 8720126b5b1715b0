/* graphs.h — the CUDA graph layer of a session (GT_LAYER_GRAPHS, model.h):
 * what each capture and graph holds, and the work a graph launch runs.
 *
 * Contract:
 *  - Fed every record of a session in order (gt_graphs_feed). It learns:
 *    the nodes of each open capture (records with GT_F_CAPTURED, by the
 *    capture id in their corr field), the graph each capture became
 *    (EndCapture; a capture begun with BeginCaptureToGraph adds its nodes
 *    after the graph's own), the nodes added to graphs (GT_F_NODE, the
 *    graph in the stream field; child graphs, clones), what each
 *    executable was instantiated (or updated) from, and the eager device
 *    time of each kernel and of copies and memsets (per byte), by process.
 *  - Kernel nodes' parameters set (records of GT_AF_EDIT apis) change what
 *    the node runs from then on: a graph's node (cudaGraphKernelNodeSet
 *    Params) for the executables instantiated after, an executable's
 *    (cudaGraphExecKernelNodeSetParams) for its launches after; the graph
 *    or executable is left as it was. The node is the one whose tag (its
 *    handle's low 32 bits, kept from the record that added it; an
 *    executable's nodes keep their graph's, and an update's pair's) is the
 *    record's: among the executable's nodes, or the process's graphs' for a
 *    graph's node (the call does not name the graph). A node found nowhere,
 *    or twice, is an edit not followed (counted: gt_graphs_edits_not_
 *    followed). Copies made by CUDA (clones, child graphs, a graph
 *    launched into a capture) have new handles: their nodes have no tag.
 *  - What the session does with each record (gt_graphs_feed's result):
 *    GT_GRAPHS_HIDE for a captured or explicitly added node (it ran
 *    nothing: not a launch, not work, not an allocation); GT_GRAPHS_EXPAND
 *    for a graph launch, or its DEVICE record, whose executable's nodes are
 *    known: the record goes on with GT_F_EXPANDED (a call, not work; the
 *    work follows) and gt_graphs_expansion then gives the node records to
 *    pass on after it; GT_GRAPHS_PASS for the rest. After any verdict,
 *    HIDE included, gt_graphs_expansion may hold records to pass on.
 *  - With CUPTI (DEVICE source cupti) each node of a graph launch has its
 *    own DEVICE record, exact: the n-th of a kind is given to the n-th
 *    timed node of that kind (exact for a chain; branches that run at once
 *    may swap nodes of one kind) and passed on as that node's (HIDE, its
 *    node record follows), not apportioned.
 *  - Node records of a launch (GT_F_GRAPH_RUN): one per kernel, copy,
 *    memset and host node, with the launch's pid, tid, corr, stream and
 *    start, the node's kernel, dims, bytes and stack (the line that
 *    captured or added it); and graph memory: an ALLOC per allocation node
 *    and a FREE per free node (a captured cudaMallocAsync / cudaFreeAsync,
 *    cudaGraphAddMemAllocNode / FreeNode), so memory is live while a
 *    launched graph holds it, not at capture, and a cudaFree of it outside
 *    the graph matches. The session feeds these to its layers.
 *  - Node records of a DEVICE record: the launch's measured span shared
 *    over its kernel, copy and memset nodes, in node order from its start,
 *    flagged GT_F_ESTIMATED: each node gets its eager reference (kernels:
 *    the shortest device time outside graphs of the kernel at the
 *    node's launch configuration (grid, block, shared memory) when events
 *    timed that one eagerly (DEVICE shape), else of the kernel; copies and
 *    memsets: their lowest ns per byte times the node's bytes), all scaled
 *    down when they add up to more than the span; nodes without one share
 *    what is left (the whole span when none has one). What remains is the
 *    graph's own time (host nodes, waits), in no node.
 *  - An executable stays findable after cudaGraphExecDestroy until its
 *    handle is instantiated again: DEVICE records of its last launches may
 *    reach a time-ordered session after the destroy.
 *  - A graph launch's DEVICE record that comes before its executable is
 *    known (the device records' source drained ahead of the launching
 *    thread's, which holds the instantiation) is held (HIDE) until its
 *    launch comes, then passed on after it: expanded when the executable is
 *    known by then, as it came otherwise. At most 4096 are held (more pass
 *    on as they are); one whose launch never comes (a dropped record) is
 *    not shown.
 *  - Order: the layer needs a graph's records (gt_graph_record: captures,
 *    nodes, graph launches and their DEVICE records) in one order with the
 *    allocations. A session that orders any of LAUNCH, MEMCPY, MEMSET,
 *    ALLOC, FREE, GRAPH or DEVICE (GT_ORDER_GRAPH_KINDS) orders every
 *    graph record too (session.c); one that orders none reads the file's
 *    order: per thread, call order.
 *  - Per executable: launches, device time (timed launches, their sample
 *    weight, durations for percentiles), its kernels per launch, where it
 *    was captured and instantiated and what instantiation cost, and how
 *    often its graph was instantiated (gt_graphs_execs).
 *  - Memory: bounded by the nodes of live graphs and executables and the
 *    distinct kernels, never by the number of launches (durations for
 *    percentiles excepted: 4 bytes per timed launch).
 */
#ifndef GPUTRACE_MODEL_GRAPHS_H
#define GPUTRACE_MODEL_GRAPHS_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"
#include "model.h"
#include "stats.h"

enum gt_graphs_verdict { GT_GRAPHS_PASS = 0, GT_GRAPHS_HIDE, GT_GRAPHS_EXPAND };

/* A record of a graph's making or running: the ones the layer needs in one
 * order with the allocations (a session orders them with its ordered
 * kinds). */
static inline int gt_graph_record(const struct gt_record *r) {
  return r->kind == GT_KIND_GRAPH ||
         (r->flags & (GT_F_GRAPH | GT_F_CAPTURED | GT_F_NODE)) != 0;
}

struct gt_graph_node {
  uint8_t kind; /* GT_KIND_LAUNCH (kernel or host function), MEMCPY, MEMSET, ALLOC
                   and FREE (graph memory) */
  uint8_t dir;
  uint16_t api;
  uint32_t flags; /* GT_F_HOST_FN */
  uint32_t stack_id;
  uint32_t grid[3], block[3];
  uint32_t tag;      /* a kernel node added explicitly: its handle's low 32 bits
                        (schema.h gt_launch_args.node); 0: not known */
  uint32_t tag_upd;  /* an executable's node: its pair's tag in the graph the
                        executable was last updated from (cudaGraphExecUpdate) */
  uint32_t cupti_id; /* CUPTI's graphNodeId for it (low 32 bits), learned from
                        the first launch timed with CUPTI; 0: not known */
  uint64_t kernel, shmem, bytes;
  uint64_t ptr; /* memory nodes */
};

/* One executable graph (per process and handle; a handle reused after
 * cudaGraphExecDestroy starts a new one). */
struct gt_graph_exec {
  uint32_t pid;
  uint64_t handle, graph;
  struct gt_graph_node *nodes;
  size_t nnodes;
  uint64_t launches, failed;
  uint64_t timed;           /* launches with a DEVICE record */
  uint32_t sample;          /* the largest 1-in-N its timed launches had */
  double gpu_ns;            /* timed device time, each weighted by its sample */
  struct gt_durs durs;      /* timed device durations */
  uint32_t capture_stack;   /* the BeginCapture's stack (0: none / built) */
  uint32_t instance_stack;  /* the instantiation's stack */
  uint64_t instance_ns;     /* what instantiation took (host) */
  uint64_t launches_before; /* graph launches of the process before its instantiation */
  uint32_t instantiations;  /* of its graph, this one included */
  uint64_t edits;           /* its kernel nodes' parameters set (and followed) */
  int captured;             /* its graph came from a stream capture */
  int known;                /* its graph's making was in the trace */
};

struct gt_graphs;

/* `model` (may be NULL) names kernels, so that a node added by its stub
 * finds the eager time of launches made through a cudaKernel_t. */
struct gt_graphs *gt_graphs_new(struct gt_model *model);
void gt_graphs_free(struct gt_graphs *g);
enum gt_graphs_verdict gt_graphs_feed(struct gt_graphs *g, const struct gt_record *rec);
/* After GT_GRAPHS_EXPAND: *n records to pass on after the (flagged) one;
 * valid until the next feed. */
const struct gt_record *gt_graphs_expansion(struct gt_graphs *g, size_t *n);
/* Every executable seen, destroyed ones included, in order of creation. */
struct gt_graph_exec *gt_graphs_execs(struct gt_graphs *g, size_t *n);
/* An executable's GPU total: its timed launches' device time, or when they
 * were sampled their mean times its launches (gt_sampled_total, stats.h). */
double gt_graph_exec_gpu_ns(const struct gt_graph_exec *x);
/* Launches made while a capture was open in the same process (findings). */
uint64_t gt_graphs_launched_during_capture(const struct gt_graphs *g);
/* Kernel nodes' parameters set (successfully) that the layer could not
 * follow: the node is not one the trace saw added (a captured node, found
 * with cudaGraphGetNodes), or its tag is not unique where it was looked
 * for. The graphs those nodes are in run what the trace last saw. */
uint64_t gt_graphs_edits_not_followed(const struct gt_graphs *g);
/* Entries kept for graph launches in flight (DEVICE records held for an
 * executable not known yet, CUPTI node counts of a launch not complete):
 * 0 once every launch read has all its records, so a days-long reader
 * (the collector's live metrics) holds nothing per launch. */
size_t gt_graphs_in_flight(const struct gt_graphs *g);

#endif
