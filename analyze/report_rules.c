/* report_rules.c — finishing a report: percentiles, ranges, shares, the
 * verdict and the findings (see report.h; docs/report.md states each rule
 * and threshold — change one, change both). Every threshold of a rule is
 * a named constant of report.h (RP_*), which docs/report.md names; a rule
 * here writes no number but 0, 1, 100 as a percent factor and 1e9 as the
 * seconds divisor (tests/arch/check_checklists.py).
 *
 * Shares are of the traced time: the sum over host threads of the span
 * from their first traced call to the end of their last. A thread's span
 * splits into launch calls, copy/memset calls and blocked time attributed
 * to copies ("copy"), blocked time attributed to kernels ("kernel"),
 * blocked time nothing explains plus non-blocking sync calls ("sync"),
 * other runtime calls ("api") and time outside any call ("idle").
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report.h"
#include "util.h"

/* ---- finishing ---- */

static void finish_range(struct rp_range *rg) {
  static const unsigned pcts[] = {50, 90, 99};
  uint64_t out[3];
  rg->warm = rg->warm_d.n;
  rg->max = rg->warm_d.max;
  rg->mean = rg->warm ? rg->warm_d.sum / rg->warm : 0;
  rg->total_ns = rg->warm_d.sum + (rg->cold.end - rg->cold.start) + rg->colds_ns;
  gt_durs_percentiles(&rg->warm_d, pcts, 3, out);
  rg->p50 = out[0];
  rg->p90 = out[1];
  rg->p99 = out[2];
}

/* A sampled kernel's GPU total: gt_sampled_total over its launches (the
 * host records count every launch), with a 95 % interval from the timed
 * durations' spread (finite-population corrected). Exact totals are left
 * alone. */
static void scale_sampled_kernels(struct report *r) {
  for (size_t i = 0; i < r->knames.n; i++) {
    struct rp_kernel *k = &r->kern[i];
    double total;
    if (!gt_sampled_total((double)k->gpu_ns, k->gpu_timed, k->launches, k->sample,
                          &total))
      continue;
    double t = (double)k->gpu_timed, n = (double)k->launches;
    double mean = (double)k->gpu_ns / t;
    k->gpu_scaled_ns = (uint64_t)(total + 0.5);
    double var = t > 1 ? (k->gpu_sq - t * mean * mean) / (t - 1) : mean * mean;
    double se = n * sqrt((var > 0 ? var : 0) / t * (1 - t / n));
    k->gpu_ci95_ns = (uint64_t)(1.96 * se + 0.5);
  }
}

/* The same for a transfer row sampled 1 in N (GPUTRACE_GPU_TIMING_SAMPLE=N;
 * the adaptive mode times every copy and memset), over the calls that
 * succeeded. */
static void scale_sampled_transfers(struct report *r) {
  for (unsigned d = 0; d < RP_XFER_ROWS; d++) {
    struct rp_xfer *x = &r->xfer[d];
    double total;
    if (gt_sampled_total((double)x->gpu_ns, x->gpu_timed, x->done, x->sample, &total))
      x->gpu_scaled_ns = (uint64_t)(total + 0.5);
  }
}

/* Device memory live at the end that a caching allocator or a library holds
 * (holders.h), by holder. */
static void count_held(void *ctx, const struct gt_block *b) {
  struct report *r = ctx;
  if (b->memory != GT_MEM_DEVICE)
    return;
  const struct gt_holder *h = gt_holder_of_stack(r->symtab, b->pid, b->stack_id);
  for (size_t i = 0; h && i < sizeof r->held / sizeof r->held[0]; i++)
    if (r->held[i].holder == h || r->held[i].holder == NULL) {
      r->held[i].holder = h;
      r->held[i].bytes += b->bytes;
      return;
    }
}

/* A request still open at the end: its calls were counted, so its time to
 * the end of the trace is serving time too. */
static void open_request(void *ctx, const struct gt_range *g) {
  struct report *r = ctx;
  if (g->depth != 0 || !g->tag || g->tag > r->nsnaps || g->start_ns > r->last_ns)
    return;
  r->ranges[r->snaps[g->tag - 1].range].req.sh.traced += r->last_ns - g->start_ns;
}

