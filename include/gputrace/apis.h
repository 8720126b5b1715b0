/* apis.h — the one table of traced entry points and their semantics.
 *
 * Contract: every API the shim records appears here exactly once, as
 *   X(name, kind, family, base, variant, v2_from, flags)
 *   kind     the record kind (schema.h GT_KIND_*)
 *   family   RT (libcudart), DRV (libcuda), NVTX, META (records about the trace)
 *   base     the name without its variant suffixes (_ptsz/_ptds; _v2 for the
 *            driver): what cuGetProcAddress is asked for
 *   variant  L (stream 0 is the legacy stream) or PT (the per-thread default
 *            stream twin, _ptsz/_ptds)
 *   v2_from  driver: the cudaVersion from which cuGetProcAddress(base)
 *            returns this entry point (0: always)
 *   flags    GT_AF_* below: what the call does, for every consumer
 * From this table come the enum (part of the on-disk format: append new
 * entries at the end, never reorder or remove; docs/trace-format.md), the
 * names, kinds and the rest of struct gt_api_info (common/names.c: gt_apis,
 * which cuGetProcAddress lookups are mapped through, by base and v2_from),
 * the shim's table of hooks, one per RT and DRV entry (preload/resolve.c:
 * gt_hooks, from which hooks_driver.c answers dlsym, cuGetProcAddress and
 * cudaGetDriverEntryPoint lookups; an entry without its hook fails the
 * link) and every consumer's predicates (gt_api_flags). Adding an API is
 * one line here, its hook, its signature's row in preload/hook_sigs.h
 * (checked against the toolkit's headers) and its name in docs/cli.md's
 * table of what is traced (tests/arch/check_checklists.py checks every
 * entry is there): the full list is docs/architecture.md's checklist.
 *
 * GT_API_LIST is an X-macro, the one list every table above is generated
 * from: each user defines X to pick the columns it needs.
 */
#ifndef GPUTRACE_APIS_H
#define GPUTRACE_APIS_H

/* Semantics (flags). */
/* clang-format off */
#define GT_AF_ASYNC (1u << 0)     /* stream-ordered: returns before the work is done */
#define GT_AF_BLOCKING (1u << 1)  /* the host waits for device work (a synchronization) */
#define GT_AF_QUERY (1u << 2)     /* asks whether work is done, never waits */
#define GT_AF_WAIT (1u << 3)      /* a stream waits for an event on the device; the host does not */
#define GT_AF_RECORD (1u << 4)    /* records an event on a stream */
#define GT_AF_ON_DEVICE (1u << 5) /* scope: every stream of the device */
#define GT_AF_ON_STREAM (1u << 6) /* scope: the stream in u.handle.handle */
#define GT_AF_ON_EVENT (1u << 7)  /* scope: the event in u.handle.handle */
#define GT_AF_PINNED (1u << 8)    /* page-locked host memory */
#define GT_AF_MANAGED (1u << 9)   /* managed (unified) memory */
#define GT_AF_VMM (1u << 10)      /* virtual memory management (handles) */
#define GT_AF_MAP (1u << 11)      /* maps or unmaps a VMM range: holds no memory itself */
#define GT_AF_GRAPH (1u << 12)    /* launches a graph */
#define GT_AF_HOST_FN (1u << 13)  /* queues a host function */
#define GT_AF_ARRAY (1u << 14)    /* a CUDA array (texture memory): ptr is the handle */
#define GT_AF_IPC (1u << 15)      /* memory of another process, mapped or unmapped */
#define GT_AF_PREFETCH (1u << 16) /* migrates managed memory (recorded as a copy) */
#define GT_AF_NODE (1u << 17)     /* adds a node to a graph: runs nothing (GT_F_NODE) */
#define GT_AF_CAPTURE (1u << 18)  /* begins or ends a stream capture */
#define GT_AF_STACK (1u << 19)    /* rare and structural (a capture begins, a graph is
                                     instantiated): its stack is taken whenever stacks are on */
#define GT_AF_EDIT (1u << 20)     /* sets a kernel node's parameters: runs nothing (GT_F_NODE) */
/* What a graph call does to the objects it names (model/graphs.c and
 * collector/graph_cache.c read these, never the names). */
#define GT_AF_CAPTURE_END (1u << 21) /* with CAPTURE: ends it (the graph it made) */
#define GT_AF_INTO_GRAPH (1u << 22)  /* with CAPTURE: begins it into a graph it is given */
#define GT_AF_INSTANTIATE (1u << 23) /* makes an executable of a graph */
#define GT_AF_EXEC_UPDATE (1u << 24) /* updates an executable from a graph */
#define GT_AF_ARG_GRAPH (1u << 25)   /* names a second graph in arg: a clone (a copy), or
                                        with NODE a child-graph node (the child) */
#define GT_AF_ENDS_GRAPH (1u << 26)  /* destroys the graph it names */
#define GT_AF_ENDS_EXEC (1u << 27)   /* destroys the executable it names */

