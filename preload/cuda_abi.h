/* cuda_abi.h — the few CUDA runtime and NVTX ABI types the shim needs,
 * declared here so libgputrace.so builds without the CUDA toolkit.
 *
 * Contract: layouts match cuda_runtime_api.h / driver_types.h of CUDA 12 and
 * 13 and nvtx3/nvToolsExt.h (checked against the 13.0 headers). Only what
 * the hooks read is declared; handles are opaque pointers.
 */
#ifndef GPUTRACE_CUDA_ABI_H
#define GPUTRACE_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
typedef void *cudaKernel_t;
typedef void *cudaGraphExec_t;
typedef void *cudaMemPool_t;
typedef void (*cudaHostFn_t)(void *user_data);

typedef struct {
  unsigned int x, y, z;
} dim3;

/* Streams and events (driver_types.h), for device timing (devtime.c). */
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamNonBlocking 0x01u
#define cudaEventDefault 0x00u
enum { cudaErrorNotReady = 600 };
enum { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1 };

typedef struct {
  unsigned int x, y, z;
} uint3; /* __cudaRegisterFunction's tid/bid */

enum {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
  int type; /* enum cudaMemoryType */
  int device;
  void *devicePointer;
  void *hostPointer;
  long reserved[8];
};

typedef struct cudaLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  void *attrs;
  unsigned int numAttrs;
} cudaLaunchConfig_t;

/* NVTX (nvtx3/nvToolsExt.h, nvtxDetail/nvtxTypes.h) */
enum {
  NVTX_MESSAGE_TYPE_ASCII = 1,
  NVTX_MESSAGE_TYPE_UNICODE = 2,
  NVTX_MESSAGE_TYPE_REGISTERED = 3,
};

enum { NVTX_COLOR_UNKNOWN = 0, NVTX_COLOR_ARGB = 1 };

typedef struct nvtxEventAttributes_v2 {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t colorType;
  uint32_t color;
  int32_t payloadType;
  int32_t reserved0;
  uint64_t payload;
  int32_t messageType;
  union {
    const char *ascii;
    const void *unicode;
    const void *registered; /* nvtxStringHandle_t */
  } message;
} nvtxEventAttributes_t;

typedef uint64_t nvtxRangeId_t;
typedef void *nvtxDomainHandle_t;
typedef void *nvtxStringHandle_t;

typedef void (*NvtxFunctionPointer)(void);
typedef NvtxFunctionPointer **NvtxFunctionTable;
typedef const void *(*NvtxGetExportTableFunc_t)(uint32_t exportTableId);

#define NVTX_ETID_CALLBACKS 1
enum { NVTX_CB_MODULE_CORE = 1, NVTX_CB_MODULE_CORE2 = 5 };

typedef struct NvtxExportTableCallbacks {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, NvtxFunctionTable *out_table,
                                unsigned int *out_size);
} NvtxExportTableCallbacks;

/* Slots in the CORE and CORE2 callback tables (nvtxDetail/nvtxTypes.h). */
enum {
  NVTX_CBID_CORE_MarkEx = 1,
  NVTX_CBID_CORE_MarkA = 2,
  NVTX_CBID_CORE_MarkW = 3,
  NVTX_CBID_CORE_RangeStartEx = 4,
  NVTX_CBID_CORE_RangeStartA = 5,
  NVTX_CBID_CORE_RangeStartW = 6,
  NVTX_CBID_CORE_RangeEnd = 7,
  NVTX_CBID_CORE_RangePushEx = 8,
  NVTX_CBID_CORE_RangePushA = 9,
  NVTX_CBID_CORE_RangePushW = 10,
  NVTX_CBID_CORE_RangePop = 11,
  NVTX_CBID_CORE2_DomainMarkEx = 1,
  NVTX_CBID_CORE2_DomainRangeStartEx = 2,
  NVTX_CBID_CORE2_DomainRangeEnd = 3,
  NVTX_CBID_CORE2_DomainRangePushEx = 4,
  NVTX_CBID_CORE2_DomainRangePop = 5,
  NVTX_CBID_CORE2_DomainRegisterStringA = 10,
  NVTX_CBID_CORE2_DomainRegisterStringW = 11,
  NVTX_CBID_CORE2_DomainCreateA = 12,
  NVTX_CBID_CORE2_DomainCreateW = 13,
};

/* CUDA driver API (cuda.h of CUDA 12 and 13), for hooks_driver.c. */
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef void *CUmodule;
typedef void *CUkernel;
typedef void *CUlibrary;
typedef void *CUgraphExec;
#define CUDA_ERROR_NOT_FOUND 500
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ull
#define cudaEnablePerThreadDefaultStream 2ull

typedef struct CUlaunchConfig_st {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

#endif
