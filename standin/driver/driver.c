/* driver.c — a CPU stand-in for libcuda.so.1: the small driver API subset
 * the driver-interception tests use (docs/standin.md). Device memory is host
 * memory; copies and memsets run at once; launches check their function
 * handle and do nothing; synchronization returns at once. Its own state,
 * independent of the runtime stand-in.
 *
 * cuGetProcAddress(_v2) answers from a fixed table (and driver_mem.c's):
 * with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the _ptsz/_ptds
 * variant, from cudaVersion 3020 (12020 for cuMemPrefetchAsync, 11000 for
 * cuIpcOpenMemHandle) the _v2 variant (cuCtxCreate: _v4 from 12050), else
 * the base name. Device memory,
 * arrays, IPC, 2D/3D copies, prefetches and host functions are in
 * driver_mem.c; device queries, created contexts (cuCtxCreate_v4, current
 * to the creating thread) and cuGetErrorString in driver_device.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemHandle;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef void *CUmodule;
typedef void *CUgraphExec;
typedef struct {
  unsigned gx, gy, gz, bx, by, bz, shmem;
  CUstream stream;
  void *attrs;
  unsigned nattrs;
} CUlaunchConfig;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500
};

static int g_init;
static int g_ctx = 1;

struct fn {
  unsigned magic;
  char name[256];
};
#define FN_MAGIC 0x46554e43u

API CUresult cuInit(unsigned flags) {
  if (flags)
    return INVALID_VALUE;
  __atomic_store_n(&g_init, 1, __ATOMIC_RELEASE);
  return OK;
}
int drv_initialized(void) {
  return __atomic_load_n(&g_init, __ATOMIC_ACQUIRE);
}
API CUresult cuDriverGetVersion(int *v) {
  if (!v)
    return INVALID_VALUE;
  *v = 13000;
  return OK;
}
API CUresult cuDeviceGet(int *dev, int ordinal) {
  if (!dev)
    return INVALID_VALUE;
  if (!g_init)
    return NOT_INITIALIZED;
  *dev = ordinal;
  return ordinal == 0 ? OK : 101;
}
API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  if (!ctx || dev != 0)
    return INVALID_VALUE;
  *ctx = &g_ctx;
  return OK;
}
API CUresult cuCtxSetCurrent(void *ctx) {
  drv_ctx_set_current(ctx);
  return OK;
}
API CUresult cuCtxGetCurrent(void **ctx) {
  if (!ctx)
    return INVALID_VALUE;
  void *created = drv_ctx_current();
  *ctx = created ? created : &g_ctx;
  return OK;
}

/* ---- modules and functions ---- */
static int g_module;
API CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  if (!m || !image)
    return INVALID_VALUE;
  *m = &g_module;
  return OK;
}
API CUresult cuModuleLoad(CUmodule *m, const char *fname) {
  if (!m || !fname)
    return INVALID_VALUE;
  *m = &g_module;
  return OK;
}
API CUresult cuModuleUnload(CUmodule m) {
  return m == &g_module ? OK : INVALID_HANDLE;
}
static CUresult get_function(void **f, const void *owner, const char *name) {
  if (!f || !name)
    return INVALID_VALUE;
  if (owner != &g_module)
    return INVALID_HANDLE;
  struct fn *fn = calloc(1, sizeof *fn);
  if (!fn)
    return 2;
  fn->magic = FN_MAGIC;
  snprintf(fn->name, sizeof fn->name, "%s", name);
  *f = fn;
  return OK;
}
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  return get_function(f, m, name);
}
API CUresult cuLibraryLoadData(void **lib, const void *code, void *a, void *b, unsigned n,
                               void *c, void *d, unsigned m) {
  (void)a;
  (void)b;
  (void)n;
  (void)c;
  (void)d;
  (void)m;
  if (!lib || !code)
    return INVALID_VALUE;
  *lib = &g_module;
  return OK;
}
API CUresult cuLibraryGetKernel(void **k, void *lib, const char *name) {
  return get_function(k, lib, name);
}
API CUresult cuFuncGetName(const char **name, CUfunction f) {
  const struct fn *fn = f;
  if (!name || !fn || fn->magic != FN_MAGIC)
    return INVALID_HANDLE;
  *name = fn->name;
  return OK;
}

