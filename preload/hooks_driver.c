/* hooks_driver.c — the CUDA driver API: allocation, copies, memsets,
 * launches and synchronization made through libcuda.
 *
 * Contract:
 *  - Three ways in, one set of hooks. Each traced driver entry point (the
 *    X(cu..., KIND) entries of apis.h) is an exported function of this file
 *    with the exact cuda.h signature, so programs linking -lcuda call it
 *    directly. Programs that find libcuda's functions at run time get the
 *    same hooks back from:
 *     - dlsym (interposed here): a lookup of a traced name that found a
 *       function returns our hook instead;
 *     - cuGetProcAddress / cuGetProcAddress_v2: by base name, cudaVersion
 *       (the _v2 variant from the version cuda.h names) and flags
 *       (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM selects the _ptsz /
 *       _ptds variant; DEFAULT is taken as legacy);
 *     - cudaGetDriverEntryPoint(ByVersion)(_ptsz), when the real call
 *       succeeded.
 *  - Each hook forwards to one real pointer per entry point and variant
 *    (gt_slot, resolve.c), set once (CAS): from the first lookup that
 *    found the function, or from dlsym(RTLD_NEXT) when the exported hook
 *    is called first. A lookup that finds a different function for a slot
 *    already set gets that function back untraced: a hook never calls
 *    anything but what the caller would have called. Our own hooks are
 *    never stored.
 *  - Records are those of the runtime's kinds (alloc, free, memcpy,
 *    memset, launch, sync) with api = the driver entry point. Arrays, IPC
 *    mappings, 2D/3D copies, prefetches and host functions are hooked in
 *    hooks_driver_mem.c; the emitters both use are in hooks_driver.h. Launches,
 *    copies and memsets get a corr and are timed on the device like the
 *    runtime's (devtime.h) — cuBLAS, cuDNN and Triton launch this way, so
 *    the heaviest kernels of a PyTorch process are driver launches (seen on
 *    an H100, docs/gpu-validation.md). Launch records key the
 *    kernel by its CUfunction (or CUkernel) handle: cuModuleGetFunction and
 *    cuLibraryGetKernel register handle -> name (KERNEL_NAME records).
 *  - VMM: cuMemCreate is an alloc of device memory whose ptr is the
 *    generic allocation handle; cuMemRelease frees it. cuMemMap/cuMemUnmap
 *    are alloc/free records flagged GT_F_VMM_MAP (ptr = the virtual
 *    address, bytes = size, pool = the handle) that hold no memory.
 *  - Driver calls made inside a runtime hook are forwarded untraced by the
 *    recursion guard (gt_hook_enter), so a runtime call is recorded once.
 *  - dlsym: the real one is found with dlvsym; the hook allocates nothing,
 *    takes no lock and never calls dlsym. The shim's own lookups use
 *    gt_real_dlsym (never wrapped). Limitation: dlsym(RTLD_NEXT, ...) from
 *    another object is answered as seen from libgputrace.so.
 */
#include <dlfcn.h>
#include <string.h>

#include "capture.h"
#include "hooks_driver.h"

/* ---- the real dlsym ---- */

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn g_dlsym;

static dlsym_fn real_dlsym(void) {
  dlsym_fn f = __atomic_load_n(&g_dlsym, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (f == NULL)
      f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (f == NULL)
      f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
    __atomic_store_n(&g_dlsym, f, __ATOMIC_RELEASE);
  }
  return f;
}

/* dlsym as if not interposed (RTLD_NEXT: as seen from this library). */
void *gt_real_dlsym(void *handle, const char *name) {
  dlsym_fn f = real_dlsym();
  return f != NULL ? f(handle, name) : NULL;
}

/* ---- real pointers ---- */

/* Traced entry points forward through gt_slot (resolve.c); the lookup
 * functions and the name registrations below (not traced) through these. */
enum {
  SP_PROC,
  SP_PROC_V2,
  SP_MODFN,
  SP_LIBKERNEL,
  SP_EP,
  SP_EP_PTSZ,
  SP_EPV,
  SP_EPV_PTSZ,
  SP_COUNT
};
static void *g_special[SP_COUNT];

