/* graphs.c — see graphs.h. */
#include "graphs.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct node_list {
  struct gt_graph_node *v;
  size_t n, cap;
};

struct graph_ent { /* a cudaGraph_t of a process */
  struct node_list nodes;
  uint32_t capture_stack, instantiations;
  int captured;
  int known; /* made where the trace saw it (a capture, node adds, a clone) */
};

struct capture_ent { /* an open capture sequence */
  struct node_list nodes;
  uint32_t stack;
  int into; /* begun with BeginCaptureToGraph: adds to the graph's nodes */
};

struct eager { /* device time outside graphs: a kernel's shortest run, or the
                  lowest ns per byte of copies or memsets of one direction */
  double ns;   /* kernels: ns; copies, memsets: ns per byte */
  uint64_t n;
  uint64_t kernel; /* as the DEVICE records name it */
  uint32_t pid;
  uint32_t shape; /* 0: every configuration of the kernel */
};

enum api_class {
  AC_OTHER,
  AC_BEGIN,
  AC_BEGIN_TO,
  AC_END,
  AC_INSTANTIATE,
  AC_UPDATE,
  AC_CLONE,
  AC_CHILD,
  AC_GRAPH_DESTROY
};

struct gt_graphs {
  struct gt_model *model; /* kernel names, when the caller has them */
  /* key -> position (gt_find_or_add); exec_idx: key -> position + 1 */
  struct gt_map graph_idx, capture_idx, exec_idx, eager_idx;
  struct graph_ent *graphs;
  size_t ngraphs, cgraphs;
  struct capture_ent *caps;
  size_t ncaps, ccaps;
  struct gt_graph_exec *execs;
  size_t nexecs, cexecs;
  struct eager *eager;
  size_t neager, ceager;
  struct gt_map alias;            /* (pid, node kernel) -> eager position + 1, 0 */
  struct gt_map open_per_pid;     /* pid -> captures open */
  struct gt_map launches_per_pid; /* pid -> graph launches so far */
  struct gt_map tag_graph;        /* (pid, kernel node tag) -> the graph it is in */
  uint64_t during_capture, edits_lost;
  struct gt_record *out;
  size_t nout, cout;
  /* DEVICE records of graph launches whose executable is not known yet
   * (read before its instantiation: another source of the file), until
   * their launch comes: (pid, tid, corr) -> position + 1 in `held` */
  struct gt_map held_idx;
  struct gt_record *held;
  size_t nheld, cheld;
  /* CUPTI: a launch's node records taken so far, by (pid, tid, corr, kind);
   * kind 0 their total (removed once every timed node has one) */
  struct gt_map cupti_taken;
  double *weights;
  size_t cweights;
  unsigned char api_class[GT_API_COUNT];
};

/* What a GRAPH record's api does, from its flags (apis.h GT_AF_*). */
static unsigned char classify(unsigned flags) {
  if (flags & GT_AF_CAPTURE)
    return flags & GT_AF_CAPTURE_END  ? AC_END
           : flags & GT_AF_INTO_GRAPH ? AC_BEGIN_TO
                                      : AC_BEGIN;
  if (flags & GT_AF_INSTANTIATE)
    return AC_INSTANTIATE;
  if (flags & GT_AF_EXEC_UPDATE)
    return AC_UPDATE;
  if (flags & GT_AF_ARG_GRAPH)
    return flags & GT_AF_NODE ? AC_CHILD : AC_CLONE;
  if (flags & GT_AF_ENDS_GRAPH)
    return AC_GRAPH_DESTROY;
  return AC_OTHER;
}

struct gt_graphs *gt_graphs_new(struct gt_model *model) {
  struct gt_graphs *g = gt_xcalloc(1, sizeof *g);
  g->model = model;
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    g->api_class[a] = gt_apis[a].kind == GT_KIND_GRAPH ? classify(gt_apis[a].flags) : 0;
  return g;
}

void gt_graphs_free(struct gt_graphs *g) {
  if (!g)
    return;
  for (size_t i = 0; i < g->ngraphs; i++)
    free(g->graphs[i].nodes.v);
  for (size_t i = 0; i < g->ncaps; i++)
    free(g->caps[i].nodes.v);
  for (size_t i = 0; i < g->nexecs; i++) {
    free(g->execs[i].nodes);
    gt_durs_free(&g->execs[i].durs);
  }
  free(g->graphs);
  free(g->caps);
  free(g->execs);
  free(g->eager);
  free(g->out);
  free(g->weights);
  gt_map_free(&g->graph_idx);
  gt_map_free(&g->capture_idx);
  gt_map_free(&g->exec_idx);
  gt_map_free(&g->eager_idx);
  gt_map_free(&g->open_per_pid);
  gt_map_free(&g->launches_per_pid);
  gt_map_free(&g->tag_graph);
  gt_map_free(&g->alias);
  gt_map_free(&g->held_idx);
  gt_map_free(&g->cupti_taken);
  free(g->held);
  free(g);
}

/* ---- tables ---- */

