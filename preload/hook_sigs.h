/* hook_sigs.h — the C type of every hooked runtime and driver entry point,
 * one row per base name of apis.h.
 *
 * Contract: S(base, ret, params) is the type of every RT and DRV entry of
 * apis.h whose base column is `base` (its _ptsz/_ptds twins and, for the
 * driver, the _v2 entry point hooked: one version per base), spelled with
 * the toolkit's type names. The same row is compiled twice:
 *  - in the shim (shim.h), against cuda_abi.h's declarations of those
 *    names: it declares each hook (a definition that differs fails to
 *    compile: conflicting types) and types the real function that GT_REAL
 *    and DRV_REAL forward to (gt_fn_<name>_t);
 *  - in preload/sigcheck/hook_signatures.c, against the toolkit's
 *    cuda_runtime_api.h and cuda.h: each entry's type must be the header's
 *    (the build fails otherwise), so the names here are the toolkit's
 *    parameter types; test_cuda_abi checks that cuda_abi.h lays those types
 *    out as the toolkit does.
 * GT_SIG_DIM3 stands for a dim3 parameter: two integer registers in the
 * shim (cuda_abi.h GT_DIM3_PARAM), dim3 in the check. The few rows that
 * cannot be the header's (a hook taking CUDA 12's and 13's lists at once)
 * are listed in hook_signatures.c with their reason. This file includes
 * nothing: its includer provides the type names.
 */
#ifndef GPUTRACE_HOOK_SIGS_H
#define GPUTRACE_HOOK_SIGS_H

