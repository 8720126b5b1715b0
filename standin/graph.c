/* graph.c — graphs (cudaGraph_t) and their nodes, executable graphs
 * (cudaGraphExec_t) and their launch.
 *
 * Contract:
 *  - A graph is a set of nodes with dependencies (node B depends on node A:
 *    A completes before B starts). Nodes are added explicitly
 *    (cudaGraphAdd*Node, dependencies validated: nodes of the same graph,
 *    no duplicates, else cudaErrorInvalidValue) or by stream capture
 *    (capture.c), and checked as the eager operation would be (same errors:
 *    an unknown kernel is cudaErrorInvalidDeviceFunction, a bad grid
 *    cudaErrorInvalidConfiguration, a copy's sides checked against the
 *    memory table, ...). cudaGraphAddDependencies may add edges later, in
 *    any direction; a cycle is found at instantiation (cudaErrorInvalidValue).
 *  - A child graph node holds a clone of its graph, made when the node is
 *    added. Kernel nodes keep the caller's kernelParams / extra arrays as
 *    given (kernels do not run, so nothing reads them); a captured launch's
 *    node has none.
 *  - cudaGraphInstantiate* snapshot the graph: the executable graph holds a
 *    private clone whose nodes (and its child graphs' nodes) are put in a
 *    topological order there; later changes to the graph do not affect it.
 *    cudaGraphExecKernelNodeSetParams and cudaGraphExecUpdate (same node
 *    count, types and dependencies, paired in creation order; memcpy
 *    directions, memset element sizes and 2D memset shapes, alloc/free
 *    addresses must not change) change the snapshot, not the graph.
 *  - cudaGraphLaunch runs the snapshot's nodes in that order on the launch
 *    stream's timeline, at the call, on the calling thread: a kernel node
 *    occupies the compute engine for the duration an eager launch of its
 *    grid and block would; memcpy and memset nodes move / set their bytes
 *    then (not before) and occupy their engines as the eager async
 *    operations would (the host never waits for them); a host node waits
 *    until the stream's earlier work is done and calls its function on the
 *    launching thread (as cudaLaunchHostFunc does); a child graph runs its
 *    own nodes; event record / wait nodes record or wait as
 *    cudaEventRecord / cudaStreamWaitEvent do; alloc and free nodes take no
 *    time. The nodes are one submission: each is queued as submitted at the
 *    launch call (or the last host node's return), so the launching
 *    thread's delays do not open gaps between them. An executable graph
 *    with no nodes occupies the compute engine for GPUTRACE_STANDIN_GRAPH_NS.
 *    Before anything runs the launch checks that every copy and memset
 *    still targets live memory (cudaErrorInvalidValue otherwise) and that
 *    no allocation of a previous launch is unfreed (cudaErrorInvalidValue,
 *    unless instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch,
 *    which frees them).
 *  - A graph launch into a capturing stream becomes a child graph node
 *    (a clone of the executable graph's snapshot).
 *  - Graph memory: an alloc node reserves a unique device address when it
 *    is added (memory.c); the memory is allocated when the node runs and
 *    freed by a free node, cudaFree or cudaFreeAsync. A graph with alloc or
 *    free nodes cannot be cloned or used as a child graph, and has at most
 *    one executable graph at a time (cudaErrorInvalidValue), as documented.
 *  - Handles come from pools (pool.c) and are never freed to malloc; one
 *    mutex guards all graph structure and the capture state (capture.c).
 *    Launches do not take it: graph objects are not thread-safe in CUDA
 *    either, so a program must not change an executable graph while it
 *    launches it. No lock is held while a host node's function runs.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"

static pthread_mutex_t graph_mu = PTHREAD_MUTEX_INITIALIZER;

void si_graph_lock(void) {
  pthread_mutex_lock(&graph_mu);
}

void si_graph_unlock(void) {
  pthread_mutex_unlock(&graph_mu);
}

/* Pool objects: the pool's free-list link is at offset 8 while free. */
struct si_graph {
  uint32_t magic;
  uint32_t capturing; /* a capture sequence is adding to it */
  void *pool_link;
  uint64_t id;            /* unique, never reused */
  struct si_node **nodes; /* in creation order */
  size_t n, cap;
  struct si_node **order; /* topological order: executable graphs' snapshots */
  unsigned mem;           /* its alloc and free nodes */
  unsigned execs;         /* its executable graphs alive (graphs with memory nodes) */
};

struct si_node {
  uint32_t magic;
  uint32_t pad;
  void *pool_link;
  uint64_t id;     /* unique, never reused */
  uint64_t orig;   /* the node it was cloned from, 0 if none */
  uint64_t upd;    /* the node cudaGraphExecUpdate last paired it with */
  uint64_t cap_id; /* the capture sequence that added it, 0 if none */
  struct si_graph *graph;
  struct si_node **deps;
  size_t ndeps;
  size_t index;   /* in graph->nodes */
  size_t pending; /* scratch: topological sort */
  unsigned mark;  /* scratch: reachability */
  struct si_node_desc d;
};

struct si_exec {
  uint32_t magic;
  uint32_t pad;
  void *pool_link;
  unsigned long long flags;
  struct si_graph *g;   /* the snapshot */
  struct si_graph *src; /* the graph it was instantiated from ... */
  uint64_t src_id;      /* ... if that one still has this id */
};

static struct si_pool graph_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                    .obj_size = sizeof(struct si_graph)};
static struct si_pool node_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                   .obj_size = sizeof(struct si_node)};
static struct si_pool exec_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                   .obj_size = sizeof(struct si_exec)};
static uint64_t next_id = 1; /* graph and node ids (graph_mu) */
static unsigned mark_gen;    /* reachability marks (graph_mu) */

struct si_graph *si_graph_resolve(cudaGraph_t h) {
  struct si_graph *g = (struct si_graph *)h;
  if (g == NULL || __atomic_load_n(&g->magic, __ATOMIC_ACQUIRE) != SI_MAGIC_GRAPH)
    return NULL;
  return g;
}

static struct si_node *node_resolve(cudaGraphNode_t h) {
  struct si_node *n = (struct si_node *)h;
  if (n == NULL || __atomic_load_n(&n->magic, __ATOMIC_ACQUIRE) != SI_MAGIC_NODE)
    return NULL;
  return n;
}