static void *special_get(void **slot, const char *name) {
  void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (__builtin_expect(p != NULL, 1))
    return p;
  p = gt_resolve(name);
  if (p == NULL)
    return NULL;
  void *expected = NULL;
  if (!__atomic_compare_exchange_n(slot, &expected, p, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    p = expected;
  return p;
}

/* The real function of a lookup function or name registration, as
 * real_<name>, from g_special[sp]; returns `missing` from the hook when
 * there is none (a macro, as shim.h's GT_REAL). */
#define SPECIAL_REAL(sp, name, ret, params, missing)                                     \
  typedef ret(*sp_##name##_t) params;                                                    \
  sp_##name##_t real_##name = (sp_##name##_t)special_get(&g_special[sp], #name);         \
  if (real_##name == NULL)                                                               \
  return missing

/* ---- records ---- */

void gt_drv_emit_mem(unsigned api, uint32_t flags, uint8_t memory, uint64_t t0,
                     uint64_t t1, CUresult r, uint64_t ptr, uint64_t bytes,
                     const void *stream, uint64_t pitch, uint64_t pool,
                     uint32_t host_flags) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.mem.ptr = ptr;
  rec.u.mem.bytes = bytes;
  rec.u.mem.stream = (uint64_t)(uintptr_t)stream;
  rec.u.mem.pitch = pitch;
  rec.u.mem.pool = pool;
  rec.u.mem.host_flags = host_flags;
  rec.u.mem.memory = memory;
  gt_emit(&rec);
}

static uint32_t host_side_flags(const void *host) {
  int in = gt_pinned_contains(host);
  return in > 0 ? GT_F_PINNED : in == 0 ? GT_F_PAGEABLE : 0;
}

void gt_drv_emit_copy(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, CUresult r,
                      const struct gt_drv_copy *c) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  if (c->managed)
    ; /* managed memory on both sides */
  else if (c->dir == GT_DIR_HTOD)
    flags |= host_side_flags((const void *)(uintptr_t)c->src);
  else if (c->dir == GT_DIR_DTOH)
    flags |= host_side_flags((const void *)(uintptr_t)c->dst);
  rec.flags = flags;
  rec.u.copy.dst = c->dst;
  rec.u.copy.src = c->src;
  rec.u.copy.bytes = c->bytes;
  rec.u.copy.stream = (uint64_t)(uintptr_t)c->stream;
  rec.u.copy.width = (uint32_t)c->width;
  rec.u.copy.height = (uint32_t)c->height;
  rec.u.copy.kind = (uint8_t)c->kind;
  rec.u.copy.dir = c->dir;
  rec.u.copy.dst_device = -1;
  rec.u.copy.src_device = -1;
  rec.u.copy.corr = gt_call_corr(&rec);
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

static void emit_set(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1, CUresult r,
                     CUdeviceptr ptr, uint64_t bytes, int32_t value, const void *stream) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.flags = flags;
  rec.u.set.ptr = ptr;
  rec.u.set.bytes = bytes;
  rec.u.set.stream = (uint64_t)(uintptr_t)stream;
  rec.u.set.value = value;
  rec.u.set.corr = gt_call_corr(&rec);
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

static void emit_sync(unsigned api, uint64_t t0, uint64_t t1, CUresult r, const void *h,
                      const void *h2, uint32_t flags) {
  struct gt_record rec;
  gt_record_begin(&rec, api, t0, t1, r);
  rec.u.handle.handle = (uint64_t)(uintptr_t)h;
  rec.u.handle.handle2 = (uint64_t)(uintptr_t)h2;
  rec.u.handle.flags = flags;
  gt_emit(&rec);
}

/* ---- allocation ---- */

/* The DRV_* macros below that take a `name` define the hook of that name
 * (macros: shim.h), one per twin. */

GT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  DRV_REAL(cuMemAlloc_v2);
  GT_TRACE_CALL(real_cuMemAlloc_v2(dptr, bytesize),
                gt_drv_emit_mem(GT_API_cuMemAlloc_v2, 0, GT_MEM_DEVICE, t0, t1, r,
                                out_dptr(r, dptr), bytesize, NULL, 0, 0, 0));
}

static void emit_pitch(uint64_t t0, uint64_t t1, CUresult r, const CUdeviceptr *dptr,
                       const size_t *pitch, size_t width, size_t height) {
  uint64_t p = r == 0 && pitch != NULL ? *pitch : 0;
  gt_drv_emit_mem(GT_API_cuMemAllocPitch_v2, 0, GT_MEM_DEVICE, t0, t1, r,
                  out_dptr(r, dptr), (p != 0 ? p : (uint64_t)width) * height, NULL, p, 0,
                  0);
}

GT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t width,
                                      size_t height, unsigned int elementSize) {
  DRV_REAL(cuMemAllocPitch_v2);
  GT_TRACE_CALL(real_cuMemAllocPitch_v2(dptr, pPitch, width, height, elementSize),
                emit_pitch(t0, t1, r, dptr, pPitch, width, height));
}

GT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
                                     unsigned int flags) {
  DRV_REAL(cuMemAllocManaged);
  GT_TRACE_CALL(real_cuMemAllocManaged(dptr, bytesize, flags),
                gt_drv_emit_mem(GT_API_cuMemAllocManaged, 0, GT_MEM_MANAGED, t0, t1, r,
                                out_dptr(r, dptr), bytesize, NULL, 0, 0, flags));
}

