/* memory.c — simulated device memory: allocation, the kind table, and the
 * pointer queries.
 *
 * Contract:
 *  - Device and managed memory are host memory (256-byte aligned), pinned
 *    memory is page aligned; every allocation and every cudaHostRegister'ed
 *    range is kept in one table of (base, size, kind) sorted by base, so any
 *    interior pointer resolves to its range (copies use this to pick the
 *    direction and bandwidth and to reject out-of-range device accesses).
 *  - Device + managed allocations count against a simulated capacity
 *    (GPUTRACE_STANDIN_MEM_BYTES, default 80 GiB); past it the allocation
 *    fails with cudaErrorMemoryAllocation. A size of 0 succeeds with NULL.
 *  - Frees must name the base of a live allocation of the right family
 *    (cudaFree: device/managed; cudaFreeHost: pinned); anything else is
 *    cudaErrorInvalidValue, as with the real runtime. cudaFree(NULL) is a
 *    no-op. Stream-ordered allocations take effect immediately (kernels do
 *    not execute and copies move bytes in program order, so nothing can
 *    observe the difference); cudaFree does not synchronize.
 *  - Symbol storage (registry.c) is in the table as device/managed memory
 *    but is neither counted nor freeable by the program.
 *  - CUDA arrays' storage (array.c) is device memory in the table (kind
 *    SI_MEM_ARRAY), counted against the capacity, freeable only through
 *    the array API.
 *  - IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle /
 *    cudaIpcCloseMemHandle): a handle names a live cudaMalloc allocation
 *    (base, size and a unique id, so a handle outlives neither a free nor a
 *    reuse of the address). Within the process, opening it reserves a fresh
 *    inaccessible address range (PROT_NONE, so the host faults on it as on
 *    device memory) that stands for the allocation: the copies and memsets
 *    of copy.c resolve an address in it to the same offset in the
 *    allocation (si_mem_resolve), so both pointers see the same bytes.
 *    Across processes (the same user's, on one machine, as CUDA IPC is):
 *    the first handle of an allocation moves its bytes into a memfd mapped
 *    in the exporter (.shared; every address of the allocation resolves
 *    there from then on, copies already queued into it excepted: export
 *    before queueing, as simpleIPC does), and the handle names the
 *    exporter's pid, the memfd's descriptor and inode; another process maps
 *    it through /proc/<pid>/fd/<fd> (an SI_MEM_IPC range marked .imported:
 *    its bytes are at its own addresses). Each open makes a new mapping;
 *    close removes it. A mapping is not counted against the capacity (it
 *    is the exporter's memory). A handle of a freed allocation, or of a
 *    process or descriptor that is gone or now names another file, fails
 *    with cudaErrorMapBufferObjectFailed.
 *  - Graph memory (graph.c's alloc and free nodes): an alloc node reserves
 *    a unique address range when it is created (mmap'd address space, in
 *    the table as device memory with .graph set) that stays reserved while
 *    a graph references it. The memory is allocated (counted against the
 *    capacity; its pages zero) when the node runs and freed by a free node,
 *    cudaFree or cudaFreeAsync (its pages dropped); freeing it when it is
 *    not allocated is cudaErrorInvalidValue, as is a free node for an
 *    address no alloc node returned, or one freed by its owning graph and
 *    another graph. Accesses between a free and the next allocation are not
 *    caught (the range stays mapped).
 *  - Stream capture (capture.c): cudaMalloc, cudaMallocManaged,
 *    cudaMallocPitch, cudaMalloc3D, cudaMallocHost, cudaHostAlloc, cudaFree
 *    and cudaFreeHost are potentially unsafe (checked first). In a capturing
 *    stream cudaMallocAsync / cudaMallocFromPoolAsync add an alloc node
 *    (the address reserved at once) and cudaFreeAsync a free node, which
 *    must name a graph allocation. cudaMemPoolSetAttribute stores the
 *    default pool's settable attributes (nothing reads them).
 *  - cudaHostGetDevicePointer (flags 0) answers for memory allocated with
 *    cudaHostAllocMapped or registered with cudaHostRegisterMapped, interior
 *    pointers included, with the host address (unified addressing, host
 *    pointers usable on the device); any other pointer, pinned without the
 *    flag included, is cudaErrorInvalidValue.
 *  - GPUTRACE_STANDIN_LEAK_CHECK=1: at exit, the allocations the program
 *    still owns (device, managed, pinned, arrays; not IPC mappings) are
 *    summed on stderr in
 *    compute-sanitizer's words, "========= LEAK SUMMARY: N bytes leaked in
 *    M allocations", so tools check a profiler against the runtime's own
 *    bookkeeping as they would against compute-sanitizer on a GPU. Graph
 *    memory counts while it is allocated.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "standin.h"

#define DEVICE_ALIGN 256
#define PINNED_ALIGN 4096
#define PITCH_ALIGN 512

static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static struct si_range *table;
static size_t table_n, table_cap;
static uint64_t used_bytes;  /* counted (device + managed + array) bytes */
static uint64_t next_id = 1; /* allocation ids (mem_mu) */

