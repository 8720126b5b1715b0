/* copy3d.c — copies to, from and between CUDA arrays, 3D copies, batched
 * copies (CUDA 12.8+), managed-memory prefetches and 3D memsets, on
 * copy.c's pitched-3D core.
 *
 * Contract:
 *  - Bytes really move, in program order, at the call, and each copy is an
 *    op on its stream's timeline on the engine its direction picks (copy.c:
 *    latency + bytes / bandwidth, host waits as for cudaMemcpy /
 *    cudaMemcpyAsync). An array side is device memory.
 *  - Array regions: offsets and widths are bytes for the 1D/2D array
 *    copies (wOffset, width) and elements for 3D copies (positions and
 *    extents, as the API says); a region past the array's edge is
 *    cudaErrorInvalidValue, a stale array handle
 *    cudaErrorInvalidResourceHandle. The 1D copies (cudaMemcpyToArray, ...)
 *    run through the array's rows from (hOffset, wOffset).
 *  - cudaMemcpy3D(Async) and cudaMemcpy3DPeer(Async): exactly one of array
 *    and pointer per side, else cudaErrorInvalidValue; extents are in the
 *    array's elements when one takes part (two arrays must have one
 *    element size), else in bytes; a pitched pointer's slices are pitch x
 *    ysize apart (ysize must cover the extent's height when depth > 1).
 *    Peer copies name device 0 (the only one) and are device-to-device.
 *  - Batches (cudaMemcpyBatchAsync, cudaMemcpy3DBatchAsync): every copy is
 *    checked before any runs (count, attributes and their indices, source
 *    access orders, operands; cudaErrorInvalidValue otherwise), the legacy
 *    NULL stream is refused (the header says so), then each copy is one op
 *    on the stream, its direction resolved from where its pointers live.
 *  - Prefetches (cudaMemPrefetchAsync, cudaMemPrefetchBatchAsync) need
 *    managed memory (cudaErrorInvalidValue otherwise), flags 0, a device
 *    location naming device 0 (cudaErrorInvalidDevice otherwise) or a host
 *    location. Each is a migration: count bytes on the H2D engine (to the
 *    device) or D2H engine (to the host) at the pinned bandwidth; the host
 *    never waits. Where pages already are is not tracked: every prefetch
 *    moves its bytes.
 *  - cudaMemset3D(Async): slices pitch x ysize apart; device memory is set
 *    asynchronously to the host as cudaMemset is.
 *  - In a capturing stream the copies are memcpy nodes (through copy.c's
 *    core; a batch is one node per copy) and a prefetch is refused
 *    (cudaErrorStreamCaptureUnsupported: not modelled as a node).
 *    si_copy3d_build gives graph.c a cudaMemcpy3DParms's pitched copy.
 *  - The .12 build exports CUDA 12's forms where the ABI differs
 *    (compat12.c: cudaMemPrefetchAsync with a device ordinal, the 12.8
 *    batches with failIdx) and no cudaMemPrefetchBatchAsync (13 only).
 */
#include <string.h>

#include "standin.h"

/* ---- array regions ------------------------------------------------------------ */

/* The region of an array starting x bytes into row y of slice z, w bytes
 * wide, h rows, d slices. */
static cudaError_t array_region(const void *array, size_t x, size_t y, size_t z, size_t w,
                                size_t h, size_t d, char **base, size_t *pitch,
                                size_t *slice) {
  struct si_array_view v;
  if (!si_array_view(array, &v))
    return cudaErrorInvalidResourceHandle;
  size_t row = v.width * v.elem;
  if (x > row || w > row - x || y > v.height || h > v.height - y || z > v.depth ||
      d > v.depth - z)
    return cudaErrorInvalidValue;
  *pitch = row;
  *slice = row * v.height;
  *base = v.data + z * *slice + y * row + x;
  return cudaSuccess;
}

/* count bytes through an array's rows from (hOffset, wOffset). */
static cudaError_t array_run(const void *array, size_t wOffset, size_t hOffset,
                             size_t count, char **at) {
  struct si_array_view v;
  if (!si_array_view(array, &v))
    return cudaErrorInvalidResourceHandle;
  size_t row = v.width * v.elem, size = row * v.height * v.depth;
  size_t off = hOffset * row + wOffset;
  if (wOffset > row || hOffset > v.height * v.depth || off > size || count > size - off)
    return cudaErrorInvalidValue;
  *at = v.data + off;
  return cudaSuccess;
}

