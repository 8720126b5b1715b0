/* hooks_copy.c — memcpy and memset hooks (kinds MEMCPY and MEMSET).
 *
 * Contract:
 *  - Each hook has the exact CUDA 13 runtime signature (the _ptds / _ptsz
 *    per-thread-stream twins included), forwards to the real function and
 *    returns its result and errno untouched.
 *  - MEMCPY records: dst, src, bytes (width * height for 2D), width/height
 *    (2D only), stream, kind = the cudaMemcpyKind passed, dir = the resolved
 *    direction, dst_device/src_device (peer copies; -1 otherwise).
 *    Symbol copies record the symbol's (host shadow) address as dst or src
 *    and are DtoD when kind says so, else HtoD (to) / DtoH (from).
 *  - cudaMemcpyDefault is resolved after the real call, and only when the
 *    copy succeeded and the thread's last error is clear, by asking the real
 *    cudaPointerGetAttributes about each side: device/managed -> D,
 *    registered host -> pinned H, unregistered -> pageable H. A failed query
 *    is cleared with the real cudaGetLastError (safe: the last error was
 *    clear before it), so the program's error state is untouched.
 *    Unresolved, dir stays GT_DIR_DEFAULT.
 *  - Flags: GT_F_ASYNC for the stream-ordered APIs; for copies with a host
 *    side GT_F_PINNED when every host side is page-locked, GT_F_PAGEABLE
 *    when one is known not to be, neither when that is unknown. Explicit
 *    kinds are checked against the pinned ranges (registry.c).
 *  - MEMSET records: ptr, bytes (width * height for 2D), width/height,
 *    value, stream.
 *  - Every copy and memset gets a correlation id (corr) and is timed on the
 *    device when device timing is on (devtime.h): the synchronous ones on
 *    the legacy stream, or the per-thread stream for the _ptds twins.
 *    Graph nodes recorded through gt_copy_emit / gt_set_emit (GT_F_NODE,
 *    hooks_graph.c) get corr 0 and are never timed.
 */
#include <string.h>

#include "capture.h"
#include "hooks_copy.h"

/* ---- where a copy's sides live ---- */

enum side {
  SIDE_UNKNOWN,
  SIDE_DEVICE,
  SIDE_HOST,          /* page-locked or not: not known yet */
  SIDE_HOST_PINNED,   /* page-locked */
  SIDE_HOST_PAGEABLE, /* known not page-locked */
};

static enum side side_from_kind(int kind, int is_dst) {
  switch (kind) {
  case cudaMemcpyHostToHost:
    return SIDE_HOST;
  case cudaMemcpyHostToDevice:
    return is_dst ? SIDE_DEVICE : SIDE_HOST;
  case cudaMemcpyDeviceToHost:
    return is_dst ? SIDE_HOST : SIDE_DEVICE;
  case cudaMemcpyDeviceToDevice:
    return SIDE_DEVICE;
  default:
    return SIDE_UNKNOWN;
  }
}

/* Real runtime entry points for cudaMemcpyDefault; NULL if missing. */
typedef cudaError_t (*attr_fn)(struct cudaPointerAttributes *, const void *);
typedef cudaError_t (*err_fn)(void);

static attr_fn g_get_attributes;
static err_fn g_get_last_error;
static err_fn g_peek_last_error;

static int query_ready(void) {
  if (g_get_attributes == NULL) {
    g_peek_last_error = (err_fn)gt_resolve("cudaPeekAtLastError");
    g_get_last_error = (err_fn)gt_resolve("cudaGetLastError");
    g_get_attributes = (attr_fn)gt_resolve("cudaPointerGetAttributes");
  }
  return g_get_attributes && g_get_last_error && g_peek_last_error;
}

