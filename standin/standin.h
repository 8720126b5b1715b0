/* standin.h — internal interface shared by the files of the CPU stand-in for
 * libcudart (libcudart.so.13 / libcudart.so.12 built from the same sources).
 *
 * Contract:
 *  - The CUDA types and the plain API prototypes come from the toolkit's
 *    cuda_runtime_api.h, included with default visibility so that every API
 *    function defined here is exported; everything else is hidden
 *    (-fvisibility=hidden) and the version script exports only cuda* and
 *    __cuda* in the node libcudart.so.<major>.
 *  - The _ptds/_ptsz twins are declared with __typeof__ of their plain twin,
 *    so their signatures cannot drift from the header's.
 *  - No file calls an exported API function: exported functions are thin
 *    wrappers over the hidden si_* functions below, so internal calls never
 *    go through the PLT (a profiler that interposes cudaLaunchKernel must not
 *    see calls made by __cudaLaunchKernel, as with the real runtime).
 *  - Every exported function returns through si_ret(), which records errors
 *    as the calling thread's last error.
 */
#ifndef GPUTRACE_STANDIN_H
#define GPUTRACE_STANDIN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* We implement the deprecated entry points too; defining them must not warn. */
#define CUDA_ENABLE_DEPRECATED 1
#pragma GCC visibility push(default)
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#pragma GCC visibility pop

#ifndef SI_CUDART_MAJOR
#define SI_CUDART_MAJOR 13
#endif
#if SI_CUDART_MAJOR >= 13
#define SI_RUNTIME_VERSION 13000
#else
#define SI_RUNTIME_VERSION 12080
#endif
/* The simulated driver is new enough for either runtime. */
#define SI_DRIVER_VERSION 13000

