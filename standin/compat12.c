/* compat12.c — entry points whose ABI differs in libcudart.so.12 (built only
 * into the .12 stand-in).
 *
 * Contract:
 *  - CUDA 12 headers map cudaGetDeviceProperties to cudaGetDeviceProperties_v2
 *    and use the CUDA 12 struct cudaDeviceProp layout (it still has
 *    clockRate, deviceOverlap, computeMode, ... that CUDA 13 removed). Both
 *    names are exported here with that layout. Only the named fields up to
 *    unifiedFunctionPointers are written; the caller's trailing reserved
 *    words are left alone, since their count changed across 12.x releases.
 *  - cudaEventElapsedTime_v2 (CUDA 12.8) behaves as cudaEventElapsedTime.
 *  - cudaMemPrefetchAsync(_ptsz) takes a device ordinal (cudaCpuDeviceId:
 *    the host) where CUDA 13 takes a cudaMemLocation and flags; CUDA 12.8's
 *    cudaMemcpyBatchAsync / cudaMemcpy3DBatchAsync (and _ptsz) take a
 *    failIdx, set to the failing copy's index (SIZE_MAX: none or not one).
 *    Same behaviour as the .13 forms (copy3d.c).
 *  - cudaStreamGetCaptureInfo(_ptsz) takes (stream, status, id); its _v2
 *    adds the graph and dependencies, its _v3 the edge data (CUDA 13's
 *    form); cudaGraphAddDependencies takes no edge data, its _v2 does.
 *    Same behaviour as the .13 forms (capture.c, graph.c).
 */
#include <string.h>

#include "standin.h"

/* struct cudaDeviceProp of CUDA 12.x driver_types.h, without the reserved
 * tail. */
struct prop12 {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated;
  int canMapHostMemory, computeMode, maxTexture1D, maxTexture1DMipmap;
  int maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2], maxTexture2DLinear[3];
  int maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap;
  int maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2];
  int maxSurface1D, maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2];
  int maxSurface2DLayered[3], maxSurfaceCubemap, maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver;
  int asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth;
  int l2CacheSize, persistingL2CacheMaxSize, maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
  int hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess, concurrentManagedAccess, computePreemptionSupported;
  int canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch;
  int unifiedFunctionPointers;
};

static void to_prop12(const struct cudaDeviceProp *p, struct prop12 *q) {
  memset(q, 0, sizeof(*q));
  memcpy(q->name, p->name, sizeof(q->name));
  q->uuid = p->uuid;
  q->totalGlobalMem = p->totalGlobalMem;
  q->sharedMemPerBlock = p->sharedMemPerBlock;
  q->regsPerBlock = p->regsPerBlock;
  q->warpSize = p->warpSize;
  q->memPitch = p->memPitch;
  q->maxThreadsPerBlock = p->maxThreadsPerBlock;
  memcpy(q->maxThreadsDim, p->maxThreadsDim, sizeof(q->maxThreadsDim));
  memcpy(q->maxGridSize, p->maxGridSize, sizeof(q->maxGridSize));
  q->clockRate = 1980000;
  q->totalConstMem = p->totalConstMem;
  q->major = p->major;
  q->minor = p->minor;
  q->textureAlignment = p->textureAlignment;
  q->texturePitchAlignment = p->texturePitchAlignment;
  q->deviceOverlap = 1;
  q->multiProcessorCount = p->multiProcessorCount;
  q->canMapHostMemory = p->canMapHostMemory;
  q->surfaceAlignment = p->surfaceAlignment;
  q->concurrentKernels = p->concurrentKernels;
  q->asyncEngineCount = p->asyncEngineCount;
  q->unifiedAddressing = p->unifiedAddressing;
  q->memoryClockRate = 2619000;
  q->memoryBusWidth = p->memoryBusWidth;
  q->l2CacheSize = p->l2CacheSize;
  q->persistingL2CacheMaxSize = p->persistingL2CacheMaxSize;
  q->maxThreadsPerMultiProcessor = p->maxThreadsPerMultiProcessor;
  q->streamPrioritiesSupported = p->streamPrioritiesSupported;
  q->globalL1CacheSupported = p->globalL1CacheSupported;
  q->localL1CacheSupported = p->localL1CacheSupported;
  q->sharedMemPerMultiprocessor = p->sharedMemPerMultiprocessor;
  q->regsPerMultiprocessor = p->regsPerMultiprocessor;
  q->managedMemory = p->managedMemory;
  q->singleToDoublePrecisionPerfRatio = 2;
  q->concurrentManagedAccess = p->concurrentManagedAccess;
  q->computePreemptionSupported = p->computePreemptionSupported;
  q->cooperativeLaunch = p->cooperativeLaunch;
  q->sharedMemPerBlockOptin = p->sharedMemPerBlockOptin;
  q->maxBlocksPerMultiProcessor = p->maxBlocksPerMultiProcessor;
  q->accessPolicyMaxWindowSize = p->accessPolicyMaxWindowSize;
  q->reservedSharedMemPerBlock = p->reservedSharedMemPerBlock;
  q->hostRegisterSupported = p->hostRegisterSupported;
  q->memoryPoolsSupported = p->memoryPoolsSupported;
  q->memoryPoolSupportedHandleTypes = p->memoryPoolSupportedHandleTypes;
  q->clusterLaunch = p->clusterLaunch;
  q->unifiedFunctionPointers = p->unifiedFunctionPointers;
}