/* The default memory pool is the only pool; its handle is this object. */
static struct { uint32_t magic; } default_pool = {0x504f4f4cu};

/* ---- table (caller holds mem_mu) -------------------------------------------- */

/* Index of the last range with base <= p, or -1. */
static long floor_index(uintptr_t p) {
  long lo = 0, hi = (long)table_n - 1, ans = -1;
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    if (table[mid].base <= p) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}

static long find_index(uintptr_t p) {
  long i = floor_index(p);
  return (i >= 0 && p - table[i].base < table[i].size) ? i : -1;
}

/* 0 on success, 1 if [base, base+size) overlaps an existing range, -1 if out
 * of memory. */
static int table_insert(struct si_range r) {
  long i = floor_index(r.base);
  if (i >= 0 && r.base - table[i].base < table[i].size)
    return 1;
  if ((size_t)(i + 1) < table_n && table[i + 1].base - r.base < r.size)
    return 1;
  if (table_n == table_cap) {
    size_t cap = table_cap ? 2 * table_cap : 256;
    struct si_range *t = realloc(table, cap * sizeof(*t));
    if (t == NULL)
      return -1;
    table = t;
    table_cap = cap;
  }
  memmove(&table[i + 2], &table[i + 1], (table_n - (size_t)(i + 1)) * sizeof(*table));
  if (r.kind != SI_MEM_IPC)
    r.id = next_id++;
  table[i + 1] = r;
  table_n++;
  return 0;
}

static void table_remove(long i) {
  memmove(&table[i], &table[i + 1], (table_n - (size_t)i - 1) * sizeof(*table));
  table_n--;
}

struct si_range si_mem_find(const void *p) {
  struct si_range r = {0};
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)p);
  if (i >= 0)
    r = table[i];
  pthread_mutex_unlock(&mem_mu);
  return r;
}

/* An exported allocation's entry, moved to where its bytes live (*p
 * with it). */
static struct si_range to_shared(struct si_range r, const void **p) {
  if (r.shared) {
    *p = (const void *)(r.shared + ((uintptr_t)*p - r.base));
    r.base = r.shared;
  }
  return r;
}

struct si_range si_mem_resolve(const void **p) {
  struct si_range r = {0};
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)*p);
  if (i >= 0)
    r = table[i];
  if (r.kind == SI_MEM_IPC && r.imported) {
    r.kind = SI_MEM_DEVICE; /* another process's memory, mapped here */
  } else if (r.kind == SI_MEM_IPC) {
    uintptr_t off = (uintptr_t)*p - r.base;
    long j = find_index(r.target);
    if (j >= 0 && table[j].base == r.target && table[j].id == r.id) {
      *p = (const void *)(r.target + off);
      r = to_shared(table[j], p);
    } else { /* the exporter freed it: nothing is mapped any more */
      r = (struct si_range){.base = (uintptr_t)*p, .kind = SI_MEM_DEVICE};
    }
  } else {
    r = to_shared(r, p);
  }
  pthread_mutex_unlock(&mem_mu);
  return r;
}

static int counted(int kind) {
  return kind == SI_MEM_DEVICE || kind == SI_MEM_MANAGED || kind == SI_MEM_ARRAY;
}

/* ---- allocation ---------------------------------------------------------------- */

