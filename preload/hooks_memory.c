/* hooks_memory.c — allocation and free hooks (kinds ALLOC and FREE).
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature, forwards to the real
 *    function and returns its result and errno untouched.
 *  - ALLOC records: ptr (0 when the call failed), bytes requested (for
 *    cudaMallocPitch: pitch * height on success, width * height on
 *    failure), memory kind, host_flags, stream / pool, GT_F_ASYNC for the
 *    stream-ordered APIs. Failed calls are recorded too.
 *  - FREE records: ptr, bytes 0 (the analyzer matches the allocation),
 *    memory DEVICE for cudaFree(Async) (refined by the analyzer) and
 *    PINNED_HOST for cudaFreeHost / cudaHostUnregister.
 *  - Page-locked ranges are kept up to date even when the call is not
 *    traced (tracing off, or nested in another hook): added after a
 *    successful cudaMallocHost / cudaHostAlloc / cudaHostRegister, removed
 *    before cudaFreeHost / cudaHostUnregister (before, so that an address
 *    reused by another thread right after the free is never dropped).
 *  - Out-parameters are read only after success and when non-NULL.
 *  - CUDA arrays (cudaMallocArray, cudaMalloc3DArray,
 *    cudaMallocMipmappedArray; GT_AF_ARRAY) are ALLOC records of device
 *    memory with ptr = the array handle and bytes = gt_array_bytes (shim.h):
 *    element size x extent, the sum of the levels for mipmaps; host_flags =
 *    the array flags. cudaFreeArray / cudaFreeMipmappedArray free them.
 *  - cudaMalloc3D: ptr = the pitched pointer, pitch, bytes = pitch x height
 *    x depth (the requested width x height x depth when it failed); freed by
 *    cudaFree.
 *  - cudaIpcOpenMemHandle (GT_AF_IPC): an ALLOC of device memory at the
 *    mapped pointer, host_flags = the flags, bytes = gt_ipc_mapped_bytes
 *    (0 without a driver that knows the range); cudaIpcCloseMemHandle frees
 *    it. The memory belongs to the exporting process: the analyzers list an
 *    unclosed mapping as a leak but do not count it in this process's live
 *    or peak bytes (model/heap.c).
 */
#include "capture.h"
#include "shim.h"

/* ---- shared bodies ---- */

/* What an allocation record says beside the call's results; the hooks
 * pass it as a compound literal, &(const struct alloc_info){api, memory,
 * flags, host_flags, stream, pool}. */
struct alloc_info {
  unsigned api;
  uint8_t memory;
  uint32_t flags;      /* GT_F_* */
  uint32_t host_flags; /* the API's flags argument */
  const void *stream;
  const void *pool;
};

/* A stream-ordered allocation or free queued into a capture is graph
 * memory: allocated when the graph runs (capture.h). */
static void mark_captured(struct gt_record *rec, unsigned api, const void *stream) {
  if (!(gt_mode_now() & GT_MODE_CAPTURE) || !(gt_api_flags(api) & GT_AF_ASYNC))
    return;
  uint32_t cap = gt_capture_of(stream, gt_apis[api].per_thread);
  if (cap) {
    rec->flags |= GT_F_CAPTURED;
    rec->u.mem.capture = cap;
  }
}

static void emit_alloc(const struct alloc_info *a, uint64_t t0, uint64_t t1,
                       cudaError_t r, const void *ptr, uint64_t bytes, uint64_t pitch) {
  struct gt_record rec;
  gt_record_begin(&rec, a->api, t0, t1, r);
  rec.flags = a->flags;
  rec.u.mem.ptr = (uint64_t)(uintptr_t)ptr;
  rec.u.mem.bytes = bytes;
  rec.u.mem.stream = (uint64_t)(uintptr_t)a->stream;
  rec.u.mem.pitch = pitch;
  rec.u.mem.pool = (uint64_t)(uintptr_t)a->pool;
  rec.u.mem.host_flags = a->host_flags;
  rec.u.mem.memory = a->memory;
  mark_captured(&rec, a->api, a->stream);
  gt_emit(&rec);
}

static void emit_free(unsigned api, uint8_t memory, uint32_t flags, uint64_t t0,
                      uint64_t t1, cudaError_t r, const void *ptr, const void *stream) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.mem.ptr = (uint64_t)(uintptr_t)ptr;
  rec.u.mem.stream = (uint64_t)(uintptr_t)stream;
  rec.u.mem.memory = memory;
  mark_captured(&rec, api, stream);
  gt_emit(&rec);
}