static enum si_copy_mode mode_of(int async) {
  return async ? SI_COPY_ASYNC : SI_COPY_SYNC;
}

/* ---- 1D copies to and from arrays ------------------------------------------------ */

static cudaError_t to_array(cudaArray_t dst, size_t wOffset, size_t hOffset,
                            const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream, int pt, int async) {
  char *at;
  cudaError_t e = array_run(dst, wOffset, hOffset, count, &at);
  return e ? e : si_copy1d(at, src, count, kind, stream, pt, mode_of(async));
}

static cudaError_t from_array(void *dst, cudaArray_const_t src, size_t wOffset,
                              size_t hOffset, size_t count, enum cudaMemcpyKind kind,
                              cudaStream_t stream, int pt, int async) {
  char *at;
  cudaError_t e = array_run(src, wOffset, hOffset, count, &at);
  return e ? e : si_copy1d(dst, at, count, kind, stream, pt, mode_of(async));
}

static cudaError_t array_to_array(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                  cudaArray_const_t src, size_t wOffsetSrc,
                                  size_t hOffsetSrc, size_t count,
                                  enum cudaMemcpyKind kind, int pt) {
  char *d, *s;
  cudaError_t e = array_run(dst, wOffsetDst, hOffsetDst, count, &d);
  if (e == cudaSuccess)
    e = array_run(src, wOffsetSrc, hOffsetSrc, count, &s);
  return e ? e : si_copy1d(d, s, count, kind, NULL, pt, SI_COPY_SYNC);
}

SI_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                     const void *src, size_t count,
                                     enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyToArray");
  return si_ret(to_array(dst, wOffset, hOffset, src, count, kind, NULL, 0, 0));
}

SI_API cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                          const void *src, size_t count,
                                          enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyToArray_ptds");
  return si_ret(to_array(dst, wOffset, hOffset, src, count, kind, NULL, 1, 0));
}

SI_API cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                          const void *src, size_t count,
                                          enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyToArrayAsync");
  return si_ret(to_array(dst, wOffset, hOffset, src, count, kind, stream, 0, 1));
}

SI_API cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                               size_t hOffset, const void *src,
                                               size_t count, enum cudaMemcpyKind kind,
                                               cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyToArrayAsync_ptsz");
  return si_ret(to_array(dst, wOffset, hOffset, src, count, kind, stream, 1, 1));
}

SI_API cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t count,
                                       enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyFromArray");
  return si_ret(from_array(dst, src, wOffset, hOffset, count, kind, NULL, 0, 0));
}

SI_API cudaError_t cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset, size_t count,
                                            enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyFromArray_ptds");
  return si_ret(from_array(dst, src, wOffset, hOffset, count, kind, NULL, 1, 0));
}

SI_API cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset, size_t count,
                                            enum cudaMemcpyKind kind,
                                            cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyFromArrayAsync");
  return si_ret(from_array(dst, src, wOffset, hOffset, count, kind, stream, 0, 1));
}

SI_API cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src,
                                                 size_t wOffset, size_t hOffset,
                                                 size_t count, enum cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyFromArrayAsync_ptsz");
  return si_ret(from_array(dst, src, wOffset, hOffset, count, kind, stream, 1, 1));
}

SI_API cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                          size_t hOffsetDst, cudaArray_const_t src,
                                          size_t wOffsetSrc, size_t hOffsetSrc,
                                          size_t count, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyArrayToArray");
  return si_ret(array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                               count, kind, 0));
}

SI_API cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                               size_t hOffsetDst, cudaArray_const_t src,
                                               size_t wOffsetSrc, size_t hOffsetSrc,
                                               size_t count, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyArrayToArray_ptds");
  return si_ret(array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc,
                               count, kind, 1));
}

/* ---- 2D copies to and from arrays ------------------------------------------------ */

static cudaError_t to_array_2d(cudaArray_t dst, size_t wOffset, size_t hOffset,
                               const void *src, size_t spitch, size_t width,
                               size_t height, enum cudaMemcpyKind kind,
                               cudaStream_t stream, int pt, int async) {
  char *at = NULL;
  struct si_copy c = {NULL, 0, 0, src, spitch, spitch * height, width, height, 1};
  cudaError_t e =
      array_region(dst, wOffset, hOffset, 0, width, height, 1, &at, &c.dpitch, &c.dslice);
  c.dst = at;
  return e ? e : si_copy_run(&c, kind, stream, pt, mode_of(async));
}

