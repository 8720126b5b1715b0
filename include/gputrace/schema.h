/* schema.h — the event record shared by the shim, the collector and the CLI.
 *
 * Contract:
 *  - A logical record is one 96-byte slot (struct gt_record), optionally
 *    followed by continuation slots (struct gt_text_slot) carrying text:
 *    kernel names, NVTX messages, command lines. rec.nslots counts them all.
 *  - The same bytes travel through the shared-memory ring and into the trace
 *    file, little-endian, naturally aligned; docs/trace-format.md is the
 *    prose version of this header. Change either one, change both.
 *  - Timestamps are CLOCK_MONOTONIC nanoseconds (system-wide, so processes
 *    order against each other); the file header maps them to wall time.
 *  - Values of enums below are on-disk: append, never renumber.
 */
#ifndef GPUTRACE_SCHEMA_H
#define GPUTRACE_SCHEMA_H

#include <stdint.h>

#include "gputrace/apis.h"

#define GT_SLOT_SIZE 96u
#define GT_TEXT_PER_SLOT 88u
#define GT_MAX_SLOTS 16u /* first slot + up to 15 continuation slots */
#define GT_TEXT_MAX (GT_TEXT_PER_SLOT * (GT_MAX_SLOTS - 1u)) /* 1320 bytes */
#define GT_TEXT_MAGIC 0x54585447u                            /* "GTXT" */

/* The record kinds, one table: X(name, value, class). The enum, the names
 * (gt_kind_name) and the class tests (gt_kind_is_call, ...) all come from
 * it; a new kind is one line here (append: values are on-disk). Classes:
 *   CALL     an API call of the traced process (ts_ns, dur_ns, result)
 *   DEVICE   work as it ran on the device (DEVICE)
 *   DEF      a definition later records refer to (names, stacks, frames)
 *   MACHINE  about the machine or the trace, written by the collector
 *   LOSS     a count of records lost or dropped */
/* clang-format off */
#define GT_KIND_LIST(X) \
  X(NONE, 0, NONE, "none") \
  X(ALLOC, 1, CALL, "alloc") \
  X(FREE, 2, CALL, "free") \
  X(MEMCPY, 3, CALL, "memcpy") \
  X(MEMSET, 4, CALL, "memset") \
  X(LAUNCH, 5, CALL, "launch") \
  X(SYNC, 6, CALL, "sync") \
  X(STREAM, 7, CALL, "stream") \
  X(EVENT, 8, CALL, "event") \
  X(NVTX, 9, CALL, "nvtx") \
  X(PROCESS, 10, MACHINE, "process")         /* process start/end (collector) */ \
  X(KERNEL_NAME, 11, DEF, "kernel_name")     /* kernel id -> mangled name */ \
  X(DROP, 12, LOSS, "drop")                 /* records the ring had no room for */ \
  X(LOST, 13, LOSS, "lost")                 /* slots the collector had to skip */ \
  X(DEVICE, 14, DEVICE, "device")            /* when work ran on the device */ \
  X(STACK, 15, DEF, "stack")                 /* an interned call stack (shim) */ \
  X(MODULE, 16, DEF, "module")               /* a loaded object's address range */ \
  X(PYFRAME, 17, DEF, "pyframe")             /* an interned Python frame (shim) */ \
  X(FRAME, 18, DEF, "frame")                 /* a symbolized address (collector) */ \
  X(METRIC, 19, MACHINE, "metric")           /* a hardware reading (collector, NVML) */ \
  X(NOTE, 20, MACHINE, "note")               /* a note about the trace (collector) */ \
  X(GRAPH, 21, CALL, "graph")                /* stream capture and graph building */ \
  X(HEAP, 22, MACHINE, "heap")               /* a process's peaks as a rolling file opened */
/* clang-format on */

enum gt_kind {
#define GT_X_KIND_ENUM(name, value, class, text) GT_KIND_##name = value,
  GT_KIND_LIST(GT_X_KIND_ENUM)
#undef GT_X_KIND_ENUM
      GT_KIND_COUNT
};

