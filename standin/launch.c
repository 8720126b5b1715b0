/* launch.c — kernel launches, host functions and (minimal) graphs.
 *
 * Contract:
 *  - Kernels do not execute (device code cannot run here): a launch is
 *    validated like the real runtime does (unknown function ->
 *    cudaErrorInvalidDeviceFunction; a zero or oversized grid/block ->
 *    cudaErrorInvalidConfiguration; invalid stream ->
 *    cudaErrorInvalidResourceHandle) and then occupies the compute engine
 *    for base + threads * ps_per_thread / 1000 ns (timeline.c).
 *  - Every entry point reaches launch_common() directly, never another
 *    exported function: __cudaLaunchKernel does not call cudaLaunchKernel,
 *    exactly like the real libcudart 13, so an interposer sees one call.
 *  - With the timeline off a launch is validation only: no lock, no clock,
 *    no syscall.
 *  - cudaLaunchHostFunc and cudaStreamAddCallback: wait (on the calling
 *    thread) until the stream's queued work completes, call fn(userData) —
 *    the callback(stream, cudaSuccess, userData) — on the calling thread,
 *    then the stream's later work starts no earlier than its return. A
 *    callback's flags must be 0.
 *  - Graphs carry no nodes; launching an executable graph occupies the
 *    compute engine for GPUTRACE_STANDIN_GRAPH_NS.
 */
#include <stdlib.h>

#include "standin.h"

/* Launch limits of the simulated device (device.c reports the same). */
#define MAX_BLOCK_X 1024u
#define MAX_BLOCK_Y 1024u
#define MAX_BLOCK_Z 64u
#define MAX_THREADS_PER_BLOCK 1024u
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u

static cudaError_t check_config(dim3 g, dim3 b, size_t shmem) {
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    return cudaErrorInvalidConfiguration;
  if (g.x > MAX_GRID_X || g.y > MAX_GRID_YZ || g.z > MAX_GRID_YZ)
    return cudaErrorInvalidConfiguration;
  if (b.x > MAX_BLOCK_X || b.y > MAX_BLOCK_Y || b.z > MAX_BLOCK_Z)
    return cudaErrorInvalidConfiguration;
  if ((uint64_t)b.x * b.y * b.z > MAX_THREADS_PER_BLOCK)
    return cudaErrorInvalidConfiguration;
  if (shmem > SI_SHMEM_OPTIN)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

static inline cudaError_t launch_common(const struct si_func *f, dim3 g, dim3 b,
                                        size_t shmem, cudaStream_t stream,
                                        int per_thread) {
  if (SI_UNLIKELY(f == NULL))
    return cudaErrorInvalidDeviceFunction;
  cudaError_t e = check_config(g, b, shmem);
  if (SI_UNLIKELY(e != cudaSuccess))
    return e;
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (SI_UNLIKELY(s == NULL))
    return cudaErrorInvalidResourceHandle;
  if (!si_config()->timeline)
    return cudaSuccess;
  si_tl_enqueue(s, SI_ENG_COMPUTE, si_dur_kernel(g, b), 0);
  return cudaSuccess;
}

/* ---- nvcc's <<<>>> path (crt/host_runtime.h, CUDA 13) ------------------------------ */

SI_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                      void **args, size_t sharedMem,
                                      cudaStream_t stream) {
  (void)args;
  const struct si_func *f = si_func_from_handle(kernel);
  return si_ret(launch_common(f, gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                           dim3 blockDim, void **args, size_t sharedMem,
                                           cudaStream_t stream) {
  (void)args;
  const struct si_func *f = si_func_from_handle(kernel);
  return si_ret(launch_common(f, gridDim, blockDim, sharedMem, stream, 1));
}

/* ---- public launch API ---------------------------------------------------------------
 */

SI_API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream) {
  (void)args;
  return si_ret(
      launch_common(si_func_lookup(func), gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem,
                                         cudaStream_t stream) {
  (void)args;
  return si_ret(
      launch_common(si_func_lookup(func), gridDim, blockDim, sharedMem, stream, 1));
}

/* Launch attributes (clusters, priorities, ...) are accepted and ignored. */
static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func,
                             int per_thread) {
  if (config == NULL || (config->numAttrs != 0 && config->attrs == NULL))
    return cudaErrorInvalidValue;
  return launch_common(si_func_lookup(func), config->gridDim, config->blockDim,
                       config->dynamicSmemBytes, config->stream, per_thread);
}

SI_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args) {
  (void)args;
  return si_ret(launch_ex(config, func, 0));
}

SI_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                            const void *func, void **args) {
  (void)args;
  return si_ret(launch_ex(config, func, 1));
}

/* A cooperative grid must be co-resident: at most as many blocks as the SMs
 * can hold at once (by the thread and block limits per SM). */
static cudaError_t launch_coop(const void *func, dim3 g, dim3 b, size_t shmem,
                               cudaStream_t stream, int per_thread) {
  const struct si_func *f = si_func_lookup(func);
  if (f != NULL && check_config(g, b, shmem) == cudaSuccess) {
    uint64_t per_sm = SI_MAX_THREADS_PER_SM / ((uint64_t)b.x * b.y * b.z);
    if (per_sm > SI_MAX_BLOCKS_PER_SM)
      per_sm = SI_MAX_BLOCKS_PER_SM;
    if ((uint64_t)g.x * g.y * g.z > per_sm * SI_SM_COUNT)
      return cudaErrorCooperativeLaunchTooLarge;
  }
  return launch_common(f, g, b, shmem, stream, per_thread);
}

