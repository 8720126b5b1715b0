/* apis.h — the one table of traced entry points.
 *
 * Contract: every API the shim records appears here exactly once, as
 * X(name, kind). The enum value of GT_API_<name> is its position and is
 * part of the on-disk format: append new entries at the end of the list,
 * never reorder or remove (docs/trace-format.md).
 */
#ifndef GPUTRACE_APIS_H
#define GPUTRACE_APIS_H

/* clang-format off */
#define GT_API_LIST(X)                                                        \
  X(none, NONE)                                                               \
  /* allocation */                                                            \
  X(cudaMalloc, ALLOC) X(cudaMallocAsync, ALLOC) X(cudaMallocAsync_ptsz, ALLOC) \
  X(cudaMallocFromPoolAsync, ALLOC) X(cudaMallocFromPoolAsync_ptsz, ALLOC)    \
  X(cudaMallocManaged, ALLOC) X(cudaMallocPitch, ALLOC) X(cudaMallocHost, ALLOC) \
  X(cudaHostAlloc, ALLOC) X(cudaHostRegister, ALLOC)                          \
  X(cudaFree, FREE) X(cudaFreeAsync, FREE) X(cudaFreeAsync_ptsz, FREE)        \
  X(cudaFreeHost, FREE) X(cudaHostUnregister, FREE)                           \
  /* copies */                                                                \
  X(cudaMemcpy, MEMCPY) X(cudaMemcpy_ptds, MEMCPY)                            \
  X(cudaMemcpyAsync, MEMCPY) X(cudaMemcpyAsync_ptsz, MEMCPY)                  \
  X(cudaMemcpy2D, MEMCPY) X(cudaMemcpy2D_ptds, MEMCPY)                        \
  X(cudaMemcpy2DAsync, MEMCPY) X(cudaMemcpy2DAsync_ptsz, MEMCPY)              \
  X(cudaMemcpyPeer, MEMCPY) X(cudaMemcpyPeerAsync, MEMCPY)                    \
  X(cudaMemcpyToSymbol, MEMCPY) X(cudaMemcpyToSymbol_ptds, MEMCPY)            \
  X(cudaMemcpyFromSymbol, MEMCPY) X(cudaMemcpyFromSymbol_ptds, MEMCPY)        \
  X(cudaMemcpyToSymbolAsync, MEMCPY) X(cudaMemcpyToSymbolAsync_ptsz, MEMCPY)  \
  X(cudaMemcpyFromSymbolAsync, MEMCPY) X(cudaMemcpyFromSymbolAsync_ptsz, MEMCPY) \
  /* sets */                                                                  \
  X(cudaMemset, MEMSET) X(cudaMemset_ptds, MEMSET)                            \
  X(cudaMemsetAsync, MEMSET) X(cudaMemsetAsync_ptsz, MEMSET)                  \
  X(cudaMemset2D, MEMSET) X(cudaMemset2D_ptds, MEMSET)                        \
  X(cudaMemset2DAsync, MEMSET) X(cudaMemset2DAsync_ptsz, MEMSET)              \
  /* launches */                                                              \
  X(__cudaLaunchKernel, LAUNCH) X(__cudaLaunchKernel_ptsz, LAUNCH)            \
  X(cudaLaunchKernel, LAUNCH) X(cudaLaunchKernel_ptsz, LAUNCH)                \
  X(cudaLaunchKernelExC, LAUNCH) X(cudaLaunchKernelExC_ptsz, LAUNCH)          \
  X(cudaLaunchCooperativeKernel, LAUNCH) X(cudaLaunchCooperativeKernel_ptsz, LAUNCH) \
  X(cudaLaunchHostFunc, LAUNCH) X(cudaLaunchHostFunc_ptsz, LAUNCH)            \
  X(cudaGraphLaunch, LAUNCH) X(cudaGraphLaunch_ptsz, LAUNCH)                  \
  /* synchronization */                                                       \
  X(cudaDeviceSynchronize, SYNC)                                              \
  X(cudaStreamSynchronize, SYNC) X(cudaStreamSynchronize_ptsz, SYNC)          \
  X(cudaEventSynchronize, SYNC)                                               \
  X(cudaStreamWaitEvent, SYNC) X(cudaStreamWaitEvent_ptsz, SYNC)              \
  X(cudaStreamQuery, SYNC) X(cudaStreamQuery_ptsz, SYNC) X(cudaEventQuery, SYNC) \
  /* streams and events */                                                    \
  X(cudaStreamCreate, STREAM) X(cudaStreamCreateWithFlags, STREAM)            \
  X(cudaStreamCreateWithPriority, STREAM) X(cudaStreamDestroy, STREAM)        \
  X(cudaEventCreate, EVENT) X(cudaEventCreateWithFlags, EVENT)                \
  X(cudaEventDestroy, EVENT) X(cudaEventRecord, EVENT) X(cudaEventRecord_ptsz, EVENT) \
  X(cudaEventRecordWithFlags, EVENT) X(cudaEventRecordWithFlags_ptsz, EVENT)  \
  /* NVTX, received through the injection interface */                        \
  X(nvtxMarkA, NVTX) X(nvtxMarkEx, NVTX)                                      \
  X(nvtxRangeStartA, NVTX) X(nvtxRangeStartEx, NVTX) X(nvtxRangeEnd, NVTX)    \
  X(nvtxRangePushA, NVTX) X(nvtxRangePushEx, NVTX) X(nvtxRangePop, NVTX)      \
  X(nvtxDomainMarkEx, NVTX) X(nvtxDomainRangeStartEx, NVTX)                   \
  X(nvtxDomainRangeEnd, NVTX) X(nvtxDomainRangePushEx, NVTX)                  \
  X(nvtxDomainRangePop, NVTX)                                                 \
  /* records the shim or collector makes about the trace itself */           \
  X(gputrace_process, PROCESS) X(gputrace_kernel_name, KERNEL_NAME)           \
  X(gputrace_drop, DROP) X(gputrace_lost, LOST)                               \
  X(gputrace_stack, STACK) X(gputrace_module, MODULE)                         \
  X(gputrace_pyframe, PYFRAME) X(gputrace_frame, FRAME)                       \
  X(gputrace_metric, METRIC) X(gputrace_note, NOTE)                           \
  /* driver API (preload/hooks_driver.c); cuMemMap/cuMemUnmap carry GT_F_VMM_MAP */ \
  X(cuMemAlloc_v2, ALLOC) X(cuMemAllocPitch_v2, ALLOC) X(cuMemAllocManaged, ALLOC) \
  X(cuMemAllocAsync, ALLOC) X(cuMemAllocAsync_ptsz, ALLOC)                    \
  X(cuMemAllocHost_v2, ALLOC) X(cuMemHostAlloc, ALLOC) X(cuMemHostRegister_v2, ALLOC) \
  X(cuMemCreate, ALLOC) X(cuMemMap, ALLOC)                                    \
  X(cuMemFree_v2, FREE) X(cuMemFreeAsync, FREE) X(cuMemFreeAsync_ptsz, FREE)  \
  X(cuMemFreeHost, FREE) X(cuMemHostUnregister, FREE)                         \
  X(cuMemRelease, FREE) X(cuMemUnmap, FREE)                                   \
  X(cuMemcpyHtoD_v2, MEMCPY) X(cuMemcpyHtoD_v2_ptds, MEMCPY)                  \
  X(cuMemcpyDtoH_v2, MEMCPY) X(cuMemcpyDtoH_v2_ptds, MEMCPY)                  \
  X(cuMemcpyDtoD_v2, MEMCPY) X(cuMemcpyDtoD_v2_ptds, MEMCPY)                  \
  X(cuMemcpy, MEMCPY) X(cuMemcpy_ptds, MEMCPY)                                \
  X(cuMemcpyAsync, MEMCPY) X(cuMemcpyAsync_ptsz, MEMCPY)                      \
  X(cuMemcpyHtoDAsync_v2, MEMCPY) X(cuMemcpyHtoDAsync_v2_ptsz, MEMCPY)        \
  X(cuMemcpyDtoHAsync_v2, MEMCPY) X(cuMemcpyDtoHAsync_v2_ptsz, MEMCPY)        \
  X(cuMemcpyDtoDAsync_v2, MEMCPY) X(cuMemcpyDtoDAsync_v2_ptsz, MEMCPY)        \
  X(cuMemsetD8_v2, MEMSET) X(cuMemsetD8_v2_ptds, MEMSET)                      \
  X(cuMemsetD16_v2, MEMSET) X(cuMemsetD16_v2_ptds, MEMSET)                    \
  X(cuMemsetD32_v2, MEMSET) X(cuMemsetD32_v2_ptds, MEMSET)                    \
  X(cuMemsetD8Async, MEMSET) X(cuMemsetD8Async_ptsz, MEMSET)                  \
  X(cuMemsetD16Async, MEMSET) X(cuMemsetD16Async_ptsz, MEMSET)                \
  X(cuMemsetD32Async, MEMSET) X(cuMemsetD32Async_ptsz, MEMSET)                \
  X(cuLaunchKernel, LAUNCH) X(cuLaunchKernel_ptsz, LAUNCH)                    \
  X(cuLaunchKernelEx, LAUNCH) X(cuLaunchKernelEx_ptsz, LAUNCH)                \
  X(cuLaunchCooperativeKernel, LAUNCH) X(cuLaunchCooperativeKernel_ptsz, LAUNCH) \
  X(cuGraphLaunch, LAUNCH) X(cuGraphLaunch_ptsz, LAUNCH)                      \
  X(cuCtxSynchronize, SYNC) X(cuStreamSynchronize, SYNC)                      \
  X(cuStreamSynchronize_ptsz, SYNC) X(cuEventSynchronize, SYNC)               \
  X(cuStreamWaitEvent, SYNC) X(cuStreamWaitEvent_ptsz, SYNC)
/* clang-format on */

enum gt_api {
#define GT_X_ENUM(name, kind) GT_API_##name,
  GT_API_LIST(GT_X_ENUM)
#undef GT_X_ENUM
      GT_API_COUNT
};

#endif
