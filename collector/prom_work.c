/* prom_work.c — /metrics series of requests and GPU time (prom_series.h).
 *
 * Requests: every completed NVTX range (model/nvtx.h: push/pop per thread,
 * start/end per process) is observed in a histogram of its wall time under
 * its name; the first PROM_REQ_MAX names have a label each, the rest share
 * PROM_OTHER. Work queued while a push range is open on the thread (its
 * outermost one, so nested ranges do not count twice) adds to that range's
 * counters: bytes copied and device memory allocated. GPU time per range
 * is model/range_gpu.h's, as report and export count it: the device time
 * of the work the range's own thread queued while it was open, every
 * range open counting (nested ranges their own, the outer one including
 * them), from the raw records (a graph launch's measured span, not the
 * shares of it the expansion makes), among the last PROM_RGPU_RING calls.
 * GPU time by kernel (prom_kernels.c): DEVICE records of kernels, each
 * weighted by the launches it stands for (its sample, no more than the
 * launches of its kernel not stood for yet; prom_kernels_device), and so
 * is the device time a range and a process get from it. Graph
 * launches come expanded (prom.c): each kernel a graph runs counts as a run
 * of that kernel, with its share of the launch's device time.
 * Memory: the open ranges and their threads (model/nvtx.h: a process that
 * ends inside a range leaves it open), prom_kernels.c's, a map entry per
 * labeled range name, fixed tables otherwise. */
#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "gputrace/trace_file.h"
#include "nvtx.h"
#include "prom_series.h"
#include "range_gpu.h"

#define PROM_RGPU_RING 16384 /* work calls remembered for their DEVICE records */
/* An open range's nvtx tag: its gt_rgpu handle << TAG_BITS | request slot + 1. */
#define TAG_BITS 8
_Static_assert(PROM_REQ_MAX + 1 < (1 << TAG_BITS), "request slots fit the tag");

struct prom_work_state {
  struct prom_work *w; /* the drain loop's figures */
  struct gt_nvtx *nvtx;
  struct gt_map names; /* hash of a named range's name -> slot + 1 */
  struct prom_kernels *kernels;
  struct gt_rgpu *rgpu;
};

/* The request slot of a range name: one of its own while there is room.
 * O(1) (a map probe) but for a hash shared by two names. */
static unsigned request_slot(struct prom_work_state *s, const char *name) {
  struct prom_work *w = s->w;
  uint64_t h = prom_name_hash(name), v;
  if (gt_map_get(&s->names, h, &v)) {
    if (!strncmp(w->req[v - 1].name, name, PROM_NAME_MAX - 1))
      return (unsigned)v - 1;
    for (unsigned i = 0; i < w->nreq; i++)
      if (!strncmp(w->req[i].name, name, PROM_NAME_MAX - 1))
        return i;
  }
  if (w->nreq == PROM_REQ_MAX)
    return PROM_REQ_MAX;
  prom_set_name(w->req[w->nreq].name, name);
  if (!gt_map_get(&s->names, h, &v))
    gt_map_put(&s->names, h, w->nreq + 1);
  return w->nreq++;
}

/* The nvtx layer's open hook: a range's tag holds its request slot + 1
 * (its name is looked up once, when it opens) and its gt_rgpu handle. */
static uint64_t on_open(void *ctx, const struct gt_record *r) {
  struct prom_work_state *s = ctx;
  char text[PROM_NAME_MAX];
  gt_record_text(r, r->u.nvtx.text_len, text, sizeof text);
  uint64_t slot = request_slot(s, text) + 1;
  return gt_rgpu_open(s->rgpu, r->pid, r->tid, slot) << TAG_BITS | slot;
}

/* A range's own work's device time (range_gpu.h): its request's. */
static void gpu_add(void *ctx, uint64_t slot, double ns) {
  struct prom_work_state *s = ctx;
  s->w->req[slot - 1].gpu_ns += ns;
}

struct prom_work_state *prom_work_new(struct prom_work *w) {
  struct prom_work_state *s = calloc(1, sizeof *s);
  if (!s || !(s->nvtx = gt_nvtx_new()) || !(s->kernels = prom_kernels_new())) {
    if (s)
      gt_nvtx_free(s->nvtx);
    free(s);
    return NULL;
  }
  struct gt_rgpu_hooks h = {.ctx = s, .add = gpu_add};
  s->rgpu = gt_rgpu_new(PROM_RGPU_RING, &h);
  s->w = w;
  prom_set_name(w->req[PROM_REQ_MAX].name, PROM_OTHER);
  prom_set_name(w->kern[PROM_KERNEL_MAX].name, PROM_OTHER);
  gt_nvtx_set_open_hook(s->nvtx, on_open, s);
  gt_map_init(&s->names);
  return s;
}

void prom_work_free(struct prom_work_state *s) {
  if (!s)
    return;
  gt_nvtx_free(s->nvtx);
  gt_map_free(&s->names);
  prom_kernels_free(s->kernels);
  gt_rgpu_free(s->rgpu);
  free(s);
}

static void range_done(struct prom_work_state *s, const struct gt_range *g) {
  struct prom_work *w = s->w;
  uint64_t slot = g->tag & ((1u << TAG_BITS) - 1);
  gt_rgpu_close(s->rgpu, g->tag >> TAG_BITS);
  if (!slot || slot > PROM_REQ_MAX + 1 || g->end_ns < g->start_ns)
    return;
  struct prom_request *q = &w->req[slot - 1];
  uint64_t ns = g->end_ns - g->start_ns;
  q->count++;
  q->sum_ns += ns;
  q->buckets[prom_bucket(prom_req_bounds, PROM_REQ_BUCKETS, (double)ns / 1e9)]++;
}

