/* report.h — the figures behind `gputrace report` and `gputrace diff`.
 *
 * Contract:
 *  - rp_init, then rp_read (one pass of a session over the trace, in file
 *    order, with the allocation, NVTX, symbol and graph layers: every record
 *    goes into the aggregates below),
 *    then rp_finish (percentiles, device-time attribution, shares, verdict,
 *    findings), then print (report_out.c) or compare (cmd_diff.c), then
 *    rp_free. docs/report.md defines every figure; the code follows it.
 *  - Memory is bounded by distinct APIs, kernels, range names, processes,
 *    threads, streams, events, allocation sizes and stacks, plus what exact
 *    percentiles need: one duration per API call and per NVTX range
 *    occurrence (4 bytes, 8 past 4.29 s). With DEVICE records, also 24
 *    bytes per range occurrence (where it was, for its GPU time), 32 per
 *    blocking call and 16 per busy stretch of a process's device (merged
 *    intervals); without, at most RP_UNDECIDED_MAX blocking calls are kept
 *    while waiting for a first DEVICE record.
 *  - Times are CLOCK_MONOTONIC ns; --from/--to are relative to the session's
 *    origin, the first record in the file (where `gputrace dump` counts from).
 *
 * Files, each using only those listed before it (no circles):
 *   report_base.c     processes, the blocking-call rule, kernel row names,
 *                     finding builders
 *   report_runs.c     busy stretches (merged device intervals)
 *   report_hw.c       NVML readings: section, findings, JSON
 *   report_sites.c    call sites and GPU time by launching line
 *   report_graphs.c   the graphs section and its findings
 *   report_device.c   device intervals: blocked-time attribution, gaps,
 *                     utilization
 *   report_collect.c  the streaming pass (rp_init, rp_read, rp_free)
 *   report_leaks.c    memory growth findings (what `leaks` computes)
 *   report_requests.c request types: breakdown table, per-type findings
 *   report_rules.c    finishing: percentiles, shares, verdict, findings
 *   report_out.c      text and JSON
 * Statistics (durations, percentiles, strings, units) are the model's
 * (model/stats.h).
 */
#ifndef GPUTRACE_ANALYZE_REPORT_H
#define GPUTRACE_ANALYZE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "gpu_attr.h"
#include "gputrace/schema.h"
#include "holders.h"
#include "model.h"
#include "range_gpu.h"
#include "session.h"
#include "stats.h"
#include "symtab.h"

/* Transfer rows: enum gt_dir (0..5), then memsets. */
enum { RP_XFER_MEMSET = 6, RP_XFER_ROWS = 7 };

/* Thresholds and model constants (docs/report.md lists them all). */
#define RP_SMALL_BYTES (64u << 10) /* "small" copy: < 64 KiB */
#define RP_GAP_NS 500000000ull     /* GPU idle gap, like nsys gpu_gaps */
#define RP_UTIL_CHUNKS 30          /* like nsys gpu_time_util */
#define RP_COPY_LATENCY_NS 2000ull /* CPU-side model of a copy or memset */
#define RP_PAGEABLE_BPNS 6ull      /* bytes per ns = GB/s */
#define RP_PINNED_BPNS 24ull
#define RP_DTOD_BPNS 1000ull
#define RP_MEMSET_BPNS 1000ull
#define RP_UNDECIDED_MAX 4096 /* blocking calls kept before any DEVICE record */
/* The verdict is "close" when the runner-up's share of traced time is
 * within this of the winner's (docs/report.md, "The verdict"). */
#define RP_VERDICT_CLOSE 0.05
/* memory_leak: a growing group (docs/leaks.md "Growth") of at least this
 * many bytes live at the end (docs/report.md, "Findings"). */
#define RP_LEAK_MIN_BYTES (1ull << 20)

/* The findings' thresholds (report_rules.c; docs/report.md, "Findings",
 * names each where its rule is stated). Shares are of the traced time
 * unless said otherwise. */
/* pageable_memcpy, request_pageable (of the request type's time), sync_*,
 * excessive_sync: high; sync_*, alloc_churn: medium; pageable_memcpy and
 * request_pageable fire from RP_SHARE_MEDIUM */
#define RP_SHARE_HIGH 0.25
#define RP_SHARE_MEDIUM 0.05
#define RP_SYNC_COPY_MIN 10 /* sync_memcpy: blocking copies */
/* excessive_sync: of at least this many launches followed by anything,
 * at least this share followed by a sync */