static cudaError_t from_array_2d(void *dst, size_t dpitch, cudaArray_const_t src,
                                 size_t wOffset, size_t hOffset, size_t width,
                                 size_t height, enum cudaMemcpyKind kind,
                                 cudaStream_t stream, int pt, int async) {
  char *at = NULL;
  struct si_copy c = {dst, dpitch, dpitch * height, NULL, 0, 0, width, height, 1};
  cudaError_t e =
      array_region(src, wOffset, hOffset, 0, width, height, 1, &at, &c.spitch, &c.sslice);
  c.src = at;
  return e ? e : si_copy_run(&c, kind, stream, pt, mode_of(async));
}

static cudaError_t array_to_array_2d(cudaArray_t dst, size_t wOffsetDst,
                                     size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
                                     size_t height, enum cudaMemcpyKind kind, int pt) {
  char *d = NULL, *s = NULL;
  struct si_copy c = {0};
  cudaError_t e = array_region(dst, wOffsetDst, hOffsetDst, 0, width, height, 1, &d,
                               &c.dpitch, &c.dslice);
  if (e == cudaSuccess)
    e = array_region(src, wOffsetSrc, hOffsetSrc, 0, width, height, 1, &s, &c.spitch,
                     &c.sslice);
  c.dst = d;
  c.src = s;
  c.width = width;
  c.height = height;
  c.depth = 1;
  return e ? e : si_copy_run(&c, kind, NULL, pt, SI_COPY_SYNC);
}

SI_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                       const void *src, size_t spitch, size_t width,
                                       size_t height, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DToArray");
  return si_ret(
      to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, NULL, 0, 0));
}

SI_API cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset,
                                            size_t hOffset, const void *src,
                                            size_t spitch, size_t width, size_t height,
                                            enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DToArray_ptds");
  return si_ret(
      to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, NULL, 1, 0));
}

SI_API cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset,
                                            size_t hOffset, const void *src,
                                            size_t spitch, size_t width, size_t height,
                                            enum cudaMemcpyKind kind,
                                            cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DToArrayAsync");
  return si_ret(
      to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, 0, 1));
}

SI_API cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
                                                 size_t hOffset, const void *src,
                                                 size_t spitch, size_t width,
                                                 size_t height, enum cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DToArrayAsync_ptsz");
  return si_ret(
      to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, 1, 1));
}

SI_API cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src,
                                         size_t wOffset, size_t hOffset, size_t width,
                                         size_t height, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DFromArray");
  return si_ret(
      from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind, NULL, 0, 0));
}

SI_API cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch,
                                              cudaArray_const_t src, size_t wOffset,
                                              size_t hOffset, size_t width, size_t height,
                                              enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DFromArray_ptds");
  return si_ret(
      from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind, NULL, 1, 0));
}

SI_API cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch,
                                              cudaArray_const_t src, size_t wOffset,
                                              size_t hOffset, size_t width, size_t height,
                                              enum cudaMemcpyKind kind,
                                              cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DFromArrayAsync");
  return si_ret(from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind,
                              stream, 0, 1));
}

SI_API cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(
    void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
    size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DFromArrayAsync_ptsz");
  return si_ret(from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind,
                              stream, 1, 1));
}

SI_API cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                            size_t hOffsetDst, cudaArray_const_t src,
                                            size_t wOffsetSrc, size_t hOffsetSrc,
                                            size_t width, size_t height,
                                            enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DArrayToArray");
  return si_ret(array_to_array_2d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc,
                                  hOffsetSrc, width, height, kind, 0));
}

SI_API cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                                 size_t hOffsetDst, cudaArray_const_t src,
                                                 size_t wOffsetSrc, size_t hOffsetSrc,
                                                 size_t width, size_t height,
                                                 enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2DArrayToArray_ptds");
  return si_ret(array_to_array_2d(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc,
                                  hOffsetSrc, width, height, kind, 1));
}

/* ---- 3D copies --------------------------------------------------------------------- */

/* One side of a 3D copy: an array at an element position, or a pitched
 * pointer at a byte position. */
struct side3 {
  const void *array;
  struct cudaPos pos;
  struct cudaPitchedPtr ptr;
};

