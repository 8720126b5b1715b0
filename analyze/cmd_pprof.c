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
#include "pprof_build.h"
#include "session.h"
#include "util.h"

#define SYNOPSIS                                                                         \
  "pprof FILE [-o OUT.pb.gz] [--gpu] [--pid P] [--from T] [--to T] [--force]\n"          \
  "  device memory (default) or GPU time (--gpu) by stack, as a pprof profile"
#define MAX_FRAMES 256

struct pprof_opts {
  const char *in, *out;
  int gpu, force, has_pid;
  uint32_t pid;
  uint64_t from, to; /* relative to the trace's origin; to 0: the end */
  char out_buf[4200];
};

struct live { /* a block still allocated, as the heap layer matched it */
  uint32_t pid, stack_id;
  uint8_t memory;
  uint64_t bytes;
};

struct site { /* allocations of one (pid, stack, memory kind) */
  uint32_t pid, stack_id;
  uint8_t memory;
  int64_t values[4]; /* alloc_objects, alloc_space, inuse_objects, inuse_space */
};

struct mem_run {
  const struct pprof_opts *op;
  struct gt_session *session;
  struct gt_map live_index; /* (pid, ptr) -> live index + 1 */
  struct live *live;
  size_t nlive, clive;
  struct gt_map site_index; /* (pid, stack, memory) -> site index + 1 */
  struct site *sites;
  size_t nsites, csites;
  uint64_t first_ns, last_ns;
};

/* ---- options ---- */

static int parse(int argc, char **argv, struct pprof_opts *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    uint64_t v;
    if (gt_streq(a, "--gpu")) {
      o->gpu = 1;
    } else if (gt_streq(a, "--force")) {
      o->force = 1;
    } else if (gt_streq(a, "-o") && has_val) {
      o->out = argv[++i];
    } else if (gt_streq(a, "--pid") && has_val) {
      char *end;
      unsigned long p = strtoul(argv[++i], &end, 10);
      if (*end || !*argv[i] || p > UINT32_MAX)
        return gt_usage_error("pprof", argv[i], SYNOPSIS);
      o->has_pid = 1, o->pid = (uint32_t)p;
    } else if ((gt_streq(a, "--from") || gt_streq(a, "--to")) && has_val) {
      if (gt_parse_duration(argv[++i], &v) != 0)
        return gt_usage_error("pprof", argv[i], SYNOPSIS);
      *(a[2] == 'f' ? &o->from : &o->to) = v;
    } else if (gt_streq(a, "-h") || gt_streq(a, "--help")) {
      return gt_usage_ok(SYNOPSIS), -1;
    } else if (a[0] == '-' || o->in) {
      return gt_usage_error("pprof", a, SYNOPSIS);
    } else {
      o->in = a;
    }
  }
  if (!o->in)
    return gt_usage_error("pprof", NULL, SYNOPSIS);
  if (o->to && o->to <= o->from) {
    fprintf(stderr, "gputrace pprof: --to must be later than --from\n");
    return 2;
  }
  if (!o->out) { /* run.gtrace -> run.mem.pb.gz */
    size_t len = strlen(o->in);
    int strip = len > 7 && strcmp(o->in + len - 7, ".gtrace") == 0;
    snprintf(o->out_buf, sizeof o->out_buf, "%.*s.%s.pb.gz", (int)(strip ? len - 7 : len),
             o->in, o->gpu ? "gpu" : "mem");
    o->out = o->out_buf;
  }
  return 0;
}

/* ---- locations ---- */

/* A stack as pprof locations, leaf first: inline levels of one address
 * share a location; Python frames are locations of their own. */