#define RP_SYNC_LAUNCH_MIN 10
#define RP_SYNC_RATIO 0.5
/* small_kernels: kernels of this many launches (without device timing: in
 * all) whose GPU time is at most this many times their launch-call time;
 * medium when launch calls take this share */
#define RP_SMALL_KERNEL_LAUNCHES 100
#define RP_SMALL_KERNEL_RATIO 2
#define RP_LAUNCH_SHARE_MEDIUM 0.10
/* small_transfers: this many copies under RP_SMALL_BYTES, at least this
 * share of all copies; medium from this many */
#define RP_SMALL_XFER_MIN 100
#define RP_SMALL_XFER_SHARE 0.5
#define RP_SMALL_XFER_MEDIUM 1000
#define RP_CHURN_MIN 10           /* alloc_churn: reallocations */
#define RP_GAPS_MEDIUM_SHARE 0.25 /* gpu_idle_gaps: medium, share of the wall time */
#define RP_UTIL_LOW 0.5           /* low_gpu_utilization: a part busy under this */
#define RP_UTIL_MEDIUM_CHUNKS (RP_UTIL_CHUNKS / 2) /* ... in this many parts: medium */
#define RP_MEMORY_PRESSURE 0.85      /* memory_pressure: peak / --device-memory */
#define RP_MEMORY_PRESSURE_HIGH 0.90 /* memory_pressure: high */
#define RP_ERR_NOT_READY 600         /* cudaErrorNotReady: a query's answer */
#define RP_EXAMPLES 3                /* small_kernels, api_errors: examples named */
/* cold_start: a range with this many occurrences after the first, the
 * first this many times the warm p50 and longer than it by this */
#define RP_COLD_MIN_WARM 2
#define RP_COLD_RATIO 2
#define RP_COLD_MIN_EXTRA_NS 1000000ull

/* Hardware thresholds (report_hw.c; docs/report.md, "Hardware"). */
#define RP_HW_UTIL_LOW_PCT 25     /* gpu_underutilized: utilization under this... */
#define RP_HW_UTIL_LOW_SHARE 0.5  /* ...for at least this share of the sampled time */
#define RP_HW_VRAM_PCT 85         /* vram_pressure: memory used above this (medium) */
#define RP_HW_VRAM_HIGH_PCT 90    /* and above this (high) */
#define RP_HW_HOT_C 83.0          /* thermal: at or above this, or... */
#define RP_HW_HOT_MARGIN_C 5.0    /* ...within this of the slowdown threshold, if read */
#define RP_HW_UTIL_HIGH_SHARE 0.9 /* gpu_underutilized: high from this share */
#define RP_HW_HOT_HIGH_SHARE 0.25 /* thermal: high from this share */

/* Graph findings' thresholds (report_graphs.c; docs/report.md, "Findings"). */
#define RP_GRAPH_REINST_MIN 3 /* graph_reinstantiated: instantiations of one graph */
/* graph_capture_while_serving: instantiated after this many graph launches
 * of its process (a start-up capture loop may replay a graph or two) */
#define RP_GRAPH_SERVING 100
#define RP_GRAPH_HOST_FN_LAUNCHES 10 /* graph_host_function: launches */

struct rp_options {
  int has_pid;
  uint32_t pid;
  uint64_t from_ns, to_ns; /* window relative to the origin; to_ns = UINT64_MAX: end */
  uint64_t device_memory;  /* bytes of device memory; 0 = unknown */
  int no_wait;             /* gt_session_opts.no_wait */
  int wide;                /* text: names whole, not shortened to their column */
  int color;               /* text: severities and the verdict in colour */
};

struct rp_api {
  uint64_t calls, errors;
  struct gt_durs durs; /* sum and max inside */
  uint64_t p50, p90, p99;
};

struct rp_kernel {
  uint64_t launches, cpu_ns;
  uint64_t graph_runs;    /* of launches: runs inside graph launches (graphs.h) */
  uint32_t fn_pid;        /* a host function's row: one of its (process, address) */
  uint64_t fn_addr;       /* named by its symbol at output (rp_kernel_name) */
  uint64_t gpu_estimated; /* of gpu_timed: apportioned from graph launches */
  uint64_t gpu_upper;     /* of gpu_timed: events spans that overlapped another
                             stream's work (GT_F_UPPER_BOUND): upper bounds */
  uint64_t gpu_cupti;     /* of gpu_timed: measured by CUPTI (the rest: events) */
  uint64_t gpu_timed, gpu_ns, gpu_scaled_ns, gpu_max_ns; /* DEVICE records */
  double gpu_sq;        /* sum of squared durations (ns^2): the spread */
  uint64_t gpu_ci95_ns; /* sampled: half-width of the 95 % interval of the total */
  uint32_t sample;      /* largest 1-in-N of its DEVICE records */
  struct gt_durs gpu_d; /* the timed durations (diff: p50 and fastest) */
};

