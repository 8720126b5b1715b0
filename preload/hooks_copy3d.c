/* hooks_copy3d.c — the runtime's 3D, CUDA-array, batch and prefetch copies
 * (kind MEMCPY) and 3D memsets (kind MEMSET).
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature (the _ptds / _ptsz
 *    per-thread-stream twins included), forwards to the real function,
 *    returns its result and errno untouched, and is timed on the device like
 *    the other copies and memsets (GT_TRACE_TIMED keyed by the entry point).
 *  - Records are those of hooks_copy.h. A side that is a CUDA array is
 *    recorded as the array handle and is device memory whatever the kind.
 *  - bytes:
 *     cudaMemcpy{To,From}Array(Async), cudaMemcpyArrayToArray: count;
 *     cudaMemcpy2D{To,From}Array(Async), cudaMemcpy2DArrayToArray:
 *       width x height (width and height recorded);
 *     cudaMemcpy3D(Async), cudaMemcpy3DPeer(Async): extent width x height x
 *       depth x the element size: the array's (source first) when one takes
 *       part, asked of the runtime after a successful call
 *       (gt_array_elem_bytes), 1 for linear memory (extent.width is in bytes
 *       then) or when the array could not be asked (a failed call: the
 *       element count). width = extent.width x element size, height =
 *       extent.height x depth. dst/src: the array, else the pitched pointer
 *       (positions are not added). Peer copies are GT_DIR_PEER with the
 *       devices of the parameters;
 *     cudaMemcpyBatchAsync: the sum of sizes[]; dst, src and the direction
 *       are those of the first copy (resolved as for cudaMemcpyDefault: the
 *       batch API takes no kind);
 *     cudaMemcpy3DBatchAsync: the sum over its ops of extent x element size
 *       as for cudaMemcpy3D; dst, src and direction of the first op.
 *  - Prefetches (cudaMemPrefetchAsync, cudaMemPrefetchBatchAsync;
 *    GT_AF_PREFETCH): a migration of managed memory, recorded as a copy so
 *    that it counts among transfers: dst = src = the (first) pointer, bytes =
 *    count (the sum of sizes[]), dir HtoD to a device location, DtoH to a
 *    host one (host, a NUMA node, the current NUMA node), default when the
 *    location is neither or a batch's locations disagree; kind = that
 *    direction as a cudaMemcpyKind; GT_F_ASYNC, neither pinned nor pageable.
 *  - cudaMemset3D(Async): ptr = the pitched pointer, bytes = extent width x
 *    height x depth, width = extent.width, height = height x depth.
 *  - CUDA 12 programs call three of these names with another ABI:
 *    cudaMemPrefetchAsync(ptr, count, int device, stream) and CUDA 12.8's
 *    batches, which take a size_t *failIdx before their flags / stream. The
 *    hooks take the longer of the two parameter lists (the parameters a
 *    shorter call did not pass are never used), forward every one of them
 *    unchanged (a callee ignores the ones it does not take: caller-cleaned
 *    calls on x86-64 and aarch64), and read them by the ABI of the library
 *    the real function lives in (its cudaRuntimeGetVersion: below 13000,
 *    CUDA 12's). A CUDA 12 prefetch's device is a location: cudaCpuDeviceId
 *    (-1) the host, another ordinal that device.
 */
#include <dlfcn.h>
#include <string.h>

#include "hooks_copy.h"

/* The ABI of the libcudart defining `real`: 12 when its
 * cudaRuntimeGetVersion says < 13000 (or, when it cannot be asked, the file
 * is named libcudart*.so.12*), else 13. Found once per entry point: its real
 * function is set once. */
typedef cudaError_t (*version_fn)(int *);

static int runtime_abi(unsigned api, const void *real) {
  static int abi[GT_API_COUNT];
  int a = __atomic_load_n(&abi[api], __ATOMIC_RELAXED);
  if (a != 0)
    return a;
  int saved_errno = errno, version = 0;
  version_fn get = (version_fn)gt_real_in_library(real, "cudaRuntimeGetVersion");
  Dl_info info;
  if (get != NULL && get(&version) == 0 && version > 0)
    a = version < 13000 ? 12 : 13;
  else if (dladdr(real, &info) && info.dli_fname != NULL &&
           strstr(info.dli_fname, "libcudart") != NULL &&
           strstr(info.dli_fname, ".so.12") != NULL)
    a = 12;
  else
    a = 13;
  __atomic_store_n(&abi[api], a, __ATOMIC_RELAXED);
  errno = saved_errno;
  return a;
}