/* Ask the runtime where `p` lives. Only call when the last error is clear. */
static enum side query_side(const void *p) {
  struct cudaPointerAttributes a;
  memset(&a, 0, sizeof a);
  if (g_get_attributes(&a, p) != 0) {
    (void)g_get_last_error(); /* back to clear, as it was */
    return SIDE_UNKNOWN;
  }
  switch (a.type) {
  case cudaMemoryTypeDevice:
  case cudaMemoryTypeManaged:
    return SIDE_DEVICE;
  case cudaMemoryTypeHost:
    return SIDE_HOST_PINNED;
  case cudaMemoryTypeUnregistered:
    return SIDE_HOST_PAGEABLE;
  default:
    return SIDE_UNKNOWN;
  }
}

static enum side pinned_state(const void *p) {
  int in = gt_pinned_contains(p);
  return in > 0 ? SIDE_HOST_PINNED : in == 0 ? SIDE_HOST_PAGEABLE : SIDE_HOST;
}

static int is_host(enum side s) {
  return s >= SIDE_HOST;
}

static uint8_t dir_of(enum side dst, enum side src) {
  if (dst == SIDE_UNKNOWN || src == SIDE_UNKNOWN)
    return GT_DIR_DEFAULT;
  if (is_host(src))
    return is_host(dst) ? GT_DIR_HTOH : GT_DIR_HTOD;
  return is_host(dst) ? GT_DIR_DTOH : GT_DIR_DTOD;
}

static uint32_t host_flags_of(enum side dst, enum side src) {
  if (dst == SIDE_HOST_PAGEABLE || src == SIDE_HOST_PAGEABLE)
    return GT_F_PAGEABLE;
  if (dst == SIDE_HOST || src == SIDE_HOST || !(is_host(dst) || is_host(src)))
    return 0;
  return GT_F_PINNED; /* every host side page-locked */
}

/* ---- copy records ---- */

/* Sides as the kind (or, for cudaMemcpyDefault, the runtime) says. */
static void resolve_sides(const struct gt_copy_desc *c, cudaError_t r, enum side *dst,
                          enum side *src) {
  *dst = c->dev & GT_DEV_DST ? SIDE_DEVICE : side_from_kind(c->kind, 1);
  *src = c->dev & GT_DEV_SRC ? SIDE_DEVICE : side_from_kind(c->kind, 0);
  if (c->kind == cudaMemcpyDefault && r == 0 && query_ready() &&
      g_peek_last_error() == 0) {
    if (*dst == SIDE_UNKNOWN)
      *dst = query_side(c->dst);
    if (*src == SIDE_UNKNOWN)
      *src = query_side(c->src);
  }
  if (*dst == SIDE_HOST)
    *dst = pinned_state(c->dst);
  if (*src == SIDE_HOST)
    *src = pinned_state(c->src);
}