static struct graph_ent *graph_of(struct gt_graphs *g, uint32_t pid, uint64_t handle) {
  size_t at;
  int added;
  g->graphs = gt_find_or_add(&g->graph_idx, gt_pid_key(pid, handle), g->graphs,
                             &g->ngraphs, &g->cgraphs, sizeof *g->graphs, &at, &added);
  return &g->graphs[at];
}

static uint64_t capture_key(uint32_t pid, uint64_t id) {
  uint32_t low = (uint32_t)id; /* records carry the low 32 bits (never 0) */
  return gt_pid_key(pid, (uint64_t)(low ? low : UINT32_MAX) | 1ull << 40);
}

static struct capture_ent *capture_of(struct gt_graphs *g, uint32_t pid, uint64_t id) {
  size_t at;
  int added;
  g->caps = gt_find_or_add(&g->capture_idx, capture_key(pid, id), g->caps, &g->ncaps,
                           &g->ccaps, sizeof *g->caps, &at, &added);
  return &g->caps[at];
}

static struct gt_graph_exec *exec_of(struct gt_graphs *g, uint32_t pid, uint64_t handle) {
  uint64_t at;
  return gt_map_get(&g->exec_idx, gt_pid_key(pid, handle), &at) ? &g->execs[at - 1]
                                                                : NULL;
}

static struct eager *eager_of(struct gt_graphs *g, uint64_t key) {
  size_t at;
  int added;
  g->eager = gt_find_or_add(&g->eager_idx, key, g->eager, &g->neager, &g->ceager,
                            sizeof *g->eager, &at, &added);
  return &g->eager[at];
}

/* A kernel by name once the trace named it: launches name a kernel by its
 * stub, a cudaKernel_t or a CUfunction, and a node added with
 * cudaGraphAddKernelNode by its stub where the eager launches used a
 * handle. */
static uint64_t kernel_identity(const struct gt_graphs *g, uint32_t pid,
                                uint64_t kernel) {
  if (!g->model || !gt_model_kernel_known(g->model, pid, kernel))
    return kernel;
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (const char *c = gt_model_kernel_of(g->model, pid, kernel, 0); *c; c++)
    h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
  return h | 1ull << 63;
}

static uint64_t eager_key(uint32_t pid, unsigned kind, unsigned dir, uint64_t kernel) {
  uint64_t what = kind == GT_KIND_LAUNCH ? kernel : (uint64_t)(kind << 8 | dir);
  return gt_pid_key(pid, what) ^ (uint64_t)kind << 56;
}

/* A node's kernel's eager entry by name, when the handle it was added by is
 * not the one the eager launches used (a stub and a cudaKernel_t): found
 * once among the entries, then remembered (`alias`). */
static const struct eager *eager_by_name(struct gt_graphs *g, uint32_t pid,
                                         uint64_t kernel) {
  uint64_t key = gt_pid_key(pid, kernel), at;
  if (gt_map_get(&g->alias, key, &at))
    return at ? &g->eager[at - 1] : NULL;
  uint64_t want = kernel_identity(g, pid, kernel);
  at = 0;
  for (size_t i = 0; i < g->neager && want != kernel && !at; i++)
    if (g->eager[i].pid == pid && g->eager[i].kernel && !g->eager[i].shape &&
        kernel_identity(g, pid, g->eager[i].kernel) == want)
      at = i + 1;
  if (gt_model_kernel_known(g->model, pid, kernel)) /* else: named later, ask again */
    gt_map_put(&g->alias, key, at);
  return at ? &g->eager[at - 1] : NULL;
}

static void list_append(struct node_list *l, const struct gt_graph_node *src, size_t n) {
  if (n == 0)
    return;
  l->v = gt_grow(l->v, &l->cap, l->n + n, sizeof *l->v);
  memcpy(l->v + l->n, src, n * sizeof *src);
  l->n += n;
}

static void list_set(struct node_list *l, const struct node_list *src) {
  l->n = 0;
  list_append(l, src->v, src->n);
}

/* Nodes copied by CUDA (a clone, a child graph, a graph launched into a
 * capture) have handles of their own, which the trace never saw. */
static void untag(struct gt_graph_node *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    v[i].tag = v[i].tag_upd = 0;
}

static void list_append_copies(struct node_list *l, const struct gt_graph_node *src,
                               size_t n) {
  size_t from = l->n;
  list_append(l, src, n);
  untag(l->v + from, n);
}

static void open_delta(struct gt_graphs *g, uint32_t pid, int delta) {
  uint64_t n = 0;
  gt_map_get(&g->open_per_pid, pid, &n);
  n = delta < 0 && n == 0 ? 0 : n + (uint64_t)(int64_t)delta;
  gt_map_put(&g->open_per_pid, pid, n);
}

/* ---- nodes ---- */

