/* drv_coverage.c — the driver API twins of coverage.cu's entry points
 * (tests/e2e/test_coverage.py), on the stand-in libcuda, reached two ways
 * chosen at build time:
 *   DRV_LINK — linked with -lcuda, calls cuda.h's names (the _v2 entry
 *              points) and the per-thread twins by their exported names;
 *   DRV_PROC — dlopen("libcuda.so.1", RTLD_LOCAL) and cuGetProcAddress_v2
 *              by base name at cudaVersion 13000, the per-thread twins with
 *              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (cuBLAS, NCCL).
 * Arrays (2D, 3D, layered, mipmapped), 2D/3D copies to, from and between
 * host, device memory and arrays, prefetches, IPC mappings and host
 * functions, with known sizes; leaks one array (leak_array) and one IPC
 * mapping (leak_ipc_mapping). Prints "drv_coverage: F failures, M
 * mismatches". */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

/* name in this file, the base name cuGetProcAddress is asked for, its
 * per-thread flag, the exported name, its type */
#define FNS(X)                                                                           \
  X(init, "cuInit", 0, cuInit, CUresult (*)(unsigned))                                   \
  X(alloc, "cuMemAlloc", 0, cuMemAlloc_v2, CUresult (*)(CUdeviceptr *, size_t))          \
  X(alloc_managed, "cuMemAllocManaged", 0, cuMemAllocManaged,                            \
    CUresult (*)(CUdeviceptr *, size_t, unsigned))                                       \
  X(alloc_host, "cuMemAllocHost", 0, cuMemAllocHost_v2, CUresult (*)(void **, size_t))   \
  X(free_dev, "cuMemFree", 0, cuMemFree_v2, CUresult (*)(CUdeviceptr))                   \
  X(free_host, "cuMemFreeHost", 0, cuMemFreeHost, CUresult (*)(void *))                  \
  X(htod, "cuMemcpyHtoD", 0, cuMemcpyHtoD_v2,                                            \
    CUresult (*)(CUdeviceptr, const void *, size_t))                                     \
  X(dtoh, "cuMemcpyDtoH", 0, cuMemcpyDtoH_v2, CUresult (*)(void *, CUdeviceptr, size_t)) \
  X(array_create, "cuArrayCreate", 0, cuArrayCreate_v2,                                  \
    CUresult (*)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *))                              \
  X(array3d_create, "cuArray3DCreate", 0, cuArray3DCreate_v2,                            \
    CUresult (*)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *))                            \
  X(mipmap_create, "cuMipmappedArrayCreate", 0, cuMipmappedArrayCreate,                  \
    CUresult (*)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned))         \
  X(array_destroy, "cuArrayDestroy", 0, cuArrayDestroy, CUresult (*)(CUarray))           \
  X(mipmap_destroy, "cuMipmappedArrayDestroy", 0, cuMipmappedArrayDestroy,               \
    CUresult (*)(CUmipmappedArray))                                                      \
  X(copy2d, "cuMemcpy2D", 0, cuMemcpy2D_v2, CUresult (*)(const CUDA_MEMCPY2D *))         \
  X(copy2d_pt, "cuMemcpy2D", 2, cuMemcpy2D_v2_ptds, CUresult (*)(const CUDA_MEMCPY2D *)) \
  X(copy2d_unaligned, "cuMemcpy2DUnaligned", 0, cuMemcpy2DUnaligned_v2,                  \
    CUresult (*)(const CUDA_MEMCPY2D *))                                                 \
  X(copy2d_async, "cuMemcpy2DAsync", 0, cuMemcpy2DAsync_v2,                              \
    CUresult (*)(const CUDA_MEMCPY2D *, CUstream))                                       \
  X(copy2d_async_pt, "cuMemcpy2DAsync", 2, cuMemcpy2DAsync_v2_ptsz,                      \
    CUresult (*)(const CUDA_MEMCPY2D *, CUstream))                                       \
  X(copy3d, "cuMemcpy3D", 0, cuMemcpy3D_v2, CUresult (*)(const CUDA_MEMCPY3D *))         \
  X(copy3d_async, "cuMemcpy3DAsync", 0, cuMemcpy3DAsync_v2,                              \
    CUresult (*)(const CUDA_MEMCPY3D *, CUstream))                                       \
  X(prefetch, "cuMemPrefetchAsync", 0, cuMemPrefetchAsync_v2,                            \
    CUresult (*)(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream))                \
  X(prefetch_pt, "cuMemPrefetchAsync", 2, cuMemPrefetchAsync_v2_ptsz,                    \
    CUresult (*)(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream))                \
  X(ipc_get, "cuIpcGetMemHandle", 0, cuIpcGetMemHandle,                                  \
    CUresult (*)(CUipcMemHandle *, CUdeviceptr))                                         \
  X(ipc_open, "cuIpcOpenMemHandle", 0, cuIpcOpenMemHandle_v2,                            \
    CUresult (*)(CUdeviceptr *, CUipcMemHandle, unsigned))                               \
  X(ipc_close, "cuIpcCloseMemHandle", 0, cuIpcCloseMemHandle, CUresult (*)(CUdeviceptr)) \
  X(host_func, "cuLaunchHostFunc", 0, cuLaunchHostFunc,                                  \
    CUresult (*)(CUstream, CUhostFn, void *))                                            \
  X(host_func_pt, "cuLaunchHostFunc", 2, cuLaunchHostFunc_ptsz,                          \
    CUresult (*)(CUstream, CUhostFn, void *))                                            \
  X(add_callback, "cuStreamAddCallback", 0, cuStreamAddCallback,                         \
    CUresult (*)(CUstream, CUstreamCallback, void *, unsigned))