/* The pointer an allocation returned through `out`, or NULL on failure. */
static inline const void *out_ptr(cudaError_t r, void **out) {
  return r == 0 && out != NULL ? *out : NULL;
}

/* ---- device and managed allocations ---- */

/* The GT_HOOK_* macros below define the hooks they are given (macros:
 * shim.h), one per twin. */

GT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size) {
  GT_REAL(cudaMalloc);
  GT_TRACE_CALL(real_cudaMalloc(devPtr, size),
                emit_alloc(&(const struct alloc_info){GT_API_cudaMalloc, GT_MEM_DEVICE, 0,
                                                      0, NULL, NULL},
                           t0, t1, r, out_ptr(r, devPtr), size, 0));
}

#define GT_HOOK_MALLOC_ASYNC(name)                                                       \
  GT_EXPORT cudaError_t name(void **devPtr, size_t size, cudaStream_t stream) {          \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(devPtr, size, stream),                                     \
                  emit_alloc(&(const struct alloc_info){GT_API_##name, GT_MEM_DEVICE,    \
                                                        GT_F_ASYNC, 0, stream, NULL},    \
                             t0, t1, r, out_ptr(r, devPtr), size, 0));                   \
  }
GT_HOOK_MALLOC_ASYNC(cudaMallocAsync)
GT_HOOK_MALLOC_ASYNC(cudaMallocAsync_ptsz)

#define GT_HOOK_MALLOC_FROM_POOL(name)                                                   \
  GT_EXPORT cudaError_t name(void **ptr, size_t size, cudaMemPool_t pool,                \
                             cudaStream_t stream) {                                      \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(ptr, size, pool, stream),                                  \
                  emit_alloc(&(const struct alloc_info){GT_API_##name, GT_MEM_DEVICE,    \
                                                        GT_F_ASYNC, 0, stream, pool},    \
                             t0, t1, r, out_ptr(r, ptr), size, 0));                      \
  }
GT_HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync)
GT_HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync_ptsz)

GT_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  GT_REAL(cudaMallocManaged);
  GT_TRACE_CALL(
      real_cudaMallocManaged(devPtr, size, flags),
      emit_alloc(&(const struct alloc_info){GT_API_cudaMallocManaged, GT_MEM_MANAGED, 0,
                                            flags, NULL, NULL},
                 t0, t1, r, out_ptr(r, devPtr), size, 0));
}

/* bytes = pitch * height on success, the requested width * height else. */
static void emit_pitch(uint64_t t0, uint64_t t1, cudaError_t r, void **devPtr,
                       const size_t *pitch, size_t width, size_t height) {
  uint64_t p = r == 0 && pitch != NULL ? *pitch : 0;
  uint64_t bytes = (p != 0 ? p : (uint64_t)width) * height;
  emit_alloc(
      &(const struct alloc_info){GT_API_cudaMallocPitch, GT_MEM_DEVICE, 0, 0, NULL, NULL},
      t0, t1, r, out_ptr(r, devPtr), bytes, p);
}

GT_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                                      size_t height) {
  GT_REAL(cudaMallocPitch);
  GT_TRACE_CALL(real_cudaMallocPitch(devPtr, pitch, width, height),
                emit_pitch(t0, t1, r, devPtr, pitch, width, height));
}

/* ---- page-locked host memory ---- */

/* After a page-locked allocation or registration, traced or not: record the
 * range on success, and the call itself when traced. */
static void pinned_done(int traced, const struct alloc_info *ai, uint64_t t0, uint64_t t1,
                        cudaError_t r, const void *base, size_t bytes) {
  if (r == 0)
    gt_pinned_add(base, bytes);
  if (!traced)
    return;
  emit_alloc(ai, t0, t1, r, r == 0 ? base : NULL, bytes, 0);
  gt_hook_leave();
}

/* Calls `call` and finishes with pinned_done(..., base, bytes); `base` may
 * use `r`, the call's result (a macro: it returns from the hook, and `call`
 * and `base` are code). */
#define GT_TRACE_PINNED(call, info, base, bytes)                                         \
  do {                                                                                   \
    int traced = gt_hook_enter();                                                        \
    uint64_t t0 = traced ? gt_now() : 0;                                                 \
    cudaError_t r = call;                                                                \
    int saved_errno = errno;                                                             \
    uint64_t t1 = traced ? gt_now() : 0;                                                 \
    pinned_done(traced, info, t0, t1, r, (base), (bytes));                               \
    errno = saved_errno;                                                                 \
    return r;                                                                            \
  } while (0)