#define DRV_ALLOC_ASYNC(name)                                                            \
  GT_EXPORT CUresult name(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {        \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(dptr, bytesize, hStream),                                  \
                  gt_drv_emit_mem(GT_API_##name, GT_F_ASYNC, GT_MEM_DEVICE, t0, t1, r,   \
                                  out_dptr(r, dptr), bytesize, hStream, 0, 0, 0));       \
  }
DRV_ALLOC_ASYNC(cuMemAllocAsync)
DRV_ALLOC_ASYNC(cuMemAllocAsync_ptsz)

/* Page-locked host memory: the range table is kept up to date traced or not. */
static CUresult pinned_done(int traced, unsigned api, uint64_t t0, CUresult r,
                            int saved_errno, const void *base, size_t bytes,
                            uint32_t host_flags) {
  uint64_t t1 = traced ? gt_now() : 0;
  if (r == 0)
    gt_pinned_add(base, bytes);
  if (traced) {
    gt_drv_emit_mem(api, 0, GT_MEM_PINNED_HOST, t0, t1, r,
                    r == 0 ? (uint64_t)(uintptr_t)base : 0, bytes, NULL, 0, 0,
                    host_flags);
    gt_hook_leave();
  }
  errno = saved_errno;
  return r;
}

/* Calls `call` and finishes with pinned_done; `base` may use `r`, the
 * call's result (a macro: it returns from the hook, and `call` and `base`
 * are code). */
#define DRV_PINNED(api, call, base, bytes, hflags)                                       \
  do {                                                                                   \
    int traced = gt_hook_enter();                                                        \
    uint64_t t0 = traced ? gt_now() : 0;                                                 \
    CUresult r = call;                                                                   \
    int saved_errno = errno;                                                             \
    return pinned_done(traced, api, t0, r, saved_errno, (base), (bytes), (hflags));      \
  } while (0)

GT_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) {
  DRV_REAL(cuMemAllocHost_v2);
  DRV_PINNED(GT_API_cuMemAllocHost_v2, real_cuMemAllocHost_v2(pp, bytesize),
             (const void *)(uintptr_t)out_hptr(r, pp), bytesize, 0);
}

GT_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
  DRV_REAL(cuMemHostAlloc);
  DRV_PINNED(GT_API_cuMemHostAlloc, real_cuMemHostAlloc(pp, bytesize, Flags),
             (const void *)(uintptr_t)out_hptr(r, pp), bytesize, Flags);
}

GT_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags) {
  DRV_REAL(cuMemHostRegister_v2);
  DRV_PINNED(GT_API_cuMemHostRegister_v2, real_cuMemHostRegister_v2(p, bytesize, Flags),
             p, bytesize, Flags);
}

GT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop,
                               unsigned long long flags) {
  DRV_REAL(cuMemCreate);
  GT_TRACE_CALL(real_cuMemCreate(handle, size, prop, flags),
                gt_drv_emit_mem(GT_API_cuMemCreate, 0, GT_MEM_DEVICE, t0, t1, r,
                                r == 0 && handle != NULL ? *handle : 0, size, NULL, 0, 0,
                                (uint32_t)flags));
}

GT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle,
                            unsigned long long flags) {
  DRV_REAL(cuMemMap);
  GT_TRACE_CALL(real_cuMemMap(ptr, size, offset, handle, flags),
                gt_drv_emit_mem(GT_API_cuMemMap, GT_F_VMM_MAP, GT_MEM_DEVICE, t0, t1, r,
                                ptr, size, NULL, offset, handle, (uint32_t)flags));
}

/* ---- frees ---- */

GT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  DRV_REAL(cuMemFree_v2);
  GT_TRACE_CALL(real_cuMemFree_v2(dptr),
                gt_drv_emit_mem(GT_API_cuMemFree_v2, 0, GT_MEM_DEVICE, t0, t1, r, dptr, 0,
                                NULL, 0, 0, 0));
}