static cudaError_t side_region(const struct side3 *s, size_t elem, struct cudaExtent e,
                               char **base, size_t *pitch, size_t *slice) {
  if (s->array != NULL)
    return array_region(s->array, s->pos.x * elem, s->pos.y, s->pos.z, e.width * elem,
                        e.height, e.depth, base, pitch, slice);
  if (e.depth > 1 && s->ptr.ysize < e.height)
    return cudaErrorInvalidValue;
  *pitch = s->ptr.pitch;
  *slice = s->ptr.pitch * s->ptr.ysize;
  *base = (char *)s->ptr.ptr + s->pos.z * *slice + s->pos.y * *pitch + s->pos.x;
  return cudaSuccess;
}

/* The element size a 3D copy's extent counts in. */
static cudaError_t elem_size(const void *a, const void *b, size_t *elem) {
  struct si_array_view va, vb;
  *elem = 1;
  if (a != NULL && !si_array_view(a, &va))
    return cudaErrorInvalidResourceHandle;
  if (b != NULL && !si_array_view(b, &vb))
    return cudaErrorInvalidResourceHandle;
  if (a != NULL && b != NULL && va.elem != vb.elem)
    return cudaErrorInvalidValue;
  *elem = a != NULL ? va.elem : b != NULL ? vb.elem : 1;
  return cudaSuccess;
}

/* Build the pitched copy of a 3D copy (nothing runs). */
static cudaError_t build3d(const struct side3 *dst, const struct side3 *src,
                           struct cudaExtent e, struct si_copy *c) {
  if ((dst->array != NULL) == (dst->ptr.ptr != NULL) ||
      (src->array != NULL) == (src->ptr.ptr != NULL))
    return cudaErrorInvalidValue;
  size_t elem;
  cudaError_t err = elem_size(src->array, dst->array, &elem);
  char *d = NULL, *s = NULL;
  *c = (struct si_copy){0};
  if (err == cudaSuccess)
    err = side_region(dst, elem, e, &d, &c->dpitch, &c->dslice);
  if (err == cudaSuccess)
    err = side_region(src, elem, e, &s, &c->spitch, &c->sslice);
  c->dst = d;
  c->src = s;
  c->width = e.width * elem;
  c->height = e.height;
  c->depth = e.depth;
  return err;
}

/* A 3D copy of either parameter struct (their fields have one name). */
#define RUN_3D(p, kind, stream, pt, mode)                                                \
  run3d(&(struct side3){p->dstArray, p->dstPos, p->dstPtr},                              \
        &(struct side3){p->srcArray, p->srcPos, p->srcPtr}, p->extent, kind, stream, pt, \
        mode)

static cudaError_t run3d(const struct side3 *dst, const struct side3 *src,
                         struct cudaExtent e, enum cudaMemcpyKind kind,
                         cudaStream_t stream, int pt, enum si_copy_mode mode) {
  struct si_copy c;
  if (e.width == 0 || e.height == 0 || e.depth == 0)
    return cudaSuccess;
  cudaError_t err = build3d(dst, src, e, &c);
  return err ? err : si_copy_run(&c, kind, stream, pt, mode);
}

cudaError_t si_copy3d_build(const struct cudaMemcpy3DParms *p, struct si_copy *c) {
  return build3d(&(struct side3){p->dstArray, p->dstPos, p->dstPtr},
                 &(struct side3){p->srcArray, p->srcPos, p->srcPtr}, p->extent, c);
}

static cudaError_t memcpy3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream,
                            int pt, int async) {
  if (p == NULL)
    return cudaErrorInvalidValue;
  return RUN_3D(p, p->kind, stream, pt, mode_of(async));
}

/* The four exported forms of a 3D copy: legacy and per-thread, sync and
 * async. */
#define SI_3D_COPIES(base, type, fn)                                                     \
  SI_API cudaError_t base(const type *p) {                                               \
    return si_ret(fn(p, NULL, 0, 0));                                                    \
  }                                                                                      \
  SI_API cudaError_t base##_ptds(const type *p) {                                        \
    return si_ret(fn(p, NULL, 1, 0));                                                    \
  }                                                                                      \
  SI_API cudaError_t base##Async(const type *p, cudaStream_t stream) {                   \
    return si_ret(fn(p, stream, 0, 1));                                                  \
  }                                                                                      \
  SI_API cudaError_t base##Async_ptsz(const type *p, cudaStream_t stream) {              \
    return si_ret(fn(p, stream, 1, 1));                                                  \
  }
SI_3D_COPIES(cudaMemcpy3D, struct cudaMemcpy3DParms, memcpy3d)