static cudaError_t alloc_range(void **out, size_t size, int kind, int owned) {
  if (out == NULL)
    return cudaErrorInvalidValue;
  if (size == 0) {
    *out = NULL;
    return cudaSuccess;
  }
  int count = owned && counted(kind);
  pthread_mutex_lock(&mem_mu);
  uint64_t cap = si_config()->mem_bytes;
  if (count && (size > cap || used_bytes > cap - size)) {
    pthread_mutex_unlock(&mem_mu);
    return cudaErrorMemoryAllocation;
  }
  used_bytes += count ? size : 0; /* reserve before the (slow) allocation */
  pthread_mutex_unlock(&mem_mu);

  void *p = NULL;
  size_t align = kind == SI_MEM_PINNED ? PINNED_ALIGN : DEVICE_ALIGN;
  int rc = posix_memalign(&p, align, size);
  pthread_mutex_lock(&mem_mu);
  if (rc == 0 && table_insert((struct si_range){.base = (uintptr_t)p,
                                                .size = size,
                                                .kind = (uint8_t)kind,
                                                .owned = (uint8_t)owned}) != 0) {
    free(p);
    rc = -1;
  }
  if (rc != 0)
    used_bytes -= count ? size : 0;
  pthread_mutex_unlock(&mem_mu);
  if (rc != 0)
    return cudaErrorMemoryAllocation;
  *out = p;
  return cudaSuccess;
}

static size_t page_round(size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return (n + pg - 1) / pg * pg;
}

/* Graph memory at table[i] is freed (caller holds mem_mu): its pages are
 * dropped (the next allocation reads zeroes, not the old bytes) and, when
 * no graph references it any more, its address range is released. */
static void graph_unmap_locked(long i) {
  struct si_range r = table[i];
  table[i].live = 0;
  used_bytes -= r.size;
  madvise((void *)r.base, page_round(r.size), MADV_DONTNEED);
  if (r.refs == 0) {
    table_remove(i);
    munmap((void *)r.base, page_round(r.size));
  }
}

/* An exported allocation's memfd, unmapped and closed (importers keep
 * their mappings; later opens of its handles fail). */
static void unshare_range(const struct si_range *r) {
  if (r->shared) {
    munmap((void *)r->shared, page_round(r->size));
    close(r->shared_fd);
  }
}

/* Free the allocation based at p if its kind is in kinds_mask (1 << kind).
 * Graph memory must be allocated (between its alloc node's run and a
 * free), as on hardware. */
static cudaError_t free_range(void *p, unsigned kinds_mask) {
  if (p == NULL)
    return cudaSuccess;
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)p);
  if (i < 0 || table[i].base != (uintptr_t)p || !table[i].owned ||
      !(kinds_mask & (1u << table[i].kind)) || (table[i].graph && !table[i].live)) {
    pthread_mutex_unlock(&mem_mu);
    return cudaErrorInvalidValue;
  }
  if (table[i].graph) {
    graph_unmap_locked(i);
    pthread_mutex_unlock(&mem_mu);
    return cudaSuccess;
  }
  if (counted(table[i].kind))
    used_bytes -= table[i].size;
  struct si_range r = table[i];
  table_remove(i);
  pthread_mutex_unlock(&mem_mu);
  unshare_range(&r);
  free(p);
  return cudaSuccess;
}

/* ---- graph memory (graph.c's alloc and free nodes) ------------------------------ */

cudaError_t si_mem_graph_reserve(void **out, size_t size, uint64_t graph_id) {
  if (size == 0 || size > si_config()->mem_bytes)
    return size == 0 ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
  /* Address space only: untouched pages cost nothing. */
  void *va = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (va == MAP_FAILED)
    return cudaErrorMemoryAllocation;
  pthread_mutex_lock(&mem_mu);
  int rc = table_insert((struct si_range){.base = (uintptr_t)va,
                                          .size = size,
                                          .kind = SI_MEM_DEVICE,
                                          .owned = 1,
                                          .graph = 1,
                                          .gowner = graph_id});
  pthread_mutex_unlock(&mem_mu);
  if (rc != 0) {
    munmap(va, page_round(size));
    return cudaErrorMemoryAllocation;
  }
  *out = va;
  return cudaSuccess;
}

/* The graph memory range based at p (caller holds mem_mu), or -1. */
static long graph_index(const void *p) {
  long i = find_index((uintptr_t)p);
  return (i >= 0 && table[i].base == (uintptr_t)p && table[i].graph) ? i : -1;
}

