/* hooks_graph.c — building graphs: instantiation, update, clone, upload,
 * destruction, nodes added explicitly and kernel nodes' parameters set
 * (runtime and driver), and the driver's stream-capture twins. Stream
 * capture itself is capture.c's, the profiler range calls range.c's.
 *
 * Contract:
 *  - Each hook has the exact signature of the entry point it is named after
 *    (cuda_runtime_api.h of CUDA 12 and 13; the cuda.h symbols its #defines
 *    name: cuStreamBeginCapture -> cuStreamBeginCapture_v2(_ptsz),
 *    cuGraphInstantiate -> cuGraphInstantiateWithFlags, cuGraphAddKernelNode
 *    -> cuGraphAddKernelNode_v2, cuGraph(Exec)KernelNodeSetParams ->
 *    cuGraph(Exec)KernelNodeSetParams_v2, cuGraphExecUpdate ->
 *    cuGraphExecUpdate_v2, cuStreamBeginCaptureToGraph(_ptsz)), forwards to
 *    the real function and returns its result and errno untouched. Every
 *    call is recorded, failed ones too; what a call writes through a
 *    pointer (a graph, an exec, a node, an allocation) is read only after
 *    it succeeded, 0 otherwise. No hook here makes a CUDA call of its own
 *    (the memcpy nodes' cudaMemcpyDefault and array queries are
 *    hooks_copy.c's, made as for the copy hooks).
 *  - GRAPH records (schema.h struct gt_graph_args; fields not named are 0):
 *     cudaGraphInstantiate, cudaGraphInstantiateWithFlags,
 *       cuGraphInstantiateWithFlags: graph, exec (made), mode = the flags;
 *     cudaGraphInstantiateWithParams(_ptsz), cuGraphInstantiateWithParams
 *       (_ptsz): graph, exec (made), mode = the params' flags, stream = their
 *       upload stream, node = errNode_out and arg = result_out (the
 *       cudaGraphInstantiateResult) as the call left them; result: the
 *       call's return value;
 *     cudaGraphExecUpdate, cuGraphExecUpdate_v2: exec, graph; node = the
 *       result info's errorNode and arg = its result (cudaGraphExecUpdate
 *       Result) when the call succeeded or failed with
 *       cudaErrorGraphExecUpdateFailure (the cases that fill it);
 *     cudaGraphClone: graph (the original), arg = the clone;
 *     cudaGraphAddChildGraphNode: graph, node, arg = the child graph;
 *       cudaGraphAddEmptyNode: graph, node (both GT_F_NODE);
 *     cudaGraphUpload(_ptsz), cuGraphUpload(_ptsz): exec, stream as passed
 *       (GT_F_ASYNC);
 *     cudaGraphExecDestroy, cuGraphExecDestroy: exec; cudaGraphDestroy,
 *       cuGraphDestroy: graph.
 *  - Nodes added explicitly are records of the work they describe, flagged
 *    GT_F_NODE (apis.h GT_AF_NODE), with the graph in the payload's stream
 *    field, corr 0, never timed on the device; a kernel node's handle is
 *    kept as its low 32 bits in the launch payload's node field (no room
 *    for more), the others' not at all:
 *     cudaGraphAddKernelNode: LAUNCH, kernel = func (a stub or a
 *       cudaKernel_t, as cudaLaunchKernel records it), grid, block,
 *       shared_mem = sharedMemBytes, node = the node made (0 when it
 *       failed); cuGraphAddKernelNode_v2: kernel = func, or kern when func
 *       is NULL;
 *     cudaGraphAddHostNode: LAUNCH, kernel = the function, GT_F_HOST_FN;
 *     cudaGraphAddMemcpyNode: MEMCPY as cudaMemcpy3D records its
 *       cudaMemcpy3DParms (hooks_copy3d.c: bytes = extent width x height x
 *       depth, times the array's element size when an array takes part);
 *     cudaGraphAddMemcpyNode1D: MEMCPY dst, src, bytes = count, kind;
 *       both copies: dir from the kind (cudaMemcpyDefault resolved after a
 *       successful call), pinned / pageable as the copy hooks tell them;
 *     cudaGraphAddMemsetNode: MEMSET ptr, value, width = elementSize x width
 *       (bytes per row, as cudaMemset2D's), height, bytes = elementSize x
 *       width x height;
 *     cudaGraphAddMemAllocNode: ALLOC ptr = the params' dptr after a
 *       successful call, bytes = bytesize, memory device;
 *       cudaGraphAddMemFreeNode: FREE ptr, memory device.
 *  - A kernel node's parameters set (apis.h GT_AF_EDIT): a LAUNCH record
 *    as the node's (kernel, grid, block, shared_mem of the new parameters,
 *    GT_F_NODE, node = the node named), stream = the executable
 *    (cudaGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams_v2)
 *    or 0 (cudaGraphKernelNodeSetParams, cuGraphKernelNodeSetParams_v2: the
 *    call does not name the graph, and asking for it would be a CUDA call).
 *  - cuStreamBeginCapture_v2(_ptsz), cuStreamBeginCaptureToGraph(_ptsz),
 *    cuStreamEndCapture(_ptsz): the runtime capture hooks' bodies (capture.h
 *    GT_BEGIN_CAPTURE / GT_END_CAPTURE): the same table, bit and GRAPH
 *    records (ToGraph: graph = the graph captured into). Called from inside
 *    another hook — libcudart making its own capture calls through the
 *    driver — they forward untouched: that hook keeps the books and
 *    records.
 */
