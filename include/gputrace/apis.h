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
  X(gputrace_pyframe, PYFRAME) X(gputrace_frame, FRAME)
/* clang-format on */

enum gt_api {
#define GT_X_ENUM(name, kind) GT_API_##name,
  GT_API_LIST(GT_X_ENUM)
#undef GT_X_ENUM
      GT_API_COUNT
};

#endif