#define SI_API __attribute__((visibility("default")))
#define SI_LIKELY(x) __builtin_expect(!!(x), 1)
#define SI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- per-thread default stream twins (same signatures as the plain API) -- */
#pragma GCC visibility push(default)
extern __typeof__(cudaMemcpy) cudaMemcpy_ptds;
extern __typeof__(cudaMemcpy2D) cudaMemcpy2D_ptds;
extern __typeof__(cudaMemcpyToSymbol) cudaMemcpyToSymbol_ptds;
extern __typeof__(cudaMemcpyFromSymbol) cudaMemcpyFromSymbol_ptds;
extern __typeof__(cudaMemset) cudaMemset_ptds;
extern __typeof__(cudaMemset2D) cudaMemset2D_ptds;
extern __typeof__(cudaMemcpyAsync) cudaMemcpyAsync_ptsz;
extern __typeof__(cudaMemcpy2DAsync) cudaMemcpy2DAsync_ptsz;
extern __typeof__(cudaMemcpyToSymbolAsync) cudaMemcpyToSymbolAsync_ptsz;
extern __typeof__(cudaMemcpyFromSymbolAsync) cudaMemcpyFromSymbolAsync_ptsz;
extern __typeof__(cudaMemsetAsync) cudaMemsetAsync_ptsz;
extern __typeof__(cudaMemset2DAsync) cudaMemset2DAsync_ptsz;
extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaMallocFromPoolAsync) cudaMallocFromPoolAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
extern __typeof__(cudaLaunchKernel) cudaLaunchKernel_ptsz;
extern __typeof__(cudaLaunchKernelExC) cudaLaunchKernelExC_ptsz;
extern __typeof__(cudaLaunchCooperativeKernel) cudaLaunchCooperativeKernel_ptsz;
extern __typeof__(cudaLaunchHostFunc) cudaLaunchHostFunc_ptsz;
extern __typeof__(cudaGraphLaunch) cudaGraphLaunch_ptsz;
extern __typeof__(cudaStreamSynchronize) cudaStreamSynchronize_ptsz;
extern __typeof__(cudaStreamQuery) cudaStreamQuery_ptsz;
extern __typeof__(cudaStreamWaitEvent) cudaStreamWaitEvent_ptsz;
extern __typeof__(cudaStreamGetPriority) cudaStreamGetPriority_ptsz;
extern __typeof__(cudaStreamSetAttribute) cudaStreamSetAttribute_ptsz;
extern __typeof__(cudaStreamGetAttribute) cudaStreamGetAttribute_ptsz;
extern __typeof__(cudaEventRecord) cudaEventRecord_ptsz;
extern __typeof__(cudaEventRecordWithFlags) cudaEventRecordWithFlags_ptsz;
extern __typeof__(cudaGetDriverEntryPoint) cudaGetDriverEntryPoint_ptsz;
extern __typeof__(cudaGetDriverEntryPointByVersion) cudaGetDriverEntryPointByVersion_ptsz;
extern __typeof__(cudaMemcpy3D) cudaMemcpy3D_ptds;
extern __typeof__(cudaMemcpy3DAsync) cudaMemcpy3DAsync_ptsz;
extern __typeof__(cudaMemcpy3DPeer) cudaMemcpy3DPeer_ptds;
extern __typeof__(cudaMemcpy3DPeerAsync) cudaMemcpy3DPeerAsync_ptsz;
extern __typeof__(cudaMemcpyToArray) cudaMemcpyToArray_ptds;
extern __typeof__(cudaMemcpyToArrayAsync) cudaMemcpyToArrayAsync_ptsz;
extern __typeof__(cudaMemcpyFromArray) cudaMemcpyFromArray_ptds;
extern __typeof__(cudaMemcpyFromArrayAsync) cudaMemcpyFromArrayAsync_ptsz;
extern __typeof__(cudaMemcpyArrayToArray) cudaMemcpyArrayToArray_ptds;
extern __typeof__(cudaMemcpy2DToArray) cudaMemcpy2DToArray_ptds;
extern __typeof__(cudaMemcpy2DToArrayAsync) cudaMemcpy2DToArrayAsync_ptsz;
extern __typeof__(cudaMemcpy2DFromArray) cudaMemcpy2DFromArray_ptds;
extern __typeof__(cudaMemcpy2DFromArrayAsync) cudaMemcpy2DFromArrayAsync_ptsz;
extern __typeof__(cudaMemcpy2DArrayToArray) cudaMemcpy2DArrayToArray_ptds;
extern __typeof__(cudaMemcpyBatchAsync) cudaMemcpyBatchAsync_ptsz;
extern __typeof__(cudaMemcpy3DBatchAsync) cudaMemcpy3DBatchAsync_ptsz;
extern __typeof__(cudaMemPrefetchAsync) cudaMemPrefetchAsync_ptsz;
extern __typeof__(cudaMemPrefetchBatchAsync) cudaMemPrefetchBatchAsync_ptsz;
extern __typeof__(cudaMemset3D) cudaMemset3D_ptds;
extern __typeof__(cudaMemset3DAsync) cudaMemset3DAsync_ptsz;
extern __typeof__(cudaStreamAddCallback) cudaStreamAddCallback_ptsz;
extern __typeof__(cudaGraphUpload) cudaGraphUpload_ptsz;
extern __typeof__(cudaGraphInstantiateWithParams) cudaGraphInstantiateWithParams_ptsz;
extern __typeof__(cudaStreamBeginCapture) cudaStreamBeginCapture_ptsz;
extern __typeof__(cudaStreamBeginCaptureToGraph) cudaStreamBeginCaptureToGraph_ptsz;
extern __typeof__(cudaStreamEndCapture) cudaStreamEndCapture_ptsz;
extern __typeof__(cudaStreamIsCapturing) cudaStreamIsCapturing_ptsz;
#if SI_CUDART_MAJOR >= 13 /* CUDA 12's take fewer arguments (compat12.c) */
extern __typeof__(cudaStreamGetCaptureInfo) cudaStreamGetCaptureInfo_ptsz;
#endif

/* Registration ABI used by nvcc-generated host code (crt/host_runtime.h and
 * crt/device_functions.h declare these only for C++). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid,
                            uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size, int constant,
                       int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                              char *deviceAddress, const char *deviceName, int ext,
                              size_t size, int constant, int global);
void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName, char *hostVar,
                           size_t size);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *stub);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                               void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream);
#pragma GCC visibility pop

/* ---- errors.c ------------------------------------------------------------ */
/* Record err as this thread's last error (unless it is cudaSuccess or
 * cudaErrorNotReady, which the real runtime does not record) and return it. */
cudaError_t si_ret(cudaError_t err);