#include "capture.h"
#include "hooks_copy.h"
#include "hooks_driver.h"

static inline uint64_t h64(const void *p) {
  return (uint64_t)(uintptr_t)p;
}

/* What a successful call wrote through `out` (a handle), else 0. */
static inline uint64_t out_handle(int r, void *const *out) {
  return r == 0 && out != NULL ? (uint64_t)(uintptr_t)*out : 0;
}

/* ---- GRAPH records ---- */

static void emit_graph(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, int r,
                       const struct gt_graph_args *g) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.graph = *g;
  gt_emit(&rec);
}

/* emit_graph of the hook `name`'s record, t0, t1 and r in scope; `...`
 * are designated initializers of struct gt_graph_args (a macro: those can
 * only be written in an initializer). */
#define GRAPH_EMIT(name, flags, ...)                                                     \
  emit_graph(GT_API_##name, flags, t0, t1, r, &(const struct gt_graph_args){__VA_ARGS__})
/* The same for the api number `api` (no flags). */
#define GRAPH_EMIT_API(api, ...)                                                         \
  emit_graph(api, 0, t0, t1, r, &(const struct gt_graph_args){__VA_ARGS__})

/* ---- instantiation ---- */

/* The HOOK_* and DRV_* macros below define the hooks they are given
 * (macros: shim.h), one per twin. */

#define HOOK_INSTANTIATE(name)                                                           \
  GT_EXPORT cudaError_t name(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,             \
                             unsigned long long flags) {                                 \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(pGraphExec, graph, flags),                                 \
                  GRAPH_EMIT(name, 0, .graph = h64(graph),                               \
                             .exec = out_handle(r, pGraphExec),                          \
                             .mode = (uint32_t)flags));                                  \
  }
HOOK_INSTANTIATE(cudaGraphInstantiate)
HOOK_INSTANTIATE(cudaGraphInstantiateWithFlags)

#define HOOK_INSTANTIATE_PARAMS(name)                                                    \
  GT_EXPORT cudaError_t name(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,             \
                             cudaGraphInstantiateParams *p) {                            \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(pGraphExec, graph, p),                                     \
                  GRAPH_EMIT(name, 0, .graph = h64(graph),                               \
                             .exec = out_handle(r, pGraphExec),                          \
                             .mode = p ? (uint32_t)p->flags : 0,                         \
                             .stream = p ? h64(p->uploadStream) : 0,                     \
                             .node = p ? h64(p->errNode_out) : 0,                        \
                             .arg = p ? (uint32_t)p->result_out : 0));                   \
  }
HOOK_INSTANTIATE_PARAMS(cudaGraphInstantiateWithParams)
HOOK_INSTANTIATE_PARAMS(cudaGraphInstantiateWithParams_ptsz)

/* Whether an update call filled its result info: it succeeded or failed
 * with cudaErrorGraphExecUpdateFailure (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
 * is the same number). */
static inline int update_filled(int r, const void *info) {
  return info != NULL && (r == 0 || r == cudaErrorGraphExecUpdateFailure);
}

