/* driver_mem.c — the stand-in libcuda's device memory, CUDA arrays, IPC,
 * 2D/3D copies, prefetches and host functions, with the exact
 * prototypes of the toolkit's cuda.h.
 *
 * Contract:
 *  - Device memory (cuMemAlloc and the others of driver.c) is a shared
 *    anonymous mapping per allocation, kept in a table of (base, size), so
 *    cuMemGetAddressRange_v2 answers for any address inside one.
 *  - IPC round-trips within the process: cuIpcGetMemHandle names a
 *    cuMemAlloc allocation (not an IPC mapping); cuIpcOpenMemHandle_v2 maps
 *    the same pages at a new address (mremap of the shared mapping), so both
 *    addresses see the same bytes, as two processes do on a GPU; flags 0 or
 *    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS. cuIpcCloseMemHandle unmaps it and
 *    refuses anything else (CUDA_ERROR_INVALID_VALUE).
 *  - Arrays are heap objects: element size (the integer, half and float
 *    formats x NumChannels; other formats are CUDA_ERROR_INVALID_VALUE) x
 *    extent, rows stored densely; a mipmapped array holds all its levels.
 *  - cuMemcpy2D(Unaligned)_v2, cuMemcpy2DAsync_v2, cuMemcpy3D(Async)_v2
 *    (and their _ptds/_ptsz twins) move WidthInBytes x Height (x Depth)
 *    bytes at once between host, device, unified memory and arrays (a
 *    region past an array's edge is CUDA_ERROR_INVALID_VALUE).
 *  - cuMemPrefetchAsync_v2(_ptsz): the range must lie in one allocation,
 *    flags 0, a device location naming device 0 or a host location; nothing
 *    moves (device memory is host memory here).
 *  - cuLaunchHostFunc and cuStreamAddCallback (and _ptsz) run the function
 *    at once on the calling thread (the stand-in's work is done at once).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#pragma GCC visibility push(default)
#include <cuda.h>
#pragma GCC visibility pop

#include "driver.h"

/* ---- device memory --------------------------------------------------------- */

#define MAX_BLOCKS 4096

struct block {
  uintptr_t base;
  size_t size, map; /* requested, mapped (page multiple) */
  int ipc;          /* an IPC mapping of another block */
};

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static struct block blocks[MAX_BLOCKS];
static size_t nblocks;

static size_t page_round(size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return n ? (n + pg - 1) / pg * pg : pg;
}

/* Index of the block containing p (mem_mu held), or -1. */
static long find(uintptr_t p) {
  for (size_t i = 0; i < nblocks; i++)
    if (p - blocks[i].base < (blocks[i].size ? blocks[i].size : 1))
      return (long)i;
  return -1;
}

static int add(void *p, size_t size, size_t map, int ipc) {
  pthread_mutex_lock(&mem_mu);
  int ok = nblocks < MAX_BLOCKS;
  if (ok)
    blocks[nblocks++] = (struct block){(uintptr_t)p, size, map, ipc};
  pthread_mutex_unlock(&mem_mu);
  return ok;
}

/* Remove the block based at p whose ipc flag is `ipc`; its mapped size. */
static size_t take(uintptr_t p, int ipc) {
  pthread_mutex_lock(&mem_mu);
  long i = find(p);
  size_t map = 0;
  if (i >= 0 && blocks[i].base == p && blocks[i].ipc == ipc) {
    map = blocks[i].map;
    blocks[i] = blocks[--nblocks];
  }
  pthread_mutex_unlock(&mem_mu);
  return map;
}

int drv_alloc(unsigned long long *p, size_t n) {
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  size_t map = page_round(n);
  void *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (!add(m, n, map, 0)) {
    munmap(m, map);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *p = (unsigned long long)(uintptr_t)m;
  return CUDA_SUCCESS;
}

int drv_release(unsigned long long p) {
  if (!p)
    return CUDA_SUCCESS;
  size_t map = take((uintptr_t)p, 0);
  if (!map)
    return CUDA_ERROR_INVALID_VALUE;
  munmap((void *)(uintptr_t)p, map);
  return CUDA_SUCCESS;
}

API CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                     CUdeviceptr dptr) {
  pthread_mutex_lock(&mem_mu);
  long i = find((uintptr_t)dptr);
  struct block b = i >= 0 ? blocks[i] : (struct block){0};
  pthread_mutex_unlock(&mem_mu);
  if (i < 0)
    return CUDA_ERROR_NOT_FOUND;
  if (pbase)
    *pbase = b.base;
  if (psize)
    *psize = b.size;
  return CUDA_SUCCESS;
}