static cudaError_t memcpy3d_peer(const struct cudaMemcpy3DPeerParms *p,
                                 cudaStream_t stream, int pt, int async) {
  if (p == NULL)
    return cudaErrorInvalidValue;
  if (p->srcDevice != 0 || p->dstDevice != 0)
    return cudaErrorInvalidDevice;
  return RUN_3D(p, cudaMemcpyDeviceToDevice, stream, pt,
                async ? SI_COPY_PEER_ASYNC : SI_COPY_PEER);
}

SI_3D_COPIES(cudaMemcpy3DPeer, struct cudaMemcpy3DPeerParms, memcpy3d_peer)

/* ---- batches ------------------------------------------------------------------------
 */

/* A batch's stream: never the legacy NULL stream. */
static int batch_stream_ok(cudaStream_t stream, int pt) {
  return !((stream == NULL && !pt) || stream == cudaStreamLegacy);
}

/* The index arrays of a batch: first 0, increasing, below count. */
static int indices_ok(const size_t *idx, size_t n, size_t count) {
  if (idx == NULL || n == 0 || n > count || idx[0] != 0)
    return 0;
  for (size_t i = 1; i < n; i++)
    if (idx[i] <= idx[i - 1] || idx[i] >= count)
      return 0;
  return 1;
}

static int access_order_ok(int order) {
  return order >= cudaMemcpySrcAccessOrderStream && order <= cudaMemcpySrcAccessOrderAny;
}

cudaError_t si_batch(void *const *dsts, const void *const *srcs, const size_t *sizes,
                     size_t count, const struct cudaMemcpyAttributes *attrs,
                     const size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream,
                     int pt, size_t *fail) {
  *fail = SIZE_MAX;
  if (dsts == NULL || srcs == NULL || sizes == NULL || count == 0 || attrs == NULL ||
      !indices_ok(attrsIdxs, numAttrs, count) || !batch_stream_ok(stream, pt))
    return cudaErrorInvalidValue;
  if (si_stream_resolve(stream, pt) == NULL)
    return cudaErrorInvalidResourceHandle;
  for (size_t i = 0; i < numAttrs; i++)
    if (!access_order_ok(attrs[i].srcAccessOrder))
      return cudaErrorInvalidValue;
  for (size_t i = 0; i < count; i++) { /* all or nothing */
    struct si_copy c = {dsts[i],  sizes[i], sizes[i], srcs[i], sizes[i],
                        sizes[i], sizes[i], 1,        1};
    enum cudaMemcpyKind kind = cudaMemcpyDefault;
    enum si_loc host;
    cudaError_t e =
        sizes[i] ? si_copy_check(&c, &kind, &host, SI_COPY_ASYNC) : cudaSuccess;
    if (e != cudaSuccess) {
      *fail = i;
      return e;
    }
  }
  for (size_t i = 0; i < count; i++)
    (void)si_copy1d(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream, pt,
                    SI_COPY_ASYNC); /* checked above */
  return cudaSuccess;
}

#if SI_CUDART_MAJOR >= 13 /* CUDA 12.8's take a failIdx (compat12.c) */
#define SI_BATCH(name, pt)                                                               \
  SI_API cudaError_t name(void *const *dsts, const void *const *srcs,                    \
                          const size_t *sizes, size_t count,                             \
                          struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,         \
                          size_t numAttrs, cudaStream_t stream) {                        \
    size_t fail;                                                                         \
    return si_ret(si_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, \
                           pt, &fail));                                                  \
  }
SI_BATCH(cudaMemcpyBatchAsync, 0)
SI_BATCH(cudaMemcpyBatchAsync_ptsz, 1)
#endif

static cudaError_t operand_side(const struct cudaMemcpy3DOperand *o, struct side3 *s,
                                size_t elem, struct cudaExtent e) {
  memset(s, 0, sizeof *s);
  if (o->type == cudaMemcpyOperandTypeArray) {
    s->array = o->op.array.array;
    s->pos = (struct cudaPos){o->op.array.offset.x, o->op.array.offset.y,
                              o->op.array.offset.z};
    return s->array ? cudaSuccess : cudaErrorInvalidValue;
  }
  if (o->type != cudaMemcpyOperandTypePointer || o->op.ptr.ptr == NULL)
    return cudaErrorInvalidValue;
  size_t row = o->op.ptr.rowLength ? o->op.ptr.rowLength : e.width;
  size_t layer = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e.height;
  if (row < e.width || layer < e.height)
    return cudaErrorInvalidValue;
  s->ptr = (struct cudaPitchedPtr){o->op.ptr.ptr, row * elem, row, layer};
  return cudaSuccess;
}

