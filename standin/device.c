/* device.c — the one simulated device: properties, attributes, versions,
 * device selection, reset and driver entry points.
 *
 * Contract:
 *  - Exactly one device, ordinal 0; any other ordinal is
 *    cudaErrorInvalidDevice. Its properties are H100-like (132 SMs, compute
 *    capability 9.0, warp 32) except the name, "gputrace CPU stand-in", and
 *    totalGlobalMem, which is the simulated capacity.
 *  - cudaRuntimeGetVersion reports 13000 (12080 for the libcudart.so.12
 *    build); the simulated driver reports 13000.
 *  - cudaGetDriverEntryPoint* answer from the driver stand-in
 *    (libcuda.so.1's cuGetProcAddress_v2) when the program has already
 *    loaded it; otherwise there is no driver: they succeed with a NULL
 *    function and cudaDriverEntryPointSymbolNotFound, which is what the
 *    header documents for a symbol the driver does not provide.
 *  - cudaDeviceReset waits for all simulated work, then frees the program's
 *    allocations and invalidates its streams, events, graphs and capture
 *    sequences; during stream capture it is potentially unsafe (capture.c).
 *  - cudaProfilerStart / cudaProfilerStop succeed and do nothing.
 *  - cudaDeviceSetLimit / cudaDeviceGetLimit keep the limits (an H100's
 *    defaults, reset by cudaDeviceReset) and check their documented
 *    ranges; nothing reads them. cudaCtxResetPersistingL2Cache succeeds.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "standin.h"

static int device_flags; /* cudaSetDeviceFlags; atomic */

/* cudaDeviceSetLimit / cudaDeviceGetLimit, indexed by enum cudaLimit; an
 * H100's defaults. cudaLimitDevRuntimeSyncDepth does not exist on compute
 * capability 9.0 (cudaErrorUnsupportedLimit, as documented). */
#define SI_LIMIT_N (cudaLimitPersistingL2CacheSize + 1)
static const size_t limit_defaults[SI_LIMIT_N] = {
    [cudaLimitStackSize] = 1024,           [cudaLimitPrintfFifoSize] = 1048576,
    [cudaLimitMallocHeapSize] = 8388608,   [cudaLimitDevRuntimePendingLaunchCount] = 2048,
    [cudaLimitMaxL2FetchGranularity] = 64, [cudaLimitPersistingL2CacheSize] = 0,
};
static size_t limit_values[SI_LIMIT_N]; /* atomic; those set since the last reset: */
static unsigned limit_set_mask;         /* atomic; bit 1 << limit */
#define SI_PERSISTING_L2_MAX (32u * 1024 * 1024)

void si_device_props(struct cudaDeviceProp *p) {
  memset(p, 0, sizeof(*p));
  strcpy(p->name, SI_DEVICE_NAME);
  memcpy(p->uuid.bytes, "gputrace-standin", 16);
  p->totalGlobalMem = (size_t)si_config()->mem_bytes;
  p->sharedMemPerBlock = SI_SHMEM_PER_BLOCK;
  p->regsPerBlock = SI_REGS_PER_SM;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = SI_MAX_THREADS_PER_BLOCK;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = SI_CC_MAJOR;
  p->minor = SI_CC_MINOR;
  p->maxTexture1D = SI_TEX_1D;
  p->maxTexture2D[0] = SI_TEX_2D_W;
  p->maxTexture2D[1] = SI_TEX_2D_H;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = SI_TEX_3D;
  p->maxTextureCubemap = SI_TEX_CUBEMAP;
  p->maxTexture1DLayered[0] = SI_TEX_LAYERED;
  p->maxTexture1DLayered[1] = SI_TEX_LAYERS;
  p->maxTexture2DLayered[0] = p->maxTexture2DLayered[1] = SI_TEX_LAYERED;
  p->maxTexture2DLayered[2] = SI_TEX_LAYERS;
  p->maxTextureCubemapLayered[0] = SI_TEX_CUBEMAP;
  p->maxTextureCubemapLayered[1] = SI_TEX_LAYERS;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = SI_SM_COUNT;
  p->canMapHostMemory = 1;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 2; /* one H2D and one D2H copy engine */
  p->unifiedAddressing = 1;
  p->memoryBusWidth = SI_MEM_BUS_BITS;
  p->l2CacheSize = SI_L2_BYTES;
  p->persistingL2CacheMaxSize = SI_PERSISTING_L2_MAX;
  p->maxThreadsPerMultiProcessor = SI_MAX_THREADS_PER_SM;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = SI_SHMEM_PER_SM;
  p->regsPerMultiprocessor = SI_REGS_PER_SM;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = SI_SHMEM_OPTIN;
  p->maxBlocksPerMultiProcessor = SI_MAX_BLOCKS_PER_SM;
  p->accessPolicyMaxWindowSize = SI_ACCESS_POLICY_MAX_WINDOW;
  p->reservedSharedMemPerBlock = SI_SHMEM_RESERVED;
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
  p->memoryPoolSupportedHandleTypes = 1;
  p->clusterLaunch = 1;
  p->unifiedFunctionPointers = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
}