/* ---- IPC ----------------------------------------------------------------------- */

#define IPC_MAGIC 0x43504947u /* "GIPC" */

struct ipc {
  unsigned magic;
  unsigned pid;
  uintptr_t base;
};

API CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr) {
  if (!handle)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&mem_mu);
  long i = find((uintptr_t)dptr);
  int ok = i >= 0 && blocks[i].base == (uintptr_t)dptr && !blocks[i].ipc;
  pthread_mutex_unlock(&mem_mu);
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  struct ipc h = {IPC_MAGIC, (unsigned)getpid(), (uintptr_t)dptr};
  memset(handle, 0, sizeof *handle);
  memcpy(handle, &h, sizeof h);
  return CUDA_SUCCESS;
}

API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                   unsigned int Flags) {
  struct ipc h;
  memcpy(&h, &handle, sizeof h);
  if (!pdptr || (Flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
    return CUDA_ERROR_INVALID_VALUE;
  if (h.magic != IPC_MAGIC || h.pid != (unsigned)getpid())
    return CUDA_ERROR_MAP_FAILED;
  pthread_mutex_lock(&mem_mu);
  long i = find(h.base);
  struct block b = i >= 0 && blocks[i].base == h.base && !blocks[i].ipc
                       ? blocks[i]
                       : (struct block){0};
  pthread_mutex_unlock(&mem_mu);
  if (!b.base)
    return CUDA_ERROR_MAP_FAILED;                             /* freed since */
  void *m = mremap((void *)b.base, 0, b.map, MREMAP_MAYMOVE); /* the same pages */
  if (m == MAP_FAILED)
    return CUDA_ERROR_MAP_FAILED;
  if (!add(m, b.size, b.map, 1)) {
    munmap(m, b.map);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *pdptr = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}

API CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  size_t map = take((uintptr_t)dptr, 1);
  if (!map)
    return CUDA_ERROR_INVALID_VALUE;
  munmap((void *)(uintptr_t)dptr, map);
  return CUDA_SUCCESS;
}

/* ---- arrays --------------------------------------------------------------------- */

#define ARRAY_MAGIC 0x59525241u /* "ARRY" */

struct array {
  unsigned magic;
  size_t width, height, depth, elem; /* height, depth at least 1 */
  char *data;
};

static size_t format_bytes(CUarray_format f, unsigned channels) {
  if (channels != 1 && channels != 2 && channels != 4)
    return 0;
  switch (f) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
  case CU_AD_FORMAT_SIGNED_INT8:
    return channels;
  case CU_AD_FORMAT_UNSIGNED_INT16:
  case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF:
    return 2u * channels;
  case CU_AD_FORMAT_UNSIGNED_INT32:
  case CU_AD_FORMAT_SIGNED_INT32:
  case CU_AD_FORMAT_FLOAT:
    return 4u * channels;
  default:
    return 0;
  }
}

static size_t max1(size_t n) {
  return n ? n : 1;
}

static size_t level(size_t n, unsigned l) {
  return n ? max1(n >> l) : 0;
}

/* An array of `levels` levels (a mipmapped one when more than 1): the
 * handle's extent is level 0's; the storage holds them all. */
static CUresult make_array(void **out, const CUDA_ARRAY3D_DESCRIPTOR *d,
                           unsigned levels) {
  size_t elem = d ? format_bytes(d->Format, d->NumChannels) : 0;
  if (!out || !elem || !d->Width || !levels)
    return CUDA_ERROR_INVALID_VALUE;
  int keep = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  size_t bytes = 0;
  for (unsigned l = 0; l < levels; l++)
    bytes += elem * level(d->Width, l) * max1(level(d->Height, l)) *
             max1(keep ? d->Depth : level(d->Depth, l));
  struct array *a = calloc(1, sizeof *a);
  char *data = calloc(1, bytes);
  if (!a || !data) {
    free(a);
    free(data);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *a = (struct array){ARRAY_MAGIC, d->Width, max1(d->Height), max1(d->Depth), elem, data};
  *out = a;
  return CUDA_SUCCESS;
}

static struct array *array_of(const void *h) {
  struct array *a = (struct array *)h;
  return a && a->magic == ARRAY_MAGIC ? a : NULL;
}

static CUresult destroy_array(void *h) {
  struct array *a = array_of(h);
  if (!a)
    return CUDA_ERROR_INVALID_HANDLE;
  a->magic = 0;
  free(a->data);
  free(a);
  return CUDA_SUCCESS;
}

API CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d) {
  if (!d)
    return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d3 = {d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
  return make_array((void **)pHandle, &d3, 1);
}

API CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  return make_array((void **)pHandle, d, 1);
}

API CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                    const CUDA_ARRAY3D_DESCRIPTOR *d,
                                    unsigned int numMipmapLevels) {
  return make_array((void **)pHandle, d, numMipmapLevels);
}

