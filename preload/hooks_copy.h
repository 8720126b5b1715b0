/* hooks_copy.h — the copy and memset records of the runtime's hooks, shared
 * by hooks_copy.c (1D, 2D, symbol and peer copies, memsets) and
 * hooks_copy3d.c (3D, array, batch and prefetch copies, 3D memsets).
 *
 * Contract:
 *  - A copy is described by a struct gt_copy_desc (gt_copy_emit_1d and
 *    gt_copy_emit_2d build one from the common fields and emit it);
 *    gt_copy_emit() resolves where each side lives (the kind passed; sides
 *    marked GT_DEV_DST / GT_DEV_SRC are device memory whatever the kind
 *    says: a __device__ symbol or a CUDA array; cudaMemcpyDefault asks the
 *    runtime, see hooks_copy.c), sets dir and the pinned/pageable flags,
 *    emits the record and hands it to device timing. Peer copies (peer =
 *    1) are GT_DIR_PEER with both device ordinals.
 *  - gt_copy_record() emits with a direction the caller already knows
 *    (prefetches: the destination location says it).
 *  - Graph nodes (flags GT_F_NODE, hooks_graph.c) are recorded the same
 *    way with the graph as the stream and corr 0: a node runs nothing, and
 *    its hook never starts device timing.
 *  - gt_array_elem_bytes(): the element size of a CUDA array, asked of the
 *    runtime (cudaArrayGetInfo) only when the thread's last error is clear,
 *    and cleared again if the query fails, so the program's error state is
 *    untouched; 0 when it cannot be told.
 *  - Call these only from inside a hook (between gt_hook_enter and leave).
 */
#ifndef GPUTRACE_HOOKS_COPY_H
#define GPUTRACE_HOOKS_COPY_H

#include "devtime.h"

#define GT_DEV_DST 1u /* the destination is device memory (a symbol or an array) */
#define GT_DEV_SRC 2u /* the source is */

struct gt_copy_desc {
  unsigned api;
  uint32_t flags;
  const void *dst, *src; /* pointers, or array handles */
  uint64_t bytes;
  uint64_t width, height; /* 2D and 3D: bytes per row, rows (height x depth) */
  int kind;               /* cudaMemcpyKind as passed */
  const void *stream;
  unsigned dev; /* GT_DEV_* */
  int peer;     /* a peer copy: dst_device and src_device are set */
  int dst_device, src_device;
};

void gt_copy_emit(const struct gt_copy_desc *c, uint64_t t0, uint64_t t1, cudaError_t r);
void gt_copy_record(const struct gt_copy_desc *c, uint8_t dir, uint32_t host_flags,
                    uint64_t t0, uint64_t t1, cudaError_t r);
void gt_set_emit(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, cudaError_t r,
                 const void *ptr, int value, uint64_t width, uint64_t height,
                 uint64_t bytes, const void *stream);
uint64_t gt_array_elem_bytes(cudaArray_const_t array);
/* A cudaMemcpy3DParms copy as cudaMemcpy3D records it (hooks_copy3d.c);
 * also cudaGraphAddMemcpyNode's (hooks_graph.c, GT_F_NODE). */
void gt_memcpy3d_emit(unsigned api, uint32_t flags, const struct cudaMemcpy3DParms *p,
                      const void *stream, uint64_t t0, uint64_t t1, cudaError_t r);

/* A copy of `bytes` from src to dst (sides in `dev`, GT_DEV_*, are device
 * memory whatever `kind` says), emitted with gt_copy_emit. */
static inline void gt_copy_emit_1d(unsigned api, uint32_t flags, const void *dst,
                                   const void *src, uint64_t bytes, int kind,
                                   const void *stream, unsigned dev, uint64_t t0,
                                   uint64_t t1, cudaError_t r) {
  const struct gt_copy_desc c = {.api = api,
                                 .flags = flags,
                                 .dst = dst,
                                 .src = src,
                                 .bytes = bytes,
                                 .kind = kind,
                                 .stream = stream,
                                 .dev = dev};
  gt_copy_emit(&c, t0, t1, r);
}

/* The same for `height` rows of `width` bytes. */
static inline void gt_copy_emit_2d(unsigned api, uint32_t flags, const void *dst,
                                   const void *src, uint64_t width, uint64_t height,
                                   int kind, const void *stream, unsigned dev,
                                   uint64_t t0, uint64_t t1, cudaError_t r) {
  const struct gt_copy_desc c = {.api = api,
                                 .flags = flags,
                                 .dst = dst,
                                 .src = src,
                                 .bytes = width * height,
                                 .width = width,
                                 .height = height,
                                 .kind = kind,
                                 .stream = stream,
                                 .dev = dev};
  gt_copy_emit(&c, t0, t1, r);
}

#endif