enum gt_kind_class {
  GT_KCLASS_NONE = 0,
  GT_KCLASS_CALL,
  GT_KCLASS_DEVICE,
  GT_KCLASS_DEF,
  GT_KCLASS_MACHINE,
  GT_KCLASS_LOSS,
};

/* The class of a kind (GT_KCLASS_NONE for an unknown one). */
static inline unsigned gt_kind_class(unsigned kind) {
  static const unsigned char classes[] = {
#define GT_X_KIND_CLASS(name, value, class, text) [value] = GT_KCLASS_##class,
      GT_KIND_LIST(GT_X_KIND_CLASS)
#undef GT_X_KIND_CLASS
  };
  return kind < sizeof classes ? classes[kind] : GT_KCLASS_NONE;
}
/* An API call of the traced process: it has a start, a duration, a result. */
static inline int gt_kind_is_call(unsigned kind) {
  return gt_kind_class(kind) == GT_KCLASS_CALL;
}
/* A definition later records refer to (never held back for time order). */
static inline int gt_kind_is_def(unsigned kind) {
  return gt_kind_class(kind) == GT_KCLASS_DEF;
}
/* A kind the table has, NONE included: what may index a per-kind array. */
static inline int gt_kind_in_table(unsigned kind) {
  return kind < GT_KIND_COUNT;
}
/* A kind a record may have (in the table and not NONE): what readers of a
 * ring or a file accept. */
static inline int gt_kind_is_record(unsigned kind) {
  return gt_kind_class(kind) != GT_KCLASS_NONE;
}

/* Memory kinds of alloc/free records. */
enum gt_memory {
  GT_MEM_UNKNOWN = 0,
  GT_MEM_DEVICE = 1,
  GT_MEM_PINNED_HOST = 2, /* cudaMallocHost, cudaHostAlloc, cudaHostRegister */
  GT_MEM_MANAGED = 3,
};

/* Copy directions; the first five equal cudaMemcpyKind. GT_DIR_DEFAULT is
 * left only when the runtime could not tell us where a pointer lives. */
enum gt_dir {
  GT_DIR_HTOH = 0,
  GT_DIR_HTOD = 1,
  GT_DIR_DTOH = 2,
  GT_DIR_DTOD = 3,
  GT_DIR_DEFAULT = 4,
  GT_DIR_PEER = 5, /* cudaMemcpyPeer: device to another device */
};

/* NVTX operations. */
enum gt_nvtx_op {
  GT_NVTX_PUSH = 1,
  GT_NVTX_POP = 2,
  GT_NVTX_MARK = 3,
  GT_NVTX_START = 4,
  GT_NVTX_END = 5,
};

/* Process record phases. */
enum gt_proc_phase {
  GT_PROC_START = 1, /* text: the command line, arguments separated by ' ' */
  GT_PROC_END = 2,   /* the connection closed: exit, exec or death */
};

/* rec.flags */
#define GT_F_PINNED 0x1u        /* memcpy: the host side is page-locked */
#define GT_F_ASYNC 0x2u         /* the API is stream-ordered (…Async) */
#define GT_F_TEXT_TRUNC 0x4u    /* text was longer than GT_TEXT_MAX */
#define GT_F_KERNEL_HANDLE 0x8u /* launch: kernel is a cudaKernel_t, no stub known */
#define GT_F_HOST_FN 0x10u      /* launch: a host function (cudaLaunchHostFunc) */
#define GT_F_GRAPH 0x20u        /* launch: a graph (cudaGraphLaunch) */
#define GT_F_PAGEABLE 0x40u     /* memcpy: a host side is known to be pageable */
#define GT_F_VMM_MAP                                                                     \
  0x80u                      /* alloc/free: cuMemMap/cuMemUnmap of a virtual range       \
                                (holds no memory: cuMemCreate does) */
#define GT_F_REPLAYED 0x100u /* metadata repeated at the start of a rolling file */
#define GT_F_INCOMPLETE                                                                  \
  0x200u /* NOTE: part of the run is missing (the collector stopped early); readers      \
            warn about it */
#define GT_F_STACK_SAMPLED                                                               \
  0x400u /* launch: its stack was taken as one launch in N of its thread (a sample       \
            standing for others), not as its call site's first launch (itself alone) */

