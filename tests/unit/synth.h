/* synth.h — synthetic traces for the unit tests, written with the
 * project's own trace writer (gt_writer), record by record.
 *
 * Contract: synth_open creates a trace in a fresh temporary directory
 * (synth_dir) and sets the defaults every record gets (pid, tid); the
 * builders below fill one record of each kind and append it; synth_chunk
 * closes the chunk being written (so a test controls where chunks end);
 * synth_close finishes the file; synth_session reads one through a session
 * and a tool. Any failure ends the test at once. */
#ifndef GPUTRACE_TEST_SYNTH_H
#define GPUTRACE_TEST_SYNTH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_file.h"
#include "session.h"

struct synth {
  struct gt_writer *w;
  uint32_t pid, tid;
};

static char synth_tmp[64];

/* A directory for this test's traces (made once per process). */
static inline const char *synth_dir(void) {
  if (!synth_tmp[0]) {
    snprintf(synth_tmp, sizeof synth_tmp, "/tmp/gt_unit_XXXXXX");
    if (!mkdtemp(synth_tmp)) {
      perror("mkdtemp");
      exit(1);
    }
  }
  return synth_tmp;
}

/* The path of NAME in synth_dir (a static buffer per call site's use). */
static inline const char *synth_path(const char *name, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s", synth_dir(), name);
  return buf;
}

static inline void synth_open(struct synth *s, const char *path) {
  char err[256];
  s->w = gt_writer_open(path, 0, err, sizeof err);
  if (!s->w) {
    fprintf(stderr, "synth: %s\n", err);
    exit(1);
  }
  s->pid = s->tid = 100;
}

static inline void synth_put(struct synth *s, struct gt_record *r) {
  if (!r->pid)
    r->pid = s->pid;
  if (!r->tid)
    r->tid = s->tid;
  if (!r->nslots)
    r->nslots = 1;
  if (gt_writer_append(s->w, r) != 0) {
    fprintf(stderr, "synth: append failed\n");
    exit(1);
  }
}

static inline void synth_chunk(struct synth *s) {
  gt_writer_flush(s->w);
}

static inline void synth_close(struct synth *s) {
  if (gt_writer_close(s->w) != 0) {
    fprintf(stderr, "synth: close failed\n");
    exit(1);
  }
  s->w = NULL;
}

/* A record of `kind` made by `api` at ts lasting dur: the common fields. */
static inline struct gt_record synth_rec(unsigned kind, unsigned api, uint64_t ts,
                                         uint64_t dur) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.kind = (uint8_t)kind;
  r.api = (uint16_t)api;
  r.ts_ns = ts;
  r.dur_ns = dur;
  r.nslots = 1;
  return r;
}

/* A record with text (process start, kernel name, NVTX message). */
static inline void synth_put_text(struct synth *s, struct gt_record r, const char *text) {
  struct gt_record buf[GT_MAX_SLOTS];
  buf[0] = r;
  gt_record_attach_text(&buf[0], text, strlen(text));
  synth_put(s, &buf[0]);
}

static inline void synth_process(struct synth *s, uint64_t ts, const char *cmdline) {
  struct gt_record r = synth_rec(GT_KIND_PROCESS, GT_API_gputrace_process, ts, 0);
  r.u.proc.phase = GT_PROC_START;
  synth_put_text(s, r, cmdline);
}

static inline void synth_process_end(struct synth *s, uint64_t ts, int exited) {
  struct gt_record r = synth_rec(GT_KIND_PROCESS, GT_API_gputrace_process, ts, 0);
  r.u.proc.phase = GT_PROC_END;
  r.u.proc.exited = (uint32_t)exited;
  synth_put(s, &r);
}