/* Each request type's idle (time in no call: the host's own work inside
 * the request) and the serving time, all types together. */
static void finish_requests(struct report *r) {
  gt_model_open_ranges(r->model, open_request, r);
  memset(&r->serve, 0, sizeof r->serve);
  for (size_t i = 0; i < r->rnames.n; i++) {
    struct rp_shares *q = &r->ranges[i].req.sh;
    uint64_t in_calls = q->launch + q->copy + q->kernel + q->sync + q->api;
    if (!q->traced && !in_calls)
      continue;
    if (in_calls > q->traced) /* calls longer than their range: never less than 0 */
      q->traced = in_calls;
    q->idle = q->traced - in_calls;
    r->serve.traced += q->traced;
    r->serve.launch += q->launch;
    r->serve.copy += q->copy;
    r->serve.kernel += q->kernel;
    r->serve.sync += q->sync;
    r->serve.api += q->api;
    r->serve.idle += q->idle;
    r->serve.blocked += q->blocked;
  }
  r->basis = r->serve.traced ? &r->serve : &r->sh;
}

void rp_finish(struct report *r) {
  static const unsigned pcts[] = {50, 90, 99};
  scale_sampled_kernels(r);
  scale_sampled_transfers(r);
  rp_gpu_lines(r);
  if (gt_model_heap(r->model))
    gt_heap_foreach(gt_model_heap(r->model), count_held, r);
  for (unsigned a = 0; a < GT_API_COUNT; a++) {
    uint64_t out[3];
    if (!r->api[a].calls)
      continue;
    gt_durs_percentiles(&r->api[a].durs, pcts, 3, out);
    r->api[a].p50 = out[0];
    r->api[a].p90 = out[1];
    r->api[a].p99 = out[2];
  }
  gt_rgpu_flush(r->rgpu); /* every range's own work: its GPU time is whole */
  rp_device_finish(r);
  for (size_t i = 0; i < r->rnames.n; i++)
    finish_range(&r->ranges[i]);
  for (size_t i = 0; i < r->nthreads; i++) {
    const struct rp_thread *t = &r->threads[i];
    uint64_t span = t->last - t->first;
    r->sh.traced += span;
    r->sh.idle += span > t->busy ? span - t->busy : 0;
  }
  finish_requests(r);
  for (size_t i = 0; i < r->nprocs; i++) {
    uint64_t peak = gt_model_peak_device_total(r->model, r->procs[i].pid);
    if (peak > r->peak_device_bytes) {
      r->peak_device_bytes = peak;
      r->peak_pid = r->procs[i].pid;
    }
  }
  rp_verdict(r);
  rp_findings(r);
}

/* ---- verdict ---- */

void rp_verdict(struct report *r) {
  static const char *const names[] = {"transfer-bound", "compute-bound", "launch-bound",
                                      "cpu-bound"};
  const struct rp_shares *s = r->basis ? r->basis : &r->sh;
  r->verdict = r->runner_up = NULL;
  if (!r->cuda_calls || !s->traced)
    return; /* no data: no verdict */
  /* Without device timing, blocked time nothing explains is still the
   * device's: work we did not see queued (libraries launching through the
   * driver API). With it, that time is measured: the device was idle while
   * the host waited, which is no group's. */
  const uint64_t g[sizeof names / sizeof names[0]] = {
      s->copy, s->kernel + (r->dev_records ? 0 : s->sync), s->launch, s->idle + s->api};
  const int groups = (int)(sizeof g / sizeof g[0]);
  int best = 0, second = -1;
  for (int i = 1; i < groups; i++)
    if (g[i] > g[best])
      best = i;
  for (int i = 0; i < groups; i++)
    if (i != best && (second < 0 || g[i] > g[second]))
      second = i;
  r->verdict = names[best];
  r->verdict_share = rp_frac(g[best], s->traced);
  r->runner_up_share = rp_frac(g[second], s->traced);
  /* a near tie: say which other reading the figures allow */
  if (g[second] && r->verdict_share - r->runner_up_share <= RP_VERDICT_CLOSE)
    r->runner_up = names[second];
}

