/* prom_work.c — /metrics series of requests and GPU time (prom_series.h).
 *
 * Requests: every completed NVTX range (model/nvtx.h: push/pop per thread,
 * start/end per process) is observed in a histogram of its wall time under
 * its name; the first PROM_REQ_MAX names have a label each, the rest share
 * PROM_OTHER. Work queued while a push range is open on the thread (its
 * outermost one, so nested ranges do not count twice) adds to that range's
 * counters: bytes copied, device memory allocated, and the device time of
 * its kernels, copies and memsets (their DEVICE records, found through a
 * direct-mapped table of the last PROM_CORR_SLOTS launches' correlation
 * ids: a launch whose DEVICE record comes after PROM_CORR_SLOTS others may
 * go unattributed, never misattributed).
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

#define PROM_CORR_SLOTS 4096

struct corr_slot {
  uint32_t pid, tid, corr, req; /* req: slot + 1; 0 = empty */
};

struct prom_work_state {
  struct prom_work *w; /* the drain loop's figures */
  struct gt_nvtx *nvtx;
  struct gt_map names; /* hash of a named range's name -> slot + 1 */
  struct prom_kernels *kernels;
  struct corr_slot corr[PROM_CORR_SLOTS];
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

/* The nvtx layer's open hook: a range's tag is its request slot + 1 (its
 * name is looked up once, when it opens). */
static uint64_t on_open(void *ctx, const struct gt_record *r) {
  struct prom_work_state *s = ctx;
  char text[PROM_NAME_MAX];
  gt_record_text(r, r->u.nvtx.text_len, text, sizeof text);
  return request_slot(s, text) + 1;
}

struct prom_work_state *prom_work_new(struct prom_work *w) {
  struct prom_work_state *s = calloc(1, sizeof *s);
  if (!s || !(s->nvtx = gt_nvtx_new()) || !(s->kernels = prom_kernels_new())) {
    if (s)
      gt_nvtx_free(s->nvtx);
    free(s);
    return NULL;
  }
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
  free(s);
}

static void range_done(struct prom_work *w, const struct gt_range *g) {
  if (!g->tag || g->tag > PROM_REQ_MAX + 1 || g->end_ns < g->start_ns)
    return;
  struct prom_request *q = &w->req[g->tag - 1];
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
      range_done(s->w, &done);
  } else if (r->kind == GT_KIND_KERNEL_NAME) {
    prom_kernels_named(s->kernels, s->w, r);
  } else if (r->kind == GT_KIND_PROCESS && r->u.proc.phase == GT_PROC_END) {
    prom_kernels_ended(s->kernels, r->pid);
  }
}

static struct corr_slot *corr_at(struct prom_work_state *s, const struct gt_record *r,
                                 uint32_t corr) {
  uint64_t h = gt_pid_key(r->pid, ((uint64_t)r->tid << 32) | corr);
  return &s->corr[(h ^ h >> 29) % PROM_CORR_SLOTS];
}

/* The device time of work queued inside a range: the range's. */
static void device_time(struct prom_work_state *s, const struct gt_record *r, double ns) {
  struct corr_slot *c = corr_at(s, r, r->u.device.corr);
  if (c->req && c->pid == r->pid && c->tid == r->tid && c->corr == r->u.device.corr)
    s->w->req[c->req - 1].gpu_ns += ns;
}

double prom_work_run(struct prom_work_state *s, const struct gt_record *r) {
  if (!s)
    return 0;
  if (r->kind == GT_KIND_DEVICE) {
    int kernel = r->u.device.of_kind == GT_KIND_LAUNCH;
    double ns = kernel
                    ? prom_kernels_device(s->kernels, s->w, r)
                    : (double)r->dur_ns * (r->u.device.sample ? r->u.device.sample : 1);
    device_time(s, r, ns);
    return kernel ? ns : 0;
  }
  if (r->kind == GT_KIND_LAUNCH)
    prom_kernels_launched(s->kernels, r);
  uint64_t tag = gt_nvtx_outer_tag(s->nvtx, r->pid, r->tid);
  if (!tag)
    return 0;
  struct prom_request *q = &s->w->req[tag - 1];
  uint32_t corr = 0;
  if (r->kind == GT_KIND_LAUNCH)
    corr = r->u.launch.corr;
  else if (r->kind == GT_KIND_MEMCPY)
    corr = r->u.copy.corr, q->copy_bytes += r->u.copy.bytes;
  else if (r->kind == GT_KIND_MEMSET)
    corr = r->u.set.corr;
  else if (r->kind == GT_KIND_ALLOC)
    q->alloc_bytes += r->u.mem.bytes;
  if (corr)
    *corr_at(s, r, corr) = (struct corr_slot){r->pid, r->tid, corr, (uint32_t)tag};
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
  put_request_counter(b, w, "gputrace_request_gpu_seconds_total",
                      "Device time of the work queued inside NVTX ranges (outermost).",
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