#define DECL(var, base, pt, sym, type) static __typeof__(type) p_##var;
FNS(DECL)

#if defined(DRV_LINK)
/* The per-thread twins cuda.h declares only for per-thread builds. */
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *, CUstream);
CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr, size_t, CUmemLocation, unsigned,
                                    CUstream);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void *);
#define SET(var, base, pt, sym, type) p_##var = sym;
static void load(void) {
  FNS(SET)
}
#else
typedef CUresult (*proc_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
static proc_fn g_proc;
static void *get(const char *base, int flags) {
  void *f = NULL;
  CUdriverProcAddressQueryResult q;
  if (g_proc(base, &f, 13000, (cuuint64_t)flags, &q) != CUDA_SUCCESS || !f) {
    fprintf(stderr, "cuGetProcAddress %s failed\n", base);
    exit(2);
  }
  return f;
}
#define SET(var, base, pt, sym, type) *(void **)&p_##var = get(base, pt);
static void load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || !(*(void **)&g_proc = dlsym(lib, "cuGetProcAddress_v2"))) {
    fprintf(stderr, "no libcuda.so.1\n");
    exit(2);
  }
  FNS(SET)
}
#endif

static int failures, mismatches;
#define CHECK(call)                                                                      \
  do {                                                                                   \
    if ((call) != CUDA_SUCCESS)                                                          \
      failures++;                                                                        \
  } while (0)

static void same(const void *a, const void *b, size_t n) {
  if (failures == 0 && memcmp(a, b, n) != 0)
    mismatches++;
}

static int calls;
static void on_host(void *data) {
  ++*(int *)data;
}
static void on_callback(CUstream s, CUresult status, void *data) {
  (void)s;
  if (status == CUDA_SUCCESS)
    ++*(int *)data;
}

__attribute__((noinline)) static CUarray leak_array(void) {
  CUDA_ARRAY_DESCRIPTOR d = {256, 64, CU_AD_FORMAT_FLOAT, 1}; /* 65536 bytes */
  CUarray a = NULL;
  CHECK(p_array_create(&a, &d));
  return a;
}

__attribute__((noinline)) static CUdeviceptr leak_ipc_mapping(CUipcMemHandle h) {
  CUdeviceptr p = 0;
  CHECK(p_ipc_open(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)); /* never closed */
  return p;
}

/* A 2D copy of w x h bytes; the memory types and pointers are filled by the
 * caller. */
static CUDA_MEMCPY2D copy_2d(size_t w, size_t h) {
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.WidthInBytes = w;
  c.Height = h;
  return c;
}