/* ---- findings ---- */

static const char *by_share(double share, double high, double medium) {
  return share >= high ? "high" : share >= medium ? "medium" : "low";
}

static void sites(struct report *r, struct rp_finding *f, int which) {
  char buf[3 * (sizeof((struct rp_site *)0)->name + 40)]; /* three whole names */
  if (rp_stack_sites(r, which, buf, sizeof buf))
    rp_ev_str(f, "call_sites", buf);
}

static void rule_pageable(struct report *r) {
  const struct rp_rulestats *s = &r->rs;
  double share = rp_frac(s->pageable_ns, r->sh.traced);
  if (!s->pageable_n || (!s->pageable_async && share < RP_SHARE_MEDIUM))
    return;
  struct rp_finding *f = rp_add_finding(
      r, "pageable_memcpy", share >= RP_SHARE_HIGH ? "high" : "medium",
      "Allocate the host buffers with cudaMallocHost/cudaHostAlloc, or cudaHostRegister "
      "them "
      "once: pinned copies run at full bandwidth and cudaMemcpyAsync becomes "
      "asynchronous.",
      "%" PRIu64 " host<->device copies used pageable host memory (%.1f %% of the traced "
      "time); %" PRIu64
      " of them were async copies, which then block like synchronous ones",
      s->pageable_n, 100 * share, s->pageable_async);
  rp_ev_u(f, "copies", RP_EV_U64, s->pageable_n);
  rp_ev_u(f, "async_copies", RP_EV_U64, s->pageable_async);
  rp_ev_u(f, "bytes", RP_EV_BYTES, s->pageable_bytes);
  rp_ev_u(f, "host_ns", RP_EV_NS, s->pageable_ns);
  rp_ev_frac(f, "share", share);
  sites(r, f, RP_SITE_PAGEABLE);
}

static void rule_sync_copies(struct report *r) {
  const struct rp_rulestats *s = &r->rs;
  double share = rp_frac(s->sync_copy_ns, r->sh.traced);
  if (s->sync_copy_n >= RP_SYNC_COPY_MIN) {
    struct rp_finding *f = rp_add_finding(
        r, "sync_memcpy", by_share(share, RP_SHARE_HIGH, RP_SHARE_MEDIUM),
        "Use cudaMemcpyAsync on a stream with pinned buffers and wait once per "
        "iteration, "
        "so copies overlap kernels and the host keeps queueing work.",
        "%" PRIu64 " synchronous host<->device copies (host-to-device ones over 64 KB) "
        "blocked the host for %.1f %% of the traced time",
        s->sync_copy_n, 100 * share);
    rp_ev_u(f, "copies", RP_EV_U64, s->sync_copy_n);
    rp_ev_u(f, "bytes", RP_EV_BYTES, s->sync_copy_bytes);
    rp_ev_u(f, "host_ns", RP_EV_NS, s->sync_copy_ns);
    rp_ev_frac(f, "share", share);
    sites(r, f, RP_SITE_SYNC_COPY);
  }
  share = rp_frac(s->sync_set_ns, r->sh.traced);
  if (s->sync_set_n) {
    struct rp_finding *f = rp_add_finding(
        r, "sync_memset", by_share(share, RP_SHARE_HIGH, RP_SHARE_MEDIUM),
        "Use cudaMemsetAsync, or set device memory rather than pinned or managed memory.",
        "%" PRIu64 " synchronous memsets of pinned or managed memory blocked the host "
        "(%.1f %% of the traced time)",
        s->sync_set_n, 100 * share);
    rp_ev_u(f, "memsets", RP_EV_U64, s->sync_set_n);
    rp_ev_u(f, "host_ns", RP_EV_NS, s->sync_set_ns);
    rp_ev_frac(f, "share", share);
  }
}