API CUresult cuArrayDestroy(CUarray hArray) {
  return destroy_array(hArray);
}

API CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  return destroy_array(hMipmappedArray);
}

/* ---- 2D and 3D copies ----------------------------------------------------------------
 */

/* One side of a copy: where byte x of row y of slice z is. */
struct side {
  char *base;
  size_t pitch, slice;
};

static CUresult side_of(CUmemorytype type, const void *host, CUdeviceptr dev,
                        CUarray array, size_t x, size_t y, size_t z, size_t pitch,
                        size_t height, size_t w, size_t h, size_t d, struct side *s) {
  if (type == CU_MEMORYTYPE_ARRAY) {
    struct array *a = array_of(array);
    if (!a)
      return CUDA_ERROR_INVALID_HANDLE;
    size_t row = a->width * a->elem;
    if (x + w > row || y + h > a->height || z + d > a->depth)
      return CUDA_ERROR_INVALID_VALUE;
    s->pitch = row;
    s->slice = row * a->height;
    s->base = a->data + z * s->slice + y * row + x;
    return CUDA_SUCCESS;
  }
  char *p = type == CU_MEMORYTYPE_HOST ? (char *)(uintptr_t)host : (char *)(uintptr_t)dev;
  if (!p || (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE &&
             type != CU_MEMORYTYPE_UNIFIED))
    return CUDA_ERROR_INVALID_VALUE;
  if (pitch < w)
    return CUDA_ERROR_INVALID_VALUE;
  s->pitch = pitch;
  s->slice = pitch * (height ? height : h);
  s->base = p + z * s->slice + y * pitch + x;
  return CUDA_SUCCESS;
}

static void move(const struct side *dst, const struct side *src, size_t w, size_t h,
                 size_t d) {
  for (size_t z = 0; z < d; z++)
    for (size_t y = 0; y < h; y++)
      memmove(dst->base + z * dst->slice + y * dst->pitch,
              src->base + z * src->slice + y * src->pitch, w);
}

static CUresult copy2d(const CUDA_MEMCPY2D *p) {
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  struct side s, d;
  CUresult r =
      side_of(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
              p->srcY, 0, p->srcPitch, 0, p->WidthInBytes, p->Height, 1, &s);
  if (!r)
    r = side_of(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
                p->dstY, 0, p->dstPitch, 0, p->WidthInBytes, p->Height, 1, &d);
  if (!r)
    move(&d, &s, p->WidthInBytes, p->Height, 1);
  return r;
}

static CUresult copy3d(const CUDA_MEMCPY3D *p) {
  if (!p || p->reserved0 || p->reserved1)
    return CUDA_ERROR_INVALID_VALUE;
  struct side s, d;
  CUresult r = side_of(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
                       p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch, p->srcHeight,
                       p->WidthInBytes, p->Height, p->Depth, &s);
  if (!r)
    r = side_of(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
                p->dstY, p->dstZ, p->dstPitch, p->dstHeight, p->WidthInBytes, p->Height,
                p->Depth, &d);
  if (!r)
    move(&d, &s, p->WidthInBytes, p->Height, p->Depth);
  return r;
}

#define COPY_SYNC(name, type, fn)                                                        \
  API CUresult name(const type *pCopy) {                                                 \
    return fn(pCopy);                                                                    \
  }