#if SI_CUDART_MAJOR >= 13
/* The CUDA 12 layout differs; compat12.c provides the .so.12 versions. */
SI_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  if (prop == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (device != 0)
    return si_ret(cudaErrorInvalidDevice);
  si_device_props(prop);
  return cudaSuccess;
}
#endif

/* Attributes that are copies of a cudaDeviceProp field (int, unsigned or
 * size_t, narrowed to int as the real runtime reports them). */
#define FIELD(a, f)                                                                      \
  { a, offsetof(struct cudaDeviceProp, f), sizeof(((struct cudaDeviceProp *)0)->f) }
static const struct {
  enum cudaDeviceAttr attr;
  size_t offset, size;
} prop_attrs[] = {
    FIELD(cudaDevAttrMaxThreadsPerBlock, maxThreadsPerBlock),
    FIELD(cudaDevAttrMaxBlockDimX, maxThreadsDim[0]),
    FIELD(cudaDevAttrMaxBlockDimY, maxThreadsDim[1]),
    FIELD(cudaDevAttrMaxBlockDimZ, maxThreadsDim[2]),
    FIELD(cudaDevAttrMaxGridDimX, maxGridSize[0]),
    FIELD(cudaDevAttrMaxGridDimY, maxGridSize[1]),
    FIELD(cudaDevAttrMaxGridDimZ, maxGridSize[2]),
    FIELD(cudaDevAttrMaxSharedMemoryPerBlock, sharedMemPerBlock),
    FIELD(cudaDevAttrTotalConstantMemory, totalConstMem),
    FIELD(cudaDevAttrWarpSize, warpSize),
    FIELD(cudaDevAttrMaxPitch, memPitch),
    FIELD(cudaDevAttrMaxRegistersPerBlock, regsPerBlock),
    FIELD(cudaDevAttrTextureAlignment, textureAlignment),
    FIELD(cudaDevAttrMultiProcessorCount, multiProcessorCount),
    FIELD(cudaDevAttrCanMapHostMemory, canMapHostMemory),
    FIELD(cudaDevAttrSurfaceAlignment, surfaceAlignment),
    FIELD(cudaDevAttrConcurrentKernels, concurrentKernels),
    FIELD(cudaDevAttrGlobalMemoryBusWidth, memoryBusWidth),
    FIELD(cudaDevAttrL2CacheSize, l2CacheSize),
    FIELD(cudaDevAttrMaxThreadsPerMultiProcessor, maxThreadsPerMultiProcessor),
    FIELD(cudaDevAttrAsyncEngineCount, asyncEngineCount),
    FIELD(cudaDevAttrUnifiedAddressing, unifiedAddressing),
    FIELD(cudaDevAttrTexturePitchAlignment, texturePitchAlignment),
    FIELD(cudaDevAttrComputeCapabilityMajor, major),
    FIELD(cudaDevAttrComputeCapabilityMinor, minor),
    FIELD(cudaDevAttrStreamPrioritiesSupported, streamPrioritiesSupported),
    FIELD(cudaDevAttrGlobalL1CacheSupported, globalL1CacheSupported),
    FIELD(cudaDevAttrLocalL1CacheSupported, localL1CacheSupported),
    FIELD(cudaDevAttrMaxSharedMemoryPerMultiprocessor, sharedMemPerMultiprocessor),
    FIELD(cudaDevAttrMaxRegistersPerMultiprocessor, regsPerMultiprocessor),
    FIELD(cudaDevAttrManagedMemory, managedMemory),
    FIELD(cudaDevAttrConcurrentManagedAccess, concurrentManagedAccess),
    FIELD(cudaDevAttrComputePreemptionSupported, computePreemptionSupported),
    FIELD(cudaDevAttrCooperativeLaunch, cooperativeLaunch),
    FIELD(cudaDevAttrMaxSharedMemoryPerBlockOptin, sharedMemPerBlockOptin),
    FIELD(cudaDevAttrHostRegisterSupported, hostRegisterSupported),
    FIELD(cudaDevAttrMaxBlocksPerMultiprocessor, maxBlocksPerMultiProcessor),
    FIELD(cudaDevAttrMaxPersistingL2CacheSize, persistingL2CacheMaxSize),
    FIELD(cudaDevAttrMaxAccessPolicyWindowSize, accessPolicyMaxWindowSize),
    FIELD(cudaDevAttrReservedSharedMemoryPerBlock, reservedSharedMemPerBlock),
    FIELD(cudaDevAttrMemoryPoolsSupported, memoryPoolsSupported),
    FIELD(cudaDevAttrMemoryPoolSupportedHandleTypes, memoryPoolSupportedHandleTypes),
    FIELD(cudaDevAttrClusterLaunch, clusterLaunch),
    FIELD(cudaDevAttrNumaId, deviceNumaId),
    FIELD(cudaDevAttrHostNumaId, hostNumaId),
};
#undef FIELD