static void rule_excessive_sync(struct report *r) {
  const struct rp_rulestats *s = &r->rs;
  uint64_t groups = s->synced_launches + s->unsynced_launches, calls = 0, blocked = 0;
  double ratio = rp_frac(s->synced_launches, groups);
  if (groups < RP_SYNC_LAUNCH_MIN || ratio < RP_SYNC_RATIO)
    return;
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    if (rp_is_sync_api(a)) {
      calls += r->sync[a].calls;
      blocked += r->sync[a].total_ns;
    }
  double share = rp_frac(blocked, r->sh.traced);
  struct rp_finding *f = rp_add_finding(
      r, "excessive_sync", share >= RP_SHARE_HIGH ? "high" : "medium",
      "Synchronize once per iteration or request, where the host needs a result, not "
      "after "
      "every kernel: queue the work on a stream and wait once (cudaStreamSynchronize / "
      "cudaEventSynchronize).",
      "%.0f %% of kernel launches were followed by a synchronize before the next launch "
      "(%" PRIu64 " of %" PRIu64
      "); the host was blocked in synchronizes for %.1f %% of the "
      "traced time",
      100 * ratio, s->synced_launches, groups, 100 * share);
  rp_ev_u(f, "launches", RP_EV_U64, groups);
  rp_ev_u(f, "launches_then_sync", RP_EV_U64, s->synced_launches);
  rp_ev_frac(f, "ratio", ratio);
  rp_ev_u(f, "sync_calls", RP_EV_U64, calls);
  rp_ev_u(f, "blocked_ns", RP_EV_NS, blocked);
  rp_ev_frac(f, "share", share);
  sites(r, f, RP_SITE_SYNC);
}

static void rule_small_kernels(struct report *r) {
  uint64_t launches = 0, cpu = 0, n = 0, small_launches = 0;
  size_t ex[RP_EXAMPLES]; /* examples, by index: named whole */
  for (size_t i = 0; i < r->knames.n; i++) {
    const struct rp_kernel *k = &r->kern[i];
    launches += k->launches;
    cpu += k->cpu_ns;
    if (k->launches < RP_SMALL_KERNEL_LAUNCHES || !k->gpu_timed ||
        k->gpu_ns / k->gpu_timed > RP_SMALL_KERNEL_RATIO * (k->cpu_ns / k->launches))
      continue;
    if (n++ < RP_EXAMPLES)
      ex[n - 1] = i;
    small_launches += k->launches;
  }
  int measured = r->dev_records > 0;
  double launch_share = rp_frac(r->sh.launch, r->sh.traced);
  const char *advice =
      "Fuse small kernels, give each launch more work, or capture the "
      "sequence in a CUDA graph (one cudaGraphLaunch replaces many launches).";
  if (measured && n) {
    struct rp_finding *f = rp_add_finding(
        r, "small_kernels", launch_share >= RP_LAUNCH_SHARE_MEDIUM ? "medium" : "low",
        advice,
        "%" PRIu64 " kernels (%" PRIu64 " launches) run on the device for at most twice "
        "the host time of launching them",
        n, small_launches);
    rp_ev_u(f, "kernels", RP_EV_U64, n);
    rp_ev_u(f, "launches", RP_EV_U64, small_launches);
    char *names = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&names, &len);
    for (uint64_t k = 0; m && k < n && k < RP_EXAMPLES; k++)
      fprintf(m, "%s%s", k ? "; " : "", r->knames.strs[ex[k]]);
    if (!m || fclose(m) != 0)
      gt_oom();
    rp_ev_str(f, "examples", names);
    free(names);
    rp_ev_frac(f, "launch_share", launch_share);
  } else if (!measured && launches >= RP_SMALL_KERNEL_LAUNCHES &&
             r->sh.kernel <= RP_SMALL_KERNEL_RATIO * cpu) {
    /* No device timing: the kernels' time is what the host waited for them. */
    struct rp_finding *f = rp_add_finding(
        r, "small_kernels", launch_share >= RP_LAUNCH_SHARE_MEDIUM ? "medium" : "low",
        advice,
        "%" PRIu64
        " launches: the host waited %.0f ns per launch for kernels (estimated) "
        "and spent %.0f ns per launch launching them",
        launches, (double)r->sh.kernel / (double)launches,
        (double)cpu / (double)launches);
    rp_ev_u(f, "launches", RP_EV_U64, launches);
    rp_ev_u(f, "kernel_est_ns", RP_EV_NS, r->sh.kernel);
    rp_ev_u(f, "launch_ns", RP_EV_NS, cpu);
    rp_ev_frac(f, "launch_share", launch_share);
  }
}