/* An update's record: `err_node` and `result` from the result info where
 * the call filled it, else NULL and 0. */
static void emit_update(unsigned api, uint64_t t0, uint64_t t1, int r, const void *exec,
                        const void *graph, const void *err_node, int result) {
  GRAPH_EMIT_API(api, .exec = h64(exec), .graph = h64(graph), .node = h64(err_node),
                 .arg = (uint32_t)result);
}

GT_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                          cudaGraphExecUpdateResultInfo *info) {
  GT_REAL(cudaGraphExecUpdate);
  GT_TRACE_CALL(real_cudaGraphExecUpdate(exec, graph, info),
                emit_update(GT_API_cudaGraphExecUpdate, t0, t1, r, exec, graph,
                            update_filled(r, info) ? info->errorNode : NULL,
                            update_filled(r, info) ? info->result : 0));
}

GT_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t graph) {
  GT_REAL(cudaGraphClone);
  GT_TRACE_CALL(real_cudaGraphClone(pGraphClone, graph),
                GRAPH_EMIT(cudaGraphClone, 0, .graph = h64(graph),
                           .arg = out_handle(r, pGraphClone)));
}

#define HOOK_UPLOAD(name)                                                                \
  GT_EXPORT cudaError_t name(cudaGraphExec_t exec, cudaStream_t stream) {                \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(                                                                       \
        real_##name(exec, stream),                                                       \
        GRAPH_EMIT(name, GT_F_ASYNC, .exec = h64(exec), .stream = h64(stream)));         \
  }
HOOK_UPLOAD(cudaGraphUpload)
HOOK_UPLOAD(cudaGraphUpload_ptsz)

GT_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  GT_REAL(cudaGraphExecDestroy);
  GT_TRACE_CALL(real_cudaGraphExecDestroy(exec),
                GRAPH_EMIT(cudaGraphExecDestroy, 0, .exec = h64(exec)));
}

GT_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  GT_REAL(cudaGraphDestroy);
  GT_TRACE_CALL(real_cudaGraphDestroy(graph),
                GRAPH_EMIT(cudaGraphDestroy, 0, .graph = h64(graph)));
}

/* ---- nodes ---- */

/* The parameters every cudaGraphAdd*Node begins with. */
#define NODE_P                                                                           \
  cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps
#define NODE_T cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t
#define NODE_A pNode, graph, deps, ndeps

GT_EXPORT cudaError_t cudaGraphAddChildGraphNode(NODE_P, cudaGraph_t child) {
  GT_REAL(cudaGraphAddChildGraphNode);
  GT_TRACE_CALL(real_cudaGraphAddChildGraphNode(NODE_A, child),
                GRAPH_EMIT(cudaGraphAddChildGraphNode, GT_F_NODE, .graph = h64(graph),
                           .node = out_handle(r, pNode), .arg = h64(child)));
}

GT_EXPORT cudaError_t cudaGraphAddEmptyNode(NODE_P) {
  GT_REAL(cudaGraphAddEmptyNode);
  GT_TRACE_CALL(real_cudaGraphAddEmptyNode(NODE_A),
                GRAPH_EMIT(cudaGraphAddEmptyNode, GT_F_NODE, .graph = h64(graph),
                           .node = out_handle(r, pNode)));
}

/* A kernel or host-function node, or a kernel node's new parameters: a
 * LAUNCH record that ran nothing. `owner` goes in the stream field (the
 * graph; an edit's executable), `node` the handle the record names (a
 * kernel node's, or NULL). */
static void emit_launch_node(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1,
                             int r, const void *owner, const void *node,
                             const void *kernel, const unsigned grid[3],
                             const unsigned block[3], uint64_t shmem) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = GT_F_NODE | flags;
  rec.u.launch.kernel = h64(kernel);
  for (int i = 0; i < 3; i++) {
    rec.u.launch.grid[i] = grid[i];
    rec.u.launch.block[i] = block[i];
  }
  rec.u.launch.shared_mem = shmem;
  rec.u.launch.stream = h64(owner);
  rec.u.launch.node = (uint32_t)h64(node); /* schema.h: the handle's low 32 bits */
  gt_emit(&rec);
}

/* A runtime kernel node's record: added (api cudaGraphAddKernelNode, owner
 * the graph) or its parameters set (owner the executable, or NULL). */
