/* test_report_rules.c — every finding of `gputrace report` (report_rules.c,
 * report_hw.c, report_leaks.c's out_of_memory; docs/report.md states the
 * rules) fires on a minimal synthetic trace made to trigger it, with its
 * exact severity, message and evidence, and stays quiet on the same trace
 * just short of its threshold; a plain trace has no finding at all. The
 * verdict: none without CUDA calls, and a near tie names its runner-up. */
#include "check.h"
#include "report.h"
#include "synth.h"

#define MS 1000000ull

typedef void (*build_fn)(struct synth *w, int fire);

/* One finding as the test compares it: "severity rule: message | key=value
 * ..." (ns and bytes as integers, fractions %.4g). */
static void describe(const struct rp_finding *f, char *buf, size_t len) {
  size_t at = (size_t)snprintf(buf, len, "%s %s: %s |", f->severity, f->rule, f->message);
  for (int i = 0; i < f->nev && at < len; i++) {
    const struct rp_ev *e = &f->ev[i];
    if (e->type == RP_EV_STR || e->type == RP_EV_JSON)
      at += (size_t)snprintf(buf + at, len - at, " %s=%s", e->key, e->s);
    else if (e->type == RP_EV_FRAC)
      at += (size_t)snprintf(buf + at, len - at, " %s=%.4g", e->key, e->d);
    else
      at += (size_t)snprintf(buf + at, len - at, " %s=%" PRIu64, e->key, e->u);
  }
}

static char first_finding[1024]; /* describe() of the last trace's first finding */

/* Findings of `report` on the trace build() writes (fire: over the rule's
 * threshold or just under it); their rule names, ' '-separated, in buf;
 * the first one described in first_finding. */
static const char *findings(const char *name, build_fn build, int fire,
                            uint64_t device_memory, char *buf, size_t len) {
  char path[256], file[64];
  static unsigned traces; /* a rule may have several */
  snprintf(file, sizeof file, "%s_%d_%u.gtrace", name, fire, traces++);
  struct synth w;
  synth_open(&w, synth_path(file, path, sizeof path));
  synth_process(&w, 1, "./rules");
  build(&w, fire);
  synth_close(&w);
  struct report *r = gt_xcalloc(1, sizeof *r);
  struct rp_options o = {.to_ns = UINT64_MAX, .device_memory = device_memory};
  rp_init(r, &o);
  CHECK(rp_read(r, path, "test") == 0);
  rp_finish(r);
  buf[0] = first_finding[0] = '\0';
  if (r->nfindings)
    describe(&r->findings[0], first_finding, sizeof first_finding);
  for (size_t i = 0; i < r->nfindings; i++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "",
             r->findings[i].rule);
  rp_free(r);
  free(r);
  return buf;
}

/* The rule fires on its trace, and nothing else does, with exactly the
 * severity, message and evidence `want` describes; nothing fires on the
 * one under the threshold. */
static void check_rule(const char *rule, build_fn build, uint64_t device_memory,
                       const char *want) {
  char buf[512];
  findings(rule, build, 1, device_memory, buf, sizeof buf);
  if (strcmp(buf, rule) != 0)
    fprintf(stderr, "%s: fired: '%s'\n", rule, buf);
  CHECK(strcmp(buf, rule) == 0);
  if (strcmp(first_finding, want) != 0)
    fprintf(stderr, "%s:\n  got  '%s'\n  want '%s'\n", rule, first_finding, want);
  CHECK(strcmp(first_finding, want) == 0);
  findings(rule, build, 0, device_memory, buf, sizeof buf);
  if (buf[0])
    fprintf(stderr, "%s under its threshold: fired: '%s'\n", rule, buf);
  CHECK(buf[0] == '\0');
}

/* ---- one trace per rule ---- */

static void plain(struct synth *w, int fire) {
  (void)fire;
  synth_launch(w, 10 * MS, 1000, 0x10, 0, 0);
  synth_sync(w, 11 * MS, 5000);
}

static void api_errors(struct synth *w, int fire) {
  plain(w, 0);
  struct gt_record q = synth_rec(GT_KIND_SYNC, GT_API_cudaStreamQuery, 12 * MS, 100);
  q.result = 600; /* "not ready" is a query's answer */
  synth_put(w, &q);
  if (fire)
    synth_launch(w, 13 * MS, 1000, 0x10, 0, 2);
}

static void pageable(struct synth *w, int fire) {
  plain(w, 0);
  /* synchronous to-device copies of 64 KB or less are staged: not counted */
  synth_copy(w, 12 * MS, 1000, 4096, GT_DIR_HTOD,
             fire ? GT_F_ASYNC | GT_F_PAGEABLE : GT_F_PAGEABLE);
}

