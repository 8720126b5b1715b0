/* hooks_driver_mem.c — the driver API's CUDA arrays, IPC mappings, 2D and
 * 3D copies, managed-memory prefetches and host functions: the twins of the
 * runtime's hooks_memory.c, hooks_copy3d.c and hooks_launch.c for programs
 * (PyTorch, NCCL, inference servers) that call libcuda.
 *
 * Contract (hooks_driver.c's hold too: exported with the exact cuda.h
 * signature, reached by dlsym, cuGetProcAddress and cudaGetDriverEntryPoint
 * through apis.h's table, result and errno untouched):
 *  - cuArrayCreate_v2, cuArray3DCreate_v2, cuMipmappedArrayCreate
 *    (GT_AF_ARRAY): ALLOC of device memory, ptr = the handle, bytes = the
 *    element size (the format's bytes x NumChannels; the *X1/X2/X4 formats
 *    carry their own channel count; block-compressed and YUV formats give
 *    0) x extent, summed over the levels of a mipmapped array
 *    (gt_array_bytes); host_flags = Flags. cuArrayDestroy and
 *    cuMipmappedArrayDestroy free them.
 *  - cuIpcOpenMemHandle_v2 (GT_AF_IPC): ALLOC of device memory at the
 *    mapped pointer, bytes from cuMemGetAddressRange_v2
 *    (gt_ipc_mapped_bytes); cuIpcCloseMemHandle frees it.
 *  - cuMemcpy2D(Unaligned)_v2, cuMemcpy2DAsync_v2, cuMemcpy3D(Async)_v2 and
 *    their _ptds/_ptsz twins: MEMCPY, bytes = WidthInBytes x Height (x
 *    Depth), width = WidthInBytes, height = Height (x Depth), dst/src = the
 *    host pointer, device pointer or array the memory type names; dir from
 *    the two memory types (host: H; device, array: D), default when one is
 *    CU_MEMORYTYPE_UNIFIED (either) or the descriptor is NULL.
 *  - cuMemPrefetchAsync_v2(_ptsz) (GT_AF_PREFETCH): MEMCPY of count bytes,
 *    dst = src = the pointer, HtoD to a device location, DtoH to a host one,
 *    neither pinned nor pageable (as the runtime's, hooks_copy3d.c).
 *  - cuLaunchHostFunc, cuStreamAddCallback (and _ptsz): LAUNCH of a host
 *    function (GT_F_HOST_FN, kernel = the function), with a corr, untimed.
 *  - Copies are timed on the device like hooks_driver.c's (DRV_TIMED).
 */
#include "hooks_driver.h"

/* The DRV_* macros below that take a `name` define the hook of that name
 * (macros: shim.h), one per twin. */

/* ---- arrays ---- */

/* Bytes of one element of a CUarray_format, channels included. */
static uint64_t format_bytes(int format, unsigned channels) {
  switch (format) {
  case 0x01: /* UNSIGNED_INT8 */
  case 0x08: /* SIGNED_INT8 */
    return channels;
  case 0x02: /* UNSIGNED_INT16 */
  case 0x09: /* SIGNED_INT16 */
  case 0x10: /* HALF */
    return 2ull * channels;
  case 0x03: /* UNSIGNED_INT32 */
  case 0x0a: /* SIGNED_INT32 */
  case 0x20: /* FLOAT */
    return 4ull * channels;
  case 0xc0: /* UNORM_INT8X1 */
  case 0xc6: /* SNORM_INT8X1 */
    return 1;
  case 0xc1: /* UNORM_INT8X2 */
  case 0xc3: /* UNORM_INT16X1 */
  case 0xc7: /* SNORM_INT8X2 */
  case 0xc9: /* SNORM_INT16X1 */
    return 2;
  case 0xc2: /* UNORM_INT8X4 */
  case 0xc4: /* UNORM_INT16X2 */
  case 0xc8: /* SNORM_INT8X4 */
  case 0xca: /* SNORM_INT16X2 */
  case 0x50: /* UNORM_INT_101010_2 */
    return 4;
  case 0xc5: /* UNORM_INT16X4 */
  case 0xcb: /* SNORM_INT16X4 */
    return 8;
  default: /* block-compressed and YUV formats: not per element */
    return 0;
  }
}

static void emit_array(unsigned api, uint64_t t0, uint64_t t1, CUresult r,
                       void *const *handle, uint64_t bytes, uint32_t flags) {
  gt_drv_emit_mem(api, 0, GT_MEM_DEVICE, t0, t1, r, out_hptr(r, handle), bytes, NULL, 0,
                  0, flags);
}

static uint64_t desc_bytes(const CUDA_ARRAY_DESCRIPTOR *d) {
  return d ? gt_array_bytes(format_bytes(d->Format, d->NumChannels), d->Width, d->Height,
                            0, 1, 0)
           : 0;
}