static void rule_small_transfers(struct report *r) {
  uint64_t copies = 0, small = 0;
  for (unsigned d = 0; d < RP_XFER_MEMSET; d++)
    if (d != GT_DIR_HTOH) {
      copies += r->xfer[d].count;
      small += r->xfer[d].small;
    }
  if (small < RP_SMALL_XFER_MIN || rp_frac(small, copies) < RP_SMALL_XFER_SHARE)
    return;
  struct rp_finding *f = rp_add_finding(
      r, "small_transfers", small >= RP_SMALL_XFER_MEDIUM ? "medium" : "low",
      "Batch small transfers into one larger copy (pack them in "
      "one buffer), or keep the data "
      "on the device between iterations.",
      "%" PRIu64 " of %" PRIu64 " copies moved less than 64 KiB each; each pays a fixed "
      "latency of microseconds",
      small, copies);
  rp_ev_u(f, "small_copies", RP_EV_U64, small);
  rp_ev_u(f, "copies", RP_EV_U64, copies);
  rp_ev_frac(f, "fraction", rp_frac(small, copies));
}

/* Churn by cudaMalloc and its kin is judged apart from stream-ordered
 * (cudaMallocAsync) churn, which already comes from a pool: its advice is
 * the pool's. */
/* Reallocations (`all` of them) less those at sites that never free what
 * they allocate (weights, a leak: they reuse nothing), which leave the site
 * tables (only this rule reads them). Allocations without a stack are no
 * site: counted all. */
static uint64_t churn_at_freeing_sites(struct report *r, int which, uint64_t all) {
  struct gt_map *m = &r->sites[which];
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i] == 1 && !gt_map_get(&r->freed_sites, m->keys[i], NULL)) {
      all -= m->vals[i] < all ? m->vals[i] : all;
      gt_map_del(m, m->keys[i]);
    }
  return all;
}

static void rule_alloc_churn(struct report *r) {
  uint64_t churn = 0, async = 0;
  for (size_t i = 0; i < r->nprocs; i++) {
    churn += r->procs[i].churn - r->procs[i].churn_async;
    async += r->procs[i].churn_async;
  }
  churn = churn_at_freeing_sites(r, RP_SITE_ALLOC, churn);
  async = churn_at_freeing_sites(r, RP_SITE_ALLOC_ASYNC, async);
  int pooled = churn < RP_CHURN_MIN; /* only the pool's churn is left to judge */
  if (pooled && async < RP_CHURN_MIN)
    return;
  const struct rp_rulestats *s = &r->rs;
  double share = rp_frac(s->alloc_ns + s->free_ns, r->sh.traced);
  struct rp_finding *f = rp_add_finding(
      r, "alloc_churn", share >= RP_SHARE_MEDIUM ? "medium" : "low",
      pooled ? "These are stream-ordered allocations (cudaMallocAsync) already: keep the "
               "freed memory in their pool between requests (raise its "
               "cudaMemPoolAttrReleaseThreshold) or reuse the buffers."
             : "Allocate buffers once and reuse them across iterations, or use "
               "cudaMallocAsync with a memory pool (or a caching allocator).",
      "%" PRIu64 " %sallocations were of a size the process had freed before (%" PRIu64
      " allocations, %" PRIu64 " frees; %.1f %% of the traced time in them)",
      pooled ? async : churn, pooled ? "stream-ordered " : "", s->alloc_n, s->free_n,
      100 * share);
  rp_ev_u(f, "reallocations", RP_EV_U64, pooled ? async : churn);
  rp_ev_u(f, "async_reallocations", RP_EV_U64, async);
  rp_ev_u(f, "allocations", RP_EV_U64, s->alloc_n);
  rp_ev_u(f, "frees", RP_EV_U64, s->free_n);
  rp_ev_u(f, "host_ns", RP_EV_NS, s->alloc_ns + s->free_ns);
  rp_ev_frac(f, "share", share);
  sites(r, f, pooled ? RP_SITE_ALLOC_ASYNC : RP_SITE_ALLOC);
}