static size_t locations(struct gt_pprof *p, struct gt_symtab *st, uint32_t pid,
                        uint32_t stack, uint64_t *out, size_t room) {
  struct gt_frame f[MAX_FRAMES];
  int n = stack ? gt_symtab_stack(st, pid, stack, f, MAX_FRAMES) : 0;
  size_t k = 0;
  for (int i = 0; i < n && k < room;) {
    if (f[i].python) {
      out[k++] =
          gt_pprof_source(p, gt_pprof_function(p, f[i].function, f[i].file), f[i].line);
      i++;
      continue;
    }
    struct gt_pprof_line lines[16];
    size_t nl = 0;
    int j = i;
    for (; j < n && !f[j].python && f[j].ip == f[i].ip && nl < 16; j++)
      lines[nl++] = (struct gt_pprof_line){gt_pprof_function(p, f[j].function, f[j].file),
                                           (int64_t)f[j].line};
    struct gt_module_range m;
    uint64_t map = gt_symtab_module_of(st, pid, f[i].ip, &m)
                       ? gt_pprof_mapping(p, m.start, m.end, m.start - m.bias, m.path, "")
                       : 0;
    out[k++] = gt_pprof_native(p, map, f[i].ip, lines, nl);
    i = j;
  }
  if (k == 0 && room)
    out[k++] = gt_pprof_source(p, gt_pprof_function(p, "[no stack]", ""), 0);
  return k;
}

/* ---- device memory ---- */

static int in_window(const struct mem_run *r, const struct gt_record *rec) {
  uint64_t origin = gt_session_origin(r->session);
  uint64_t t = rec->ts_ns > origin ? rec->ts_ns - origin : 0;
  return (!r->op->has_pid || rec->pid == r->op->pid) && t >= r->op->from &&
         (!r->op->to || t < r->op->to);
}

/* Keyed as the heap layer keys its blocks (map.h). */
static uint64_t live_key(uint32_t pid, uint64_t ptr) {
  return gt_pid_key(pid, ptr);
}

static void forget(struct mem_run *r, uint32_t pid, uint64_t ptr) {
  uint64_t idx;
  if (!gt_map_get(&r->live_index, live_key(pid, ptr), &idx))
    return;
  gt_map_del(&r->live_index, live_key(pid, ptr));
  r->live[idx - 1].bytes = 0, r->live[idx - 1].memory = 0xff; /* gone */
}

/* Symbols may come after the allocations that need them (the collector
 * symbolizes off its drain loop): sites are summed while reading and turned
 * into pprof samples once the whole trace is read. */
static struct site *site_of(struct mem_run *r, uint32_t pid, uint32_t stack,
                            unsigned memory) {
  size_t at;
  int added;
  uint64_t key = gt_pid_key(pid, (uint64_t)stack << 2 | memory);
  r->sites = gt_find_or_add(&r->site_index, key, r->sites, &r->nsites, &r->csites,
                            sizeof *r->sites, &at, &added);
  struct site *x = &r->sites[at];
  if (added)
    x->pid = pid, x->stack_id = stack, x->memory = (uint8_t)memory;
  return x;
}

static void on_alloc(void *ctx, const struct gt_event *ev) {
  struct mem_run *r = ctx;
  const struct gt_record *rec = ev->rec;
  if (!in_window(r, rec))
    return;
  if (!r->first_ns)
    r->first_ns = rec->ts_ns;
  r->last_ns = rec->ts_ns;
  if (rec->result != 0 || !rec->u.mem.ptr || (rec->flags & GT_F_VMM_MAP))
    return;      /* cuMemMap holds no memory: cuMemCreate does */
  if (ev->block) /* the live block at this address was freed unseen */
    forget(r, ev->block->pid, ev->block->ptr);
  struct site *x = site_of(r, rec->pid, rec->stack_id, rec->u.mem.memory & 3);
  x->values[0]++;
  x->values[1] += (int64_t)rec->u.mem.bytes;
  r->live = gt_grow(r->live, &r->clive, r->nlive + 1, sizeof *r->live);
  r->live[r->nlive++] = (struct live){rec->pid, rec->stack_id,
                                      (uint8_t)(rec->u.mem.memory & 3), rec->u.mem.bytes};
  gt_map_put(&r->live_index, live_key(rec->pid, rec->u.mem.ptr), r->nlive);
}

static void on_free(void *ctx, const struct gt_event *ev) {
  struct mem_run *r = ctx;
  if (in_window(r, ev->rec) && ev->free_status == GT_FREE_OK && ev->block)
    forget(r, ev->block->pid, ev->block->ptr);
}

/* In use at the end (or --to): every block still live, by stack. */
static void add_inuse(struct mem_run *r) {
  for (size_t i = 0; i < r->nlive; i++) {
    const struct live *b = &r->live[i];
    if (b->memory == 0xff)
      continue;
    struct site *x = site_of(r, b->pid, b->stack_id, b->memory);
    x->values[2]++;
    x->values[3] += (int64_t)b->bytes;
  }
}

