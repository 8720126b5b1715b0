/* report_device.c — device intervals and what they explain (see report.h).
 *
 * DEVICE records say when queued work really ran. Per process they are
 * merged into two sorted lists of busy stretches (kernels; copies and
 * memsets), so memory grows with the device's idle gaps, not its work.
 * At the end (rp_device_finish):
 *  - each blocking call kept by the streaming pass is split exactly: the
 *    part of its interval the device spent in kernels, then in copies
 *    (only where no kernel ran) — for a blocking copy or memset call, copies
 *    first, then kernels where no copy ran, since it waits for its own
 *    copy — then the rest (device idle while the host
 *    waited: sync overhead; or, when the device records are sampled 1 in N,
 *    work nobody timed, split by the CPU-side rule); calls of processes
 *    without DEVICE records use the CPU-side rule;
 *  - device idle gaps and utilization per chunk come from the same lists;
 *    processes without DEVICE records keep the CPU-side model's gaps.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---- the end-of-trace pass ---- */

static void attribute(struct report *r, const struct rp_proc *p,
                      const struct rp_blocked *b) {
  uint64_t len = b->end - b->start, k = 0, c = 0, s = 0;
  if (p->kruns.n || p->cruns.n) {
    uint64_t kd = rp_runs_overlap(&p->kruns, b->start, b->end);
    uint64_t u = rp_union_overlap(&p->kruns, &p->cruns, b->start, b->end);
    uint64_t rest = len - u;
    if (p->dev_sample <= 1 && (b->flags & RP_BL_COPYCALL)) {
      /* a copy call waits for its copy first: copies running (its own, or
       * ahead of it on the engine), then kernels; the rest is the copy's */
      uint64_t cd = rp_runs_overlap(&p->cruns, b->start, b->end);
      k = u - cd;
      c = cd + rest;
    } else if (p->dev_sample <= 1) { /* everything was timed: the device was idle */
      k = kd;
      c = u - kd;
      s = rest;
    } else { /* work nobody timed: the CPU-side rule for the rest */
      uint64_t est = b->copy_est > u - kd ? b->copy_est - (u - kd) : 0;
      rp_cpu_split(rest, est, b->flags, &k, &c, &s);
      k += kd;
      c += u - kd;
    }
  } else {
    rp_cpu_split(len, b->copy_est, b->flags, &k, &c, &s);
  }
  struct rp_req *rq = b->req ? &r->ranges[b->req - 1].req : NULL;
  RP_SHARE(r, rq, kernel, k);
  RP_SHARE(r, rq, copy, c);
  RP_SHARE(r, rq, sync, s);
  if (rp_is_sync_api(b->api)) {
    r->sync[b->api].kernel_ns += k;
    r->sync[b->api].copy_ns += c;
    r->sync[b->api].sync_ns += s;
  }
}

static void add_gap(struct rp_gaps *g, uint64_t at, uint64_t len) {
  g->count++;
  g->total_ns += len;
  if (len > g->max_ns) {
    g->max_ns = len;
    g->max_at = at;
  }
}

/* Gaps between busy stretches, and busy time per chunk of the window. */
static void walk_device(struct report *r, const struct rp_proc *p, double *busy) {
  uint64_t t0 = r->first_ns, span = r->last_ns > t0 ? r->last_ns - t0 : 0, s, e, prev = 0;
  struct rp_uwalk w = {.a = &p->kruns, .b = &p->cruns};
  while (rp_uwalk_next(&w, &s, &e)) {
    if (prev && s - prev >= RP_GAP_NS && s > t0 && prev < r->last_ns)
      add_gap(&r->gaps, prev, s - prev);
    prev = e;
    if (!span)
      continue;
    uint64_t cs = s > t0 ? s : t0, ce = e < r->last_ns ? e : r->last_ns;
    for (uint64_t c = (cs - t0) * RP_UTIL_CHUNKS / span; ce > cs && c < RP_UTIL_CHUNKS;
         c++) {
      uint64_t lo = t0 + span * c / RP_UTIL_CHUNKS,
               hi = t0 + span * (c + 1) / RP_UTIL_CHUNKS;
      if (lo >= ce)
        break;
      uint64_t a = cs > lo ? cs : lo, b = ce < hi ? ce : hi;
      if (b > a)
        busy[c] += (double)(b - a);
    }
  }
}

void rp_attribute_blocked(struct report *r, struct rp_proc *p) {
  for (size_t j = 0; j < p->nbl; j++)
    attribute(r, p, &p->bl[j]);
  free(p->bl);
  p->bl = NULL;
  p->nbl = p->capbl = 0;
}

void rp_device_finish(struct report *r) {
  double busy[RP_UTIL_CHUNKS] = {0};
  for (size_t i = 0; i < r->nprocs; i++) {
    struct rp_proc *p = &r->procs[i];
    rp_attribute_blocked(r, p);
    if (p->dev_records) {
      r->gaps_measured = 1;
      walk_device(r, p, busy);
    } else if (p->gaps.count) {
      r->gaps.count += p->gaps.count;
      r->gaps.total_ns += p->gaps.total_ns;
      if (p->gaps.max_ns > r->gaps.max_ns) {
        r->gaps.max_ns = p->gaps.max_ns;
        r->gaps.max_at = p->gaps.max_at;
      }
    }
  }
  uint64_t span = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
  for (int c = 0; c < RP_UTIL_CHUNKS && span; c++) {
    double len = (double)(span * (c + 1) / RP_UTIL_CHUNKS - span * c / RP_UTIL_CHUNKS);
    r->util[c] = len > 0 ? (busy[c] / len > 1 ? 1 : busy[c] / len) : 0;
  }
}
