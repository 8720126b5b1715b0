/* session.h — the one way every command reads a trace (after Linux perf's
 * perf_session, struct perf_tool and ordered_events; heaptrack's one parser
 * reused by every front end).
 *
 * Contract:
 *  - gt_session_open opens a trace: a file, or a rolling set by its base
 *    name. gt_session_run reads it once: chunks are decompressed on worker
 *    threads (common/trace_reader.c), records are read in place, never
 *    copied, and handed to the tool's handler for their kind.
 *  - Order: file order (what the collector wrote as it drained each
 *    process's ring: up to 65,536 records of one process at a time), or,
 *    for the kinds in `ordered`, time order — earliest timestamp first, ties
 *    in file order, each thread's records (and each thread's DEVICE
 *    records, and each process's collector records) in their file order
 *    (order.h). Records of other kinds are passed on as they are read, and
 *    so are records a rolling file repeats from before it (GT_F_REPLAYED:
 *    a graph's making comes just before its first use in a file). The
 *    merge passes a record on once every thread active lately has a later
 *    one buffered, and holds at most GT_SESSION_WINDOW chunks (about 11,000
 *    one-slot records each) and GT_SESSION_WINDOW_BYTES of decompressed
 *    records (or the one newest chunk, when a chunk is larger: at most
 *    GT_CHUNK_MAX_BYTES): a record that comes later in the file than
 *    that reaches is passed on at once, out of order, and counted
 *    (gt_session_late; said once on stderr through the reader's
 *    gt_reader_note: no damage). Time order has a cost per record
 *    (docs/PERFORMANCE.md, One session for every command).
 *  - Layers (model.h) see each record before the tool does and annotate the
 *    event: frees matched to their allocation, completed NVTX ranges;
 *    gt_session_model answers questions about the state (kernel names,
 *    command lines, live memory, symbols). tool.before, when set, sees each
 *    record before the layers do. GT_LAYER_GRAPHS (graphs.h) changes what
 *    the tool sees: a graph's nodes go to tool.graph_node only, a graph
 *    launch and its DEVICE record come flagged GT_F_EXPANDED and followed
 *    by the records of the work it ran (GT_F_GRAPH_RUN), which feed the
 *    layers (graph memory) but not the run totals; with any of its kinds
 *    in time order, a graph's records are too (GT_ORDER_GRAPH_KINDS).
 *  - The origin, the zero of relative times in every command, is the
 *    timestamp of the first record in the file with one (0 until read).
 *  - Damage is reported on stderr as it is met, once per problem, and
 *    reading goes on; gt_session_damaged says so afterwards (exit status 3
 *    in every command).
 *  - Memory: the window's chunks (ordered) or one chunk, the chunks being
 *    decompressed (two per thread, and at most 16 MiB ahead beyond the one
 *    each thread decompresses: trace_reader.c), and the layers' state —
 *    independent of the length of the trace and of what its chunks claim.
 */
#ifndef GPUTRACE_MODEL_SESSION_H
#define GPUTRACE_MODEL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace_file.h"
#include "model.h"

#define GT_SESSION_WINDOW 16u /* chunks of look-ahead for time order */
/* and decompressed bytes of look-ahead (the newest chunk alone may pass it) */
#define GT_SESSION_WINDOW_BYTES (16u << 20)

typedef void (*gt_handler)(void *ctx, const struct gt_event *ev);

struct gt_tool {
  void *ctx;
  gt_handler on[GT_KIND_COUNT]; /* NULL: records of that kind only feed the layers */
  gt_handler before;            /* every record, before the layers (ev->rec only) */
  gt_range_open_fn range_open;  /* GT_LAYER_NVTX: tag of a range as it opens */
  gt_handler graph_node; /* GT_LAYER_GRAPHS: a captured or added node (a call that ran
                            nothing), which on[] does not see; NULL: nobody */
};

/* Every kind to one handler. */
void gt_tool_all(struct gt_tool *t, gt_handler fn);
/* The kinds in a mask of 1 << kind (GT_ORDER_KIND) to one handler. */
void gt_tool_kinds(struct gt_tool *t, uint32_t kinds, gt_handler fn);

#define GT_ORDER_KIND(k) (1u << (k))
/* Definitions (kernel names, stacks, modules, frames) are never held for
 * time order: each describes later records, and its timestamp is when it
 * was written, which (records of one thread naming what another launches,
 * names held back by the collector) can be later than the first record
 * that refers to it. In file order it always comes before them. */
#define GT_ORDER_DEFINITIONS                                                             \
  (GT_ORDER_KIND(GT_KIND_KERNEL_NAME) | GT_ORDER_KIND(GT_KIND_STACK) |                   \
   GT_ORDER_KIND(GT_KIND_MODULE) | GT_ORDER_KIND(GT_KIND_PYFRAME) |                      \
   GT_ORDER_KIND(GT_KIND_FRAME))
#define GT_ORDER_ALL (0xffffffffu & ~GT_ORDER_DEFINITIONS) /* the rest in time order */
/* What GT_LAYER_GRAPHS reads, ordered all alike (graphs.h). */
#define GT_ORDER_GRAPH_KINDS                                                             \
  (GT_ORDER_KIND(GT_KIND_LAUNCH) | GT_ORDER_KIND(GT_KIND_MEMCPY) |                       \
   GT_ORDER_KIND(GT_KIND_MEMSET) | GT_ORDER_KIND(GT_KIND_ALLOC) |                        \
   GT_ORDER_KIND(GT_KIND_FREE) | GT_ORDER_KIND(GT_KIND_GRAPH) |                          \
   GT_ORDER_KIND(GT_KIND_DEVICE))

struct gt_session_opts {
  const char *path;
  unsigned layers;  /* GT_LAYER_* */
  uint32_t ordered; /* kinds in time order (GT_ORDER_KIND bits); 0: file order */
  int quiet;        /* count damage without printing it */
  int threads;      /* decompression threads; 0: the caller's; -1: one per CPU */
  /* A trace still being written is read as it is (with a warning) instead
   * of waiting for its collector: `--no-wait`. */
  int no_wait;
  /* Told after each chunk: records read so far, of `total` in the trace
   * (its chunk headers; 0 when unknown). For a progress display: the model
   * itself never prints. NULL: not told. */
  void (*progress)(void *ctx, uint64_t read, uint64_t total);
  void *progress_ctx;
};

struct gt_session;

/* NULL with a message naming the path and the problem. */
struct gt_session *gt_session_open(const struct gt_session_opts *o, char *err,
                                   size_t errlen);
/* Read the trace through the tool (once per session). */
void gt_session_run(struct gt_session *s, const struct gt_tool *t);
void gt_session_close(struct gt_session *s);

struct gt_model *gt_session_model(struct gt_session *s);
/* GT_LAYER_GRAPHS: the graphs seen (graphs.h); NULL without the layer. */
struct gt_graphs *gt_session_graphs(struct gt_session *s);
uint64_t gt_session_origin(const struct gt_session *s);
int gt_session_damaged(const struct gt_session *s);
uint64_t gt_session_late(const struct gt_session *s);
const struct gt_file_header *gt_session_header(const struct gt_session *s);
/* Records in the trace from its chunk headers, before reading it. */
uint64_t gt_session_records_hint(const struct gt_session *s);

#endif