static void emit_kernel_node(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                             const void *owner, const void *node,
                             const struct cudaKernelNodeParams *p) {
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  if (p != NULL) {
    grid[0] = p->gridDim.x, grid[1] = p->gridDim.y, grid[2] = p->gridDim.z;
    block[0] = p->blockDim.x, block[1] = p->blockDim.y, block[2] = p->blockDim.z;
  }
  emit_launch_node(api, 0, t0, t1, r, owner, node, p ? p->func : NULL, grid, block,
                   p ? p->sharedMemBytes : 0);
}

GT_EXPORT cudaError_t cudaGraphAddKernelNode(NODE_P,
                                             const struct cudaKernelNodeParams *p) {
  GT_REAL(cudaGraphAddKernelNode);
  GT_TRACE_CALL(real_cudaGraphAddKernelNode(NODE_A, p),
                emit_kernel_node(GT_API_cudaGraphAddKernelNode, t0, t1, r, graph,
                                 (const void *)(uintptr_t)out_handle(r, pNode), p));
}

GT_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                   const struct cudaKernelNodeParams *p) {
  GT_REAL(cudaGraphKernelNodeSetParams);
  GT_TRACE_CALL(
      real_cudaGraphKernelNodeSetParams(node, p),
      emit_kernel_node(GT_API_cudaGraphKernelNodeSetParams, t0, t1, r, NULL, node, p));
}

GT_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(
    cudaGraphExec_t exec, cudaGraphNode_t node, const struct cudaKernelNodeParams *p) {
  GT_REAL(cudaGraphExecKernelNodeSetParams);
  GT_TRACE_CALL(real_cudaGraphExecKernelNodeSetParams(exec, node, p),
                emit_kernel_node(GT_API_cudaGraphExecKernelNodeSetParams, t0, t1, r, exec,
                                 node, p));
}

GT_EXPORT cudaError_t cudaGraphAddHostNode(NODE_P, const struct cudaHostNodeParams *p) {
  GT_REAL(cudaGraphAddHostNode);
  static const unsigned none[3] = {0, 0, 0};
  GT_TRACE_CALL(real_cudaGraphAddHostNode(NODE_A, p),
                emit_launch_node(GT_API_cudaGraphAddHostNode, GT_F_HOST_FN, t0, t1, r,
                                 graph, NULL, p ? (const void *)p->fn : NULL, none, none,
                                 0));
}

GT_EXPORT cudaError_t cudaGraphAddMemcpyNode(NODE_P, const struct cudaMemcpy3DParms *p) {
  GT_REAL(cudaGraphAddMemcpyNode);
  GT_TRACE_CALL(
      real_cudaGraphAddMemcpyNode(NODE_A, p),
      gt_memcpy3d_emit(GT_API_cudaGraphAddMemcpyNode, GT_F_NODE, p, graph, t0, t1, r));
}

GT_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(NODE_P, void *dst, const void *src,
                                               size_t count, enum cudaMemcpyKind kind) {
  GT_REAL(cudaGraphAddMemcpyNode1D);
  GT_TRACE_CALL(real_cudaGraphAddMemcpyNode1D(NODE_A, dst, src, count, kind),
                gt_copy_emit_1d(GT_API_cudaGraphAddMemcpyNode1D, GT_F_NODE, dst, src,
                                count, kind, graph, 0, t0, t1, r));
}

static void emit_memset_node(uint64_t t0, uint64_t t1, cudaError_t r, cudaGraph_t graph,
                             const struct cudaMemsetParams *p) {
  if (p == NULL) {
    gt_set_emit(GT_API_cudaGraphAddMemsetNode, GT_F_NODE, t0, t1, r, NULL, 0, 0, 0, 0,
                graph);
    return;
  }
  uint64_t row = gt_mul_sat(p->elementSize, p->width);
  gt_set_emit(GT_API_cudaGraphAddMemsetNode, GT_F_NODE, t0, t1, r, p->dst, (int)p->value,
              row, p->height, gt_mul_sat(row, p->height), graph);
}

GT_EXPORT cudaError_t cudaGraphAddMemsetNode(NODE_P, const struct cudaMemsetParams *p) {
  GT_REAL(cudaGraphAddMemsetNode);
  GT_TRACE_CALL(real_cudaGraphAddMemsetNode(NODE_A, p),
                emit_memset_node(t0, t1, r, graph, p));
}

