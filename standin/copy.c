/* copy.c — memcpy and memset in 1D, 2D, symbol and peer forms, and the
 * pitched 3D core under them and copy3d.c.
 *
 * Contract:
 *  - Bytes really move (memmove / memset), in program order, at the call;
 *    the simulated device time is separate: each copy is an op on its
 *    stream (timeline.c) on the H2D, D2H or compute engine, lasting
 *    latency + bytes / bandwidth (pageable, pinned, device-to-device or
 *    memset bandwidth).
 *  - Direction: an explicit kind must match the memory table (HtoD needs a
 *    device/managed destination and a non-device source, etc.), otherwise
 *    cudaErrorInvalidValue; cudaMemcpyDefault resolves by the table. A device
 *    range that runs past its allocation is cudaErrorInvalidValue.
 *  - Host blocking follows the real runtime's documented behaviour:
 *    synchronous copies return once the copy completed, except
 *    device-to-device (asynchronous to the host); async copies return at
 *    once, except when the host side is pageable memory (they block until
 *    the copy completed); host-to-host copies are plain host copies and are
 *    not on the device timeline. cudaMemset on device memory is
 *    asynchronous to the host (as documented), on managed/pinned memory it
 *    waits. With the timeline off nothing waits.
 *  - Sync copies and memsets use the legacy stream, or the per-thread
 *    default stream for the _ptds entry points.
 *  - The core (si_copy_run, si_memset3d, standin.h) works on pitched 3D
 *    regions; copy3d.c builds on it for CUDA arrays, 3D copies and batches.
 *    An address in an IPC mapping is resolved to the memory it maps
 *    (si_locate), so copies through either pointer reach the same bytes.
 *  - Stream capture (capture.c): synchronous copies and memsets are
 *    potentially unsafe (checked before anything else); an asynchronous copy
 *    or memset into a capturing stream is checked as above and becomes a
 *    memcpy / memset node instead (no bytes move, no time passes; the node
 *    moves them when its graph is launched, graph.c); a synchronous one
 *    into a capturing stream is refused (cudaErrorStreamCaptureUnsupported).
 */
#include <string.h>

#include "standin.h"

/* Sides of an explicit-direction copy: the host side is the one the kind
 * names; device-to-device copies have none. */
static int is_dev(enum si_loc l) {
  return l == SI_LOC_DEVICE || l == SI_LOC_MANAGED;
}

cudaError_t si_locate(const void **p, size_t extent, enum si_loc *out) {
  struct si_range r = si_mem_resolve(p);
  switch (r.kind) {
  case SI_MEM_DEVICE:
  case SI_MEM_MANAGED:
  case SI_MEM_ARRAY:
    if (extent > r.size - ((uintptr_t)*p - r.base))
      return cudaErrorInvalidValue;
    *out = r.kind == SI_MEM_MANAGED ? SI_LOC_MANAGED : SI_LOC_DEVICE;
    return cudaSuccess;
  case SI_MEM_PINNED:
  case SI_MEM_REGISTERED:
    *out = SI_LOC_PINNED;
    return cudaSuccess;
  default:
    *out = SI_LOC_PAGEABLE;
    return cudaSuccess;
  }
}

/* Bytes from the first to the last one a pitched copy touches. */
static size_t extent(const struct si_copy *c, size_t pitch, size_t slice) {
  return (c->depth - 1) * slice + (c->height - 1) * pitch + c->width;
}