SI_API cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
                                               dim3 blockDim, void **args,
                                               size_t sharedMem, cudaStream_t stream) {
  (void)args;
  return si_ret(launch_coop(func, gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                                    dim3 blockDim, void **args,
                                                    size_t sharedMem,
                                                    cudaStream_t stream) {
  (void)args;
  return si_ret(launch_coop(func, gridDim, blockDim, sharedMem, stream, 1));
}

/* ---- host functions ------------------------------------------------------------------
 */

/* A host function in stream order: fn(data), or for a stream callback
 * cb(stream, cudaSuccess, data) (the work before it completed). */
static cudaError_t host_call(cudaStream_t stream, cudaHostFn_t fn,
                             cudaStreamCallback_t cb, void *data, int per_thread) {
  if (fn == NULL && cb == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  int timeline = si_config()->timeline;
  if (timeline) { /* a zero-length op marks where fn starts; no lock is held while it runs
                   */
    uint64_t start = si_tl_enqueue(s, SI_ENG_NONE, 0, 0);
    si_sleep_until(start);
  }
  if (fn != NULL)
    fn(data);
  else
    cb(stream, cudaSuccess, data);
  if (timeline)
    si_tl_extend(s, si_now());
  return cudaSuccess;
}

static cudaError_t host_func(cudaStream_t stream, cudaHostFn_t fn, void *data,
                             int per_thread) {
  return fn ? host_call(stream, fn, NULL, data, per_thread) : cudaErrorInvalidValue;
}

static cudaError_t stream_callback(cudaStream_t stream, cudaStreamCallback_t cb,
                                   void *data, unsigned flags, int per_thread) {
  if (cb == NULL || flags != 0) /* flags are reserved: 0 */
    return cudaErrorInvalidValue;
  return host_call(stream, NULL, cb, data, per_thread);
}

SI_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                                      void *userData) {
  return si_ret(host_func(stream, fn, userData, 0));
}

SI_API cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
                                           void *userData) {
  return si_ret(host_func(stream, fn, userData, 1));
}

SI_API cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                         cudaStreamCallback_t callback, void *userData,
                                         unsigned int flags) {
  return si_ret(stream_callback(stream, callback, userData, flags, 0));
}

SI_API cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                              cudaStreamCallback_t callback,
                                              void *userData, unsigned int flags) {
  return si_ret(stream_callback(stream, callback, userData, flags, 1));
}

/* ---- graphs
 * ---------------------------------------------------------------------------- */

struct si_graph_obj {
  uint32_t magic;
  uint32_t pad;
  void *unused; /* room for the pool's free-list link */
};

static struct si_pool graph_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                    .obj_size = sizeof(struct si_graph_obj)};
static struct si_pool exec_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                   .obj_size = sizeof(struct si_graph_obj)};

static struct si_graph_obj *graph_resolve(const void *h, uint32_t magic) {
  struct si_graph_obj *g = (struct si_graph_obj *)h;
  if (g == NULL || __atomic_load_n(&g->magic, __ATOMIC_ACQUIRE) != magic)
    return NULL;
  return g;
}

void si_graphs_reset(void) {
  si_pool_reset(&graph_pool);
  si_pool_reset(&exec_pool);
}

static cudaError_t graph_new(struct si_pool *pool, uint32_t magic, void **out) {
  struct si_graph_obj *g = si_pool_get(pool);
  if (g == NULL)
    return cudaErrorMemoryAllocation;
  __atomic_store_n(&g->magic, magic, __ATOMIC_RELEASE);
  *out = g;
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) {
  if (pGraph == NULL || flags != 0)
    return si_ret(cudaErrorInvalidValue);
  return si_ret(graph_new(&graph_pool, SI_MAGIC_GRAPH, (void **)pGraph));
}

SI_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                        unsigned long long flags) {
  (void)flags;
  if (pGraphExec == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (graph_resolve(graph, SI_MAGIC_GRAPH) == NULL)
    return si_ret(cudaErrorInvalidValue);
  return si_ret(graph_new(&exec_pool, SI_MAGIC_GEXEC, (void **)pGraphExec));
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream,
                                int per_thread) {
  if (graph_resolve(exec, SI_MAGIC_GEXEC) == NULL)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (si_config()->timeline)
    si_tl_enqueue(s, SI_ENG_COMPUTE, si_config()->graph_ns, 0);
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return si_ret(graph_launch(graphExec, stream, 0));
}

SI_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return si_ret(graph_launch(graphExec, stream, 1));
}

SI_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  struct si_graph_obj *g = graph_resolve(graphExec, SI_MAGIC_GEXEC);
  if (g == NULL)
    return si_ret(cudaErrorInvalidValue);
  si_pool_put(&exec_pool, g);
  return cudaSuccess;
}

SI_API cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  struct si_graph_obj *g = graph_resolve(graph, SI_MAGIC_GRAPH);
  if (g == NULL)
    return si_ret(cudaErrorInvalidValue);
  si_pool_put(&graph_pool, g);
  return cudaSuccess;
}
