/* cmd_pprof.c — `gputrace pprof FILE [-o OUT.pb.gz] [--gpu] [--pid P] [--from T]
 * [--to T] [--force]`: the trace as a pprof profile (profile.proto, gzip) for
 * go tool pprof, Pyroscope, Grafana and speedscope (docs/profiles.md).
 *
 * Default: device memory, with Go's heap sample types in Go's order —
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes — by allocation stack (Python frames included), every
 * memory kind, labels `memory` and `pid`. Allocated: each successful
 * allocation in the window; in use: what is still allocated at the end of
 * the trace (or at --to), the blocks `gputrace leaks` reports.
 * --gpu: launches/count, gpu_time/nanoseconds and bytes/bytes by launch
 * stack, with the kernel (or "memcpy HtoD", "memset") as the leaf frame, as
 * estimated by gpu_attr.h (its totals are the report's GPU totals).
 * Output: FILE with .gtrace replaced by .mem.pb.gz or .gpu.pb.gz, under
 * outfile.h's rules (no symlink followed; an existing file needs --force). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "gpu_attr.h"
#include "gputrace/outfile.h"
#include "gputrace/units.h"
#include "notices.h"
#include "pprof_build.h"
#include "profiles.h"
#include "progress.h"
#include "session.h"
#include "shared_options.h"
#include "util.h"

struct pprof_opts {
  const char *in, *out;
  int gpu, force, has_pid, no_wait;
  uint32_t pid;
  uint64_t from, to; /* relative to the trace's origin; to 0: the end */
  char out_buf[4200];
};

struct mem_run {
  const struct pprof_opts *op;
  struct gt_session *session;
  struct gt_memprof *prof;
  uint64_t first_ns, last_ns;
};

/* ---- options ---- */

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse(int argc, char **argv, struct pprof_opts *o) {
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&o->out, "OUT.pb.gz",
                    "the profile (default: FILE's .mem.pb.gz/.gpu.pb.gz)"),
      GT_OPT_FLAG(0, "gpu", &o->gpu, "GPU time by launch stack, not device memory"),
      GT_OPT_PID(&o->pid, &o->has_pid),
      GT_OPT_FROM(&o->from),
      GT_OPT_TO(&o->to),
      GT_OPT_FORCE(&o->force),
      GT_OPT_NO_WAIT(&o->no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd = GT_TRACE_COMMAND(
      "pprof", options,
      "device memory (default) or GPU time (--gpu) by stack, as a pprof profile");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  o->in = argv[0];
  if (!gt_notice_window("pprof", o->from, o->to ? o->to : UINT64_MAX))
    return 2;    /* --to 0 (or none): to the end */
  if (!o->out) { /* run.gtrace -> run.mem.pb.gz */
    size_t len = strlen(o->in);
    int strip = len > 7 && strcmp(o->in + len - 7, ".gtrace") == 0;
    snprintf(o->out_buf, sizeof o->out_buf, "%.*s.%s.pb.gz", (int)(strip ? len - 7 : len),
             o->in, o->gpu ? "gpu" : "mem");
    o->out = o->out_buf;
  }
  return GT_OPTIONS_RUN;
}

/* ---- device memory ---- */

static int in_window(const struct mem_run *r, const struct gt_record *rec) {
  uint64_t origin = gt_session_origin(r->session);
  uint64_t t = rec->ts_ns > origin ? rec->ts_ns - origin : 0;
  return (!r->op->has_pid || rec->pid == r->op->pid) && t >= r->op->from &&
         (!r->op->to || t < r->op->to);
}

static void on_memory(void *ctx, const struct gt_event *ev) {
  struct mem_run *r = ctx;
  if (!in_window(r, ev->rec))
    return;
  if (ev->rec->kind == GT_KIND_ALLOC) {
    if (!r->first_ns)
      r->first_ns = ev->rec->ts_ns;
    r->last_ns = ev->rec->ts_ns;
  }
  gt_memprof_feed(r->prof, ev);
}

static int memory_profile(const struct pprof_opts *op, struct gt_session *s,
                          struct gt_pprof **out, int64_t *t0, int64_t *dur) {
  struct mem_run r = {.op = op, .session = s, .prof = gt_memprof_new()};
  struct gt_tool tool = {.ctx = &r};
  tool.on[GT_KIND_ALLOC] = tool.on[GT_KIND_FREE] = on_memory;
  gt_session_run(s, &tool);
  *out = gt_memprof_profile(r.prof, gt_model_symtab(gt_session_model(s)));
  *t0 = (int64_t)r.first_ns;
  *dur = (int64_t)(r.last_ns - r.first_ns);
  gt_memprof_free(r.prof);
  return 0;
}