/* ---- timeline.c: configuration ------------------------------------------ */
struct si_config {
  int timeline;              /* GPUTRACE_STANDIN_TIMELINE (0 = off) */
  uint64_t kernel_base_ns;   /* GPUTRACE_STANDIN_KERNEL_BASE_NS */
  uint64_t kernel_ps_thread; /* GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD */
  uint64_t copy_latency_ns;  /* GPUTRACE_STANDIN_COPY_LATENCY_NS */
  double pageable_gbps;      /* GPUTRACE_STANDIN_PAGEABLE_GBPS */
  double pinned_gbps;        /* GPUTRACE_STANDIN_PINNED_GBPS */
  double dtod_gbps;          /* GPUTRACE_STANDIN_DTOD_GBPS */
  double memset_gbps;        /* GPUTRACE_STANDIN_MEMSET_GBPS */
  uint64_t graph_ns;         /* GPUTRACE_STANDIN_GRAPH_NS */
  uint64_t mem_bytes;        /* GPUTRACE_STANDIN_MEM_BYTES */
  uint64_t launch_host_ns;   /* GPUTRACE_STANDIN_LAUNCH_HOST_NS */
};
extern struct si_config si_cfg;
extern int si_cfg_ready;
void si_config_init(void);
static inline const struct si_config *si_config(void) {
  if (SI_UNLIKELY(!__atomic_load_n(&si_cfg_ready, __ATOMIC_ACQUIRE)))
    si_config_init();
  return &si_cfg;
}

/* ---- timeline.c: the simulated device ------------------------------------ */
enum si_stream_kind { SI_STREAM_LEGACY, SI_STREAM_PER_THREAD, SI_STREAM_USER };

#define SI_MAGIC_STREAM 0x5354524du /* "STRM" */
#define SI_MAGIC_EVENT 0x45564e54u  /* "EVNT" */
#define SI_MAGIC_GRAPH 0x47524148u  /* "GRAH" */
#define SI_MAGIC_GEXEC 0x47455845u  /* "GEXE" */
#define SI_MAGIC_NODE 0x474e4f44u   /* "GNOD" */

struct si_node;  /* graph.c */
struct si_graph; /* graph.c */

/* A stream. tail_ns is guarded by the timeline lock. Objects are never
 * returned to malloc (see pool.c), so a stale handle reads a cleared magic.
 * The capture fields are guarded by the graph lock (si_graph_lock). */
struct si_stream {
  uint32_t magic;
  uint8_t kind;     /* enum si_stream_kind */
  uint8_t blocking; /* synchronizes with the legacy stream */
  unsigned flags;
  int priority;
  uint64_t tail_ns; /* when the work queued so far completes */
  /* Stream capture (capture.c): the id of the capture sequence the stream
   * takes part in (it captures only while that sequence is active, so
   * ending a capture ends it on every stream that joined it), and its
   * dependency set: the nodes the next captured operation depends on. */
  uint64_t cap_id;
  struct si_node **deps;
  size_t ndeps, deps_cap;
  cudaGraphEdgeData *edata; /* ndeps zeroed entries (cudaStreamGetCaptureInfo) */
  size_t edata_cap;
  /* cudaStreamSetAttribute's values (zero: the default), read by nothing. */
  struct cudaAccessPolicyWindow apw;
  int sync_policy; /* enum cudaSynchronizationPolicy, 0: cudaSyncPolicyAuto */
  int mem_domain;  /* cudaLaunchMemSyncDomain */
  uint8_t dmap_set;
  cudaLaunchMemSyncDomainMap dmap; /* when dmap_set; else {0, 1} */
};

/* An event. ts and cap_id are atomic; cap_deps is guarded by the graph lock. */
struct si_event {
  uint32_t magic;
  unsigned flags;
  uint64_t ts;               /* simulated time of the last record, 0 = never */
  uint64_t cap_id;           /* the capture its last record was in, 0 = none */
  struct si_node **cap_deps; /* the recording stream's dependency set then */
  size_t cap_ndeps;
  /* An interprocess event with a handle (ipc_event.c): its time lives in a
   * page shared with the other processes that opened it, ts is unused. */
  uint64_t *shared_ts; /* atomic pointer; NULL: a process-local event */
  int ipc_fd1;         /* the page's memfd + 1 (0: none) */
};