void si_mem_graph_ref(void *p, int delta) {
  pthread_mutex_lock(&mem_mu);
  long i = graph_index(p);
  if (i >= 0) {
    table[i].refs = (uint32_t)((int)table[i].refs + delta);
    if (table[i].refs == 0 && !table[i].live) {
      size_t size = table[i].size;
      table_remove(i);
      munmap(p, page_round(size));
    }
  }
  pthread_mutex_unlock(&mem_mu);
}

cudaError_t si_mem_graph_free_check(void *p, uint64_t graph_id) {
  cudaError_t e = cudaErrorInvalidValue;
  pthread_mutex_lock(&mem_mu);
  long i = graph_index(p);
  if (i >= 0) {
    int owner = table[i].gowner == graph_id;
    /* Freed in the owning graph: no other graph may free it, and the
     * reverse. */
    if (!(table[i].gfree & (owner ? 2 : 1))) {
      table[i].gfree |= owner ? 1 : 2;
      e = cudaSuccess;
    }
  }
  pthread_mutex_unlock(&mem_mu);
  return e;
}

cudaError_t si_mem_graph_map(void *p) {
  cudaError_t e = cudaErrorInvalidValue;
  pthread_mutex_lock(&mem_mu);
  long i = graph_index(p);
  uint64_t cap = si_config()->mem_bytes;
  if (i >= 0 && !table[i].live) {
    e = cudaErrorMemoryAllocation;
    if (table[i].size <= cap && used_bytes <= cap - table[i].size) {
      table[i].live = 1;
      used_bytes += table[i].size;
      e = cudaSuccess;
    }
  }
  pthread_mutex_unlock(&mem_mu);
  return e;
}

cudaError_t si_mem_graph_unmap(void *p) {
  cudaError_t e = cudaErrorInvalidValue;
  pthread_mutex_lock(&mem_mu);
  long i = graph_index(p);
  if (i >= 0 && table[i].live) {
    graph_unmap_locked(i);
    e = cudaSuccess;
  }
  pthread_mutex_unlock(&mem_mu);
  return e;
}

int si_mem_graph_live(const void *p) {
  pthread_mutex_lock(&mem_mu);
  long i = graph_index(p);
  int live = i >= 0 && table[i].live;
  pthread_mutex_unlock(&mem_mu);
  return live;
}

int si_mem_fits(uint64_t bytes) {
  pthread_mutex_lock(&mem_mu);
  uint64_t cap = si_config()->mem_bytes;
  int fits = bytes <= cap && used_bytes <= cap - bytes;
  pthread_mutex_unlock(&mem_mu);
  return fits;
}

#define DEVICE_KINDS ((1u << SI_MEM_DEVICE) | (1u << SI_MEM_MANAGED))

cudaError_t si_mem_array_alloc(void **out, size_t bytes) {
  cudaError_t e = alloc_range(out, bytes, SI_MEM_ARRAY, 1);
  if (e == cudaSuccess && *out != NULL)
    memset(*out, 0, bytes);
  return e;
}

void si_mem_array_free(void *p) {
  (void)free_range(p, 1u << SI_MEM_ARRAY);
}

void *si_mem_symbol_alloc(size_t size, int managed) {
  void *p = NULL;
  size = size ? size : 1;
  if (alloc_range(&p, size, managed ? SI_MEM_MANAGED : SI_MEM_DEVICE, 0) != cudaSuccess)
    return NULL;
  memset(p, 0, size);
  return p;
}

void si_mem_symbol_free(void *p) {
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)p);
  if (i >= 0 && table[i].base == (uintptr_t)p && !table[i].owned) {
    table_remove(i);
    free(p);
  }
  pthread_mutex_unlock(&mem_mu);
}

/* At exit: what compute-sanitizer --leak-check full would call leaked. */
__attribute__((destructor)) static void leak_summary(void) {
  const char *on = getenv("GPUTRACE_STANDIN_LEAK_CHECK");
  if (on == NULL || strcmp(on, "1") != 0)
    return;
  uint64_t bytes = 0, blocks = 0;
  pthread_mutex_lock(&mem_mu);
  for (size_t i = 0; i < table_n; i++)
    if (table[i].owned && table[i].kind != SI_MEM_REGISTERED &&
        table[i].kind != SI_MEM_IPC && (!table[i].graph || table[i].live)) {
      bytes += table[i].size;
      blocks++;
    }
  pthread_mutex_unlock(&mem_mu);
  fprintf(stderr, "========= LEAK SUMMARY: %llu bytes leaked in %llu allocations\n",
          (unsigned long long)bytes, (unsigned long long)blocks);
}

