/* drv_paths.c — driver API use through the three ways libraries reach
 * libcuda (tests/e2e/test_driver.py), chosen at build time:
 *   DRV_LINK  — linked with -lcuda, calls the exported functions;
 *   DRV_DLSYM — dlopen("libcuda.so.1") + dlsym of each function (Triton);
 *   DRV_PROC  — cuGetProcAddress_v2 found with dlsym on that handle
 *               (cuBLAS, NCCL), and cuMemCreate through the runtime's
 *               cudaGetDriverEntryPointByVersion (PyTorch).
 * Each: 2 kernels by name, 5 launches, copies, memsets, syncs, VMM
 * create/map/unmap/release, and two leaks (cuMemAlloc, cuMemCreate) at the
 * lines marked LEAK_. Prints "drv: 0 failures". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemHandle;
typedef void *CUstream;
typedef struct {
  unsigned gx, gy, gz, bx, by, bz, shmem;
  CUstream stream;
  void *attrs;
  unsigned nattrs;
} CUlaunchConfig;
typedef struct {
  int type, handle_types, loc_type, loc_id;
  unsigned long long flags[4];
} Prop;
typedef struct {
  int loc_type, loc_id, flags;
} Access;

#define FNS(X)                                                                           \
  X(cuInit, (unsigned))                                                                  \
  X(cuModuleLoadData, (void **, const void *))                                           \
  X(cuModuleGetFunction, (void **, void *, const char *))                                \
  X(cuMemAlloc, (CUdeviceptr *, size_t))                                                 \
  X(cuMemFree, (CUdeviceptr))                                                            \
  X(cuMemAllocHost, (void **, size_t))                                                   \
  X(cuMemFreeHost, (void *))                                                             \
  X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t))                                   \
  X(cuMemcpyDtoH, (void *, CUdeviceptr, size_t))                                         \
  X(cuMemcpyDtoD, (CUdeviceptr, CUdeviceptr, size_t))                                    \
  X(cuMemsetD32, (CUdeviceptr, unsigned, size_t))                                        \
  X(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                     unsigned, CUstream, void **, void **))                              \
  X(cuLaunchKernelEx, (const CUlaunchConfig *, void *, void **, void **))                \
  X(cuCtxSynchronize, (void))                                                            \
  X(cuStreamSynchronize, (CUstream))                                                     \
  X(cuMemCreate, (CUmemHandle *, size_t, const Prop *, unsigned long long))              \
  X(cuMemRelease, (CUmemHandle))                                                         \
  X(cuMemAddressReserve,                                                                 \
    (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))                    \
  X(cuMemAddressFree, (CUdeviceptr, size_t))                                             \
  X(cuMemMap, (CUdeviceptr, size_t, size_t, CUmemHandle, unsigned long long))            \
  X(cuMemUnmap, (CUdeviceptr, size_t))                                                   \
  X(cuMemSetAccess, (CUdeviceptr, size_t, const Access *, size_t))

#define DECL(name, params) static CUresult(*p_##name) params;
FNS(DECL)

static int failures;
#define CHECK(call)                                                                      \
  do {                                                                                   \
    CUresult r_ = (call);                                                                \
    if (r_ != 0) {                                                                       \
      fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, r_);               \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

#if defined(DRV_LINK)
/* cuda.h's names: the _v2 entry points. */
#define L(name, params) CUresult name params;
// clang-format off: declarations made by a macro, which it cannot lay out stably
L(cuMemAlloc_v2, (CUdeviceptr *, size_t))
L(cuMemFree_v2, (CUdeviceptr))
L(cuMemAllocHost_v2, (void **, size_t))
L(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))
L(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))
L(cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t))
L(cuMemsetD32_v2, (CUdeviceptr, unsigned, size_t))
#define cuMemAlloc cuMemAlloc_v2
#define cuMemFree cuMemFree_v2
#define cuMemAllocHost cuMemAllocHost_v2
#define cuMemcpyHtoD cuMemcpyHtoD_v2
#define cuMemcpyDtoH cuMemcpyDtoH_v2
#define cuMemcpyDtoD cuMemcpyDtoD_v2
#define cuMemsetD32 cuMemsetD32_v2
#define DECL2(name, params) CUresult name params;
FNS(DECL2)
#define SET(name, params) p_##name = name;
static void load(void) {
  FNS(SET)
}
// clang-format on
#else
static void *g_lib;
#if defined(DRV_DLSYM)
static const char *const v2_names[] = {
    "cuMemAlloc",   "cuMemFree",    "cuMemAllocHost", "cuMemcpyHtoD",
    "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemsetD32",    NULL};
static void *get(const char *name) {
  char buf[64];
  for (int i = 0; v2_names[i]; i++)
    if (strcmp(v2_names[i], name) == 0) {
      snprintf(buf, sizeof buf, "%.40s_v2", name);
      name = buf;
    }
  void *f = dlsym(g_lib, name);
  if (!f) {
    fprintf(stderr, "dlsym %s failed\n", name);
    exit(2);
  }
  return f;
}
#else
typedef CUresult (*proc_fn)(const char *, void **, int, unsigned long long, int *);
static proc_fn g_proc;
static void *get(const char *name) {
  void *f = NULL;
  int status = -1;
  if (g_proc(name, &f, 12000, 0, &status) != 0 || !f || status != 0) {
    fprintf(stderr, "cuGetProcAddress %s failed\n", name);
    exit(2);
  }
  return f;
}
#endif
#define SET(name, params) *(void **)&p_##name = get(#name);
static void load(void) {
  g_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!g_lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(2);
  }