enum si_engine { SI_ENG_NONE = -1, SI_ENG_COMPUTE = 0, SI_ENG_H2D, SI_ENG_D2H, SI_ENG_N };
#define SI_OP_DEVICE_WIDE 1u /* also wait for every stream (cudaMemcpyPeer) */

uint64_t si_now(void);
void si_sleep_until(uint64_t t_ns);
/* Wait until t_ns without a sleep's slack: sleep, then spin the last 200 us
 * (host functions and host nodes: their return is the stream's time). */
void si_wait_until_precise(uint64_t t_ns);
/* Queue an op of dur_ns on stream s (and engine e unless SI_ENG_NONE) and
 * return its simulated end (its start is end - dur_ns). Only call with the
 * timeline on. */
uint64_t si_tl_enqueue(struct si_stream *s, int engine, uint64_t dur_ns, unsigned flags);
/* The same, submitted at `now` (a graph launch submits its nodes at once). */
uint64_t si_tl_enqueue_at(struct si_stream *s, int engine, uint64_t dur_ns,
                          unsigned flags, uint64_t now);
uint64_t si_tl_tail(struct si_stream *s);              /* current tail of s */
void si_tl_extend(struct si_stream *s, uint64_t t_ns); /* tail = max(tail,t) */
uint64_t si_tl_device_tail(void);                      /* all streams */
uint64_t si_dur_kernel(dim3 grid, dim3 block);
uint64_t si_dur_bytes(uint64_t bytes, double gbps);

/* ---- streams_events.c ---------------------------------------------------- */
/* Resolve a stream handle: NULL means the per-thread default stream when
 * per_thread is set (a _ptsz/_ptds entry point), else the legacy stream.
 * Returns NULL for an invalid handle. */
struct si_stream *si_stream_resolve(cudaStream_t h, int per_thread);
struct si_event *si_event_resolve(cudaEvent_t h); /* NULL: invalid */
/* Record ts as the event's time, outside any capture (graph event nodes). */
void si_event_stamp(struct si_event *e, uint64_t ts);
/* The event's last recorded time (0: never), wherever it lives. */
static inline uint64_t si_event_ts(const struct si_event *e) {
  uint64_t *shared = __atomic_load_n(&e->shared_ts, __ATOMIC_ACQUIRE);
  return __atomic_load_n(shared != NULL ? shared : &e->ts, __ATOMIC_ACQUIRE);
}
/* A new event (cudaEventCreateWithFlags' checks done), or NULL. */
struct si_event *si_event_new(unsigned flags);
/* ipc_event.c: drop an event's shared page (cudaEventDestroy). */
void si_ipc_event_release(struct si_event *e);
void si_streams_events_reset(void); /* cudaDeviceReset */
cudaError_t si_event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t end);

/* ---- memory.c ------------------------------------------------------------ */
enum si_mem_kind {
  SI_MEM_NONE = 0,   /* not in the table: pageable host memory */
  SI_MEM_DEVICE,     /* cudaMalloc*, symbols */
  SI_MEM_MANAGED,    /* cudaMallocManaged, __managed__ */
  SI_MEM_PINNED,     /* cudaMallocHost / cudaHostAlloc */
  SI_MEM_REGISTERED, /* cudaHostRegister'ed range (not owned) */
  SI_MEM_ARRAY,      /* the storage of a CUDA array (array.c): device memory */
  SI_MEM_IPC,        /* cudaIpcOpenMemHandle: maps another allocation, no storage */
};
struct si_range {
  uintptr_t base;
  size_t size;
  uint8_t kind;     /* enum si_mem_kind */
  uint8_t owned;    /* freeable by cudaFree/cudaFreeHost (not a symbol) */
  uint8_t graph;    /* graph memory: reserved by an alloc node (mmap'd) */
  uint8_t live;     /* graph memory: allocated (between alloc and free) */
  uint8_t gfree;    /* graph memory: freed by a node of 1: its owner, 2: another graph */
  uint8_t mapped;   /* pinned/registered: cudaHostAllocMapped / cudaHostRegisterMapped */
  uint32_t refs;    /* graph memory: graphs referencing it */
  uint64_t gowner;  /* graph memory: the graph of its alloc node */
  uintptr_t target; /* SI_MEM_IPC: base of the allocation it maps */
  uint64_t id;      /* unique per allocation; an IPC mapping: its target's */
  uintptr_t shared; /* exported device memory: where its bytes live now (memfd) */
  int shared_fd;    /* and that memfd's descriptor (when .shared) */
  uint8_t imported; /* SI_MEM_IPC of another process's memory: bytes at base */
};
/* The table entry containing p, or kind SI_MEM_NONE. */
struct si_range si_mem_find(const void *p);
/* si_mem_find(*p), where an address in an IPC mapping stands for the same
 * offset in the allocation it maps: *p is moved there and that allocation's
 * entry returned (kind SI_MEM_DEVICE and size 0 when it was freed). */
