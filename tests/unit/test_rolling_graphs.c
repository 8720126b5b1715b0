/* test_rolling_graphs.c — a rolling set's files and the graphs they use
 * (collector/output.c, collector/graph_cache.c, read back by sessions with
 * the graph layer): a file repeats a graph's making just before its first
 * use there and holds nothing of graphs it does not use; the set reads each
 * graph once, also when the file that made it was deleted; ended graphs are
 * forgotten; a failed call makes nothing; a graph the cache has no room for
 * is dropped whole and counted, and later files say so; merged graphs
 * replay in the order they came; records are cached as they are written,
 * not as they are queued; and a file whose repeats are large still holds
 * three times as much of its own. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "collector.h"
#include "graphs.h"
#include "synth.h"

#define PID 100
#define K1 0x1000 /* kernels */
#define K2 0x2000

/* ---- records ---- */

struct batch {
  unsigned char buf[GT_CHUNK_TARGET];
  size_t len;
  uint32_t n;
};

static uint64_t now_ts = 1000;

static void add(struct batch *b, struct gt_record r) {
  r.pid = r.pid ? r.pid : PID;
  r.tid = r.tid ? r.tid : PID;
  r.ts_ns = r.ts_ns ? r.ts_ns : now_ts++;
  r.nslots = r.nslots ? r.nslots : 1;
  memcpy(b->buf + b->len, &r, (size_t)r.nslots * GT_SLOT_SIZE);
  b->len += (size_t)r.nslots * GT_SLOT_SIZE;
  b->n++;
}

static void add_text(struct batch *b, struct gt_record r, const char *text) {
  struct gt_record slots[GT_MAX_SLOTS];
  r.pid = PID, r.tid = PID, r.ts_ns = now_ts++;
  slots[0] = r;
  gt_record_attach_text(&slots[0], text, strlen(text));
  memcpy(b->buf + b->len, slots, (size_t)slots[0].nslots * GT_SLOT_SIZE);
  b->len += (size_t)slots[0].nslots * GT_SLOT_SIZE;
  b->n++;
}

static void flush(struct gt_output *out, struct batch *b) {
  CHECK(gt_output_write_chunk(out, b->buf, b->len, b->n) == 0);
  b->len = b->n = 0;
}

static struct gt_record graph_rec(unsigned api, uint64_t graph, uint64_t exec,
                                  uint64_t capture, uint64_t arg) {
  struct gt_record r = synth_rec(GT_KIND_GRAPH, api, 0, 5);
  r.u.graph.graph = graph;
  r.u.graph.exec = exec;
  r.u.graph.capture = capture;
  r.u.graph.arg = arg;
  return r;
}

static struct gt_record node(uint64_t kernel, uint64_t capture, uint64_t graph) {
  struct gt_record r = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, 0, 1);
  r.u.launch.kernel = kernel;
  r.u.launch.grid[0] = r.u.launch.block[0] = 1;
  if (capture) {
    r.flags = GT_F_CAPTURED;
    r.u.launch.corr = (uint32_t)capture;
  } else {
    r.api = GT_API_cudaGraphAddKernelNode;
    r.flags = GT_F_NODE;
    r.u.launch.stream = graph;
  }
  return r;
}

static struct gt_record graph_launch(uint64_t exec) {
  struct gt_record r = synth_rec(GT_KIND_LAUNCH, GT_API_cudaGraphLaunch, 0, 1);
  r.flags = GT_F_GRAPH;
  r.u.launch.kernel = exec;
  return r;
}

static void start(struct batch *b) {
  struct gt_record r = synth_rec(GT_KIND_PROCESS, GT_API_gputrace_process, 0, 0);
  r.u.proc.phase = GT_PROC_START;
  add_text(b, r, "./server");
  r = synth_rec(GT_KIND_KERNEL_NAME, GT_API_gputrace_kernel_name, 0, 0);
  r.u.kname.kernel = K1;
  add_text(b, r, "_Z2k1v");
  r.u.kname.kernel = K2;
  add_text(b, r, "_Z2k2v");
}