static struct gt_graph_node node_from(const struct gt_record *r) {
  struct gt_graph_node n = {.kind = r->kind, .api = r->api, .stack_id = r->stack_id};
  n.flags = r->flags & (GT_F_HOST_FN | GT_F_KERNEL_HANDLE);
  if (r->kind == GT_KIND_ALLOC || r->kind == GT_KIND_FREE) {
    n.ptr = r->u.mem.ptr;
    n.bytes = r->u.mem.bytes;
  } else if (r->kind == GT_KIND_LAUNCH) {
    n.kernel = r->u.launch.kernel;
    memcpy(n.grid, r->u.launch.grid, sizeof n.grid);
    memcpy(n.block, r->u.launch.block, sizeof n.block);
    n.shmem = r->u.launch.shared_mem;
    n.tag = r->flags & GT_F_NODE ? r->u.launch.node : 0;
  } else if (r->kind == GT_KIND_MEMCPY) {
    n.bytes = r->u.copy.bytes;
    n.dir = r->u.copy.dir;
  } else {
    n.bytes = r->u.set.bytes;
  }
  return n;
}

static int mem_kind(unsigned kind) {
  return kind == GT_KIND_ALLOC || kind == GT_KIND_FREE;
}

static uint32_t node_capture(const struct gt_record *r) {
  return mem_kind(r->kind)           ? (uint32_t)r->u.mem.capture
         : r->kind == GT_KIND_LAUNCH ? r->u.launch.corr
         : r->kind == GT_KIND_MEMCPY ? r->u.copy.corr
                                     : r->u.set.corr;
}

/* An added node's graph: the record's stream field. */
static uint64_t node_graph(const struct gt_record *r) {
  return mem_kind(r->kind)           ? r->u.mem.stream
         : r->kind == GT_KIND_LAUNCH ? r->u.launch.stream
         : r->kind == GT_KIND_MEMCPY ? r->u.copy.stream
                                     : r->u.set.stream;
}

/* ---- kernel nodes' tags ---- */

/* tag_graph's value for a tag two live graphs' nodes have. */
#define TAG_TWICE UINT64_MAX

/* The one kernel node of v[0..n) that `tag` names, or NULL (none, or more
 * than one). */
static struct gt_graph_node *tagged(struct gt_graph_node *v, size_t n, uint32_t tag) {
  struct gt_graph_node *found = NULL;
  for (size_t i = 0; i < n && tag; i++)
    if (v[i].kind == GT_KIND_LAUNCH && !(v[i].flags & GT_F_HOST_FN) &&
        (v[i].tag == tag || v[i].tag_upd == tag)) {
      if (found)
        return NULL;
      found = &v[i];
    }
  return found;
}

/* The graph node `tag` names in process `pid`, or NULL. */
static struct gt_graph_node *graph_node(struct gt_graphs *g, uint32_t pid, uint32_t tag) {
  uint64_t handle, at;
  if (!tag || !gt_map_get(&g->tag_graph, gt_pid_key(pid, tag), &handle) ||
      handle == TAG_TWICE || !gt_map_get(&g->graph_idx, gt_pid_key(pid, handle), &at))
    return NULL;
  struct graph_ent *e = &g->graphs[at]; /* gt_find_or_add's position */
  return tagged(e->nodes.v, e->nodes.n, tag);
}

/* A kernel node of `graph` added with `tag`: where the tag is found, unless
 * a node of another graph still has it (then it names neither). */
static void remember_tag(struct gt_graphs *g, uint32_t pid, uint32_t tag,
                         uint64_t graph) {
  uint64_t key = gt_pid_key(pid, tag), was;
  if (gt_map_get(&g->tag_graph, key, &was) && was != graph &&
      (was == TAG_TWICE || graph_node(g, pid, tag)))
    graph = TAG_TWICE;
  gt_map_put(&g->tag_graph, key, graph);
}

/* A captured or added node: kept in its capture or graph (a tagged one
 * findable by its tag). */
static void take_node(struct gt_graphs *g, const struct gt_record *r) {
  struct node_list *to;
  if (r->flags & GT_F_CAPTURED) {
    to = &capture_of(g, r->pid, node_capture(r))->nodes;
  } else {
    struct graph_ent *e = graph_of(g, r->pid, node_graph(r));
    e->known = 1;
    to = &e->nodes;
  }
  if (r->kind == GT_KIND_LAUNCH && (r->flags & GT_F_GRAPH)) {
    /* an executable launched into a capture: a child graph node */
    struct gt_graph_exec *x = exec_of(g, r->pid, r->u.launch.kernel);
    if (x)
      list_append_copies(to, x->nodes, x->nnodes);
    return;
  }
  struct gt_graph_node n = node_from(r);
  list_append(to, &n, 1);
  if (n.tag)
    remember_tag(g, r->pid, n.tag, node_graph(r));
}

/* ---- kernel nodes' parameters set ---- */

/* A kernel node's new parameters (graphs.h): what it runs from now on. An
 * executable whose making the trace did not see runs nothing it knows
 * anyway: its edits change nothing. */