#if defined(DRV_PROC)
  *(void **)&g_proc = dlsym(g_lib, "cuGetProcAddress_v2");
  if (!g_proc || g_proc("cuInit", (void **)&p_cuInit, 12000, 0, NULL) != 0)
    exit(2);
  CHECK(p_cuInit(0)); /* cuGetProcAddress works before cuInit too */
#endif
  FNS(SET)
#if defined(DRV_PROC)
  /* PyTorch's expandable segments: cuMemCreate through the runtime. */
  void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  typedef int (*ep_fn)(const char *, void **, unsigned, unsigned long long, int *);
  ep_fn ep = rt ? (ep_fn)dlsym(rt, "cudaGetDriverEntryPointByVersion") : NULL;
  int q = -1;
  void *f = NULL;
  if (!ep || ep("cuMemCreate", &f, 12000, 0, &q) != 0 || !f || q != 0) {
    fprintf(stderr, "cudaGetDriverEntryPointByVersion failed\n");
    exit(2);
  }
  *(void **)&p_cuMemCreate = f;
  /* the per-thread-stream variant through the flag */
  void *pt = NULL;
  CHECK(g_proc("cuStreamSynchronize", &pt, 12000, 2, NULL));
  CHECK(((CUresult(*)(CUstream))pt)(NULL));
  /* NULL out-parameters are forwarded, not dereferenced */
  if (g_proc("cuLaunchKernel", NULL, 12000, 0, NULL) == 0)
    failures++;
#endif
}
#endif

static void *g_kernels[2];

__attribute__((noinline)) static CUdeviceptr leak_device(void) {
  CUdeviceptr p = 0;
  CHECK(p_cuMemAlloc(&p, 4096)); /* LEAK_ALLOC */
  return p;
}

__attribute__((noinline)) static CUmemHandle leak_physical(size_t size) {
  Prop prop = {1, 0, 1, 0, {0}};
  CUmemHandle h = 0;
  CHECK(p_cuMemCreate(&h, size, &prop, 0)); /* LEAK_CREATE */
  return h;
}

static void vmm(void) {
  const size_t size = 2u << 20;
  Prop prop = {1, 0, 1, 0, {0}};
  CUmemHandle h = 0;
  CUdeviceptr va = 0;
  CHECK(p_cuMemCreate(&h, size, &prop, 0));
  CHECK(p_cuMemAddressReserve(&va, size, 0, 0, 0));
  CHECK(p_cuMemMap(va, size, 0, h, 0));
  Access acc = {1, 0, 3};
  CHECK(p_cuMemSetAccess(va, size, &acc, 1));
  CHECK(p_cuMemUnmap(va, size));
  CHECK(p_cuMemRelease(h));
  CHECK(p_cuMemAddressFree(va, size));
}

int main(void) {
  load();
  CHECK(p_cuInit(0));
  void *mod = NULL;
  CHECK(p_cuModuleLoadData(&mod, "fake cubin"));
  CHECK(p_cuModuleGetFunction(&g_kernels[0], mod, "vec_add"));
  CHECK(p_cuModuleGetFunction(&g_kernels[1], mod, "_Z6reducePfi"));
  const size_t n = 1 << 20;
  CUdeviceptr a = 0, b = 0;
  void *host = NULL;
  CHECK(p_cuMemAlloc(&a, n));
  CHECK(p_cuMemAlloc(&b, n));
  CHECK(p_cuMemAllocHost(&host, 65536));
  char *pageable = calloc(1, n);
  CHECK(p_cuMemcpyHtoD(a, pageable, n));
  CHECK(p_cuMemcpyHtoD(a, host, 65536));
  CHECK(p_cuMemsetD32(b, 7, n / 4));
  CHECK(p_cuMemcpyDtoD(b, a, n));
  void *args[] = {&a, &b};
  for (int i = 0; i < 3; i++)
    CHECK(p_cuLaunchKernel(g_kernels[0], 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CUlaunchConfig cfg = {64, 2, 1, 128, 1, 1, 1024, NULL, NULL, 0};
  for (int i = 0; i < 2; i++)
    CHECK(p_cuLaunchKernelEx(&cfg, g_kernels[1], args, NULL));
  CHECK(p_cuStreamSynchronize(NULL));
  CHECK(p_cuMemcpyDtoH(host, b, 65536));
  CHECK(p_cuCtxSynchronize());
  vmm();
  leak_device();
  CUmemHandle kept = leak_physical(4u << 20);
  (void)kept;
  CHECK(p_cuMemFree(a));
  CHECK(p_cuMemFree(b));
  CHECK(p_cuMemFreeHost(host));
  free(pageable);
  printf("drv: %d failures\n", failures);
  return failures != 0;
}