struct rp_xfer {
  uint64_t count, bytes, pageable, async, host_ns, small;
  uint64_t blocking, blocking_bytes, blocking_ns; /* calls the host waited in */
  uint64_t gpu_timed, gpu_bytes, gpu_ns, gpu_scaled_ns;
  uint64_t done; /* calls that succeeded, and graph runs: what a sample stands for */
  uint32_t sample;
};

struct rp_sync { /* per API: blocked time, and what it was attributed to */
  uint64_t calls, total_ns, max_ns, kernel_ns, copy_ns, sync_ns;
};

struct rp_counters { /* cumulative, per thread and per process */
  uint64_t launches, bytes, allocs;
};

struct rp_occ { /* one completed NVTX range */
  uint64_t start, end, bytes, gpu_ns;
  uint32_t pid, launches, allocs, pad;
};

struct rp_shares { /* ns, summed over threads */
  uint64_t traced, launch, copy, kernel, sync, api, idle, blocked;
};
/* Adds v to share f of the whole process and, when the call was made in a
 * request, of its request type (rq: struct rp_req *, or NULL). */
#define RP_SHARE(r, rq, f, v)                                                            \
  do {                                                                                   \
    uint64_t v_ = (v);                                                                   \
    (r)->sh.f += v_;                                                                     \
    if (rq)                                                                              \
      (rq)->sh.f += v_;                                                                  \
  } while (0)

/* Requests: a range name's outermost push occurrences (depth 0 on their
 * thread) and the calls their thread made while one was open. */
#define RP_REQ_SITES 4
struct rp_req {
  uint64_t n;           /* outermost occurrences (completed, or open at the end) */
  struct rp_shares sh;  /* traced: their durations; idle: time in no call */
  uint64_t pageable_ns; /* host time in pageable copies (rule_pageable's) */
  uint64_t pageable_n;
  struct { /* the pageable copies' sites, by host time */
    uint32_t pid, stack;
    uint64_t ns;
  } sites[RP_REQ_SITES];
};

struct rp_range {
  size_t n;                 /* occurrences */
  struct rp_occ cold;       /* the one that started first: the cold start */
  uint64_t colds, colds_ns; /* other processes' first occurrences (cold, not warm)
                               and their time */
  struct gt_durs warm_d;    /* durations of the others ("warm") */
  uint64_t launches, bytes, allocs, gpu_ns; /* sums over warm occurrences */
  int cold_opened; /* the first occurrence opened: its GPU time is the cold's */
  /* rp_finish */
  uint64_t warm, p50, p90, p99, max, mean;
  uint64_t total_ns; /* over all occurrences */
  struct rp_req req; /* as a request type (report_collect.c) */
};

struct rp_pending { /* work queued on a stream and not yet waited for */
  uint64_t copy_est_ns, kernels, ops;
};

struct rp_runs { /* sorted, disjoint [s, e) intervals */
  uint64_t *s, *e;
  size_t n, cap;
};

#define RP_BL_COPYCALL 1     /* the blocking call is a copy or memset */
#define RP_BL_PEND_KERNELS 2 /* kernels were queued on what it waited for */
#define RP_BL_PEND_COPIES 4  /* copies or memsets were */
struct rp_blocked {
  uint64_t start, end, copy_est;
  uint16_t api;
  uint8_t flags;
  uint32_t req; /* range index + 1 of the request it was made in; 0: none */
};

struct rp_gaps {
  uint64_t count, total_ns, max_ns, max_at;
};

struct rp_proc {
  uint32_t pid, epoch;
  uint64_t calls;
  struct rp_pending pend; /* everything queued, all streams */
  uint64_t idle_since;    /* CPU-side model: device drained at, 0 = busy */
  struct rp_counters c;
  struct rp_gaps gaps;  /* CPU-side model */
  uint64_t churn;       /* allocations of a size this process freed before */
  uint64_t churn_async; /* ...of them stream-ordered (cudaMallocAsync: a pool's) */
  uint64_t dev_records;
  uint32_t dev_sample;
  struct rp_runs kruns, cruns; /* device busy: kernels; copies and memsets */
  struct rp_blocked *bl;
  size_t nbl, capbl;
};

