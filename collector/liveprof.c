/* liveprof.c — live pprof profiles of every traced process:
 * `record --pprof-dir DIR --pprof-every 60s`, or GPUTRACE_PPROF_DIR under
 * plain LD_PRELOAD, so a sidecar can push them to Pyroscope while the
 * program runs (docs/profiles.md).
 *
 * Contract (collector.h has the API):
 *  - It observes every record the sink takes (the drain loop's thread, so
 *    no lock) and keeps per process what `gputrace pprof` would compute
 *    from the trace so far: the heap and symbol layers (model/model.h),
 *    the memory profile's sites and live blocks, and this interval's GPU
 *    time by launch stack (model/gpu_attr.h).
 *  - Every interval, and once more when the process ends, it writes
 *    DIR/gputrace-PID-SEQ.mem.pb.gz and DIR/gputrace-PID-SEQ.gpu.pb.gz
 *    (SEQ from 000001), each atomically (a temporary file renamed into
 *    place: a sidecar never reads half a profile). Memory: alloc_* count
 *    the interval's allocations, inuse_* what the process holds at its end
 *    (so in-use space growing across a process's files is a leak in the
 *    making); GPU: the interval's launches, copies and memsets. Each
 *    profile's time and duration are its interval's.
 *  - Only the newest `keep` files of a process and kind are kept: after
 *    writing SEQ it deletes SEQ-keep (a name it wrote itself), unless keep
 *    is 0.
 *  - A process's state goes when its end record passes. Memory per process:
 *    live blocks, distinct stacks and frames, sites.
 *  - A write that fails is counted, the first failure said on stderr; the
 *    trace is never affected.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/map.h"
#include "graphs.h"
#include "profiles.h"

struct proc {
  uint32_t pid;
  uint32_t seq;      /* profiles written so far */
  uint64_t since_ns; /* this interval's start (CLOCK_MONOTONIC) */
  struct gt_model *model;
  struct gt_memprof *mem;
  struct gt_gpu_attr gpu;   /* this interval's */
  struct gt_graphs *graphs; /* graph launches run their nodes (graphs.h) */
};

struct gt_liveprof {
  char dir[4096];
  uint64_t every_ns;
  unsigned keep;
  struct gt_map index; /* pid -> struct proc * */
  struct proc **procs;
  size_t nprocs, cprocs;
  uint64_t written, failed;
};

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct gt_liveprof *gt_liveprof_start(const char *dir, uint64_t every_ns, unsigned keep,
                                      char *err, size_t errlen) {
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(err, errlen, "pprof directory %s: %s", dir, strerror(errno));
    return NULL;
  }
  struct gt_liveprof *lp = calloc(1, sizeof *lp);
  if (!lp || strlen(dir) >= sizeof lp->dir - 64) {
    snprintf(err, errlen, "pprof directory %s: %s", dir,
             lp ? "name too long" : "out of memory");
    free(lp);
    return NULL;
  }
  snprintf(lp->dir, sizeof lp->dir, "%s", dir);
  lp->every_ns = every_ns;
  lp->keep = keep;
  gt_map_init(&lp->index);
  return lp;
}

static struct proc *proc_of(struct gt_liveprof *lp, uint32_t pid) {
  uint64_t v;
  if (gt_map_get(&lp->index, pid, &v))
    return (struct proc *)(uintptr_t)v;
  struct proc *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->pid = pid;
  p->since_ns = clock_ns(CLOCK_MONOTONIC);
  p->model = gt_model_new(GT_LAYER_HEAP | GT_LAYER_SYMBOLS);
  p->graphs = gt_graphs_new(p->model);
  p->mem = gt_memprof_new();
  gt_gpu_attr_init(&p->gpu);
  if (lp->nprocs == lp->cprocs) {
    size_t cap = lp->cprocs ? 2 * lp->cprocs : 16;
    struct proc **grown = realloc(lp->procs, cap * sizeof *grown);
    if (!grown)
      abort(); /* the collector cannot go on without memory (as sink.c) */
    lp->procs = grown, lp->cprocs = cap;
  }
  lp->procs[lp->nprocs++] = p;
  gt_map_put(&lp->index, pid, (uint64_t)(uintptr_t)p);
  return p;
}

static void profile_name(const struct gt_liveprof *lp, uint32_t pid, uint32_t seq,
                         const char *kind, char *buf, size_t len) {
  snprintf(buf, len, "%s/gputrace-%u-%06u.%s.pb.gz", lp->dir, pid, seq, kind);
}