static struct si_exec *exec_resolve(cudaGraphExec_t h) {
  struct si_exec *x = (struct si_exec *)h;
  if (x == NULL || __atomic_load_n(&x->magic, __ATOMIC_ACQUIRE) != SI_MAGIC_GEXEC)
    return NULL;
  return x;
}

uint64_t si_graph_id(const struct si_graph *g) {
  return g->id;
}

void si_graph_set_capturing(struct si_graph *g, int on) {
  g->capturing = on != 0;
}

int si_graph_capturing(const struct si_graph *g) {
  return g->capturing != 0;
}

int si_node_in_graph(const struct si_node *n, const struct si_graph *g) {
  return n != NULL && __atomic_load_n(&n->magic, __ATOMIC_ACQUIRE) == SI_MAGIC_NODE &&
         n->graph == g;
}

void si_node_set_capture(struct si_node *n, uint64_t cap_id) {
  n->cap_id = cap_id;
}

void si_graphs_reset(void) {
  si_graph_lock();
  si_cap_reset();
  si_pool_reset(&graph_pool);
  si_pool_reset(&node_pool);
  si_pool_reset(&exec_pool);
  si_graph_unlock();
}

/* ---- structure (graph_mu held) ------------------------------------------------- */

struct si_graph *si_graph_new_locked(void) {
  struct si_graph *g = si_pool_get(&graph_pool);
  if (g == NULL)
    return NULL;
  g->id = next_id++;
  __atomic_store_n(&g->magic, SI_MAGIC_GRAPH, __ATOMIC_RELEASE);
  return g;
}

static int is_mem(enum cudaGraphNodeType t) {
  return t == cudaGraphNodeTypeMemAlloc || t == cudaGraphNodeTypeMemFree;
}

static void node_free_locked(struct si_node *n) {
  if (n->d.type == cudaGraphNodeTypeGraph)
    si_graph_free_locked(n->d.u.child);
  else if (is_mem(n->d.type))
    si_mem_graph_ref(n->d.u.mem.ptr, -1);
  free(n->deps);
  si_pool_put(&node_pool, n);
}

void si_graph_free_locked(struct si_graph *g) {
  for (size_t i = 0; i < g->n; i++)
    node_free_locked(g->nodes[i]);
  free(g->nodes);
  free(g->order);
  si_pool_put(&graph_pool, g);
}

static struct si_graph *clone_locked(const struct si_graph *src);

struct si_node *si_graph_add_locked(struct si_graph *g, const struct si_node_desc *d,
                                    struct si_node *const *deps, size_t n) {
  if (g->n == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 16;
    struct si_node **nodes = realloc(g->nodes, cap * sizeof(*nodes));
    if (nodes == NULL)
      return NULL;
    g->nodes = nodes;
    g->cap = cap;
  }
  struct si_node *node = si_pool_get(&node_pool);
  if (node == NULL)
    return NULL;
  node->d = *d;
  if (n != 0) {
    node->deps = malloc(n * sizeof(*deps));
    if (node->deps == NULL) {
      si_pool_put(&node_pool, node);
      return NULL;
    }
    memcpy(node->deps, deps, n * sizeof(*deps));
    node->ndeps = n;
  }
  if (d->type == cudaGraphNodeTypeGraph) {
    node->d.u.child = clone_locked(d->u.child);
    if (node->d.u.child == NULL) {
      free(node->deps);
      si_pool_put(&node_pool, node);
      return NULL;
    }
  } else if (is_mem(d->type)) {
    si_mem_graph_ref(d->u.mem.ptr, 1);
    g->mem++;
  }
  node->id = next_id++;
  node->graph = g;
  node->index = g->n;
  g->nodes[g->n++] = node;
  __atomic_store_n(&node->magic, SI_MAGIC_NODE, __ATOMIC_RELEASE);
  return node;
}

/* A deep copy: nodes in the same order, each remembering its original. */
static struct si_graph *clone_locked(const struct si_graph *src) {
  struct si_graph *g = si_graph_new_locked();
  if (g == NULL)
    return NULL;
  for (size_t i = 0; i < src->n; i++) {
    struct si_node *s = src->nodes[i];
    struct si_node *c = si_graph_add_locked(g, &s->d, NULL, 0);
    if (c == NULL)
      goto fail;
    c->orig = s->id;
    c->ndeps = s->ndeps; /* set below: a dependency may come later in order */
  }
  for (size_t i = 0; i < src->n; i++) {
    struct si_node *s = src->nodes[i], *c = g->nodes[i];
    if (s->ndeps == 0)
      continue;
    c->deps = malloc(s->ndeps * sizeof(*c->deps));
    if (c->deps == NULL)
      goto fail;
    for (size_t j = 0; j < s->ndeps; j++)
      c->deps[j] = g->nodes[s->deps[j]->index];
  }
  return g;
fail:
  si_graph_free_locked(g);
  return NULL;
}

/* Put g's nodes (and its child graphs') in a topological order: a node
 * after all its dependencies, breadth-first from the roots taken in
 * creation order (Kahn). -1: a cycle; -2: out of memory. */
static int order_locked(struct si_graph *g) {
  size_t n = g->n, edges = 0;
  free(g->order);
  g->order = NULL;
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++) {
    g->nodes[i]->pending = g->nodes[i]->ndeps;
    edges += g->nodes[i]->ndeps;
  }
  /* Dependents of each node, as index lists (CSR). */
  size_t *start = calloc(n + 1, sizeof(*start));
  size_t *adj = malloc((edges ? edges : 1) * sizeof(*adj));
  g->order = malloc(n * sizeof(*g->order));
  if (start == NULL || adj == NULL || g->order == NULL) {
    free(start);
    free(adj);
    return -2;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < g->nodes[i]->ndeps; j++)
      start[g->nodes[i]->deps[j]->index + 1]++;
  for (size_t i = 0; i < n; i++)
    start[i + 1] += start[i];
  size_t *fill = malloc(n * sizeof(*fill));
  if (fill == NULL) {
    free(start);
    free(adj);
    return -2;
  }
  memcpy(fill, start, n * sizeof(*fill));
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < g->nodes[i]->ndeps; j++)
      adj[fill[g->nodes[i]->deps[j]->index]++] = i;
  free(fill);
  size_t head = 0, tail = 0;
  for (size_t i = 0; i < n; i++)
    if (g->nodes[i]->pending == 0)
      g->order[tail++] = g->nodes[i];
  while (head < tail) {
    size_t u = g->order[head++]->index;
    for (size_t k = start[u]; k < start[u + 1]; k++)
      if (--g->nodes[adj[k]]->pending == 0)
        g->order[tail++] = g->nodes[adj[k]];
  }
  free(start);
  free(adj);
  if (tail != n)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (g->nodes[i]->d.type == cudaGraphNodeTypeGraph) {
      int rc = order_locked(g->nodes[i]->d.u.child);
      if (rc != 0)
        return rc;
    }
  return 0;
}

