/* hooks_launch.c — kernel, host-function and graph launches (kind LAUNCH),
 * and the kernel registration entry points.
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature, forwards to the real
 *    function and returns its result and errno untouched.
 *  - LAUNCH records: kernel, grid, block, shared_mem, stream.
 *     kernel = the host stub: for __cudaLaunchKernel(_ptsz) the stub the
 *       cudaKernel_t was mapped to by __cudaGetKernel / cudaGetKernel, or
 *       the handle itself with GT_F_KERNEL_HANDLE when unknown; for
 *       cudaLaunchKernel / ExC / Cooperative the `func` argument, translated
 *       to its stub when it is a known cudaKernel_t (the runtime accepts
 *       both); cudaLaunchHostFunc and cudaStreamAddCallback: the function
 *       (GT_F_HOST_FN);
 *       cudaGraphLaunch: the executable graph (GT_F_GRAPH).
 *     cudaLaunchKernelExC with a NULL config is recorded with zero dims.
 *  - Every launch gets a correlation id (corr, devtime.h); kernel and graph
 *    launches are timed on the device when device timing is on (devtime.c:
 *    events recorded around the call, outside its host timing).
 *  - The launch path is the hot path: two clock reads, at most one lock-free
 *    hash lookup, gt_record_begin and gt_emit; with device timing, what
 *    gt_dt_before/after do. Nothing else.
 *  - __cudaRegisterFunction forwards, then registers stub -> mangled name
 *    (which emits KERNEL_NAME when tracing). __cudaGetKernel and
 *    cudaGetKernel forward, then map handle -> stub on success. These three
 *    are not traced themselves and do their bookkeeping even when tracing
 *    is off, so that later launches resolve.
 */
#include "devtime.h"

/* ---- records ---- */

static const dim3 gt_no_dims = {0, 0, 0}; /* host functions, graphs */

static inline void emit_launch(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1,
                               cudaError_t r, const void *kernel, dim3 grid, dim3 block,
                               size_t shmem, const void *stream) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.launch.kernel = (uint64_t)(uintptr_t)kernel;
  rec.u.launch.grid[0] = grid.x;
  rec.u.launch.grid[1] = grid.y;
  rec.u.launch.grid[2] = grid.z;
  rec.u.launch.block[0] = block.x;
  rec.u.launch.block[1] = block.y;
  rec.u.launch.block[2] = block.z;
  rec.u.launch.shared_mem = shmem;
  rec.u.launch.stream = (uint64_t)(uintptr_t)stream;
  rec.u.launch.corr = gt_tls_corr;
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

/* A launch by cudaKernel_t: record its stub, or the handle when unknown. */
static inline void emit_handle_launch(unsigned api, uint64_t t0, uint64_t t1,
                                      cudaError_t r, cudaKernel_t handle, dim3 grid,
                                      dim3 block, size_t shmem, cudaStream_t stream) {
  const void *stub = gt_kernels_stub_for(handle);
  if (stub != NULL)
    emit_launch(api, 0, t0, t1, r, stub, grid, block, shmem, stream);
  else
    emit_launch(api, GT_F_KERNEL_HANDLE, t0, t1, r, handle, grid, block, shmem, stream);
}

/* A launch by `func`: a stub, or a cudaKernel_t passed as a stub. */
static inline void emit_func_launch(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                                    const void *func, dim3 grid, dim3 block, size_t shmem,
                                    cudaStream_t stream) {
  const void *stub = gt_kernels_stub_for(func);
  emit_launch(api, 0, t0, t1, r, stub != NULL ? stub : func, grid, block, shmem, stream);
}

/* ---- launches ---- */

/* CUDA 13 <<<>>> launches (crt/device_functions.h). */
#define GT_HOOK_LAUNCH_HANDLE(name, ptsz)                                                \
  GT_EXPORT cudaError_t name(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,           \
                             void **args, size_t sharedMem, cudaStream_t stream) {       \
    GT_REAL(name, cudaError_t,                                                           \
            (cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t));                  \
    GT_TRACE_TIMED(GT_DT_LAUNCH, kernel, stream, ptsz,                                   \
                   real_##name(kernel, gridDim, blockDim, args, sharedMem, stream),      \
                   emit_handle_launch(GT_API_##name, t0, t1, r, kernel, gridDim,         \
                                      blockDim, sharedMem, stream));                     \
  }
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel_ptsz, 1)

/* cudaLaunchKernel and cudaLaunchCooperativeKernel, with their _ptsz twins. */
#define GT_HOOK_LAUNCH_FUNC(name, ptsz)                                                  \
  GT_EXPORT cudaError_t name(const void *func, dim3 gridDim, dim3 blockDim, void **args, \
                             size_t sharedMem, cudaStream_t stream) {                    \
    GT_REAL(name, cudaError_t,                                                           \
            (const void *, dim3, dim3, void **, size_t, cudaStream_t));                  \
    GT_TRACE_TIMED(GT_DT_LAUNCH, func, stream, ptsz,                                     \
                   real_##name(func, gridDim, blockDim, args, sharedMem, stream),        \
                   emit_func_launch(GT_API_##name, t0, t1, r, func, gridDim, blockDim,   \
                                    sharedMem, stream));                                 \
  }
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel_ptsz, 1)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel_ptsz, 1)