/* Attributes without a cudaDeviceProp field in CUDA 13. */
static int extra_attr(enum cudaDeviceAttr attr, int *value) {
  switch (attr) {
  case cudaDevAttrClockRate:
    *value = SI_CLOCK_KHZ;
    return 1;
  case cudaDevAttrMemoryClockRate:
    *value = SI_MEM_CLOCK_KHZ;
    return 1;
  case cudaDevAttrGpuOverlap:
  case cudaDevAttrHostRegisterReadOnlySupported:
  case cudaDevAttrCanUseHostPointerForRegisteredMem:
    *value = 1;
    return 1;
  case cudaDevAttrSingleToDoublePrecisionPerfRatio:
    *value = 2;
    return 1;
  case cudaDevAttrMemSyncDomainCount:
    *value = SI_MEM_SYNC_DOMAINS;
    return 1;
  default:
    return 0;
  }
}

static int prop_attr(enum cudaDeviceAttr attr) {
  struct cudaDeviceProp p;
  si_device_props(&p);
  for (size_t i = 0; i < sizeof(prop_attrs) / sizeof(prop_attrs[0]); i++) {
    if (prop_attrs[i].attr != attr)
      continue;
    const char *field = (const char *)&p + prop_attrs[i].offset;
    if (prop_attrs[i].size == sizeof(size_t)) {
      size_t v;
      memcpy(&v, field, sizeof v);
      return v > INT_MAX ? INT_MAX : (int)v;
    }
    int v;
    memcpy(&v, field, sizeof v);
    return v;
  }
  return 0; /* a valid attribute the stand-in does not model */
}

SI_API cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                          int device) {
  if (value == NULL || (int)attr < 1 || (int)attr > cudaDevAttrMax - 1)
    return si_ret(cudaErrorInvalidValue);
  if (device != 0)
    return si_ret(cudaErrorInvalidDevice);
  if (!extra_attr(attr, value))
    *value = prop_attr(attr);
  return cudaSuccess;
}

/* ---- selection and flags ------------------------------------------------------------
 */

SI_API cudaError_t cudaGetDeviceCount(int *count) {
  if (count == NULL)
    return si_ret(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

SI_API cudaError_t cudaGetDevice(int *device) {
  if (device == NULL)
    return si_ret(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

SI_API cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : si_ret(cudaErrorInvalidDevice);
}

SI_API cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  /* cudaDeviceMask covers the schedule, map-host, lmem and sync-memops bits;
   * only one schedule mode may be chosen. */
  unsigned sched = flags & cudaDeviceScheduleMask;
  if ((flags & ~(unsigned)cudaDeviceMask) || (sched != 0 && (sched & (sched - 1))))
    return si_ret(cudaErrorInvalidValue);
  __atomic_store_n(&device_flags, (int)flags, __ATOMIC_RELAXED);
  return cudaSuccess;
}

SI_API cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
  if (flags == NULL)
    return si_ret(cudaErrorInvalidValue);
  /* Mapped pinned allocations are always supported (unified addressing). */
  *flags = (unsigned)__atomic_load_n(&device_flags, __ATOMIC_RELAXED) | cudaDeviceMapHost;
  return cudaSuccess;
}

SI_API cudaError_t cudaDeviceReset(void) {
  cudaError_t e = si_cap_prohibited(); /* it synchronizes the device */
  if (e != cudaSuccess)
    return si_ret(e);
  if (si_config()->timeline)
    si_sleep_until(si_tl_device_tail());
  si_mem_reset();
  si_streams_events_reset();
  si_graphs_reset();
  si_arrays_reset();
  __atomic_store_n(&device_flags, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&limit_set_mask, 0, __ATOMIC_RELAXED);
  return cudaSuccess;
}

/* ---- limits and the L2 cache ----------------------------------------------------------
 */

static int limit_supported(enum cudaLimit limit) {
  return (int)limit >= 0 && (int)limit < SI_LIMIT_N &&
         limit != cudaLimitDevRuntimeSyncDepth;
}

/* The documented ranges: the L2 fetch granularity is 0..128 bytes, the
 * persisting L2 size at most persistingL2CacheMaxSize; other sizes are free. */
SI_API cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  if (!limit_supported(limit))
    return si_ret(cudaErrorUnsupportedLimit);
  if ((limit == cudaLimitMaxL2FetchGranularity && value > 128) ||
      (limit == cudaLimitPersistingL2CacheSize && value > SI_PERSISTING_L2_MAX))
    return si_ret(cudaErrorInvalidValue);
  __atomic_store_n(&limit_values[limit], value, __ATOMIC_RELAXED);
  __atomic_fetch_or(&limit_set_mask, 1u << limit, __ATOMIC_RELEASE);
  return cudaSuccess;
}