int si_graph_joined_locked(struct si_graph *g, uint64_t cap_id,
                           struct si_node *const *tips, size_t n) {
  unsigned gen = ++mark_gen;
  struct si_node **stack = malloc((g->n ? g->n : 1) * sizeof(*stack));
  if (stack == NULL)
    return 1; /* cannot tell: do not fail the capture for it */
  size_t top = 0;
  for (size_t i = 0; i < n; i++)
    if (tips[i]->mark != gen) {
      tips[i]->mark = gen;
      stack[top++] = tips[i];
    }
  while (top > 0) {
    struct si_node *v = stack[--top];
    for (size_t j = 0; j < v->ndeps; j++)
      if (v->deps[j]->mark != gen) {
        v->deps[j]->mark = gen;
        stack[top++] = v->deps[j];
      }
  }
  free(stack);
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->cap_id == cap_id && g->nodes[i]->mark != gen)
      return 0;
  return 1;
}

int si_graph_frees_locked(const struct si_graph *g, const void *ptr) {
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->d.type == cudaGraphNodeTypeMemFree &&
        g->nodes[i]->d.u.mem.ptr == ptr)
      return 1;
  return 0;
}

/* ---- node descriptions (the eager operations' checks) ------------------------- */

static cudaError_t kernel_desc(const struct cudaKernelNodeParams *p,
                               struct si_node_desc *d) {
  if (p == NULL || (p->kernelParams != NULL && p->extra != NULL))
    return cudaErrorInvalidValue;
  const struct si_func *f = si_func_lookup(p->func);
  cudaError_t e = si_launch_check(f, p->gridDim, p->blockDim, p->sharedMemBytes);
  if (e != cudaSuccess)
    return e;
  *d = (struct si_node_desc){.type = cudaGraphNodeTypeKernel,
                             .u.k = {f, p->func, p->gridDim, p->blockDim,
                                     p->sharedMemBytes, p->kernelParams, p->extra}};
  return cudaSuccess;
}

static cudaError_t copy_desc(struct si_copy *c, enum cudaMemcpyKind kind,
                             struct si_node_desc *d) {
  enum si_loc host = SI_LOC_PAGEABLE;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  if (c->width != 0 && c->height != 0 && c->depth != 0) {
    cudaError_t e = si_copy_check(c, &kind, &host, SI_COPY_ASYNC);
    if (e != cudaSuccess)
      return e;
  }
  *d = (struct si_node_desc){.type = cudaGraphNodeTypeMemcpy, .u.cp = {*c, kind, host}};
  return cudaSuccess;
}

/* Width in elements of elementSize (1, 2 or 4) bytes; pitch unused for one
 * row; device, managed or pinned memory aligned to the element size. */
static cudaError_t memset_desc(const struct cudaMemsetParams *p, struct si_node_desc *d) {
  if (p == NULL || p->dst == NULL || p->width == 0 || p->height == 0)
    return cudaErrorInvalidValue;
  unsigned elem = p->elementSize;
  if ((elem != 1 && elem != 2 && elem != 4) || (uintptr_t)p->dst % elem != 0 ||
      p->width > SIZE_MAX / elem)
    return cudaErrorInvalidValue;
  size_t row = p->width * elem;
  size_t pitch = p->height > 1 ? p->pitch : row;
  if (row > pitch || (p->height > 1 && (p->height - 1) > (SIZE_MAX - row) / pitch))
    return cudaErrorInvalidValue;
  const void *at = p->dst;
  enum si_loc l;
  cudaError_t e = si_locate(&at, (p->height - 1) * pitch + row, &l);
  if (e != cudaSuccess)
    return e;
  if (l == SI_LOC_PAGEABLE)
    return cudaErrorInvalidValue;
  *d = (struct si_node_desc){.type = cudaGraphNodeTypeMemset,
                             .u.ms = {(char *)(uintptr_t)at, pitch, pitch * p->height,
                                      p->width, p->height, 1, p->value, elem}};
  return cudaSuccess;
}

/* ---- adding nodes ----------------------------------------------------------------- */

/* pDependencies: nodes of g, no duplicates. */
static cudaError_t deps_check_locked(struct si_graph *g, const cudaGraphNode_t *deps,
                                     size_t n) {
  if (n != 0 && deps == NULL)
    return cudaErrorInvalidValue;
  for (size_t i = 0; i < n; i++) {
    if (!si_node_in_graph(node_resolve(deps[i]), g))
      return cudaErrorInvalidValue;
    for (size_t j = 0; j < i; j++)
      if (deps[j] == deps[i])
        return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                            const cudaGraphNode_t *deps, size_t n,
                            struct si_node_desc *d) {
  struct si_graph *g = si_graph_resolve(graph);
  if (out == NULL || g == NULL)
    return cudaErrorInvalidValue;
  si_graph_lock();
  cudaError_t e = deps_check_locked(g, deps, n);
  if (e == cudaSuccess && d->type == cudaGraphNodeTypeMemAlloc)
    e = si_mem_graph_reserve(&d->u.mem.ptr, d->u.mem.bytes, g->id);
  else if (e == cudaSuccess && d->type == cudaGraphNodeTypeMemFree)
    e = si_graph_frees_locked(g, d->u.mem.ptr)
            ? cudaErrorInvalidValue
            : si_mem_graph_free_check(d->u.mem.ptr, g->id);
  struct si_node *node = NULL;
  if (e == cudaSuccess) {
    node = si_graph_add_locked(g, d, (struct si_node *const *)deps, n);
    if (node == NULL)
      e = cudaErrorMemoryAllocation;
  }
  if (e != cudaSuccess && d->type == cudaGraphNodeTypeMemAlloc && d->u.mem.ptr != NULL)
    si_mem_graph_ref(d->u.mem.ptr, 0); /* release the unused reservation */
  si_graph_unlock();
  if (node != NULL)
    *out = (cudaGraphNode_t)node;
  return e;
}

SI_API cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) {
  if (pGraph == NULL || flags != 0)
    return si_ret(cudaErrorInvalidValue);
  si_graph_lock();
  struct si_graph *g = si_graph_new_locked();
  si_graph_unlock();
  if (g == NULL)
    return si_ret(cudaErrorMemoryAllocation);
  *pGraph = (cudaGraph_t)g;
  return si_ret(cudaSuccess);
}