static cudaError_t get_props12(void *out, int device) {
  if (out == NULL)
    return cudaErrorInvalidValue;
  if (device != 0)
    return cudaErrorInvalidDevice;
  struct cudaDeviceProp p;
  struct prop12 q;
  si_device_props(&p);
  to_prop12(&p, &q);
  memcpy(out, &q, sizeof(q));
  return cudaSuccess;
}

/* The parameter type is the CUDA 13 struct only because that is the header
 * available; callers pass the CUDA 12 layout. */
SI_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  return si_ret(get_props12(prop, device));
}

SI_API cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device) {
  return si_ret(get_props12(prop, device));
}

SI_API cudaError_t cudaEventElapsedTime_v2(float *ms, cudaEvent_t start,
                                           cudaEvent_t end) {
  return si_ret(si_event_elapsed(ms, start, end));
}

/* ---- CUDA 12 forms of calls whose ABI changed in 13 ----------------------------------
 */

/* Their C names differ from the toolkit header's (which declares the
 * CUDA 13 prototypes); the exported names are given with asm labels. */
#define SI_EXPORT_AS(sym) __asm__(sym)

/* cudaMemPrefetchAsync(devPtr, count, dstDevice, stream): cudaCpuDeviceId
 * is the host. */
static cudaError_t prefetch12(const void *p, size_t count, int device, cudaStream_t s,
                              int pt) {
  struct cudaMemLocation loc = {cudaMemLocationTypeDevice, device};
  if (device == cudaCpuDeviceId)
    loc = (struct cudaMemLocation){cudaMemLocationTypeHost, 0};
  return si_ret(si_prefetch(p, count, loc, 0, s, pt));
}

SI_API cudaError_t si_prefetch12(const void *, size_t, int, cudaStream_t)
    SI_EXPORT_AS("cudaMemPrefetchAsync");
cudaError_t si_prefetch12(const void *p, size_t count, int device, cudaStream_t s) {
  return prefetch12(p, count, device, s, 0);
}

SI_API cudaError_t si_prefetch12_ptsz(const void *, size_t, int, cudaStream_t)
    SI_EXPORT_AS("cudaMemPrefetchAsync_ptsz");
cudaError_t si_prefetch12_ptsz(const void *p, size_t count, int device, cudaStream_t s) {
  return prefetch12(p, count, device, s, 1);
}

/* CUDA 12.8's batches: failIdx before the stream (flags). */
static cudaError_t batch12(void **dsts, void **srcs, size_t *sizes, size_t count,
                           struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                           size_t numAttrs, size_t *failIdx, cudaStream_t s, int pt) {
  size_t fail;
  cudaError_t e = si_batch(dsts, (const void *const *)srcs, sizes, count, attrs,
                           attrsIdxs, numAttrs, s, pt, &fail);
  if (failIdx != NULL)
    *failIdx = fail;
  return si_ret(e);
}

SI_API cudaError_t si_batch12(void **, void **, size_t *, size_t,
                              struct cudaMemcpyAttributes *, size_t *, size_t, size_t *,
                              cudaStream_t) SI_EXPORT_AS("cudaMemcpyBatchAsync");
cudaError_t si_batch12(void **dsts, void **srcs, size_t *sizes, size_t count,
                       struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                       size_t numAttrs, size_t *failIdx, cudaStream_t s) {
  return batch12(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, s, 0);
}

SI_API cudaError_t si_batch12_ptsz(void **, void **, size_t *, size_t,
                                   struct cudaMemcpyAttributes *, size_t *, size_t,
                                   size_t *, cudaStream_t)
    SI_EXPORT_AS("cudaMemcpyBatchAsync_ptsz");
cudaError_t si_batch12_ptsz(void **dsts, void **srcs, size_t *sizes, size_t count,
                            struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                            size_t numAttrs, size_t *failIdx, cudaStream_t s) {
  return batch12(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, s, 1);
}

static cudaError_t batch3d12(size_t n, struct cudaMemcpy3DBatchOp *ops, size_t *failIdx,
                             unsigned long long flags, cudaStream_t s, int pt) {
  size_t fail;
  cudaError_t e = si_batch3d(n, ops, flags, s, pt, &fail);
  if (failIdx != NULL)
    *failIdx = fail;
  return si_ret(e);
}

SI_API cudaError_t si_batch3d12(size_t, struct cudaMemcpy3DBatchOp *, size_t *,
                                unsigned long long, cudaStream_t)
    SI_EXPORT_AS("cudaMemcpy3DBatchAsync");