/* ---- GPU time ---- */

struct gpu_run {
  const struct pprof_opts *op;
  struct gt_session *session;
  struct gt_gpu_attr attr;
  uint64_t first_ns, last_ns;
};

static void on_gpu_record(void *ctx, const struct gt_event *ev) {
  struct gpu_run *r = ctx;
  const struct gt_record *rec = ev->rec;
  if (rec->kind == GT_KIND_KERNEL_NAME) { /* a definition: no time of the run */
    gt_gpu_attr_feed(&r->attr, gt_session_model(r->session), rec);
    return;
  }
  if (!r->first_ns) { /* the origin is known from the first record on */
    uint64_t origin = gt_session_origin(r->session);
    r->attr.from_ns = origin + r->op->from;
    r->attr.to_ns = r->op->to ? origin + r->op->to : 0;
    r->attr.has_pid = r->op->has_pid;
    r->attr.pid = r->op->pid;
    r->first_ns = rec->ts_ns;
  }
  r->last_ns = rec->ts_ns;
  gt_gpu_attr_feed(&r->attr, gt_session_model(r->session), rec);
}

static int gpu_profile(const struct pprof_opts *op, struct gt_session *s,
                       struct gt_pprof **out, int64_t *t0, int64_t *dur) {
  struct gpu_run r = {.op = op, .session = s};
  gt_gpu_attr_init(&r.attr);
  struct gt_tool tool = {.ctx = &r};
  gt_tool_kinds(&tool, GT_GPU_ATTR_KINDS, on_gpu_record);
  gt_session_run(s, &tool);
  gt_gpu_attr_finish(&r.attr);
  struct gt_pprof *p = gt_gpuprof_profile(&r.attr, gt_model_symtab(gt_session_model(s)));
  gt_gpu_attr_free(&r.attr);
  *out = p;
  *t0 = (int64_t)r.first_ns;
  *dur = (int64_t)(r.last_ns - r.first_ns);
  return 0;
}

/* ---- the command ---- */

int cmd_pprof(int argc, char **argv) {
  struct pprof_opts op = {0};
  int rc = parse(argc, argv, &op);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  char err[512];
  int fd = gt_out_open(op.out, op.force ? GT_OUT_FORCE : GT_OUT_NEW, err, sizeof err);
  if (fd < 0) {
    fprintf(stderr, "gputrace pprof: %s\n", err);
    return 2;
  }
  struct gt_session_opts so = {.path = op.in,
                               .layers =
                                   GT_LAYER_HEAP | GT_LAYER_SYMBOLS | GT_LAYER_GRAPHS,
                               .threads = -1,
                               .no_wait = op.no_wait};
  struct gt_progress pg;
  gt_progress_watch(&pg, "gputrace pprof", 0, &so);
  struct gt_session *s = gt_session_open(&so, err, sizeof err);
  if (!s) {
    fprintf(stderr, "gputrace pprof: %s\n", err);
    close(fd);
    unlink(op.out);
    return 2;
  }
  struct gt_pprof *p = NULL;
  int64_t t0 = 0, dur = 0;
  (op.gpu ? gpu_profile : memory_profile)(&op, s, &p, &t0, &dur);
  gt_progress_done(&pg);
  gt_notice_no_cuda("gputrace pprof", op.in, s);
  char lost[256];
  if (gt_notice_stacks_lost(
          gt_model_totals(gt_session_model(s))->dropped_by_kind[GT_KIND_STACK], lost,
          sizeof lost))
    fprintf(stderr, "gputrace pprof: warning: %s\n", lost);
  const struct gt_filter f = {op.has_pid, op.pid, op.from, op.to ? op.to : UINT64_MAX};
  if (gt_notice_filter("gputrace pprof", op.in, s, &f)) {
    gt_session_close(s);
    gt_pprof_free(p);
    close(fd);
    unlink(op.out);
    return 2;
  }
  int damaged = gt_session_damaged(s);
  const struct gt_file_header *h = gt_session_header(s);
  int64_t wall = t0 ? (int64_t)h->realtime_ns + (t0 - (int64_t)h->monotonic_ns) : 0;
  gt_session_close(s);
  if (gt_pprof_write_fd(p, fd, op.out, wall, dur, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace pprof: %s\n", err);
    unlink(op.out);
    gt_pprof_free(p);
    return 2;
  }
  fprintf(stderr, "gputrace pprof: wrote %s (%s): go tool pprof -http=: %s\n", op.out,
          op.gpu ? "GPU time by launch stack" : "device memory by allocation stack",
          op.out);
  gt_pprof_free(p);
  return damaged ? 3 : 0;
}