static struct gt_pprof *memory_samples(struct mem_run *r) {
  static const char *types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                "inuse_space"};
  static const char *units[] = {"count", "bytes", "count", "bytes"};
  struct gt_pprof *p = gt_pprof_new(types, units, 4);
  struct gt_symtab *st = gt_model_symtab(gt_session_model(r->session));
  for (size_t i = 0; i < r->nsites; i++) {
    const struct site *x = &r->sites[i];
    uint64_t locs[MAX_FRAMES];
    size_t n = locations(p, st, x->pid, x->stack_id, locs, MAX_FRAMES);
    struct gt_pprof_label labels[] = {{"memory", gt_memory_name(x->memory), 0},
                                      {"pid", NULL, (int64_t)x->pid}};
    gt_pprof_add(p, locs, n, x->values, labels, 2);
  }
  return p;
}

static int memory_profile(const struct pprof_opts *op, struct gt_session *s,
                          struct gt_pprof **out, int64_t *t0, int64_t *dur) {
  struct mem_run r = {.op = op, .session = s};
  gt_map_init(&r.live_index);
  gt_map_init(&r.site_index);
  struct gt_tool tool = {.ctx = &r};
  tool.on[GT_KIND_ALLOC] = on_alloc;
  tool.on[GT_KIND_FREE] = on_free;
  gt_session_run(s, &tool);
  add_inuse(&r);
  *out = memory_samples(&r);
  *t0 = (int64_t)r.first_ns;
  *dur = (int64_t)(r.last_ns - r.first_ns);
  gt_map_free(&r.live_index);
  gt_map_free(&r.site_index);
  free(r.live);
  free(r.sites);
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
  static const char *types[] = {"launches", "gpu_time", "bytes"};
  static const char *units[] = {"count", "nanoseconds", "bytes"};
  struct gpu_run r = {.op = op, .session = s};
  gt_gpu_attr_init(&r.attr);
  struct gt_tool tool = {.ctx = &r};
  tool.on[GT_KIND_LAUNCH] = tool.on[GT_KIND_MEMCPY] = tool.on[GT_KIND_MEMSET] =
      tool.on[GT_KIND_DEVICE] = on_gpu_record;
  gt_session_run(s, &tool);
  gt_gpu_attr_finish(&r.attr);
  struct gt_pprof *p = gt_pprof_new(types, units, 3);
  struct gt_symtab *st = gt_model_symtab(gt_session_model(s));
  for (size_t i = 0; i < r.attr.nsites; i++) {
    const struct gt_gpu_site *x = &r.attr.sites[i];
    uint64_t locs[MAX_FRAMES + 1];
    locs[0] = gt_pprof_source(p, gt_pprof_function(p, r.attr.names.strs[x->name], ""), 0);
    size_t n = 1 + locations(p, st, x->pid, x->stack_id, locs + 1, MAX_FRAMES);
    int64_t v[3] = {(int64_t)(x->calls + 0.5), (int64_t)(x->gpu_ns + 0.5),
                    (int64_t)(x->bytes + 0.5)};
    const char *kind = x->kind == GT_KIND_LAUNCH   ? "kernel"
                       : x->kind == GT_KIND_MEMCPY ? "memcpy"
                                                   : "memset";
    struct gt_pprof_label labels[] = {{"kind", kind, 0}, {"pid", NULL, (int64_t)x->pid}};
    gt_pprof_add(p, locs, n, v, labels, 2);
  }
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
  if (rc)
    return rc < 0 ? 0 : rc;
  char err[512];
  int fd = gt_out_open(op.out, op.force ? GT_OUT_FORCE : GT_OUT_NEW, err, sizeof err);
  if (fd < 0) {
    fprintf(stderr, "gputrace pprof: %s%s\n", err,
            op.force ? "" : " (--force overwrites a profile of yours)");
    return 2;
  }
  struct gt_session_opts so = {
      .path = op.in, .layers = GT_LAYER_HEAP | GT_LAYER_SYMBOLS, .threads = -1};
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
  fprintf(stderr, "gputrace pprof: %s: %s\n", op.out,
          op.gpu ? "GPU time by launch stack" : "device memory by allocation stack");
  gt_pprof_free(p);
  return damaged ? 3 : 0;
}
