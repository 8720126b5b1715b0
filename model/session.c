/* session.c — see session.h. */
#include "session.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graphs.h"
#include "order.h"
#include "util.h"

#define MAX_THREADS 8

struct slot { /* a chunk held for ordering */
  struct gt_chunk chunk;
  size_t pending;  /* its records not yet dispatched */
  uint64_t serial; /* arrival order */
  int live;
};

struct gt_session {
  struct gt_reader *rd;
  struct gt_model *model;
  struct gt_graphs *graphs; /* GT_LAYER_GRAPHS */
  uint32_t ordered;         /* kinds in time order (1 << kind) */
  int graph_order;          /* and a graph's records, whatever their kind */
  uint64_t origin, late;
  const struct gt_tool *tool;
  /* ordered reading */
  struct gt_order *order;
  struct slot slots[GT_SESSION_WINDOW + 1];
  unsigned nlive;
  uint64_t serial;
  size_t held; /* decompressed bytes of the live slots' chunks */
  /* progress (gt_session_opts) */
  void (*progress)(void *ctx, uint64_t read, uint64_t total);
  void *progress_ctx;
  uint64_t read, total;
};

void gt_tool_all(struct gt_tool *t, gt_handler fn) {
  gt_tool_kinds(t, UINT32_MAX, fn);
}

void gt_tool_kinds(struct gt_tool *t, uint32_t kinds, gt_handler fn) {
  for (unsigned k = 0; k < GT_KIND_COUNT; k++)
    if (kinds >> k & 1)
      t->on[k] = fn;
}

/* Decompression workers: one fewer than the CPUs, as the caller decompresses
 * too whenever its next chunk is not ready (trace_reader.c). A worker per
 * CPU, even at a lower priority, takes part of the analysing thread's core
 * (docs/PERFORMANCE.md, One session for every command). */