cudaError_t si_batch3d12(size_t n, struct cudaMemcpy3DBatchOp *ops, size_t *failIdx,
                         unsigned long long flags, cudaStream_t s) {
  return batch3d12(n, ops, failIdx, flags, s, 0);
}

SI_API cudaError_t si_batch3d12_ptsz(size_t, struct cudaMemcpy3DBatchOp *, size_t *,
                                     unsigned long long, cudaStream_t)
    SI_EXPORT_AS("cudaMemcpy3DBatchAsync_ptsz");
cudaError_t si_batch3d12_ptsz(size_t n, struct cudaMemcpy3DBatchOp *ops, size_t *failIdx,
                              unsigned long long flags, cudaStream_t s) {
  return batch3d12(n, ops, failIdx, flags, s, 1);
}

/* cudaStreamGetCaptureInfo(stream, status, id) and its _v2 (graph and
 * dependencies) and _v3 (edge data too: CUDA 13's cudaStreamGetCaptureInfo). */
#define SI_CAPTURE_INFO12(fn, sym, pt)                                                   \
  SI_API cudaError_t fn(cudaStream_t, enum cudaStreamCaptureStatus *,                    \
                        unsigned long long *) SI_EXPORT_AS(sym);                         \
  cudaError_t fn(cudaStream_t s, enum cudaStreamCaptureStatus *status,                   \
                 unsigned long long *id) {                                               \
    return si_ret(si_capture_info(s, status, id, NULL, NULL, NULL, NULL, pt));           \
  }
SI_CAPTURE_INFO12(si_capinfo12, "cudaStreamGetCaptureInfo", 0)
SI_CAPTURE_INFO12(si_capinfo12_ptsz, "cudaStreamGetCaptureInfo_ptsz", 1)

#define SI_CAPTURE_INFO12_V2(fn, sym, pt)                                                \
  SI_API cudaError_t fn(cudaStream_t, enum cudaStreamCaptureStatus *,                    \
                        unsigned long long *, cudaGraph_t *, const cudaGraphNode_t **,   \
                        size_t *) SI_EXPORT_AS(sym);                                     \
  cudaError_t fn(cudaStream_t s, enum cudaStreamCaptureStatus *status,                   \
                 unsigned long long *id, cudaGraph_t *graph,                             \
                 const cudaGraphNode_t **deps, size_t *ndeps) {                          \
    return si_ret(si_capture_info(s, status, id, graph, deps, NULL, ndeps, pt));         \
  }
SI_CAPTURE_INFO12_V2(si_capinfo12_v2, "cudaStreamGetCaptureInfo_v2", 0)
SI_CAPTURE_INFO12_V2(si_capinfo12_v2_ptsz, "cudaStreamGetCaptureInfo_v2_ptsz", 1)

#define SI_CAPTURE_INFO12_V3(fn, sym, pt)                                                \
  SI_API cudaError_t fn(cudaStream_t, enum cudaStreamCaptureStatus *,                    \
                        unsigned long long *, cudaGraph_t *, const cudaGraphNode_t **,   \
                        const cudaGraphEdgeData **, size_t *) SI_EXPORT_AS(sym);         \
  cudaError_t fn(cudaStream_t s, enum cudaStreamCaptureStatus *status,                   \
                 unsigned long long *id, cudaGraph_t *graph,                             \
                 const cudaGraphNode_t **deps, const cudaGraphEdgeData **edata,          \
                 size_t *ndeps) {                                                        \
    return si_ret(si_capture_info(s, status, id, graph, deps, edata, ndeps, pt));        \
  }
SI_CAPTURE_INFO12_V3(si_capinfo12_v3, "cudaStreamGetCaptureInfo_v3", 0)
SI_CAPTURE_INFO12_V3(si_capinfo12_v3_ptsz, "cudaStreamGetCaptureInfo_v3_ptsz", 1)

/* cudaGraphAddDependencies(graph, from, to, n) and its _v2 with edge data. */
SI_API cudaError_t si_add_deps12(cudaGraph_t, const cudaGraphNode_t *,
                                 const cudaGraphNode_t *, size_t)
    SI_EXPORT_AS("cudaGraphAddDependencies");
cudaError_t si_add_deps12(cudaGraph_t g, const cudaGraphNode_t *from,
                          const cudaGraphNode_t *to, size_t n) {
  return si_ret(si_graph_add_deps(g, from, to, NULL, n));
}

SI_API cudaError_t si_add_deps12_v2(cudaGraph_t, const cudaGraphNode_t *,
                                    const cudaGraphNode_t *, const cudaGraphEdgeData *,
                                    size_t) SI_EXPORT_AS("cudaGraphAddDependencies_v2");
cudaError_t si_add_deps12_v2(cudaGraph_t g, const cudaGraphNode_t *from,
                             const cudaGraphNode_t *to, const cudaGraphEdgeData *edata,
                             size_t n) {
  return si_ret(si_graph_add_deps(g, from, to, edata, n));
}