#define GT_F_CAPTURED                                                                    \
  0x800u /* launch, memcpy, memset, alloc, free: queued into a capturing stream, so      \
            a node of that capture that ran nothing; corr (mem: capture) holds the       \
            capture's id (its low 32 bits), not a correlation id */
#define GT_F_NODE                                                                        \
  0x1000u /* launch, memcpy, memset, alloc, free: a node added to a graph                \
             (cudaGraphAdd*Node), or a kernel node's parameters set (apis.h              \
             GT_AF_EDIT): ran nothing; the stream field holds the graph (an edit:        \
             the executable, or 0) */
#define GT_F_GRAPH_RUN                                                                   \
  0x2000u /* made by the analyzer, never in a trace: a node's run inside a graph launch  \
             (LAUNCH), its share of the launch's device time (DEVICE) */
#define GT_F_ESTIMATED                                                                   \
  0x4000u /* DEVICE: apportioned from a graph launch's measured time, not measured */
#define GT_F_UPPER_BOUND                                                                 \
  0x100000u /* DEVICE (events): its span overlapped another stream's work on the same    \
               device, so it may include time spent waiting behind that work: an upper   \
               bound on the work's own time, not its run time */
#define GT_F_EXPANDED                                                                    \
  0x8000u /* made by the analyzer, never in a trace: a graph launch (or its DEVICE       \
             record) whose nodes' records follow it: a call, not work */
#define GT_F_UNTRACED                                                                    \
  0x10000u /* NOTE: a process the collector could not trace (refused or given-up         \
              handshake); readers warn about it, the trace is not damaged */
#define GT_F_UNWIND_FALLBACK                                                             \
  0x20000u /* STACK: its native frames came from glibc's backtrace()                     \
              (GPUTRACE_UNWIND=backtrace) */
#define GT_F_STACK_CUT                                                                   \
  0x40000u /* STACK: cut short: the unwinder met a frame it could not follow (its rbp    \
              or CFA outside the stack, no unwind information): the outer frames are     \
              missing; readers show a last frame "[stack cut short]" */
#define GT_F_REPLAY_BLOCK                                                                \
  0x80000u /* NOTE (with GT_F_REPLAYED, no text): the replayed records up to the next    \
              record without GT_F_REPLAYED are a graph's making, repeated in a rolling   \
              file before its first use there; note.last_file says which file of the set \
              held them last (readers of the set skip them when they read that file);    \
              readers consume it, never pass it on */

#define GT_F_CARRIED                                                                     \
  0x200000u /* ALLOC (with GT_F_REPLAYED): a block live when this rolling file opened,   \
               carried from the files before it (its ts_ns is its allocation's); HEAP:   \
               the peaks before it. Not a call of this file: a reader whose first file   \
               this is starts its heap with them, other readers pass them over           \
               (docs/trace-format.md, Rolling sets) */

struct gt_mem_args { /* ALLOC, FREE */
  uint64_t ptr;
  uint64_t bytes;      /* 0 for frees: the analyzer matches them to allocations */
  uint64_t stream;     /* stream-ordered APIs */
  uint64_t pitch;      /* cudaMallocPitch: row pitch (bytes = pitch * height) */
  uint64_t pool;       /* cudaMallocFromPoolAsync */
  uint32_t host_flags; /* cudaHostAlloc / cudaHostRegister / managed flags */
  uint8_t memory;      /* enum gt_memory */
  uint8_t pad[3];
  uint64_t capture; /* GT_F_CAPTURED: the capture's id (graph memory) */
};

struct gt_copy_args { /* MEMCPY */
  uint64_t dst;
  uint64_t src;
  uint64_t bytes; /* total bytes moved (width * height for 2D) */
  uint64_t stream;
  uint32_t width;  /* 2D: bytes per row, else 0 */
  uint32_t height; /* 2D: rows, else 0 */
  uint8_t kind;    /* the cudaMemcpyKind the caller passed */
  uint8_t dir;     /* enum gt_dir, resolved */
  uint8_t pad[2];
  int32_t dst_device; /* peer copies; -1 otherwise */
  int32_t src_device;
  uint32_t corr; /* see gt_launch_args.corr */
};