GT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size) {
  GT_REAL(cudaMallocHost);
  GT_TRACE_PINNED(real_cudaMallocHost(ptr, size),
                  (&(const struct alloc_info){GT_API_cudaMallocHost, GT_MEM_PINNED_HOST,
                                              0, 0, NULL, NULL}),
                  out_ptr(r, ptr), size);
}

GT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  GT_REAL(cudaHostAlloc);
  GT_TRACE_PINNED(real_cudaHostAlloc(pHost, size, flags),
                  (&(const struct alloc_info){GT_API_cudaHostAlloc, GT_MEM_PINNED_HOST, 0,
                                              flags, NULL, NULL}),
                  out_ptr(r, pHost), size);
}

GT_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  GT_REAL(cudaHostRegister);
  GT_TRACE_PINNED(real_cudaHostRegister(ptr, size, flags),
                  (&(const struct alloc_info){GT_API_cudaHostRegister, GT_MEM_PINNED_HOST,
                                              0, flags, NULL, NULL}),
                  ptr, size);
}

/* ---- frees ---- */

GT_EXPORT cudaError_t cudaFree(void *devPtr) {
  GT_REAL(cudaFree);
  GT_TRACE_CALL(real_cudaFree(devPtr),
                emit_free(GT_API_cudaFree, GT_MEM_DEVICE, 0, t0, t1, r, devPtr, NULL));
}

#define GT_HOOK_FREE_ASYNC(name)                                                         \
  GT_EXPORT cudaError_t name(void *devPtr, cudaStream_t stream) {                        \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(                                                                       \
        real_##name(devPtr, stream),                                                     \
        emit_free(GT_API_##name, GT_MEM_DEVICE, GT_F_ASYNC, t0, t1, r, devPtr, stream)); \
  }
GT_HOOK_FREE_ASYNC(cudaFreeAsync)
GT_HOOK_FREE_ASYNC(cudaFreeAsync_ptsz)

/* cudaFreeHost and cudaHostUnregister: forget the range, then free. */
#define GT_HOOK_FREE_PINNED(name)                                                        \
  GT_EXPORT cudaError_t name(void *ptr) {                                                \
    GT_REAL(name);                                                                       \
    gt_pinned_remove(ptr);                                                               \
    GT_TRACE_CALL(real_##name(ptr), emit_free(GT_API_##name, GT_MEM_PINNED_HOST, 0, t0,  \
                                              t1, r, ptr, NULL));                        \
  }
GT_HOOK_FREE_PINNED(cudaFreeHost)
GT_HOOK_FREE_PINNED(cudaHostUnregister)

/* ---- CUDA arrays ---- */

uint64_t gt_channel_bytes(const struct cudaChannelFormatDesc *d) {
  if (d == NULL)
    return 0;
  int c[4] = {d->x, d->y, d->z, d->w};
  uint64_t bits = 0;
  for (int i = 0; i < 4; i++)
    bits += c[i] > 0 ? (uint64_t)c[i] : 0;
  return bits / 8;
}

static uint64_t level_dim(size_t n, unsigned level) {
  if (n == 0)
    return 1; /* a 1D array's height, a 2D array's depth */
  uint64_t v = level < 64 ? (uint64_t)n >> level : 0;
  return v ? v : 1;
}

uint64_t gt_array_bytes(uint64_t elem, size_t width, size_t height, size_t depth,
                        unsigned levels, int keep_depth) {
  uint64_t total = 0;
  if (levels > 64) /* more levels than halvings of a 64-bit size: invalid anyway */
    levels = 64;
  for (unsigned l = 0; l < levels; l++) {
    uint64_t n = gt_mul_sat(gt_mul_sat(level_dim(width, l), level_dim(height, l)),
                            level_dim(depth, keep_depth ? 0 : l));
    total = gt_add_sat(total, gt_mul_sat(n, elem));
  }
  return total;
}

#define GT_ARRAY_KEEP_DEPTH (cudaArrayLayered | cudaArrayCubemap)

GT_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array,
                                      const struct cudaChannelFormatDesc *desc,
                                      size_t width, size_t height, unsigned int flags) {
  GT_REAL(cudaMallocArray);
  GT_TRACE_CALL(
      real_cudaMallocArray(array, desc, width, height, flags),
      emit_alloc(&(const struct alloc_info){GT_API_cudaMallocArray, GT_MEM_DEVICE, 0,
                                            flags, NULL, NULL},
                 t0, t1, r, out_ptr(r, array),
                 gt_array_bytes(gt_channel_bytes(desc), width, height, 0, 1, 0), 0));
}