struct si_range si_mem_resolve(const void **p);
/* The storage of a CUDA array: zeroed, counted as device memory, not
 * freeable by cudaFree. cudaErrorMemoryAllocation past the capacity. */
cudaError_t si_mem_array_alloc(void **out, size_t bytes);
void si_mem_array_free(void *p);
/* Allocate a symbol's backing store (device or managed), zeroed; NULL on
 * failure. Not counted against capacity, not freeable by the program. */
void *si_mem_symbol_alloc(size_t size, int managed);
void si_mem_symbol_free(void *p);
void si_mem_reset(void); /* cudaDeviceReset: free program allocations */
/* Graph memory (alloc and free nodes, graph.c). An allocation node reserves
 * its address when it is created: a device range in the table, kind
 * SI_MEM_DEVICE with .graph set, that stays reserved while a graph holds a
 * reference to it (si_mem_graph_ref) or the memory is allocated. The memory
 * is allocated (counted against the capacity, freeable by cudaFree,
 * cudaFreeAsync or a free node) from the run of its alloc node until it is
 * freed. graph_id names the graph that owns the alloc node. */
cudaError_t si_mem_graph_reserve(void **out, size_t size, uint64_t graph_id);
void si_mem_graph_ref(void *p, int delta);
/* A free node for p in graph graph_id: p must be a reserved base; an
 * allocation freed in its owning graph cannot be freed by another graph,
 * nor the reverse (cudaErrorInvalidValue). */
cudaError_t si_mem_graph_free_check(void *p, uint64_t graph_id);
cudaError_t si_mem_graph_map(void *p);   /* alloc node runs */
cudaError_t si_mem_graph_unmap(void *p); /* free node runs */
int si_mem_graph_live(const void *p);    /* allocated now */
int si_mem_fits(uint64_t bytes);         /* bytes more fit the capacity */

/* ---- copy.c: copies and memsets of pitched 3D regions -------------------- */
enum si_loc { SI_LOC_PAGEABLE, SI_LOC_PINNED, SI_LOC_DEVICE, SI_LOC_MANAGED };
enum si_copy_mode {
  SI_COPY_SYNC,      /* cudaMemcpy*: waits unless device-to-device */
  SI_COPY_ASYNC,     /* cudaMemcpy*Async: waits only for a pageable host side */
  SI_COPY_PEER,      /* cudaMemcpyPeer: device-wide ordering, no host wait */
  SI_COPY_PEER_ASYNC /* cudaMemcpyPeerAsync */
};
/* `depth` slices of `height` rows of `width` bytes; rows `pitch` apart,
 * slices `slice` apart. */
struct si_copy {
  void *dst;
  size_t dpitch, dslice;
  const void *src;
  size_t spitch, sslice;
  size_t width, height, depth;
};
/* Where [*p, *p + extent) lives; a device range must fit its allocation.
 * An IPC mapping is resolved (*p moved onto the memory it maps). */
cudaError_t si_locate(const void **p, size_t extent, enum si_loc *out);
/* Resolve cudaMemcpyDefault from the two sides and check an explicit kind
 * against them; *host gets the host side's location. */
cudaError_t si_copy_kind(enum si_loc dst, enum si_loc src, enum cudaMemcpyKind *kind,
                         enum si_loc *host);
/* The duration of a copy of `bytes` and its *engine (from the kind and the
 * host side's location). */