/* The GT_HOOK_* macros define the hooks they name (macros: shim.h). One
 * hook: `params` is the full parameter list (hook_sigs.h's, named),
 * `args` the call's arguments, `emit` what records it (t0, t1 and r in
 * scope). */
#define GT_HOOK_COPY(name, ptsz, strm, params, args, emit)                               \
  GT_EXPORT cudaError_t name params {                                                    \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, strm, ptsz,                  \
                   real_##name args, emit);                                              \
  }

/* The four hooks of a copy with _ptds, Async and Async_ptsz forms, named
 * in that order (written out, so that each exported name can be found):
 * `P` and `A` are the synchronous form's parameters and arguments (the
 * Async forms add the stream), EMIT(name, flags, stream) records it. The
 * EMIT macros below (GT_TO_ARRAY, ..., GT_3D_PEER) are macros because
 * GT_HOOK_COPY4 applies them to each twin's name, and they read the hook's
 * parameters by name. */
#define GT_HOOK_COPY4(sync, sync_ptds, async, async_ptsz, P, A, EMIT)                    \
  GT_HOOK_COPY(sync, 0, NULL, P, A, EMIT(sync, 0, NULL))                                 \
  GT_HOOK_COPY(sync_ptds, 1, NULL, P, A, EMIT(sync_ptds, 0, NULL))                       \
  GT_HOOK_COPY(async, 0, stream, (GT_UNPAREN P, cudaStream_t stream),                    \
               (GT_UNPAREN A, stream), EMIT(async, GT_F_ASYNC, stream))                  \
  GT_HOOK_COPY(async_ptsz, 1, stream, (GT_UNPAREN P, cudaStream_t stream),               \
               (GT_UNPAREN A, stream), EMIT(async_ptsz, GT_F_ASYNC, stream))
/* A copy with a _ptds form only (the array-to-array copies, DtoD). */
#define GT_HOOK_COPY2(sync, sync_ptds, P, A, EMIT)                                       \
  GT_HOOK_COPY(sync, 0, NULL, P, A, EMIT(sync, 0, NULL))                                 \
  GT_HOOK_COPY(sync_ptds, 1, NULL, P, A, EMIT(sync_ptds, 0, NULL))

/* ---- 1D copies to and from arrays (deprecated, still exported) ---- */