void si_mem_reset(void) {
  pthread_mutex_lock(&mem_mu);
  size_t kept = 0;
  for (size_t i = 0; i < table_n; i++) {
    if (!table[i].owned && table[i].kind != SI_MEM_REGISTERED)
      table[kept++] = table[i]; /* symbols survive a reset */
    else if (table[i].kind == SI_MEM_IPC || table[i].graph)
      munmap((void *)table[i].base, page_round(table[i].size ? table[i].size : 1));
    else if (table[i].owned) {
      unshare_range(&table[i]);
      free((void *)table[i].base);
    }
  }
  table_n = kept;
  used_bytes = 0;
  pthread_mutex_unlock(&mem_mu);
}

/* cudaMalloc and its kin, cudaFree and cudaFreeHost are potentially unsafe
 * during stream capture (capture.c): prohibited calls fail first. */
SI_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
  cudaError_t e = si_cap_prohibited();
  return si_ret(e ? e : alloc_range(devPtr, size, SI_MEM_DEVICE, 1));
}

SI_API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return si_ret(e);
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return si_ret(cudaErrorInvalidValue);
  return si_ret(alloc_range(devPtr, size, SI_MEM_MANAGED, 1));
}

SI_API cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                                   size_t height) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return si_ret(e);
  if (devPtr == NULL || pitch == NULL)
    return si_ret(cudaErrorInvalidValue);
  size_t p = (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
  if (p < width || (height != 0 && p > SIZE_MAX / height))
    return si_ret(cudaErrorMemoryAllocation);
  e = alloc_range(devPtr, p * height, SI_MEM_DEVICE, 1);
  if (e == cudaSuccess)
    *pitch = p;
  return si_ret(e);
}

/* Rows padded to the pitch alignment, height x depth of them. */
SI_API cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
                                struct cudaExtent extent) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return si_ret(e);
  if (pitchedDevPtr == NULL)
    return si_ret(cudaErrorInvalidValue);
  size_t w = extent.width, rows = extent.height * extent.depth;
  size_t p = (w + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
  if (p < w || (extent.height != 0 && rows / extent.height != extent.depth) ||
      (rows != 0 && p > SIZE_MAX / rows))
    return si_ret(cudaErrorMemoryAllocation);
  void *ptr = NULL;
  e = alloc_range(&ptr, p * rows, SI_MEM_DEVICE, 1);
  if (e == cudaSuccess)
    *pitchedDevPtr = (struct cudaPitchedPtr){ptr, p, w, extent.height};
  return si_ret(e);
}

SI_API cudaError_t cudaMallocHost(void **ptr, size_t size) {
  cudaError_t e = si_cap_prohibited();
  return si_ret(e ? e : alloc_range(ptr, size, SI_MEM_PINNED, 1));
}

SI_API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  cudaError_t e = si_cap_prohibited();
  if (e != cudaSuccess)
    return si_ret(e);
  if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                          cudaHostAllocWriteCombined))
    return si_ret(cudaErrorInvalidValue);
  e = alloc_range(pHost, size, SI_MEM_PINNED, 1);
  if (e == cudaSuccess && *pHost != NULL && (flags & cudaHostAllocMapped)) {
    pthread_mutex_lock(&mem_mu); /* not yet returned: nobody frees it meanwhile */
    table[find_index((uintptr_t)*pHost)].mapped = 1;
    pthread_mutex_unlock(&mem_mu);
  }
  return si_ret(e);
}

/* Only mapped pinned memory has a device address (the real runtime's rule;
 * the device sees it at the host address, cudaDevAttrCanUseHostPointer...). */
SI_API cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                            unsigned int flags) {
  if (pDevice == NULL || flags != 0)
    return si_ret(cudaErrorInvalidValue);
  struct si_range r = si_mem_find(pHost);
  if ((r.kind != SI_MEM_PINNED && r.kind != SI_MEM_REGISTERED) || !r.mapped)
    return si_ret(cudaErrorInvalidValue);
  *pDevice = pHost;
  return cudaSuccess;
}

SI_API cudaError_t cudaFree(void *devPtr) {
  cudaError_t e = si_cap_prohibited();
  return si_ret(e ? e : free_range(devPtr, DEVICE_KINDS));
}

