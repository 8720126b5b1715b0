/* leaks.h — the leak analysis behind `gputrace leaks` and `gputrace flame`.
 *
 * Contract: gt_leaks_run reads the trace once (allocations, frees and NVTX
 * records in time order) through a session with the allocation, NVTX,
 * symbol and graph layers (session.h): stacks
 * and symbols, the live heap of every process, invalid frees, each
 * process's peak of device bytes, bytes allocated per stack, the outermost
 * NVTX range each allocation was made in. The stacks holding memory at each
 * peak and the live bytes of every (process, stack, memory kind) group at
 * GT_GROWTH_BUCKETS equal time steps — from which steady growth is told
 * apart from memory held since start-up (docs/leaks.md gives the rule) —
 * are kept as the changes to live bytes come when the run's span can be
 * told before reading it (the first and last chunks of a plain file: one
 * pass, checked against the span read), else replayed from a log of the
 * changes once the span is known (from a second session when the log would
 * pass its bound).
 * What is live when the trace ends is leaked: at process exit, or at the
 * kill for a killed process. Memory is bounded by live blocks, distinct
 * stacks and ranges, and the log when there is one (32 bytes per
 * allocation and free, at most gt_leaks_opts.log_max of them). */
#ifndef GPUTRACE_ANALYZE_LEAKS_H
#define GPUTRACE_ANALYZE_LEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "heap.h"
#include "stats.h"
#include "symtab.h"

#define GT_GROWTH_BUCKETS 20
/* A growth rate per minute is given only for a run at least this long
 * (docs/leaks.md, "Growth"): over milliseconds, a few start-up blocks
 * extrapolate to gigabytes a minute. */
#define GT_GROWTH_MIN_NS 10000000000ull
#define GT_MAX_INVALID 1000 /* invalid frees kept in detail (all are counted) */

struct gt_group { /* live (or allocated) bytes of one stack in one process */
  uint32_t pid, stack_id;
  uint8_t memory;
  uint64_t bytes, blocks;
  int suppressed;
  int growing;
  int rated;                          /* the run lasted GT_GROWTH_MIN_NS: a rate */
  double bytes_per_min;               /* growth rate (least squares); 0 unless rated */
  uint64_t series[GT_GROWTH_BUCKETS]; /* live bytes at the end of each step */
  uint64_t carried;     /* bytes of its blocks carried into a rolling set's first file
                           (live before it): not growth of the run read */
  uint64_t range_bytes; /* leaked bytes allocated inside ranges */
  uint32_t range_name;  /* the range holding most of them */
  /* leaks.c's, in one pass: bytes and blocks at its process's latest peak
   * when they changed since (snap_epoch == that peak's epoch) */
  uint64_t snap_bytes, snap_blocks, snap_epoch;
};

struct gt_invalid_free {
  uint32_t pid, tid, stack_id, alloc_stack;
  uint64_t ptr, ts_ns;
  uint16_t api;
  int result;
  enum gt_free_status status;
  uint8_t alloc_memory;
};

struct gt_proc_summary {
  uint32_t pid;
  int ended;  /* has a process-end record (its connection closed) */
  int exited; /* ...and it went through exit(), not a kill, crash or _exit */
  uint64_t peak_device, peak_ts;
  uint64_t peak_record;     /* index of the change (alloc) that reached the peak */
  uint64_t peak_epoch;      /* leaks.c's, in one pass: peaks reached so far */
  struct gt_group *at_peak; /* stacks holding device memory at the peak */
  size_t nat_peak;
};

/* The trace's last allocation, when it failed for want of memory
 * (schema.h's gt_record_out_of_memory): where it was asked for, how much,
 * and who held the process's device and managed memory at that instant
 * (leaks_oom.c). */