int main(void) {
  load();
  CHECK(p_init(0));
  const size_t MiB = 1 << 20;
  unsigned char *h = malloc(MiB), *h2 = calloc(1, MiB);
  for (size_t i = 0; i < MiB; i++)
    h[i] = (unsigned char)(i * 13 + 1);
  void *pinned = NULL;
  CHECK(p_alloc_host(&pinned, MiB));
  CUdeviceptr d = 0, exported = 0, m = 0;
  CHECK(p_alloc(&d, MiB));
  CHECK(p_alloc(&exported, MiB));

  /* arrays: 65536 (leaked) + 65536 + 12288 + 21760 bytes */
  CUarray a2d = leak_array(), a3d = NULL, layered = NULL;
  CUmipmappedArray mip = NULL;
  CUDA_ARRAY3D_DESCRIPTOR d3 = {32, 16, 8, CU_AD_FORMAT_FLOAT, 4, 0};
  CUDA_ARRAY3D_DESCRIPTOR dl = {
      64, 64, 3, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED};
  CUDA_ARRAY3D_DESCRIPTOR dm = {64, 64, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CHECK(p_array3d_create(&a3d, &d3));
  CHECK(p_array3d_create(&layered, &dl));
  CHECK(p_mipmap_create(&mip, &dm, 4));

  /* 2D: host -> array, array -> host (65536 each), device -> device
   * unaligned (16384), pinned -> device async (16384), per-thread twins */
  CUDA_MEMCPY2D c = copy_2d(1024, 64);
  c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = h, c.srcPitch = 1024;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a2d;
  CHECK(p_copy2d(&c));
  c = copy_2d(1024, 64);
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = a2d;
  c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = h2, c.dstPitch = 1024;
  CHECK(p_copy2d_pt(&c));
  same(h, h2, 65536);
  c = copy_2d(1024, 16);
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = d, c.srcPitch = 1024;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = d + 65536, c.dstPitch = 1024;
  CHECK(p_copy2d_unaligned(&c));
  c = copy_2d(512, 32);
  c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = pinned, c.srcPitch = 512;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = d, c.dstPitch = 512;
  CHECK(p_copy2d_async(&c, NULL));
  CHECK(p_copy2d_async_pt(&c, NULL));

  /* 3D: host -> float4 array and back (65536 each), device -> device (2048) */
  CUDA_MEMCPY3D c3;
  memset(&c3, 0, sizeof c3);
  c3.srcMemoryType = CU_MEMORYTYPE_HOST, c3.srcHost = h, c3.srcPitch = 512,
  c3.srcHeight = 16;
  c3.dstMemoryType = CU_MEMORYTYPE_ARRAY, c3.dstArray = a3d;
  c3.WidthInBytes = 512, c3.Height = 16, c3.Depth = 8;
  CHECK(p_copy3d(&c3));
  memset(&c3, 0, sizeof c3);
  c3.srcMemoryType = CU_MEMORYTYPE_ARRAY, c3.srcArray = a3d;
  c3.dstMemoryType = CU_MEMORYTYPE_HOST, c3.dstHost = h2, c3.dstPitch = 512,
  c3.dstHeight = 16;
  c3.WidthInBytes = 512, c3.Height = 16, c3.Depth = 8;
  memset(h2, 0, 65536);
  CHECK(p_copy3d(&c3));
  same(h, h2, 65536);
  memset(&c3, 0, sizeof c3);
  c3.srcMemoryType = CU_MEMORYTYPE_DEVICE, c3.srcDevice = d, c3.srcPitch = 256;
  c3.dstMemoryType = CU_MEMORYTYPE_DEVICE, c3.dstDevice = d + 131072, c3.dstPitch = 256;
  c3.WidthInBytes = 256, c3.Height = 4, c3.Depth = 2;
  CHECK(p_copy3d_async(&c3, NULL));

  /* managed memory: 1 MiB to the device, 64 KiB to the host (per-thread) */
  CHECK(p_alloc_managed(&m, MiB, CU_MEM_ATTACH_GLOBAL));
  CUmemLocation dev = {CU_MEM_LOCATION_TYPE_DEVICE, 0},
                host = {CU_MEM_LOCATION_TYPE_HOST, 0};
  CHECK(p_prefetch(m, MiB, dev, 0, NULL));
  CHECK(p_prefetch_pt(m, 65536, host, 0, NULL));

  /* IPC: two mappings of a 1 MiB allocation, one closed, one leaked */
  CUipcMemHandle ih;
  memset(&ih, 0, sizeof ih);
  CHECK(p_ipc_get(&ih, exported));
  CUdeviceptr mapped = 0;
  CHECK(p_ipc_open(&mapped, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CHECK(p_htod(mapped, h, 4096)); /* seen through `exported` */
  memset(h2, 0, 4096);
  CHECK(p_dtoh(h2, exported, 4096));
  same(h, h2, 4096);
  CHECK(p_ipc_close(mapped));
  (void)leak_ipc_mapping(ih);

  /* host functions */
  CHECK(p_host_func(NULL, on_host, &calls));
  CHECK(p_host_func_pt(NULL, on_host, &calls));
  CHECK(p_add_callback(NULL, on_callback, &calls, 0));
  if (failures == 0 && calls != 3)
    mismatches++;

  CHECK(p_array_destroy(a3d));
  CHECK(p_array_destroy(layered));
  CHECK(p_mipmap_destroy(mip));
  CHECK(p_free_dev(d));
  CHECK(p_free_dev(m));
  CHECK(p_free_dev(exported));
  CHECK(p_free_host(pinned));
  printf("drv_coverage: %d failures, %d mismatches\n", failures, mismatches);
  free(h);
  free(h2);
  return failures + mismatches != 0;
}
