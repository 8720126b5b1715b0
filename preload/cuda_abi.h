/* cuda_abi.h — the few CUDA runtime and NVTX ABI types the shim needs,
 * declared here so libgputrace.so builds without the CUDA toolkit.
 *
 * Contract: layouts match cuda_runtime_api.h / driver_types.h / cuda.h of
 * CUDA 12 and 13 and nvtx3/nvToolsExt.h. Types carry the toolkit's names, so
 * that tests/unit/test_cuda_abi.c can compare every struct's size and field
 * offsets with the toolkit's headers (when the toolkit is installed). Only
 * what the hooks read is declared; handles are opaque pointers.
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

/* A dim3 parameter as the calling convention passes it, in two integer
 * registers: its first 8 bytes (x | y << 32) and z (the second word's upper
 * half unspecified). The launch hooks take their dims so (launch.h): GCC
 * keeps a dim3 parameter in memory, which costs the hot path moves
 * (docs/PERFORMANCE.md, "Figures moved out of code comments").
 * True of x86-64 (System V) and AArch64 (AAPCS64), the two CUDA 13 hosts,
 * for a dim3 that gets registers, as in every launch signature hooked. */
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "launch hooks take dim3 as two integer registers: x86-64 and AArch64 only"
#endif
_Static_assert(sizeof(dim3) == 12, "dim3 is three 32-bit words");
/* A macro: it declares two parameters, name_xy and name_z. GT_SIG_DIM3:
 * the same two as types, where hook_sigs.h has a dim3. */
#define GT_DIM3_PARAM(name) uint64_t name##_xy, uint32_t name##_z
#define GT_SIG_DIM3 uint64_t, uint32_t

/* Streams and events (driver_types.h), for device timing (devtime.c). */
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamNonBlocking 0x01u
#define cudaEventDefault 0x00u
enum { cudaErrorNotReady = 600 };
enum { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1 };
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
};
typedef void *cudaGraph_t;
typedef void *cudaGraphNode_t;
typedef struct cudaGraphEdgeData_st cudaGraphEdgeData; /* never read */

typedef struct {
  unsigned int x, y, z;
} uint3; /* __cudaRegisterFunction's tid/bid */

enum cudaMemcpyKind {
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

/* Arrays, 3D copies, managed memory, IPC, stream callbacks (driver_types.h,
 * cuda_runtime_api.h). Enums are ints: their size on every ABI CUDA
 * supports. */
typedef void *cudaArray_t;
typedef const void *cudaArray_const_t;
typedef void *cudaMipmappedArray_t;
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status,
                                     void *userData);

#define cudaArrayLayered 0x01u
#define cudaArrayCubemap 0x04u

struct cudaChannelFormatDesc {
  int x, y, z, w; /* bits per channel */
  int f;          /* enum cudaChannelFormatKind */
};

struct cudaExtent {
  size_t width; /* elements of an array; bytes of linear memory */
  size_t height;
  size_t depth;
};

struct cudaPos {
  size_t x, y, z;
};

struct cudaPitchedPtr {
  void *ptr;
  size_t pitch;
  size_t xsize;
  size_t ysize;
};

struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  struct cudaExtent extent;
  int kind; /* enum cudaMemcpyKind */
};

struct cudaMemcpy3DPeerParms {
  cudaArray_t srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  int srcDevice;
  cudaArray_t dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  int dstDevice;
  struct cudaExtent extent;
};

enum {
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
  cudaMemLocationTypeHostNuma = 3,
  cudaMemLocationTypeHostNumaCurrent = 4,
};

struct cudaMemLocation {
  int type; /* enum cudaMemLocationType */
  int id;
};

struct cudaMemcpyAttributes { /* CUDA 12.8+ batch copies */
  int srcAccessOrder;
  struct cudaMemLocation srcLocHint;
  struct cudaMemLocation dstLocHint;
  unsigned int flags;
};

enum { cudaMemcpyOperandTypePointer = 1, cudaMemcpyOperandTypeArray = 2 };

struct cudaOffset3D {
  size_t x, y, z;
};

struct cudaMemcpy3DOperand {
  int type; /* enum cudaMemcpy3DOperandType */
  union {
    struct {
      void *ptr;
      size_t rowLength;
      size_t layerHeight;
      struct cudaMemLocation locHint;
    } ptr;
    struct {
      cudaArray_t array;
      struct cudaOffset3D offset;
    } array;
  } op;
};

struct cudaMemcpy3DBatchOp {
  struct cudaMemcpy3DOperand src;
  struct cudaMemcpy3DOperand dst;
  struct cudaExtent extent; /* elements: of the array when one takes part, else bytes */
  int srcAccessOrder;
  unsigned int flags;
};

typedef struct cudaIpcMemHandle_st {
  char reserved[64]; /* CUDA_IPC_HANDLE_SIZE */
} cudaIpcMemHandle_t;