static void rule_gaps(struct report *r) {
  const struct rp_gaps *g = &r->gaps;
  uint64_t dur = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
  if (!g->count)
    return;
  struct rp_finding *f = rp_add_finding(
      r, "gpu_idle_gaps",
      rp_frac(g->total_ns, dur) >= RP_GAPS_MEDIUM_SHARE ? "medium" : "low",
      "Overlap host work (input preparation, post-processing) with device work, or batch "
      "requests so the device always has work queued.",
      "the device sat idle %" PRIu64 " times for 500 ms or more (%.1f %% of the run; "
      "longest %.3f s, at +%.3f s)",
      g->count, 100 * rp_frac(g->total_ns, dur), (double)g->max_ns / 1e9,
      (double)(g->max_at > r->origin ? g->max_at - r->origin : 0) / 1e9);
  rp_ev_u(f, "gaps", RP_EV_U64, g->count);
  rp_ev_u(f, "idle_ns", RP_EV_NS, g->total_ns);
  rp_ev_u(f, "longest_ns", RP_EV_NS, g->max_ns);
  rp_ev_str(f, "source",
            r->gaps_measured ? "device timing"
                             : "model: from a wait that drained all queued work "
                               "to the next work queued");
}

static void rule_utilization(struct report *r) {
  if (!r->dev_records)
    return;
  int low = 0, worst = 0;
  double sum = 0;
  for (int c = 0; c < RP_UTIL_CHUNKS; c++) {
    sum += r->util[c];
    low += r->util[c] < RP_UTIL_LOW;
    if (r->util[c] < r->util[worst])
      worst = c;
  }
  if (!low)
    return;
  struct rp_finding *f = rp_add_finding(
      r, "low_gpu_utilization", low >= RP_UTIL_MEDIUM_CHUNKS ? "medium" : "low",
      "Keep more work queued: launch ahead of the results you wait for, use more streams "
      "or "
      "larger batches.",
      "the device was busy less than half the time in %d of %d equal parts of the run "
      "(mean %.0f %%; lowest %.0f %% in part %d)",
      low, RP_UTIL_CHUNKS, 100 * sum / RP_UTIL_CHUNKS, 100 * r->util[worst], worst + 1);
  rp_ev_u(f, "chunks", RP_EV_U64, RP_UTIL_CHUNKS);
  rp_ev_u(f, "low_chunks", RP_EV_U64, (uint64_t)low);
  rp_ev_frac(f, "mean_utilization", sum / RP_UTIL_CHUNKS);
  rp_ev_frac(f, "lowest_utilization", r->util[worst]);
}

static void rule_memory(struct report *r) {
  if (!r->opt.device_memory || !r->peak_device_bytes)
    return;
  double used = rp_frac(r->peak_device_bytes, r->opt.device_memory);
  if (used < RP_MEMORY_PRESSURE)
    return;
  struct rp_finding *f = rp_add_finding(
      r, "memory_pressure", used >= RP_MEMORY_PRESSURE_HIGH ? "high" : "medium",
      "Close to out-of-memory: reduce the batch size or the caching allocator's "
      "reserve, free "
      "buffers not needed any more, or move rarely used data to the host.",
      "peak device memory of pid %u reached %.1f %% of the device's memory", r->peak_pid,
      100 * used);
  rp_ev_u(f, "peak_bytes", RP_EV_BYTES, r->peak_device_bytes);
  rp_ev_u(f, "device_bytes", RP_EV_BYTES, r->opt.device_memory);
  rp_ev_frac(f, "fraction", used);
  rp_ev_u(f, "pid", RP_EV_U64, r->peak_pid);
}