static const void *operand_array(const struct cudaMemcpy3DOperand *o) {
  return o->type == cudaMemcpyOperandTypeArray ? o->op.array.array : NULL;
}

/* The pitched copy of one op of a 3D batch (nothing runs). */
static cudaError_t batch_op(const struct cudaMemcpy3DBatchOp *op, struct si_copy *c) {
  struct cudaExtent e = op->extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0 ||
      !access_order_ok(op->srcAccessOrder))
    return cudaErrorInvalidValue;
  size_t elem;
  struct side3 dst, src;
  cudaError_t err = elem_size(operand_array(&op->src), operand_array(&op->dst), &elem);
  if (err == cudaSuccess)
    err = operand_side(&op->dst, &dst, elem, e);
  if (err == cudaSuccess)
    err = operand_side(&op->src, &src, elem, e);
  return err ? err : build3d(&dst, &src, e, c);
}

cudaError_t si_batch3d(size_t n, const struct cudaMemcpy3DBatchOp *ops,
                       unsigned long long flags, cudaStream_t stream, int pt,
                       size_t *fail) {
  *fail = SIZE_MAX;
  if (n == 0 || ops == NULL || flags != 0 || !batch_stream_ok(stream, pt))
    return cudaErrorInvalidValue;
  if (si_stream_resolve(stream, pt) == NULL)
    return cudaErrorInvalidResourceHandle;
  for (size_t i = 0; i < n; i++) { /* all or nothing */
    struct si_copy c;
    enum cudaMemcpyKind kind = cudaMemcpyDefault;
    enum si_loc host;
    cudaError_t e = batch_op(&ops[i], &c);
    if (e == cudaSuccess)
      e = si_copy_check(&c, &kind, &host, SI_COPY_ASYNC);
    if (e != cudaSuccess) {
      *fail = i;
      return e;
    }
  }
  for (size_t i = 0; i < n; i++) {
    struct si_copy c;
    if (batch_op(&ops[i], &c) == cudaSuccess) /* checked above */
      (void)si_copy_run(&c, cudaMemcpyDefault, stream, pt, SI_COPY_ASYNC);
  }
  return cudaSuccess;
}

#if SI_CUDART_MAJOR >= 13
SI_API cudaError_t cudaMemcpy3DBatchAsync(size_t numOps,
                                          struct cudaMemcpy3DBatchOp *opList,
                                          unsigned long long flags, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy3DBatchAsync");
  size_t fail;
  return si_ret(si_batch3d(numOps, opList, flags, stream, 0, &fail));
}

SI_API cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
                                               struct cudaMemcpy3DBatchOp *opList,
                                               unsigned long long flags,
                                               cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy3DBatchAsync_ptsz");
  size_t fail;
  return si_ret(si_batch3d(numOps, opList, flags, stream, 1, &fail));
}
#endif

/* ---- prefetches of managed memory -------------------------------------------------- */

/* The engine a migration to `loc` uses, or an error. */
static cudaError_t location_engine(const struct cudaMemLocation *loc, int *engine) {
  switch (loc->type) {
  case cudaMemLocationTypeDevice:
    *engine = SI_ENG_H2D;
    return loc->id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
  case cudaMemLocationTypeHost:
  case cudaMemLocationTypeHostNuma:
  case cudaMemLocationTypeHostNumaCurrent:
    *engine = SI_ENG_D2H;
    return cudaSuccess;
  default:
    return cudaErrorInvalidValue;
  }
}