SI_API cudaError_t cudaFreeHost(void *ptr) {
  cudaError_t e = si_cap_prohibited();
  return si_ret(e ? e : free_range(ptr, 1u << SI_MEM_PINNED));
}

/* ---- registration of program memory ------------------------------------------- */

SI_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  const unsigned valid = cudaHostRegisterPortable | cudaHostRegisterMapped |
                         cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
  if (ptr == NULL || size == 0 || (flags & ~valid) || (uintptr_t)ptr + size < size)
    return si_ret(cudaErrorInvalidValue);
  pthread_mutex_lock(&mem_mu);
  struct si_range r = {.base = (uintptr_t)ptr,
                       .size = size,
                       .kind = SI_MEM_REGISTERED,
                       .mapped = (flags & cudaHostRegisterMapped) != 0};
  int rc = table_insert(r);
  cudaError_t e = cudaSuccess;
  if (rc == 1) {
    /* Overlapping page-locked memory is "already registered"; overlapping
     * device memory is not host memory at all. */
    long i = floor_index((uintptr_t)ptr);
    if (i < 0 || table[i].base + table[i].size <= (uintptr_t)ptr)
      i++;
    int k = table[i].kind;
    e = (k == SI_MEM_PINNED || k == SI_MEM_REGISTERED)
            ? cudaErrorHostMemoryAlreadyRegistered
            : cudaErrorInvalidValue;
  } else if (rc < 0) {
    e = cudaErrorMemoryAllocation;
  }
  pthread_mutex_unlock(&mem_mu);
  return si_ret(e);
}

SI_API cudaError_t cudaHostUnregister(void *ptr) {
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)ptr);
  cudaError_t e = cudaErrorHostMemoryNotRegistered;
  if (i >= 0 && table[i].base == (uintptr_t)ptr && table[i].kind == SI_MEM_REGISTERED) {
    table_remove(i);
    e = cudaSuccess;
  }
  pthread_mutex_unlock(&mem_mu);
  return si_ret(e);
}

/* ---- stream-ordered allocation ------------------------------------------------ */

/* In a capturing stream the allocation is a graph allocation: an alloc
 * node whose address is reserved now (graph memory, above); a free must
 * then name a graph allocation (a free node). */
static cudaError_t malloc_async(void **ptr, size_t size, cudaMemPool_t pool,
                                cudaStream_t stream, int per_thread) {
  if (pool != NULL && pool != (cudaMemPool_t)&default_pool)
    return cudaErrorInvalidValue;
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any()) && ptr != NULL && size != 0) {
    struct si_node_desc d = {.type = cudaGraphNodeTypeMemAlloc, .u.mem = {NULL, size}};
    int captured;
    cudaError_t e = si_cap_op(s, &d, cudaErrorStreamCaptureUnsupported, &captured);
    if (e == cudaSuccess && captured)
      *ptr = d.u.mem.ptr;
    if (e != cudaSuccess || captured)
      return e;
  }
  return alloc_range(ptr, size, SI_MEM_DEVICE, 1);
}

SI_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream) {
  return si_ret(malloc_async(devPtr, size, NULL, hStream, 0));
}

SI_API cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size,
                                        cudaStream_t hStream) {
  return si_ret(malloc_async(devPtr, size, NULL, hStream, 1));
}

SI_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                           cudaStream_t stream) {
  if (memPool == NULL)
    return si_ret(cudaErrorInvalidValue);
  return si_ret(malloc_async(ptr, size, memPool, stream, 0));
}

SI_API cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
                                                cudaMemPool_t memPool,
                                                cudaStream_t stream) {
  if (memPool == NULL)
    return si_ret(cudaErrorInvalidValue);
  return si_ret(malloc_async(ptr, size, memPool, stream, 1));
}

static cudaError_t free_async(void *p, cudaStream_t stream, int per_thread) {
  struct si_stream *s = si_stream_resolve(stream, per_thread);
  if (s == NULL)
    return cudaErrorInvalidResourceHandle;
  if (SI_UNLIKELY(si_cap_any()) && p != NULL) {
    struct si_node_desc d = {.type = cudaGraphNodeTypeMemFree, .u.mem = {p, 0}};
    int captured;
    cudaError_t e = si_cap_op(s, &d, cudaErrorStreamCaptureUnsupported, &captured);
    if (e != cudaSuccess || captured)
      return e;
  }
  return free_range(p, 1u << SI_MEM_DEVICE);
}