struct gt_set_args { /* MEMSET */
  uint64_t ptr;
  uint64_t bytes;
  uint64_t stream;
  uint32_t width;
  uint32_t height;
  int32_t value;
  uint32_t corr; /* see gt_launch_args.corr */
};

struct gt_launch_args { /* LAUNCH */
  uint64_t kernel;      /* host stub address: the key of KERNEL_NAME records */
  uint32_t grid[3];
  uint32_t block[3];
  uint64_t shared_mem;
  uint64_t stream;
  uint32_t corr; /* correlation id, unique per (pid, tid); 0 = none. A
                    DEVICE record with the same pid, tid and corr says when
                    this work ran on the device */
  uint32_t node; /* GT_F_NODE kernel nodes (added, or their parameters set:
                    apis.h GT_AF_EDIT): the low 32 bits of the node's handle,
                    0 when not known; 0 for every other launch */
};

/* Where device times come from. */
enum gt_devtime_source {
  GT_DEVTIME_EVENTS = 1, /* CUDA events recorded around the work */
  GT_DEVTIME_CUPTI = 2,  /* the CUPTI activity API */
};

struct gt_device_args { /* DEVICE: ts_ns = device start on the host clock,
                           dur_ns = device duration; api, pid and tid are
                           those of the host call that queued the work */
  uint64_t stream;
  uint64_t kernel; /* launches: as in the launch record */
  uint64_t bytes;  /* copies and memsets */
  uint32_t corr;   /* the host record's corr */
  uint32_t sample; /* 1: every call is timed; N: one call in N */
  uint8_t of_kind; /* GT_KIND_LAUNCH, GT_KIND_MEMCPY or GT_KIND_MEMSET */
  uint8_t dir;     /* copies: enum gt_dir */
  uint8_t source;  /* enum gt_devtime_source */
  uint8_t pad;
  uint32_t wait_ns; /* kernel launches timed with events: ns from the start
                       event to the kernel's start, estimated, while the host
                       was still launching it on an idle stream (ts_ns is
                       after it; docs/devtime.md) */
  int32_t device;   /* device ordinal */
  uint32_t shape;   /* launches timed with events: gt_launch_shape of the
                       launch's configuration (a graph node's eager reference,
                       model/graphs.h); 0: not known */
  uint32_t node;    /* CUPTI records of a graph launch: the node's graphNodeId
                       (its low 32 bits; model/graphs.h names nodes by it);
                       0 otherwise */
};

struct gt_handle_args { /* SYNC, STREAM, EVENT */
  uint64_t handle;      /* the stream or event */
  uint64_t handle2;     /* cudaStreamWaitEvent's event; cudaEventRecord's stream */
  uint32_t flags;
  int32_t priority;
};

/* GRAPH records: api says what happened. Captures: BeginCapture (stream,
 * capture, mode), EndCapture (stream, capture, graph: the graph made, 0 when
 * it failed). Graphs: Instantiate/ExecUpdate (graph -> exec), Clone (graph ->
 * arg: the clone), AddChildGraphNode (graph, node, arg: the child),
 * AddEmptyNode (graph, node), Upload (exec, stream), ExecDestroy (exec),
 * Destroy (graph), profiler start and stop (no fields). Kernel, copy,
 * memset and host nodes are LAUNCH, MEMCPY and MEMSET records, memory nodes
 * ALLOC and FREE records, with GT_F_NODE (added) or GT_F_CAPTURED
 * (captured); a kernel node's parameters set (GraphKernelNodeSetParams,
 * GraphExecKernelNodeSetParams) is a LAUNCH record with GT_F_NODE too (the
 * new kernel, dims and shared memory; stream the executable, or 0 for a
 * graph's node; node the node's handle's low 32 bits). */
struct gt_graph_args { /* GRAPH */
  uint64_t graph;
  uint64_t exec;
  uint64_t node;
  uint64_t stream;
  uint64_t capture; /* the capture's id (cudaStreamGetCaptureInfo): its low 32 bits,
                       never 0, as captured records' corr holds it */
  uint64_t arg;
  uint32_t mode; /* BeginCapture: the cudaStreamCaptureMode; Instantiate: flags */
  uint32_t pad;
};

