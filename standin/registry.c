/* registry.c — what nvcc-generated host code registers before main, and the
 * per-thread launch configuration stack of the <<<>>> syntax.
 *
 * Contract:
 *  - __cudaRegisterFatBinary returns a unique handle per module;
 *    __cudaRegisterFunction maps the host stub address to the kernel's
 *    mangled name; __cudaRegisterVar / __cudaRegisterManagedVar give each
 *    __device__/__constant__/__managed__ variable a zeroed backing store of
 *    its size (device memory, or managed memory whose address is stored in
 *    the program's shadow pointer). Initial values live in the device image,
 *    which is not parsed, so they are not applied.
 *  - A cudaKernel_t (from __cudaGetKernel/cudaGetKernel) is the address of
 *    the function's table entry, never the stub address, so code that
 *    confuses the two gets cudaErrorInvalidDeviceFunction. Entries are
 *    allocated in chunks and never freed or reused, so handle validation is
 *    a lock-free range check and an unregistered function reads as dead.
 *  - Where the API takes an entry function it also accepts a cudaKernel_t
 *    ("if the specified function does not exist, then it is assumed to be a
 *    cudaKernel_t", cuda_runtime_api.h).
 *  - cudaFuncGetAttributes reports one register-light kernel for every
 *    function; the occupancy calls compute from it and the device's
 *    per-SM resources (occupancy() below, docs/standin.md).
 *  - Stub lookups take the registry mutex except for a per-thread one-entry
 *    cache, which keeps repeated launches of one kernel lock-free.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"

#define SI_MAGIC_FUNC 0x46554e43u   /* "FUNC" */
#define SI_MAGIC_MODULE 0x4d4f444cu /* "MODL" */
#define FUNC_CHUNK 1024
#define FUNC_MAX_CHUNKS 256
#define CONFIG_STACK_MAX 32

struct si_module {
  void *fatbin; /* first: the handle is a void ** pointing here */
  uint32_t magic;
};

struct si_func {
  uint32_t magic;
  int live; /* atomic: 0 once its module is unregistered */
  const void *stub;
  char *name;
  struct si_module *mod;
};

struct si_var {
  struct si_module *mod;
  void *dev;
  size_t size;
  int managed;
};

/* Open-addressing map from a pointer key to a pointer value. */
struct ptrmap {
  const void **keys;
  void **vals;
  size_t cap, n;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct si_func *fchunks[FUNC_MAX_CHUNKS];
static unsigned nfchunks;    /* atomic; fchunks[i < nfchunks] are published */
static unsigned nfuncs_last; /* used entries in the last chunk */
static struct ptrmap funcs_by_stub, vars_by_key;

/* ---- ptrmap ----------------------------------------------------------------- */

static size_t ptr_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void *map_get(const struct ptrmap *m, const void *key) {
  if (m->cap == 0)
    return NULL;
  for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key)
      return m->vals[i];
    if (m->keys[i] == NULL)
      return NULL;
  }
}

static void map_put_nogrow(struct ptrmap *m, const void *key, void *val) {
  size_t i = ptr_hash(key, m->cap);
  while (m->keys[i] != NULL && m->keys[i] != key)
    i = (i + 1) & (m->cap - 1);
  if (m->keys[i] == NULL)
    m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
}

/* Rebuild into a table of `cap` slots, dropping entries for which
 * drop(val, arg) is true. Returns -1 (map unchanged) if out of memory. */
static int map_rebuild(struct ptrmap *m, size_t cap, int (*drop)(void *, void *),
                       void *arg) {
  struct ptrmap nm = {calloc(cap, sizeof(void *)), calloc(cap, sizeof(void *)), cap, 0};
  if (nm.keys == NULL || nm.vals == NULL) {
    free(nm.keys);
    free(nm.vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i] != NULL && !(drop && drop(m->vals[i], arg)))
      map_put_nogrow(&nm, m->keys[i], m->vals[i]);
  free(m->keys);
  free(m->vals);
  *m = nm;
  return 0;
}

static int map_put(struct ptrmap *m, const void *key, void *val) {
  if ((m->n + 1) * 2 > m->cap && map_rebuild(m, m->cap ? 2 * m->cap : 64, NULL, NULL))
    return -1;
  map_put_nogrow(m, key, val);
  return 0;
}

/* ---- modules -------------------------------------------------------------- */

static struct si_module *module_of(void **handle) {
  struct si_module *m = (struct si_module *)handle;
  return (m != NULL && m->magic == SI_MAGIC_MODULE) ? m : NULL;
}

SI_API void **__cudaRegisterFatBinary(void *fatCubin) {
  struct si_module *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->fatbin = fatCubin;
  m->magic = SI_MAGIC_MODULE;
  return (void **)m;
}

SI_API void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) {
  (void)fatCubinHandle;
}

/* Called before host code first touches a __managed__ variable; the storage
 * was set up at registration, so there is nothing left to initialize. */
SI_API char __cudaInitModule(void **fatCubinHandle) {
  (void)fatCubinHandle;
  return 1;
}