static inline void emit_launch_ex(unsigned api, uint64_t t0, uint64_t t1, cudaError_t r,
                                  const cudaLaunchConfig_t *config, const void *func) {
  if (config == NULL)
    emit_func_launch(api, t0, t1, r, func, gt_no_dims, gt_no_dims, 0, NULL);
  else
    emit_func_launch(api, t0, t1, r, func, config->gridDim, config->blockDim,
                     config->dynamicSmemBytes, config->stream);
}

#define GT_HOOK_LAUNCH_EX(name, ptsz)                                                    \
  GT_EXPORT cudaError_t name(const cudaLaunchConfig_t *config, const void *func,         \
                             void **args) {                                              \
    GT_REAL(name, cudaError_t, (const cudaLaunchConfig_t *, const void *, void **));     \
    GT_TRACE_TIMED(GT_DT_LAUNCH, func, config ? config->stream : NULL, ptsz,             \
                   real_##name(config, func, args),                                      \
                   emit_launch_ex(GT_API_##name, t0, t1, r, config, func));              \
  }
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC, 0)
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC_ptsz, 1)

#define GT_HOOK_LAUNCH_HOST_FUNC(name)                                                   \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaHostFn_t fn, void *userData) {     \
    GT_REAL(name, cudaError_t, (cudaStream_t, cudaHostFn_t, void *));                    \
    GT_TRACE_TIMED(GT_DT_NONE, NULL, stream, 0, real_##name(stream, fn, userData),       \
                   emit_launch(GT_API_##name, GT_F_HOST_FN, t0, t1, r, (const void *)fn, \
                               gt_no_dims, gt_no_dims, 0, stream));                      \
  }
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc)
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc_ptsz)

/* The older form of a host function: the callback is told the stream and
 * its status (flags must be 0). */
#define GT_HOOK_STREAM_CALLBACK(name)                                                    \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaStreamCallback_t callback,         \
                             void *userData, unsigned int flags) {                       \
    GT_REAL(name, cudaError_t, (cudaStream_t, cudaStreamCallback_t, void *, unsigned));  \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_NONE, NULL, stream, 0, real_##name(stream, callback, userData, flags),     \
        emit_launch(GT_API_##name, GT_F_HOST_FN, t0, t1, r, (const void *)callback,      \
                    gt_no_dims, gt_no_dims, 0, stream));                                 \
  }
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback)
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback_ptsz)

#define GT_HOOK_GRAPH_LAUNCH(name, ptsz)                                                 \
  GT_EXPORT cudaError_t name(cudaGraphExec_t graphExec, cudaStream_t stream) {           \
    GT_REAL(name, cudaError_t, (cudaGraphExec_t, cudaStream_t));                         \
    GT_TRACE_TIMED(GT_DT_LAUNCH, graphExec, stream, ptsz,                                \
                   real_##name(graphExec, stream),                                       \
                   emit_launch(GT_API_##name, GT_F_GRAPH, t0, t1, r, graphExec,          \
                               gt_no_dims, gt_no_dims, 0, stream));                      \
  }
GT_HOOK_GRAPH_LAUNCH(cudaGraphLaunch, 0)
GT_HOOK_GRAPH_LAUNCH(cudaGraphLaunch_ptsz, 1)

/* ---- registration (crt/host_runtime.h, crt/device_functions.h) ---- */

typedef void (*register_function_fn)(void **, const char *, char *, const char *, int,
                                     uint3 *, uint3 *, dim3 *, dim3 *, int *);

GT_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                      char *deviceFun, const char *deviceName,
                                      int thread_limit, uint3 *tid, uint3 *bid,
                                      dim3 *bDim, dim3 *gDim, int *wSize) {
  static register_function_fn real;
  if (real == NULL)
    real = (register_function_fn)gt_resolve("__cudaRegisterFunction");
  if (real != NULL)
    real(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim,
         gDim, wSize);
  int saved_errno = errno;
  gt_kernels_register(hostFun, deviceName != NULL ? deviceName : deviceFun);
  errno = saved_errno;
}

#define GT_HOOK_GET_KERNEL(name)                                                         \
  GT_EXPORT cudaError_t name(cudaKernel_t *kernelPtr, const void *entryFuncAddr) {       \
    GT_REAL_UNLISTED(name, cudaError_t, (cudaKernel_t *, const void *));                 \
    cudaError_t r = real_##name(kernelPtr, entryFuncAddr);                               \
    if (r == 0 && kernelPtr != NULL)                                                     \
      gt_kernels_map_handle(*kernelPtr, entryFuncAddr);                                  \
    return r;                                                                            \
  }
GT_HOOK_GET_KERNEL(__cudaGetKernel)
GT_HOOK_GET_KERNEL(cudaGetKernel)