/* A capture of `nodes` launches of K1 into graph g, instantiated as x. */
static void capture(struct batch *b, uint64_t id, uint64_t g, uint64_t x, int nodes) {
  add(b, graph_rec(GT_API_cudaStreamBeginCapture, 0, 0, id, 0));
  for (int i = 0; i < nodes; i++)
    add(b, node(K1, id, 0));
  add(b, graph_rec(GT_API_cudaStreamEndCapture, g, 0, id, 0));
  add(b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, g, x, 0, 0));
}

static struct gt_output *open_set(const char *name) {
  char path[256], err[256];
  struct gt_output_opts o = {.path = synth_path(name, path, sizeof path),
                             .fd = -1,
                             .keep_ns = 3600ull * 1000000000ull};
  struct gt_output *out = gt_output_open(&o, err, sizeof err);
  if (!out) {
    fprintf(stderr, "%s\n", err);
    exit(1);
  }
  return out;
}

/* ---- reading ---- */

struct seen {
  uint64_t notes, incomplete, launches, graph_calls, replayed;
  uint64_t last_replayed_ts, replay_out_of_order;
  char note[400];
};

static void on_rec(void *ctx, const struct gt_event *ev) {
  struct seen *s = ctx;
  const struct gt_record *r = ev->rec;
  if (r->flags & GT_F_REPLAYED) {
    s->replayed++;
    s->replay_out_of_order += r->ts_ns < s->last_replayed_ts;
    s->last_replayed_ts = r->ts_ns;
  }
  if (r->kind == GT_KIND_NOTE) {
    s->notes++;
    if (r->flags & GT_F_INCOMPLETE) {
      s->incomplete++;
      gt_record_text(r, r->u.note.text_len, s->note, sizeof s->note);
    }
  }
  if (r->kind == GT_KIND_LAUNCH &&
      !(r->flags & (GT_F_GRAPH | GT_F_GRAPH_RUN | GT_F_CAPTURED | GT_F_NODE)))
    s->launches++;
  if (r->kind == GT_KIND_GRAPH && !(r->flags & GT_F_REPLAYED))
    s->graph_calls++;
}

struct execs {
  size_t n;
  uint64_t handle[8], nodes[8], launches[8];
};

/* Read `name` (a file, or a set by its base name) with the graph layer. */
static void read_back(const char *name, struct seen *s, struct execs *x) {
  char path[256];
  struct gt_session_opts o = {.path = synth_path(name, path, sizeof path),
                              .layers = GT_LAYER_GRAPHS,
                              .ordered = GT_ORDER_ALL,
                              .quiet = 1};
  memset(s, 0, sizeof *s);
  struct gt_tool t = {.ctx = s, .graph_node = on_rec};
  gt_tool_all(&t, on_rec);
  struct gt_session *ss = synth_session(&o, &t);
  size_t n;
  struct gt_graph_exec *e = gt_graphs_execs(gt_session_graphs(ss), &n);
  memset(x, 0, sizeof *x);
  for (size_t i = 0; i < n && i < 8; i++) {
    x->handle[i] = e[i].handle;
    x->nodes[i] = e[i].nnodes;
    x->launches[i] = e[i].launches;
  }
  x->n = n;
  CHECK_EQ_U64(gt_session_late(ss), 0);
  gt_session_close(ss);
}

static off_t size_of(const char *name) {
  char path[256];
  struct stat st;
  return stat(synth_path(name, path, sizeof path), &st) == 0 ? st.st_size : -1;
}

/* ---- tests ---- */

/* Two graphs made in the first file; the second file uses neither, the
 * third one, the fourth both: each file holds what it uses, once. */