struct rp_thread {
  uint32_t pid, tid;
  size_t proc;
  uint64_t first, last, busy;
  int pending_launch;   /* a launch not yet followed by a launch or a sync */
  uint64_t last_stream; /* cache: stream map key + 1 -> last_stream_idx */
  size_t last_stream_idx;
  struct rp_counters c;
};

struct rp_stream {
  uint32_t epoch; /* == its process's epoch, or its pending work is void */
  struct rp_pending pend;
};

/* RP_EV_JSON: s is a JSON value, written as it is (a list of objects) */
enum rp_ev_type { RP_EV_U64, RP_EV_NS, RP_EV_BYTES, RP_EV_FRAC, RP_EV_STR, RP_EV_JSON };
struct rp_ev {
  const char *key;
  enum rp_ev_type type;
  uint64_t u;
  double d;
  char *s; /* RP_EV_STR: whole, malloc'd (rp_free) */
};

#define RP_MAX_EV 12
struct rp_finding {
  const char *rule, *severity, *advice;
  char *message; /* whole, malloc'd (rp_free) */
  struct rp_ev ev[RP_MAX_EV];
  int nev;
};

/* Call-site hooks: stack ids (rec.stack_id) counted per finding. */
/* RP_SITE_ALLOC(_ASYNC): allocations of a size the process had freed
 * (churn), by cudaMalloc and its kin, and stream-ordered (cudaMallocAsync) */
enum {
  RP_SITE_PAGEABLE,
  RP_SITE_SYNC_COPY,
  RP_SITE_SYNC,
  RP_SITE_ALLOC,
  RP_SITE_ALLOC_ASYNC,
  RP_SITES
};

struct rp_rulestats { /* counters only the findings need */
  uint64_t pageable_n, pageable_async, pageable_ns, pageable_bytes;
  uint64_t sync_copy_n, sync_copy_ns, sync_copy_bytes;
  uint64_t sync_set_n, sync_set_ns;
  uint64_t synced_launches, unsynced_launches;
  uint64_t alloc_n, free_n, alloc_ns, free_ns;
};

struct rp_leak { /* report_leaks.c: live at the end, unsuppressed */
  int measured;  /* the leak analysis ran */
  int rated;     /* some growing group has a rate (a run of GT_GROWTH_MIN_NS) */
  uint64_t bytes, blocks, growing_bytes;
  double bytes_per_min; /* summed over growing groups with a rate */
};

#define RP_SWITCHES_MAX 64

