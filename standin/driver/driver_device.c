/* driver_device.c — the stand-in libcuda's device queries, created
 * contexts and error strings, with the exact prototypes of the toolkit's
 * cuda.h (what NVIDIA's vectorAddDrv / matrixMulDrv and their helpers call).
 *
 * Contract:
 *  - One device, ordinal 0 (another is CUDA_ERROR_INVALID_DEVICE), the
 *    runtime stand-in's (../device_model.h: name, compute capability 9.0,
 *    132 SMs, ...). cuDeviceGetCount, cuDeviceGetName, cuDeviceGetAttribute,
 *    cuDeviceTotalMem_v2 (GPUTRACE_STANDIN_MEM_BYTES, as the runtime's),
 *    cuOccupancyMaxPotentialBlockSize (the runtime's occupancy model),
 *    cuCtxCreate_v4 and cuCtxDestroy_v2 return CUDA_ERROR_NOT_INITIALIZED
 *    before cuInit, as the real driver does; pointer and range checks come
 *    first (CUDA_ERROR_INVALID_VALUE).
 *  - cuDeviceGetName copies at most len - 1 characters and a NUL (len <= 0
 *    or a NULL name: CUDA_ERROR_INVALID_VALUE). cuDeviceGetAttribute knows
 *    every attribute below CU_DEVICE_ATTRIBUTE_MAX (others:
 *    CUDA_ERROR_INVALID_VALUE); those not in its table read 0.
 *  - cuCtxCreate_v4 makes a new context current to the calling thread
 *    (flags within CU_CTX_FLAGS_MASK with at most one scheduling mode;
 *    execution affinity: CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, CIG:
 *    CUDA_ERROR_NOT_SUPPORTED). Contexts are never freed, so
 *    cuCtxDestroy_v2 of a destroyed or unknown one is
 *    CUDA_ERROR_INVALID_CONTEXT (NULL: CUDA_ERROR_INVALID_VALUE); destroying
 *    the current context leaves the primary context current. All work runs
 *    at once whatever the context (driver.c).
 *  - cuGetErrorString knows the codes the stand-in drivers return and the
 *    common ones, with the real strings; any other code is
 *    CUDA_ERROR_INVALID_VALUE with *pStr NULL (the real driver's answer for
 *    an unrecognized code).
 */
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <cuda.h>
#pragma GCC visibility pop

#include "../device_model.h"
#include "driver.h"

/* ---- devices ------------------------------------------------------------------- */

API CUresult cuDeviceGetCount(int *count) {
  if (count == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = 1;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  if (name == NULL || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  size_t n = strlen(SI_DEVICE_NAME);
  if (n > (size_t)len - 1)
    n = (size_t)len - 1;
  memcpy(name, SI_DEVICE_NAME, n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

/* The device's memory: GPUTRACE_STANDIN_MEM_BYTES, as the runtime
 * stand-in's totalGlobalMem (docs/standin.md), 80 GiB by default. */
API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  if (bytes == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  const char *env = getenv("GPUTRACE_STANDIN_MEM_BYTES");
  char *end = NULL;
  unsigned long long v = env ? strtoull(env, &end, 10) : 0;
  *bytes = env && *env && end && *end == '\0' && v ? (size_t)v : (size_t)80 << 30;
  return CUDA_SUCCESS;
}

/* cuda_occupancy.h's search: from the largest block the function and
 * blockSizeLimit allow down to one warp, a warp at a time, the block size
 * whose blocks fill an SM with the most threads (the largest such:
 * ties go to the first met), its dynamic shared memory from the callback
 * when there is one; *minGridSize fills every SM with those blocks. */
API CUresult
cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                 CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                 size_t dynamicSMemSize, int blockSizeLimit) {
  if (minGridSize == NULL || blockSize == NULL || blockSizeLimit < 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!drv_is_function(func))
    return CUDA_ERROR_INVALID_HANDLE;
  int limit = SI_FUNC_MAX_THREADS;
  if (blockSizeLimit > 0 && blockSizeLimit < limit)
    limit = blockSizeLimit;
  int best_size = 0, best_blocks = 0, best_threads = 0;
  for (int size = (limit + 31) / 32 * 32; size >= 32; size -= 32) {
    int threads = size < limit ? size : limit;
    size_t dyn = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(threads)
                                            : dynamicSMemSize;
    int blocks = si_occupancy(threads, dyn);
    if (blocks * threads > best_threads) {
      best_threads = blocks * threads;
      best_blocks = blocks;
      best_size = threads;
    }
  }
  *minGridSize = best_blocks * SI_SM_COUNT;
  *blockSize = best_size;
  return CUDA_SUCCESS;
}

static const struct {
  CUdevice_attribute attr;
  int value;
} attr_table[] = {
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, SI_MAX_THREADS_PER_BLOCK},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, SI_SHMEM_PER_BLOCK},
    {CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
    {CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2147483647},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, SI_REGS_PER_SM},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, SI_CLOCK_KHZ},
    {CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512},
    {CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 1},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, SI_SM_COUNT},
    {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_COMPUTEMODE_DEFAULT},
    {CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1},
    {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, SI_MEM_CLOCK_KHZ},
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, SI_MEM_BUS_BITS},
    {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, SI_L2_BYTES},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, SI_MAX_THREADS_PER_SM},
    {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 2},
    {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, SI_CC_MAJOR},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, SI_CC_MINOR},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, SI_SHMEM_PER_SM},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, SI_REGS_PER_SM},
    {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, SI_SHMEM_OPTIN},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, SI_MAX_BLOCKS_PER_SM},
    {CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, SI_ACCESS_POLICY_MAX_WINDOW},
    {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, SI_SHMEM_RESERVED},
    {CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, SI_MEM_SYNC_DOMAINS},
};