static void sync_copies(struct synth *w, int fire) {
  plain(w, 0);
  for (int i = 0; i < (fire ? 10 : 9); i++)
    synth_copy(w, (12 + i) * MS, 1000, 1 << 20, GT_DIR_DTOH, GT_F_PINNED);
}

static void sync_memset(struct synth *w, int fire) {
  plain(w, 0);
  synth_alloc(w, 12 * MS, 0xa000, 4096, fire ? GT_MEM_PINNED_HOST : GT_MEM_DEVICE, 0);
  struct gt_record r = synth_rec(GT_KIND_MEMSET, GT_API_cudaMemset, 13 * MS, 1000);
  r.u.set.ptr = 0xa000;
  r.u.set.bytes = 4096;
  synth_put(w, &r);
}

static void excessive_sync(struct synth *w, int fire) {
  for (int i = 0; i < 10; i++) {
    synth_launch(w, (10 + 2 * i) * MS, 1000, 0x10, 0, 0);
    if (fire || i == 9)
      synth_sync(w, (11 + 2 * i) * MS, 5000);
  }
}

static void small_kernels(struct synth *w, int fire) {
  for (int i = 0; i < (fire ? 100 : 99); i++)
    synth_launch(w, 10 * MS + i * 10000, 1000, 0x10, 0, 0);
}

/* With device timing: back to back (the device 90 % busy, no other rule),
 * each run 900 ns for a 1000 ns launch call. */
static void small_kernels_timed(struct synth *w, int fire) {
  synth_kernel_name(w, 10 * MS, 0x10, "_Z4stepv");
  for (int i = 0; i < (fire ? 100 : 99); i++) {
    struct gt_record l = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel,
                                   10 * MS + (uint64_t)i * 1000, 1000);
    l.u.launch.kernel = 0x10;
    l.u.launch.grid[0] = l.u.launch.block[0] = 1;
    l.u.launch.corr = (uint32_t)i + 1;
    synth_put(w, &l);
    struct gt_record d = synth_rec(GT_KIND_DEVICE, GT_API___cudaLaunchKernel,
                                   10 * MS + (uint64_t)i * 1000 + 50, 900);
    d.u.device.of_kind = GT_KIND_LAUNCH;
    d.u.device.kernel = 0x10;
    d.u.device.corr = (uint32_t)i + 1;
    d.u.device.sample = 1;
    d.u.device.source = GT_DEVTIME_EVENTS;
    synth_put(w, &d);
  }
}

static void small_transfers(struct synth *w, int fire) {
  plain(w, 0);
  for (int i = 0; i < (fire ? 100 : 99); i++)
    synth_copy(w, 12 * MS + i * 10000, 1000, 1024, GT_DIR_HTOD, GT_F_ASYNC | GT_F_PINNED);
}

static void alloc_churn(struct synth *w, int fire) {
  plain(w, 0);
  for (int i = 0; i < (fire ? 11 : 10); i++) {
    synth_alloc(w, (12 + 2 * i) * MS, 0xa000, 4096, GT_MEM_DEVICE, 0);
    synth_free(w, (13 + 2 * i) * MS, 0xa000, GT_API_cudaFree, 0);
  }
}

/* Two blocks held, then an allocation that fails: out of memory (fire 1:
 * the runtime's, 2: the driver's), or a later one succeeds (0), or it
 * fails otherwise (-1: cudaErrorInvalidValue). */
static void out_of_memory(struct synth *w, int fire) {
  plain(w, 0);
  synth_alloc(w, 12 * MS, 0xa000, 8192, GT_MEM_DEVICE, 0);
  synth_alloc(w, 13 * MS, 0xc000, 4096, GT_MEM_MANAGED, 0);
  struct gt_record r = synth_rec(
      GT_KIND_ALLOC, fire == 2 ? GT_API_cuMemAlloc_v2 : GT_API_cudaMalloc, 14 * MS, 10);
  r.u.mem.bytes = 1 << 20;
  r.u.mem.memory = GT_MEM_DEVICE;
  r.result = fire < 0 ? 1 : GT_RESULT_OUT_OF_MEMORY;
  synth_put(w, &r);
  if (!fire)
    synth_alloc(w, 15 * MS, 0xe000, 256, GT_MEM_DEVICE, 0);
}

/* The out-of-memory finding (report_leaks.c) comes with api_errors (the
 * failed call): first, with its exact line and evidence. */
