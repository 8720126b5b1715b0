/* cuda_abi_list.h — the structs of preload/cuda_abi.h whose layout must be
 * the toolkit's, as an X-macro: S(type) for its size, F(type, member) for a
 * member's offset. Expanded once against cuda_abi.h (test_cuda_abi.c) and
 * once against the toolkit's headers (cuda_abi_toolkit.c); the two tables
 * must be equal. */
#ifndef GPUTRACE_CUDA_ABI_LIST_H
#define GPUTRACE_CUDA_ABI_LIST_H

/* clang-format off */
#define GT_ABI_LIST(S, F) \
  S(dim3) \
  S(struct cudaPointerAttributes) F(struct cudaPointerAttributes, type) \
  F(struct cudaPointerAttributes, device) F(struct cudaPointerAttributes, devicePointer) \
  F(struct cudaPointerAttributes, hostPointer) \
  S(cudaLaunchConfig_t) F(cudaLaunchConfig_t, blockDim) F(cudaLaunchConfig_t, dynamicSmemBytes) \
  F(cudaLaunchConfig_t, stream) F(cudaLaunchConfig_t, attrs) F(cudaLaunchConfig_t, numAttrs) \
  S(struct cudaChannelFormatDesc) F(struct cudaChannelFormatDesc, w) \
  F(struct cudaChannelFormatDesc, f) \
  S(struct cudaExtent) F(struct cudaExtent, depth) \
  S(struct cudaPos) F(struct cudaPos, z) \
  S(struct cudaPitchedPtr) F(struct cudaPitchedPtr, pitch) F(struct cudaPitchedPtr, ysize) \
  S(struct cudaMemcpy3DParms) F(struct cudaMemcpy3DParms, srcPos) \
  F(struct cudaMemcpy3DParms, srcPtr) F(struct cudaMemcpy3DParms, dstArray) \
  F(struct cudaMemcpy3DParms, dstPos) F(struct cudaMemcpy3DParms, dstPtr) \
  F(struct cudaMemcpy3DParms, extent) F(struct cudaMemcpy3DParms, kind) \
  S(struct cudaMemcpy3DPeerParms) F(struct cudaMemcpy3DPeerParms, srcPtr) \
  F(struct cudaMemcpy3DPeerParms, srcDevice) F(struct cudaMemcpy3DPeerParms, dstArray) \
  F(struct cudaMemcpy3DPeerParms, dstPtr) F(struct cudaMemcpy3DPeerParms, dstDevice) \
  F(struct cudaMemcpy3DPeerParms, extent) \
  S(struct cudaMemLocation) F(struct cudaMemLocation, id) \
  S(struct cudaMemcpyAttributes) F(struct cudaMemcpyAttributes, srcLocHint) \
  F(struct cudaMemcpyAttributes, dstLocHint) F(struct cudaMemcpyAttributes, flags) \
  S(struct cudaOffset3D) \
  S(struct cudaMemcpy3DOperand) F(struct cudaMemcpy3DOperand, op) \
  F(struct cudaMemcpy3DOperand, op.ptr.rowLength) \
  F(struct cudaMemcpy3DOperand, op.ptr.layerHeight) \
  F(struct cudaMemcpy3DOperand, op.ptr.locHint) \
  F(struct cudaMemcpy3DOperand, op.array.offset) \
  S(struct cudaMemcpy3DBatchOp) F(struct cudaMemcpy3DBatchOp, dst) \
  F(struct cudaMemcpy3DBatchOp, extent) F(struct cudaMemcpy3DBatchOp, srcAccessOrder) \
  F(struct cudaMemcpy3DBatchOp, flags) \
  S(cudaIpcMemHandle_t) \
  S(CUlaunchConfig) F(CUlaunchConfig, sharedMemBytes) F(CUlaunchConfig, hStream) \
  F(CUlaunchConfig, attrs) F(CUlaunchConfig, numAttrs) \
  S(CUDA_MEMCPY2D) F(CUDA_MEMCPY2D, srcMemoryType) F(CUDA_MEMCPY2D, srcHost) \
  F(CUDA_MEMCPY2D, srcDevice) F(CUDA_MEMCPY2D, srcArray) F(CUDA_MEMCPY2D, srcPitch) \
  F(CUDA_MEMCPY2D, dstMemoryType) F(CUDA_MEMCPY2D, dstHost) F(CUDA_MEMCPY2D, dstDevice) \
  F(CUDA_MEMCPY2D, dstArray) F(CUDA_MEMCPY2D, dstPitch) F(CUDA_MEMCPY2D, WidthInBytes) \
  F(CUDA_MEMCPY2D, Height) \
  S(CUDA_MEMCPY3D) F(CUDA_MEMCPY3D, srcMemoryType) F(CUDA_MEMCPY3D, srcHost) \
  F(CUDA_MEMCPY3D, srcDevice) F(CUDA_MEMCPY3D, srcArray) F(CUDA_MEMCPY3D, srcPitch) \
  F(CUDA_MEMCPY3D, srcHeight) F(CUDA_MEMCPY3D, dstMemoryType) F(CUDA_MEMCPY3D, dstHost) \
  F(CUDA_MEMCPY3D, dstDevice) F(CUDA_MEMCPY3D, dstArray) F(CUDA_MEMCPY3D, dstPitch) \
  F(CUDA_MEMCPY3D, dstHeight) F(CUDA_MEMCPY3D, WidthInBytes) F(CUDA_MEMCPY3D, Height) \
  F(CUDA_MEMCPY3D, Depth) \
  S(CUDA_ARRAY_DESCRIPTOR) F(CUDA_ARRAY_DESCRIPTOR, Format) \
  F(CUDA_ARRAY_DESCRIPTOR, NumChannels) \
  S(CUDA_ARRAY3D_DESCRIPTOR) F(CUDA_ARRAY3D_DESCRIPTOR, Depth) \
  F(CUDA_ARRAY3D_DESCRIPTOR, Format) F(CUDA_ARRAY3D_DESCRIPTOR, NumChannels) \
  F(CUDA_ARRAY3D_DESCRIPTOR, Flags) \
  S(CUmemLocation) F(CUmemLocation, id) \
  S(CUipcMemHandle) \
  S(struct cudaKernelNodeParams) F(struct cudaKernelNodeParams, gridDim) \
  F(struct cudaKernelNodeParams, blockDim) F(struct cudaKernelNodeParams, sharedMemBytes) \
  F(struct cudaKernelNodeParams, kernelParams) F(struct cudaKernelNodeParams, extra) \
  S(struct cudaHostNodeParams) F(struct cudaHostNodeParams, userData) \
  S(struct cudaMemsetParams) F(struct cudaMemsetParams, pitch) \
  F(struct cudaMemsetParams, value) F(struct cudaMemsetParams, elementSize) \
  F(struct cudaMemsetParams, width) F(struct cudaMemsetParams, height) \
  S(struct cudaMemPoolProps) F(struct cudaMemPoolProps, handleTypes) \
  F(struct cudaMemPoolProps, location) F(struct cudaMemPoolProps, win32SecurityAttributes) \
  F(struct cudaMemPoolProps, maxSize) F(struct cudaMemPoolProps, usage) \
  S(struct cudaMemAllocNodeParams) F(struct cudaMemAllocNodeParams, accessDescs) \
  F(struct cudaMemAllocNodeParams, accessDescCount) \
  F(struct cudaMemAllocNodeParams, bytesize) F(struct cudaMemAllocNodeParams, dptr) \
  S(cudaGraphInstantiateParams) F(cudaGraphInstantiateParams, uploadStream) \
  F(cudaGraphInstantiateParams, errNode_out) F(cudaGraphInstantiateParams, result_out) \
  S(cudaGraphExecUpdateResultInfo) F(cudaGraphExecUpdateResultInfo, errorNode) \
  F(cudaGraphExecUpdateResultInfo, errorFromNode) \
  S(CUDA_KERNEL_NODE_PARAMS) F(CUDA_KERNEL_NODE_PARAMS, gridDimX) \
  F(CUDA_KERNEL_NODE_PARAMS, gridDimZ) F(CUDA_KERNEL_NODE_PARAMS, blockDimX) \
  F(CUDA_KERNEL_NODE_PARAMS, blockDimZ) F(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes) \
  F(CUDA_KERNEL_NODE_PARAMS, kernelParams) F(CUDA_KERNEL_NODE_PARAMS, extra) \
  F(CUDA_KERNEL_NODE_PARAMS, kern) F(CUDA_KERNEL_NODE_PARAMS, ctx) \
  S(CUDA_GRAPH_INSTANTIATE_PARAMS) F(CUDA_GRAPH_INSTANTIATE_PARAMS, hUploadStream) \
  F(CUDA_GRAPH_INSTANTIATE_PARAMS, hErrNode_out) F(CUDA_GRAPH_INSTANTIATE_PARAMS, result_out) \
  S(CUgraphExecUpdateResultInfo) F(CUgraphExecUpdateResultInfo, errorNode) \
  F(CUgraphExecUpdateResultInfo, errorFromNode)
/* clang-format on */

/* One table entry per S and F, in list order. */
#define GT_ABI_SIZE(t) sizeof(t),
#define GT_ABI_OFFSET(t, m) offsetof(t, m),

#endif