static int func_of_module(void *val, void *mod) {
  struct si_func *f = val;
  if (f->mod != mod)
    return 0;
  __atomic_store_n(&f->live, 0, __ATOMIC_RELEASE);
  return 1;
}

static int var_of_module(void *val, void *mod) {
  struct si_var *v = val;
  if (v->mod != mod)
    return 0;
  /* Managed storage stays: host code may still dereference it from later
   * atexit handlers. Device storage is reachable only through the API. */
  if (!v->managed)
    si_mem_symbol_free(v->dev);
  free(v);
  return 1;
}

SI_API void __cudaUnregisterFatBinary(void **fatCubinHandle) {
  struct si_module *m = module_of(fatCubinHandle);
  if (m == NULL)
    return;
  pthread_mutex_lock(&reg_mu);
  /* Rebuilding at the same size cannot fail for lack of slots; if calloc
   * fails the entries simply stay (still correct, only not released). */
  map_rebuild(&funcs_by_stub, funcs_by_stub.cap, func_of_module, m);
  map_rebuild(&vars_by_key, vars_by_key.cap, var_of_module, m);
  m->magic = 0;
  pthread_mutex_unlock(&reg_mu);
  free(m);
}

/* ---- functions -------------------------------------------------------------- */

/* Caller holds reg_mu. */
static struct si_func *func_alloc(void) {
  unsigned n = nfchunks;
  if (n == 0 || nfuncs_last == FUNC_CHUNK) {
    if (n == FUNC_MAX_CHUNKS)
      return NULL;
    struct si_func *c = calloc(FUNC_CHUNK, sizeof(*c));
    if (c == NULL)
      return NULL;
    fchunks[n] = c;
    nfuncs_last = 0;
    __atomic_store_n(&nfchunks, n + 1, __ATOMIC_RELEASE);
    n++;
  }
  return &fchunks[n - 1][nfuncs_last++];
}

SI_API void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                   char *deviceFun, const char *deviceName,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                   dim3 *gDim, int *wSize) {
  (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
  struct si_module *m = module_of(fatCubinHandle);
  const char *name = deviceName ? deviceName : deviceFun;
  char *copy = name ? strdup(name) : NULL;
  if (m == NULL || hostFun == NULL || copy == NULL) {
    free(copy);
    return;
  }
  pthread_mutex_lock(&reg_mu);
  struct si_func *f = func_alloc();
  if (f != NULL) {
    f->magic = SI_MAGIC_FUNC;
    f->stub = hostFun;
    f->name = copy;
    f->mod = m;
    __atomic_store_n(&f->live, 1, __ATOMIC_RELEASE);
    /* A stub registered twice (two modules) resolves to the latest one. */
    if (map_put(&funcs_by_stub, hostFun, f) != 0)
      __atomic_store_n(&f->live, 0, __ATOMIC_RELEASE);
  } else {
    free(copy);
  }
  pthread_mutex_unlock(&reg_mu);
}

const struct si_func *si_func_from_handle(const void *kernel) {
  uintptr_t p = (uintptr_t)kernel;
  unsigned n = __atomic_load_n(&nfchunks, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n; i++) {
    uintptr_t base = (uintptr_t)fchunks[i];
    if (p < base || p >= base + FUNC_CHUNK * sizeof(struct si_func))
      continue;
    if ((p - base) % sizeof(struct si_func) != 0)
      return NULL;
    const struct si_func *f = (const struct si_func *)p;
    return __atomic_load_n(&f->live, __ATOMIC_ACQUIRE) ? f : NULL;
  }
  return NULL;
}

static _Thread_local const void *cache_stub;
static _Thread_local const struct si_func *cache_func;

const struct si_func *si_func_lookup(const void *func) {
  const struct si_func *f = cache_func;
  if (SI_LIKELY(f != NULL && cache_stub == func &&
                __atomic_load_n(&f->live, __ATOMIC_ACQUIRE)))
    return f;
  pthread_mutex_lock(&reg_mu);
  f = map_get(&funcs_by_stub, func);
  pthread_mutex_unlock(&reg_mu);
  if (f != NULL) {
    cache_stub = func;
    cache_func = f;
    return f;
  }
  return si_func_from_handle(func);
}

const void *si_func_stub(const struct si_func *f) {
  return f->stub;
}

static cudaError_t get_kernel(cudaKernel_t *kernel, const void *stub) {
  if (kernel == NULL)
    return cudaErrorInvalidValue;
  pthread_mutex_lock(&reg_mu);
  struct si_func *f = map_get(&funcs_by_stub, stub);
  pthread_mutex_unlock(&reg_mu);
  if (f == NULL)
    return cudaErrorInvalidDeviceFunction;
  *kernel = (cudaKernel_t)f;
  return cudaSuccess;
}

SI_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub) {
  return si_ret(get_kernel(kernel, stub));
}

SI_API cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr) {
  return si_ret(get_kernel(kernelPtr, entryFuncAddr));
}

SI_API cudaError_t cudaFuncGetName(const char **name, const void *func) {
  if (name == NULL || func == NULL)
    return si_ret(cudaErrorInvalidValue);
  const struct si_func *f = si_func_lookup(func);
  if (f == NULL)
    return si_ret(cudaErrorInvalidDeviceFunction);
  *name = f->name;
  return cudaSuccess;
}