SI_API cudaError_t cudaGraphAddKernelNode(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
    size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams) {
  struct si_node_desc d;
  cudaError_t e = kernel_desc(pNodeParams, &d);
  if (e == cudaSuccess)
    e = add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
  return si_ret(e);
}

static cudaError_t add_memcpy3d(cudaGraphNode_t *out, cudaGraph_t graph,
                                const cudaGraphNode_t *deps, size_t n,
                                const struct cudaMemcpy3DParms *p) {
  if (p == NULL)
    return cudaErrorInvalidValue;
  struct si_copy c;
  struct si_node_desc d;
  cudaError_t e = si_copy3d_build(p, &c);
  if (e == cudaSuccess)
    e = copy_desc(&c, p->kind, &d);
  return e ? e : add_node(out, graph, deps, n, &d);
}

SI_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies,
                                          size_t numDependencies,
                                          const struct cudaMemcpy3DParms *pCopyParams) {
  return si_ret(
      add_memcpy3d(pGraphNode, graph, pDependencies, numDependencies, pCopyParams));
}

SI_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode,
                                            cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies,
                                            size_t numDependencies, void *dst,
                                            const void *src, size_t count,
                                            enum cudaMemcpyKind kind) {
  struct si_copy c = {dst, count, count, src, count, count, count, 1, 1};
  struct si_node_desc d;
  cudaError_t e = copy_desc(&c, kind, &d);
  if (e == cudaSuccess)
    e = add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
  return si_ret(e);
}

SI_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies,
                                          size_t numDependencies,
                                          const struct cudaMemsetParams *pMemsetParams) {
  struct si_node_desc d;
  cudaError_t e = memset_desc(pMemsetParams, &d);
  if (e == cudaSuccess)
    e = add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
  return si_ret(e);
}

SI_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies,
                                        const struct cudaHostNodeParams *pNodeParams) {
  if (pNodeParams == NULL || pNodeParams->fn == NULL)
    return si_ret(cudaErrorInvalidValue);
  struct si_node_desc d = {.type = cudaGraphNodeTypeHost,
                           .u.host = {pNodeParams->fn, pNodeParams->userData}};
  return si_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &d));
}

SI_API cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode,
                                              cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies,
                                              size_t numDependencies,
                                              cudaGraph_t childGraph) {
  struct si_graph *child = si_graph_resolve(childGraph);
  /* A graph with memory nodes cannot be a child (its ownership would have
   * to move, which this API does not do). */
  if (child == NULL || childGraph == graph ||
      __atomic_load_n(&child->mem, __ATOMIC_RELAXED))
    return si_ret(cudaErrorInvalidValue);
  struct si_node_desc d = {.type = cudaGraphNodeTypeGraph, .u.child = child};
  return si_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &d));
}

SI_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                         const cudaGraphNode_t *pDependencies,
                                         size_t numDependencies) {
  struct si_node_desc d = {.type = cudaGraphNodeTypeEmpty};
  return si_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &d));
}

static cudaError_t add_event_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n, cudaEvent_t ev,
                                  enum cudaGraphNodeType type) {
  if (si_event_resolve(ev) == NULL)
    return cudaErrorInvalidValue;
  struct si_node_desc d = {.type = type, .u.ev = ev};
  return add_node(out, graph, deps, n, &d);
}

SI_API cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode,
                                               cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               size_t numDependencies,
                                               cudaEvent_t event) {
  return si_ret(add_event_node(pGraphNode, graph, pDependencies, numDependencies, event,
                               cudaGraphNodeTypeEventRecord));
}

SI_API cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode,
                                             cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies,
                                             size_t numDependencies, cudaEvent_t event) {
  return si_ret(add_event_node(pGraphNode, graph, pDependencies, numDependencies, event,
                               cudaGraphNodeTypeWaitEvent));
}

/* Device 0's pinned memory, no IPC handle types, access descriptors for
 * device 0 only. */
static cudaError_t alloc_params_check(const struct cudaMemAllocNodeParams *p) {
  if (p == NULL || p->bytesize == 0 ||
      p->poolProps.allocType != cudaMemAllocationTypePinned ||
      p->poolProps.handleTypes != cudaMemHandleTypeNone ||
      p->poolProps.location.type != cudaMemLocationTypeDevice ||
      (p->accessDescCount != 0 && p->accessDescs == NULL))
    return cudaErrorInvalidValue;
  if (p->poolProps.location.id != 0)
    return cudaErrorInvalidDevice;
  for (size_t i = 0; i < p->accessDescCount; i++)
    if (p->accessDescs[i].location.type != cudaMemLocationTypeDevice ||
        p->accessDescs[i].location.id != 0)
      return cudaErrorInvalidDevice;
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode,
                                            cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies,
                                            size_t numDependencies,
                                            struct cudaMemAllocNodeParams *nodeParams) {
  cudaError_t e = alloc_params_check(nodeParams);
  if (e != cudaSuccess)
    return si_ret(e);
  struct si_node_desc d = {.type = cudaGraphNodeTypeMemAlloc,
                           .u.mem = {NULL, nodeParams->bytesize}};
  e = add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
  if (e == cudaSuccess)
    nodeParams->dptr = d.u.mem.ptr;
  return si_ret(e);
}

SI_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *pDependencies,
                                           size_t numDependencies, void *dptr) {
  struct si_node_desc d = {.type = cudaGraphNodeTypeMemFree, .u.mem = {dptr, 0}};
  return si_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &d));
}

static int edge_default(const cudaGraphEdgeData *e) {
  static const cudaGraphEdgeData zero;
  return memcmp(e, &zero, sizeof(zero)) == 0;
}

static int depends_on(const struct si_node *to, const struct si_node *from) {
  for (size_t j = 0; j < to->ndeps; j++)
    if (to->deps[j] == from)
      return 1;
  return 0;
}