struct report {
  struct rp_options opt;
  const char *path;           /* rp_read's: the leak findings read it again */
  struct gt_session *session; /* open until rp_free */
  struct gt_model *model;     /* the session's */
  int damaged;
  int device_active; /* 0 undecided, 1 DEVICE records seen, -1 none by RP_UNDECIDED_MAX */
  uint64_t undecided; /* blocking calls kept while undecided */
  uint64_t origin, records, events, first_ns, last_ns;
  uint64_t dropped, lost, dropped_by_kind[GT_KIND_COUNT];
  struct rp_api api[GT_API_COUNT];
  struct rp_sync sync[GT_API_COUNT];
  struct gt_strtab knames; /* kernel index = name index */
  struct rp_kernel *kern;
  size_t kcap;
  struct gt_map kcache; /* (pid, stub) -> kernel index + 1 */
  uint64_t kc_key[256]; /* direct-mapped in front of kcache: key + 1 */
  uint32_t kc_idx[256];
  struct rp_xfer xfer[RP_XFER_ROWS];
  struct gt_strtab rnames; /* range index = name index */
  struct rp_range *ranges;
  size_t rcap;
  struct rp_proc *procs;
  size_t nprocs, cprocs;
  struct gt_map proc_idx;
  struct rp_thread *threads;
  size_t nthreads, cthreads;
  uint32_t thread_cache[64]; /* direct-mapped by tid: thread index + 1 */
  struct rp_thread *cur;     /* the thread of the record on_api is handling */
  struct gt_map thread_idx;
  struct rp_stream *streams;
  size_t nstreams, cstreams;
  struct gt_map stream_idx;
  struct gt_map event_stream; /* (pid, event) -> stream key of its last record */
  struct gt_map freed_sites;  /* pid << 32 | stack id: a block it allocated was freed */
  struct gt_map range_seen;   /* (pid, range name): each process's first is cold */
  struct gt_map freed;        /* (pid, memory, bytes) -> frees not yet reused */
  struct rp_snap {
    struct rp_counters c; /* the counters when the range opened */
    size_t range;         /* its name's range index */
    uint64_t gpu;         /* its gt_rgpu handle */
  } * snaps;              /* at range opens; tag = index + 1 */
  struct gt_rgpu *rgpu;   /* GPU time of ranges (range_gpu.h) */
  struct rp_req *cur_req; /* the request of the call on_api is handling, or NULL */
  uint32_t cur_req_idx;   /* its range index + 1 */
  size_t nsnaps, csnaps, *free_snaps, nfree_snaps, cfree_snaps;
  struct gt_map sites[RP_SITES]; /* pid << 32 | stack id -> calls */
  struct gt_map sync_site_ns;    /* pid << 32 | stack id -> ns blocked in syncs */
  struct gt_symtab *symtab;      /* the model's stacks and symbols, for call sites */
  struct gt_map errs;            /* api << 32 | result -> failed calls */
  struct rp_rulestats rs;
  uint64_t dev_records;
  uint32_t dev_sample;
  /* rp_finish */
  struct rp_shares sh;    /* whole process: every traced thread's span */
  struct rp_shares serve; /* serving time: in requests (all types); traced 0: none */
  const struct rp_shares *basis; /* what verdict and shares are of: serve or sh */
  struct rp_gaps gaps;           /* device idle gaps, all processes */
  int gaps_measured;             /* from DEVICE records, not the model */
  double util[RP_UTIL_CHUNKS];   /* device timing only */
  struct gt_gpu_attr gattr;      /* GPU time by launch stack (gpu_attr.h) */
  struct rp_gpu_line {
    char site[200];
    double launches, gpu_ns;
  } gpu_lines[20]; /* by GPU time, most first (rp_gpu_lines) */
  size_t ngpu_lines;
  double gpu_lines_ns; /* kernel GPU time whose launches had stacks */
  struct {
    const struct gt_holder *holder; /* holders.h */
    uint64_t bytes;                 /* device memory it held at the end */
  } held[8];
  uint64_t peak_device_bytes; /* largest per-process device+managed peak */
  uint32_t peak_pid;
  uint64_t cuda_calls;   /* in the window: call records, NVTX not (model.h) */
  const char *verdict;   /* NULL: no data (no CUDA call in the window) */
  const char *runner_up; /* the second verdict when close (RP_VERDICT_CLOSE), else NULL */
  double verdict_share, runner_up_share; /* of traced time */
  struct rp_finding *findings;
  size_t nfindings, cfindings;
  struct rp_leak leak;
  struct rp_hw *hw; /* report_hw.c: NVML readings; NULL when the trace has none */
  /* gputrace start/stop's notes and a snapshot's cut (protocol.h GT_NOTE_*),
   * the first RP_SWITCHES_MAX */
  struct rp_switch {
    uint64_t ts_ns;
    enum rp_switch_kind { RP_STOPPED, RP_STARTED, RP_CUT } what;
  } switches[RP_SWITCHES_MAX];
  size_t nswitches;
  /* Set before rp_read: sees every event of the pass after the layers
   * did (a page drawing time series over the same read: cmd_html.c). */
  void (*tap)(void *ctx, const struct gt_event *ev);
  void *tap_ctx;
};

/* report_hw.c: METRIC and NOTE records in; section, findings and JSON out. */
struct rp_hw;
void rp_hw_feed(struct report *r, const struct gt_record *rec);
void rp_hw_findings(struct report *r);
void rp_hw_text(FILE *o, const struct report *r);
void rp_hw_json(FILE *o, const struct report *r); /* ",\"hardware\":{...}" */
void rp_hw_free(struct report *r);

void rp_init(struct report *r, const struct rp_options *opt);
/* Reads the whole trace. Returns 0, or 2 when it cannot be opened (message
 * on stderr, prefixed by `cmd`). r->damaged is set when the reader warned. */
int rp_read(struct report *r, const char *path, const char *cmd);
void rp_finish(struct report *r);
void rp_free(struct report *r);