/* The device image is not parsed: every function is a plausible
 * register-light kernel with no static shared/const/local memory
 * (device_model.h, SI_FUNC_*). */

SI_API cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                         const void *func) {
  if (attr == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (si_func_lookup(func) == NULL)
    return si_ret(cudaErrorInvalidDeviceFunction);
  memset(attr, 0, sizeof(*attr));
  attr->maxThreadsPerBlock = SI_FUNC_MAX_THREADS;
  attr->numRegs = SI_FUNC_REGS;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = SI_FUNC_MAX_DYN_SHMEM;
  attr->preferredShmemCarveout = -1;
  return cudaSuccess;
}

/* ---- occupancy ---------------------------------------------------------------- */

static cudaError_t max_active_blocks(int *num_blocks, const void *func, int block_size,
                                     size_t dyn_shmem, unsigned flags) {
  if (num_blocks == NULL || block_size <= 0 ||
      (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
    return cudaErrorInvalidValue;
  if (si_func_lookup(func) == NULL)
    return cudaErrorInvalidDeviceFunction;
  *num_blocks = si_occupancy(block_size, dyn_shmem);
  return cudaSuccess;
}

SI_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                 const void *func,
                                                                 int blockSize,
                                                                 size_t dynamicSMemSize) {
  return si_ret(max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

SI_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags) {
  return si_ret(max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, flags));
}

/* ---- variables ---------------------------------------------------------------- */

static void register_var(void **handle, const void *key, void *dev, size_t size,
                         int managed) {
  struct si_module *m = module_of(handle);
  struct si_var *v = calloc(1, sizeof(*v));
  if (m == NULL || v == NULL || dev == NULL) {
    free(v);
    return;
  }
  *v = (struct si_var){.mod = m, .dev = dev, .size = size, .managed = managed};
  pthread_mutex_lock(&reg_mu);
  struct si_var *old = map_get(&vars_by_key, key);
  if (map_put(&vars_by_key, key, v) == 0)
    free(old); /* re-registration of the same shadow: latest wins */
  else
    free(v);
  pthread_mutex_unlock(&reg_mu);
}

SI_API void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global) {
  (void)deviceAddress, (void)deviceName, (void)ext, (void)constant, (void)global;
  if (hostVar == NULL)
    return;
  register_var(fatCubinHandle, hostVar, si_mem_symbol_alloc(size, 0), size, 0);
}

SI_API void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                     char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global) {
  (void)deviceAddress, (void)deviceName, (void)ext, (void)constant, (void)global;
  if (hostVarPtrAddress == NULL)
    return;
  /* Host code reaches a __managed__ variable through *hostVarPtrAddress, and
   * symbol APIs get that same address, so it is also the lookup key. */
  void *dev = si_mem_symbol_alloc(size, 1);
  if (dev == NULL)
    return;
  *hostVarPtrAddress = dev;
  register_var(fatCubinHandle, dev, dev, size, 1);
}

SI_API void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
                                  char *hostVar, size_t size) {
  /* Device code's view of a host variable: nothing to simulate. */
  (void)fatCubinHandle, (void)deviceName, (void)hostVar, (void)size;
}

cudaError_t si_symbol_lookup(const void *symbol, void **dev, size_t *size) {
  pthread_mutex_lock(&reg_mu);
  struct si_var *v = symbol ? map_get(&vars_by_key, symbol) : NULL;
  if (v != NULL) {
    *dev = v->dev;
    *size = v->size;
  }
  pthread_mutex_unlock(&reg_mu);
  return v ? cudaSuccess : cudaErrorInvalidSymbol;
}

/* ---- <<<>>> configuration stack --------------------------------------------- */

struct call_config {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
};

/* A stack, not a slot: kernel arguments may themselves launch kernels
 * between the push and the pop of the outer launch. One TLS object, so each
 * call resolves thread-local storage once. */
static _Thread_local struct {
  int depth;
  struct call_config stack[CONFIG_STACK_MAX];
} config_tls;

SI_API unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                            struct CUstream_st *stream) {
  __typeof__(config_tls) *t = &config_tls;
  if (SI_UNLIKELY(t->depth == CONFIG_STACK_MAX)) {
    si_ret(cudaErrorInvalidConfiguration);
    return 1; /* non-zero: the <<<>>> expression skips the launch */
  }
  t->stack[t->depth++] = (struct call_config){gridDim, blockDim, sharedMem, stream};
  return 0;
}

SI_API cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                              size_t *sharedMem, void *stream) {
  __typeof__(config_tls) *t = &config_tls;
  if (SI_UNLIKELY(t->depth == 0))
    return si_ret(cudaErrorMissingConfiguration);
  const struct call_config *c = &t->stack[--t->depth];
  *gridDim = c->grid;
  *blockDim = c->block;
  *sharedMem = c->shmem;
  *(cudaStream_t *)stream = c->stream;
  return cudaSuccess;
}

const char *si_func_name(const struct si_func *f) {
  return f->name ? f->name : "";
}