uint64_t si_copy_cost(uint64_t bytes, enum cudaMemcpyKind kind, enum si_loc host,
                      int *engine);
/* Queue a copy of `bytes` on s (timeline on): its engine and bandwidth from
 * the kind and host side; returns whether the host waits until *end. */
int si_copy_schedule(uint64_t bytes, enum cudaMemcpyKind kind, enum si_loc host,
                     struct si_stream *s, enum si_copy_mode mode, uint64_t *end);
/* What si_copy_run checks before it does anything: pointers, pitches, the
 * sides against the kind (resolved in *kind; *host the host side), a peer
 * copy device-to-device. IPC mappings in c are resolved. */
cudaError_t si_copy_check(struct si_copy *c, enum cudaMemcpyKind *kind, enum si_loc *host,
                          enum si_copy_mode mode);
/* Validate, schedule and perform a copy (the bytes move at the call). */
cudaError_t si_copy_run(struct si_copy *c, enum cudaMemcpyKind kind, cudaStream_t stream,
                        int per_thread, enum si_copy_mode mode);
/* Move the bytes of a checked copy. */
void si_copy_move(const struct si_copy *c);
/* si_copy_run of count contiguous bytes. */
cudaError_t si_copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                      cudaStream_t stream, int per_thread, enum si_copy_mode mode);
/* Set `depth` slices of `height` rows of `width` bytes of device, managed or
 * pinned memory; async: never waits. */
cudaError_t si_memset3d(void *p, size_t pitch, size_t slice, int value, size_t width,
                        size_t height, size_t depth, cudaStream_t stream, int per_thread,
                        int async);

/* ---- copy3d.c: what compat12.c's CUDA 12 forms share ---------------------- */
/* The pitched copy a cudaMemcpy3DParms describes (arrays resolved to their
 * storage; nothing is checked against the memory table, nothing runs). */
cudaError_t si_copy3d_build(const struct cudaMemcpy3DParms *p, struct si_copy *c);
/* *fail: the index of the copy that failed, SIZE_MAX when none or not one. */
cudaError_t si_batch(void *const *dsts, const void *const *srcs, const size_t *sizes,
                     size_t count, const struct cudaMemcpyAttributes *attrs,
                     const size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream,
                     int pt, size_t *fail);
cudaError_t si_batch3d(size_t n, const struct cudaMemcpy3DBatchOp *ops,
                       unsigned long long flags, cudaStream_t stream, int pt,
                       size_t *fail);
cudaError_t si_prefetch(const void *p, size_t count, struct cudaMemLocation loc,
                        unsigned flags, cudaStream_t stream, int pt);

/* ---- array.c: CUDA arrays ------------------------------------------------ */
/* An array's storage, as a pitched region: rows of width elements. NULL for
 * an invalid (or freed) handle. */
struct si_array_view {
  char *data;
  size_t elem;                 /* bytes per element */
  size_t width, height, depth; /* in elements; height, depth at least 1 */
};
int si_array_view(const void *array, struct si_array_view *out);
void si_arrays_reset(void); /* cudaDeviceReset */

/* ---- registry.c ---------------------------------------------------------- */
struct si_func; /* a registered __global__ function (a cudaKernel_t) */
/* A stub address or a cudaKernel_t handle (the runtime accepts either where
 * an entry function is expected) -> function, or NULL. */
const struct si_func *si_func_lookup(const void *func_or_kernel);
/* A cudaKernel_t handle only -> function, or NULL (a stub is rejected). */
const struct si_func *si_func_from_handle(const void *kernel);
/* The backing store of the symbol whose host shadow is `symbol`. */
cudaError_t si_symbol_lookup(const void *symbol, void **dev, size_t *size);
const void *si_func_stub(const struct si_func *f); /* its host stub */

/* ---- launch.c ------------------------------------------------------------ */
/* What a launch checks before its stream: function, grid, block, shared
 * memory (the errors of an eager launch). */
cudaError_t si_launch_check(const struct si_func *f, dim3 g, dim3 b, size_t shmem);

/* ---- graph.c: graphs and executable graphs --------------------------------- */
/* One lock guards every graph, node and capture sequence (capture.c) and
 * the capture fields of streams and events. It is a leaf but for the
 * memory table's and handle pools' locks; never held while the timeline
 * sleeps or a host function runs. */