static int expected_error(unsigned api, int32_t code) {
  /* A query's "not ready" is its answer, not a failure. */
  return code == RP_ERR_NOT_READY && (gt_api_flags(api) & GT_AF_QUERY);
}

static void rule_errors(struct report *r) {
  uint64_t total = 0, top[RP_EXAMPLES][2] = {{0}};
  for (size_t i = 0; i < r->errs.cap; i++) {
    if (r->errs.used[i] != 1 ||
        expected_error((unsigned)(r->errs.keys[i] >> 32), (int32_t)r->errs.keys[i]))
      continue;
    total += r->errs.vals[i];
    for (int k = 0; k < RP_EXAMPLES; k++)
      if (r->errs.vals[i] > top[k][1]) {
        memmove(top[k + 1], top[k], (size_t)(RP_EXAMPLES - 1 - k) * sizeof top[0]);
        top[k][0] = r->errs.keys[i];
        top[k][1] = r->errs.vals[i];
        break;
      }
  }
  if (!total)
    return;
  char what[RP_EXAMPLES * 128] = ""; /* (API, error, count) each: whole */
  for (int k = 0; k < RP_EXAMPLES && top[k][1]; k++)
    snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s: %s ×%" PRIu64,
             k ? ", " : "", gt_api_name((unsigned)(top[k][0] >> 32)),
             gt_cuda_error_name((int32_t)top[k][0]), top[k][1]);
  struct rp_finding *f = rp_add_finding(
      r, "api_errors", "high",
      "Check the result of every CUDA call (and cudaGetLastError after launches): a "
      "failed "
      "call did not do its work, and later results may be wrong.",
      "%" PRIu64 " CUDA calls returned an error (%s)", total, what);
  rp_ev_u(f, "failed_calls", RP_EV_U64, total);
  rp_ev_str(f, "top", what);
}

static void rule_cold_start(struct report *r) {
  for (size_t i = 0; i < r->rnames.n; i++) {
    const struct rp_range *rg = &r->ranges[i];
    if (rg->warm < RP_COLD_MIN_WARM)
      continue;
    uint64_t cold = rg->cold.end - rg->cold.start;
    if (cold < RP_COLD_RATIO * rg->p50 || cold - rg->p50 < RP_COLD_MIN_EXTRA_NS)
      continue;
    struct rp_finding *f = rp_add_finding(
        r, "cold_start", "low",
        "Warm up before serving (one dummy request loads modules, allocates pools and "
        "autotunes), or keep the first request out of latency objectives.",
        "the first \"%s\" range took %.1fx the median of the others", r->rnames.strs[i],
        (double)cold / (double)(rg->p50 ? rg->p50 : 1));
    rp_ev_str(f, "range", r->rnames.strs[i]);
    rp_ev_u(f, "cold_ns", RP_EV_NS, cold);
    rp_ev_u(f, "p50_ns", RP_EV_NS, rg->p50);
  }
}

enum severity_rank { RANK_HIGH, RANK_MEDIUM, RANK_LOW };

static int severity_rank(const char *s) {
  return s[0] == 'h' ? RANK_HIGH : s[0] == 'm' ? RANK_MEDIUM : RANK_LOW;
}

void rp_findings(struct report *r) {
  rp_leak_findings(r); /* first: with the stable sort, a leak leads */
  rule_errors(r);
  rule_pageable(r);
  rp_request_findings(r);
  rule_sync_copies(r);
  rule_excessive_sync(r);
  rule_small_kernels(r);
  rule_small_transfers(r);
  rule_alloc_churn(r);
  rule_gaps(r);
  rule_utilization(r);
  rule_memory(r);
  rule_cold_start(r);
  rp_hw_findings(r);
  rp_graph_findings(r);
  /* Stable order: by severity, then in the order above. */
  for (size_t i = 1; i < r->nfindings; i++) {
    struct rp_finding f = r->findings[i];
    size_t j = i;
    for (;
         j > 0 && severity_rank(r->findings[j - 1].severity) > severity_rank(f.severity);
         j--)
      r->findings[j] = r->findings[j - 1];
    r->findings[j] = f;
  }
}
