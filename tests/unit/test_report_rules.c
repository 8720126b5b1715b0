/* test_report_rules.c — every finding of `gputrace report` (report_rules.c,
 * report_hw.c; docs/report.md states the rules) fires on a minimal
 * synthetic trace made to trigger it, and stays quiet on the same trace
 * just short of its threshold; a plain trace has no finding at all. The
 * verdict: none without CUDA calls, and a near tie names its runner-up. */
#include "check.h"
#include "report.h"
#include "synth.h"

#define MS 1000000ull

typedef void (*build_fn)(struct synth *w, int fire);

/* Findings of `report` on the trace build() writes (fire: over the rule's
 * threshold or just under it); their rule names, ' '-separated, in buf. */
static const char *findings(const char *name, build_fn build, int fire,
                            uint64_t device_memory, char *buf, size_t len) {
  char path[256], file[64];
  snprintf(file, sizeof file, "%s_%d.gtrace", name, fire);
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
  buf[0] = '\0';
  for (size_t i = 0; i < r->nfindings; i++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "",
             r->findings[i].rule);
  rp_free(r);
  free(r);
  return buf;
}

/* The rule fires on its trace, and nothing else does; nothing fires on
 * the one under the threshold. */
static void check_rule(const char *rule, build_fn build, uint64_t device_memory) {
  char buf[512];
  findings(rule, build, 1, device_memory, buf, sizeof buf);
  if (strcmp(buf, rule) != 0)
    fprintf(stderr, "%s: fired: '%s'\n", rule, buf);
  CHECK(strcmp(buf, rule) == 0);
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
  check_rule("api_errors", api_errors, 0);
  check_rule("pageable_memcpy", pageable, 0);
  check_rule("sync_memcpy", sync_copies, 0);
  check_rule("sync_memset", sync_memset, 0);
  check_rule("excessive_sync", excessive_sync, 0);
  check_rule("small_kernels", small_kernels, 0);
  check_rule("small_transfers", small_transfers, 0);
  check_rule("alloc_churn", alloc_churn, 0);
  check_rule("gpu_idle_gaps", idle_gaps, 0);
  check_rule("low_gpu_utilization", utilization, 0);
  check_rule("memory_pressure", memory, 1000);
  check_rule("cold_start", cold_start, 0);
  check_rule("gpu_underutilized", hw_util, 0);
  check_rule("vram_pressure", hw_vram, 0);
  check_rule("thermal", hw_thermal, 0);
  return check_finish("test_report_rules");
}