/* report_base.c */
struct rp_proc *rp_proc_of(struct report *r, uint32_t pid); /* added if new */
/* The CPU-side split of a blocking call (docs/report.md, "Attribution"). */
void rp_cpu_split(uint64_t blocked, uint64_t copy_est, unsigned flags, uint64_t *kernel,
                  uint64_t *copy, uint64_t *sync);
int rp_is_sync_api(unsigned api); /* blocks the host: apis.h GT_AF_BLOCKING */
/* A kernel row's name as shown: a host function by its symbol when the
 * trace has it ("host function on_host"), else the name it was counted
 * under. Valid until the next call. */
const char *rp_kernel_name(const struct report *r, size_t idx);
/* Building findings: a new finding with its message, then evidence. */
struct rp_finding *rp_add_finding(struct report *r, const char *rule, const char *sev,
                                  const char *advice, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void rp_ev_u(struct rp_finding *f, const char *k, enum rp_ev_type t, uint64_t v);
void rp_ev_frac(struct rp_finding *f, const char *k, double v);
void rp_ev_str(struct rp_finding *f, const char *k, const char *v);
void rp_ev_json(struct rp_finding *f, const char *k, const char *json);
double rp_frac(uint64_t part, uint64_t whole); /* 0 when whole is 0 */

/* report_runs.c */
void rp_runs_add(struct rp_runs *runs, uint64_t s, uint64_t e);
uint64_t rp_runs_overlap(const struct rp_runs *runs, uint64_t s, uint64_t e);
uint64_t rp_union_overlap(const struct rp_runs *a, const struct rp_runs *b, uint64_t s,
                          uint64_t e);
/* Walks the union of two run lists as merged, sorted stretches: start with
 * {.a = ..., .b = ...}; each call gives the next stretch, 0 at the end. */
struct rp_uwalk {
  const struct rp_runs *a, *b;
  size_t i, j;
  int has;
  uint64_t cs, ce;
};
int rp_uwalk_next(struct rp_uwalk *w, uint64_t *s, uint64_t *e);

/* report_device.c */
void rp_device_finish(struct report *r);
/* Split the blocking calls kept for p (exactly where p has DEVICE records,
 * else by the CPU-side rule) into r's shares, and forget them. */
void rp_attribute_blocked(struct report *r, struct rp_proc *p);

/* report_leaks.c: memory_leak / pool_growth findings and r->leak. */
void rp_leak_findings(struct report *r);

/* report_requests.c: request types (outermost NVTX ranges, by name). */
void rp_requests_text(FILE *o, const struct report *r);
void rp_requests_json(FILE *o, const struct report *r); /* "\"requests\":[...],\n" */
void rp_request_findings(struct report *r);

/* report_rules.c */
void rp_verdict(struct report *r);
void rp_findings(struct report *r);
/* report_sites.c: the top call sites of a kind of call (RP_SITE_*: by
 * calls) or of the time blocked in syncs (RP_SITES: by ns), stacks with the
 * same user frame together. */
struct rp_site {
  char name[512];         /* "fn at file:line", or "pid P stack S" without symbols */
  uint32_t pid, stack_id; /* the stack contributing most */
  uint64_t value;         /* calls or ns */
};
int rp_top_sites(struct report *r, int which, struct rp_site out[3]); /* how many */
/* GPU time by the line that launched it (report_sites.c), after the read. */
void rp_gpu_lines(struct report *r);
/* "function at file:line" of a stack's origin; "-" for stack 0. */
void rp_site_text(struct report *r, uint32_t pid, uint32_t stack, char *buf, size_t len);
/* report_graphs.c: the graphs section (one row per executable graph). */
void rp_graphs_text(FILE *o, struct report *r);
void rp_graphs_json(FILE *o, struct report *r);
void rp_graph_findings(struct report *r); /* docs/report.md "Findings" */
/* "name ×N; name ×N" (or "name 1.2 ms; ..."), or NULL when no stacks. */
const char *rp_stack_sites(struct report *r, int which, char *buf, size_t len);

/* report_out.c */
void rp_print_text(FILE *out, struct report *r, const char *path);
void rp_print_json(FILE *out, struct report *r);
/* The order report lists kernel rows (knames' indexes: by GPU time, else
 * launch time, largest first) and range names (rnames': by total time), as
 * malloc'd arrays of knames.n and rnames.n: other outputs (the HTML page)
 * list theirs in the same order. */
size_t *rp_kernel_order(const struct report *r);
size_t *rp_range_order(const struct report *r);

#endif