void si_graph_lock(void);
void si_graph_unlock(void);

/* What a node does, as an operation of a stream would. */
struct si_node_desc {
  enum cudaGraphNodeType type;
  union {
    struct { /* cudaGraphNodeTypeKernel */
      const struct si_func *f;
      const void *func; /* as given (cudaGraphKernelNodeGetParams) */
      dim3 grid, block;
      unsigned shmem;
      void **args, **extra; /* the caller's arrays (not copied) */
    } k;
    struct { /* cudaGraphNodeTypeMemcpy: a checked copy */
      struct si_copy c;
      enum cudaMemcpyKind kind; /* resolved */
      enum si_loc host;         /* the host side's location */
    } cp;
    struct { /* cudaGraphNodeTypeMemset: depth slices of height rows of
                width elements of elem bytes set to value */
      char *dst;
      size_t pitch, slice, width, height, depth;
      unsigned value, elem;
    } ms;
    struct { /* cudaGraphNodeTypeHost */
      cudaHostFn_t fn;
      void *data;
    } host;
    struct si_graph *child; /* cudaGraphNodeTypeGraph: adding clones it */
    cudaEvent_t ev;         /* cudaGraphNodeTypeEventRecord / WaitEvent */
    struct {                /* cudaGraphNodeTypeMemAlloc / MemFree */
      void *ptr;
      size_t bytes;
    } mem;
  } u;
};

struct si_graph *si_graph_new_locked(void); /* NULL: out of memory */
struct si_graph *si_graph_resolve(cudaGraph_t h);
uint64_t si_graph_id(const struct si_graph *g);
void si_graph_set_capturing(struct si_graph *g, int on);
int si_graph_capturing(const struct si_graph *g);
void si_graph_free_locked(struct si_graph *g);
/* Add a node depending on deps[0..n) (which must be nodes of g): its
 * child graph (if any) is cloned, its graph memory referenced. NULL: out
 * of memory. */
struct si_node *si_graph_add_locked(struct si_graph *g, const struct si_node_desc *d,
                                    struct si_node *const *deps, size_t n);
/* A node of g (graph lock held); 0 otherwise. */
int si_node_in_graph(const struct si_node *n, const struct si_graph *g);
void si_node_set_capture(struct si_node *n, uint64_t cap_id);
/* Every node of g that capture cap_id added is an ancestor of, or one of,
 * the nodes tips[0..n) (cudaErrorStreamCaptureUnjoined otherwise). */
int si_graph_joined_locked(struct si_graph *g, uint64_t cap_id,
                           struct si_node *const *tips, size_t n);
/* Whether graph g already frees ptr (a free node). */
int si_graph_frees_locked(const struct si_graph *g, const void *ptr);
/* cudaGraphAddDependencies (compat12.c: CUDA 12's forms). */
cudaError_t si_graph_add_deps(cudaGraph_t graph, const cudaGraphNode_t *from,
                              const cudaGraphNode_t *to,
                              const cudaGraphEdgeData *edgeData, size_t numDependencies);
void si_graphs_reset(void); /* cudaDeviceReset */

/* ---- capture.c: stream capture ---------------------------------------------- */
extern int si_cap_count; /* capture sequences begun and not ended (atomic) */
/* Whether any capture sequence exists: the one relaxed load the plain
 * (non-capturing) paths pay. */
static inline int si_cap_any(void) {
  return __atomic_load_n(&si_cap_count, __ATOMIC_RELAXED) != 0;
}
/* A potentially unsafe call (synchronization, cudaMalloc, synchronous copies):
 * cudaErrorStreamCaptureUnsupported, invalidating the capture sequences that
 * prohibit it, when the calling thread may not make it. */
cudaError_t si_cap_unsafe(void);
static inline cudaError_t si_cap_prohibited(void) {
  return SI_UNLIKELY(si_cap_any()) ? si_cap_unsafe() : cudaSuccess;
}
/* An operation on stream s while captures exist (only call when
 * si_cap_any()): on the legacy stream while a blocking stream captures,
 * cudaErrorStreamCaptureImplicit (the capture invalidated); on a capturing
 * stream, d becomes a node of its capture's graph (*captured = 1) or, when
 * d is NULL (the operation cannot be captured), `refuse` is returned and the
 * capture invalidated; on an invalidated capture,
 * cudaErrorStreamCaptureInvalidated. Otherwise cudaSuccess with
 * *captured = 0: run it. A MemAlloc node reserves its address into
 * d->u.mem.ptr. */