#define GT_OOM_HOLDERS 3 /* the sites named as holding it, largest first */
struct gt_oom_site {
  char site[200]; /* "function at file:line" (gt_leaks_site) */
  uint64_t bytes;
};
struct gt_oom {
  int present;
  uint32_t pid, stack_id;
  uint16_t api;
  uint64_t ts_ns, requested, held; /* held: live device + managed bytes */
  char site[200];                  /* the failing call's (gt_leaks_site) */
  char where[240];                 /* its line: "file:line in function" */
  struct gt_oom_site holders[GT_OOM_HOLDERS];
  size_t nholders, nsites; /* named, and of all sites holding memory */
  struct gt_group *stacks; /* leaks_oom.c's: live bytes by stack then */
  size_t nstacks;
  uint64_t stacks_at; /* the change count they were taken at */
};

struct gt_session;

struct gt_leaks {
  struct gt_session *session; /* open until gt_leaks_free: symtab is its */
  struct gt_symtab *symtab;
  struct gt_group *leaks; /* live at the end, largest first */
  size_t nleaks;
  struct gt_group *allocated; /* every allocation, by stack (for flame) */
  size_t nallocated;
  struct gt_invalid_free *invalid;
  size_t ninvalid;
  uint64_t invalid_total;
  struct gt_proc_summary *procs;
  size_t nprocs;
  struct gt_strtab ranges; /* outermost NVTX range names, by id - 1 */
  uint64_t *range_counts;  /* occurrences, by id - 1 */
  uint64_t first_ns, last_ns;
  uint64_t suppressed_bytes, suppressed_blocks;
  int damaged;       /* the reader warned */
  int passes;        /* sessions over the trace: 1, or 2 (the log passed its bound) */
  struct gt_oom oom; /* the last allocation, when it ran out of memory */
};

/* Suppression patterns (LSan style `leak:PATTERN`, matched with fnmatch
 * against each frame's function, file and module; `*` wildcards). */
struct gt_suppressions {
  char **patterns;
  size_t n;
};
int gt_suppressions_load(const char *path, struct gt_suppressions *s, char *err,
                         size_t len);
void gt_suppressions_free(struct gt_suppressions *s);

struct gt_leaks_opts {
  const struct gt_suppressions *sup; /* NULL: none */
  size_t log_max;  /* changes logged before replaying from the file; 0: 2 M */
  int no_guess;    /* never one pass from a guessed span (tests: the log's paths) */
  int no_wait;     /* gt_session_opts.no_wait */
  const char *cmd; /* names the progress line (progress.h); NULL: none */
};

/* 0, or -1 with err set (unreadable trace). */
int gt_leaks_run(const char *path, const struct gt_leaks_opts *o, struct gt_leaks *out,
                 char *err, size_t errlen);
void gt_leaks_free(struct gt_leaks *l);

/* How many frames from f[i] on (innermost first) are the CUDA runtime's or
 * the code nvcc and its headers put between the user's call and it: 0 for a
 * frame of the user's, 1 for one of theirs, 2 for a launch stub
 * (__device_stub__*) and its caller, nvcc's host function named as the
 * kernel. The one rule of which frames are glue, for leaks, report and
 * flame. */
int gt_glue_frames(const struct gt_frame *f, int n, int i);

/* Where the user's code asked for the memory: the innermost Python frame
 * if there is one, else the first frame that is not glue
 * (gt_glue_frames); NULL for an empty stack. */
const struct gt_frame *gt_leaks_origin(const struct gt_frame *frames, int n);

/* An allocation site as leaks and report name it: "function at file:line"
 * of the stack's origin (gt_leaks_origin), the function alone without a
 * file, "pid P stack S" without frames. */
void gt_leaks_site(struct gt_symtab *t, uint32_t pid, uint32_t stack_id, char *buf,
                   size_t len);

/* leaks_oom.c. See: each allocation record of the first read, in time
 * order (`changes`: the run's count of changes to live bytes so far).
 * Finish: the sites named, once symbols are in. Line: the one line leaks
 * and report open with, "out of memory at LINE: asked N bytes while X
 * were held by ..." (valid until the next call). */
struct gt_model;
void gt_oom_see(struct gt_oom *o, struct gt_model *m, const struct gt_record *rec,
                uint64_t changes);
void gt_oom_finish(struct gt_oom *o, struct gt_symtab *t);
const char *gt_oom_line(const struct gt_oom *o);

#endif