static void edit(struct gt_graphs *g, const struct gt_record *r) {
  if (r->result != 0)
    return;
  struct gt_graph_node *n;
  if (r->u.launch.stream) {
    struct gt_graph_exec *x = exec_of(g, r->pid, r->u.launch.stream);
    if (!x || !x->known)
      return;
    n = tagged(x->nodes, x->nnodes, r->u.launch.node);
    x->edits += n != NULL;
  } else {
    n = graph_node(g, r->pid, r->u.launch.node);
  }
  if (!n) {
    g->edits_lost++;
    return;
  }
  n->kernel = r->u.launch.kernel;
  memcpy(n->grid, r->u.launch.grid, sizeof n->grid);
  memcpy(n->block, r->u.launch.block, sizeof n->block);
  n->shmem = r->u.launch.shared_mem;
  n->flags = r->flags & GT_F_KERNEL_HANDLE;
  if (r->stack_id) /* its runs are the line's that set it */
    n->stack_id = r->stack_id;
}

/* ---- GRAPH records ---- */

static void instantiated(struct gt_graphs *g, const struct gt_record *r, int update) {
  struct graph_ent *src = graph_of(g, r->pid, r->u.graph.graph);
  struct gt_graph_exec *x = update ? exec_of(g, r->pid, r->u.graph.exec) : NULL;
  if (!x) {
    g->execs = gt_grow(g->execs, &g->cexecs, g->nexecs + 1, sizeof *g->execs);
    x = &g->execs[g->nexecs++];
    memset(x, 0, sizeof *x);
    gt_map_put(&g->exec_idx, gt_pid_key(r->pid, r->u.graph.exec), g->nexecs);
    x->pid = r->pid;
    x->handle = r->u.graph.exec;
    x->instance_stack = r->stack_id;
    x->instance_ns = r->dur_ns;
    if (!(r->flags & GT_F_REPLAYED)) /* repeated in a rolling file: from before it */
      gt_map_get(&g->launches_per_pid, r->pid, &x->launches_before);
    x->instantiations = ++src->instantiations;
  }
  x->graph = r->u.graph.graph;
  x->known = src->known;
  x->captured = src->captured;
  x->capture_stack = src->capture_stack;
  struct gt_graph_node *nodes =
      gt_xcalloc(src->nodes.n ? src->nodes.n : 1, sizeof *nodes);
  if (src->nodes.n) /* none known: a graph built untraced, or made before the file */
    memcpy(nodes, src->nodes.v, src->nodes.n * sizeof *nodes);
  /* An update pairs the nodes in order (same topology, else it fails): each
   * keeps the tag it was instantiated with and takes its pair's. */
  for (size_t i = 0; update && x->nnodes == src->nodes.n && i < x->nnodes; i++) {
    nodes[i].tag_upd = src->nodes.v[i].tag;
    nodes[i].tag = x->nodes[i].tag;
  }
  free(x->nodes);
  x->nodes = nodes;
  x->nnodes = src->nodes.n;
}

static void end_capture(struct gt_graphs *g, const struct gt_record *r) {
  if (r->result != 0 && r->u.graph.capture == 0)
    return; /* ended nothing: not capturing, or the capture goes on */
  open_delta(g, r->pid, -1);
  if (r->u.graph.capture == 0)
    return;
  struct capture_ent *c = capture_of(g, r->pid, r->u.graph.capture);
  if (r->result == 0 && r->u.graph.graph) {
    struct graph_ent *to = graph_of(g, r->pid, r->u.graph.graph);
    if (c->into) { /* after the graph's own nodes */
      list_append(&to->nodes, c->nodes.v, c->nodes.n);
    } else {
      list_set(&to->nodes, &c->nodes);
      to->instantiations = 0;
    }
    to->captured = to->known = 1;
    to->capture_stack = c->stack;
  }
  c->nodes.n = 0; /* the id is never reused: the entry stays empty */
}

/* A destroyed graph's nodes are found by their tags no more. */
static void forget_tags(struct gt_graphs *g, uint32_t pid, uint64_t handle,
                        const struct graph_ent *e) {
  for (size_t i = 0; i < e->nodes.n; i++) {
    uint64_t in, key = gt_pid_key(pid, e->nodes.v[i].tag);
    if (e->nodes.v[i].tag && gt_map_get(&g->tag_graph, key, &in) && in == handle)
      gt_map_del(&g->tag_graph, key);
  }
}