SI_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream) {
  return si_ret(free_async(devPtr, hStream, 0));
}

SI_API cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream) {
  return si_ret(free_async(devPtr, hStream, 1));
}

SI_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  if (memPool == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (device != 0)
    return si_ret(cudaErrorInvalidDevice);
  *memPool = (cudaMemPool_t)&default_pool;
  return cudaSuccess;
}

/* The default pool's settable attributes are stored (mem_mu); nothing reads
 * them: stream-ordered allocations take effect at the call and no memory
 * is cached, so there is nothing to release or reuse. */
static int pool_reuse[3] = {1, 1, 1}; /* the three cudaMemPoolReuse* flags */
static uint64_t pool_release_threshold;

SI_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                           enum cudaMemPoolAttr attr, void *value) {
  if (memPool != (cudaMemPool_t)&default_pool || value == NULL)
    return si_ret(cudaErrorInvalidValue);
  cudaError_t e = cudaSuccess;
  pthread_mutex_lock(&mem_mu);
  switch (attr) {
  case cudaMemPoolReuseFollowEventDependencies:
  case cudaMemPoolReuseAllowOpportunistic:
  case cudaMemPoolReuseAllowInternalDependencies:
    pool_reuse[attr - cudaMemPoolReuseFollowEventDependencies] = *(int *)value != 0;
    break;
  case cudaMemPoolAttrReleaseThreshold:
    pool_release_threshold = *(uint64_t *)value;
    break;
  case cudaMemPoolAttrReservedMemHigh: /* high watermarks: only reset to 0 */
  case cudaMemPoolAttrUsedMemHigh:
    e = *(uint64_t *)value == 0 ? cudaSuccess : cudaErrorInvalidValue;
    break;
  default:
    e = cudaErrorInvalidValue;
    break;
  }
  pthread_mutex_unlock(&mem_mu);
  return si_ret(e);
}

/* ---- queries ---------------------------------------------------------------------- */

SI_API cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  if (free_bytes == NULL || total == NULL)
    return si_ret(cudaErrorInvalidValue);
  pthread_mutex_lock(&mem_mu);
  uint64_t cap = si_config()->mem_bytes;
  *total = (size_t)cap;
  *free_bytes = (size_t)(cap - used_bytes);
  pthread_mutex_unlock(&mem_mu);
  return cudaSuccess;
}

SI_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                            const void *ptr) {
  if (attributes == NULL)
    return si_ret(cudaErrorInvalidValue);
  struct si_range r = si_mem_find(ptr);
  memset(attributes, 0, sizeof(*attributes));
  void *p = (void *)(uintptr_t)ptr;
  switch (r.kind) {
  case SI_MEM_DEVICE:
  case SI_MEM_ARRAY:
  case SI_MEM_IPC:
    *attributes =
        (struct cudaPointerAttributes){.type = cudaMemoryTypeDevice, .devicePointer = p};
    break;
  case SI_MEM_MANAGED:
    *attributes = (struct cudaPointerAttributes){
        .type = cudaMemoryTypeManaged, .devicePointer = p, .hostPointer = p};
    break;
  case SI_MEM_PINNED:
  case SI_MEM_REGISTERED: /* mapped at the same address (unified addressing) */
    *attributes = (struct cudaPointerAttributes){
        .type = cudaMemoryTypeHost, .devicePointer = p, .hostPointer = p};
    break;
  default:
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = cudaInvalidDeviceId;
    break;
  }
  return cudaSuccess;
}

/* ---- IPC ------------------------------------------------------------------------ */

#define IPC_MAGIC 0x50494754u /* "TGIP" */

struct ipc_handle { /* what a cudaIpcMemHandle_t holds here */
  uint32_t magic;
  uint32_t pid;
  uint64_t base, size, id;
  int32_t fd; /* the exporter's memfd of the allocation */
  uint32_t pad;
  uint64_t ino; /* and its inode, so that a reused descriptor is refused */
};
_Static_assert(sizeof(struct ipc_handle) <= sizeof(cudaIpcMemHandle_t), "fits a handle");

/* Table entry i's bytes moved into a memfd mapped here (caller holds
 * mem_mu): 0, or -1 when the memfd cannot be made. */