GT_EXPORT cudaError_t cudaGraphAddMemAllocNode(NODE_P, struct cudaMemAllocNodeParams *p) {
  GT_REAL(cudaGraphAddMemAllocNode);
  GT_TRACE_CALL(real_cudaGraphAddMemAllocNode(NODE_A, p),
                gt_drv_emit_mem(GT_API_cudaGraphAddMemAllocNode, GT_F_NODE, GT_MEM_DEVICE,
                                t0, t1, r, r == 0 && p ? h64(p->dptr) : 0,
                                p ? p->bytesize : 0, graph, 0, 0, 0));
}

GT_EXPORT cudaError_t cudaGraphAddMemFreeNode(NODE_P, void *dptr) {
  GT_REAL(cudaGraphAddMemFreeNode);
  GT_TRACE_CALL(real_cudaGraphAddMemFreeNode(NODE_A, dptr),
                gt_drv_emit_mem(GT_API_cudaGraphAddMemFreeNode, GT_F_NODE, GT_MEM_DEVICE,
                                t0, t1, r, h64(dptr), 0, graph, 0, 0, 0));
}

/* ---- the driver ---- */

/* Inside another hook (the runtime's capture calls implemented through the
 * driver): forward, that hook keeps the books. A macro: it returns from the
 * hook, and `call` and `body` are code. */
#define DRV_CAPTURE(call, body)                                                          \
  do {                                                                                   \
    if (gt_tls_depth != 0)                                                               \
      return call;                                                                       \
    body;                                                                                \
  } while (0)

#define DRV_BEGIN_CAPTURE(name, ptsz)                                                    \
  GT_EXPORT CUresult name(CUstream hStream, CUstreamCaptureMode mode) {                  \
    DRV_REAL(name);                                                                      \
    DRV_CAPTURE(real_##name(hStream, mode),                                              \
                GT_BEGIN_CAPTURE(GT_API_##name, real_##name(hStream, mode), hStream,     \
                                 ptsz, 0, mode));                                        \
  }
DRV_BEGIN_CAPTURE(cuStreamBeginCapture_v2, 0)
DRV_BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, 1)

#define DRV_BEGIN_CAPTURE_TO_GRAPH(name, ptsz)                                           \
  GT_EXPORT CUresult name(CUstream hStream, CUgraph hGraph, const CUgraphNode *deps,     \
                          const CUgraphEdgeData *edges, size_t n,                        \
                          CUstreamCaptureMode mode) {                                    \
    DRV_REAL(name);                                                                      \
    DRV_CAPTURE(real_##name(hStream, hGraph, deps, edges, n, mode),                      \
                GT_BEGIN_CAPTURE(GT_API_##name,                                          \
                                 real_##name(hStream, hGraph, deps, edges, n, mode),     \
                                 hStream, ptsz, hGraph, mode));                          \
  }
DRV_BEGIN_CAPTURE_TO_GRAPH(cuStreamBeginCaptureToGraph, 0)
DRV_BEGIN_CAPTURE_TO_GRAPH(cuStreamBeginCaptureToGraph_ptsz, 1)

#define DRV_END_CAPTURE(name, ptsz)                                                      \
  GT_EXPORT CUresult name(CUstream hStream, CUgraph *phGraph) {                          \
    DRV_REAL(name);                                                                      \
    DRV_CAPTURE(real_##name(hStream, phGraph),                                           \
                GT_END_CAPTURE(GT_API_##name, real_##name(hStream, phGraph), hStream,    \
                               ptsz, phGraph));                                          \
  }
DRV_END_CAPTURE(cuStreamEndCapture, 0)
DRV_END_CAPTURE(cuStreamEndCapture_ptsz, 1)

GT_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               unsigned long long flags) {
  DRV_REAL(cuGraphInstantiateWithFlags);
  GT_TRACE_CALL(real_cuGraphInstantiateWithFlags(phGraphExec, hGraph, flags),
                GRAPH_EMIT(cuGraphInstantiateWithFlags, 0, .graph = h64(hGraph),
                           .exec = out_handle(r, phGraphExec), .mode = (uint32_t)flags));
}