static uint64_t desc3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels) {
  return d ? gt_array_bytes(
                 format_bytes(d->Format, d->NumChannels), d->Width, d->Height, d->Depth,
                 levels, (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0)
           : 0;
}

GT_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d) {
  DRV_REAL(cuArrayCreate_v2);
  GT_TRACE_CALL(
      real_cuArrayCreate_v2(pHandle, d),
      emit_array(GT_API_cuArrayCreate_v2, t0, t1, r, pHandle, desc_bytes(d), 0));
}

GT_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle,
                                      const CUDA_ARRAY3D_DESCRIPTOR *d) {
  DRV_REAL(cuArray3DCreate_v2);
  GT_TRACE_CALL(real_cuArray3DCreate_v2(pHandle, d),
                emit_array(GT_API_cuArray3DCreate_v2, t0, t1, r, pHandle,
                           desc3d_bytes(d, 1), d ? d->Flags : 0));
}

GT_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                          const CUDA_ARRAY3D_DESCRIPTOR *d,
                                          unsigned int numMipmapLevels) {
  DRV_REAL(cuMipmappedArrayCreate);
  GT_TRACE_CALL(real_cuMipmappedArrayCreate(pHandle, d, numMipmapLevels),
                emit_array(GT_API_cuMipmappedArrayCreate, t0, t1, r, pHandle,
                           desc3d_bytes(d, numMipmapLevels), d ? d->Flags : 0));
}

#define DRV_FREE_HANDLE(name, type)                                                      \
  GT_EXPORT CUresult name(type h) {                                                      \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(h),                                                        \
                  gt_drv_emit_mem(GT_API_##name, 0, GT_MEM_DEVICE, t0, t1, r,            \
                                  (uint64_t)(uintptr_t)h, 0, NULL, 0, 0, 0));            \
  }
DRV_FREE_HANDLE(cuArrayDestroy, CUarray)
DRV_FREE_HANDLE(cuMipmappedArrayDestroy, CUmipmappedArray)

/* ---- IPC mappings ---- */

static void emit_ipc_open(uint64_t t0, uint64_t t1, CUresult r, const CUdeviceptr *p,
                          unsigned int flags) {
  uint64_t ptr = out_dptr(r, p);
  gt_drv_emit_mem(GT_API_cuIpcOpenMemHandle_v2, 0, GT_MEM_DEVICE, t0, t1, r, ptr,
                  gt_ipc_mapped_bytes(ptr), NULL, 0, 0, flags);
}

GT_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                         unsigned int Flags) {
  DRV_REAL(cuIpcOpenMemHandle_v2);
  GT_TRACE_CALL(real_cuIpcOpenMemHandle_v2(pdptr, handle, Flags),
                emit_ipc_open(t0, t1, r, pdptr, Flags));
}

GT_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  DRV_REAL(cuIpcCloseMemHandle);
  GT_TRACE_CALL(real_cuIpcCloseMemHandle(dptr),
                gt_drv_emit_mem(GT_API_cuIpcCloseMemHandle, 0, GT_MEM_DEVICE, t0, t1, r,
                                dptr, 0, NULL, 0, 0, 0));
}

/* ---- 2D and 3D copies ---- */

/* 'H' host, 'D' device (arrays included), 0 unknown (unified: either). */
static char side_of(int type) {
  return type == CU_MEMORYTYPE_HOST                                    ? 'H'
         : type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY ? 'D'
                                                                       : 0;
}

static uint8_t dir_of(int dst_type, int src_type) {
  char d = side_of(dst_type), s = side_of(src_type);
  if (!d || !s)
    return GT_DIR_DEFAULT;
  if (s == 'H')
    return d == 'H' ? GT_DIR_HTOH : GT_DIR_HTOD;
  return d == 'H' ? GT_DIR_DTOH : GT_DIR_DTOD;
}

static uint64_t operand(int type, const void *host, CUdeviceptr dev, CUarray array) {
  switch (type) {
  case CU_MEMORYTYPE_HOST:
    return (uint64_t)(uintptr_t)host;
  case CU_MEMORYTYPE_ARRAY:
    return (uint64_t)(uintptr_t)array;
  default:
    return dev;
  }
}

/* The fields CUDA_MEMCPY2D and CUDA_MEMCPY3D share, by name (a macro: it
 * reads the same fields of either struct type). */
#define DRV_DESC_COPY(p, rows, strm)                                                     \
  (&(const struct gt_drv_copy){                                                          \
      .dst = operand(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray),           \
      .src = operand(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray),           \
      .bytes = gt_mul_sat(p->WidthInBytes, rows),                                        \
      .width = p->WidthInBytes,                                                          \
      .height = rows,                                                                    \
      .kind = dir_of(p->dstMemoryType, p->srcMemoryType),                                \
      .dir = dir_of(p->dstMemoryType, p->srcMemoryType),                                 \
      .stream = strm})

static void emit_2d(unsigned api, uint32_t flags, const CUDA_MEMCPY2D *p,
                    const void *stream, uint64_t t0, uint64_t t1, CUresult r) {
  if (p != NULL)
    gt_drv_emit_copy(api, flags, t0, t1, r, DRV_DESC_COPY(p, p->Height, stream));
  else
    gt_drv_emit_copy(api, flags, t0, t1, r,
                     &(const struct gt_drv_copy){.kind = GT_DIR_DEFAULT,
                                                 .dir = GT_DIR_DEFAULT,
                                                 .stream = stream});
}

