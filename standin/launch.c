/* launch.c — kernel launches and host functions.
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
 *    no syscall. While no capture sequence exists (capture.c) a launch pays
 *    one relaxed atomic load for capture and allocates nothing.
 *  - In a capturing stream a launch (any entry point) is validated as above
 *    and becomes a kernel node of the capture's graph: no simulated time; on
 *    the legacy stream while a blocking stream captures it fails with
 *    cudaErrorStreamCaptureImplicit (capture.c's si_cap_op).
 *  - cudaLaunchHostFunc and cudaStreamAddCallback: wait (on the calling
 *    thread) until the stream's queued work completes, call fn(userData) —
 *    the callback(stream, cudaSuccess, userData) — on the calling thread,
 *    then the stream's later work starts no earlier than its return. A
 *    callback's flags must be 0. In a capturing stream a host function
 *    becomes a host node (not called); a stream callback is refused with
 *    cudaErrorNotSupported, as documented, and invalidates the capture.
 *  - Graphs are in graph.c.
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

cudaError_t si_launch_check(const struct si_func *f, dim3 g, dim3 b, size_t shmem) {
  return f == NULL ? cudaErrorInvalidDeviceFunction : check_config(g, b, shmem);
}

/* A launch while captures exist (capture.c): a kernel node when s captures. */
static __attribute__((noinline)) cudaError_t capture_launch(const struct si_func *f,
                                                            dim3 g, dim3 b, size_t shmem,
                                                            struct si_stream *s,
                                                            int *captured) {
  struct si_node_desc d = {
      .type = cudaGraphNodeTypeKernel,
      .u.k = {f, si_func_stub(f), g, b, (unsigned)shmem, NULL, NULL}};
  return si_cap_op(s, &d, cudaErrorStreamCaptureUnsupported, captured);
}

/* The host's part of a launch, before the kernel is queued (a real driver
 * builds and pushes the launch; 4-5 us on an H200): spun, not slept, so the
 * kernel is queued exactly that long after the call began. */
static __attribute__((noinline)) void host_work(uint64_t ns) {
  uint64_t until = si_now() + ns;
  while (si_now() < until) {
  }
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
  if (SI_UNLIKELY(si_cap_any())) {
    int captured;
    e = capture_launch(f, g, b, shmem, s, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  if (!si_config()->timeline)
    return cudaSuccess;
  if (SI_UNLIKELY(si_config()->launch_host_ns))
    host_work(si_config()->launch_host_ns);
  uint64_t dur = si_dur_kernel(g, b);
  uint64_t end = si_tl_enqueue(s, SI_ENG_COMPUTE, dur, 0);
  if (SI_UNLIKELY(si_cupti_on()))
    si_cupti_kernel(f, g, b, shmem, s, end, dur, 0, 0);
  return cudaSuccess;
}

/* ---- nvcc's <<<>>> path (crt/host_runtime.h, CUDA 13) ------------------------------ */

SI_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                      void **args, size_t sharedMem,
                                      cudaStream_t stream) {
  SI_CUPTI_API("__cudaLaunchKernel");
  (void)args;
  const struct si_func *f = si_func_from_handle(kernel);
  return si_ret(launch_common(f, gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                           dim3 blockDim, void **args, size_t sharedMem,
                                           cudaStream_t stream) {
  SI_CUPTI_API("__cudaLaunchKernel_ptsz");
  (void)args;
  const struct si_func *f = si_func_from_handle(kernel);
  return si_ret(launch_common(f, gridDim, blockDim, sharedMem, stream, 1));
}

/* ---- public launch API ---------------------------------------------------------------
 */

SI_API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream) {
  SI_CUPTI_API("cudaLaunchKernel");
  (void)args;
  return si_ret(
      launch_common(si_func_lookup(func), gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem,
                                         cudaStream_t stream) {
  SI_CUPTI_API("cudaLaunchKernel_ptsz");
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
  SI_CUPTI_API("cudaLaunchKernelExC");
  (void)args;
  return si_ret(launch_ex(config, func, 0));
}

SI_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                            const void *func, void **args) {
  SI_CUPTI_API("cudaLaunchKernelExC_ptsz");
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
  SI_CUPTI_API("cudaLaunchCooperativeKernel");
  (void)args;
  return si_ret(launch_coop(func, gridDim, blockDim, sharedMem, stream, 0));
}

SI_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                                    dim3 blockDim, void **args,
                                                    size_t sharedMem,
                                                    cudaStream_t stream) {
  SI_CUPTI_API("cudaLaunchCooperativeKernel_ptsz");
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
  if (SI_UNLIKELY(si_cap_any())) {
    /* A host node; a stream callback cannot be captured (documented). */
    struct si_node_desc d = {.type = cudaGraphNodeTypeHost, .u.host = {fn, data}};
    int captured;
    cudaError_t e =
        si_cap_op(s, fn != NULL ? &d : NULL, cudaErrorNotSupported, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  int timeline = si_config()->timeline;
  if (timeline) { /* a zero-length op marks where fn starts; no lock is held while it runs
                   */
    uint64_t start = si_tl_enqueue(s, SI_ENG_NONE, 0, 0);
    si_wait_until_precise(start);
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