/* to[i] depends on from[i]: nodes of g, distinct, no edge twice; only the
 * default edge type (no programmatic ports) is modelled. All or nothing. */
static cudaError_t add_deps(cudaGraph_t graph, const cudaGraphNode_t *from,
                            const cudaGraphNode_t *to, const cudaGraphEdgeData *data,
                            size_t n) {
  struct si_graph *g = si_graph_resolve(graph);
  if (g == NULL || (n != 0 && (from == NULL || to == NULL)))
    return cudaErrorInvalidValue;
  cudaError_t e = cudaSuccess;
  si_graph_lock();
  for (size_t i = 0; i < n && e == cudaSuccess; i++) {
    struct si_node *f = node_resolve(from[i]), *t = node_resolve(to[i]);
    if (!si_node_in_graph(f, g) || !si_node_in_graph(t, g) || f == t ||
        depends_on(t, f) || (data != NULL && !edge_default(&data[i])))
      e = cudaErrorInvalidValue;
    for (size_t j = 0; j < i && e == cudaSuccess; j++)
      if (from[j] == from[i] && to[j] == to[i])
        e = cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < n && e == cudaSuccess; i++) {
    struct si_node *t = (struct si_node *)to[i];
    struct si_node **deps = realloc(t->deps, (t->ndeps + 1) * sizeof(*deps));
    if (deps == NULL) {
      e = cudaErrorMemoryAllocation;
      break;
    }
    t->deps = deps;
    t->deps[t->ndeps++] = (struct si_node *)from[i];
  }
  si_graph_unlock();
  return e;
}

cudaError_t si_graph_add_deps(cudaGraph_t graph, const cudaGraphNode_t *from,
                              const cudaGraphNode_t *to,
                              const cudaGraphEdgeData *edgeData, size_t numDependencies) {
  return add_deps(graph, from, to, edgeData, numDependencies);
}

#if SI_CUDART_MAJOR >= 13 /* CUDA 12's takes no edge data (compat12.c) */
SI_API cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
                                            const cudaGraphNode_t *from,
                                            const cudaGraphNode_t *to,
                                            const cudaGraphEdgeData *edgeData,
                                            size_t numDependencies) {
  return si_ret(add_deps(graph, from, to, edgeData, numDependencies));
}
#endif

/* ---- queries --------------------------------------------------------------------------
 */

static cudaError_t list_nodes(cudaGraph_t graph, cudaGraphNode_t *out, size_t *num,
                              int roots) {
  struct si_graph *g = si_graph_resolve(graph);
  if (g == NULL || num == NULL)
    return cudaErrorInvalidValue;
  si_graph_lock();
  size_t k = 0;
  for (size_t i = 0; i < g->n; i++) {
    if (roots && g->nodes[i]->ndeps != 0)
      continue;
    if (out != NULL && k < *num)
      out[k] = (cudaGraphNode_t)g->nodes[i];
    k++;
  }
  si_graph_unlock();
  if (out != NULL) { /* the rest NULL, and how many were returned */
    for (size_t i = k; i < *num; i++)
      out[i] = NULL;
    if (k > *num)
      k = *num;
  }
  *num = k;
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
                                     size_t *numNodes) {
  return si_ret(list_nodes(graph, nodes, numNodes, 0));
}

SI_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes,
                                         size_t *pNumRootNodes) {
  return si_ret(list_nodes(graph, pRootNodes, pNumRootNodes, 1));
}

SI_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node,
                                        enum cudaGraphNodeType *pType) {
  struct si_node *n = node_resolve(node);
  if (n == NULL || pType == NULL)
    return si_ret(cudaErrorInvalidValue);
  *pType = n->d.type;
  return si_ret(cudaSuccess);
}

SI_API cudaError_t cudaGraphKernelNodeGetParams(
    cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams) {
  struct si_node *n = node_resolve(node);
  if (n == NULL || pNodeParams == NULL || n->d.type != cudaGraphNodeTypeKernel)
    return si_ret(cudaErrorInvalidValue);
  si_graph_lock();
  *pNodeParams = (struct cudaKernelNodeParams){(void *)(uintptr_t)n->d.u.k.func,
                                               n->d.u.k.grid,
                                               n->d.u.k.block,
                                               n->d.u.k.shmem,
                                               n->d.u.k.args,
                                               n->d.u.k.extra};
  si_graph_unlock();
  return si_ret(cudaSuccess);
}

SI_API cudaError_t cudaGraphKernelNodeSetParams(
    cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams) {
  struct si_node *n = node_resolve(node);
  if (n == NULL || n->d.type != cudaGraphNodeTypeKernel)
    return si_ret(cudaErrorInvalidValue);
  struct si_node_desc d;
  cudaError_t e = kernel_desc(pNodeParams, &d);
  if (e == cudaSuccess) {
    si_graph_lock();
    n->d = d;
    si_graph_unlock();
  }
  return si_ret(e);
}

SI_API cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph) {
  struct si_graph *g = si_graph_resolve(originalGraph);
  if (pGraphClone == NULL || g == NULL)
    return si_ret(cudaErrorInvalidValue);
  si_graph_lock();
  cudaError_t e = cudaSuccess;
  struct si_graph *c = NULL;
  if (g->mem != 0) /* documented: a graph with memory nodes cannot be cloned */
    e = cudaErrorInvalidValue;
  else if ((c = clone_locked(g)) == NULL)
    e = cudaErrorMemoryAllocation;
  si_graph_unlock();
  if (c != NULL)
    *pGraphClone = (cudaGraph_t)c;
  return si_ret(e);
}

SI_API cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  struct si_graph *g = si_graph_resolve(graph);
  if (g == NULL)
    return si_ret(cudaErrorInvalidValue);
  cudaError_t e = cudaSuccess;
  si_graph_lock();
  if (g->capturing) /* a capture sequence builds it: only it may end it */
    e = cudaErrorInvalidValue;
  else
    si_graph_free_locked(g);
  si_graph_unlock();
  return si_ret(e);
}

/* ---- executable graphs ------------------------------------------------------------- */

static int device_launchable(enum cudaGraphNodeType t) {
  return t == cudaGraphNodeTypeKernel || t == cudaGraphNodeTypeMemcpy ||
         t == cudaGraphNodeTypeMemset || t == cudaGraphNodeTypeGraph;
}