static void test_lazy(void) {
  struct gt_output *out = open_set("lazy.gtrace");
  static struct batch b;
  start(&b);
  capture(&b, 1, 0x6001, 0x7001, 3);
  capture(&b, 2, 0x6002, 0x7002, 2);
  add(&b, graph_launch(0x7001));
  flush(out, &b);
  gt_output_roll(out);
  struct gt_record plain = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, 0, 1);
  plain.u.launch.kernel = K2;
  for (int i = 0; i < 5; i++)
    add(&b, plain);
  flush(out, &b);
  gt_output_roll(out);
  add(&b, graph_launch(0x7002));
  add(&b, plain);
  add(&b, graph_launch(0x7002)); /* held since the first: not repeated */
  flush(out, &b);
  gt_output_roll(out);
  add(&b, graph_launch(0x7001));
  add(&b, graph_launch(0x7002));
  flush(out, &b);
  CHECK(gt_output_close(out) == 0);

  struct seen s;
  struct execs x;
  read_back("lazy.0002.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 0);        /* no graph's making in a file that uses none */
  CHECK_EQ_U64(s.replayed, 3); /* the process start and the kernel names */
  CHECK_EQ_U64(s.launches, 5);
  read_back("lazy.0003.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 1);
  CHECK_EQ_U64(x.handle[0], 0x7002);
  CHECK_EQ_U64(x.nodes[0], 2);
  CHECK_EQ_U64(x.launches[0], 2);
  CHECK_EQ_U64(s.notes, 0);       /* the markers are the reader's */
  CHECK_EQ_U64(s.graph_calls, 0); /* the repeated making is no call of this file */
  CHECK_EQ_U64(s.replayed,
               3 + 5); /* and the capture: begin, 2 nodes, end, instantiation */
  CHECK_EQ_U64(s.replay_out_of_order, 0);
  read_back("lazy.0004.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 2);
  CHECK_EQ_U64(x.handle[0] + x.handle[1], 0x7001 + 0x7002);
  CHECK_EQ_U64(x.nodes[0] + x.nodes[1], 5);
  read_back("lazy.gtrace", &s, &x); /* the set: each graph once */
  CHECK_EQ_U64(x.n, 2);
  CHECK_EQ_U64(x.launches[0], 2); /* 0x7001: files 1 and 4 */
  CHECK_EQ_U64(x.launches[1], 3); /* 0x7002: files 3 (twice) and 4 */
  CHECK_EQ_U64(s.graph_calls, 2 * 3);
  CHECK_EQ_U64(s.launches, 6);

  /* The first file deleted: the third file's copy of 0x7002 and the
   * fourth's of 0x7001 (both last held by the first) are read; the fourth
   * file's copy of 0x7002 (the third held it) is not. */
  char path[256];
  CHECK(unlink(synth_path("lazy.0001.gtrace", path, sizeof path)) == 0);
  read_back("lazy.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 2);
  CHECK_EQ_U64(x.handle[0], 0x7002);
  CHECK_EQ_U64(x.nodes[0], 2);
  CHECK_EQ_U64(x.launches[0], 3);
  CHECK_EQ_U64(x.handle[1], 0x7001);
  CHECK_EQ_U64(x.nodes[1], 3);
  CHECK_EQ_U64(x.launches[1], 1);
}

/* A graph and its executable destroyed: forgotten; the handles made again
 * are a new graph, and a later file repeats only that one. A call that
 * failed makes nothing. */
static void test_ended(void) {
  struct gt_output *out = open_set("ended.gtrace");
  static struct batch b;
  start(&b);
  capture(&b, 1, 0x6001, 0x7001, 3);
  add(&b, graph_launch(0x7001));
  add(&b, graph_rec(GT_API_cudaGraphDestroy, 0x6001, 0, 0, 0));
  flush(out, &b);
  struct gt_graph_cache_stats st;
  gt_output_graph_stats(out, &st);
  CHECK_EQ_U64(st.groups, 1); /* the executable lives on */
  add(&b, graph_rec(GT_API_cudaGraphExecDestroy, 0, 0x7001, 0, 0));
  struct gt_record failed = graph_rec(GT_API_cudaStreamBeginCapture, 0, 0, 9, 0);
  failed.result = 900;
  add(&b, failed);
  flush(out, &b);
  gt_output_graph_stats(out, &st);
  CHECK_EQ_U64(st.groups, 0);
  CHECK_EQ_U64(st.ended_groups, 1);
  CHECK_EQ_U64(st.bytes, 0);
  capture(&b, 2, 0x6001, 0x7001, 1);
  flush(out, &b);
  gt_output_roll(out);
  add(&b, graph_launch(0x7001));
  flush(out, &b);
  CHECK(gt_output_close(out) == 0);
  struct seen s;
  struct execs x;
  read_back("ended.0002.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 1);
  CHECK_EQ_U64(x.nodes[0], 1);
  CHECK_EQ_U64(x.launches[0], 1);
  CHECK_EQ_U64(s.replayed, 3 + 4); /* the start, the second capture */
}

/* Graph building merges groups: a child graph's nodes and its parent's,
 * interleaved, replay in the order they came. */
static void test_merged_order(void) {
  struct gt_output *out = open_set("merged.gtrace");
  static struct batch b;
  start(&b);
  add(&b, node(K1, 0, 0x6001)); /* parent */
  add(&b, node(K2, 0, 0x6002)); /* child */
  add(&b, node(K1, 0, 0x6001));
  add(&b, node(K2, 0, 0x6002));
  add(&b, graph_rec(GT_API_cudaGraphAddChildGraphNode, 0x6001, 0, 0, 0x6002));
  add(&b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, 0x6001, 0x7001, 0, 0));
  flush(out, &b);
  gt_output_roll(out);
  add(&b, graph_launch(0x7001));
  flush(out, &b);
  CHECK(gt_output_close(out) == 0);
  struct seen s;
  struct execs x;
  read_back("merged.0002.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 1);
  CHECK_EQ_U64(x.nodes[0], 4); /* two of its own, two of the child */
  CHECK_EQ_U64(s.replayed, 3 + 6);
  CHECK_EQ_U64(s.replay_out_of_order, 0);
}

/* A graph whose making finds no room in the cache (32 MiB) is dropped
 * whole: nothing of it is repeated, later files say so, and it is counted;
 * a small graph made after it still fits and is repeated. */
static void test_no_room(void) {
  struct gt_output *out = open_set("full.gtrace");
  static struct batch b;
  start(&b);
  flush(out, &b);
  const int big =
      (32 << 20) / (GT_SLOT_SIZE + 8) + 1; /* a kept record: its slot and 8 bytes */
  add(&b, graph_rec(GT_API_cudaStreamBeginCapture, 0, 0, 1, 0));
  for (int i = 0; i < big; i++) {
    if (b.len + GT_SLOT_SIZE > sizeof b.buf)
      flush(out, &b);
    add(&b, node(K1, 1, 0));
  }
  add(&b, graph_rec(GT_API_cudaStreamEndCapture, 0x6001, 0, 1, 0));
  add(&b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, 0x6001, 0x7001, 0, 0));
  capture(&b, 2, 0x6002, 0x7002, 2);
  flush(out, &b);
  struct gt_graph_cache_stats st;
  gt_output_graph_stats(out, &st);
  CHECK_EQ_U64(st.dropped_groups, 1);
  CHECK_EQ_U64(st.dropped_records, (uint64_t)big + 3);
  CHECK_EQ_U64(st.groups, 2);
  gt_output_roll(out);
  add(&b, graph_launch(0x7001));
  add(&b, graph_launch(0x7002));
  /* the big graph instantiated again: its nodes are not in this file */
  add(&b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, 0x6001, 0x7003, 0, 0));
  flush(out, &b);
  CHECK(gt_output_close(out) == 0);
  struct seen s;
  struct execs x;
  read_back("full.0002.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 2); /* the small one; the big one's launch is bare */
  CHECK_EQ_U64(x.handle[0], 0x7002);
  CHECK_EQ_U64(x.handle[1], 0x7003);
  CHECK_EQ_U64(x.nodes[1], 0);
  CHECK_EQ_U64(s.incomplete, 1);
  char want[200];
  snprintf(want, sizeof want,
           "the making of 1 graph in use (%d records) is not in this file", big + 3);
  CHECK_MSG(strstr(s.note, want) != NULL, "note: %s", s.note);
  read_back("full.gtrace", &s, &x); /* the set has it all: no warning */
  CHECK_EQ_U64(s.incomplete, 0);
  CHECK_EQ_U64(x.n, 3);
  CHECK_EQ_U64(x.nodes[2], (uint64_t)big);
}

/* Records are cached as they go into a file: a process that ended in a
 * chunk still queued when the file rolled is still in the new file's
 * repeats, so its launches there are named. */
static void test_cached_as_written(void) {
  struct gt_output *out = open_set("queued.gtrace");
  struct gt_sink *sink = gt_sink_start(out);
  static struct batch b;
  start(&b);
  for (size_t off = 0; off < b.len;) {
    const struct gt_record *r = (const void *)(b.buf + off);
    gt_sink_put(sink, r);
    off += (size_t)r->nslots * GT_SLOT_SIZE;
  }
  b.len = b.n = 0;
  gt_sink_cut(sink);
  struct gt_record l = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, now_ts++, 1);
  l.pid = l.tid = PID;
  l.u.launch.kernel = K1;
  gt_sink_put(sink, &l);
  struct gt_record end = synth_rec(GT_KIND_PROCESS, GT_API_gputrace_process, now_ts++, 0);
  end.pid = end.tid = PID;
  end.u.proc.phase = GT_PROC_END;
  gt_sink_put(sink, &end);
  gt_sink_cut(sink);
  CHECK(gt_sink_write_one(sink) == 1); /* the first chunk; the second waits */
  gt_output_roll(out);
  gt_sink_stop(sink);
  CHECK(gt_output_close(out) == 0);
  char path[256];
  struct gt_session_opts o = {.path = synth_path("queued.0002.gtrace", path, sizeof path),
                              .quiet = 1};
  struct seen s;
  memset(&s, 0, sizeof s);
  struct gt_tool t = {.ctx = &s};
  gt_tool_all(&t, on_rec);
  struct gt_session *ss = synth_session(&o, &t);
  CHECK_EQ_U64(s.replayed, 3);
  l.pid = PID;
  CHECK(!strcmp(gt_model_kernel(gt_session_model(ss), &l), "k1()"));
  gt_session_close(ss);
}

/* A file whose repeats (stacks here) pass a third of the roll size holds
 * three times as much of its own before the next one opens. */
static void test_large_repeats(void) {
  struct gt_output *out = open_set("stacks.gtrace");
  static struct batch b;
  start(&b);
  uint64_t x = 88172645463325252ull; /* xorshift: frames that do not compress */
  for (int s = 1; s <= 1300; s++) {  /* under the roll size: the first file holds them */
    struct gt_record slots[GT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    slots[0] = synth_rec(GT_KIND_STACK, GT_API_gputrace_stack, 0, 0);
    slots[0].u.stack.id = (uint32_t)s;
    slots[0].u.stack.depth = 64;
    uint64_t frames[64];
    for (int i = 0; i < 64; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      frames[i] = x;
    }
    gt_record_attach_text(&slots[0], (const char *)frames, sizeof frames);
    if (b.len + (size_t)slots[0].nslots * GT_SLOT_SIZE > sizeof b.buf)
      flush(out, &b);
    slots[0].pid = slots[0].tid = PID, slots[0].ts_ns = now_ts++;
    memcpy(b.buf + b.len, slots, (size_t)slots[0].nslots * GT_SLOT_SIZE);
    b.len += (size_t)slots[0].nslots * GT_SLOT_SIZE;
    b.n++;
  }
  flush(out, &b);
  gt_output_roll(out);
  /* then launches of random kernels, until the second file is done */
  for (int chunks = 0; chunks < 200 && size_of("stacks.0003.gtrace") < 0; chunks++) {
    for (size_t i = 0; i < sizeof b.buf / GT_SLOT_SIZE; i++) {
      struct gt_record l = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, 0, 1);
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      l.u.launch.kernel = x;
      l.u.launch.grid[0] = (uint32_t)(x >> 32);
      add(&b, l);
    }
    flush(out, &b);
  }
  gt_output_roll(out); /* the third file: its repeats and nothing else */
  CHECK(gt_output_close(out) == 0);
  off_t second = size_of("stacks.0002.gtrace"), repeats = size_of("stacks.0003.gtrace");
  CHECK_MSG(repeats > (1 << 20) / 3, "repeats of %lld bytes", (long long)repeats);
  CHECK_MSG(second >= 4 * repeats - 4096 && second <= 4 * repeats + (2 << 20),
            "second file %lld bytes, repeats %lld", (long long)second,
            (long long)repeats);
}

/* A graph built node by node, instantiated; its executable's node edited
 * (to K2) in the second file and the graph's node (to K2 as well) before a
 * second instantiation there; the third file launches both executables:
 * it repeats the edits with the graph's making, so read alone its
 * executables run K2 where the edits made them. */
static struct gt_record edit(unsigned api, uint64_t exec, uint32_t tag, uint64_t kernel) {
  struct gt_record r = node(kernel, 0, exec);
  r.api = (uint16_t)api;
  r.u.launch.node = tag;
  return r;
}

static void test_node_edits(void) {
  struct gt_output *out = open_set("edits.gtrace");
  static struct batch b;
  start(&b);
  struct gt_record n1 = node(K1, 0, 0x6005);
  n1.u.launch.node = 0x51;
  add(&b, n1);
  add(&b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, 0x6005, 0x7005, 0, 0));
  add(&b, graph_launch(0x7005));
  flush(out, &b);
  gt_output_roll(out);
  add(&b, edit(GT_API_cudaGraphExecKernelNodeSetParams, 0x7005, 0x51, K2));
  add(&b, edit(GT_API_cudaGraphKernelNodeSetParams, 0, 0x51, K2));
  add(&b, graph_rec(GT_API_cudaGraphInstantiateWithFlags, 0x6005, 0x7006, 0, 0));
  flush(out, &b);
  gt_output_roll(out);
  add(&b, graph_launch(0x7005));
  add(&b, graph_launch(0x7006));
  flush(out, &b);
  CHECK(gt_output_close(out) == 0);

  struct seen s;
  struct execs x;
  read_back("edits.0003.gtrace", &s, &x);
  CHECK_EQ_U64(x.n, 2);
  uint64_t kernels = 0;
  char path[256];
  struct gt_session_opts o = {.path = synth_path("edits.0003.gtrace", path, sizeof path),
                              .layers = GT_LAYER_GRAPHS,
                              .ordered = GT_ORDER_ALL,
                              .quiet = 1};
  struct gt_tool t = {0};
  struct gt_session *ss = synth_session(&o, &t);
  size_t n;
  struct gt_graph_exec *e = gt_graphs_execs(gt_session_graphs(ss), &n);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < e[i].nnodes; k++)
      kernels += e[i].nodes[k].kernel == K2;
  gt_session_close(ss);
  CHECK_EQ_U64(kernels, 2); /* both executables' node runs K2 */
}

int main(void) {
  gt_collector_quiet = 1;
  test_lazy();
  test_ended();
  test_merged_order();
  test_no_room();
  test_cached_as_written();
  test_large_repeats();
  test_node_edits();
  return check_finish("test_rolling_graphs");
}