static void emit_3d(unsigned api, uint32_t flags, const CUDA_MEMCPY3D *p,
                    const void *stream, uint64_t t0, uint64_t t1, CUresult r) {
  if (p != NULL)
    gt_drv_emit_copy(api, flags, t0, t1, r,
                     DRV_DESC_COPY(p, gt_mul_sat(p->Height, p->Depth), stream));
  else
    emit_2d(api, flags, NULL, stream, t0, t1, r);
}

#define DRV_COPY_DESC(name, pt, type, emit)                                              \
  GT_EXPORT CUresult name(const type *pCopy) {                                           \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_COPY, name, NULL, pt, real_##name(pCopy),                            \
              emit(GT_API_##name, 0, pCopy, NULL, t0, t1, r));                           \
  }
#define DRV_COPY_DESC_ASYNC(name, pt, type, emit)                                        \
  GT_EXPORT CUresult name(const type *pCopy, CUstream hStream) {                         \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_COPY, name, hStream, pt, real_##name(pCopy, hStream),                \
              emit(GT_API_##name, GT_F_ASYNC, pCopy, hStream, t0, t1, r));               \
  }
DRV_COPY_DESC(cuMemcpy2D_v2, 0, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC(cuMemcpy2D_v2_ptds, 1, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC(cuMemcpy2DUnaligned_v2, 0, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC(cuMemcpy2DUnaligned_v2_ptds, 1, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC_ASYNC(cuMemcpy2DAsync_v2, 0, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC_ASYNC(cuMemcpy2DAsync_v2_ptsz, 1, CUDA_MEMCPY2D, emit_2d)
DRV_COPY_DESC(cuMemcpy3D_v2, 0, CUDA_MEMCPY3D, emit_3d)
DRV_COPY_DESC(cuMemcpy3D_v2_ptds, 1, CUDA_MEMCPY3D, emit_3d)
DRV_COPY_DESC_ASYNC(cuMemcpy3DAsync_v2, 0, CUDA_MEMCPY3D, emit_3d)
DRV_COPY_DESC_ASYNC(cuMemcpy3DAsync_v2_ptsz, 1, CUDA_MEMCPY3D, emit_3d)

/* ---- prefetches ---- */

static uint8_t location_dir(int type) {
  if (type == CU_MEM_LOCATION_TYPE_DEVICE)
    return GT_DIR_HTOD;
  if (type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
      type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return GT_DIR_DTOH;
  return GT_DIR_DEFAULT;
}

static void emit_prefetch(unsigned api, CUdeviceptr p, size_t count, CUmemLocation loc,
                          const void *stream, uint64_t t0, uint64_t t1, CUresult r) {
  uint8_t dir = location_dir(loc.type);
  gt_drv_emit_copy(api, GT_F_ASYNC, t0, t1, r,
                   &(const struct gt_drv_copy){.dst = p,
                                               .src = p,
                                               .bytes = count,
                                               .kind = dir,
                                               .dir = dir,
                                               .managed = 1,
                                               .stream = stream});
}

#define DRV_PREFETCH(name, pt)                                                           \
  GT_EXPORT CUresult name(CUdeviceptr devPtr, size_t count, CUmemLocation location,      \
                          unsigned int flags, CUstream hStream) {                        \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(                                                                           \
        GT_DT_COPY, name, hStream, pt,                                                   \
        real_##name(devPtr, count, location, flags, hStream),                            \
        emit_prefetch(GT_API_##name, devPtr, count, location, hStream, t0, t1, r));      \
  }
DRV_PREFETCH(cuMemPrefetchAsync_v2, 0)
DRV_PREFETCH(cuMemPrefetchAsync_v2_ptsz, 1)

/* ---- host functions ---- */

#define DRV_HOST_FUNC(name, ptsz)                                                        \
  GT_LAUNCH_HOOK(CUresult, CUDA_ERROR_NOT_FOUND, name,                                   \
                 (CUstream hStream, CUhostFn fn, void *userData),                        \
                 (hStream, fn, userData), GT_DT_NONE, fn, 0, 0, 0, 0, 0, hStream, ptsz)
DRV_HOST_FUNC(cuLaunchHostFunc, 0)
DRV_HOST_FUNC(cuLaunchHostFunc_ptsz, 1)

#define DRV_STREAM_CALLBACK(name, ptsz)                                                  \
  GT_LAUNCH_HOOK(                                                                        \
      CUresult, CUDA_ERROR_NOT_FOUND, name,                                              \
      (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), \
      (hStream, callback, userData, flags), GT_DT_NONE, callback, 0, 0, 0, 0, 0,         \
      hStream, ptsz)
DRV_STREAM_CALLBACK(cuStreamAddCallback, 0)
DRV_STREAM_CALLBACK(cuStreamAddCallback_ptsz, 1)