/* ---- memory ---- */
static CUresult alloc(CUdeviceptr *p, size_t n) {
  return drv_alloc(p, n);
}
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  return alloc(p, n);
}
API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned f) {
  (void)f;
  return alloc(p, n);
}
API CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h,
                                unsigned e) {
  (void)e;
  if (!pitch)
    return INVALID_VALUE;
  *pitch = (w + 511) & ~(size_t)511;
  return alloc(p, *pitch * h);
}
API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
  (void)s;
  return alloc(p, n);
}
API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s) {
  (void)s;
  return alloc(p, n);
}
/* Entry points never call each other through their exported names (a
 * real driver does not either): built without -Bsymbolic those calls would
 * go through the global scope, to a preloaded shim. */
static CUresult release(CUdeviceptr p) {
  return drv_release(p);
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
  return release(p);
}
API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  (void)s;
  return release(p);
}
API CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) {
  (void)s;
  return release(p);
}
API CUresult cuMemAllocHost_v2(void **p, size_t n) {
  if (!p)
    return INVALID_VALUE;
  *p = calloc(1, n ? n : 1);
  return *p ? OK : 2;
}
API CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) {
  (void)f;
  return cuMemAllocHost_v2(p, n);
}
API CUresult cuMemFreeHost(void *p) {
  free(p);
  return OK;
}
API CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) {
  (void)f;
  return p && n ? OK : INVALID_VALUE;
}
API CUresult cuMemHostUnregister(void *p) {
  return p ? OK : INVALID_VALUE;
}

/* VMM: a handle is a heap block holding its size; reserved ranges are
 * host memory, so mapped ranges are usable. */
API CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int option) {
  (void)option;
  if (!g || !prop)
    return INVALID_VALUE;
  *g = 2u << 20;
  return OK;
}
API CUresult cuMemCreate(CUmemHandle *h, size_t size, const void *prop,
                         unsigned long long fl) {
  if (!h || !prop || fl || !size)
    return INVALID_VALUE;
  size_t *b = malloc(sizeof *b);
  if (!b)
    return 2;
  *b = size;
  *h = (CUmemHandle)(uintptr_t)b;
  return OK;
}
API CUresult cuMemRelease(CUmemHandle h) {
  if (!h)
    return INVALID_VALUE;
  free((void *)(uintptr_t)h);
  return OK;
}
API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align,
                                 CUdeviceptr addr, unsigned long long fl) {
  (void)align;
  (void)addr;
  (void)fl;
  return alloc(p, size);
}
API CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  (void)size;
  return release(p);
}
API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, CUmemHandle h,
                      unsigned long long fl) {
  if (!p || !h || fl || off + size > *(size_t *)(uintptr_t)h)
    return INVALID_VALUE;
  return OK;
}
API CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  return p && size ? OK : INVALID_VALUE;
}
API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const void *desc, size_t count) {
  return p && size && desc && count ? OK : INVALID_VALUE;
}

/* ---- copies and memsets ---- */
#define P(x) ((void *)(uintptr_t)(x))
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memmove(P(d), s, n);
  return OK;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memmove(d, P(s), n);
  return OK;
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove(P(d), P(s), n);
  return OK;
}
API CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove(P(d), P(s), n);
  return OK;
}
API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) {
  return cuMemcpyHtoD_v2(d, s, n);
}
API CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) {
  return cuMemcpyDtoH_v2(d, s, n);
}
API CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return cuMemcpy(d, s, n);
}
API CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return cuMemcpy(d, s, n);
}
#define ASYNC_COPY(name, dt, st, base)                                                   \
  API CUresult name(dt d, st s, size_t n, CUstream h) {                                  \
    (void)h;                                                                             \
    return base(d, s, n);                                                                \
  }
ASYNC_COPY(cuMemcpyAsync, CUdeviceptr, CUdeviceptr, cuMemcpy)
ASYNC_COPY(cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr, cuMemcpy)
ASYNC_COPY(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, cuMemcpyHtoD_v2)
ASYNC_COPY(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void *, cuMemcpyHtoD_v2)
ASYNC_COPY(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, cuMemcpyDtoH_v2)
ASYNC_COPY(cuMemcpyDtoHAsync_v2_ptsz, void *, CUdeviceptr, cuMemcpyDtoH_v2)
ASYNC_COPY(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, cuMemcpy)
ASYNC_COPY(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr, cuMemcpy)

#define SET(name, type)                                                                  \
  API CUresult name(CUdeviceptr d, type v, size_t n) {                                   \
    type *p = P(d);                                                                      \
    for (size_t i = 0; i < n; i++)                                                       \
      p[i] = v;                                                                          \
    return OK;                                                                           \
  }                                                                                      \
  API CUresult name##_ptds(CUdeviceptr d, type v, size_t n) {                            \
    return name(d, v, n);                                                                \
  }