void gt_copy_record(const struct gt_copy_desc *c, uint8_t dir, uint32_t host_flags,
                    uint64_t t0, uint64_t t1, cudaError_t r) {
  struct gt_record rec;
  gt_record_begin(&rec, c->api, t0, t1, r);
  rec.flags = c->flags | host_flags;
  rec.u.copy.dst = (uint64_t)(uintptr_t)c->dst;
  rec.u.copy.src = (uint64_t)(uintptr_t)c->src;
  rec.u.copy.bytes = c->bytes;
  rec.u.copy.stream = (uint64_t)(uintptr_t)c->stream;
  rec.u.copy.width = (uint32_t)c->width;
  rec.u.copy.height = (uint32_t)c->height;
  rec.u.copy.kind = (uint8_t)c->kind;
  rec.u.copy.dir = dir;
  rec.u.copy.dst_device = c->peer ? c->dst_device : -1;
  rec.u.copy.src_device = c->peer ? c->src_device : -1;
  rec.u.copy.corr = c->flags & GT_F_NODE ? 0 : gt_call_corr(&rec); /* nodes: none */
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

void gt_copy_emit(const struct gt_copy_desc *c, uint64_t t0, uint64_t t1, cudaError_t r) {
  if (c->peer) {
    gt_copy_record(c, GT_DIR_PEER, 0, t0, t1, r);
    return;
  }
  enum side dst, src;
  resolve_sides(c, r, &dst, &src);
  gt_copy_record(c, dir_of(dst, src), host_flags_of(dst, src), t0, t1, r);
}

/* ---- what an array holds ---- */

typedef cudaError_t (*array_info_fn)(struct cudaChannelFormatDesc *, struct cudaExtent *,
                                     unsigned int *, cudaArray_const_t);

uint64_t gt_array_elem_bytes(cudaArray_const_t array) {
  static array_info_fn info;
  if (info == NULL)
    info = (array_info_fn)gt_resolve("cudaArrayGetInfo");
  if (array == NULL || info == NULL || !query_ready() || g_peek_last_error() != 0)
    return 0;
  struct cudaChannelFormatDesc d;
  struct cudaExtent e;
  unsigned int flags;
  memset(&d, 0, sizeof d);
  if (info(&d, &e, &flags, array) != 0) {
    (void)g_get_last_error(); /* back to clear, as it was */
    return 0;
  }
  return gt_channel_bytes(&d);
}

/* ---- cudaMemcpy, cudaMemcpyAsync ---- */

/* The GT_HOOK_* macros below define the hooks they are given (macros:
 * shim.h), one per twin. */

#define GT_HOOK_MEMCPY(name, ptsz)                                                       \
  GT_EXPORT cudaError_t name(void *dst, const void *src, size_t count,                   \
                             enum cudaMemcpyKind kind) {                                 \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_COPY, (const void *)GT_API_##name, NULL, ptsz,                             \
        real_##name(dst, src, count, kind),                                              \
        gt_copy_emit_1d(GT_API_##name, 0, dst, src, count, kind, NULL, 0, t0, t1, r));   \
  }
GT_HOOK_MEMCPY(cudaMemcpy, 0)
GT_HOOK_MEMCPY(cudaMemcpy_ptds, 1)

#define GT_HOOK_MEMCPY_ASYNC(name, ptsz)                                                 \
  GT_EXPORT cudaError_t name(void *dst, const void *src, size_t count,                   \
                             enum cudaMemcpyKind kind, cudaStream_t stream) {            \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(dst, src, count, kind, stream),                           \
                   gt_copy_emit_1d(GT_API_##name, GT_F_ASYNC, dst, src, count, kind,     \
                                   stream, 0, t0, t1, r));                               \
  }
GT_HOOK_MEMCPY_ASYNC(cudaMemcpyAsync, 0)
GT_HOOK_MEMCPY_ASYNC(cudaMemcpyAsync_ptsz, 1)

/* ---- cudaMemcpy2D, cudaMemcpy2DAsync ---- */

#define GT_HOOK_MEMCPY_2D(name, ptsz)                                                    \
  GT_EXPORT cudaError_t name(void *dst, size_t dpitch, const void *src, size_t spitch,   \
                             size_t width, size_t height, enum cudaMemcpyKind kind) {    \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, NULL, ptsz,                  \
                   real_##name(dst, dpitch, src, spitch, width, height, kind),           \
                   gt_copy_emit_2d(GT_API_##name, 0, dst, src, width, height, kind,      \
                                   NULL, 0, t0, t1, r));                                 \
  }
GT_HOOK_MEMCPY_2D(cudaMemcpy2D, 0)
GT_HOOK_MEMCPY_2D(cudaMemcpy2D_ptds, 1)

#define GT_HOOK_MEMCPY_2D_ASYNC(name, ptsz)                                              \
  GT_EXPORT cudaError_t name(void *dst, size_t dpitch, const void *src, size_t spitch,   \
                             size_t width, size_t height, enum cudaMemcpyKind kind,      \
                             cudaStream_t stream) {                                      \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(dst, dpitch, src, spitch, width, height, kind, stream),   \
                   gt_copy_emit_2d(GT_API_##name, GT_F_ASYNC, dst, src, width, height,   \
                                   kind, stream, 0, t0, t1, r));                         \
  }
GT_HOOK_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync, 0)
GT_HOOK_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync_ptsz, 1)