static void graph_record(struct gt_graphs *g, const struct gt_record *r) {
  const struct gt_graph_args *a = &r->u.graph;
  switch (g->api_class[r->api]) {
  case AC_BEGIN:
  case AC_BEGIN_TO:
    if (r->result == 0) {
      open_delta(g, r->pid, 1);
      struct capture_ent *c = capture_of(g, r->pid, a->capture);
      c->stack = r->stack_id;
      c->into = g->api_class[r->api] == AC_BEGIN_TO;
    }
    break;
  case AC_END:
    end_capture(g, r);
    break;
  case AC_INSTANTIATE:
  case AC_UPDATE:
    if (r->result == 0 && a->exec)
      instantiated(g, r, g->api_class[r->api] == AC_UPDATE);
    break;
  case AC_CLONE:
    if (r->result == 0 && a->arg) {
      struct graph_ent src = *graph_of(g, r->pid, a->graph);
      struct graph_ent *to = graph_of(g, r->pid, a->arg);
      to->nodes.n = 0;
      list_append_copies(&to->nodes, src.nodes.v, src.nodes.n);
      to->captured = src.captured;
      to->known = src.known;
      to->capture_stack = src.capture_stack;
    }
    break;
  case AC_CHILD:
    if (r->result == 0 && a->arg) {
      struct node_list child = graph_of(g, r->pid, a->arg)->nodes;
      struct node_list copy = {0};
      list_append(&copy, child.v, child.n); /* graph_of may move the table */
      struct graph_ent *parent = graph_of(g, r->pid, a->graph);
      list_append_copies(&parent->nodes, copy.v, copy.n);
      parent->known = 1;
      free(copy.v);
    }
    break;
  case AC_GRAPH_DESTROY:
    if (r->result == 0) {
      struct graph_ent *e = graph_of(g, r->pid, a->graph);
      forget_tags(g, r->pid, a->graph, e);
      e->nodes.n = 0;
      e->captured = e->known = 0;
      e->instantiations = 0;
    }
    break;
  }
}

/* ---- expansion ---- */

static struct gt_record *out_next(struct gt_graphs *g) {
  g->out = gt_grow(g->out, &g->cout, g->nout + 1, sizeof *g->out);
  struct gt_record *o = &g->out[g->nout++];
  memset(o, 0, sizeof *o);
  return o;
}

static void expand_launch(struct gt_graphs *g, const struct gt_record *l,
                          const struct gt_graph_exec *x) {
  for (size_t i = 0; i < x->nnodes; i++) {
    const struct gt_graph_node *n = &x->nodes[i];
    struct gt_record *o = out_next(g);
    o->ts_ns = l->ts_ns;
    o->pid = l->pid;
    o->tid = l->tid;
    o->api = n->api;
    o->kind = n->kind;
    o->nslots = 1;
    o->flags = GT_F_GRAPH_RUN | n->flags;
    o->stack_id = n->stack_id;
    o->result = 0;
    if (mem_kind(n->kind)) {
      o->u.mem.ptr = n->ptr;
      o->u.mem.bytes = n->bytes;
      o->u.mem.memory = GT_MEM_DEVICE;
      o->u.mem.stream = l->u.launch.stream;
    } else if (n->kind == GT_KIND_LAUNCH) {
      o->u.launch.kernel = n->kernel;
      memcpy(o->u.launch.grid, n->grid, sizeof n->grid);
      memcpy(o->u.launch.block, n->block, sizeof n->block);
      o->u.launch.shared_mem = n->shmem;
      o->u.launch.stream = l->u.launch.stream;
      o->u.launch.corr = l->u.launch.corr;
    } else if (n->kind == GT_KIND_MEMCPY) {
      o->u.copy.bytes = n->bytes;
      o->u.copy.dir = n->dir;
      o->u.copy.stream = l->u.launch.stream;
      o->u.copy.corr = l->u.launch.corr;
      o->u.copy.dst_device = o->u.copy.src_device = -1;
    } else {
      o->u.set.bytes = n->bytes;
      o->u.set.stream = l->u.launch.stream;
      o->u.set.corr = l->u.launch.corr;
    }
  }
}

static const struct eager *eager_get(const struct gt_graphs *g, uint64_t key) {
  uint64_t at;
  return gt_map_get(&g->eager_idx, key, &at) ? &g->eager[at] /* gt_find_or_add's */
                                             : NULL;
}

/* A kernel's entry for one launch configuration, beside its entry for all. */
static uint64_t shape_key(uint64_t kernel_key, uint32_t shape) {
  return kernel_key ^ (uint64_t)shape * 0x9e3779b97f4a7c15ull;
}

/* A node's eager reference (0: none); host functions take no device time.
 * A kernel node's is its own configuration's shortest run where that
 * configuration ran eagerly (timed by events), else the kernel's. */
static double node_weight(struct gt_graphs *g, uint32_t pid,
                          const struct gt_graph_node *n) {
  const struct eager *e = eager_get(g, eager_key(pid, n->kind, n->dir, n->kernel));
  if (!e && n->kind == GT_KIND_LAUNCH && g->model)
    e = eager_by_name(g, pid, n->kernel);
  if (!e || !e->n)
    return 0;
  if (n->kind != GT_KIND_LAUNCH)
    return e->ns * (double)n->bytes;
  const struct eager *same =
      eager_get(g, shape_key(eager_key(pid, GT_KIND_LAUNCH, 0, e->kernel),
                             gt_launch_shape(n->grid, n->block, n->shmem)));
  return same && same->n ? same->ns : e->ns;
}

static int timed_node(const struct gt_graph_node *n) {
  return !(n->flags & GT_F_HOST_FN) && !mem_kind(n->kind);
}