static void check_out_of_memory(void) {
  const char *want =
      "high out_of_memory: out of memory at an unknown line (pid 100 stack 0): asked "
      "1048576 bytes while 12288 were held by pid 100 stack 0 (12288 bytes) | site=pid "
      "100 stack 0 requested_bytes=1048576 held_bytes=12288 pid=100 holders=[{\"site\":"
      "\"pid 100 stack 0\",\"bytes\":12288}]";
  char buf[512];
  for (int fire = 1; fire <= 2; fire++) {
    CHECK(strcmp(findings("oom", out_of_memory, fire, 0, buf, sizeof buf),
                 "out_of_memory api_errors") == 0);
    if (strcmp(first_finding, want) != 0)
      fprintf(stderr, "out_of_memory:\n  got  '%s'\n  want '%s'\n", first_finding, want);
    CHECK(strcmp(first_finding, want) == 0);
  }
  CHECK(strcmp(findings("oom", out_of_memory, 0, 0, buf, sizeof buf), "api_errors") == 0);
  CHECK(strcmp(findings("oom", out_of_memory, -1, 0, buf, sizeof buf), "api_errors") ==
        0);
}

static void idle_gaps(struct synth *w, int fire) {
  plain(w, 0);
  synth_launch(w, (fire ? 600 : 400) * MS, 1000, 0x10, 0, 0);
  synth_sync(w, (fire ? 601 : 401) * MS, 5000);
}

static void utilization(struct synth *w, int fire) {
  synth_launch(w, 10 * MS, 1000, 0x10, 0, 0);
  synth_sync(w, 11 * MS, 90 * MS);
  synth_device(w, 10 * MS + 2000, fire ? MS : 91 * MS, GT_KIND_LAUNCH, 1);
}

static void memory(struct synth *w, int fire) {
  plain(w, 0);
  synth_alloc(w, 12 * MS, 0xa000, fire ? 900 : 800, GT_MEM_DEVICE, 0);
}

static void cold_start(struct synth *w, int fire) {
  for (int i = 0; i < 4; i++) {
    uint64_t t = (10 + 10 * i) * MS;
    synth_nvtx(w, t, GT_NVTX_PUSH, "request");
    synth_nvtx(w, t + (i == 0 && fire ? 5 : 1) * MS, GT_NVTX_POP, NULL);
  }
}

static void metric(struct synth *w, uint64_t ts, unsigned id, double v) {
  struct gt_record r = synth_rec(GT_KIND_METRIC, GT_API_gputrace_metric, ts, 0);
  r.pid = r.tid = 0;
  r.u.metric.metric = id;
  r.u.metric.value = v;
  struct gt_record *p = &r;
  if (gt_writer_append(w->w, p) != 0)
    exit(1);
}

static void hw_util(struct synth *w, int fire) {
  plain(w, 0);
  for (int i = 0; i < 3; i++)
    metric(w, (10 + i * 500) * MS, GT_METRIC_GPU_UTIL, fire ? 10 : 30);
}

static void hw_vram(struct synth *w, int fire) {
  plain(w, 0);
  metric(w, 10 * MS, GT_METRIC_MEM_TOTAL, 1000);
  for (int i = 0; i < 3; i++)
    metric(w, (10 + i * 500) * MS, GT_METRIC_MEM_USED, fire ? 880 : 840);
}

static void hw_thermal(struct synth *w, int fire) {
  plain(w, 0);
  for (int i = 0; i < 3; i++)
    metric(w, (10 + i * 500) * MS, GT_METRIC_TEMP, fire ? 84 : 80);
}

/* The verdict from given shares (per mille of traced time): none without a
 * CUDA call; the runner-up named when within RP_VERDICT_CLOSE of it. */
static void check_verdict(uint64_t calls, uint64_t copy, uint64_t idle, const char *want,
                          const char *runner_up) {
  struct report r = {
      .cuda_calls = calls,
      .dev_records = 1,
      .sh = {.traced = 1000, .copy = copy, .idle = idle, .api = 10}}; /* cpu: idle + 10 */
  rp_verdict(&r);
  CHECK((r.verdict && want) ? !strcmp(r.verdict, want) : r.verdict == want);
  CHECK((r.runner_up && runner_up) ? !strcmp(r.runner_up, runner_up)
                                   : r.runner_up == runner_up);
}