/* ---- peer copies ---- */

/* A peer copy of `bytes` from src on device src_device to dst on device
 * dst_device. */
static inline void emit_peer(unsigned api, uint32_t flags, const void *dst,
                             int dst_device, const void *src, int src_device,
                             uint64_t bytes, const void *stream, uint64_t t0, uint64_t t1,
                             cudaError_t r) {
  const struct gt_copy_desc c = {.api = api,
                                 .flags = flags,
                                 .dst = dst,
                                 .src = src,
                                 .bytes = bytes,
                                 .kind = cudaMemcpyDeviceToDevice,
                                 .stream = stream,
                                 .peer = 1,
                                 .dst_device = dst_device,
                                 .src_device = src_device};
  gt_copy_emit(&c, t0, t1, r);
}

GT_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src,
                                     int srcDevice, size_t count) {
  GT_REAL(cudaMemcpyPeer);
  GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_cudaMemcpyPeer, NULL, 0,
                 real_cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count),
                 emit_peer(GT_API_cudaMemcpyPeer, 0, dst, dstDevice, src, srcDevice,
                           count, NULL, t0, t1, r));
}

GT_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                          int srcDevice, size_t count,
                                          cudaStream_t stream) {
  GT_REAL(cudaMemcpyPeerAsync);
  GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_cudaMemcpyPeerAsync, stream, 0,
                 real_cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, count, stream),
                 emit_peer(GT_API_cudaMemcpyPeerAsync, GT_F_ASYNC, dst, dstDevice, src,
                           srcDevice, count, stream, t0, t1, r));
}

/* ---- symbol copies ---- */

#define GT_HOOK_TO_SYMBOL(name, ptsz)                                                    \
  GT_EXPORT cudaError_t name(const void *symbol, const void *src, size_t count,          \
                             size_t offset, enum cudaMemcpyKind kind) {                  \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, NULL, ptsz,                  \
                   real_##name(symbol, src, count, offset, kind),                        \
                   gt_copy_emit_1d(GT_API_##name, 0, symbol, src, count, kind, NULL,     \
                                   GT_DEV_DST, t0, t1, r));                              \
  }
GT_HOOK_TO_SYMBOL(cudaMemcpyToSymbol, 0)
GT_HOOK_TO_SYMBOL(cudaMemcpyToSymbol_ptds, 1)

#define GT_HOOK_FROM_SYMBOL(name, ptsz)                                                  \
  GT_EXPORT cudaError_t name(void *dst, const void *symbol, size_t count, size_t offset, \
                             enum cudaMemcpyKind kind) {                                 \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, NULL, ptsz,                  \
                   real_##name(dst, symbol, count, offset, kind),                        \
                   gt_copy_emit_1d(GT_API_##name, 0, dst, symbol, count, kind, NULL,     \
                                   GT_DEV_SRC, t0, t1, r));                              \
  }
GT_HOOK_FROM_SYMBOL(cudaMemcpyFromSymbol, 0)
GT_HOOK_FROM_SYMBOL(cudaMemcpyFromSymbol_ptds, 1)

#define GT_HOOK_TO_SYMBOL_ASYNC(name, ptsz)                                              \
  GT_EXPORT cudaError_t name(const void *symbol, const void *src, size_t count,          \
                             size_t offset, enum cudaMemcpyKind kind,                    \
                             cudaStream_t stream) {                                      \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(symbol, src, count, offset, kind, stream),                \
                   gt_copy_emit_1d(GT_API_##name, GT_F_ASYNC, symbol, src, count, kind,  \
                                   stream, GT_DEV_DST, t0, t1, r));                      \
  }
GT_HOOK_TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync, 0)
GT_HOOK_TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync_ptsz, 1)