struct gt_nvtx_args { /* NVTX; text: the message */
  uint64_t range_id;  /* start/end ranges */
  uint64_t domain;    /* 0 = default domain */
  uint32_t op;        /* enum gt_nvtx_op */
  uint32_t color;
  int32_t depth; /* push/pop: the level the runtime returned */
  uint32_t text_len;
};

struct gt_process_args { /* PROCESS; text: command line */
  uint32_t ppid;
  uint32_t phase; /* enum gt_proc_phase */
  uint64_t ring_bytes;
  uint64_t records; /* END: records the collector took from this process */
  uint64_t dropped; /* END: records the ring had no room for */
  uint64_t lost;    /* END: slots skipped as abandoned or corrupt */
  uint32_t text_len;
  uint32_t exited; /* END: 1 if the process ended through exit() or _exit() */
};

struct gt_kernel_name_args { /* KERNEL_NAME; text: mangled device name */
  uint64_t kernel;
  uint32_t text_len;
  uint32_t pad;
};

/* A stack entry with this bit set is a Python frame: the low bits are a
 * PYFRAME id. Native addresses never have it on x86-64 and aarch64. */
#define GT_STACK_PYFRAME (1ull << 63)
#define GT_STACK_MAX_DEPTH 128u
/* A native entry's bits 48..62 are its address epoch: an address means
 * other code once another library is loaded where an unloaded one was. The
 * shim begins an epoch each time it finds libraries unloaded (dlclose);
 * a MODULE record carries the epoch the module was found in, and so does
 * every entry in it: an entry is in the newest MODULE record covering its
 * address whose epoch is not above its own. All 0 until the first unload;
 * FRAME records are keyed by the whole entry. Stops growing at
 * GT_STACK_EPOCH_MAX. */
#define GT_STACK_EPOCH_SHIFT 48u
#define GT_STACK_EPOCH_MAX 0x7fffu
#define GT_STACK_ADDR_MASK ((1ull << GT_STACK_EPOCH_SHIFT) - 1u)

static inline uint64_t gt_stack_addr(uint64_t entry) {
  return entry & GT_STACK_ADDR_MASK;
}
static inline uint32_t gt_stack_epoch(uint64_t entry) {
  return (uint32_t)(entry >> GT_STACK_EPOCH_SHIFT) & GT_STACK_EPOCH_MAX;
}

struct gt_stack_args { /* STACK; text slots: depth 64-bit entries, innermost
                          first: return addresses, or GT_STACK_PYFRAME | id */
  uint32_t id;         /* per process, from 1; referenced by rec.stack_id */
  uint32_t depth;
  uint32_t text_len; /* depth * 8 */
  uint32_t python;   /* entries that are Python frames */
};

struct gt_module_args { /* MODULE; text: the object's path */
  uint64_t bias;        /* load bias (dlpi_addr) */
  uint64_t start;       /* lowest address of its PT_LOAD segments */
  uint64_t end;         /* highest address + 1 */
  uint32_t text_len;
  uint32_t epoch; /* the address epoch it was found in (GT_STACK_EPOCH_SHIFT) */
};

struct gt_pyframe_args { /* PYFRAME; text: "function\x1ffile" */
  uint32_t id;
  uint32_t line;
  uint32_t text_len;
  uint32_t pad;
};

struct gt_frame_args { /* FRAME (collector); text: "function\x1ffile\x1fmodule".
                          One record per inline level of an address: level 0 is
                          the innermost (inlined) function, the last level
                          (inline_count - 1) the function the code sits in. */
  uint64_t ip;
  uint32_t line;
  uint16_t level;
  uint16_t inline_count;
  uint32_t text_len;
  uint32_t pad;
};