#define GT_TO_ARRAY(name, fl, strm)                                                      \
  gt_copy_emit_1d(GT_API_##name, fl, dst, src, count, kind, strm, GT_DEV_DST, t0, t1, r)
GT_HOOK_COPY4(cudaMemcpyToArray, cudaMemcpyToArray_ptds, cudaMemcpyToArrayAsync,
              cudaMemcpyToArrayAsync_ptsz,
              (cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
               size_t count, enum cudaMemcpyKind kind),
              (dst, wOffset, hOffset, src, count, kind), GT_TO_ARRAY)

#define GT_FROM_ARRAY(name, fl, strm)                                                    \
  gt_copy_emit_1d(GT_API_##name, fl, dst, src, count, kind, strm, GT_DEV_SRC, t0, t1, r)
GT_HOOK_COPY4(cudaMemcpyFromArray, cudaMemcpyFromArray_ptds, cudaMemcpyFromArrayAsync,
              cudaMemcpyFromArrayAsync_ptsz,
              (void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
               size_t count, enum cudaMemcpyKind kind),
              (dst, src, wOffset, hOffset, count, kind), GT_FROM_ARRAY)

#define GT_ARRAY_TO_ARRAY(name, fl, strm)                                                \
  gt_copy_emit_1d(GT_API_##name, fl, dst, src, count, kind, strm,                        \
                  GT_DEV_DST | GT_DEV_SRC, t0, t1, r)
GT_HOOK_COPY2(cudaMemcpyArrayToArray, cudaMemcpyArrayToArray_ptds,
              (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
               cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t count,
               enum cudaMemcpyKind kind),
              (dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind),
              GT_ARRAY_TO_ARRAY)

/* ---- 2D copies to and from arrays ---- */

#define GT_2D_TO_ARRAY(name, fl, strm)                                                   \
  gt_copy_emit_2d(GT_API_##name, fl, dst, src, width, height, kind, strm, GT_DEV_DST,    \
                  t0, t1, r)
GT_HOOK_COPY4(cudaMemcpy2DToArray, cudaMemcpy2DToArray_ptds, cudaMemcpy2DToArrayAsync,
              cudaMemcpy2DToArrayAsync_ptsz,
              (cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
               size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind),
              (dst, wOffset, hOffset, src, spitch, width, height, kind), GT_2D_TO_ARRAY)

#define GT_2D_FROM_ARRAY(name, fl, strm)                                                 \
  gt_copy_emit_2d(GT_API_##name, fl, dst, src, width, height, kind, strm, GT_DEV_SRC,    \
                  t0, t1, r)
GT_HOOK_COPY4(cudaMemcpy2DFromArray, cudaMemcpy2DFromArray_ptds,
              cudaMemcpy2DFromArrayAsync, cudaMemcpy2DFromArrayAsync_ptsz,
              (void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
               size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind),
              (dst, dpitch, src, wOffset, hOffset, width, height, kind), GT_2D_FROM_ARRAY)

#define GT_2D_ARRAY_TO_ARRAY(name, fl, strm)                                             \
  gt_copy_emit_2d(GT_API_##name, fl, dst, src, width, height, kind, strm,                \
                  GT_DEV_DST | GT_DEV_SRC, t0, t1, r)
GT_HOOK_COPY2(cudaMemcpy2DArrayToArray, cudaMemcpy2DArrayToArray_ptds,
              (cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
               cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
               size_t height, enum cudaMemcpyKind kind),
              (dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height,
               kind),
              GT_2D_ARRAY_TO_ARRAY)

/* ---- 3D copies ---- */

/* The element size of a 3D copy: the array's when one takes part. */
static uint64_t elem_of(cudaError_t r, const void *array, const void *other) {
  if (array == NULL && other == NULL)
    return 1; /* linear memory: extents are in bytes */
  uint64_t e = r == 0 ? gt_array_elem_bytes(array != NULL ? array : other) : 0;
  return e ? e : 1; /* not known: the element count */
}

static uint64_t extent_bytes(struct cudaExtent e, uint64_t elem) {
  return gt_mul_sat(gt_mul_sat(gt_mul_sat(e.width, elem), e.height), e.depth);
}

/* Fill bytes, width and height of c from the extent, then emit. */
static void emit_3d(struct gt_copy_desc *c, const void *src_array, const void *dst_array,
                    struct cudaExtent e, uint64_t t0, uint64_t t1, cudaError_t r) {
  uint64_t elem = elem_of(r, src_array, dst_array);
  c->width = gt_mul_sat(e.width, elem);
  c->height = gt_mul_sat(e.height, e.depth);
  c->bytes = extent_bytes(e, elem);
  gt_copy_emit(c, t0, t1, r);
}

static unsigned array_sides(const void *dst_array, const void *src_array) {
  return (dst_array ? GT_DEV_DST : 0) | (src_array ? GT_DEV_SRC : 0);
}

void gt_memcpy3d_emit(unsigned api, uint32_t flags, const struct cudaMemcpy3DParms *p,
                      const void *stream, uint64_t t0, uint64_t t1, cudaError_t r) {
  struct gt_copy_desc c = {
      .api = api, .flags = flags, .kind = cudaMemcpyDefault, .stream = stream};
  if (p == NULL) {
    gt_copy_emit(&c, t0, t1, r);
    return;
  }
  c.dst = p->dstArray ? p->dstArray : p->dstPtr.ptr;
  c.src = p->srcArray ? p->srcArray : p->srcPtr.ptr;
  c.kind = p->kind;
  c.dev = array_sides(p->dstArray, p->srcArray);
  emit_3d(&c, p->srcArray, p->dstArray, p->extent, t0, t1, r);
}

#define GT_3D(name, fl, strm) gt_memcpy3d_emit(GT_API_##name, fl, p, strm, t0, t1, r)
GT_HOOK_COPY4(cudaMemcpy3D, cudaMemcpy3D_ptds, cudaMemcpy3DAsync, cudaMemcpy3DAsync_ptsz,
              (const struct cudaMemcpy3DParms *p), (p), GT_3D)

static void emit_peer3d(unsigned api, uint32_t flags,
                        const struct cudaMemcpy3DPeerParms *p, const void *stream,
                        uint64_t t0, uint64_t t1, cudaError_t r) {
  struct gt_copy_desc c = {.api = api,
                           .flags = flags,
                           .kind = cudaMemcpyDeviceToDevice,
                           .stream = stream,
                           .peer = 1,
                           .dst_device = -1,
                           .src_device = -1};
  if (p == NULL) {
    gt_copy_emit(&c, t0, t1, r);
    return;
  }
  c.dst = p->dstArray ? p->dstArray : p->dstPtr.ptr;
  c.src = p->srcArray ? p->srcArray : p->srcPtr.ptr;
  c.dst_device = p->dstDevice;
  c.src_device = p->srcDevice;
  emit_3d(&c, p->srcArray, p->dstArray, p->extent, t0, t1, r);
}

#define GT_3D_PEER(name, fl, strm) emit_peer3d(GT_API_##name, fl, p, strm, t0, t1, r)
GT_HOOK_COPY4(cudaMemcpy3DPeer, cudaMemcpy3DPeer_ptds, cudaMemcpy3DPeerAsync,
              cudaMemcpy3DPeerAsync_ptsz, (const struct cudaMemcpy3DPeerParms *p), (p),
              GT_3D_PEER)

/* ---- batches (CUDA 12.8+) ---- */

static void emit_batch(unsigned api, void *const *dsts, const void *const *srcs,
                       const size_t *sizes, size_t count, const void *stream, uint64_t t0,
                       uint64_t t1, cudaError_t r) {
  uint64_t bytes = 0;
  for (size_t i = 0; sizes != NULL && i < count; i++)
    bytes = gt_add_sat(bytes, sizes[i]);
  struct gt_copy_desc c = {.api = api,
                           .flags = GT_F_ASYNC,
                           .dst = dsts != NULL && count ? dsts[0] : NULL,
                           .src = srcs != NULL && count ? srcs[0] : NULL,
                           .bytes = bytes,
                           .kind = cudaMemcpyDefault,
                           .stream = stream};
  gt_copy_emit(&c, t0, t1, r);
}

/* CUDA 13: (..., numAttrs, stream); CUDA 12.8: (..., numAttrs, failIdx,
 * stream). */
#define GT_HOOK_BATCH(name, ptsz)                                                        \
  GT_EXPORT cudaError_t name(void *const *dsts, const void *const *srcs,                 \
                             const size_t *sizes, size_t count,                          \
                             struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,      \
                             size_t numAttrs, uintptr_t a8, uintptr_t a9) {              \
    GT_REAL(name);                                                                       \
    cudaStream_t stream =                                                                \
        (cudaStream_t)(runtime_abi(GT_API_##name, (const void *)real_##name) == 12       \
                           ? a9                                                          \
                           : a8);                                                        \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                           \
        real_##name(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, a8, a9),       \
        emit_batch(GT_API_##name, dsts, srcs, sizes, count, stream, t0, t1, r));         \
  }
GT_HOOK_BATCH(cudaMemcpyBatchAsync, 0)
GT_HOOK_BATCH(cudaMemcpyBatchAsync_ptsz, 1)

static const void *operand(const struct cudaMemcpy3DOperand *o, unsigned side,
                           unsigned *dev) {
  if (o->type != cudaMemcpyOperandTypeArray)
    return o->op.ptr.ptr;
  *dev |= side;
  return o->op.array.array;
}

static const void *operand_array(const struct cudaMemcpy3DOperand *o) {
  return o->type == cudaMemcpyOperandTypeArray ? o->op.array.array : NULL;
}

static void emit_batch3d(unsigned api, size_t n, const struct cudaMemcpy3DBatchOp *ops,
                         const void *stream, uint64_t t0, uint64_t t1, cudaError_t r) {
  struct gt_copy_desc c = {
      .api = api, .flags = GT_F_ASYNC, .kind = cudaMemcpyDefault, .stream = stream};
  for (size_t i = 0; ops != NULL && i < n; i++) {
    uint64_t elem = elem_of(r, operand_array(&ops[i].src), operand_array(&ops[i].dst));
    c.bytes = gt_add_sat(c.bytes, extent_bytes(ops[i].extent, elem));
  }
  if (ops != NULL && n > 0) {
    c.dst = operand(&ops[0].dst, GT_DEV_DST, &c.dev);
    c.src = operand(&ops[0].src, GT_DEV_SRC, &c.dev);
  }
  gt_copy_emit(&c, t0, t1, r);
}

/* CUDA 13: (numOps, opList, flags, stream); CUDA 12.8: (numOps, opList,
 * failIdx, flags, stream). */
#define GT_HOOK_BATCH_3D(name, ptsz)                                                     \
  GT_EXPORT cudaError_t name(size_t numOps, struct cudaMemcpy3DBatchOp *opList,          \
                             uintptr_t a3, uintptr_t a4, uintptr_t a5) {                 \
    GT_REAL(name);                                                                       \
    cudaStream_t stream =                                                                \
        (cudaStream_t)(runtime_abi(GT_API_##name, (const void *)real_##name) == 12       \
                           ? a5                                                          \
                           : a4);                                                        \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(numOps, opList, a3, a4, a5),                              \
                   emit_batch3d(GT_API_##name, numOps, opList, stream, t0, t1, r));      \
  }
GT_HOOK_BATCH_3D(cudaMemcpy3DBatchAsync, 0)
GT_HOOK_BATCH_3D(cudaMemcpy3DBatchAsync_ptsz, 1)

/* ---- prefetches of managed memory ---- */

static uint8_t location_dir(const struct cudaMemLocation *l) {
  switch (l->type) {
  case cudaMemLocationTypeDevice:
    return GT_DIR_HTOD;
  case cudaMemLocationTypeHost:
  case cudaMemLocationTypeHostNuma:
  case cudaMemLocationTypeHostNumaCurrent:
    return GT_DIR_DTOH;
  default:
    return GT_DIR_DEFAULT;
  }
}

static void emit_prefetch(unsigned api, const void *ptr, uint64_t bytes, uint8_t dir,
                          const void *stream, uint64_t t0, uint64_t t1, cudaError_t r) {
  struct gt_copy_desc c = {.api = api,
                           .flags = GT_F_ASYNC,
                           .dst = ptr,
                           .src = ptr,
                           .bytes = bytes,
                           .kind = dir,
                           .stream = stream};
  gt_copy_record(&c, dir, 0, t0, t1, r);
}

/* A CUDA 12 prefetch's device ordinal, as a direction. */
static uint8_t device_dir(int device) {
  return device == -1 ? GT_DIR_DTOH : device >= 0 ? GT_DIR_HTOD : GT_DIR_DEFAULT;
}

/* CUDA 13: (ptr, count, location, flags, stream); CUDA 12: (ptr, count,
 * device, stream): the device in the location's first int, the stream in
 * the flags' (register-wide) place. */
#define GT_HOOK_PREFETCH(name, ptsz)                                                     \
  GT_EXPORT cudaError_t name(const void *devPtr, size_t count,                           \
                             struct cudaMemLocation location, uintptr_t a4,              \
                             cudaStream_t a5) {                                          \
    GT_REAL(name);                                                                       \
    int v12 = runtime_abi(GT_API_##name, (const void *)real_##name) == 12;               \
    cudaStream_t stream = v12 ? (cudaStream_t)a4 : a5;                                   \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                           \
        real_##name(devPtr, count, location, a4, a5),                                    \
        emit_prefetch(GT_API_##name, devPtr, count,                                      \
                      v12 ? device_dir(location.type) : location_dir(&location), stream, \
                      t0, t1, r));                                                       \
  }
GT_HOOK_PREFETCH(cudaMemPrefetchAsync, 0)
GT_HOOK_PREFETCH(cudaMemPrefetchAsync_ptsz, 1)

/* The direction every location of a batch agrees on, else default. */
static uint8_t locations_dir(const struct cudaMemLocation *locs, size_t n) {
  if (locs == NULL || n == 0)
    return GT_DIR_DEFAULT;
  uint8_t dir = location_dir(&locs[0]);
  for (size_t i = 1; i < n; i++)
    if (location_dir(&locs[i]) != dir)
      return GT_DIR_DEFAULT;
  return dir;
}

static void emit_prefetch_batch(unsigned api, void *const *dptrs, const size_t *sizes,
                                size_t count, const struct cudaMemLocation *locs,
                                size_t nlocs, const void *stream, uint64_t t0,
                                uint64_t t1, cudaError_t r) {
  uint64_t bytes = 0;
  for (size_t i = 0; sizes != NULL && i < count; i++)
    bytes = gt_add_sat(bytes, sizes[i]);
  emit_prefetch(api, dptrs != NULL && count ? dptrs[0] : NULL, bytes,
                locations_dir(locs, nlocs), stream, t0, t1, r);
}

#define GT_HOOK_PREFETCH_BATCH(name, ptsz)                                               \
  GT_EXPORT cudaError_t name(void **dptrs, size_t *sizes, size_t count,                  \
                             struct cudaMemLocation *prefetchLocs,                       \
                             size_t *prefetchLocIdxs, size_t numPrefetchLocs,            \
                             unsigned long long flags, cudaStream_t stream) {            \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,       \
                               numPrefetchLocs, flags, stream),                          \
                   emit_prefetch_batch(GT_API_##name, dptrs, sizes, count, prefetchLocs, \
                                       numPrefetchLocs, stream, t0, t1, r));             \
  }
GT_HOOK_PREFETCH_BATCH(cudaMemPrefetchBatchAsync, 0)
GT_HOOK_PREFETCH_BATCH(cudaMemPrefetchBatchAsync_ptsz, 1)

/* ---- 3D memsets ---- */

static void emit_set3d(unsigned api, uint32_t flags, struct cudaPitchedPtr p, int value,
                       struct cudaExtent e, const void *stream, uint64_t t0, uint64_t t1,
                       cudaError_t r) {
  gt_set_emit(api, flags, t0, t1, r, p.ptr, value, e.width, gt_mul_sat(e.height, e.depth),
              extent_bytes(e, 1), stream);
}

#define GT_HOOK_SET_3D(name, ptsz)                                                       \
  GT_EXPORT cudaError_t name(struct cudaPitchedPtr pitchedDevPtr, int value,             \
                             struct cudaExtent extent) {                                 \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_SET, (const void *)GT_API_##name, NULL, ptsz,                              \
        real_##name(pitchedDevPtr, value, extent),                                       \
        emit_set3d(GT_API_##name, 0, pitchedDevPtr, value, extent, NULL, t0, t1, r));    \
  }
#define GT_HOOK_SET_3D_ASYNC(name, ptsz)                                                 \
  GT_EXPORT cudaError_t name(struct cudaPitchedPtr pitchedDevPtr, int value,             \
                             struct cudaExtent extent, cudaStream_t stream) {            \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_SET, (const void *)GT_API_##name, stream, ptsz,                 \
                   real_##name(pitchedDevPtr, value, extent, stream),                    \
                   emit_set3d(GT_API_##name, GT_F_ASYNC, pitchedDevPtr, value, extent,   \
                              stream, t0, t1, r));                                       \
  }
GT_HOOK_SET_3D(cudaMemset3D, 0)
GT_HOOK_SET_3D(cudaMemset3D_ptds, 1)
GT_HOOK_SET_3D_ASYNC(cudaMemset3DAsync, 0)
GT_HOOK_SET_3D_ASYNC(cudaMemset3DAsync_ptsz, 1)