SET(cuMemsetD8_v2, unsigned char)
SET(cuMemsetD16_v2, unsigned short)
SET(cuMemsetD32_v2, unsigned int)
#define SET_ASYNC(name, base, type)                                                      \
  API CUresult name(CUdeviceptr d, type v, size_t n, CUstream s) {                       \
    (void)s;                                                                             \
    return base(d, v, n);                                                                \
  }                                                                                      \
  API CUresult name##_ptsz(CUdeviceptr d, type v, size_t n, CUstream s) {                \
    (void)s;                                                                             \
    return base(d, v, n);                                                                \
  }
SET_ASYNC(cuMemsetD8Async, cuMemsetD8_v2, unsigned char)
SET_ASYNC(cuMemsetD16Async, cuMemsetD16_v2, unsigned short)
SET_ASYNC(cuMemsetD32Async, cuMemsetD32_v2, unsigned int)

/* ---- launches and synchronization ---- */
static CUresult check_fn(CUfunction f) {
  return drv_is_function(f) ? OK : INVALID_HANDLE;
}

int drv_is_function(const void *f) {
  const struct fn *fn = f;
  return fn && fn->magic == FN_MAGIC;
}
#define LAUNCH(name)                                                                     \
  API CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,    \
                    unsigned by, unsigned bz, unsigned sh, CUstream s, void **p,         \
                    void **e) {                                                          \
    (void)gx;                                                                            \
    (void)gy;                                                                            \
    (void)gz;                                                                            \
    (void)bx;                                                                            \
    (void)by;                                                                            \
    (void)bz;                                                                            \
    (void)sh;                                                                            \
    (void)s;                                                                             \
    (void)p;                                                                             \
    (void)e;                                                                             \
    return check_fn(f);                                                                  \
  }
LAUNCH(cuLaunchKernel)
LAUNCH(cuLaunchKernel_ptsz)
#define LAUNCH_COOP(name)                                                                \
  API CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,    \
                    unsigned by, unsigned bz, unsigned sh, CUstream s, void **p) {       \
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, s, p, NULL);                    \
  }
LAUNCH_COOP(cuLaunchCooperativeKernel)
LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz)
API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **e) {
  (void)p;
  (void)e;
  return c ? check_fn(f) : INVALID_VALUE;
}
API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p,
                                   void **e) {
  return cuLaunchKernelEx(c, f, p, e);
}
API CUresult cuGraphLaunch(CUgraphExec g, CUstream s) {
  (void)s;
  return g ? OK : INVALID_HANDLE;
}
API CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s) {
  return cuGraphLaunch(g, s);
}
API CUresult cuCtxSynchronize(void) {
  return OK;
}
API CUresult cuStreamSynchronize(CUstream s) {
  (void)s;
  return OK;
}
API CUresult cuStreamSynchronize_ptsz(CUstream s) {
  (void)s;
  return OK;
}
API CUresult cuEventSynchronize(CUevent e) {
  return e ? OK : INVALID_HANDLE;
}
API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) {
  (void)s;
  (void)f;
  return e ? OK : INVALID_HANDLE;
}
API CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned f) {
  return cuStreamWaitEvent(s, e, f);
}
static int g_event;
API CUresult cuEventCreate(CUevent *e, unsigned f) {
  (void)f;
  if (!e)
    return INVALID_VALUE;
  *e = &g_event;
  return OK;
}
API CUresult cuEventDestroy_v2(CUevent e) {
  return e ? OK : INVALID_HANDLE;
}

/* ---- cuGetProcAddress ---- */
CUresult cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
CUresult cuGetProcAddress(const char *, void **, int, unsigned long long);