static unsigned default_threads(void) {
  cpu_set_t set;
  long n = (sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                        : sysconf(_SC_NPROCESSORS_ONLN)) -
           1; /* the CPUs it may run on (taskset, a container's cpuset) */
  return n < 1 ? 0 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

struct gt_session *gt_session_open(const struct gt_session_opts *o, char *err,
                                   size_t errlen) {
  struct gt_reader *rd =
      gt_reader_open_flags(o->path, o->no_wait ? GT_READ_NO_WAIT : 0, err, errlen);
  if (!rd)
    return NULL;
  struct gt_session *s = gt_xcalloc(1, sizeof *s);
  s->rd = rd;
  s->ordered = o->ordered;
  /* the graph layer sees a graph's records in the order of the kinds it
   * reads that are ordered (graphs.h): all of them in time order then, not
   * every launch (time order has a cost per record: docs/PERFORMANCE.md, One
   * session for every command) */
  s->graph_order = (o->layers & GT_LAYER_GRAPHS) && (s->ordered & GT_ORDER_GRAPH_KINDS);
  s->model = gt_model_new(o->layers);
  if (o->layers & GT_LAYER_GRAPHS)
    s->graphs = gt_graphs_new(s->model);
  unsigned threads = o->threads < 0 ? default_threads() : (unsigned)o->threads;
  /* Chunks ahead: 2n + 2, 4 with one worker (the faster of 2 and 4 there:
   * docs/PERFORMANCE.md, Figures moved out of code comments). */
  gt_reader_set_threads(rd, threads, threads * 2 + 2);
  gt_reader_set_quiet(rd, o->quiet);
  s->progress = o->progress;
  s->progress_ctx = o->progress_ctx;
  return s;
}

void gt_session_close(struct gt_session *s) {
  if (!s)
    return;
  gt_reader_close(s->rd);
  gt_model_free(s->model);
  gt_graphs_free(s->graphs);
  gt_order_free(s->order);
  free(s);
}

/* GT_LAYER_GRAPHS (graphs.h): a node of a capture or graph is counted and
 * goes to tool.graph_node only (a held or CUPTI DEVICE record: nowhere,
 * what stands for it follows); an expanded graph launch (or its DEVICE record) goes on
 * flagged GT_F_EXPANDED, followed by its nodes' records, which feed no
 * layer (they are not in the trace). */
static const struct gt_record *graph_layer(struct gt_session *s,
                                           const struct gt_record *rec,
                                           struct gt_record *scratch, int *hide) {
  enum gt_graphs_verdict v = gt_graphs_feed(s->graphs, rec);
  *hide = v == GT_GRAPHS_HIDE;
  if (v != GT_GRAPHS_EXPAND)
    return rec;
  *scratch = *rec; /* launches and DEVICE records are one slot */
  scratch->flags |= GT_F_EXPANDED;
  return scratch;
}

static void dispatch(struct gt_session *s, const struct gt_record *rec) {
  const struct gt_tool *t = s->tool;
  struct gt_event ev;
  struct gt_record scratch;
  if (t->before) {
    ev = (struct gt_event){.rec = rec};
    t->before(t->ctx, &ev);
  }
  int hide = 0;
  if (s->graphs)
    rec = graph_layer(s, rec, &scratch, &hide);
  if (hide) {
    gt_model_count(s->model, rec);
    if (t->graph_node && gt_kind_is_call(rec->kind)) {
      ev = (struct gt_event){.rec = rec};
      t->graph_node(t->ctx, &ev);
    }
  } else {
    gt_model_feed(s->model, rec, &ev);
    if (t->on[rec->kind])
      t->on[rec->kind](t->ctx, &ev);
  }
  size_t n = 0;
  const struct gt_record *runs = s->graphs ? gt_graphs_expansion(s->graphs, &n) : NULL;
  for (size_t i = 0; i < n; i++) {
    gt_model_feed_made(s->model, &runs[i], &ev); /* graph memory: the heap layer */
    if (t->on[runs[i].kind])
      t->on[runs[i].kind](t->ctx, &ev);
  }
}

static void note_origin(struct gt_session *s, const struct gt_record *rec) {
  if (!s->origin)
    s->origin = rec->ts_ns;
}

/* A chunk of n records was read: tell the progress callback. */
static void chunk_read(struct gt_session *s, uint64_t n) {
  s->read += n;
  if (s->progress)
    s->progress(s->progress_ctx, s->read, s->total);
}

static void run_in_file_order(struct gt_session *s) {
  struct gt_chunk c;
  while (gt_reader_next_chunk(s->rd, &c)) {
    size_t pos = 0;
    uint64_t n = 0;
    for (const struct gt_record *rec; (rec = gt_chunk_next(s->rd, &c, &pos)); n++) {
      note_origin(s, rec);
      dispatch(s, rec);
    }
    gt_reader_release(s->rd, &c);
    chunk_read(s, n);
  }
}

/* ---- time order: chunks held in slots while their records wait ---- */

/* One record of slot h is done with: the chunk goes back after its last. */
static void done_with(struct gt_session *s, unsigned h) {
  struct slot *sl = &s->slots[h];
  if (--sl->pending == 0) {
    s->held -= sl->chunk.len;
    gt_reader_release(s->rd, &sl->chunk);
    sl->live = 0;
    s->nlive--;
  }
}

/* Pass on the earliest buffered record. Returns 0 when nothing is buffered. */
static int pop_one(struct gt_session *s) {
  const struct gt_record *rec;
  unsigned h;
  if (!gt_order_pop(s->order, &rec, &h))
    return 0;
  dispatch(s, rec);
  done_with(s, h);
  return 1;
}

/* Over the window (chunks or bytes): pass records on until the oldest
 * chunk is released. The newest chunk alone may pass the bytes. */
static void shrink(struct gt_session *s) {
  while (s->nlive > GT_SESSION_WINDOW ||
         (s->nlive > 1 && s->held > GT_SESSION_WINDOW_BYTES)) {
    unsigned oldest = 0;
    for (unsigned i = 1; i <= GT_SESSION_WINDOW; i++)
      if (s->slots[i].live &&
          (!s->slots[oldest].live || s->slots[i].serial < s->slots[oldest].serial))
        oldest = i;
    while (s->slots[oldest].live && pop_one(s))
      ;
  }
}

static unsigned free_slot(struct gt_session *s) {
  unsigned i = 0;
  while (s->slots[i].live)
    i++; /* at most GT_SESSION_WINDOW are live: one is free */
  return i;
}

static void run_in_time_order(struct gt_session *s) {
  s->order = gt_order_new();
  struct gt_chunk c;
  while (gt_reader_next_chunk(s->rd, &c)) {
    unsigned h = free_slot(s);
    struct slot *sl = &s->slots[h];
    /* Held (pending 1) while its records go in: some may leave at once. */
    *sl = (struct slot){.chunk = c, .pending = 1, .serial = s->serial++, .live = 1};
    s->nlive++;
    s->held += c.len;
    size_t pos = 0;
    uint64_t n = 0;
    for (const struct gt_record *rec; (rec = gt_chunk_next(s->rd, &c, &pos)); n++) {
      note_origin(s, rec);
      /* as it comes: kinds not ordered, and what a rolling file repeats from
       * before it (older than what was passed on, it would read as late) */
      if ((rec->flags & GT_F_REPLAYED) ||
          (!(s->ordered & ~GT_ORDER_DEFINITIONS & 1u << rec->kind) &&
           !(s->graph_order && gt_graph_record(rec)))) {
        dispatch(s, rec);
        continue;
      }
      gt_order_add(s->order, rec, h);
      sl->pending++;
      while (gt_order_ready(s->order))
        pop_one(s);
    }
    done_with(s, h); /* the hold */
    shrink(s);
    chunk_read(s, n);
  }
  while (pop_one(s))
    ;
  s->late = gt_order_late(s->order);
  if (s->late) { /* no damage, but not the order asked for: said once */
    char what[160];
    snprintf(what, sizeof what,
             "%llu record%s after the time-order window (%u chunks, %u MiB) had "
             "passed later ones on: read out of order",
             (unsigned long long)s->late, s->late == 1 ? " came" : "s came",
             GT_SESSION_WINDOW, GT_SESSION_WINDOW_BYTES >> 20);
    gt_reader_note(s->rd, what);
  }
}

void gt_session_run(struct gt_session *s, const struct gt_tool *t) {
  s->tool = t;
  if (s->progress)
    s->total = gt_reader_records_hint(s->rd);
  gt_model_set_open_hook(s->model, t->range_open, t->ctx);
  if (s->ordered)
    run_in_time_order(s);
  else
    run_in_file_order(s);
}

struct gt_graphs *gt_session_graphs(struct gt_session *s) {
  return s->graphs;
}

struct gt_model *gt_session_model(struct gt_session *s) {
  return s->model;
}
uint64_t gt_session_origin(const struct gt_session *s) {
  return s->origin;
}
int gt_session_damaged(const struct gt_session *s) {
  return gt_reader_warnings(s->rd) > 0;
}
uint64_t gt_session_late(const struct gt_session *s) {
  return s->late;
}
const struct gt_file_header *gt_session_header(const struct gt_session *s) {
  return gt_reader_header(s->rd);
}
uint64_t gt_session_records_hint(const struct gt_session *s) {
  return gt_reader_records_hint(s->rd);
}
