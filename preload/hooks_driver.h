/* hooks_driver.h — what the driver API's hook files share: hooks_driver.c
 * (allocation, 1D copies and memsets, launches, synchronization, and the
 * lookups that hand out the hooks) and hooks_driver_mem.c (arrays, IPC,
 * 2D/3D copies, prefetches, host functions).
 *
 * Contract: the records are those of the runtime's kinds with api = the
 * driver entry point (hooks_driver.c's header says which fields). The
 * emitters are called between gt_hook_enter and gt_hook_leave, copies and
 * launches from inside GT_TRACE_TIMED (they store gt_tls_corr and hand the
 * record to device timing).
 */
#ifndef GPUTRACE_HOOKS_DRIVER_H
#define GPUTRACE_HOOKS_DRIVER_H

#include "launch.h"

/* The real function of a traced driver entry point (CUDA_ERROR_NOT_FOUND
 * without one); a macro, as shim.h's GT_REAL. */
#define DRV_REAL(name)                                                                   \
  gt_fn_##name##_t real_##name = (gt_fn_##name##_t)gt_real_fn(GT_API_##name);            \
  if (real_##name == NULL)                                                               \
  return CUDA_ERROR_NOT_FOUND

/* Copies and memsets are timed keyed by their entry point (sampling); the
 * _ptds / _ptsz variants (pt = 1) take stream 0 as the per-thread stream.
 * A macro, as GT_TRACE_TIMED (devtime.h). */
#define DRV_TIMED(what, name, strm, pt, call, ...)                                       \
  GT_TRACE_TIMED(what, (const void *)GT_API_##name, strm, pt, call, __VA_ARGS__)

static inline uint64_t out_dptr(CUresult r, const CUdeviceptr *p) {
  return r == 0 && p != NULL ? (uint64_t)*p : 0;
}

static inline uint64_t out_hptr(CUresult r, void *const *p) {
  return r == 0 && p != NULL ? (uint64_t)(uintptr_t)*p : 0;
}

/* An alloc or free record (u.mem). */
void gt_drv_emit_mem(unsigned api, uint32_t flags, uint8_t memory, uint64_t t0,
                     uint64_t t1, CUresult r, uint64_t ptr, uint64_t bytes,
                     const void *stream, uint64_t pitch, uint64_t pool,
                     uint32_t host_flags);

/* A copy; GT_F_PINNED / GT_F_PAGEABLE are added from the host side of an
 * HtoD or DtoH copy. */
struct gt_drv_copy {
  uint64_t dst, src, bytes;
  uint64_t width, height; /* 2D and 3D: bytes per row, rows (height x depth) */
  int kind;               /* the direction as a cudaMemcpyKind */
  uint8_t dir;            /* enum gt_dir */
  int managed;            /* a prefetch: no host side to call pinned or pageable */
  const void *stream;
};
void gt_drv_emit_copy(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, CUresult r,
                      const struct gt_drv_copy *c);

#endif
