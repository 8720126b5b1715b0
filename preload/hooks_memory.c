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
 */
#include "shim.h"

/* ---- shared bodies ---- */

struct alloc_info {
  unsigned api;
  uint8_t memory;
  uint32_t flags;      /* GT_F_* */
  uint32_t host_flags; /* the API's flags argument */
  const void *stream;
  const void *pool;
};

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
  gt_emit(&rec);
}

/* The pointer an allocation returned through `out`, or NULL on failure. */
static inline const void *out_ptr(cudaError_t r, void **out) {
  return r == 0 && out != NULL ? *out : NULL;
}

#define GT_ALLOC_INFO(name, mem, fl, hflags, strm, pl)                                   \
  (&(const struct alloc_info){GT_API_##name, mem, fl, hflags, strm, pl})

/* ---- device and managed allocations ---- */

GT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size) {
  GT_REAL(cudaMalloc, cudaError_t, (void **, size_t));
  GT_TRACE_CALL(real_cudaMalloc(devPtr, size),
                emit_alloc(GT_ALLOC_INFO(cudaMalloc, GT_MEM_DEVICE, 0, 0, NULL, NULL), t0,
                           t1, r, out_ptr(r, devPtr), size, 0));
}

#define GT_HOOK_MALLOC_ASYNC(name)                                                       \
  GT_EXPORT cudaError_t name(void **devPtr, size_t size, cudaStream_t stream) {          \
    GT_REAL(name, cudaError_t, (void **, size_t, cudaStream_t));                         \
    GT_TRACE_CALL(                                                                       \
        real_##name(devPtr, size, stream),                                               \
        emit_alloc(GT_ALLOC_INFO(name, GT_MEM_DEVICE, GT_F_ASYNC, 0, stream, NULL), t0,  \
                   t1, r, out_ptr(r, devPtr), size, 0));                                 \
  }
GT_HOOK_MALLOC_ASYNC(cudaMallocAsync)
GT_HOOK_MALLOC_ASYNC(cudaMallocAsync_ptsz)

#define GT_HOOK_MALLOC_FROM_POOL(name)                                                   \
  GT_EXPORT cudaError_t name(void **ptr, size_t size, cudaMemPool_t pool,                \
                             cudaStream_t stream) {                                      \
    GT_REAL(name, cudaError_t, (void **, size_t, cudaMemPool_t, cudaStream_t));          \
    GT_TRACE_CALL(                                                                       \
        real_##name(ptr, size, pool, stream),                                            \
        emit_alloc(GT_ALLOC_INFO(name, GT_MEM_DEVICE, GT_F_ASYNC, 0, stream, pool), t0,  \
                   t1, r, out_ptr(r, ptr), size, 0));                                    \
  }
GT_HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync)
GT_HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync_ptsz)

GT_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  GT_REAL(cudaMallocManaged, cudaError_t, (void **, size_t, unsigned int));
  GT_TRACE_CALL(
      real_cudaMallocManaged(devPtr, size, flags),
      emit_alloc(GT_ALLOC_INFO(cudaMallocManaged, GT_MEM_MANAGED, 0, flags, NULL, NULL),
                 t0, t1, r, out_ptr(r, devPtr), size, 0));
}

/* bytes = pitch * height on success, the requested width * height else. */
static void emit_pitch(uint64_t t0, uint64_t t1, cudaError_t r, void **devPtr,
                       const size_t *pitch, size_t width, size_t height) {
  uint64_t p = r == 0 && pitch != NULL ? *pitch : 0;
  uint64_t bytes = (p != 0 ? p : (uint64_t)width) * height;
  emit_alloc(GT_ALLOC_INFO(cudaMallocPitch, GT_MEM_DEVICE, 0, 0, NULL, NULL), t0, t1, r,
             out_ptr(r, devPtr), bytes, p);
}

GT_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                                      size_t height) {
  GT_REAL(cudaMallocPitch, cudaError_t, (void **, size_t *, size_t, size_t));
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
 * use `r`, the call's result. */
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
  GT_REAL(cudaMallocHost, cudaError_t, (void **, size_t));
  GT_TRACE_PINNED(real_cudaMallocHost(ptr, size),
                  GT_ALLOC_INFO(cudaMallocHost, GT_MEM_PINNED_HOST, 0, 0, NULL, NULL),
                  out_ptr(r, ptr), size);
}

GT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  GT_REAL(cudaHostAlloc, cudaError_t, (void **, size_t, unsigned int));
  GT_TRACE_PINNED(real_cudaHostAlloc(pHost, size, flags),
                  GT_ALLOC_INFO(cudaHostAlloc, GT_MEM_PINNED_HOST, 0, flags, NULL, NULL),
                  out_ptr(r, pHost), size);
}

GT_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  GT_REAL(cudaHostRegister, cudaError_t, (void *, size_t, unsigned int));
  GT_TRACE_PINNED(
      real_cudaHostRegister(ptr, size, flags),
      GT_ALLOC_INFO(cudaHostRegister, GT_MEM_PINNED_HOST, 0, flags, NULL, NULL), ptr,
      size);
}

/* ---- frees ---- */

GT_EXPORT cudaError_t cudaFree(void *devPtr) {
  GT_REAL(cudaFree, cudaError_t, (void *));
  GT_TRACE_CALL(real_cudaFree(devPtr),
                emit_free(GT_API_cudaFree, GT_MEM_DEVICE, 0, t0, t1, r, devPtr, NULL));
}

#define GT_HOOK_FREE_ASYNC(name)                                                         \
  GT_EXPORT cudaError_t name(void *devPtr, cudaStream_t stream) {                        \
    GT_REAL(name, cudaError_t, (void *, cudaStream_t));                                  \
    GT_TRACE_CALL(                                                                       \
        real_##name(devPtr, stream),                                                     \
        emit_free(GT_API_##name, GT_MEM_DEVICE, GT_F_ASYNC, t0, t1, r, devPtr, stream)); \
  }
GT_HOOK_FREE_ASYNC(cudaFreeAsync)
GT_HOOK_FREE_ASYNC(cudaFreeAsync_ptsz)

/* cudaFreeHost and cudaHostUnregister: forget the range, then free. */
#define GT_HOOK_FREE_PINNED(name)                                                        \
  GT_EXPORT cudaError_t name(void *ptr) {                                                \
    GT_REAL(name, cudaError_t, (void *));                                                \
    gt_pinned_remove(ptr);                                                               \
    GT_TRACE_CALL(real_##name(ptr), emit_free(GT_API_##name, GT_MEM_PINNED_HOST, 0, t0,  \
                                              t1, r, ptr, NULL));                        \
  }
GT_HOOK_FREE_PINNED(cudaFreeHost)
GT_HOOK_FREE_PINNED(cudaHostUnregister)