cudaError_t si_cap_op(struct si_stream *s, struct si_node_desc *d, cudaError_t refuse,
                      int *captured);
/* cudaEventRecord / cudaStreamWaitEvent where a capture may be involved;
 * *handled = 0: do the eager operation. */
cudaError_t si_cap_event_record(struct si_event *e, struct si_stream *s, unsigned flags,
                                int *handled);
cudaError_t si_cap_wait_event(struct si_stream *s, struct si_event *e, unsigned flags,
                              int *handled);
void si_cap_stream_destroy(struct si_stream *s); /* before it returns to its pool */
void si_cap_event_destroy(struct si_event *e);
void si_cap_reset(void); /* cudaDeviceReset: end every capture */
/* cudaStreamGetCaptureInfo (compat12.c: CUDA 12's forms). */
cudaError_t si_capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                            unsigned long long *id, cudaGraph_t *graph,
                            const cudaGraphNode_t **deps, const cudaGraphEdgeData **edata,
                            size_t *ndeps, int pt);

/* ---- device.c ------------------------------------------------------------ */
#include "device_model.h" /* the numbers, shared with the driver stand-in */
void si_device_props(struct cudaDeviceProp *p);
/* Texture (CUDA array) limits, an H100's: device.c reports them, array.c
 * enforces them. */
#define SI_TEX_1D 131072
#define SI_TEX_2D_W 131072
#define SI_TEX_2D_H 65536
#define SI_TEX_3D 16384
#define SI_TEX_LAYERED 32768
#define SI_TEX_LAYERS 2048
#define SI_TEX_CUBEMAP 32768

/* ---- pool.c: handle objects that are never returned to malloc ----------- */
struct si_pool {
  pthread_mutex_t mu;
  size_t obj_size; /* >= 16; objects start with a uint32_t magic */
  void *free_list;
  void **chunks;
  size_t nchunks, cap_chunks;
};
void *si_pool_get(struct si_pool *p); /* zeroed object, or NULL */
void si_pool_put(struct si_pool *p, void *obj);
/* Clear every object's magic and put all of them back (cudaDeviceReset). */
void si_pool_reset(struct si_pool *p);

/* ---- cupti_attach.c: the private CUPTI attach point (cupti/attach.h) ----- */
#include "cupti/attach.h"
const char *si_func_name(const struct si_func *f); /* registry.c */
/* graph.c: the ids CUPTI reports for a node / graph handle (0: invalid) */
uint64_t si_graph_node_tools_id(const void *node);
uint32_t si_graph_tools_id(const void *graph);
/* Bracket an entry point that queues device work: SI_CUPTI_API("name"). */
uint32_t si_cupti_api_enter(const char *api);
void si_cupti_api_leave(uint32_t *corr);
#define SI_CUPTI_API(name)                                                               \
  uint32_t si_cupti_corr_ __attribute__((cleanup(si_cupti_api_leave))) =                 \
      si_cupti_api_enter(name)
int si_cupti_on(void); /* a client is attached */
/* enum si_cupti_copy_dir of a resolved copy kind (peer: a cudaMemcpyPeer). */
unsigned si_cupti_dir(enum cudaMemcpyKind kind, int peer);
/* Report a kernel / copy or memset (kind SI_CUPTI_MEMCPY or _MEMSET, dir
 * enum si_cupti_copy_dir) that ends at `end` after `dur` ns on s; graph
 * nodes give their graph's and their own id, other work 0, 0. */
void si_cupti_kernel(const struct si_func *f, dim3 g, dim3 b, size_t shmem,
                     const struct si_stream *s, uint64_t end, uint64_t dur,
                     uint32_t graph_id, uint64_t node_id);
void si_cupti_bytes(unsigned kind, unsigned dir, int pinned, uint64_t bytes,
                    const struct si_stream *s, uint64_t end, uint64_t dur,
                    uint32_t graph_id, uint64_t node_id);

#endif