static cudaError_t prefetch_check(const void *p, size_t count,
                                  const struct cudaMemLocation *loc, int *engine) {
  cudaError_t e = location_engine(loc, engine);
  if (e != cudaSuccess)
    return e;
  struct si_range r = si_mem_find(p);
  if (r.kind != SI_MEM_MANAGED || count > r.size - ((uintptr_t)p - r.base))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

static void migrate(struct si_stream *s, int engine, size_t count) {
  const struct si_config *cfg = si_config();
  if (cfg->timeline && count)
    si_tl_enqueue(s, engine, si_dur_bytes(count, cfg->pinned_gbps), 0);
}

cudaError_t si_prefetch(const void *p, size_t count, struct cudaMemLocation loc,
                        unsigned flags, cudaStream_t stream, int pt) {
  if (flags != 0)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  int engine, captured;
  cudaError_t e = prefetch_check(p, count, &loc, &engine);
  if (e == cudaSuccess && SI_UNLIKELY(si_cap_any())) /* not capturable here */
    e = si_cap_op(s, NULL, cudaErrorStreamCaptureUnsupported, &captured);
  if (e == cudaSuccess)
    migrate(s, engine, count);
  return e;
}

#if SI_CUDART_MAJOR >= 13 /* CUDA 12's take a device ordinal (compat12.c) */
SI_API cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                        struct cudaMemLocation location,
                                        unsigned int flags, cudaStream_t stream) {
  return si_ret(si_prefetch(devPtr, count, location, flags, stream, 0));
}

SI_API cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                             struct cudaMemLocation location,
                                             unsigned int flags, cudaStream_t stream) {
  return si_ret(si_prefetch(devPtr, count, location, flags, stream, 1));
}

/* The location of op i: the last entry whose first op is at most i. */
static const struct cudaMemLocation *location_of(const struct cudaMemLocation *locs,
                                                 const size_t *idx, size_t n, size_t i) {
  size_t k = 0;
  while (k + 1 < n && idx[k + 1] <= i)
    k++;
  return &locs[k];
}

static cudaError_t prefetch_batch(void **dptrs, const size_t *sizes, size_t count,
                                  const struct cudaMemLocation *locs, const size_t *idx,
                                  size_t nlocs, unsigned long long flags,
                                  cudaStream_t stream, int pt) {
  if (dptrs == NULL || sizes == NULL || count == 0 || locs == NULL || flags != 0 ||
      !indices_ok(idx, nlocs, count) || !batch_stream_ok(stream, pt))
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, pt);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  int engine;
  for (size_t i = 0; i < count; i++) { /* all or nothing */
    cudaError_t e =
        prefetch_check(dptrs[i], sizes[i], location_of(locs, idx, nlocs, i), &engine);
    if (e != cudaSuccess)
      return e;
  }
  int captured;
  if (SI_UNLIKELY(si_cap_any())) { /* not capturable here */
    cudaError_t e = si_cap_op(s, NULL, cudaErrorStreamCaptureUnsupported, &captured);
    if (e != cudaSuccess)
      return e;
  }
  for (size_t i = 0; i < count; i++) {
    (void)location_engine(location_of(locs, idx, nlocs, i), &engine);
    migrate(s, engine, sizes[i]);
  }
  return cudaSuccess;
}

#define SI_PREFETCH_BATCH(name, pt)                                                      \
  SI_API cudaError_t name(void **dptrs, size_t *sizes, size_t count,                     \
                          struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs, \
                          size_t numPrefetchLocs, unsigned long long flags,              \
                          cudaStream_t stream) {                                         \
    return si_ret(prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,     \
                                 numPrefetchLocs, flags, stream, pt));                   \
  }
SI_PREFETCH_BATCH(cudaMemPrefetchBatchAsync, 0)
SI_PREFETCH_BATCH(cudaMemPrefetchBatchAsync_ptsz, 1)
#endif

/* ---- 3D memsets -----------------------------------------------------------------------
 */

static cudaError_t memset3d(struct cudaPitchedPtr p, int value, struct cudaExtent e,
                            cudaStream_t stream, int pt, int async) {
  return si_memset3d(p.ptr, p.pitch, p.pitch * p.ysize, value, e.width, e.height, e.depth,
                     stream, pt, async);
}

SI_API cudaError_t cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value,
                                struct cudaExtent extent) {
  SI_CUPTI_API("cudaMemset3D");
  return si_ret(memset3d(pitchedDevPtr, value, extent, NULL, 0, 0));
}

SI_API cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                     struct cudaExtent extent) {
  SI_CUPTI_API("cudaMemset3D_ptds");
  return si_ret(memset3d(pitchedDevPtr, value, extent, NULL, 1, 0));
}

SI_API cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
                                     struct cudaExtent extent, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemset3DAsync");
  return si_ret(memset3d(pitchedDevPtr, value, extent, stream, 0, 1));
}

SI_API cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                          struct cudaExtent extent, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemset3DAsync_ptsz");
  return si_ret(memset3d(pitchedDevPtr, value, extent, stream, 1, 1));
}