static cudaError_t upload(cudaGraphExec_t exec, cudaStream_t stream, int pt);

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph,
                               unsigned long long flags, int with_params,
                               cudaGraphNode_t *err_node,
                               cudaGraphInstantiateResult *result) {
  const unsigned long long valid =
      cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
      cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
  *err_node = NULL;
  *result = cudaGraphInstantiateError;
  struct si_graph *g = si_graph_resolve(graph);
  if (out == NULL || g == NULL || (flags & ~valid) ||
      ((flags & cudaGraphInstantiateFlagUpload) && !with_params) ||
      ((flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) &&
       (flags & cudaGraphInstantiateFlagDeviceLaunch)))
    return cudaErrorInvalidValue;
  si_graph_lock();
  cudaError_t e = cudaSuccess;
  struct si_exec *x = NULL;
  struct si_graph *snap = NULL;
  if (g->mem != 0 && g->execs != 0) { /* documented: one executable at a time */
    e = cudaErrorInvalidValue;
    goto out;
  }
  if (flags & cudaGraphInstantiateFlagDeviceLaunch) {
    e = g->n == 0 ? cudaErrorInvalidValue : cudaSuccess;
    for (size_t i = 0; i < g->n && e == cudaSuccess; i++)
      if (!device_launchable(g->nodes[i]->d.type)) {
        *result = cudaGraphInstantiateNodeOperationNotSupported;
        *err_node = (cudaGraphNode_t)g->nodes[i];
        e = cudaErrorInvalidValue;
      }
    if (e != cudaSuccess)
      goto out;
  }
  x = si_pool_get(&exec_pool);
  snap = x ? clone_locked(g) : NULL;
  if (snap == NULL) {
    e = cudaErrorMemoryAllocation;
    goto out;
  }
  int rc = order_locked(snap);
  if (rc != 0) {
    e = rc == -1 ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
    if (rc == -1)
      *result = cudaGraphInstantiateInvalidStructure;
    goto out;
  }
  x->g = snap;
  x->src = g;
  x->src_id = g->id;
  x->flags = flags;
  if (g->mem != 0)
    g->execs++;
  __atomic_store_n(&x->magic, SI_MAGIC_GEXEC, __ATOMIC_RELEASE);
  *out = (cudaGraphExec_t)x;
  *result = cudaGraphInstantiateSuccess;
out:
  if (e != cudaSuccess) {
    if (snap != NULL)
      si_graph_free_locked(snap);
    if (x != NULL)
      si_pool_put(&exec_pool, x);
  }
  si_graph_unlock();
  return e;
}

SI_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                        unsigned long long flags) {
  cudaGraphNode_t node;
  cudaGraphInstantiateResult result;
  return si_ret(instantiate(pGraphExec, graph, flags, 0, &node, &result));
}

SI_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec,
                                                 cudaGraph_t graph,
                                                 unsigned long long flags) {
  cudaGraphNode_t node;
  cudaGraphInstantiateResult result;
  return si_ret(instantiate(pGraphExec, graph, flags, 0, &node, &result));
}

static cudaError_t instantiate_params(cudaGraphExec_t *out, cudaGraph_t graph,
                                      cudaGraphInstantiateParams *p, int pt) {
  if (p == NULL)
    return cudaErrorInvalidValue;
  cudaError_t e = instantiate(out, graph, p->flags, 1, &p->errNode_out, &p->result_out);
  if (e == cudaSuccess && (p->flags & cudaGraphInstantiateFlagUpload))
    e = upload(*out, p->uploadStream, pt);
  return e;
}

SI_API cudaError_t
cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                               cudaGraphInstantiateParams *instantiateParams) {
  return si_ret(instantiate_params(pGraphExec, graph, instantiateParams, 0));
}

SI_API cudaError_t
cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                    cudaGraphInstantiateParams *instantiateParams) {
  return si_ret(instantiate_params(pGraphExec, graph, instantiateParams, 1));
}

SI_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  struct si_exec *x = exec_resolve(graphExec);
  if (x == NULL)
    return si_ret(cudaErrorInvalidValue);
  si_graph_lock();
  struct si_graph *src = x->src;
  if (__atomic_load_n(&src->magic, __ATOMIC_ACQUIRE) == SI_MAGIC_GRAPH &&
      src->id == x->src_id && src->mem != 0 && src->execs != 0)
    src->execs--;
  si_graph_free_locked(x->g);
  si_graph_unlock();
  si_pool_put(&exec_pool, x);
  return si_ret(cudaSuccess);
}

/* The node of executable graph x that stands for node n of the graph it
 * was instantiated from (or last updated from). */
static struct si_node *exec_node_locked(struct si_exec *x, const struct si_node *n) {
  for (size_t i = 0; i < x->g->n; i++) {
    struct si_node *c = x->g->nodes[i];
    if (c->orig == n->id || c->upd == n->id)
      return c;
  }
  return NULL;
}

SI_API cudaError_t
cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                 const struct cudaKernelNodeParams *pNodeParams) {
  struct si_exec *x = exec_resolve(hGraphExec);
  struct si_node *n = node_resolve(node);
  if (x == NULL || n == NULL || n->d.type != cudaGraphNodeTypeKernel)
    return si_ret(cudaErrorInvalidValue);
  struct si_node_desc d;
  cudaError_t e = kernel_desc(pNodeParams, &d);
  if (e != cudaSuccess)
    return si_ret(e);
  si_graph_lock();
  struct si_node *c = exec_node_locked(x, n);
  if (c == NULL || c->d.type != cudaGraphNodeTypeKernel)
    e = cudaErrorInvalidValue;
  else
    c->d = d;
  si_graph_unlock();
  return si_ret(e);
}

/* Whether executable graph snapshot a can take b's parameters: the same
 * node count, types and dependencies (paired in creation order), and only
 * parameter changes an update allows. */