cudaError_t si_copy_kind(enum si_loc d, enum si_loc s, enum cudaMemcpyKind *kind,
                         enum si_loc *host) {
  if (*kind == cudaMemcpyDefault)
    *kind = is_dev(s) ? (is_dev(d) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                      : (is_dev(d) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
  switch (*kind) {
  case cudaMemcpyHostToHost:
    return (s == SI_LOC_DEVICE || d == SI_LOC_DEVICE) ? cudaErrorInvalidValue
                                                      : cudaSuccess;
  case cudaMemcpyHostToDevice:
    *host = s;
    return (is_dev(d) && s != SI_LOC_DEVICE) ? cudaSuccess : cudaErrorInvalidValue;
  case cudaMemcpyDeviceToHost:
    *host = d;
    return (is_dev(s) && d != SI_LOC_DEVICE) ? cudaSuccess : cudaErrorInvalidValue;
  case cudaMemcpyDeviceToDevice:
    return (is_dev(s) && is_dev(d)) ? cudaSuccess : cudaErrorInvalidValue;
  default:
    return cudaErrorInvalidMemcpyDirection;
  }
}

/* Locate both sides (moving IPC mappings onto the memory they map), then
 * resolve the direction and check it against them. *host gets the location
 * of the host side (for the bandwidth). */
static cudaError_t resolve_kind(struct si_copy *c, enum cudaMemcpyKind *kind,
                                enum si_loc *host) {
  enum si_loc d, s;
  const void *dst = c->dst;
  cudaError_t e = si_locate(&dst, extent(c, c->dpitch, c->dslice), &d);
  if (e == cudaSuccess)
    e = si_locate(&c->src, extent(c, c->spitch, c->sslice), &s);
  if (e != cudaSuccess)
    return e;
  c->dst = (void *)(uintptr_t)dst;
  return si_copy_kind(d, s, kind, host);
}

void si_copy_move(const struct si_copy *c) {
  if (c->height == 1 && c->depth == 1) {
    memmove(c->dst, c->src, c->width);
    return;
  }
  for (size_t z = 0; z < c->depth; z++)
    for (size_t r = 0; r < c->height; r++)
      memmove((char *)c->dst + z * c->dslice + r * c->dpitch,
              (const char *)c->src + z * c->sslice + r * c->spitch, c->width);
}

uint64_t si_copy_cost(uint64_t bytes, enum cudaMemcpyKind kind, enum si_loc host,
                      int *engine) {
  const struct si_config *cfg = si_config();
  double gbps = cfg->dtod_gbps;
  *engine = SI_ENG_COMPUTE;
  if (kind != cudaMemcpyDeviceToDevice) {
    *engine = kind == cudaMemcpyHostToDevice ? SI_ENG_H2D : SI_ENG_D2H;
    gbps = host == SI_LOC_PINNED ? cfg->pinned_gbps : cfg->pageable_gbps;
  }
  return si_dur_bytes(bytes, gbps);
}

int si_copy_schedule(uint64_t bytes, enum cudaMemcpyKind kind, enum si_loc host,
                     struct si_stream *s, enum si_copy_mode mode, uint64_t *end) {
  int engine;
  uint64_t dur = si_copy_cost(bytes, kind, host, &engine);
  unsigned flags = (mode == SI_COPY_PEER) ? SI_OP_DEVICE_WIDE : 0;
  *end = si_tl_enqueue(s, engine, dur, flags);
  if (SI_UNLIKELY(si_cupti_on()))
    si_cupti_bytes(SI_CUPTI_MEMCPY,
                   si_cupti_dir(kind, mode == SI_COPY_PEER || mode == SI_COPY_PEER_ASYNC),
                   host == SI_LOC_PINNED, bytes, s, *end, dur, 0, 0);
  if (kind == cudaMemcpyDeviceToDevice)
    return 0;
  return mode == SI_COPY_SYNC || host != SI_LOC_PINNED;
}

cudaError_t si_copy_check(struct si_copy *c, enum cudaMemcpyKind *kind, enum si_loc *host,
                          enum si_copy_mode mode) {
  if (c->dst == NULL || c->src == NULL)
    return cudaErrorInvalidValue;
  if (c->width > c->dpitch || c->width > c->spitch)
    return cudaErrorInvalidPitchValue;
  if (c->depth > 1 &&
      (c->dslice < c->height * c->dpitch || c->sslice < c->height * c->spitch))
    return cudaErrorInvalidValue;
  cudaError_t e = resolve_kind(c, kind, host);
  if (e != cudaSuccess)
    return e;
  if ((mode == SI_COPY_PEER || mode == SI_COPY_PEER_ASYNC) &&
      *kind != cudaMemcpyDeviceToDevice)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

/* A copy while captures exist: a synchronous one may be prohibited; an
 * asynchronous one into a capturing stream becomes a memcpy node (checked
 * as the eager copy is; nothing moves); a synchronous one there cannot be
 * captured. */
static cudaError_t capture_copy(struct si_copy *c, enum cudaMemcpyKind kind,
                                enum si_loc host, struct si_stream *s,
                                enum si_copy_mode mode, int *captured) {
  struct si_node_desc d = {.type = cudaGraphNodeTypeMemcpy, .u.cp = {*c, kind, host}};
  int async = mode == SI_COPY_ASYNC || mode == SI_COPY_PEER_ASYNC;
  return si_cap_op(s, async ? &d : NULL, cudaErrorStreamCaptureUnsupported, captured);
}

cudaError_t si_copy_run(struct si_copy *c, enum cudaMemcpyKind kind, cudaStream_t stream,
                        int per_thread, enum si_copy_mode mode) {
  if (SI_UNLIKELY(si_cap_any()) && (mode == SI_COPY_SYNC || mode == SI_COPY_PEER)) {
    cudaError_t e = si_cap_unsafe();
    if (e != cudaSuccess)
      return e;
  }
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (c->width == 0 || c->height == 0 || c->depth == 0)
    return cudaSuccess;
  enum si_loc host = SI_LOC_PAGEABLE;
  cudaError_t e = si_copy_check(c, &kind, &host, mode);
  if (e != cudaSuccess)
    return e;
  if (SI_UNLIKELY(si_cap_any())) {
    int captured;
    e = capture_copy(c, kind, host, s, mode, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  uint64_t end = 0, bytes = (uint64_t)c->width * c->height * c->depth;
  int wait = kind != cudaMemcpyHostToHost && si_config()->timeline &&
             si_copy_schedule(bytes, kind, host, s, mode, &end);
  /* Move the bytes first, then wait out the simulated time: a blocking call
   * returns at max(simulated end, host copy done), so the host copy's own
   * cost (page faults of fresh buffers) overlaps the simulated transfer
   * instead of being added to it. */
  si_copy_move(c);
  if (wait)
    si_sleep_until(end);
  return cudaSuccess;
}

cudaError_t si_copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                      cudaStream_t stream, int per_thread, enum si_copy_mode mode) {
  struct si_copy c = {dst, count, count, src, count, count, count, 1, 1};
  return si_copy_run(&c, kind, stream, per_thread, mode);
}

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                          size_t width, size_t height, enum cudaMemcpyKind kind,
                          cudaStream_t stream, int per_thread, enum si_copy_mode mode) {
  struct si_copy c = {
      dst, dpitch, dpitch * height, src, spitch, spitch * height, width, height, 1};
  return si_copy_run(&c, kind, stream, per_thread, mode);
}

/* ---- cudaMemcpy / cudaMemcpyAsync ----------------------------------------------- */

SI_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                              enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy");
  return si_ret(si_copy1d(dst, src, count, kind, NULL, 0, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy_ptds");
  return si_ret(si_copy1d(dst, src, count, kind, NULL, 1, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyAsync");
  return si_ret(si_copy1d(dst, src, count, kind, stream, 0, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyAsync_ptsz");
  return si_ret(si_copy1d(dst, src, count, kind, stream, 1, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2D");
  return si_ret(
      copy2d(dst, dpitch, src, spitch, width, height, kind, NULL, 0, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                                     size_t spitch, size_t width, size_t height,
                                     enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpy2D_ptds");
  return si_ret(
      copy2d(dst, dpitch, src, spitch, width, height, kind, NULL, 1, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                     size_t spitch, size_t width, size_t height,
                                     enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DAsync");
  return si_ret(
      copy2d(dst, dpitch, src, spitch, width, height, kind, stream, 0, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                          size_t spitch, size_t width, size_t height,
                                          enum cudaMemcpyKind kind, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpy2DAsync_ptsz");
  return si_ret(
      copy2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, SI_COPY_ASYNC));
}

/* ---- peer copies (device 0 is the only device) ------------------------------------ */

SI_API cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src,
                                  int srcDevice, size_t count) {
  SI_CUPTI_API("cudaMemcpyPeer");
  if (dstDevice != 0 || srcDevice != 0)
    return si_ret(cudaErrorInvalidDevice);
  return si_ret(
      si_copy1d(dst, src, count, cudaMemcpyDeviceToDevice, NULL, 0, SI_COPY_PEER));
}

SI_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                       int srcDevice, size_t count, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyPeerAsync");
  if (dstDevice != 0 || srcDevice != 0)
    return si_ret(cudaErrorInvalidDevice);
  return si_ret(si_copy1d(dst, src, count, cudaMemcpyDeviceToDevice, stream, 0,
                          SI_COPY_PEER_ASYNC));
}

/* ---- symbols ---------------------------------------------------------------------- */

static cudaError_t to_symbol(const void *symbol, const void *src, size_t count,
                             size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream,
                             int per_thread, enum si_copy_mode mode) {
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  void *dev;
  size_t size;
  cudaError_t e = si_symbol_lookup(symbol, &dev, &size);
  if (e != cudaSuccess)
    return e;
  if (offset > size || count > size - offset)
    return cudaErrorInvalidValue;
  return si_copy1d((char *)dev + offset, src, count, kind, stream, per_thread, mode);
}

static cudaError_t from_symbol(void *dst, const void *symbol, size_t count, size_t offset,
                               enum cudaMemcpyKind kind, cudaStream_t stream,
                               int per_thread, enum si_copy_mode mode) {
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  void *dev;
  size_t size;
  cudaError_t e = si_symbol_lookup(symbol, &dev, &size);
  if (e != cudaSuccess)
    return e;
  if (offset > size || count > size - offset)
    return cudaErrorInvalidValue;
  return si_copy1d(dst, (char *)dev + offset, count, kind, stream, per_thread, mode);
}

SI_API cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                      size_t offset, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyToSymbol");
  return si_ret(to_symbol(symbol, src, count, offset, kind, NULL, 0, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
                                           size_t count, size_t offset,
                                           enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyToSymbol_ptds");
  return si_ret(to_symbol(symbol, src, count, offset, kind, NULL, 1, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                        size_t offset, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyFromSymbol");
  return si_ret(from_symbol(dst, symbol, count, offset, kind, NULL, 0, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind) {
  SI_CUPTI_API("cudaMemcpyFromSymbol_ptds");
  return si_ret(from_symbol(dst, symbol, count, offset, kind, NULL, 1, SI_COPY_SYNC));
}

SI_API cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
                                           size_t count, size_t offset,
                                           enum cudaMemcpyKind kind,
                                           cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyToSymbolAsync");
  return si_ret(to_symbol(symbol, src, count, offset, kind, stream, 0, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                                size_t count, size_t offset,
                                                enum cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyToSymbolAsync_ptsz");
  return si_ret(to_symbol(symbol, src, count, offset, kind, stream, 1, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind,
                                             cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyFromSymbolAsync");
  return si_ret(from_symbol(dst, symbol, count, offset, kind, stream, 0, SI_COPY_ASYNC));
}

SI_API cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
                                                  size_t count, size_t offset,
                                                  enum cudaMemcpyKind kind,
                                                  cudaStream_t stream) {
  SI_CUPTI_API("cudaMemcpyFromSymbolAsync_ptsz");
  return si_ret(from_symbol(dst, symbol, count, offset, kind, stream, 1, SI_COPY_ASYNC));
}

/* ---- memset ----------------------------------------------------------------------- */

cudaError_t si_memset3d(void *p, size_t pitch, size_t slice, int value, size_t width,
                        size_t height, size_t depth, cudaStream_t stream, int per_thread,
                        int async) {
  if (SI_UNLIKELY(si_cap_any()) && !async) {
    cudaError_t e = si_cap_unsafe();
    if (e != cudaSuccess)
      return e;
  }
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (width == 0 || height == 0 || depth == 0)
    return cudaSuccess;
  if (width > pitch || (depth > 1 && slice < height * pitch))
    return cudaErrorInvalidValue;
  enum si_loc l;
  const void *at = p;
  cudaError_t e = si_locate(&at, (depth - 1) * slice + (height - 1) * pitch + width, &l);
  if (e != cudaSuccess)
    return e;
  if (l == SI_LOC_PAGEABLE)
    return cudaErrorInvalidValue;
  p = (void *)(uintptr_t)at;
  if (SI_UNLIKELY(si_cap_any())) { /* a memset node of bytes, or refused */
    struct si_node_desc d = {
        .type = cudaGraphNodeTypeMemset,
        .u.ms = {p, pitch, slice, width, height, depth, (unsigned)value & 0xffu, 1}};
    int captured;
    e = si_cap_op(s, async ? &d : NULL, cudaErrorStreamCaptureUnsupported, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  const struct si_config *cfg = si_config();
  uint64_t end = 0;
  if (cfg->timeline) {
    uint64_t bytes = (uint64_t)width * height * depth;
    uint64_t dur = si_dur_bytes(bytes, cfg->memset_gbps);
    end = si_tl_enqueue(s, SI_ENG_COMPUTE, dur, 0);
    if (SI_UNLIKELY(si_cupti_on()))
      si_cupti_bytes(SI_CUPTI_MEMSET, 0, 0, bytes, s, end, dur, 0, 0);
  }
  if (depth == 1 && (height == 1 || pitch == width)) {
    memset(p, value, width * height);
  } else {
    for (size_t z = 0; z < depth; z++)
      for (size_t r = 0; r < height; r++)
        memset((char *)p + z * slice + r * pitch, value, width);
  }
  if (cfg->timeline && !async && l != SI_LOC_DEVICE)
    si_sleep_until(end); /* as for copies: set first, then wait */
  return cudaSuccess;
}

static cudaError_t memset2d(void *p, size_t pitch, int value, size_t width, size_t height,
                            cudaStream_t stream, int per_thread, int async) {
  return si_memset3d(p, pitch, pitch * height, value, width, height, 1, stream,
                     per_thread, async);
}

SI_API cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  SI_CUPTI_API("cudaMemset");
  return si_ret(memset2d(devPtr, count, value, count, 1, NULL, 0, 0));
}

SI_API cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count) {
  SI_CUPTI_API("cudaMemset_ptds");
  return si_ret(memset2d(devPtr, count, value, count, 1, NULL, 1, 0));
}

SI_API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                                   cudaStream_t stream) {
  SI_CUPTI_API("cudaMemsetAsync");
  return si_ret(memset2d(devPtr, count, value, count, 1, stream, 0, 1));
}

SI_API cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                        cudaStream_t stream) {
  SI_CUPTI_API("cudaMemsetAsync_ptsz");
  return si_ret(memset2d(devPtr, count, value, count, 1, stream, 1, 1));
}

SI_API cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                                size_t height) {
  SI_CUPTI_API("cudaMemset2D");
  return si_ret(memset2d(devPtr, pitch, value, width, height, NULL, 0, 0));
}

SI_API cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                     size_t height) {
  SI_CUPTI_API("cudaMemset2D_ptds");
  return si_ret(memset2d(devPtr, pitch, value, width, height, NULL, 1, 0));
}

SI_API cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
                                     size_t height, cudaStream_t stream) {
  SI_CUPTI_API("cudaMemset2DAsync");
  return si_ret(memset2d(devPtr, pitch, value, width, height, stream, 0, 1));
}

SI_API cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                          size_t width, size_t height,
                                          cudaStream_t stream) {
  SI_CUPTI_API("cudaMemset2DAsync_ptsz");
  return si_ret(memset2d(devPtr, pitch, value, width, height, stream, 1, 1));
}