/* Graph building (driver_types.h), for hooks_graph.c: the node parameters
 * the hooks read. */
struct cudaKernelNodeParams {
  void *func; /* a kernel stub or a cudaKernel_t */
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
};

struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void *userData;
};

struct cudaMemsetParams {
  void *dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize; /* 1, 2 or 4 */
  size_t width;             /* elements */
  size_t height;
};

struct cudaMemPoolProps { /* 88 bytes in CUDA 12 and 13 */
  int allocType;          /* enum cudaMemAllocationType */
  int handleTypes;        /* enum cudaMemAllocationHandleType */
  struct cudaMemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};

struct cudaMemAllocNodeParams {
  struct cudaMemPoolProps poolProps;
  const void *accessDescs; /* const struct cudaMemAccessDesc * */
  size_t accessDescCount;
  size_t bytesize;
  void *dptr; /* out: the allocation's address */
};

typedef struct cudaGraphInstantiateParams_st {
  unsigned long long flags;
  cudaStream_t uploadStream;
  cudaGraphNode_t errNode_out;
  int result_out; /* cudaGraphInstantiateResult */
} cudaGraphInstantiateParams;

typedef struct cudaGraphExecUpdateResultInfo_st {
  int result; /* enum cudaGraphExecUpdateResult */
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;

enum { cudaErrorGraphExecUpdateFailure = 910 };

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

typedef void *CUarray;
typedef void *CUmipmappedArray;
typedef void *CUcontext;
typedef void (*CUhostFn)(void *userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);

enum { /* CUmemorytype */
       CU_MEMORYTYPE_HOST = 1,
       CU_MEMORYTYPE_DEVICE = 2,
       CU_MEMORYTYPE_ARRAY = 3,
       CU_MEMORYTYPE_UNIFIED = 4,
};

enum { /* CUmemLocationType */
       CU_MEM_LOCATION_TYPE_DEVICE = 1,
       CU_MEM_LOCATION_TYPE_HOST = 2,
       CU_MEM_LOCATION_TYPE_HOST_NUMA = 3,
       CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 4,
};

#define CUDA_ARRAY3D_LAYERED 0x01u
#define CUDA_ARRAY3D_CUBEMAP 0x04u

typedef struct CUDA_MEMCPY2D_st { /* CUDA_MEMCPY2D_v2 */
  size_t srcXInBytes;
  size_t srcY;
  int srcMemoryType; /* CUmemorytype */
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
} CUDA_MEMCPY2D;

typedef struct CUDA_MEMCPY3D_st { /* CUDA_MEMCPY3D_v2 */
  size_t srcXInBytes;
  size_t srcY;
  size_t srcZ;
  size_t srcLOD;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void *reserved0;
  size_t srcPitch;
  size_t srcHeight;
  size_t dstXInBytes;
  size_t dstY;
  size_t dstZ;
  size_t dstLOD;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void *reserved1;
  size_t dstPitch;
  size_t dstHeight;
  size_t WidthInBytes;
  size_t Height;
  size_t Depth;
} CUDA_MEMCPY3D;

typedef struct CUDA_ARRAY_DESCRIPTOR_st { /* CUDA_ARRAY_DESCRIPTOR_v2 */
  size_t Width;
  size_t Height;
  int Format; /* CUarray_format */
  unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st { /* CUDA_ARRAY3D_DESCRIPTOR_v2 */
  size_t Width;
  size_t Height;
  size_t Depth;
  int Format;
  unsigned int NumChannels;
  unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef struct CUmemLocation_st {
  int type; /* CUmemLocationType */
  int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st CUmemAllocationProp; /* never read */

typedef struct CUipcMemHandle_st {
  char reserved[64]; /* CU_IPC_HANDLE_SIZE */
} CUipcMemHandle;

typedef struct CUlaunchConfig_st {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

/* Graphs (cuda.h), for hooks_graph.c's driver hooks. */
typedef void *CUgraph;
typedef void *CUgraphNode;
typedef struct CUgraphEdgeData_st CUgraphEdgeData; /* never read */
typedef enum CUstreamCaptureMode_enum {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st { /* CUDA_KERNEL_NODE_PARAMS (12.0+) */
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
  CUkernel kern; /* launched when func is NULL */
  CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

typedef struct CUgraphExecUpdateResultInfo_st {
  int result; /* CUgraphExecUpdateResult */
  CUgraphNode errorNode;
  CUgraphNode errorFromNode;
} CUgraphExecUpdateResultInfo;

typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
  cuuint64_t flags;
  CUstream hUploadStream;
  CUgraphNode hErrNode_out;
  int result_out; /* CUgraphInstantiateResult */
} CUDA_GRAPH_INSTANTIATE_PARAMS;

#endif