static enum cudaGraphExecUpdateResult update_check(const struct si_graph *a,
                                                   const struct si_graph *b,
                                                   cudaGraphExecUpdateResultInfo *info) {
  if (a->n != b->n)
    return cudaGraphExecUpdateErrorTopologyChanged; /* errorNode NULL */
  for (size_t i = 0; i < a->n; i++) {
    const struct si_node *x = a->nodes[i], *y = b->nodes[i];
    info->errorNode = (cudaGraphNode_t)y;
    if (x->d.type != y->d.type)
      return cudaGraphExecUpdateErrorNodeTypeChanged;
    if (x->ndeps != y->ndeps)
      return cudaGraphExecUpdateErrorTopologyChanged;
    for (size_t j = 0; j < x->ndeps; j++)
      if (x->deps[j]->index != y->deps[j]->index) {
        info->errorFromNode = (cudaGraphNode_t)y->deps[j];
        return cudaGraphExecUpdateErrorTopologyChanged;
      }
    const struct si_node_desc *p = &x->d, *q = &y->d;
    switch (p->type) {
    case cudaGraphNodeTypeMemcpy: /* the memory types cannot change */
      if (p->u.cp.kind != q->u.cp.kind)
        return cudaGraphExecUpdateErrorParametersChanged;
      break;
    case cudaGraphNodeTypeMemset: /* 2D: only the address and the value */
      if (p->u.ms.elem != q->u.ms.elem ||
          ((p->u.ms.height > 1 || q->u.ms.height > 1) &&
           (p->u.ms.width != q->u.ms.width || p->u.ms.height != q->u.ms.height ||
            p->u.ms.pitch != q->u.ms.pitch)))
        return cudaGraphExecUpdateErrorParametersChanged;
      break;
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
      if (p->u.mem.ptr != q->u.mem.ptr || p->u.mem.bytes != q->u.mem.bytes)
        return cudaGraphExecUpdateErrorParametersChanged;
      break;
    case cudaGraphNodeTypeGraph: {
      cudaGraphExecUpdateResultInfo inner = {0};
      enum cudaGraphExecUpdateResult r = update_check(p->u.child, q->u.child, &inner);
      if (r != cudaGraphExecUpdateSuccess)
        return r;
      break;
    }
    default:
      break;
    }
  }
  info->errorNode = NULL;
  return cudaGraphExecUpdateSuccess;
}

static void update_apply(struct si_graph *a, const struct si_graph *b) {
  for (size_t i = 0; i < a->n; i++) {
    struct si_node *x = a->nodes[i];
    const struct si_node *y = b->nodes[i];
    x->upd = y->id;
    if (x->d.type == cudaGraphNodeTypeGraph)
      update_apply(x->d.u.child, y->d.u.child);
    else
      x->d = y->d; /* alloc/free nodes: the same address, so the same references */
  }
}

SI_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                       cudaGraphExecUpdateResultInfo *resultInfo) {
  struct si_exec *x = exec_resolve(hGraphExec);
  struct si_graph *g = si_graph_resolve(hGraph);
  cudaGraphExecUpdateResultInfo info = {cudaGraphExecUpdateError, NULL, NULL};
  cudaError_t e = cudaErrorInvalidValue;
  if (x != NULL && g != NULL) {
    si_graph_lock();
    info.result = update_check(x->g, g, &info);
    if (info.result == cudaGraphExecUpdateSuccess)
      update_apply(x->g, g);
    si_graph_unlock();
    e = info.result == cudaGraphExecUpdateSuccess ? cudaSuccess
                                                  : cudaErrorGraphExecUpdateFailure;
  }
  if (resultInfo != NULL)
    *resultInfo = info;
  return si_ret(e);
}

/* Nothing to upload; ordered in the stream (so refused in a capturing one). */
static cudaError_t upload(cudaGraphExec_t exec, cudaStream_t stream, int pt) {
  if (exec_resolve(exec) == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  int captured;
  if (SI_UNLIKELY(si_cap_any()))
    return si_cap_op(s, NULL, cudaErrorStreamCaptureUnsupported, &captured);
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return si_ret(upload(graphExec, stream, 0));
}

SI_API cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return si_ret(upload(graphExec, stream, 1));
}

/* ---- launch
 * ---------------------------------------------------------------------------- */