#define DRV_FREE_ASYNC(name)                                                             \
  GT_EXPORT CUresult name(CUdeviceptr dptr, CUstream hStream) {                          \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(dptr, hStream),                                            \
                  gt_drv_emit_mem(GT_API_##name, GT_F_ASYNC, GT_MEM_DEVICE, t0, t1, r,   \
                                  dptr, 0, hStream, 0, 0, 0));                           \
  }
DRV_FREE_ASYNC(cuMemFreeAsync)
DRV_FREE_ASYNC(cuMemFreeAsync_ptsz)

#define DRV_FREE_PINNED(name)                                                            \
  GT_EXPORT CUresult name(void *p) {                                                     \
    DRV_REAL(name);                                                                      \
    gt_pinned_remove(p);                                                                 \
    GT_TRACE_CALL(real_##name(p),                                                        \
                  gt_drv_emit_mem(GT_API_##name, 0, GT_MEM_PINNED_HOST, t0, t1, r,       \
                                  (uint64_t)(uintptr_t)p, 0, NULL, 0, 0, 0));            \
  }
DRV_FREE_PINNED(cuMemFreeHost)
DRV_FREE_PINNED(cuMemHostUnregister)

GT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  DRV_REAL(cuMemRelease);
  GT_TRACE_CALL(real_cuMemRelease(handle),
                gt_drv_emit_mem(GT_API_cuMemRelease, 0, GT_MEM_DEVICE, t0, t1, r, handle,
                                0, NULL, 0, 0, 0));
}

GT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  DRV_REAL(cuMemUnmap);
  GT_TRACE_CALL(real_cuMemUnmap(ptr, size),
                gt_drv_emit_mem(GT_API_cuMemUnmap, GT_F_VMM_MAP, GT_MEM_DEVICE, t0, t1, r,
                                ptr, size, NULL, 0, 0, 0));
}

/* ---- copies and memsets ---- */

/* A 1D copy of `bytes` from src to dst; kind mirrors the direction
 * (cudaMemcpyKind's values). */
static inline void emit_copy_1d(unsigned api, uint32_t flags, uint64_t t0, uint64_t t1,
                                CUresult r, uint64_t dst, uint64_t src, uint64_t bytes,
                                uint8_t dir, const void *stream) {
  const struct gt_drv_copy c = {
      .dst = dst, .src = src, .bytes = bytes, .kind = dir, .dir = dir, .stream = stream};
  gt_drv_emit_copy(api, flags, t0, t1, r, &c);
}

#define DRV_COPY_HTOD(name, pt, fl, sparam, sarg, strm)                                  \
  GT_EXPORT CUresult name(CUdeviceptr dst, const void *src, size_t n sparam) {           \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_COPY, name, strm, pt, real_##name(dst, src, n sarg),                 \
              emit_copy_1d(GT_API_##name, fl, t0, t1, r, dst, (uintptr_t)src, n,         \
                           GT_DIR_HTOD, strm));                                          \
  }
#define DRV_COPY_DTOH(name, pt, fl, sparam, sarg, strm)                                  \
  GT_EXPORT CUresult name(void *dst, CUdeviceptr src, size_t n sparam) {                 \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_COPY, name, strm, pt, real_##name(dst, src, n sarg),                 \
              emit_copy_1d(GT_API_##name, fl, t0, t1, r, (uintptr_t)dst, src, n,         \
                           GT_DIR_DTOH, strm));                                          \
  }