int main(void) {
  char buf[512];
  check_verdict(0, 444, 424, NULL, NULL); /* NVTX only: no data */
  check_verdict(5, 0, 0, "cpu-bound", NULL);
  check_verdict(5, 444, 424, "transfer-bound", "cpu-bound"); /* 44.4 against 43.4 */
  check_verdict(5, 483, 424, "transfer-bound", "cpu-bound"); /* 4.9 points apart */
  check_verdict(5, 485, 424, "transfer-bound", NULL);        /* 5.1 points apart */
  check_verdict(5, 384, 435, "cpu-bound", NULL);
  CHECK(strcmp(findings("plain", plain, 1, 0, buf, sizeof buf), "") == 0);
  check_rule("api_errors", api_errors, 0,
             "high api_errors: 1 CUDA calls returned an error (__cudaLaunchKernel: "
             "cudaErrorMemoryAllocation ×1) | failed_calls=1 top=__cudaLaunchKernel: "
             "cudaErrorMemoryAllocation ×1");
  check_rule("pageable_memcpy", pageable, 0,
             "medium pageable_memcpy: 1 host<->device copies used pageable host "
             "memory (0.0 % of the traced time); 1 of them were async copies, which "
             "then block like synchronous ones | copies=1 async_copies=1 bytes=4096 "
             "host_ns=1000 share=0.0004998");
  check_rule("sync_memcpy", sync_copies, 0,
             "low sync_memcpy: 10 synchronous host<->device copies (host-to-device "
             "ones over 64 KB) blocked the host for 0.1 % of the traced time | "
             "copies=10 bytes=10485760 host_ns=10000 share=0.000909");
  check_rule("sync_memset", sync_memset, 0,
             "low sync_memset: 1 synchronous memsets of pinned or managed memory "
             "blocked the host (0.0 % of the traced time) | memsets=1 host_ns=1000 "
             "share=0.0003332");
  check_rule("excessive_sync", excessive_sync, 0,
             "medium excessive_sync: 100 % of kernel launches were followed by a "
             "synchronize before the next launch (10 of 10); the host was blocked in "
             "synchronizes for 0.3 % of the traced time | launches=10 "
             "launches_then_sync=10 ratio=1 sync_calls=10 blocked_ns=50000 "
             "share=0.002631");
  check_rule("small_kernels", small_kernels, 0,
             "medium small_kernels: 100 launches: the host waited 0 ns per launch for "
             "kernels (estimated) and spent 1000 ns per launch launching them | "
             "launches=100 kernel_est_ns=0 launch_ns=100000 launch_share=0.1009");
  check_rule("small_kernels", small_kernels_timed, 0,
             "medium small_kernels: 1 kernels (100 launches) run on the device for at "
             "most twice the host time of launching them | kernels=1 launches=100 "
             "examples=step() launch_share=1");
  check_rule("small_transfers", small_transfers, 0,
             "low small_transfers: 100 of 100 copies moved less than 64 KiB each; "
             "each pays a fixed latency of microseconds | small_copies=100 copies=100 "
             "fraction=1");
  check_rule("alloc_churn", alloc_churn, 0,
             "low alloc_churn: 10 allocations were of a size the process had freed "
             "before (11 allocations, 11 frees; 0.0 % of the traced time in them) | "
             "reallocations=10 async_reallocations=0 allocations=11 frees=11 "
             "host_ns=220 share=9.565e-06");
  check_rule("gpu_idle_gaps", idle_gaps, 0,
             "medium gpu_idle_gaps: the device sat idle 1 times for 500 ms or more "
             "(99.7 % of the run; longest 0.589 s, at +0.011 s) | gaps=1 "
             "idle_ns=588995000 longest_ns=588995000 source=model: from a wait that "
             "drained all queued work to the next work queued");
  check_rule("low_gpu_utilization", utilization, 0,
             "medium low_gpu_utilization: the device was busy less than half the time "
             "in 30 of 30 equal parts of the run (mean 1 %; lowest 0 % in part 2) | "
             "chunks=30 low_chunks=30 mean_utilization=0.01099 lowest_utilization=0");
  check_rule("memory_pressure", memory, 1000,
             "high memory_pressure: peak device memory of pid 100 reached 90.0 % of "
             "the device's memory | peak_bytes=900 device_bytes=1000 fraction=0.9 "
             "pid=100");
  check_rule("cold_start", cold_start, 0,
             "low cold_start: the first \"request\" range took 5.0x the median of the "
             "others | range=request cold_ns=5000000 p50_ns=1000000");
  check_rule("gpu_underutilized", hw_util, 0,
             "high gpu_underutilized: GPU 0 utilization was under 25 % for 100.0 % of "
             "the sampled time (mean 10.0 %) | gpu=0 fraction=1 low_ns=1000000000 "
             "sampled_ns=1000000000");
  check_rule("vram_pressure", hw_vram, 0,
             "medium vram_pressure: GPU 0 memory use was above 85 % for 100.0 % of "
             "the sampled time (above 90 %: 0.0 %) | gpu=0 fraction_85=1 "
             "fraction_90=0 max_used_bytes=880");
  check_rule("thermal", hw_thermal, 0,
             "high thermal: GPU 0 temperature was at or above 83 C for 100.0 % of the "
             "sampled time (max 84 C) | gpu=0 fraction=1 threshold_c=83 max_c=84");
  check_out_of_memory();
  return check_finish("test_report_rules");
}