/* Hardware metrics (METRIC records); values are in the unit named. */
enum gt_metric {
  GT_METRIC_GPU_UTIL = 1,         /* percent of time a kernel ran */
  GT_METRIC_MEM_UTIL = 2,         /* percent of time device memory was read or written */
  GT_METRIC_MEM_USED = 3,         /* bytes */
  GT_METRIC_MEM_TOTAL = 4,        /* bytes */
  GT_METRIC_TEMP = 5,             /* degrees Celsius */
  GT_METRIC_POWER = 6,            /* watts */
  GT_METRIC_POWER_LIMIT = 7,      /* watts (enforced limit) */
  GT_METRIC_SM_CLOCK = 8,         /* MHz */
  GT_METRIC_MEM_CLOCK = 9,        /* MHz */
  GT_METRIC_PCIE_TX = 10,         /* bytes per second */
  GT_METRIC_PCIE_RX = 11,         /* bytes per second */
  GT_METRIC_TEMP_SLOWDOWN = 12,   /* degrees Celsius: the slowdown threshold */
  GT_METRIC_CLOCK_EVENTS = 13,    /* mask of NVML clock-event (throttle) reasons */
  GT_METRIC_ECC_CORRECTED = 14,   /* volatile corrected ECC errors (count) */
  GT_METRIC_ECC_UNCORRECTED = 15, /* volatile uncorrected ECC errors (count) */
  GT_METRIC_XID = 16,             /* an XID error event: value is the XID (when polled) */
  GT_METRIC_PROCS = 17,    /* compute processes on the device; their PROC_MEM follow */
  GT_METRIC_PROC_MEM = 18, /* bytes of GPU memory a process holds (driver's view);
                              the process in u.metric.pid */
  GT_METRIC_COUNT
};

struct gt_metric_args { /* METRIC: one reading; ts_ns when it was taken */
  double value;
  uint32_t device; /* device index */
  uint32_t metric; /* enum gt_metric */
  uint32_t pid;    /* PROC_MEM: the process (rec.pid stays 0: the machine) */
  uint32_t pad;
};

struct gt_note_args { /* NOTE; text: the note */
  uint32_t text_len;
  uint32_t pad;
  uint64_t last_file; /* GT_F_REPLAY_BLOCK: the number of the set's file that last
                         held the replayed records that follow (BASE.NNNN.gtrace) */
};

struct gt_heap_args {     /* HEAP (collector, GT_F_REPLAYED | GT_F_CARRIED): a process's
                             heap as a rolling file opened; its carried ALLOC records
                             come just before it */
  uint64_t peak[5];       /* highest live bytes so far, per enum gt_memory, and [4]:
                             device and managed together (model/heap.h GT_MEM_RESIDENT) */
  uint64_t peak_ts_ns[2]; /* when the device [0] and the resident [1] peaks were
                             reached */
};

struct gt_count_args { /* DROP, LOST */
  uint64_t count;
  uint32_t of_kind; /* DROP: enum gt_kind of the records dropped */
  uint32_t pad;
};

struct gt_record {
  uint64_t ts_ns;  /* CLOCK_MONOTONIC at entry */
  uint64_t dur_ns; /* time inside the real call */
  uint32_t pid;
  uint32_t tid;
  uint16_t api;      /* enum gt_api */
  uint8_t kind;      /* enum gt_kind */
  uint8_t nslots;    /* 1 + continuation slots */
  int32_t result;    /* the cudaError_t returned, untouched */
  uint32_t flags;    /* GT_F_* */
  uint32_t stack_id; /* STACK record id of the call's stack; 0 = none */
  union {
    struct gt_mem_args mem;
    struct gt_copy_args copy;
    struct gt_set_args set;
    struct gt_launch_args launch;
    struct gt_handle_args handle;
    struct gt_nvtx_args nvtx;
    struct gt_process_args proc;
    struct gt_kernel_name_args kname;
    struct gt_count_args count;
    struct gt_device_args device;
    struct gt_stack_args stack;
    struct gt_module_args module;
    struct gt_pyframe_args pyframe;
    struct gt_frame_args frame;
    struct gt_metric_args metric;
    struct gt_note_args note;
    struct gt_graph_args graph;
    struct gt_heap_args heap;
    uint8_t raw[56];
  } u;
};

struct gt_text_slot {
  uint32_t magic; /* GT_TEXT_MAGIC */
  uint32_t index; /* 1-based position after the record */
  char text[GT_TEXT_PER_SLOT];
};