API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  if (pi == NULL || (int)attrib < 1 || (int)attrib >= CU_DEVICE_ATTRIBUTE_MAX)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *pi = 0; /* a valid attribute the stand-in does not model */
  for (size_t i = 0; i < sizeof attr_table / sizeof attr_table[0]; i++)
    if (attr_table[i].attr == attrib)
      *pi = attr_table[i].value;
  return CUDA_SUCCESS;
}

/* ---- created contexts --------------------------------------------------------- */

#define CTX_MAGIC 0x43545854u /* "CTXT" */
struct drv_ctx {
  unsigned magic; /* cleared by cuCtxDestroy; the memory is never freed */
  unsigned flags;
};
static _Thread_local struct drv_ctx *current; /* NULL: the primary context */

void *drv_ctx_current(void) {
  return current;
}

void drv_ctx_set_current(void *ctx) {
  struct drv_ctx *c = ctx;
  current =
      c != NULL && __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) == CTX_MAGIC ? c : NULL;
}

static int valid_ctx_flags(unsigned flags) {
  unsigned sched = flags & CU_CTX_SCHED_MASK;
  return !(flags & ~(unsigned)CU_CTX_FLAGS_MASK) && (sched & (sched - 1)) == 0;
}

API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
                            unsigned int flags, CUdevice dev) {
  if (pctx == NULL || !valid_ctx_flags(flags))
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (params != NULL &&
      (params->numExecAffinityParams != 0 || params->execAffinityParams))
    return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
  if (params != NULL && params->cigParams != NULL)
    return CUDA_ERROR_NOT_SUPPORTED;
  struct drv_ctx *c = calloc(1, sizeof *c);
  if (c == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  c->flags = flags;
  __atomic_store_n(&c->magic, CTX_MAGIC, __ATOMIC_RELEASE);
  current = c;
  *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

API CUresult cuCtxDestroy_v2(CUcontext ctx) {
  struct drv_ctx *c = (struct drv_ctx *)ctx;
  if (c == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!drv_initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!__atomic_compare_exchange_n(&c->magic, &(unsigned){CTX_MAGIC}, 0, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return CUDA_ERROR_INVALID_CONTEXT;
  if (current == c)
    current = NULL;
  return CUDA_SUCCESS;
}

/* ---- error strings --------------------------------------------------------------- */

static const struct {
  CUresult code;
  const char *string;
} err_strings[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"},
    {CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
     "the provided execution affinity is not supported"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

API CUresult cuGetErrorString(CUresult error, const char **pStr) {
  if (pStr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof err_strings / sizeof err_strings[0]; i++)
    if (err_strings[i].code == error) {
      *pStr = err_strings[i].string;
      return CUDA_SUCCESS;
    }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

#define E(name) {#name, (void *)name},
const struct drv_entry drv_device_table[] = {
    /* clang-format off */
    E(cuDeviceGetCount) E(cuDeviceGetName) E(cuDeviceGetAttribute) E(cuDeviceTotalMem_v2)
    E(cuOccupancyMaxPotentialBlockSize)
    E(cuCtxCreate_v4) E(cuCtxDestroy_v2) E(cuGetErrorString)
    /* clang-format on */
};
const size_t drv_device_table_n = sizeof drv_device_table / sizeof drv_device_table[0];