/* Each timed node's device time within a launch's span of `span` ns
 * (graphs.h): its eager reference, all of them scaled down when they add
 * up to more than the span; nodes without one share what the others leave
 * (the span itself when none has one). Whatever is left is the graph's own
 * time (host nodes, waits between nodes). */
static void shares(struct gt_graphs *g, uint32_t pid, const struct gt_graph_exec *x,
                   double span) {
  double known = 0;
  size_t unknown = 0;
  for (size_t i = 0; i < x->nnodes; i++) {
    double w = timed_node(&x->nodes[i]) ? node_weight(g, pid, &x->nodes[i]) : 0;
    g->weights[i] = w;
    known += w;
    unknown += timed_node(&x->nodes[i]) && w <= 0;
  }
  double scale = known > span ? span / known : 1.0;
  double rest = unknown ? (span - known * scale) / (double)unknown : 0;
  for (size_t i = 0; i < x->nnodes; i++)
    if (timed_node(&x->nodes[i]))
      g->weights[i] = g->weights[i] > 0 ? g->weights[i] * scale : rest;
}

/* The graph launch's device span over its nodes, in node order. */
static void expand_device(struct gt_graphs *g, const struct gt_record *d,
                          const struct gt_graph_exec *x) {
  g->weights = gt_grow(g->weights, &g->cweights, x->nnodes + 1, sizeof *g->weights);
  shares(g, d->pid, x, (double)d->dur_ns);
  double at = 0;
  for (size_t i = 0; i < x->nnodes; i++) {
    const struct gt_graph_node *n = &x->nodes[i];
    if (!timed_node(n))
      continue;
    uint64_t start = d->ts_ns + (uint64_t)(at + 0.5);
    at += g->weights[i];
    uint64_t end = d->ts_ns + (uint64_t)(at + 0.5);
    struct gt_record *o = out_next(g);
    *o = *d;
    o->ts_ns = start;
    o->dur_ns = end - start;
    o->api = n->api;
    o->flags = GT_F_GRAPH_RUN | GT_F_ESTIMATED | n->flags;
    o->u.device.of_kind = n->kind;
    o->u.device.kernel = n->kind == GT_KIND_LAUNCH ? n->kernel : 0;
    o->u.device.bytes = n->bytes;
    o->u.device.dir = n->dir;
  }
}

/* Keep the least of a run into an eager entry. */
static void eager_keep(struct gt_graphs *g, uint64_t key, uint32_t shape, double ns,
                       const struct gt_record *d) {
  struct eager *e = eager_of(g, key);
  e->shape = shape;
  if (!e->n++ || ns < e->ns)
    e->ns = ns;
  e->kernel = d->u.device.of_kind == GT_KIND_LAUNCH ? d->u.device.kernel : 0;
  e->pid = d->pid;
}

static void eager_device(struct gt_graphs *g, const struct gt_record *d) {
  const struct gt_device_args *a = &d->u.device;
  if (a->of_kind == GT_KIND_LAUNCH && (d->flags & GT_F_HOST_FN))
    return;
  if (a->of_kind != GT_KIND_LAUNCH && a->bytes == 0)
    return;
  /* The least, not the mean: an event-timed run is only ever lengthened (the
   * host delayed between its start event and the work on an idle stream),
   * and inside a graph nothing delays it so. */
  double ns = a->of_kind == GT_KIND_LAUNCH ? (double)d->dur_ns
                                           : (double)d->dur_ns / (double)a->bytes;
  uint64_t key = eager_key(d->pid, a->of_kind, a->dir, a->kernel);
  eager_keep(g, key, 0, ns, d);
  if (a->of_kind == GT_KIND_LAUNCH && a->shape)
    eager_keep(g, shape_key(key, a->shape), a->shape, ns, d);
}

#define GR_HELD_MAX 4096u

static uint64_t held_key(const struct gt_record *r, uint32_t corr) {
  return gt_pid_key(r->pid, (uint64_t)r->tid << 32 | corr);
}

/* A graph launch's DEVICE record that came first, if it was held. */
static int take_held(struct gt_graphs *g, const struct gt_record *l,
                     struct gt_record *out) {
  uint64_t at;
  if (!gt_map_get(&g->held_idx, held_key(l, l->u.launch.corr), &at))
    return 0;
  gt_map_del(&g->held_idx, held_key(l, l->u.launch.corr));
  *out = g->held[at - 1];
  struct gt_record *last = &g->held[--g->nheld];
  if (at - 1 != g->nheld) { /* the last one fills the hole */
    g->held[at - 1] = *last;
    gt_map_put(&g->held_idx, held_key(last, last->u.device.corr), at);
  }
  return 1;
}

static void timed_launch(struct gt_graphs *g, const struct gt_record *d,
                         struct gt_graph_exec *x);
static void cupti_node(struct gt_graphs *g, const struct gt_record *d,
                       struct gt_graph_exec *x);