GT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array,
                                        const struct cudaChannelFormatDesc *desc,
                                        struct cudaExtent extent, unsigned int flags) {
  GT_REAL(cudaMalloc3DArray);
  GT_TRACE_CALL(
      real_cudaMalloc3DArray(array, desc, extent, flags),
      emit_alloc(&(const struct alloc_info){GT_API_cudaMalloc3DArray, GT_MEM_DEVICE, 0,
                                            flags, NULL, NULL},
                 t0, t1, r, out_ptr(r, array),
                 gt_array_bytes(gt_channel_bytes(desc), extent.width, extent.height,
                                extent.depth, 1, 0),
                 0));
}

GT_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                               const struct cudaChannelFormatDesc *desc,
                                               struct cudaExtent extent,
                                               unsigned int numLevels,
                                               unsigned int flags) {
  GT_REAL(cudaMallocMipmappedArray);
  GT_TRACE_CALL(
      real_cudaMallocMipmappedArray(mipmappedArray, desc, extent, numLevels, flags),
      emit_alloc(&(const struct alloc_info){GT_API_cudaMallocMipmappedArray,
                                            GT_MEM_DEVICE, 0, flags, NULL, NULL},
                 t0, t1, r, out_ptr(r, mipmappedArray),
                 gt_array_bytes(gt_channel_bytes(desc), extent.width, extent.height,
                                extent.depth, numLevels,
                                (flags & GT_ARRAY_KEEP_DEPTH) != 0),
                 0));
}

#define GT_HOOK_FREE_ARRAY(name, type)                                                   \
  GT_EXPORT cudaError_t name(type array) {                                               \
    GT_REAL(name);                                                                       \
    GT_TRACE_CALL(real_##name(array),                                                    \
                  emit_free(GT_API_##name, GT_MEM_DEVICE, 0, t0, t1, r, array, NULL));   \
  }
GT_HOOK_FREE_ARRAY(cudaFreeArray, cudaArray_t)
GT_HOOK_FREE_ARRAY(cudaFreeMipmappedArray, cudaMipmappedArray_t)

/* ---- pitched 3D memory ---- */

static void emit_3d(uint64_t t0, uint64_t t1, cudaError_t r,
                    const struct cudaPitchedPtr *p, struct cudaExtent e) {
  uint64_t pitch = r == 0 && p != NULL ? p->pitch : 0;
  uint64_t bytes = gt_mul_sat(gt_mul_sat(pitch ? pitch : e.width, e.height), e.depth);
  emit_alloc(
      &(const struct alloc_info){GT_API_cudaMalloc3D, GT_MEM_DEVICE, 0, 0, NULL, NULL},
      t0, t1, r, r == 0 && p != NULL ? p->ptr : NULL, bytes, pitch);
}

GT_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
                                   struct cudaExtent extent) {
  GT_REAL(cudaMalloc3D);
  GT_TRACE_CALL(real_cudaMalloc3D(pitchedDevPtr, extent),
                emit_3d(t0, t1, r, pitchedDevPtr, extent));
}

/* ---- IPC mappings ---- */

typedef CUresult (*range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

uint64_t gt_ipc_mapped_bytes(uint64_t ptr) {
  static range_fn range; /* libcuda may be loaded late: retried until found */
  range_fn f = __atomic_load_n(&range, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = (range_fn)gt_resolve("cuMemGetAddressRange_v2");
    if (f == NULL)
      return 0;
    __atomic_store_n(&range, f, __ATOMIC_RELEASE);
  }
  CUdeviceptr base = 0;
  size_t size = 0;
  if (ptr == 0 || f(&base, &size, ptr) != 0 || ptr < base || ptr - base >= size)
    return 0;
  return size - (ptr - base);
}

static void emit_ipc_open(uint64_t t0, uint64_t t1, cudaError_t r, void **devPtr,
                          unsigned int flags) {
  const void *p = out_ptr(r, devPtr);
  emit_alloc(&(const struct alloc_info){GT_API_cudaIpcOpenMemHandle, GT_MEM_DEVICE, 0,
                                        flags, NULL, NULL},
             t0, t1, r, p, gt_ipc_mapped_bytes((uint64_t)(uintptr_t)p), 0);
}

GT_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                           unsigned int flags) {
  GT_REAL(cudaIpcOpenMemHandle);
  GT_TRACE_CALL(real_cudaIpcOpenMemHandle(devPtr, handle, flags),
                emit_ipc_open(t0, t1, r, devPtr, flags));
}

GT_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr) {
  GT_REAL(cudaIpcCloseMemHandle);
  GT_TRACE_CALL(
      real_cudaIpcCloseMemHandle(devPtr),
      emit_free(GT_API_cudaIpcCloseMemHandle, GT_MEM_DEVICE, 0, t0, t1, r, devPtr, NULL));
}