static int share_locked(long i) {
  if (table[i].shared)
    return 0;
  size_t len = page_round(table[i].size);
  int fd = memfd_create("gputrace-standin-ipc-mem", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  void *va = ftruncate(fd, (off_t)len) == 0
                 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                 : MAP_FAILED;
  if (va == MAP_FAILED) {
    close(fd);
    return -1;
  }
  memcpy(va, (void *)table[i].base, table[i].size);
  table[i].shared = (uintptr_t)va;
  table[i].shared_fd = fd;
  return 0;
}

SI_API cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr) {
  if (handle == NULL)
    return si_ret(cudaErrorInvalidValue);
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)devPtr);
  int ok = i >= 0 && table[i].base == (uintptr_t)devPtr && table[i].owned &&
           table[i].kind == SI_MEM_DEVICE && !table[i].graph;
  struct ipc_handle h = {IPC_MAGIC, (uint32_t)getpid(), 0, 0, 0, -1, 0, 0};
  cudaError_t e = ok ? cudaSuccess : cudaErrorInvalidValue;
  struct stat st;
  if (ok && (share_locked(i) != 0 || fstat(table[i].shared_fd, &st) != 0))
    e = cudaErrorMemoryAllocation;
  if (e == cudaSuccess) {
    h.base = table[i].base;
    h.size = table[i].size;
    h.id = table[i].id;
    h.fd = table[i].shared_fd;
    h.ino = (uint64_t)st.st_ino;
  }
  pthread_mutex_unlock(&mem_mu);
  if (e != cudaSuccess) /* only the base of a cudaMalloc allocation can be exported */
    return si_ret(e);
  memset(handle, 0, sizeof *handle);
  memcpy(handle, &h, sizeof h);
  return cudaSuccess;
}

/* Another process's allocation, mapped from its memfd: NULL when the
 * process, the descriptor or that file is gone. */
static void *open_foreign(const struct ipc_handle *h) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%d", (unsigned)h->pid, (int)h->fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  size_t len = page_round((size_t)h->size);
  void *va = MAP_FAILED;
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_ino == h->ino && (size_t)st.st_size == len)
    va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return va == MAP_FAILED ? NULL : va;
}

SI_API cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                        unsigned int flags) {
  struct ipc_handle h;
  memcpy(&h, &handle, sizeof h);
  if (devPtr == NULL || (flags & ~(unsigned)cudaIpcMemLazyEnablePeerAccess))
    return si_ret(cudaErrorInvalidValue);
  if (h.magic != IPC_MAGIC || h.size == 0)
    return si_ret(cudaErrorMapBufferObjectFailed);
  int foreign = h.pid != (uint32_t)getpid();
  void *va = foreign ? open_foreign(&h)
                     : mmap(NULL, page_round(h.size), PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (va == NULL || va == MAP_FAILED)
    return si_ret(foreign ? cudaErrorMapBufferObjectFailed : cudaErrorMemoryAllocation);
  pthread_mutex_lock(&mem_mu);
  long i = foreign ? -1 : find_index((uintptr_t)h.base);
  cudaError_t e = cudaSuccess;
  if (!foreign && (i < 0 || table[i].base != h.base || table[i].id != h.id))
    e = cudaErrorMapBufferObjectFailed; /* freed since the handle was made */
  else if (table_insert((struct si_range){.base = (uintptr_t)va,
                                          .size = (size_t)h.size,
                                          .kind = SI_MEM_IPC,
                                          .owned = 1,
                                          .target = foreign ? 0 : (uintptr_t)h.base,
                                          .id = h.id,
                                          .imported = (uint8_t)foreign}) != 0)
    e = cudaErrorMemoryAllocation;
  pthread_mutex_unlock(&mem_mu);
  if (e != cudaSuccess) {
    munmap(va, page_round(h.size));
    return si_ret(e);
  }
  *devPtr = va;
  return cudaSuccess;
}

SI_API cudaError_t cudaIpcCloseMemHandle(void *devPtr) {
  pthread_mutex_lock(&mem_mu);
  long i = find_index((uintptr_t)devPtr);
  size_t size = 0;
  if (i >= 0 && table[i].base == (uintptr_t)devPtr && table[i].kind == SI_MEM_IPC) {
    size = table[i].size;
    table_remove(i);
  }
  pthread_mutex_unlock(&mem_mu);
  if (size == 0)
    return si_ret(cudaErrorInvalidValue);
  munmap(devPtr, page_round(size));
  return cudaSuccess;
}