#define GT_API_LIST(X) \
  X(none, NONE, META, none, L, 0, 0) \
  X(cudaMalloc, ALLOC, RT, cudaMalloc, L, 0, 0) \
  X(cudaMallocAsync, ALLOC, RT, cudaMallocAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMallocAsync_ptsz, ALLOC, RT, cudaMallocAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMallocFromPoolAsync, ALLOC, RT, cudaMallocFromPoolAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMallocFromPoolAsync_ptsz, ALLOC, RT, cudaMallocFromPoolAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMallocManaged, ALLOC, RT, cudaMallocManaged, L, 0, GT_AF_MANAGED) \
  X(cudaMallocPitch, ALLOC, RT, cudaMallocPitch, L, 0, 0) \
  X(cudaMallocHost, ALLOC, RT, cudaMallocHost, L, 0, GT_AF_PINNED) \
  X(cudaHostAlloc, ALLOC, RT, cudaHostAlloc, L, 0, GT_AF_PINNED) \
  X(cudaHostRegister, ALLOC, RT, cudaHostRegister, L, 0, GT_AF_PINNED) \
  X(cudaFree, FREE, RT, cudaFree, L, 0, 0) \
  X(cudaFreeAsync, FREE, RT, cudaFreeAsync, L, 0, GT_AF_ASYNC) \
  X(cudaFreeAsync_ptsz, FREE, RT, cudaFreeAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaFreeHost, FREE, RT, cudaFreeHost, L, 0, GT_AF_PINNED) \
  X(cudaHostUnregister, FREE, RT, cudaHostUnregister, L, 0, GT_AF_PINNED) \
  X(cudaMemcpy, MEMCPY, RT, cudaMemcpy, L, 0, 0) \
  X(cudaMemcpy_ptds, MEMCPY, RT, cudaMemcpy, PT, 0, 0) \
  X(cudaMemcpyAsync, MEMCPY, RT, cudaMemcpyAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyAsync_ptsz, MEMCPY, RT, cudaMemcpyAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2D, MEMCPY, RT, cudaMemcpy2D, L, 0, 0) \
  X(cudaMemcpy2D_ptds, MEMCPY, RT, cudaMemcpy2D, PT, 0, 0) \
  X(cudaMemcpy2DAsync, MEMCPY, RT, cudaMemcpy2DAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DAsync_ptsz, MEMCPY, RT, cudaMemcpy2DAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpyPeer, MEMCPY, RT, cudaMemcpyPeer, L, 0, 0) \
  X(cudaMemcpyPeerAsync, MEMCPY, RT, cudaMemcpyPeerAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyToSymbol, MEMCPY, RT, cudaMemcpyToSymbol, L, 0, 0) \
  X(cudaMemcpyToSymbol_ptds, MEMCPY, RT, cudaMemcpyToSymbol, PT, 0, 0) \
  X(cudaMemcpyFromSymbol, MEMCPY, RT, cudaMemcpyFromSymbol, L, 0, 0) \
  X(cudaMemcpyFromSymbol_ptds, MEMCPY, RT, cudaMemcpyFromSymbol, PT, 0, 0) \
  X(cudaMemcpyToSymbolAsync, MEMCPY, RT, cudaMemcpyToSymbolAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyToSymbolAsync_ptsz, MEMCPY, RT, cudaMemcpyToSymbolAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpyFromSymbolAsync, MEMCPY, RT, cudaMemcpyFromSymbolAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyFromSymbolAsync_ptsz, MEMCPY, RT, cudaMemcpyFromSymbolAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemset, MEMSET, RT, cudaMemset, L, 0, 0) \
  X(cudaMemset_ptds, MEMSET, RT, cudaMemset, PT, 0, 0) \
  X(cudaMemsetAsync, MEMSET, RT, cudaMemsetAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemsetAsync_ptsz, MEMSET, RT, cudaMemsetAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemset2D, MEMSET, RT, cudaMemset2D, L, 0, 0) \
  X(cudaMemset2D_ptds, MEMSET, RT, cudaMemset2D, PT, 0, 0) \
  X(cudaMemset2DAsync, MEMSET, RT, cudaMemset2DAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemset2DAsync_ptsz, MEMSET, RT, cudaMemset2DAsync, PT, 0, GT_AF_ASYNC) \
  X(__cudaLaunchKernel, LAUNCH, RT, __cudaLaunchKernel, L, 0, 0) \
  X(__cudaLaunchKernel_ptsz, LAUNCH, RT, __cudaLaunchKernel, PT, 0, 0) \
  X(cudaLaunchKernel, LAUNCH, RT, cudaLaunchKernel, L, 0, 0) \
  X(cudaLaunchKernel_ptsz, LAUNCH, RT, cudaLaunchKernel, PT, 0, 0) \
  X(cudaLaunchKernelExC, LAUNCH, RT, cudaLaunchKernelExC, L, 0, 0) \
  X(cudaLaunchKernelExC_ptsz, LAUNCH, RT, cudaLaunchKernelExC, PT, 0, 0) \
  X(cudaLaunchCooperativeKernel, LAUNCH, RT, cudaLaunchCooperativeKernel, L, 0, 0) \
  X(cudaLaunchCooperativeKernel_ptsz, LAUNCH, RT, cudaLaunchCooperativeKernel, PT, 0, 0) \
  X(cudaLaunchHostFunc, LAUNCH, RT, cudaLaunchHostFunc, L, 0, GT_AF_HOST_FN) \
  X(cudaLaunchHostFunc_ptsz, LAUNCH, RT, cudaLaunchHostFunc, PT, 0, GT_AF_HOST_FN) \
  X(cudaGraphLaunch, LAUNCH, RT, cudaGraphLaunch, L, 0, GT_AF_GRAPH) \
  X(cudaGraphLaunch_ptsz, LAUNCH, RT, cudaGraphLaunch, PT, 0, GT_AF_GRAPH) \
  X(cudaDeviceSynchronize, SYNC, RT, cudaDeviceSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_DEVICE) \
  X(cudaStreamSynchronize, SYNC, RT, cudaStreamSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_STREAM) \
  X(cudaStreamSynchronize_ptsz, SYNC, RT, cudaStreamSynchronize, PT, 0, GT_AF_BLOCKING|GT_AF_ON_STREAM) \
  X(cudaEventSynchronize, SYNC, RT, cudaEventSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_EVENT) \
  X(cudaStreamWaitEvent, SYNC, RT, cudaStreamWaitEvent, L, 0, GT_AF_WAIT|GT_AF_ON_STREAM) \
  X(cudaStreamWaitEvent_ptsz, SYNC, RT, cudaStreamWaitEvent, PT, 0, GT_AF_WAIT|GT_AF_ON_STREAM) \
  X(cudaStreamQuery, SYNC, RT, cudaStreamQuery, L, 0, GT_AF_QUERY|GT_AF_ON_STREAM) \
  X(cudaStreamQuery_ptsz, SYNC, RT, cudaStreamQuery, PT, 0, GT_AF_QUERY|GT_AF_ON_STREAM) \
  X(cudaEventQuery, SYNC, RT, cudaEventQuery, L, 0, GT_AF_QUERY|GT_AF_ON_EVENT) \
  X(cudaStreamCreate, STREAM, RT, cudaStreamCreate, L, 0, 0) \
  X(cudaStreamCreateWithFlags, STREAM, RT, cudaStreamCreateWithFlags, L, 0, 0) \
  X(cudaStreamCreateWithPriority, STREAM, RT, cudaStreamCreateWithPriority, L, 0, 0) \
  X(cudaStreamDestroy, STREAM, RT, cudaStreamDestroy, L, 0, 0) \
  X(cudaEventCreate, EVENT, RT, cudaEventCreate, L, 0, 0) \
  X(cudaEventCreateWithFlags, EVENT, RT, cudaEventCreateWithFlags, L, 0, 0) \
  X(cudaEventDestroy, EVENT, RT, cudaEventDestroy, L, 0, 0) \
  X(cudaEventRecord, EVENT, RT, cudaEventRecord, L, 0, GT_AF_RECORD|GT_AF_ON_STREAM) \
  X(cudaEventRecord_ptsz, EVENT, RT, cudaEventRecord, PT, 0, GT_AF_RECORD|GT_AF_ON_STREAM) \
  X(cudaEventRecordWithFlags, EVENT, RT, cudaEventRecordWithFlags, L, 0, GT_AF_RECORD|GT_AF_ON_STREAM) \
  X(cudaEventRecordWithFlags_ptsz, EVENT, RT, cudaEventRecordWithFlags, PT, 0, GT_AF_RECORD|GT_AF_ON_STREAM) \
  X(nvtxMarkA, NVTX, NVTX, nvtxMarkA, L, 0, 0) \
  X(nvtxMarkEx, NVTX, NVTX, nvtxMarkEx, L, 0, 0) \
  X(nvtxRangeStartA, NVTX, NVTX, nvtxRangeStartA, L, 0, 0) \
  X(nvtxRangeStartEx, NVTX, NVTX, nvtxRangeStartEx, L, 0, 0) \
  X(nvtxRangeEnd, NVTX, NVTX, nvtxRangeEnd, L, 0, 0) \
  X(nvtxRangePushA, NVTX, NVTX, nvtxRangePushA, L, 0, 0) \
  X(nvtxRangePushEx, NVTX, NVTX, nvtxRangePushEx, L, 0, 0) \
  X(nvtxRangePop, NVTX, NVTX, nvtxRangePop, L, 0, 0) \
  X(nvtxDomainMarkEx, NVTX, NVTX, nvtxDomainMarkEx, L, 0, 0) \
  X(nvtxDomainRangeStartEx, NVTX, NVTX, nvtxDomainRangeStartEx, L, 0, 0) \
  X(nvtxDomainRangeEnd, NVTX, NVTX, nvtxDomainRangeEnd, L, 0, 0) \
  X(nvtxDomainRangePushEx, NVTX, NVTX, nvtxDomainRangePushEx, L, 0, 0) \
  X(nvtxDomainRangePop, NVTX, NVTX, nvtxDomainRangePop, L, 0, 0) \
  X(gputrace_process, PROCESS, META, gputrace_process, L, 0, 0) \
  X(gputrace_kernel_name, KERNEL_NAME, META, gputrace_kernel_name, L, 0, 0) \
  X(gputrace_drop, DROP, META, gputrace_drop, L, 0, 0) \
  X(gputrace_lost, LOST, META, gputrace_lost, L, 0, 0) \
  X(gputrace_stack, STACK, META, gputrace_stack, L, 0, 0) \
  X(gputrace_module, MODULE, META, gputrace_module, L, 0, 0) \
  X(gputrace_pyframe, PYFRAME, META, gputrace_pyframe, L, 0, 0) \
  X(gputrace_frame, FRAME, META, gputrace_frame, L, 0, 0) \
  X(gputrace_metric, METRIC, META, gputrace_metric, L, 0, 0) \
  X(gputrace_note, NOTE, META, gputrace_note, L, 0, 0) \
  X(cuMemAlloc_v2, ALLOC, DRV, cuMemAlloc, L, 3020, 0) \
  X(cuMemAllocPitch_v2, ALLOC, DRV, cuMemAllocPitch, L, 3020, 0) \
  X(cuMemAllocManaged, ALLOC, DRV, cuMemAllocManaged, L, 0, GT_AF_MANAGED) \
  X(cuMemAllocAsync, ALLOC, DRV, cuMemAllocAsync, L, 0, GT_AF_ASYNC) \
  X(cuMemAllocAsync_ptsz, ALLOC, DRV, cuMemAllocAsync, PT, 0, GT_AF_ASYNC) \
  X(cuMemAllocHost_v2, ALLOC, DRV, cuMemAllocHost, L, 3020, GT_AF_PINNED) \
  X(cuMemHostAlloc, ALLOC, DRV, cuMemHostAlloc, L, 0, GT_AF_PINNED) \
  X(cuMemHostRegister_v2, ALLOC, DRV, cuMemHostRegister, L, 6050, GT_AF_PINNED) \
  X(cuMemCreate, ALLOC, DRV, cuMemCreate, L, 0, GT_AF_VMM) \
  X(cuMemMap, ALLOC, DRV, cuMemMap, L, 0, GT_AF_VMM|GT_AF_MAP) \
  X(cuMemFree_v2, FREE, DRV, cuMemFree, L, 3020, 0) \
  X(cuMemFreeAsync, FREE, DRV, cuMemFreeAsync, L, 0, GT_AF_ASYNC) \
  X(cuMemFreeAsync_ptsz, FREE, DRV, cuMemFreeAsync, PT, 0, GT_AF_ASYNC) \
  X(cuMemFreeHost, FREE, DRV, cuMemFreeHost, L, 0, GT_AF_PINNED) \
  X(cuMemHostUnregister, FREE, DRV, cuMemHostUnregister, L, 0, GT_AF_PINNED) \
  X(cuMemRelease, FREE, DRV, cuMemRelease, L, 0, GT_AF_VMM) \
  X(cuMemUnmap, FREE, DRV, cuMemUnmap, L, 0, GT_AF_VMM|GT_AF_MAP) \
  X(cuMemcpyHtoD_v2, MEMCPY, DRV, cuMemcpyHtoD, L, 3020, 0) \
  X(cuMemcpyHtoD_v2_ptds, MEMCPY, DRV, cuMemcpyHtoD, PT, 3020, 0) \
  X(cuMemcpyDtoH_v2, MEMCPY, DRV, cuMemcpyDtoH, L, 3020, 0) \
  X(cuMemcpyDtoH_v2_ptds, MEMCPY, DRV, cuMemcpyDtoH, PT, 3020, 0) \
  X(cuMemcpyDtoD_v2, MEMCPY, DRV, cuMemcpyDtoD, L, 3020, 0) \
  X(cuMemcpyDtoD_v2_ptds, MEMCPY, DRV, cuMemcpyDtoD, PT, 3020, 0) \
  X(cuMemcpy, MEMCPY, DRV, cuMemcpy, L, 0, 0) \
  X(cuMemcpy_ptds, MEMCPY, DRV, cuMemcpy, PT, 0, 0) \
  X(cuMemcpyAsync, MEMCPY, DRV, cuMemcpyAsync, L, 0, GT_AF_ASYNC) \
  X(cuMemcpyAsync_ptsz, MEMCPY, DRV, cuMemcpyAsync, PT, 0, GT_AF_ASYNC) \
  X(cuMemcpyHtoDAsync_v2, MEMCPY, DRV, cuMemcpyHtoDAsync, L, 3020, GT_AF_ASYNC) \
  X(cuMemcpyHtoDAsync_v2_ptsz, MEMCPY, DRV, cuMemcpyHtoDAsync, PT, 3020, GT_AF_ASYNC) \
  X(cuMemcpyDtoHAsync_v2, MEMCPY, DRV, cuMemcpyDtoHAsync, L, 3020, GT_AF_ASYNC) \
  X(cuMemcpyDtoHAsync_v2_ptsz, MEMCPY, DRV, cuMemcpyDtoHAsync, PT, 3020, GT_AF_ASYNC) \
  X(cuMemcpyDtoDAsync_v2, MEMCPY, DRV, cuMemcpyDtoDAsync, L, 3020, GT_AF_ASYNC) \
  X(cuMemcpyDtoDAsync_v2_ptsz, MEMCPY, DRV, cuMemcpyDtoDAsync, PT, 3020, GT_AF_ASYNC) \
  X(cuMemsetD8_v2, MEMSET, DRV, cuMemsetD8, L, 3020, 0) \
  X(cuMemsetD8_v2_ptds, MEMSET, DRV, cuMemsetD8, PT, 3020, 0) \
  X(cuMemsetD16_v2, MEMSET, DRV, cuMemsetD16, L, 3020, 0) \
  X(cuMemsetD16_v2_ptds, MEMSET, DRV, cuMemsetD16, PT, 3020, 0) \
  X(cuMemsetD32_v2, MEMSET, DRV, cuMemsetD32, L, 3020, 0) \
  X(cuMemsetD32_v2_ptds, MEMSET, DRV, cuMemsetD32, PT, 3020, 0) \
  X(cuMemsetD8Async, MEMSET, DRV, cuMemsetD8Async, L, 0, GT_AF_ASYNC) \
  X(cuMemsetD8Async_ptsz, MEMSET, DRV, cuMemsetD8Async, PT, 0, GT_AF_ASYNC) \
  X(cuMemsetD16Async, MEMSET, DRV, cuMemsetD16Async, L, 0, GT_AF_ASYNC) \
  X(cuMemsetD16Async_ptsz, MEMSET, DRV, cuMemsetD16Async, PT, 0, GT_AF_ASYNC) \
  X(cuMemsetD32Async, MEMSET, DRV, cuMemsetD32Async, L, 0, GT_AF_ASYNC) \
  X(cuMemsetD32Async_ptsz, MEMSET, DRV, cuMemsetD32Async, PT, 0, GT_AF_ASYNC) \
  X(cuLaunchKernel, LAUNCH, DRV, cuLaunchKernel, L, 0, 0) \
  X(cuLaunchKernel_ptsz, LAUNCH, DRV, cuLaunchKernel, PT, 0, 0) \
  X(cuLaunchKernelEx, LAUNCH, DRV, cuLaunchKernelEx, L, 0, 0) \
  X(cuLaunchKernelEx_ptsz, LAUNCH, DRV, cuLaunchKernelEx, PT, 0, 0) \
  X(cuLaunchCooperativeKernel, LAUNCH, DRV, cuLaunchCooperativeKernel, L, 0, 0) \
  X(cuLaunchCooperativeKernel_ptsz, LAUNCH, DRV, cuLaunchCooperativeKernel, PT, 0, 0) \
  X(cuGraphLaunch, LAUNCH, DRV, cuGraphLaunch, L, 0, GT_AF_GRAPH) \
  X(cuGraphLaunch_ptsz, LAUNCH, DRV, cuGraphLaunch, PT, 0, GT_AF_GRAPH) \
  X(cuCtxSynchronize, SYNC, DRV, cuCtxSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_DEVICE) \
  X(cuStreamSynchronize, SYNC, DRV, cuStreamSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_STREAM) \
  X(cuStreamSynchronize_ptsz, SYNC, DRV, cuStreamSynchronize, PT, 0, GT_AF_BLOCKING|GT_AF_ON_STREAM) \
  X(cuEventSynchronize, SYNC, DRV, cuEventSynchronize, L, 0, GT_AF_BLOCKING|GT_AF_ON_EVENT) \
  X(cuStreamWaitEvent, SYNC, DRV, cuStreamWaitEvent, L, 0, GT_AF_WAIT|GT_AF_ON_STREAM) \
  X(cuStreamWaitEvent_ptsz, SYNC, DRV, cuStreamWaitEvent, PT, 0, GT_AF_WAIT|GT_AF_ON_STREAM) \
  X(cudaMallocArray, ALLOC, RT, cudaMallocArray, L, 0, GT_AF_ARRAY) \
  X(cudaMalloc3DArray, ALLOC, RT, cudaMalloc3DArray, L, 0, GT_AF_ARRAY) \
  X(cudaMallocMipmappedArray, ALLOC, RT, cudaMallocMipmappedArray, L, 0, GT_AF_ARRAY) \
  X(cudaFreeArray, FREE, RT, cudaFreeArray, L, 0, GT_AF_ARRAY) \
  X(cudaFreeMipmappedArray, FREE, RT, cudaFreeMipmappedArray, L, 0, GT_AF_ARRAY) \
  X(cudaMalloc3D, ALLOC, RT, cudaMalloc3D, L, 0, 0) \
  X(cudaIpcOpenMemHandle, ALLOC, RT, cudaIpcOpenMemHandle, L, 0, GT_AF_IPC) \
  X(cudaIpcCloseMemHandle, FREE, RT, cudaIpcCloseMemHandle, L, 0, GT_AF_IPC) \
  X(cudaMemcpy3D, MEMCPY, RT, cudaMemcpy3D, L, 0, 0) \
  X(cudaMemcpy3D_ptds, MEMCPY, RT, cudaMemcpy3D, PT, 0, 0) \
  X(cudaMemcpy3DAsync, MEMCPY, RT, cudaMemcpy3DAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy3DAsync_ptsz, MEMCPY, RT, cudaMemcpy3DAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy3DPeer, MEMCPY, RT, cudaMemcpy3DPeer, L, 0, 0) \
  X(cudaMemcpy3DPeer_ptds, MEMCPY, RT, cudaMemcpy3DPeer, PT, 0, 0) \
  X(cudaMemcpy3DPeerAsync, MEMCPY, RT, cudaMemcpy3DPeerAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy3DPeerAsync_ptsz, MEMCPY, RT, cudaMemcpy3DPeerAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DToArray, MEMCPY, RT, cudaMemcpy2DToArray, L, 0, 0) \
  X(cudaMemcpy2DToArray_ptds, MEMCPY, RT, cudaMemcpy2DToArray, PT, 0, 0) \
  X(cudaMemcpy2DToArrayAsync, MEMCPY, RT, cudaMemcpy2DToArrayAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DToArrayAsync_ptsz, MEMCPY, RT, cudaMemcpy2DToArrayAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DFromArray, MEMCPY, RT, cudaMemcpy2DFromArray, L, 0, 0) \
  X(cudaMemcpy2DFromArray_ptds, MEMCPY, RT, cudaMemcpy2DFromArray, PT, 0, 0) \
  X(cudaMemcpy2DFromArrayAsync, MEMCPY, RT, cudaMemcpy2DFromArrayAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DFromArrayAsync_ptsz, MEMCPY, RT, cudaMemcpy2DFromArrayAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpyToArray, MEMCPY, RT, cudaMemcpyToArray, L, 0, 0) \
  X(cudaMemcpyToArray_ptds, MEMCPY, RT, cudaMemcpyToArray, PT, 0, 0) \
  X(cudaMemcpyToArrayAsync, MEMCPY, RT, cudaMemcpyToArrayAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyToArrayAsync_ptsz, MEMCPY, RT, cudaMemcpyToArrayAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpyFromArray, MEMCPY, RT, cudaMemcpyFromArray, L, 0, 0) \
  X(cudaMemcpyFromArray_ptds, MEMCPY, RT, cudaMemcpyFromArray, PT, 0, 0) \
  X(cudaMemcpyFromArrayAsync, MEMCPY, RT, cudaMemcpyFromArrayAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyFromArrayAsync_ptsz, MEMCPY, RT, cudaMemcpyFromArrayAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy2DArrayToArray, MEMCPY, RT, cudaMemcpy2DArrayToArray, L, 0, 0) \
  X(cudaMemcpy2DArrayToArray_ptds, MEMCPY, RT, cudaMemcpy2DArrayToArray, PT, 0, 0) \
  X(cudaMemcpyArrayToArray, MEMCPY, RT, cudaMemcpyArrayToArray, L, 0, 0) \
  X(cudaMemcpyArrayToArray_ptds, MEMCPY, RT, cudaMemcpyArrayToArray, PT, 0, 0) \
  X(cudaMemcpyBatchAsync, MEMCPY, RT, cudaMemcpyBatchAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpyBatchAsync_ptsz, MEMCPY, RT, cudaMemcpyBatchAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemcpy3DBatchAsync, MEMCPY, RT, cudaMemcpy3DBatchAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemcpy3DBatchAsync_ptsz, MEMCPY, RT, cudaMemcpy3DBatchAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaMemPrefetchAsync, MEMCPY, RT, cudaMemPrefetchAsync, L, 0, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cudaMemPrefetchAsync_ptsz, MEMCPY, RT, cudaMemPrefetchAsync, PT, 0, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cudaMemPrefetchBatchAsync, MEMCPY, RT, cudaMemPrefetchBatchAsync, L, 0, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cudaMemPrefetchBatchAsync_ptsz, MEMCPY, RT, cudaMemPrefetchBatchAsync, PT, 0, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cudaMemset3D, MEMSET, RT, cudaMemset3D, L, 0, 0) \
  X(cudaMemset3D_ptds, MEMSET, RT, cudaMemset3D, PT, 0, 0) \
  X(cudaMemset3DAsync, MEMSET, RT, cudaMemset3DAsync, L, 0, GT_AF_ASYNC) \
  X(cudaMemset3DAsync_ptsz, MEMSET, RT, cudaMemset3DAsync, PT, 0, GT_AF_ASYNC) \
  X(cudaStreamAddCallback, LAUNCH, RT, cudaStreamAddCallback, L, 0, GT_AF_HOST_FN) \
  X(cudaStreamAddCallback_ptsz, LAUNCH, RT, cudaStreamAddCallback, PT, 0, GT_AF_HOST_FN) \
  X(cuArrayCreate_v2, ALLOC, DRV, cuArrayCreate, L, 3020, GT_AF_ARRAY) \
  X(cuArray3DCreate_v2, ALLOC, DRV, cuArray3DCreate, L, 3020, GT_AF_ARRAY) \
  X(cuMipmappedArrayCreate, ALLOC, DRV, cuMipmappedArrayCreate, L, 0, GT_AF_ARRAY) \
  X(cuArrayDestroy, FREE, DRV, cuArrayDestroy, L, 0, GT_AF_ARRAY) \
  X(cuMipmappedArrayDestroy, FREE, DRV, cuMipmappedArrayDestroy, L, 0, GT_AF_ARRAY) \
  X(cuIpcOpenMemHandle_v2, ALLOC, DRV, cuIpcOpenMemHandle, L, 11000, GT_AF_IPC) \
  X(cuIpcCloseMemHandle, FREE, DRV, cuIpcCloseMemHandle, L, 0, GT_AF_IPC) \
  X(cuMemcpy2D_v2, MEMCPY, DRV, cuMemcpy2D, L, 3020, 0) \
  X(cuMemcpy2D_v2_ptds, MEMCPY, DRV, cuMemcpy2D, PT, 3020, 0) \
  X(cuMemcpy2DUnaligned_v2, MEMCPY, DRV, cuMemcpy2DUnaligned, L, 3020, 0) \
  X(cuMemcpy2DUnaligned_v2_ptds, MEMCPY, DRV, cuMemcpy2DUnaligned, PT, 3020, 0) \
  X(cuMemcpy2DAsync_v2, MEMCPY, DRV, cuMemcpy2DAsync, L, 3020, GT_AF_ASYNC) \
  X(cuMemcpy2DAsync_v2_ptsz, MEMCPY, DRV, cuMemcpy2DAsync, PT, 3020, GT_AF_ASYNC) \
  X(cuMemcpy3D_v2, MEMCPY, DRV, cuMemcpy3D, L, 3020, 0) \
  X(cuMemcpy3D_v2_ptds, MEMCPY, DRV, cuMemcpy3D, PT, 3020, 0) \
  X(cuMemcpy3DAsync_v2, MEMCPY, DRV, cuMemcpy3DAsync, L, 3020, GT_AF_ASYNC) \
  X(cuMemcpy3DAsync_v2_ptsz, MEMCPY, DRV, cuMemcpy3DAsync, PT, 3020, GT_AF_ASYNC) \
  X(cuMemPrefetchAsync_v2, MEMCPY, DRV, cuMemPrefetchAsync, L, 12020, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cuMemPrefetchAsync_v2_ptsz, MEMCPY, DRV, cuMemPrefetchAsync, PT, 12020, GT_AF_ASYNC|GT_AF_PREFETCH) \
  X(cuLaunchHostFunc, LAUNCH, DRV, cuLaunchHostFunc, L, 0, GT_AF_HOST_FN) \
  X(cuLaunchHostFunc_ptsz, LAUNCH, DRV, cuLaunchHostFunc, PT, 0, GT_AF_HOST_FN) \
  X(cuStreamAddCallback, LAUNCH, DRV, cuStreamAddCallback, L, 0, GT_AF_HOST_FN) \
  X(cuStreamAddCallback_ptsz, LAUNCH, DRV, cuStreamAddCallback, PT, 0, GT_AF_HOST_FN) \
  X(cudaStreamBeginCapture, GRAPH, RT, cudaStreamBeginCapture, L, 0, GT_AF_CAPTURE|GT_AF_STACK) \
  X(cudaStreamBeginCapture_ptsz, GRAPH, RT, cudaStreamBeginCapture, PT, 0, GT_AF_CAPTURE|GT_AF_STACK) \
  X(cudaStreamBeginCaptureToGraph, GRAPH, RT, cudaStreamBeginCaptureToGraph, L, 0, GT_AF_CAPTURE|GT_AF_STACK|GT_AF_INTO_GRAPH) \
  X(cudaStreamBeginCaptureToGraph_ptsz, GRAPH, RT, cudaStreamBeginCaptureToGraph, PT, 0, GT_AF_CAPTURE|GT_AF_STACK|GT_AF_INTO_GRAPH) \
  X(cudaStreamEndCapture, GRAPH, RT, cudaStreamEndCapture, L, 0, GT_AF_CAPTURE|GT_AF_CAPTURE_END) \
  X(cudaStreamEndCapture_ptsz, GRAPH, RT, cudaStreamEndCapture, PT, 0, GT_AF_CAPTURE|GT_AF_CAPTURE_END) \
  X(cudaProfilerStart, GRAPH, RT, cudaProfilerStart, L, 0, 0) \
  X(cudaProfilerStop, GRAPH, RT, cudaProfilerStop, L, 0, 0) \
  X(cudaGraphInstantiate, GRAPH, RT, cudaGraphInstantiate, L, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cudaGraphInstantiateWithFlags, GRAPH, RT, cudaGraphInstantiateWithFlags, L, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cudaGraphInstantiateWithParams, GRAPH, RT, cudaGraphInstantiateWithParams, L, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cudaGraphInstantiateWithParams_ptsz, GRAPH, RT, cudaGraphInstantiateWithParams, PT, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cudaGraphExecUpdate, GRAPH, RT, cudaGraphExecUpdate, L, 0, GT_AF_EXEC_UPDATE) \
  X(cudaGraphClone, GRAPH, RT, cudaGraphClone, L, 0, GT_AF_ARG_GRAPH) \
  X(cudaGraphExecDestroy, GRAPH, RT, cudaGraphExecDestroy, L, 0, GT_AF_ENDS_EXEC) \
  X(cudaGraphDestroy, GRAPH, RT, cudaGraphDestroy, L, 0, GT_AF_ENDS_GRAPH) \
  X(cudaGraphUpload, GRAPH, RT, cudaGraphUpload, L, 0, GT_AF_ASYNC) \
  X(cudaGraphUpload_ptsz, GRAPH, RT, cudaGraphUpload, PT, 0, GT_AF_ASYNC) \
  X(cudaGraphAddChildGraphNode, GRAPH, RT, cudaGraphAddChildGraphNode, L, 0, GT_AF_NODE|GT_AF_ARG_GRAPH) \
  X(cudaGraphAddEmptyNode, GRAPH, RT, cudaGraphAddEmptyNode, L, 0, GT_AF_NODE) \
  X(cudaGraphExecKernelNodeSetParams, LAUNCH, RT, cudaGraphExecKernelNodeSetParams, L, 0, GT_AF_EDIT) \
  X(cudaGraphAddKernelNode, LAUNCH, RT, cudaGraphAddKernelNode, L, 0, GT_AF_NODE) \
  X(cudaGraphAddHostNode, LAUNCH, RT, cudaGraphAddHostNode, L, 0, GT_AF_HOST_FN|GT_AF_NODE) \
  X(cudaGraphAddMemcpyNode, MEMCPY, RT, cudaGraphAddMemcpyNode, L, 0, GT_AF_NODE) \
  X(cudaGraphAddMemcpyNode1D, MEMCPY, RT, cudaGraphAddMemcpyNode1D, L, 0, GT_AF_NODE) \
  X(cudaGraphAddMemsetNode, MEMSET, RT, cudaGraphAddMemsetNode, L, 0, GT_AF_NODE) \
  X(cudaGraphAddMemAllocNode, ALLOC, RT, cudaGraphAddMemAllocNode, L, 0, GT_AF_NODE) \
  X(cudaGraphAddMemFreeNode, FREE, RT, cudaGraphAddMemFreeNode, L, 0, GT_AF_NODE) \
  X(cuStreamBeginCapture_v2, GRAPH, DRV, cuStreamBeginCapture, L, 10010, GT_AF_CAPTURE|GT_AF_STACK) \
  X(cuStreamBeginCapture_v2_ptsz, GRAPH, DRV, cuStreamBeginCapture, PT, 10010, GT_AF_CAPTURE|GT_AF_STACK) \
  X(cuStreamEndCapture, GRAPH, DRV, cuStreamEndCapture, L, 0, GT_AF_CAPTURE|GT_AF_CAPTURE_END) \
  X(cuStreamEndCapture_ptsz, GRAPH, DRV, cuStreamEndCapture, PT, 0, GT_AF_CAPTURE|GT_AF_CAPTURE_END) \
  X(cuGraphInstantiateWithFlags, GRAPH, DRV, cuGraphInstantiateWithFlags, L, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cuGraphInstantiateWithParams, GRAPH, DRV, cuGraphInstantiateWithParams, L, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cuGraphInstantiateWithParams_ptsz, GRAPH, DRV, cuGraphInstantiateWithParams, PT, 0, GT_AF_STACK|GT_AF_INSTANTIATE) \
  X(cuGraphAddKernelNode_v2, LAUNCH, DRV, cuGraphAddKernelNode, L, 12000, GT_AF_NODE) \
  X(cuGraphExecDestroy, GRAPH, DRV, cuGraphExecDestroy, L, 0, GT_AF_ENDS_EXEC) \
  X(cuGraphDestroy, GRAPH, DRV, cuGraphDestroy, L, 0, GT_AF_ENDS_GRAPH) \
  X(cuGraphUpload, GRAPH, DRV, cuGraphUpload, L, 0, GT_AF_ASYNC) \
  X(cuGraphUpload_ptsz, GRAPH, DRV, cuGraphUpload, PT, 0, GT_AF_ASYNC) \
  X(cudaGraphKernelNodeSetParams, LAUNCH, RT, cudaGraphKernelNodeSetParams, L, 0, GT_AF_EDIT) \
  X(cuGraphKernelNodeSetParams_v2, LAUNCH, DRV, cuGraphKernelNodeSetParams, L, 12000, GT_AF_EDIT) \
  X(cuGraphExecKernelNodeSetParams_v2, LAUNCH, DRV, cuGraphExecKernelNodeSetParams, L, 12000, GT_AF_EDIT) \
  X(cuStreamBeginCaptureToGraph, GRAPH, DRV, cuStreamBeginCaptureToGraph, L, 0, GT_AF_CAPTURE|GT_AF_STACK|GT_AF_INTO_GRAPH) \
  X(cuStreamBeginCaptureToGraph_ptsz, GRAPH, DRV, cuStreamBeginCaptureToGraph, PT, 0, GT_AF_CAPTURE|GT_AF_STACK|GT_AF_INTO_GRAPH) \
  X(cuGraphExecUpdate_v2, GRAPH, DRV, cuGraphExecUpdate, L, 12000, GT_AF_EXEC_UPDATE)

/* clang-format on */

enum gt_api {
#define GT_X_ENUM(name, ...) GT_API_##name,
  GT_API_LIST(GT_X_ENUM)
#undef GT_X_ENUM
      GT_API_COUNT
};

enum gt_api_family { GT_FAM_META, GT_FAM_RT, GT_FAM_DRV, GT_FAM_NVTX };

/* One entry of the table, for code that looks APIs up at run time. */
struct gt_api_info {
  const char *name, *base;
  unsigned char kind, family, per_thread;
  unsigned short v2_from;
  unsigned flags;
};
extern const struct gt_api_info gt_apis[GT_API_COUNT]; /* common/names.c */

static inline unsigned gt_api_flags(unsigned api) {
  return api < GT_API_COUNT ? gt_apis[api].flags : 0;
}

#endif