#define DRV_COPY_DD(name, pt, fl, dir, sparam, sarg, strm)                               \
  GT_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t n sparam) {           \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_COPY, name, strm, pt, real_##name(dst, src, n sarg),                 \
              emit_copy_1d(GT_API_##name, fl, t0, t1, r, dst, src, n, dir, strm));       \
  }
/* The parameter and argument lists' tails of the synchronous and the
 * Async forms (sparam, sarg above). */
#define SYNC_P
#define SYNC_A
#define ASYNC_P , CUstream hStream
#define ASYNC_A , hStream

DRV_COPY_HTOD(cuMemcpyHtoD_v2, 0, 0, SYNC_P, SYNC_A, NULL)
DRV_COPY_HTOD(cuMemcpyHtoD_v2_ptds, 1, 0, SYNC_P, SYNC_A, NULL)
DRV_COPY_DTOH(cuMemcpyDtoH_v2, 0, 0, SYNC_P, SYNC_A, NULL)
DRV_COPY_DTOH(cuMemcpyDtoH_v2_ptds, 1, 0, SYNC_P, SYNC_A, NULL)
DRV_COPY_DD(cuMemcpyDtoD_v2, 0, 0, GT_DIR_DTOD, SYNC_P, SYNC_A, NULL)
DRV_COPY_DD(cuMemcpyDtoD_v2_ptds, 1, 0, GT_DIR_DTOD, SYNC_P, SYNC_A, NULL)
DRV_COPY_DD(cuMemcpy, 0, 0, GT_DIR_DEFAULT, SYNC_P, SYNC_A, NULL)
DRV_COPY_DD(cuMemcpy_ptds, 1, 0, GT_DIR_DEFAULT, SYNC_P, SYNC_A, NULL)
DRV_COPY_DD(cuMemcpyAsync, 0, GT_F_ASYNC, GT_DIR_DEFAULT, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_DD(cuMemcpyAsync_ptsz, 1, GT_F_ASYNC, GT_DIR_DEFAULT, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_HTOD(cuMemcpyHtoDAsync_v2, 0, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_HTOD(cuMemcpyHtoDAsync_v2_ptsz, 1, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_DTOH(cuMemcpyDtoHAsync_v2, 0, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_DTOH(cuMemcpyDtoHAsync_v2_ptsz, 1, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_DD(cuMemcpyDtoDAsync_v2, 0, GT_F_ASYNC, GT_DIR_DTOD, ASYNC_P, ASYNC_A, hStream)
DRV_COPY_DD(cuMemcpyDtoDAsync_v2_ptsz, 1, GT_F_ASYNC, GT_DIR_DTOD, ASYNC_P, ASYNC_A,
            hStream)

#define DRV_SET(name, pt, type, width, fl, sparam, sarg, strm)                           \
  GT_EXPORT CUresult name(CUdeviceptr dst, type value, size_t n sparam) {                \
    DRV_REAL(name);                                                                      \
    DRV_TIMED(GT_DT_SET, name, strm, pt, real_##name(dst, value, n sarg),                \
              emit_set(GT_API_##name, fl, t0, t1, r, dst, (uint64_t)n *(width),          \
                       (int32_t)value, strm));                                           \
  }
DRV_SET(cuMemsetD8_v2, 0, unsigned char, 1, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD8_v2_ptds, 1, unsigned char, 1, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD16_v2, 0, unsigned short, 2, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD16_v2_ptds, 1, unsigned short, 2, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD32_v2, 0, unsigned int, 4, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD32_v2_ptds, 1, unsigned int, 4, 0, SYNC_P, SYNC_A, NULL)
DRV_SET(cuMemsetD8Async, 0, unsigned char, 1, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_SET(cuMemsetD8Async_ptsz, 1, unsigned char, 1, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_SET(cuMemsetD16Async, 0, unsigned short, 2, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_SET(cuMemsetD16Async_ptsz, 1, unsigned short, 2, GT_F_ASYNC, ASYNC_P, ASYNC_A,
        hStream)
DRV_SET(cuMemsetD32Async, 0, unsigned int, 4, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)
DRV_SET(cuMemsetD32Async_ptsz, 1, unsigned int, 4, GT_F_ASYNC, ASYNC_P, ASYNC_A, hStream)

/* ---- launches ---- */

#define DRV_LAUNCH(name, pt)                                                             \
  GT_LAUNCH_HOOK(                                                                        \
      CUresult, CUDA_ERROR_NOT_FOUND, name,                                              \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,    \
       unsigned bz, unsigned shmem, CUstream hStream, void **params, void **extra),      \
      (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra), GT_DT_LAUNCH, f,       \
      gt_xy(gx, gy), gz, gt_xy(bx, by), bz, shmem, hStream, pt)
DRV_LAUNCH(cuLaunchKernel, 0)
DRV_LAUNCH(cuLaunchKernel_ptsz, 1)

#define DRV_LAUNCH_COOP(name, pt)                                                        \
  GT_LAUNCH_HOOK(CUresult, CUDA_ERROR_NOT_FOUND, name,                                   \
                 (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,      \
                  unsigned by, unsigned bz, unsigned shmem, CUstream hStream,            \
                  void **params),                                                        \
                 (f, gx, gy, gz, bx, by, bz, shmem, hStream, params), GT_DT_LAUNCH, f,   \
                 gt_xy(gx, gy), gz, gt_xy(bx, by), bz, shmem, hStream, pt)
DRV_LAUNCH_COOP(cuLaunchCooperativeKernel, 0)
DRV_LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz, 1)

#define DRV_LAUNCH_EX(name, pt)                                                          \
  GT_LAUNCH_HOOK(                                                                        \
      CUresult, CUDA_ERROR_NOT_FOUND, name,                                              \
      (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),         \
      (config, f, params, extra), GT_DT_LAUNCH, f,                                       \
      gt_xy(GT_LAUNCH_CFG(gridDimX), GT_LAUNCH_CFG(gridDimY)), GT_LAUNCH_CFG(gridDimZ),  \
      gt_xy(GT_LAUNCH_CFG(blockDimX), GT_LAUNCH_CFG(blockDimY)),                         \
      GT_LAUNCH_CFG(blockDimZ), GT_LAUNCH_CFG(sharedMemBytes),                           \
      config ? config->hStream : NULL, pt)
DRV_LAUNCH_EX(cuLaunchKernelEx, 0)
DRV_LAUNCH_EX(cuLaunchKernelEx_ptsz, 1)

#define DRV_GRAPH_LAUNCH(name, pt)                                                       \
  GT_LAUNCH_HOOK(CUresult, CUDA_ERROR_NOT_FOUND, name,                                   \
                 (CUgraphExec g, CUstream hStream), (g, hStream), GT_DT_LAUNCH, g, 0, 0, \
                 0, 0, 0, hStream, pt)
DRV_GRAPH_LAUNCH(cuGraphLaunch, 0)
DRV_GRAPH_LAUNCH(cuGraphLaunch_ptsz, 1)

/* ---- synchronization ---- */

GT_EXPORT CUresult cuCtxSynchronize(void) {
  DRV_REAL(cuCtxSynchronize);
  GT_TRACE_CALL(real_cuCtxSynchronize(),
                emit_sync(GT_API_cuCtxSynchronize, t0, t1, r, NULL, NULL, 0));
}

#define DRV_SYNC1(name, type)                                                            \
  GT_EXPORT CUresult name(type h) {                                                      \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(h), emit_sync(GT_API_##name, t0, t1, r, h, NULL, 0));      \
  }
DRV_SYNC1(cuStreamSynchronize, CUstream)
DRV_SYNC1(cuStreamSynchronize_ptsz, CUstream)
DRV_SYNC1(cuEventSynchronize, CUevent)

#define DRV_WAIT_EVENT(name)                                                             \
  GT_EXPORT CUresult name(CUstream s, CUevent e, unsigned int flags) {                   \
    DRV_REAL(name);                                                                      \
    GT_TRACE_CALL(real_##name(s, e, flags),                                              \
                  emit_sync(GT_API_##name, t0, t1, r, s, e, flags));                     \
  }
DRV_WAIT_EVENT(cuStreamWaitEvent)
DRV_WAIT_EVENT(cuStreamWaitEvent_ptsz)

/* ---- kernel names (bookkeeping, never traced) ---- */

GT_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                                       const char *name) {
  SPECIAL_REAL(SP_MODFN, cuModuleGetFunction, CUresult,
               (CUfunction *, CUmodule, const char *), CUDA_ERROR_NOT_FOUND);
  CUresult r = real_cuModuleGetFunction(hfunc, hmod, name);
  int saved_errno = errno;
  if (r == 0 && hfunc != NULL && name != NULL)
    gt_kernels_register(*hfunc, name);
  errno = saved_errno;
  return r;
}

GT_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
                                      const char *name) {
  SPECIAL_REAL(SP_LIBKERNEL, cuLibraryGetKernel, CUresult,
               (CUkernel *, CUlibrary, const char *), CUDA_ERROR_NOT_FOUND);
  CUresult r = real_cuLibraryGetKernel(pKernel, library, name);
  int saved_errno = errno;
  if (r == 0 && pKernel != NULL && name != NULL)
    gt_kernels_register(*pKernel, name);
  errno = saved_errno;
  return r;
}

/* ---- the hook table ---- */

/* Traced entry points come from apis.h (gt_hooks, resolve.c); these are the
 * driver's lookup functions and name registrations, not traced themselves. */
struct special_hook {
  const char *name;
  void *hook;
  void **slot;
};

CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t, int *);
cudaError_t cudaGetDriverEntryPoint(const char *, void **, unsigned long long, int *);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *, void **, unsigned long long,
                                         int *);
cudaError_t cudaGetDriverEntryPointByVersion(const char *, void **, unsigned int,
                                             unsigned long long, int *);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *, void **, unsigned int,
                                                  unsigned long long, int *);

/* A row of g_specials (a macro: an initializer, with the name as text). */
#define S(sp, name)                                                                      \
  { #name, (void *)name, &g_special[sp] }
static const struct special_hook g_specials[] = {
    S(SP_PROC, cuGetProcAddress),
    S(SP_PROC_V2, cuGetProcAddress_v2),
    S(SP_MODFN, cuModuleGetFunction),
    S(SP_LIBKERNEL, cuLibraryGetKernel),
    S(SP_EP, cudaGetDriverEntryPoint),
    S(SP_EP_PTSZ, cudaGetDriverEntryPoint_ptsz),
    S(SP_EPV, cudaGetDriverEntryPointByVersion),
    S(SP_EPV_PTSZ, cudaGetDriverEntryPointByVersion_ptsz),
};
#undef S

static const struct special_hook *special_named(const char *name) {
  for (size_t i = 0; i < sizeof g_specials / sizeof g_specials[0]; i++)
    if (strcmp(g_specials[i].name, name) == 0)
      return &g_specials[i];
  return NULL;
}

/* `found` is what a lookup of `name` returned to the program (from the
 * library that `lib_fn` lives in, when known): our hook when it is (or
 * becomes) the function our hook forwards to. A lookup that returned our
 * own hook (an exported address resolved through the global scope, where
 * the shim comes first) fills the slot with the library's own function. */
static void *wrap(const char *name, void *found, const void *lib_fn) {
  if (found == NULL || name == NULL || name[0] != 'c' || name[1] != 'u')
    return found;
  const struct gt_hook *h = gt_hook_named(name);
  void **slot = h ? &gt_slot[h->api] : NULL;
  void *hook = h ? h->hook : NULL;
  if (h == NULL) {
    const struct special_hook *sp = special_named(name);
    if (sp == NULL)
      return found;
    slot = sp->slot;
    hook = sp->hook;
  }
  if (found == hook || gt_is_hook(found)) {
    void *own = gt_real_in_library(lib_fn, name);
    if (own != NULL && __atomic_load_n(slot, __ATOMIC_ACQUIRE) == NULL)
      __atomic_compare_exchange_n(slot, &(void *){NULL}, own, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE);
    return found;
  }
  void *expected = NULL;
  if (__atomic_compare_exchange_n(slot, &expected, found, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE) ||
      expected == found)
    return hook;
  return found; /* a different function than the one our hook calls */
}

/* ---- dlsym ---- */

/* Lookups we wrap (a traced runtime or driver function found on a handle:
 * ctypes.CDLL("libcudart.so.13"), cffi, plugins, Triton's libcuda). */
static void *__attribute__((noinline))
wrapped_dlsym(dlsym_fn f, void *handle, const char *name) {
  void *p = f(handle, name);
  if (p == NULL)
    return p;
  int saved_errno = errno;
  p = wrap(name, p, NULL);
  errno = saved_errno;
  return p;
}

/* Everything else is forwarded as a sibling call (this file is always built
 * with -foptimize-sibling-calls): glibc's dlsym finds the object RTLD_NEXT
 * is relative to from its return address, which must stay our caller's,
 * or another interposer's dlsym(RTLD_NEXT, "x") would find its own "x".
 * RTLD_NEXT lookups of cu* names are left alone for the same reason. */
GT_EXPORT void *dlsym(void *handle, const char *name) {
  dlsym_fn f = real_dlsym();
  if (f == NULL)
    return NULL;
  if (handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u')
    return f(handle, name);
  return wrapped_dlsym(f, handle, name);
}

/* ---- cuGetProcAddress and cudaGetDriverEntryPoint ---- */

/* The entry point cuGetProcAddress(base, version, flags) returns, from
 * apis.h: the legacy-stream one (from its v2_from version on: before it, an
 * older ABI we do not hook), or its per-thread twin. NULL: not ours. */
static const char *entry_point_of(const char *base, int version, int per_thread) {
  const struct gt_api_info *legacy = NULL, *twin = NULL;
  for (unsigned a = 0; a < GT_API_COUNT; a++) {
    const struct gt_api_info *i = &gt_apis[a];
    if (i->family != GT_FAM_DRV || strcmp(i->base, base) != 0)
      continue;
    if (i->per_thread)
      twin = i;
    else
      legacy = i;
  }
  if (legacy != NULL)
    return version < legacy->v2_from ? NULL
           : per_thread && twin      ? twin->name
                                     : legacy->name;
  if (strcmp(base, "cuGetProcAddress") == 0) /* the lookups themselves */
    return version >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress";
  return special_named(base) ? base : NULL;
}

/* What a successful lookup of `symbol` returned, wrapped when it is ours. */
static void *wrap_proc(const char *symbol, void *real, int version, int per_thread,
                       const void *lib_fn) {
  if (real == NULL || symbol == NULL || symbol[0] != 'c' || symbol[1] != 'u')
    return real;
  const char *name = entry_point_of(symbol, version, per_thread);
  return name != NULL ? wrap(name, real, lib_fn) : real;
}

GT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, int *symbolStatus) {
  SPECIAL_REAL(SP_PROC_V2, cuGetProcAddress_v2, CUresult,
               (const char *, void **, int, cuuint64_t, int *), CUDA_ERROR_NOT_FOUND);
  CUresult r = real_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
  int saved_errno = errno;
  if (r == 0 && pfn != NULL)
    *pfn = wrap_proc(symbol, *pfn, cudaVersion,
                     (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0,
                     (const void *)real_cuGetProcAddress_v2);
  errno = saved_errno;
  return r;
}

GT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags) {
  SPECIAL_REAL(SP_PROC, cuGetProcAddress, CUresult,
               (const char *, void **, int, cuuint64_t), CUDA_ERROR_NOT_FOUND);
  CUresult r = real_cuGetProcAddress(symbol, pfn, cudaVersion, flags);
  int saved_errno = errno;
  if (r == 0 && pfn != NULL)
    *pfn = wrap_proc(symbol, *pfn, cudaVersion,
                     (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0,
                     (const void *)real_cuGetProcAddress);
  errno = saved_errno;
  return r;
}

/* The runtime's entry-point queries; without a version, the current one. */
#define GT_RUNTIME_VERSION 13000

/* What both entry-point lookups do with a pointer the runtime returned. */
static void wrap_entry_point(cudaError_t r, const char *symbol, void **funcPtr,
                             int cuda_version, unsigned long long flags, int pt_default) {
  if (r != 0 || funcPtr == NULL)
    return;
  int saved_errno = errno;
  *funcPtr = wrap_proc(symbol, *funcPtr, cuda_version,
                       (flags & cudaEnablePerThreadDefaultStream) != 0 ||
                           (flags == 0 && pt_default),
                       NULL);
  errno = saved_errno;
}

#define DRV_ENTRY_POINT(sp, name, pt_default)                                            \
  GT_EXPORT cudaError_t name(const char *symbol, void **funcPtr,                         \
                             unsigned long long flags, int *driverStatus) {              \
    SPECIAL_REAL(sp, name, cudaError_t,                                                  \
                 (const char *, void **, unsigned long long, int *),                     \
                 GT_ERR_NOT_SUPPORTED);                                                  \
    cudaError_t r = real_##name(symbol, funcPtr, flags, driverStatus);                   \
    wrap_entry_point(r, symbol, funcPtr, GT_RUNTIME_VERSION, flags, pt_default);         \
    return r;                                                                            \
  }
DRV_ENTRY_POINT(SP_EP, cudaGetDriverEntryPoint, 0)
DRV_ENTRY_POINT(SP_EP_PTSZ, cudaGetDriverEntryPoint_ptsz, 1)

#define DRV_ENTRY_POINT_V(sp, name, pt_default)                                          \
  GT_EXPORT cudaError_t name(const char *symbol, void **funcPtr,                         \
                             unsigned int cudaVersion, unsigned long long flags,         \
                             int *driverStatus) {                                        \
    SPECIAL_REAL(sp, name, cudaError_t,                                                  \
                 (const char *, void **, unsigned int, unsigned long long, int *),       \
                 GT_ERR_NOT_SUPPORTED);                                                  \
    cudaError_t r = real_##name(symbol, funcPtr, cudaVersion, flags, driverStatus);      \
    wrap_entry_point(r, symbol, funcPtr, (int)cudaVersion, flags, pt_default);           \
    return r;                                                                            \
  }
DRV_ENTRY_POINT_V(SP_EPV, cudaGetDriverEntryPointByVersion, 0)
DRV_ENTRY_POINT_V(SP_EPV_PTSZ, cudaGetDriverEntryPointByVersion_ptsz, 1)