static enum gt_graphs_verdict graph_launch(struct gt_graphs *g,
                                           const struct gt_record *r) {
  struct gt_graph_exec *x = exec_of(g, r->pid, r->u.launch.kernel);
  struct gt_record dev;
  int held = take_held(g, r, &dev);
  if (!x || !x->known) { /* built where we could not see: a "graph" as before */
    if (held)
      *out_next(g) = dev; /* its DEVICE record, as it came */
    return GT_GRAPHS_PASS;
  }
  if (held && dev.u.device.source == GT_DEVTIME_CUPTI) {
    cupti_node(g, &dev, x);
  } else if (held) { /* the span on the device, then its nodes' shares */
    dev.flags |= GT_F_EXPANDED;
    *out_next(g) = dev;
    timed_launch(g, &dev, x);
  }
  if (r->result != 0) {
    x->failed++;
    return GT_GRAPHS_EXPAND; /* ran nothing: no node records */
  }
  x->launches++;
  uint64_t before = 0;
  gt_map_get(&g->launches_per_pid, r->pid, &before);
  gt_map_put(&g->launches_per_pid, r->pid, before + 1);
  uint64_t open = 0;
  if (gt_map_get(&g->open_per_pid, r->pid, &open) && open)
    g->during_capture++;
  expand_launch(g, r, x);
  return GT_GRAPHS_EXPAND;
}

/* A timed launch's (or CUPTI node's) device time, weighted by its sample. */
static void add_gpu(struct gt_graph_exec *x, const struct gt_record *d) {
  uint32_t sample = d->u.device.sample ? d->u.device.sample : 1;
  x->gpu_ns += (double)d->dur_ns * sample;
  if (sample > x->sample)
    x->sample = sample;
}

double gt_graph_exec_gpu_ns(const struct gt_graph_exec *x) {
  double total; /* the launches' spans (CUPTI's nodes add no span: as summed) */
  return gt_sampled_total((double)x->durs.sum, x->durs.n, x->launches, x->sample, &total)
             ? total
             : x->gpu_ns;
}

static void timed_launch(struct gt_graphs *g, const struct gt_record *d,
                         struct gt_graph_exec *x) {
  x->timed++;
  add_gpu(x, d);
  gt_durs_add(&x->durs, d->dur_ns);
  expand_device(g, d, x);
}

/* The k-th timed node of `kind`, or NULL. */
static const struct gt_graph_node *nth_node(const struct gt_graph_exec *x, unsigned kind,
                                            uint64_t k) {
  for (size_t i = 0; i < x->nnodes; i++)
    if (timed_node(&x->nodes[i]) && x->nodes[i].kind == kind && k-- == 0)
      return &x->nodes[i];
  return NULL;
}

/* The node CUPTI's graphNodeId `id` names, once learned. */
static const struct gt_graph_node *node_by_cupti_id(const struct gt_graph_exec *x,
                                                    unsigned kind, uint32_t id) {
  for (size_t i = 0; id != 0 && i < x->nnodes; i++)
    if (timed_node(&x->nodes[i]) && x->nodes[i].kind == kind &&
        x->nodes[i].cupti_id == id)
      return &x->nodes[i];
  return NULL;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* After the first CUPTI-timed launch of x: the graphNodeIds seen, each
 * noted on the node it arrived for, are put in id order on x's nodes of
 * each kind (CUDA numbers an executable's nodes in their graph's creation
 * order, the order x->nodes has); a kind whose ids did not all come is
 * forgotten (arrival order then). */
static void learn_cupti_ids(struct gt_graph_exec *x) {
  static const unsigned kinds[] = {GT_KIND_LAUNCH, GT_KIND_MEMCPY, GT_KIND_MEMSET};
  uint32_t *ids = malloc((x->nnodes ? x->nnodes : 1) * sizeof *ids);
  if (ids == NULL)
    return;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    size_t n = 0, of_kind = 0;
    for (size_t i = 0; i < x->nnodes; i++)
      if (timed_node(&x->nodes[i]) && x->nodes[i].kind == kinds[k]) {
        of_kind++;
        if (x->nodes[i].cupti_id)
          ids[n++] = x->nodes[i].cupti_id;
      }
    qsort(ids, n, sizeof *ids, cmp_u32);
    for (size_t i = 0, j = 0; i < x->nnodes; i++)
      if (timed_node(&x->nodes[i]) && x->nodes[i].kind == kinds[k])
        x->nodes[i].cupti_id = n == of_kind ? ids[j++] : 0;
  }
  free(ids);
}

/* CUPTI times each node of a graph launch itself: its records come one per
 * node as they ran, each with the launch's metadata and the node's
 * graphNodeId. A node is named by that id once learned (learn_cupti_ids);
 * before, the n-th record of a kind is the n-th timed node of that kind
 * (exact for a chain; branches running at once may swap same-kind nodes).
 * The launch counts as timed once. */