#define DRV_INSTANTIATE_PARAMS(name)                                                     \
  GT_EXPORT CUresult name(CUgraphExec *phGraphExec, CUgraph hGraph,                      \
                          CUDA_GRAPH_INSTANTIATE_PARAMS *p) {                            \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(phGraphExec, hGraph, p),                                   \
                  GRAPH_EMIT(name, 0, .graph = h64(hGraph),                              \
                             .exec = out_handle(r, phGraphExec),                         \
                             .mode = p ? (uint32_t)p->flags : 0,                         \
                             .stream = p ? h64(p->hUploadStream) : 0,                    \
                             .node = p ? h64(p->hErrNode_out) : 0,                       \
                             .arg = p ? (uint32_t)p->result_out : 0));                   \
  }
DRV_INSTANTIATE_PARAMS(cuGraphInstantiateWithParams)
DRV_INSTANTIATE_PARAMS(cuGraphInstantiateWithParams_ptsz)

/* The driver's kernel node records, as emit_kernel_node's: kernel = func,
 * or kern when func is NULL. */
static void emit_drv_kernel_node(unsigned api, uint64_t t0, uint64_t t1, CUresult r,
                                 const void *owner, const void *node,
                                 const CUDA_KERNEL_NODE_PARAMS *p) {
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  const void *kernel = NULL;
  if (p != NULL) {
    grid[0] = p->gridDimX, grid[1] = p->gridDimY, grid[2] = p->gridDimZ;
    block[0] = p->blockDimX, block[1] = p->blockDimY, block[2] = p->blockDimZ;
    kernel = p->func != NULL ? p->func : p->kern;
  }
  emit_launch_node(api, 0, t0, t1, r, owner, node, kernel, grid, block,
                   p ? p->sharedMemBytes : 0);
}

GT_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies,
                                           size_t numDependencies,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  DRV_REAL(cuGraphAddKernelNode_v2);
  GT_TRACE_CALL(real_cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies,
                                             numDependencies, nodeParams),
                emit_drv_kernel_node(GT_API_cuGraphAddKernelNode_v2, t0, t1, r, hGraph,
                                     (const void *)(uintptr_t)out_handle(r, phGraphNode),
                                     nodeParams));
}

GT_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                 const CUDA_KERNEL_NODE_PARAMS *p) {
  DRV_REAL(cuGraphKernelNodeSetParams_v2);
  GT_TRACE_CALL(real_cuGraphKernelNodeSetParams_v2(hNode, p),
                emit_drv_kernel_node(GT_API_cuGraphKernelNodeSetParams_v2, t0, t1, r,
                                     NULL, hNode, p));
}

GT_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec,
                                                     CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS *p) {
  DRV_REAL(cuGraphExecKernelNodeSetParams_v2);
  GT_TRACE_CALL(real_cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, p),
                emit_drv_kernel_node(GT_API_cuGraphExecKernelNodeSetParams_v2, t0, t1, r,
                                     hGraphExec, hNode, p));
}

GT_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                        CUgraphExecUpdateResultInfo *info) {
  DRV_REAL(cuGraphExecUpdate_v2);
  GT_TRACE_CALL(real_cuGraphExecUpdate_v2(hGraphExec, hGraph, info),
                emit_update(GT_API_cuGraphExecUpdate_v2, t0, t1, r, hGraphExec, hGraph,
                            update_filled(r, info) ? info->errorNode : NULL,
                            update_filled(r, info) ? info->result : 0));
}

GT_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  DRV_REAL(cuGraphExecDestroy);
  GT_TRACE_CALL(real_cuGraphExecDestroy(hGraphExec),
                GRAPH_EMIT(cuGraphExecDestroy, 0, .exec = h64(hGraphExec)));
}

GT_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  DRV_REAL(cuGraphDestroy);
  GT_TRACE_CALL(real_cuGraphDestroy(hGraph),
                GRAPH_EMIT(cuGraphDestroy, 0, .graph = h64(hGraph)));
}

#define DRV_UPLOAD(name)                                                                 \
  GT_EXPORT CUresult name(CUgraphExec hGraphExec, CUstream hStream) {                    \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(                                                                       \
        real_##name(hGraphExec, hStream),                                                \
        GRAPH_EMIT(name, GT_F_ASYNC, .exec = h64(hGraphExec), .stream = h64(hStream)));  \
  }
DRV_UPLOAD(cuGraphUpload)
DRV_UPLOAD(cuGraphUpload_ptsz)