#define E(name) {#name, (void *)name},
static const struct {
  const char *name;
  void *fn;
} g_table[] = {
    /* clang-format off */
    E(cuInit) E(cuDriverGetVersion) E(cuDeviceGet)
    E(cuDevicePrimaryCtxRetain) E(cuCtxSetCurrent) E(cuCtxGetCurrent)
    E(cuModuleLoadData) E(cuModuleLoad) E(cuModuleUnload)
    E(cuModuleGetFunction) E(cuLibraryLoadData) E(cuLibraryGetKernel)
    E(cuFuncGetName) E(cuMemAlloc_v2) E(cuMemAllocManaged)
    E(cuMemAllocPitch_v2) E(cuMemAllocAsync) E(cuMemAllocAsync_ptsz)
    E(cuMemFree_v2) E(cuMemFreeAsync) E(cuMemFreeAsync_ptsz)
    E(cuMemAllocHost_v2) E(cuMemHostAlloc) E(cuMemFreeHost)
    E(cuMemHostRegister_v2) E(cuMemHostUnregister) E(cuMemGetAllocationGranularity)
    E(cuMemCreate) E(cuMemRelease) E(cuMemAddressReserve)
    E(cuMemAddressFree) E(cuMemMap) E(cuMemUnmap)
    E(cuMemSetAccess) E(cuMemcpyHtoD_v2) E(cuMemcpyDtoH_v2)
    E(cuMemcpyDtoD_v2) E(cuMemcpy) E(cuMemcpyHtoD_v2_ptds)
    E(cuMemcpyDtoH_v2_ptds) E(cuMemcpyDtoD_v2_ptds) E(cuMemcpy_ptds)
    E(cuMemcpyAsync) E(cuMemcpyAsync_ptsz) E(cuMemcpyHtoDAsync_v2)
    E(cuMemcpyHtoDAsync_v2_ptsz) E(cuMemcpyDtoHAsync_v2) E(cuMemcpyDtoHAsync_v2_ptsz)
    E(cuMemcpyDtoDAsync_v2) E(cuMemcpyDtoDAsync_v2_ptsz) E(cuMemsetD8_v2)
    E(cuMemsetD8_v2_ptds) E(cuMemsetD16_v2) E(cuMemsetD16_v2_ptds)
    E(cuMemsetD32_v2) E(cuMemsetD32_v2_ptds) E(cuMemsetD8Async)
    E(cuMemsetD8Async_ptsz) E(cuMemsetD16Async) E(cuMemsetD16Async_ptsz)
    E(cuMemsetD32Async) E(cuMemsetD32Async_ptsz) E(cuLaunchKernel)
    E(cuLaunchKernel_ptsz) E(cuLaunchCooperativeKernel) E(cuLaunchCooperativeKernel_ptsz)
    E(cuLaunchKernelEx) E(cuLaunchKernelEx_ptsz) E(cuGraphLaunch)
    E(cuGraphLaunch_ptsz) E(cuCtxSynchronize) E(cuStreamSynchronize)
    E(cuStreamSynchronize_ptsz) E(cuEventSynchronize) E(cuStreamWaitEvent)
    E(cuStreamWaitEvent_ptsz) E(cuEventCreate) E(cuEventDestroy_v2)
    E(cuGetProcAddress_v2) E(cuGetProcAddress)
    /* clang-format on */
};

static void *lookup(const char *name) {
  for (size_t i = 0; i < sizeof g_table / sizeof g_table[0]; i++)
    if (strcmp(g_table[i].name, name) == 0)
      return g_table[i].fn;
  for (size_t i = 0; i < drv_mem_table_n; i++)
    if (strcmp(drv_mem_table[i].name, name) == 0)
      return drv_mem_table[i].fn;
  for (size_t i = 0; i < drv_device_table_n; i++)
    if (strcmp(drv_device_table[i].name, name) == 0)
      return drv_device_table[i].fn;
  return NULL;
}

/* The cudaVersion from which base names take their _v2 ABI where that is
 * not 3.2 (the older ABIs of these are not implemented here). */
static int v2_from(const char *symbol) {
  if (strcmp(symbol, "cuMemPrefetchAsync") == 0)
    return 12020;
  if (strcmp(symbol, "cuIpcOpenMemHandle") == 0)
    return 11000;
  return 3020;
}

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                 unsigned long long flags, int *status) {
  if (!symbol || !pfn)
    return INVALID_VALUE;
  char buf[128];
  void *fn = NULL;
  int v2 = version >= v2_from(symbol);
  if (flags & 2) { /* per-thread default stream */
    static const char *const v2_forms[] = {"%s_v2_ptsz", "%s_v2_ptds"};
    static const char *const forms[] = {"%s_ptsz", "%s_ptds"};
    for (int i = 0; i < 2 && !fn; i++) {
      if (v2) {
        snprintf(buf, sizeof buf, v2_forms[i], symbol);
        fn = lookup(buf);
      }
      if (!fn) {
        snprintf(buf, sizeof buf, forms[i], symbol);
        fn = lookup(buf);
      }
    }
  }
  if (!fn && strcmp(symbol, "cuCtxCreate") == 0 && version >= 12050)
    fn = lookup("cuCtxCreate_v4"); /* CUDA 12.5's ABI; the older ones are not here */
  else if (!fn && v2) {
    snprintf(buf, sizeof buf, "%s_v2", symbol);
    fn = lookup(buf);
  }
  if (!fn)
    fn = lookup(symbol);
  *pfn = fn;
  if (status)
    *status = fn ? 0 : 1;
  return fn ? OK : NOT_FOUND;
}

API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                              unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