static void cupti_node(struct gt_graphs *g, const struct gt_record *d,
                       struct gt_graph_exec *x) {
  uint64_t key = held_key(d, d->u.device.corr) * 0x9E3779B97F4A7C15ull, k = 0, total = 0;
  gt_map_get(&g->cupti_taken, key + d->u.device.of_kind, &k);
  gt_map_get(&g->cupti_taken, key, &total);
  size_t ntimed = 0;
  for (size_t i = 0; i < x->nnodes; i++)
    ntimed += timed_node(&x->nodes[i]);
  if (total == 0)
    x->timed++;
  add_gpu(x, d);
  const struct gt_graph_node *n =
      node_by_cupti_id(x, d->u.device.of_kind, d->u.device.node);
  int learning = n == NULL && d->u.device.node != 0 && x->timed == 1;
  if (n == NULL)
    n = nth_node(x, d->u.device.of_kind, k);
  if (learning && n != NULL)
    ((struct gt_graph_node *)n)->cupti_id = d->u.device.node; /* x's own node */
  if (learning && total + 1 >= ntimed)
    learn_cupti_ids(x);
  if (total + 1 >= ntimed) { /* the launch's last: forget it */
    static const unsigned counted[] = {0, GT_KIND_MEMCPY, GT_KIND_MEMSET, GT_KIND_LAUNCH};
    for (size_t i = 0; i < sizeof counted / sizeof *counted; i++)
      gt_map_del(&g->cupti_taken, key + counted[i]);
  } else {
    gt_map_put(&g->cupti_taken, key + d->u.device.of_kind, k + 1);
    gt_map_put(&g->cupti_taken, key, total + 1);
  }
  if (!n)
    return; /* more activity than nodes of its kind: nothing to name it by */
  struct gt_record *o = out_next(g);
  *o = *d;
  o->api = n->api;
  o->flags = GT_F_GRAPH_RUN | n->flags;
  o->u.device.kernel = n->kind == GT_KIND_LAUNCH ? n->kernel : 0;
  o->u.device.bytes = n->bytes;
}

static enum gt_graphs_verdict device(struct gt_graphs *g, const struct gt_record *d) {
  if (d->flags & GT_F_GRAPH) {
    struct gt_graph_exec *x = exec_of(g, d->pid, d->u.device.kernel);
    if (x && x->known && d->u.device.source == GT_DEVTIME_CUPTI) {
      cupti_node(g, d, x);
      return GT_GRAPHS_HIDE; /* the node's record stands for it */
    }
    if (x && x->known) {
      timed_launch(g, d, x);
      return GT_GRAPHS_EXPAND;
    }
    if (g->nheld >= GR_HELD_MAX)
      return GT_GRAPHS_PASS;
    g->held = gt_grow(g->held, &g->cheld, g->nheld + 1, sizeof *g->held);
    g->held[g->nheld++] = *d;
    gt_map_put(&g->held_idx, held_key(d, d->u.device.corr), g->nheld);
    return GT_GRAPHS_HIDE; /* until its launch says what the graph runs */
  }
  eager_device(g, d);
  return GT_GRAPHS_PASS;
}

enum gt_graphs_verdict gt_graphs_feed(struct gt_graphs *g, const struct gt_record *r) {
  g->nout = 0;
  switch (r->kind) {
  case GT_KIND_LAUNCH:
  case GT_KIND_MEMCPY:
  case GT_KIND_MEMSET:
    if (r->kind == GT_KIND_LAUNCH &&
        (gt_api_flags(r->api) & GT_AF_EDIT)) { /* ran nothing */
      edit(g, r);
      return GT_GRAPHS_HIDE;
    }
    if (r->flags & (GT_F_CAPTURED | GT_F_NODE)) {
      if (r->result == 0)
        take_node(g, r);
      return GT_GRAPHS_HIDE;
    }
    return r->kind == GT_KIND_LAUNCH && (r->flags & GT_F_GRAPH) ? graph_launch(g, r)
                                                                : GT_GRAPHS_PASS;
  case GT_KIND_ALLOC:
  case GT_KIND_FREE: /* graph memory: allocated when a graph runs */
    if (!(r->flags & (GT_F_CAPTURED | GT_F_NODE)))
      return GT_GRAPHS_PASS;
    if (r->result == 0)
      take_node(g, r);
    return GT_GRAPHS_HIDE;
  case GT_KIND_DEVICE:
    return device(g, r);
  case GT_KIND_GRAPH:
    if (r->api < GT_API_COUNT)
      graph_record(g, r);
    return GT_GRAPHS_PASS;
  default:
    return GT_GRAPHS_PASS;
  }
}

const struct gt_record *gt_graphs_expansion(struct gt_graphs *g, size_t *n) {
  *n = g->nout;
  return g->out;
}

struct gt_graph_exec *gt_graphs_execs(struct gt_graphs *g, size_t *n) {
  *n = g->nexecs;
  return g->execs;
}

uint64_t gt_graphs_launched_during_capture(const struct gt_graphs *g) {
  return g->during_capture;
}

uint64_t gt_graphs_edits_not_followed(const struct gt_graphs *g) {
  return g->edits_lost;
}

size_t gt_graphs_in_flight(const struct gt_graphs *g) {
  return g->held_idx.count + g->cupti_taken.count;
}