SI_API cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit) {
  if (pValue == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (!limit_supported(limit))
    return si_ret(cudaErrorUnsupportedLimit);
  unsigned set = __atomic_load_n(&limit_set_mask, __ATOMIC_ACQUIRE);
  *pValue = (set & (1u << limit))
                ? __atomic_load_n(&limit_values[limit], __ATOMIC_RELAXED)
                : limit_defaults[limit];
  return cudaSuccess;
}

/* There is no cache: nothing persists, nothing to reset. */
SI_API cudaError_t cudaCtxResetPersistingL2Cache(void) {
  return cudaSuccess;
}

/* ---- profiler control (cuda_profiler_api.h) ----------------------------------------
 */

/* There is no profiler of the device to start or stop; a tool that traces
 * the program (gputrace) sees the calls themselves. */
SI_API cudaError_t cudaProfilerStart(void) {
  return si_ret(cudaSuccess);
}

SI_API cudaError_t cudaProfilerStop(void) {
  return si_ret(cudaSuccess);
}

/* ---- versions ------------------------------------------------------------------------
 */

SI_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  if (runtimeVersion == NULL)
    return si_ret(cudaErrorInvalidValue);
  *runtimeVersion = SI_RUNTIME_VERSION;
  return cudaSuccess;
}

SI_API cudaError_t cudaDriverGetVersion(int *driverVersion) {
  if (driverVersion == NULL)
    return si_ret(cudaErrorInvalidValue);
  *driverVersion = SI_DRIVER_VERSION;
  return cudaSuccess;
}

/* ---- driver entry points -------------------------------------------------------------
 */

typedef int (*proc_address_fn)(const char *, void **, int, unsigned long long, int *);

/* The driver stand-in's cuGetProcAddress_v2, when libcuda.so.1 is loaded. */
static proc_address_fn loaded_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  proc_address_fn f = (proc_address_fn)dlsym(h, "cuGetProcAddress_v2");
  dlclose(h); /* NOLOAD took a reference; the library stays loaded */
  return f;
}

static cudaError_t entry_point(const char *symbol, void **funcPtr,
                               unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *status,
                               unsigned int version) {
  const unsigned long long valid =
      cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream;
  if (symbol == NULL || funcPtr == NULL || (flags & ~valid))
    return cudaErrorInvalidValue;
  proc_address_fn driver = loaded_driver();
  if (driver != NULL && driver(symbol, funcPtr, (int)version,
                               flags & cudaEnablePerThreadDefaultStream, NULL) == 0) {
    if (status != NULL)
      *status = cudaDriverEntryPointSuccess;
    return cudaSuccess;
  }
  *funcPtr = NULL;
  if (status != NULL)
    *status = cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}

SI_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                           unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *status) {
  return si_ret(entry_point(symbol, funcPtr, flags, status, 13000));
}

SI_API cudaError_t
cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                             enum cudaDriverEntryPointQueryResult *status) {
  return si_ret(entry_point(symbol, funcPtr, flags, status, 13000));
}

SI_API cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion,
    unsigned long long flags, enum cudaDriverEntryPointQueryResult *status) {
  return si_ret(entry_point(symbol, funcPtr, flags, status, cudaVersion));
}

SI_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion,
    unsigned long long flags, enum cudaDriverEntryPointQueryResult *status) {
  return si_ret(entry_point(symbol, funcPtr, flags, status, cudaVersion));
}