_Static_assert(sizeof(struct gt_record) == GT_SLOT_SIZE, "record is one slot");
_Static_assert(sizeof(struct gt_copy_args) <= 56 && sizeof(struct gt_device_args) <= 56 &&
                   sizeof(struct gt_graph_args) <= 56 &&
                   sizeof(struct gt_mem_args) <= 56 && sizeof(struct gt_heap_args) <= 56,
               "payloads fit the union");
_Static_assert(sizeof(struct gt_text_slot) == GT_SLOT_SIZE, "text is one slot");

/* What an allocation returns when the device has no room for it:
 * cudaErrorMemoryAllocation (runtime) and CUDA_ERROR_OUT_OF_MEMORY (driver)
 * are both 2. */
#define GT_RESULT_OUT_OF_MEMORY 2
/* An allocation call of the runtime or the driver (apis.h's kind and
 * family, never its name) that failed for want of memory: the flight
 * recorder's trigger (collector/control.c) and the report's out_of_memory
 * (analyze/leaks.c) are this one test. */
static inline int gt_record_out_of_memory(const struct gt_record *rec) {
  if (rec->kind != GT_KIND_ALLOC || rec->result != GT_RESULT_OUT_OF_MEMORY ||
      rec->api >= GT_API_COUNT)
    return 0;
  const struct gt_api_info *a = &gt_apis[rec->api];
  return a->kind == GT_KIND_ALLOC &&
         (a->family == GT_FAM_RT || a->family == GT_FAM_DRV) && !(a->flags & GT_AF_MAP);
}

/* A launch configuration (grid, block, dynamic shared memory) as 32 bits,
 * never 0: one kernel runs for several shapes (a GEMM library's for each
 * layer), each with its own duration. */
static inline uint32_t gt_launch_shape(const uint32_t grid[3], const uint32_t block[3],
                                       uint64_t shared_mem) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the seven words */
  const uint64_t words[7] = {grid[0],  grid[1],  grid[2],   block[0],
                             block[1], block[2], shared_mem};
  for (int i = 0; i < 7; i++)
    h = (h ^ words[i]) * 0x100000001b3ull;
  return (uint32_t)(h ^ h >> 32) | 1u;
}

/* The correlation id of a launch, copy or memset (what its DEVICE record
 * names); 0 for other kinds and for calls without one. */
static inline uint32_t gt_record_corr(const struct gt_record *r) {
  switch (r->kind) {
  case GT_KIND_LAUNCH:
    return r->u.launch.corr;
  case GT_KIND_MEMCPY:
    return r->u.copy.corr;
  case GT_KIND_MEMSET:
    return r->u.set.corr;
  default:
    return 0;
  }
}

/* Number of slots a record with `text_len` bytes of text needs. */
static inline unsigned gt_slots_for_text(uint32_t text_len) {
  return 1u + (text_len + GT_TEXT_PER_SLOT - 1u) / GT_TEXT_PER_SLOT;
}

/* Copy `len` bytes of text (cut to GT_TEXT_MAX, flagged GT_F_TEXT_TRUNC)
 * into the text slots that follow `rec` in memory — the caller provides
 * room for GT_MAX_SLOTS slots — and set nslots and the kind's text_len.
 * Returns the bytes kept. Defined in common/record_text.c. */
#include <stddef.h>
size_t gt_record_attach_text(struct gt_record *rec, const char *text, size_t len);
/* The text_len field of the record's kind (0 for kinds without text). */
uint32_t gt_record_text_len(const struct gt_record *rec);

/* Names (for dump, reports); defined in common/names.c. */
const char *gt_api_name(unsigned api);
const char *gt_kind_name(unsigned kind);
const char *gt_memory_name(unsigned memory);
const char *gt_dir_name(unsigned dir);
const char *gt_nvtx_op_name(unsigned op);
unsigned gt_api_kind(unsigned api);
/* Metric names ("gpu_util", ...) and units ("%", "bytes", ...); "?" if unknown. */
const char *gt_metric_name(unsigned metric);
const char *gt_metric_unit(unsigned metric);

#endif