static inline void synth_alloc(struct synth *s, uint64_t ts, uint64_t ptr, uint64_t bytes,
                               unsigned memory, uint32_t stack) {
  unsigned api = memory == GT_MEM_PINNED_HOST ? GT_API_cudaMallocHost : GT_API_cudaMalloc;
  struct gt_record r = synth_rec(GT_KIND_ALLOC, api, ts, 10);
  r.u.mem.ptr = ptr;
  r.u.mem.bytes = bytes;
  r.u.mem.memory = (uint8_t)memory;
  r.stack_id = stack;
  synth_put(s, &r);
}

static inline void synth_free(struct synth *s, uint64_t ts, uint64_t ptr, unsigned api,
                              int result) {
  struct gt_record r = synth_rec(GT_KIND_FREE, api, ts, 10);
  r.u.mem.ptr = ptr;
  r.result = result;
  synth_put(s, &r);
}

static inline void synth_launch(struct synth *s, uint64_t ts, uint64_t dur,
                                uint64_t kernel, uint64_t stream, int result) {
  struct gt_record r = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, ts, dur);
  r.u.launch.kernel = kernel;
  r.u.launch.stream = stream;
  r.u.launch.grid[0] = r.u.launch.block[0] = 1;
  r.result = result;
  synth_put(s, &r);
}

static inline void synth_sync(struct synth *s, uint64_t ts, uint64_t dur) {
  struct gt_record r = synth_rec(GT_KIND_SYNC, GT_API_cudaDeviceSynchronize, ts, dur);
  synth_put(s, &r);
}

/* A copy; flags: GT_F_ASYNC, GT_F_PINNED, GT_F_PAGEABLE. */
static inline void synth_copy(struct synth *s, uint64_t ts, uint64_t dur, uint64_t bytes,
                              unsigned dir, uint32_t flags) {
  unsigned api = flags & GT_F_ASYNC ? GT_API_cudaMemcpyAsync : GT_API_cudaMemcpy;
  struct gt_record r = synth_rec(GT_KIND_MEMCPY, api, ts, dur);
  r.u.copy.bytes = bytes;
  r.u.copy.dir = (uint8_t)dir;
  r.flags = flags;
  synth_put(s, &r);
}

static inline void synth_nvtx(struct synth *s, uint64_t ts, unsigned op,
                              const char *text) {
  static const unsigned apis[] = {
      GT_API_none,      GT_API_nvtxRangePushA,  GT_API_nvtxRangePop,
      GT_API_nvtxMarkA, GT_API_nvtxRangeStartA, GT_API_nvtxRangeEnd};
  struct gt_record r = synth_rec(GT_KIND_NVTX, apis[op], ts, 0);
  r.u.nvtx.op = op;
  if (text)
    synth_put_text(s, r, text);
  else
    synth_put(s, &r);
}

static inline void synth_kernel_name(struct synth *s, uint64_t ts, uint64_t kernel,
                                     const char *name) {
  struct gt_record r = synth_rec(GT_KIND_KERNEL_NAME, GT_API_gputrace_kernel_name, ts, 0);
  r.u.kname.kernel = kernel;
  synth_put_text(s, r, name);
}

/* Device work of a launch (of_kind launch) or copy, timed by events. */
static inline void synth_device(struct synth *s, uint64_t ts, uint64_t dur,
                                unsigned of_kind, uint32_t corr) {
  struct gt_record r = synth_rec(GT_KIND_DEVICE, GT_API___cudaLaunchKernel, ts, dur);
  r.u.device.of_kind = (uint8_t)of_kind;
  r.u.device.corr = corr;
  r.u.device.sample = 1;
  r.u.device.source = GT_DEVTIME_EVENTS;
  synth_put(s, &r);
}

/* Open o->path as a session and run t over it; the caller closes it. */
static inline struct gt_session *synth_session(const struct gt_session_opts *o,
                                               const struct gt_tool *t) {
  char err[512];
  struct gt_session *s = gt_session_open(o, err, sizeof err);
  if (!s) {
    fprintf(stderr, "synth: %s\n", err);
    exit(1);
  }
  gt_session_run(s, t);
  return s;
}

#endif
