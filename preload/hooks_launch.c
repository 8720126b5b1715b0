/* hooks_launch.c — kernel, host-function and graph launches (kind LAUNCH),
 * and the kernel registration entry points.
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature, forwards to the real
 *    function and returns its result and errno untouched.
 *  - LAUNCH records (written by launch.h, in place): kernel, grid, block,
 *    shared_mem, stream, as the hook got them:
 *     kernel = for __cudaLaunchKernel(_ptsz) the cudaKernel_t (flagged
 *       GT_F_KERNEL_HANDLE by its API; its KERNEL_NAME record, keyed by the
 *       handle, was written when __cudaGetKernel / cudaGetKernel made it);
 *       for cudaLaunchKernel / ExC / Cooperative the `func` argument (a stub
 *       or a cudaKernel_t: the runtime accepts both, and both have names);
 *       cudaLaunchHostFunc and cudaStreamAddCallback: the function
 *       (GT_F_HOST_FN); cudaGraphLaunch: the executable graph (GT_F_GRAPH).
 *     cudaLaunchKernelExC with a NULL config is recorded with zero dims.
 *  - Every launch gets a correlation id (corr, devtime.h); kernel and graph
 *    launches are timed on the device when device timing samples them
 *    (devtime.c: events recorded around the call, outside its host timing).
 *  - The launch path is the hot path: two clock reads, the sampling tests
 *    and the in-place write of launch.h. Nothing else.
 *  - __cudaRegisterFunction forwards, then registers stub -> mangled name
 *    (which emits KERNEL_NAME when tracing). __cudaGetKernel and
 *    cudaGetKernel forward, then map handle -> stub on success. These three
 *    are not traced themselves and do their bookkeeping even when tracing
 *    is off, so that later launches resolve.
 */
#include "launch.h"

/* ---- launches ---- */

/* CUDA 13 <<<>>> launches (crt/device_functions.h). */
#define GT_HOOK_LAUNCH_HANDLE(name, ptsz)                                                \
  GT_EXPORT cudaError_t name(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,           \
                             void **args, size_t sharedMem, cudaStream_t stream) {       \
    GT_REAL(name, cudaError_t,                                                           \
            (cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t));                  \
    GT_TRACE_LAUNCH_PRE(GT_DT_LAUNCH,                                                    \
                        real_##name(kernel, gridDim, blockDim, args, sharedMem, stream), \
                        GT_API_##name, kernel, gt_dim3_xy(gridDim), gridDim.z,           \
                        gt_dim3_xy(blockDim), blockDim.z, sharedMem, stream, ptsz);      \
  }
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel_ptsz, 1)

/* cudaLaunchKernel and cudaLaunchCooperativeKernel, with their _ptsz twins. */
#define GT_HOOK_LAUNCH_FUNC(name, ptsz)                                                  \
  GT_EXPORT cudaError_t name(const void *func, dim3 gridDim, dim3 blockDim, void **args, \
                             size_t sharedMem, cudaStream_t stream) {                    \
    GT_REAL(name, cudaError_t,                                                           \
            (const void *, dim3, dim3, void **, size_t, cudaStream_t));                  \
    GT_TRACE_LAUNCH_PRE(GT_DT_LAUNCH,                                                    \
                        real_##name(func, gridDim, blockDim, args, sharedMem, stream),   \
                        GT_API_##name, func, gt_dim3_xy(gridDim), gridDim.z,             \
                        gt_dim3_xy(blockDim), blockDim.z, sharedMem, stream, ptsz);      \
  }
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel_ptsz, 1)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel_ptsz, 1)

#define GT_HOOK_LAUNCH_EX(name, ptsz)                                                    \
  GT_EXPORT cudaError_t name(const cudaLaunchConfig_t *config, const void *func,         \
                             void **args) {                                              \
    GT_REAL(name, cudaError_t, (const cudaLaunchConfig_t *, const void *, void **));     \
    GT_TRACE_LAUNCH_PRE(GT_DT_LAUNCH, real_##name(config, func, args), GT_API_##name,    \
                        func, GT_LAUNCH_CFG_XY(gridDim), GT_LAUNCH_CFG(gridDim.z),       \
                        GT_LAUNCH_CFG_XY(blockDim), GT_LAUNCH_CFG(blockDim.z),           \
                        GT_LAUNCH_CFG(dynamicSmemBytes), config ? config->stream : NULL, \
                        ptsz);                                                           \
  }
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC, 0)
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC_ptsz, 1)

#define GT_HOOK_LAUNCH_HOST_FUNC(name)                                                   \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaHostFn_t fn, void *userData) {     \
    GT_REAL(name, cudaError_t, (cudaStream_t, cudaHostFn_t, void *));                    \
    GT_TRACE_LAUNCH_PRE(GT_DT_NONE, real_##name(stream, fn, userData), GT_API_##name,    \
                        fn, 0, 0, 0, 0, 0, stream, 0);                                   \
  }
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc)
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc_ptsz)

/* The older form of a host function: the callback is told the stream and
 * its status (flags must be 0). */
#define GT_HOOK_STREAM_CALLBACK(name)                                                    \
  GT_EXPORT cudaError_t name(cudaStream_t stream, cudaStreamCallback_t callback,         \
                             void *userData, unsigned int flags) {                       \
    GT_REAL(name, cudaError_t, (cudaStream_t, cudaStreamCallback_t, void *, unsigned));  \
    GT_TRACE_LAUNCH_PRE(GT_DT_NONE, real_##name(stream, callback, userData, flags),      \
                        GT_API_##name, callback, 0, 0, 0, 0, 0, stream, 0);              \
  }
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback)
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback_ptsz)

#define GT_HOOK_GRAPH_LAUNCH(name, ptsz)                                                 \
  GT_EXPORT cudaError_t name(cudaGraphExec_t graphExec, cudaStream_t stream) {           \
    GT_REAL(name, cudaError_t, (cudaGraphExec_t, cudaStream_t));                         \
    GT_TRACE_LAUNCH_PRE(GT_DT_LAUNCH, real_##name(graphExec, stream), GT_API_##name,     \
                        graphExec, 0, 0, 0, 0, 0, stream, ptsz);                         \
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