#define GT_HOOK_FROM_SYMBOL_ASYNC(name, ptsz)                                            \
  GT_EXPORT cudaError_t name(void *dst, const void *symbol, size_t count, size_t offset, \
                             enum cudaMemcpyKind kind, cudaStream_t stream) {            \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_COPY, (const void *)GT_API_##name, stream, ptsz,                \
                   real_##name(dst, symbol, count, offset, kind, stream),                \
                   gt_copy_emit_1d(GT_API_##name, GT_F_ASYNC, dst, symbol, count, kind,  \
                                   stream, GT_DEV_SRC, t0, t1, r));                      \
  }
GT_HOOK_FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync, 0)
GT_HOOK_FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync_ptsz, 1)

/* ---- memsets ---- */

void gt_set_emit(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, cudaError_t r,
                 const void *ptr, int value, uint64_t width, uint64_t height,
                 uint64_t bytes, const void *stream) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.set.ptr = (uint64_t)(uintptr_t)ptr;
  rec.u.set.bytes = bytes;
  rec.u.set.stream = (uint64_t)(uintptr_t)stream;
  rec.u.set.width = (uint32_t)width;
  rec.u.set.height = (uint32_t)height;
  rec.u.set.value = value;
  rec.u.set.corr = flags & GT_F_NODE ? 0 : gt_call_corr(&rec); /* nodes: none */
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

#define GT_HOOK_MEMSET(name, ptsz)                                                       \
  GT_EXPORT cudaError_t name(void *devPtr, int value, size_t count) {                    \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(                                                                      \
        GT_DT_SET, (const void *)GT_API_##name, NULL, ptsz,                              \
        real_##name(devPtr, value, count),                                               \
        gt_set_emit(GT_API_##name, 0, t0, t1, r, devPtr, value, 0, 0, count, NULL));     \
  }
GT_HOOK_MEMSET(cudaMemset, 0)
GT_HOOK_MEMSET(cudaMemset_ptds, 1)

#define GT_HOOK_MEMSET_ASYNC(name, ptsz)                                                 \
  GT_EXPORT cudaError_t name(void *devPtr, int value, size_t count,                      \
                             cudaStream_t stream) {                                      \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_SET, (const void *)GT_API_##name, stream, ptsz,                 \
                   real_##name(devPtr, value, count, stream),                            \
                   gt_set_emit(GT_API_##name, GT_F_ASYNC, t0, t1, r, devPtr, value, 0,   \
                               0, count, stream));                                       \
  }
GT_HOOK_MEMSET_ASYNC(cudaMemsetAsync, 0)
GT_HOOK_MEMSET_ASYNC(cudaMemsetAsync_ptsz, 1)

#define GT_HOOK_MEMSET_2D(name, ptsz)                                                    \
  GT_EXPORT cudaError_t name(void *devPtr, size_t pitch, int value, size_t width,        \
                             size_t height) {                                            \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_SET, (const void *)GT_API_##name, NULL, ptsz,                   \
                   real_##name(devPtr, pitch, value, width, height),                     \
                   gt_set_emit(GT_API_##name, 0, t0, t1, r, devPtr, value, width,        \
                               height, (uint64_t)width *height, NULL));                  \
  }
GT_HOOK_MEMSET_2D(cudaMemset2D, 0)
GT_HOOK_MEMSET_2D(cudaMemset2D_ptds, 1)

#define GT_HOOK_MEMSET_2D_ASYNC(name, ptsz)                                              \
  GT_EXPORT cudaError_t name(void *devPtr, size_t pitch, int value, size_t width,        \
                             size_t height, cudaStream_t stream) {                       \
    GT_REAL(name);                                                                       \
    GT_TRACE_TIMED(GT_DT_SET, (const void *)GT_API_##name, stream, ptsz,                 \
                   real_##name(devPtr, pitch, value, width, height, stream),             \
                   gt_set_emit(GT_API_##name, GT_F_ASYNC, t0, t1, r, devPtr, value,      \
                               width, height, (uint64_t)width *height, stream));         \
  }
GT_HOOK_MEMSET_2D_ASYNC(cudaMemset2DAsync, 0)
GT_HOOK_MEMSET_2D_ASYNC(cudaMemset2DAsync_ptsz, 1)
