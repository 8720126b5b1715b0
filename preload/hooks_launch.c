/* hooks_launch.c — kernel, host-function and graph launches (kind LAUNCH),
 * and the kernel registration entry points.
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature (a dim3 as the
 *    calling convention passes it: cuda_abi.h GT_DIM3_PARAM), forwards to
 *    the real function and returns its result and errno untouched.
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
 *    and the in-place write of launch.h (GT_LAUNCH_HOOK: its fast form
 *    exported, its general form beside it). Nothing else.
 *  - __cudaPushCallConfiguration forwards, then keeps the <<<>>> line for
 *    the launch its stub makes (launch.h gt_launch_site).
 *  - __cudaRegisterFunction forwards, then registers stub -> mangled name
 *    (which emits KERNEL_NAME when tracing). __cudaGetKernel and
 *    cudaGetKernel forward, then map handle -> stub on success. These three
 *    are not traced themselves and do their bookkeeping even when tracing
 *    is off, so that later launches resolve.
 */
#include "launch.h"

/* ---- launches ---- */

/* The GT_HOOK_* macros below define the hooks they are given (macros:
 * shim.h), one per twin. */

/* CUDA 13 <<<>>> launches (crt/device_functions.h). */
#define GT_HOOK_LAUNCH_HANDLE(name, ptsz)                                                \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (cudaKernel_t kernel, GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block),        \
                  void **args, size_t sharedMem, cudaStream_t stream),                   \
                 (kernel, grid_xy, grid_z, block_xy, block_z, args, sharedMem, stream),  \
                 GT_DT_LAUNCH, kernel, grid_xy, grid_z, block_xy, block_z, sharedMem,    \
                 stream, ptsz)
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_HANDLE(__cudaLaunchKernel_ptsz, 1)

/* cudaLaunchKernel and cudaLaunchCooperativeKernel, with their _ptsz twins. */
#define GT_HOOK_LAUNCH_FUNC(name, ptsz)                                                  \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (const void *func, GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block),           \
                  void **args, size_t sharedMem, cudaStream_t stream),                   \
                 (func, grid_xy, grid_z, block_xy, block_z, args, sharedMem, stream),    \
                 GT_DT_LAUNCH, func, grid_xy, grid_z, block_xy, block_z, sharedMem,      \
                 stream, ptsz)
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchKernel_ptsz, 1)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel, 0)
GT_HOOK_LAUNCH_FUNC(cudaLaunchCooperativeKernel_ptsz, 1)

#define GT_HOOK_LAUNCH_EX(name, ptsz)                                                    \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (const cudaLaunchConfig_t *config, const void *func, void **args),      \
                 (config, func, args), GT_DT_LAUNCH, func, GT_LAUNCH_CFG_XY(gridDim),    \
                 GT_LAUNCH_CFG(gridDim.z), GT_LAUNCH_CFG_XY(blockDim),                   \
                 GT_LAUNCH_CFG(blockDim.z), GT_LAUNCH_CFG(dynamicSmemBytes),             \
                 config ? config->stream : NULL, ptsz)
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC, 0)
GT_HOOK_LAUNCH_EX(cudaLaunchKernelExC_ptsz, 1)

#define GT_HOOK_LAUNCH_HOST_FUNC(name, ptsz)                                             \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (cudaStream_t stream, cudaHostFn_t fn, void *userData),                 \
                 (stream, fn, userData), GT_DT_NONE, fn, 0, 0, 0, 0, 0, stream, ptsz)
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc, 0)
GT_HOOK_LAUNCH_HOST_FUNC(cudaLaunchHostFunc_ptsz, 1)

/* The older form of a host function: the callback is told the stream and
 * its status (flags must be 0). */
#define GT_HOOK_STREAM_CALLBACK(name, ptsz)                                              \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (cudaStream_t stream, cudaStreamCallback_t callback, void *userData,    \
                  unsigned int flags),                                                   \
                 (stream, callback, userData, flags), GT_DT_NONE, callback, 0, 0, 0, 0,  \
                 0, stream, ptsz)
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback, 0)
GT_HOOK_STREAM_CALLBACK(cudaStreamAddCallback_ptsz, 1)

#define GT_HOOK_GRAPH_LAUNCH(name, ptsz)                                                 \
  GT_LAUNCH_HOOK(cudaError_t, GT_ERR_NOT_SUPPORTED, name,                                \
                 (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream),  \
                 GT_DT_LAUNCH, graphExec, 0, 0, 0, 0, 0, stream, ptsz)
GT_HOOK_GRAPH_LAUNCH(cudaGraphLaunch, 0)
GT_HOOK_GRAPH_LAUNCH(cudaGraphLaunch_ptsz, 1)

/* A <<<>>> launch's configuration (crt/device_functions.h: the call the
 * <<<>>> expression makes in the user's function, before nvcc's stubs):
 * its return address (the <<<>>> line) and its caller's stack pointer
 * kept for the launch that follows (launch.h gt_launch_site, launch.c: the
 * launch's key and its stack start there), then a tail call to the real
 * one: three TLS stores. A configuration that fails (the runtime's stack of
 * them full) launches nothing, and the next <<<>>> overwrites its line.
 * Not traced itself; done even when tracing is off. */
typedef unsigned (*push_config_fn)(GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block), size_t,
                                   void *);

/* The first <<<>>> of a runtime loaded after start-up: looked up now. */
static __attribute__((noinline, cold)) unsigned
push_slow(GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block), size_t sharedMem, void *stream);

/* push_slow until the real one is found: the hook calls through it with no
 * test (two instructions fewer a <<<>>>). */
static push_config_fn g_push_real = push_slow;

/* At start-up (core.c), so that the first <<<>>> does not look it up on
 * the program's stack (docs/stack-budget.md); a runtime loaded later is
 * looked up at its first <<<>>>. */
void gt_launch_hooks_prepare(void) {
  push_config_fn real = (push_config_fn)gt_resolve("__cudaPushCallConfiguration");
  if (real != NULL)
    g_push_real = real;
}

static unsigned push_slow(GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block), size_t sharedMem,
                          void *stream) {
  push_config_fn real = (push_config_fn)gt_resolve("__cudaPushCallConfiguration");
  if (real == NULL)
    return 1; /* cudaErrorInvalidValue: the <<<>>> then launches nothing */
  g_push_real = real;
  return real(grid_xy, grid_z, block_xy, block_z, sharedMem, stream);
}

GT_EXPORT unsigned __cudaPushCallConfiguration(GT_DIM3_PARAM(grid), GT_DIM3_PARAM(block),
                                               size_t sharedMem, void *stream) {
  const void *ra = __builtin_return_address(0);
  gt_tls_push_ra = ra;
  gt_tls_push_last = ra;
  gt_tls_push_sp = (uintptr_t)__builtin_dwarf_cfa();
  return g_push_real(grid_xy, grid_z, block_xy, block_z, sharedMem, stream);
}

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