#define COPY_ASYNC(name, type, fn)                                                       \
  API CUresult name(const type *pCopy, CUstream hStream) {                               \
    (void)hStream;                                                                       \
    return fn(pCopy);                                                                    \
  }
COPY_SYNC(cuMemcpy2D_v2, CUDA_MEMCPY2D, copy2d)
COPY_SYNC(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D, copy2d)
COPY_SYNC(cuMemcpy2DUnaligned_v2, CUDA_MEMCPY2D, copy2d)
COPY_SYNC(cuMemcpy2DUnaligned_v2_ptds, CUDA_MEMCPY2D, copy2d)
COPY_ASYNC(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, copy2d)
COPY_ASYNC(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, copy2d)
COPY_SYNC(cuMemcpy3D_v2, CUDA_MEMCPY3D, copy3d)
COPY_SYNC(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D, copy3d)
COPY_ASYNC(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, copy3d)
COPY_ASYNC(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D, copy3d)

/* ---- prefetches
 * ------------------------------------------------------------------------ */

static CUresult prefetch(CUdeviceptr p, size_t count, CUmemLocation loc, unsigned flags) {
  if (flags)
    return CUDA_ERROR_INVALID_VALUE;
  if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE && loc.id != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (loc.type != CU_MEM_LOCATION_TYPE_DEVICE && loc.type != CU_MEM_LOCATION_TYPE_HOST &&
      loc.type != CU_MEM_LOCATION_TYPE_HOST_NUMA &&
      loc.type != CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (cuMemGetAddressRange_v2(&base, &size, p) || count > size - (p - base))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

API CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                   CUmemLocation location, unsigned int flags,
                                   CUstream hStream) {
  (void)hStream;
  return prefetch(devPtr, count, location, flags);
}

API CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
                                        CUmemLocation location, unsigned int flags,
                                        CUstream hStream) {
  (void)hStream;
  return prefetch(devPtr, count, location, flags);
}

/* ---- host functions -------------------------------------------------------------------
 */

static CUresult host_func(CUhostFn fn, void *data) {
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  fn(data);
  return CUDA_SUCCESS;
}

API CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData) {
  (void)hStream;
  return host_func(fn, userData);
}

API CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData) {
  (void)hStream;
  return host_func(fn, userData);
}

static CUresult callback(CUstream s, CUstreamCallback cb, void *data, unsigned flags) {
  if (!cb || flags)
    return CUDA_ERROR_INVALID_VALUE;
  cb(s, CUDA_SUCCESS, data);
  return CUDA_SUCCESS;
}

API CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback_fn,
                                 void *userData, unsigned int flags) {
  return callback(hStream, callback_fn, userData, flags);
}

API CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback_fn,
                                      void *userData, unsigned int flags) {
  return callback(hStream, callback_fn, userData, flags);
}

/* ---- what cuGetProcAddress hands out (driver.c)
 * ---------------------------------------- */

#define E(name) {#name, (void *)name},
/* clang-format off */
const struct drv_entry drv_mem_table[] = {
    E(cuMemGetAddressRange_v2)
    E(cuIpcGetMemHandle) E(cuIpcOpenMemHandle_v2) E(cuIpcCloseMemHandle)
    E(cuArrayCreate_v2) E(cuArray3DCreate_v2) E(cuMipmappedArrayCreate)
    E(cuArrayDestroy) E(cuMipmappedArrayDestroy)
    E(cuMemcpy2D_v2) E(cuMemcpy2D_v2_ptds) E(cuMemcpy2DUnaligned_v2)
    E(cuMemcpy2DUnaligned_v2_ptds) E(cuMemcpy2DAsync_v2) E(cuMemcpy2DAsync_v2_ptsz)
    E(cuMemcpy3D_v2) E(cuMemcpy3D_v2_ptds) E(cuMemcpy3DAsync_v2) E(cuMemcpy3DAsync_v2_ptsz)
    E(cuMemPrefetchAsync_v2) E(cuMemPrefetchAsync_v2_ptsz)
    E(cuLaunchHostFunc) E(cuLaunchHostFunc_ptsz)
    E(cuStreamAddCallback) E(cuStreamAddCallback_ptsz)
};
/* clang-format on */
const size_t drv_mem_table_n = sizeof drv_mem_table / sizeof drv_mem_table[0];