static void write_one(struct gt_liveprof *lp, struct proc *p, struct gt_pprof *prof,
                      const char *kind, int64_t wall_ns, int64_t dur_ns) {
  char path[4200], err[600];
  profile_name(lp, p->pid, p->seq, kind, path, sizeof path);
  if (gt_pprof_write(prof, path, wall_ns, dur_ns, err, sizeof err) == 0) {
    lp->written++;
  } else if (lp->failed++ == 0) {
    gt_collector_say("live profile: %s (later failures counted)", err);
  }
  gt_pprof_free(prof);
  if (lp->keep && p->seq > lp->keep) {
    profile_name(lp, p->pid, p->seq - lp->keep, kind, path, sizeof path);
    unlink(path);
  }
}

/* This interval's two profiles, then a new interval. */
static void write_profiles(struct gt_liveprof *lp, struct proc *p, uint64_t now_ns) {
  struct gt_symtab *st = gt_model_symtab(p->model);
  int64_t dur = (int64_t)(now_ns - p->since_ns);
  int64_t wall = (int64_t)clock_ns(CLOCK_REALTIME) - dur;
  p->seq++;
  write_one(lp, p, gt_memprof_profile(p->mem, st), "mem", wall, dur);
  gt_gpu_attr_finish(&p->gpu);
  write_one(lp, p, gt_gpuprof_profile(&p->gpu, st), "gpu", wall, dur);
  gt_memprof_restart(p->mem);
  gt_gpu_attr_free(&p->gpu);
  gt_gpu_attr_init(&p->gpu);
  p->since_ns = now_ns;
}

static void end_proc(struct gt_liveprof *lp, struct proc *p, uint64_t now_ns) {
  write_profiles(lp, p, now_ns);
  gt_map_del(&lp->index, p->pid);
  for (size_t i = 0; i < lp->nprocs; i++)
    if (lp->procs[i] == p) {
      lp->procs[i] = lp->procs[--lp->nprocs];
      break;
    }
  gt_model_free(p->model);
  gt_memprof_free(p->mem);
  gt_gpu_attr_free(&p->gpu);
  gt_graphs_free(p->graphs);
  free(p);
}

/* An expanded graph launch or its DEVICE record: the work is its nodes'. */
static void feed_graph_runs(struct proc *p) {
  size_t n;
  const struct gt_record *runs = gt_graphs_expansion(p->graphs, &n);
  for (size_t i = 0; i < n; i++)
    gt_gpu_attr_feed(&p->gpu, p->model, &runs[i]);
}

void gt_liveprof_observe(void *ctx, const struct gt_record *rec) {
  struct gt_liveprof *lp = ctx;
  switch (rec->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
  case GT_KIND_LAUNCH:
  case GT_KIND_MEMCPY:
  case GT_KIND_MEMSET:
  case GT_KIND_DEVICE:
  case GT_KIND_GRAPH: /* captures and instantiations: what graph launches run */
  case GT_KIND_PROCESS:
  case GT_KIND_KERNEL_NAME:
  case GT_KIND_STACK:
  case GT_KIND_MODULE:
  case GT_KIND_PYFRAME:
  case GT_KIND_FRAME:
    break;
  default:
    return; /* syncs, streams, events, NVTX...: in no profile */
  }
  struct proc *p = proc_of(lp, rec->pid);
  if (!p)
    return;
  enum gt_graphs_verdict v = gt_graphs_feed(p->graphs, rec);
  if (v == GT_GRAPHS_HIDE) /* a graph's node: no work, its memory the graph's */
    return;
  struct gt_event ev;
  gt_model_feed(p->model, rec, &ev);
  if (rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE)
    gt_memprof_feed(p->mem, &ev);
  else if (v == GT_GRAPHS_EXPAND)
    feed_graph_runs(p);
  else if (GT_GPU_ATTR_KINDS >> rec->kind & 1)
    gt_gpu_attr_feed(&p->gpu, p->model, rec);
  else if (rec->kind == GT_KIND_PROCESS && rec->u.proc.phase == GT_PROC_END)
    end_proc(lp, p, clock_ns(CLOCK_MONOTONIC));
}

void gt_liveprof_tick(struct gt_liveprof *lp, uint64_t now_ns) {
  if (!lp)
    return;
  for (size_t i = 0; i < lp->nprocs; i++)
    if (now_ns - lp->procs[i]->since_ns >= lp->every_ns)
      write_profiles(lp, lp->procs[i], now_ns);
}

void gt_liveprof_stop(struct gt_liveprof *lp) {
  if (!lp)
    return;
  uint64_t now = clock_ns(CLOCK_MONOTONIC);
  while (lp->nprocs) /* processes whose end did not come (a stop on a signal) */
    end_proc(lp, lp->procs[lp->nprocs - 1], now);
  if (lp->failed)
    gt_collector_say("%llu of %llu live profiles could not be written",
                     (unsigned long long)lp->failed,
                     (unsigned long long)(lp->failed + lp->written));
  gt_map_free(&lp->index);
  free(lp->procs);
  free(lp);
}