void prom_work_record(struct prom_work_state *s, const struct gt_record *r) {
  if (!s)
    return;
  if (r->kind == GT_KIND_NVTX) {
    char text[PROM_NAME_MAX];
    gt_record_text(r, r->u.nvtx.text_len, text, sizeof text);
    struct gt_range done;
    if (gt_nvtx_feed(s->nvtx, r, text, &done))
      range_done(s, &done);
  } else if (r->kind == GT_KIND_DEVICE) { /* as written: a graph launch's span */
    gt_rgpu_device(s->rgpu, r);
  } else if (gt_rgpu_is_work(r)) {
    gt_rgpu_call(s->rgpu, r);
  } else if (r->kind == GT_KIND_KERNEL_NAME) {
    prom_kernels_named(s->kernels, s->w, r);
  } else if (r->kind == GT_KIND_PROCESS && r->u.proc.phase == GT_PROC_END) {
    prom_kernels_ended(s->kernels, r->pid);
  }
}

double prom_work_run(struct prom_work_state *s, const struct gt_record *r) {
  if (!s)
    return 0;
  if (r->kind == GT_KIND_DEVICE) {
    int kernel = r->u.device.of_kind == GT_KIND_LAUNCH;
    return kernel ? prom_kernels_device(s->kernels, s->w, r) : 0;
  }
  if (r->kind == GT_KIND_LAUNCH)
    prom_kernels_launched(s->kernels, r);
  uint64_t slot = gt_nvtx_outer_tag(s->nvtx, r->pid, r->tid) & ((1u << TAG_BITS) - 1);
  if (!slot || slot > PROM_REQ_MAX + 1)
    return 0;
  struct prom_request *q = &s->w->req[slot - 1];
  if (r->kind == GT_KIND_MEMCPY)
    q->copy_bytes += r->u.copy.bytes;
  else if (r->kind == GT_KIND_ALLOC)
    q->alloc_bytes += r->u.mem.bytes;
  return 0;
}

void prom_work_publish(struct prom_work_state *s) {
  if (s)
    prom_kernels_rank(s->kernels, s->w);
}

/* ---- formatting (the HTTP thread, on a published copy) ---- */

static void put_requests(struct prom_buf *b, const struct prom_work *w) {
  prom_put(b, "# HELP gputrace_request_seconds Wall time of NVTX ranges, by range name.\n"
              "# TYPE gputrace_request_seconds histogram\n");
  for (unsigned i = 0; i <= PROM_REQ_MAX; i++) {
    const struct prom_request *q = &w->req[i];
    if (!q->count || (i >= w->nreq && i < PROM_REQ_MAX))
      continue;
    struct prom_buf l = {0};
    prom_put(&l, "range=");
    prom_put_label(&l, q->name);
    prom_put_hist(b, "gputrace_request_seconds", l.s ? l.s : "", q->buckets,
                  prom_req_bounds, PROM_REQ_BUCKETS, (double)q->sum_ns / 1e9, q->count);
    free(l.s);
  }
}

static void put_request_counter(struct prom_buf *b, const struct prom_work *w,
                                const char *name, const char *help, int which) {
  prom_put(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
  for (unsigned i = 0; i <= PROM_REQ_MAX; i++) {
    const struct prom_request *q = &w->req[i];
    if (i >= w->nreq && i < PROM_REQ_MAX)
      continue;
    if (i == PROM_REQ_MAX && !q->count && !q->gpu_ns && !q->copy_bytes && !q->alloc_bytes)
      continue;
    prom_put(b, "%s{range=", name);
    prom_put_label(b, q->name);
    if (which == 0)
      prom_put(b, "} %.9f\n", q->gpu_ns / 1e9);
    else
      prom_put(b, "} %llu\n",
               (unsigned long long)(which == 1 ? q->copy_bytes : q->alloc_bytes));
  }
}

void prom_work_format(struct prom_buf *b, const struct prom_work *w) {
  put_requests(b, w);
  put_request_counter(
      b, w, "gputrace_request_gpu_seconds_total",
      "Device time of the work each NVTX range's thread queued while it was open "
      "(nested ranges their own).",
      0);
  put_request_counter(b, w, "gputrace_request_copy_bytes_total",
                      "Bytes copied by calls inside NVTX ranges (outermost).", 1);
  put_request_counter(b, w, "gputrace_request_alloc_bytes_total",
                      "Device memory allocated inside NVTX ranges (outermost).", 2);
  prom_put(b, "# HELP gputrace_kernel_gpu_seconds_total Device time of kernels "
              "(graph launches: each kernel they run), by kernel.\n"
              "# TYPE gputrace_kernel_gpu_seconds_total counter\n");
  for (unsigned k = 0; k <= PROM_KERNEL_MAX; k++) {
    if ((k >= w->nkern && k < PROM_KERNEL_MAX) ||
        (k == PROM_KERNEL_MAX && !w->kern[k].gpu_ns))
      continue;
    prom_put(b, "gputrace_kernel_gpu_seconds_total{kernel=");
    prom_put_label(b, w->kern[k].name);
    prom_put(b, "} %.9f\n", w->kern[k].gpu_ns / 1e9);
  }
}