/* Every copy and memset of g (and its children) still targets live memory. */
static cudaError_t check_ranges(const struct si_graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    const struct si_node_desc *d = &g->nodes[i]->d;
    cudaError_t e = cudaSuccess;
    if (d->type == cudaGraphNodeTypeMemcpy && d->u.cp.c.width && d->u.cp.c.height &&
        d->u.cp.c.depth) {
      struct si_copy c = d->u.cp.c;
      enum cudaMemcpyKind kind = d->u.cp.kind;
      enum si_loc host;
      e = si_copy_check(&c, &kind, &host, SI_COPY_ASYNC);
    } else if (d->type == cudaGraphNodeTypeMemset) {
      const void *at = d->u.ms.dst;
      enum si_loc l;
      size_t row = d->u.ms.width * d->u.ms.elem;
      e = si_locate(&at, (d->u.ms.height - 1) * d->u.ms.pitch + row, &l);
      if (e == cudaSuccess && l == SI_LOC_PAGEABLE)
        e = cudaErrorInvalidValue;
    } else if (d->type == cudaGraphNodeTypeGraph) {
      e = check_ranges(d->u.child);
    }
    if (e != cudaSuccess)
      return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

/* Before a launch runs anything: allocations of an earlier launch freed (or
 * freed now with cudaGraphInstantiateFlagAutoFreeOnLaunch), room for this
 * launch's, and live memory under every copy and memset. */
static cudaError_t launch_prepare(const struct si_exec *x) {
  const struct si_graph *g = x->g;
  uint64_t need = 0;
  int autofree = (x->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0;
  for (size_t i = 0; i < g->n && g->mem != 0; i++) {
    const struct si_node_desc *d = &g->nodes[i]->d;
    if (d->type != cudaGraphNodeTypeMemAlloc)
      continue;
    if (!autofree && si_mem_graph_live(d->u.mem.ptr))
      return cudaErrorInvalidValue;
    need += d->u.mem.bytes;
  }
  for (size_t i = 0; i < g->n && g->mem != 0 && autofree; i++)
    if (g->nodes[i]->d.type == cudaGraphNodeTypeMemAlloc &&
        si_mem_graph_live(g->nodes[i]->d.u.mem.ptr))
      (void)si_mem_graph_unmap(g->nodes[i]->d.u.mem.ptr);
  if (need != 0 && !si_mem_fits(need))
    return cudaErrorMemoryAllocation;
  return check_ranges(g);
}

static void memset_run(const struct si_node_desc *d) {
  const unsigned elem = d->u.ms.elem, v = d->u.ms.value;
  for (size_t z = 0; z < d->u.ms.depth; z++)
    for (size_t r = 0; r < d->u.ms.height; r++) {
      char *row = d->u.ms.dst + z * d->u.ms.slice + r * d->u.ms.pitch;
      if (elem == 1) {
        memset(row, (int)(v & 0xffu), d->u.ms.width);
      } else if (elem == 2) {
        uint16_t w = (uint16_t)v;
        for (size_t k = 0; k < d->u.ms.width; k++)
          memcpy(row + 2 * k, &w, 2);
      } else {
        uint32_t w = v;
        for (size_t k = 0; k < d->u.ms.width; k++)
          memcpy(row + 4 * k, &w, 4);
      }
    }
}

/* Run g's nodes in order on s (graph_mu not held: host functions run). A
 * launch submits its nodes at once: each is queued as submitted at *sub,
 * the launch's time, or the time the last host node returned (so the
 * launching thread's own delays do not open gaps between them). */
static void run_graph(const struct si_graph *g, struct si_stream *s, uint64_t *sub,
                      uint32_t gid) {
  const struct si_config *cfg = si_config();
  int timeline = cfg->timeline;
  for (size_t i = 0; i < g->n; i++) {
    const struct si_node_desc *d = &g->order[i]->d;
    uint64_t nid = g->order[i]->id;
    switch (d->type) {
    case cudaGraphNodeTypeKernel:
      if (timeline) {
        uint64_t dur = si_dur_kernel(d->u.k.grid, d->u.k.block);
        uint64_t end = si_tl_enqueue_at(s, SI_ENG_COMPUTE, dur, 0, *sub);
        si_cupti_kernel(d->u.k.f, d->u.k.grid, d->u.k.block, d->u.k.shmem, s, end, dur,
                        gid, nid);
      }
      break;
    case cudaGraphNodeTypeMemcpy: {
      const struct si_copy *c = &d->u.cp.c;
      uint64_t bytes = (uint64_t)c->width * c->height * c->depth;
      if (bytes == 0)
        break;
      if (timeline && d->u.cp.kind != cudaMemcpyHostToHost) { /* the host does not wait */
        int engine;
        uint64_t dur = si_copy_cost(bytes, d->u.cp.kind, d->u.cp.host, &engine);
        uint64_t end = si_tl_enqueue_at(s, engine, dur, 0, *sub);
        si_cupti_bytes(SI_CUPTI_MEMCPY, si_cupti_dir(d->u.cp.kind, 0),
                       d->u.cp.host == SI_LOC_PINNED, bytes, s, end, dur, gid, nid);
      }
      si_copy_move(c);
      break;
    }
    case cudaGraphNodeTypeMemset:
      if (timeline) {
        uint64_t bytes =
            (uint64_t)d->u.ms.width * d->u.ms.elem * d->u.ms.height * d->u.ms.depth;
        uint64_t dur = si_dur_bytes(bytes, cfg->memset_gbps);
        uint64_t end = si_tl_enqueue_at(s, SI_ENG_COMPUTE, dur, 0, *sub);
        si_cupti_bytes(SI_CUPTI_MEMSET, 0, 0, bytes, s, end, dur, gid, nid);
      }
      memset_run(d);
      break;
    case cudaGraphNodeTypeHost: /* as cudaLaunchHostFunc: after s's earlier work */
      if (timeline)
        si_wait_until_precise(si_tl_enqueue_at(s, SI_ENG_NONE, 0, 0, *sub));
      d->u.host.fn(d->u.host.data);
      if (timeline) {
        *sub = si_now();
        si_tl_extend(s, *sub);
      }
      break;
    case cudaGraphNodeTypeGraph:
      run_graph(d->u.child, s, sub, gid);
      break;
    case cudaGraphNodeTypeEventRecord: {
      struct si_event *e = si_event_resolve(d->u.ev);
      if (e != NULL)
        si_event_stamp(e, timeline ? si_tl_enqueue_at(s, SI_ENG_NONE, 0, 0, *sub)
                                   : si_now());
      break;
    }
    case cudaGraphNodeTypeWaitEvent: {
      struct si_event *e = si_event_resolve(d->u.ev);
      uint64_t ts = e != NULL ? si_event_ts(e) : 0;
      if (ts != 0 && timeline)
        si_tl_extend(s, ts);
      break;
    }
    case cudaGraphNodeTypeMemAlloc:
      (void)si_mem_graph_map(d->u.mem.ptr);
      break;
    case cudaGraphNodeTypeMemFree:
      (void)si_mem_graph_unmap(d->u.mem.ptr);
      break;
    default: /* empty */
      break;
    }
  }
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream,
                                int per_thread) {
  struct si_exec *x = exec_resolve(exec);
  if (x == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any())) { /* a child graph node of the snapshot */
    struct si_node_desc d = {.type = cudaGraphNodeTypeGraph, .u.child = x->g};
    int captured;
    cudaError_t e =
        si_cap_op(s, x->g->mem ? NULL : &d, cudaErrorStreamCaptureUnsupported, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  cudaError_t e = launch_prepare(x);
  if (e != cudaSuccess)
    return e;
  uint64_t sub = si_now();
  run_graph(x->g, s, &sub, (uint32_t)x->g->id);
  if (x->g->n == 0 && si_config()->timeline)
    si_tl_enqueue_at(s, SI_ENG_COMPUTE, si_config()->graph_ns, 0, sub);
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  SI_CUPTI_API("cudaGraphLaunch");
  return si_ret(graph_launch(graphExec, stream, 0));
}

SI_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  SI_CUPTI_API("cudaGraphLaunch_ptsz");
  return si_ret(graph_launch(graphExec, stream, 1));
}

/* No memory is cached for graphs: freed graph memory is returned at once. */
SI_API cudaError_t cudaDeviceGraphMemTrim(int device) {
  return si_ret(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

/* ---- ids for CUPTI (cupti_attach.c) ---- */

uint64_t si_graph_node_tools_id(const void *node) {
  si_graph_lock();
  struct si_node *n = node_resolve((cudaGraphNode_t)node);
  uint64_t id = n ? n->id : 0;
  si_graph_unlock();
  return id;
}

uint32_t si_graph_tools_id(const void *graph) {
  si_graph_lock();
  struct si_graph *g = si_graph_resolve((cudaGraph_t)graph);
  uint32_t id = g ? (uint32_t)g->id : 0;
  si_graph_unlock();
  return id;
}