/* clang-format off */
#define GT_SIG_LIST(S) \
  S(cudaMalloc, cudaError_t, (void **, size_t)) \
  S(cudaMallocAsync, cudaError_t, (void **, size_t, cudaStream_t)) \
  S(cudaMallocFromPoolAsync, cudaError_t, (void **, size_t, cudaMemPool_t, cudaStream_t)) \
  S(cudaMallocManaged, cudaError_t, (void **, size_t, unsigned int)) \
  S(cudaMallocPitch, cudaError_t, (void **, size_t *, size_t, size_t)) \
  S(cudaMallocHost, cudaError_t, (void **, size_t)) \
  S(cudaHostAlloc, cudaError_t, (void **, size_t, unsigned int)) \
  S(cudaHostRegister, cudaError_t, (void *, size_t, unsigned int)) \
  S(cudaFree, cudaError_t, (void *)) \
  S(cudaFreeAsync, cudaError_t, (void *, cudaStream_t)) \
  S(cudaFreeHost, cudaError_t, (void *)) \
  S(cudaHostUnregister, cudaError_t, (void *)) \
  S(cudaMemcpy, cudaError_t, (void *, const void *, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyAsync, cudaError_t, (void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpy2D, cudaError_t, (void *, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpy2DAsync, cudaError_t, (void *, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpyPeer, cudaError_t, (void *, int, const void *, int, size_t)) \
  S(cudaMemcpyPeerAsync, cudaError_t, (void *, int, const void *, int, size_t, cudaStream_t)) \
  S(cudaMemcpyToSymbol, cudaError_t, (const void *, const void *, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyFromSymbol, cudaError_t, (void *, const void *, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyToSymbolAsync, cudaError_t, (const void *, const void *, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpyFromSymbolAsync, cudaError_t, (void *, const void *, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemset, cudaError_t, (void *, int, size_t)) \
  S(cudaMemsetAsync, cudaError_t, (void *, int, size_t, cudaStream_t)) \
  S(cudaMemset2D, cudaError_t, (void *, size_t, int, size_t, size_t)) \
  S(cudaMemset2DAsync, cudaError_t, (void *, size_t, int, size_t, size_t, cudaStream_t)) \
  S(__cudaLaunchKernel, cudaError_t, (cudaKernel_t, GT_SIG_DIM3, GT_SIG_DIM3, void **, size_t, cudaStream_t)) \
  S(cudaLaunchKernel, cudaError_t, (const void *, GT_SIG_DIM3, GT_SIG_DIM3, void **, size_t, cudaStream_t)) \
  S(cudaLaunchKernelExC, cudaError_t, (const cudaLaunchConfig_t *, const void *, void **)) \
  S(cudaLaunchCooperativeKernel, cudaError_t, (const void *, GT_SIG_DIM3, GT_SIG_DIM3, void **, size_t, cudaStream_t)) \
  S(cudaLaunchHostFunc, cudaError_t, (cudaStream_t, cudaHostFn_t, void *)) \
  S(cudaGraphLaunch, cudaError_t, (cudaGraphExec_t, cudaStream_t)) \
  S(cudaDeviceSynchronize, cudaError_t, (void)) \
  S(cudaStreamSynchronize, cudaError_t, (cudaStream_t)) \
  S(cudaEventSynchronize, cudaError_t, (cudaEvent_t)) \
  S(cudaStreamWaitEvent, cudaError_t, (cudaStream_t, cudaEvent_t, unsigned int)) \
  S(cudaStreamQuery, cudaError_t, (cudaStream_t)) \
  S(cudaEventQuery, cudaError_t, (cudaEvent_t)) \
  S(cudaStreamCreate, cudaError_t, (cudaStream_t *)) \
  S(cudaStreamCreateWithFlags, cudaError_t, (cudaStream_t *, unsigned int)) \
  S(cudaStreamCreateWithPriority, cudaError_t, (cudaStream_t *, unsigned int, int)) \
  S(cudaStreamDestroy, cudaError_t, (cudaStream_t)) \
  S(cudaEventCreate, cudaError_t, (cudaEvent_t *)) \
  S(cudaEventCreateWithFlags, cudaError_t, (cudaEvent_t *, unsigned int)) \
  S(cudaEventDestroy, cudaError_t, (cudaEvent_t)) \
  S(cudaEventRecord, cudaError_t, (cudaEvent_t, cudaStream_t)) \
  S(cudaEventRecordWithFlags, cudaError_t, (cudaEvent_t, cudaStream_t, unsigned int)) \
  S(cuMemAlloc, CUresult, (CUdeviceptr *, size_t)) \
  S(cuMemAllocPitch, CUresult, (CUdeviceptr *, size_t *, size_t, size_t, unsigned int)) \
  S(cuMemAllocManaged, CUresult, (CUdeviceptr *, size_t, unsigned int)) \
  S(cuMemAllocAsync, CUresult, (CUdeviceptr *, size_t, CUstream)) \
  S(cuMemAllocHost, CUresult, (void **, size_t)) \
  S(cuMemHostAlloc, CUresult, (void **, size_t, unsigned int)) \
  S(cuMemHostRegister, CUresult, (void *, size_t, unsigned int)) \
  S(cuMemCreate, CUresult, (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long)) \
  S(cuMemMap, CUresult, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)) \
  S(cuMemFree, CUresult, (CUdeviceptr)) \
  S(cuMemFreeAsync, CUresult, (CUdeviceptr, CUstream)) \
  S(cuMemFreeHost, CUresult, (void *)) \
  S(cuMemHostUnregister, CUresult, (void *)) \
  S(cuMemRelease, CUresult, (CUmemGenericAllocationHandle)) \
  S(cuMemUnmap, CUresult, (CUdeviceptr, size_t)) \
  S(cuMemcpyHtoD, CUresult, (CUdeviceptr, const void *, size_t)) \
  S(cuMemcpyDtoH, CUresult, (void *, CUdeviceptr, size_t)) \
  S(cuMemcpyDtoD, CUresult, (CUdeviceptr, CUdeviceptr, size_t)) \
  S(cuMemcpy, CUresult, (CUdeviceptr, CUdeviceptr, size_t)) \
  S(cuMemcpyAsync, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
  S(cuMemcpyHtoDAsync, CUresult, (CUdeviceptr, const void *, size_t, CUstream)) \
  S(cuMemcpyDtoHAsync, CUresult, (void *, CUdeviceptr, size_t, CUstream)) \
  S(cuMemcpyDtoDAsync, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
  S(cuMemsetD8, CUresult, (CUdeviceptr, unsigned char, size_t)) \
  S(cuMemsetD16, CUresult, (CUdeviceptr, unsigned short, size_t)) \
  S(cuMemsetD32, CUresult, (CUdeviceptr, unsigned int, size_t)) \
  S(cuMemsetD8Async, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
  S(cuMemsetD16Async, CUresult, (CUdeviceptr, unsigned short, size_t, CUstream)) \
  S(cuMemsetD32Async, CUresult, (CUdeviceptr, unsigned int, size_t, CUstream)) \
  S(cuLaunchKernel, CUresult, (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **, void **)) \
  S(cuLaunchKernelEx, CUresult, (const CUlaunchConfig *, CUfunction, void **, void **)) \
  S(cuLaunchCooperativeKernel, CUresult, (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **)) \
  S(cuGraphLaunch, CUresult, (CUgraphExec, CUstream)) \
  S(cuCtxSynchronize, CUresult, (void)) \
  S(cuStreamSynchronize, CUresult, (CUstream)) \
  S(cuEventSynchronize, CUresult, (CUevent)) \
  S(cuStreamWaitEvent, CUresult, (CUstream, CUevent, unsigned int)) \
  S(cudaMallocArray, cudaError_t, (cudaArray_t *, const struct cudaChannelFormatDesc *, size_t, size_t, unsigned int)) \
  S(cudaMalloc3DArray, cudaError_t, (cudaArray_t *, const struct cudaChannelFormatDesc *, struct cudaExtent, unsigned int)) \
  S(cudaMallocMipmappedArray, cudaError_t, (cudaMipmappedArray_t *, const struct cudaChannelFormatDesc *, struct cudaExtent, unsigned int, unsigned int)) \
  S(cudaFreeArray, cudaError_t, (cudaArray_t)) \
  S(cudaFreeMipmappedArray, cudaError_t, (cudaMipmappedArray_t)) \
  S(cudaMalloc3D, cudaError_t, (struct cudaPitchedPtr *, struct cudaExtent)) \
  S(cudaIpcOpenMemHandle, cudaError_t, (void **, cudaIpcMemHandle_t, unsigned int)) \
  S(cudaIpcCloseMemHandle, cudaError_t, (void *)) \
  S(cudaMemcpy3D, cudaError_t, (const struct cudaMemcpy3DParms *)) \
  S(cudaMemcpy3DAsync, cudaError_t, (const struct cudaMemcpy3DParms *, cudaStream_t)) \
  S(cudaMemcpy3DPeer, cudaError_t, (const struct cudaMemcpy3DPeerParms *)) \
  S(cudaMemcpy3DPeerAsync, cudaError_t, (const struct cudaMemcpy3DPeerParms *, cudaStream_t)) \
  S(cudaMemcpy2DToArray, cudaError_t, (cudaArray_t, size_t, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpy2DToArrayAsync, cudaError_t, (cudaArray_t, size_t, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpy2DFromArray, cudaError_t, (void *, size_t, cudaArray_const_t, size_t, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpy2DFromArrayAsync, cudaError_t, (void *, size_t, cudaArray_const_t, size_t, size_t, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpyToArray, cudaError_t, (cudaArray_t, size_t, size_t, const void *, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyToArrayAsync, cudaError_t, (cudaArray_t, size_t, size_t, const void *, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpyFromArray, cudaError_t, (void *, cudaArray_const_t, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyFromArrayAsync, cudaError_t, (void *, cudaArray_const_t, size_t, size_t, size_t, enum cudaMemcpyKind, cudaStream_t)) \
  S(cudaMemcpy2DArrayToArray, cudaError_t, (cudaArray_t, size_t, size_t, cudaArray_const_t, size_t, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyArrayToArray, cudaError_t, (cudaArray_t, size_t, size_t, cudaArray_const_t, size_t, size_t, size_t, enum cudaMemcpyKind)) \
  S(cudaMemcpyBatchAsync, cudaError_t, (void * const *, const void * const *, const size_t *, size_t, struct cudaMemcpyAttributes *, size_t *, size_t, uintptr_t, uintptr_t)) \
  S(cudaMemcpy3DBatchAsync, cudaError_t, (size_t, struct cudaMemcpy3DBatchOp *, uintptr_t, uintptr_t, uintptr_t)) \
  S(cudaMemPrefetchAsync, cudaError_t, (const void *, size_t, struct cudaMemLocation, uintptr_t, cudaStream_t)) \
  S(cudaMemPrefetchBatchAsync, cudaError_t, (void **, size_t *, size_t, struct cudaMemLocation *, size_t *, size_t, unsigned long long, cudaStream_t)) \
  S(cudaMemset3D, cudaError_t, (struct cudaPitchedPtr, int, struct cudaExtent)) \
  S(cudaMemset3DAsync, cudaError_t, (struct cudaPitchedPtr, int, struct cudaExtent, cudaStream_t)) \
  S(cudaStreamAddCallback, cudaError_t, (cudaStream_t, cudaStreamCallback_t, void *, unsigned int)) \
  S(cuArrayCreate, CUresult, (CUarray *, const CUDA_ARRAY_DESCRIPTOR *)) \
  S(cuArray3DCreate, CUresult, (CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *)) \
  S(cuMipmappedArrayCreate, CUresult, (CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned int)) \
  S(cuArrayDestroy, CUresult, (CUarray)) \
  S(cuMipmappedArrayDestroy, CUresult, (CUmipmappedArray)) \
  S(cuIpcOpenMemHandle, CUresult, (CUdeviceptr *, CUipcMemHandle, unsigned int)) \
  S(cuIpcCloseMemHandle, CUresult, (CUdeviceptr)) \
  S(cuMemcpy2D, CUresult, (const CUDA_MEMCPY2D *)) \
  S(cuMemcpy2DUnaligned, CUresult, (const CUDA_MEMCPY2D *)) \
  S(cuMemcpy2DAsync, CUresult, (const CUDA_MEMCPY2D *, CUstream)) \
  S(cuMemcpy3D, CUresult, (const CUDA_MEMCPY3D *)) \
  S(cuMemcpy3DAsync, CUresult, (const CUDA_MEMCPY3D *, CUstream)) \
  S(cuMemPrefetchAsync, CUresult, (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream)) \
  S(cuLaunchHostFunc, CUresult, (CUstream, CUhostFn, void *)) \
  S(cuStreamAddCallback, CUresult, (CUstream, CUstreamCallback, void *, unsigned int)) \
  S(cudaStreamBeginCapture, cudaError_t, (cudaStream_t, enum cudaStreamCaptureMode)) \
  S(cudaStreamBeginCaptureToGraph, cudaError_t, (cudaStream_t, cudaGraph_t, const cudaGraphNode_t *, const cudaGraphEdgeData *, size_t, enum cudaStreamCaptureMode)) \
  S(cudaStreamEndCapture, cudaError_t, (cudaStream_t, cudaGraph_t *)) \
  S(cudaProfilerStart, cudaError_t, (void)) \
  S(cudaProfilerStop, cudaError_t, (void)) \
  S(cudaGraphInstantiate, cudaError_t, (cudaGraphExec_t *, cudaGraph_t, unsigned long long)) \
  S(cudaGraphInstantiateWithFlags, cudaError_t, (cudaGraphExec_t *, cudaGraph_t, unsigned long long)) \
  S(cudaGraphInstantiateWithParams, cudaError_t, (cudaGraphExec_t *, cudaGraph_t, cudaGraphInstantiateParams *)) \
  S(cudaGraphExecUpdate, cudaError_t, (cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo *)) \
  S(cudaGraphClone, cudaError_t, (cudaGraph_t *, cudaGraph_t)) \
  S(cudaGraphExecDestroy, cudaError_t, (cudaGraphExec_t)) \
  S(cudaGraphDestroy, cudaError_t, (cudaGraph_t)) \
  S(cudaGraphUpload, cudaError_t, (cudaGraphExec_t, cudaStream_t)) \
  S(cudaGraphAddChildGraphNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, cudaGraph_t)) \
  S(cudaGraphAddEmptyNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t)) \
  S(cudaGraphExecKernelNodeSetParams, cudaError_t, (cudaGraphExec_t, cudaGraphNode_t, const struct cudaKernelNodeParams *)) \
  S(cudaGraphAddKernelNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, const struct cudaKernelNodeParams *)) \
  S(cudaGraphAddHostNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, const struct cudaHostNodeParams *)) \
  S(cudaGraphAddMemcpyNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, const struct cudaMemcpy3DParms *)) \
  S(cudaGraphAddMemcpyNode1D, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, void *, const void *, size_t, enum cudaMemcpyKind)) \
  S(cudaGraphAddMemsetNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, const struct cudaMemsetParams *)) \
  S(cudaGraphAddMemAllocNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, struct cudaMemAllocNodeParams *)) \
  S(cudaGraphAddMemFreeNode, cudaError_t, (cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t, void *)) \
  S(cuStreamBeginCapture, CUresult, (CUstream, CUstreamCaptureMode)) \
  S(cuStreamEndCapture, CUresult, (CUstream, CUgraph *)) \
  S(cuGraphInstantiateWithFlags, CUresult, (CUgraphExec *, CUgraph, unsigned long long)) \
  S(cuGraphInstantiateWithParams, CUresult, (CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *)) \
  S(cuGraphAddKernelNode, CUresult, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *)) \
  S(cuGraphExecDestroy, CUresult, (CUgraphExec)) \
  S(cuGraphDestroy, CUresult, (CUgraph)) \
  S(cuGraphUpload, CUresult, (CUgraphExec, CUstream)) \
  S(cudaGraphKernelNodeSetParams, cudaError_t, (cudaGraphNode_t, const struct cudaKernelNodeParams *)) \
  S(cuGraphKernelNodeSetParams, CUresult, (CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *)) \
  S(cuGraphExecKernelNodeSetParams, CUresult, (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *)) \
  S(cuStreamBeginCaptureToGraph, CUresult, (CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, CUstreamCaptureMode)) \
  S(cuGraphExecUpdate, CUresult, (CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *))
/* clang-format on */

#endif
