/* test_prom_work.c — the request and GPU-time series of /metrics
 * (collector/prom_work.c, prom_series.h) on synthetic records: range names
 * past PROM_REQ_MAX and kernel names past PROM_KERNEL_MAX go to "other",
 * bucket boundaries, the work of a range (device time found by its launch's
 * correlation id after the range closed, copies, allocations; another
 * thread's is not its), sample weights (no more launches than were made
 * and not stood for yet), a process's kernel names forgotten at its end,
 * and label escaping in the text. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "prom_series.h"

static struct gt_record slots[GT_MAX_SLOTS];

static const struct gt_record *rec(unsigned kind, uint32_t tid, uint64_t ts) {
  memset(slots, 0, sizeof slots);
  slots[0].kind = (uint8_t)kind;
  slots[0].pid = 7;
  slots[0].tid = tid;
  slots[0].ts_ns = ts;
  slots[0].nslots = 1;
  return &slots[0];
}

static void range(struct prom_work_state *s, uint32_t tid, const char *name, uint64_t t0,
                  uint64_t t1) {
  struct gt_record *r = (struct gt_record *)rec(GT_KIND_NVTX, tid, t0);
  r->u.nvtx.op = GT_NVTX_PUSH;
  gt_record_attach_text(r, name, strlen(name));
  prom_work_record(s, r);
  r = (struct gt_record *)rec(GT_KIND_NVTX, tid, t1);
  r->u.nvtx.op = GT_NVTX_POP;
  prom_work_record(s, r);
}

static void kernel_name(struct prom_work_state *s, uint32_t pid, uint64_t stub,
                        const char *name) {
  struct gt_record *r = (struct gt_record *)rec(GT_KIND_KERNEL_NAME, 1, 0);
  r->pid = pid;
  r->u.kname.kernel = stub;
  gt_record_attach_text(r, name, strlen(name));
  prom_work_record(s, r);
}

static double device(struct prom_work_state *s, uint32_t tid, uint32_t corr,
                     uint64_t stub, uint64_t dur, uint32_t sample) {
  struct gt_record *r = (struct gt_record *)rec(GT_KIND_DEVICE, tid, 0);
  r->dur_ns = dur;
  r->u.device.of_kind = GT_KIND_LAUNCH;
  r->u.device.kernel = stub;
  r->u.device.corr = corr;
  r->u.device.sample = sample;
  prom_work_record(s, r); /* as gt_prom_observe: every record, then the work */
  return prom_work_run(s, r);
}

static void launch(struct prom_work_state *s, uint32_t tid, uint64_t stub) {
  struct gt_record *r = (struct gt_record *)rec(GT_KIND_LAUNCH, tid, 0);
  r->u.launch.kernel = stub;
  prom_work_run(s, r);
}

static int label_of(const struct prom_work *w, const char *name) {
  for (unsigned k = 0; k < w->nkern; k++)
    if (!strcmp(w->kern[k].name, name))
      return (int)k;
  return -1;
}

/* 64 labeled kernels of 2000 ns, k64..k69 in "other": k69 (100 us more)
 * takes a label at the next publish, with its whole time; k68 (100 ns more,
 * under 10 % more than the lowest label) does not; "other" never shrinks. */
static void test_rank(struct prom_work *w, struct prom_work_state *s, double other) {
  device(s, 9, 0, 0x1000 + 69, 100000, 1);
  device(s, 9, 0, 0x1000 + 68, 100, 1);
  other += 100100;
  CHECK_MSG(label_of(w, "k69()") < 0 && w->kern[PROM_KERNEL_MAX].gpu_ns == other,
            "before the publish: other %g", w->kern[PROM_KERNEL_MAX].gpu_ns);
  prom_work_publish(s);
  int k = label_of(w, "k69()");
  CHECK_MSG(k >= 0 && w->kern[k].gpu_ns == 102000 && w->nkern == PROM_KERNEL_MAX &&
                label_of(w, "k68()") < 0 && w->kern[PROM_KERNEL_MAX].gpu_ns == other,
            "ranked: k69 label %d, other %g", k, w->kern[PROM_KERNEL_MAX].gpu_ns);
  unsigned gone = 64, labeled = 0; /* the name that gave way */
  char name[16];
  for (unsigned i = 0; i < 64; i++) {
    snprintf(name, sizeof name, "k%u()", i);
    if (label_of(w, name) >= 0)
      labeled++;
    else
      gone = i;
  }
  CHECK_MSG(labeled == 63 && gone < 64, "one name gave way (%u labeled)", labeled);
  device(s, 9, 0, 0x1000 + gone, 500, 1); /* its time is other's now */
  other += 500;
  device(s, 9, 0, 0x1000 + 69, 1000, 1);
  CHECK_MSG(w->kern[k].gpu_ns == 103000 && w->kern[PROM_KERNEL_MAX].gpu_ns == other,
            "a labeled kernel's time");
  prom_work_publish(s); /* nothing moves */
  CHECK(label_of(w, "k69()") == k && label_of(w, "k68()") < 0);
}

/* After test_work: its range holds slot 0, its DEVICE records of kernels
 * without a name are "other"'s. */
static void test_bounds(struct prom_work *w, struct prom_work_state *s) {
  char name[32];
  double other = w->kern[PROM_KERNEL_MAX].gpu_ns;
  for (int i = 0; i < PROM_REQ_MAX + 8; i++) { /* 3 ms each */
    snprintf(name, sizeof name, "r%d", i);
    range(s, 1, name, 1000000000ull * (uint64_t)i, 1000000000ull * (uint64_t)i + 3000000);
  }
  CHECK_MSG(w->nreq == PROM_REQ_MAX && w->req[PROM_REQ_MAX].count == 9 &&
                !strcmp(w->req[PROM_REQ_MAX].name, "other") && w->req[1].count == 1,
            "range names: %u named, other %llu", w->nreq,
            (unsigned long long)w->req[PROM_REQ_MAX].count);
  /* 3 ms: above 2^-8.5 s (2.76 ms), at most 2^-8 s (3.91 ms): bucket 4 */
  CHECK_MSG(w->req[1].buckets[4] == 1 && w->req[1].sum_ns == 3000000, "3 ms bucket");
  CHECK_MSG(prom_bucket(prom_req_bounds, PROM_REQ_BUCKETS, 0x1p-8) == 4 &&
                prom_bucket(prom_req_bounds, PROM_REQ_BUCKETS, 100.0) ==
                    PROM_REQ_BUCKETS &&
                prom_bucket(prom_api_bounds, PROM_API_BUCKETS, 0.0) == 0,
            "bucket of a bound, past the last");
  for (unsigned k = 0; k < PROM_KERNEL_MAX + 6; k++) {
    snprintf(name, sizeof name, "_Z%dk%uv", k < 10 ? 2 : 3, k); /* k<k>() */
    kernel_name(s, 7, 0x1000 + k, name);
  }
  for (unsigned k = 0; k < PROM_KERNEL_MAX + 6; k++) {
    launch(s, 9, 0x1000 + k);
    launch(s, 9, 0x1000 + k);
    CHECK(device(s, 9, 0, 0x1000 + k, 1000, 2) == 2000);
  }
  device(s, 9, 0, 0x9999, 1000, 1); /* never named */
  CHECK_MSG(w->nkern == PROM_KERNEL_MAX && !strcmp(w->kern[0].name, "k0()") &&
                w->kern[0].gpu_ns == 2000 &&
                w->kern[PROM_KERNEL_MAX].gpu_ns == other + 6 * 2000 + 1000,
            "kernel names: %u named, other %g ns", w->nkern,
            w->kern[PROM_KERNEL_MAX].gpu_ns);
  test_rank(w, s, other + 6 * 2000 + 1000);
  struct gt_record *end = (struct gt_record *)rec(GT_KIND_PROCESS, 7, 0);
  end->u.proc.phase = GT_PROC_END;
  prom_work_record(s, end);
  int k69 = label_of(w, "k69()");
  double before = w->kern[PROM_KERNEL_MAX].gpu_ns, labeled = w->kern[k69].gpu_ns;
  device(s, 9, 0, 0x1000 + 69, 1000, 1); /* its name went with the process */
  CHECK_MSG(w->kern[k69].gpu_ns == labeled &&
                w->kern[PROM_KERNEL_MAX].gpu_ns == before + 1000,
            "a process's names forgotten at its end");
}

/* A DEVICE record timed 1 in N stands for N launches, but no more than the
 * process made of its kernel and no record stood for yet, and at least
 * itself; an unnamed kernel's (no count of its launches) for N. */
static void test_weights(struct prom_work_state *s) {
  kernel_name(s, 7, 0x5000, "_Z4rarev");
  kernel_name(s, 7, 0x5001, "_Z5stormv");
  launch(s, 3, 0x5000);
  CHECK_MSG(device(s, 3, 0, 0x5000, 1000, 256) == 1000,
            "a kernel launched once, 1 in 256");
  launch(s, 3, 0x5001); /* the first of a storm: timed, its skipped ones not read yet */
  double first = device(s, 3, 0, 0x5001, 10, 4);
  for (int i = 0; i < 4; i++)
    launch(s, 3, 0x5001);
  double second = device(s, 3, 0, 0x5001, 10, 4);
  CHECK_MSG(first == 10 && second == 40, "a storm: %g then %g ns", first, second);
  CHECK_MSG(device(s, 3, 0, 0x5001, 10, 4) == 10, "read before its launch: itself");
  launch(s, 3, 0x5001); /* pays for the record above */
  launch(s, 3, 0x5001);
  CHECK_MSG(device(s, 3, 0, 0x5001, 10, 4) == 10, "one launch owed");
  CHECK_MSG(device(s, 3, 0, 0x6000, 10, 8) == 80, "an unnamed kernel: its sample");
}

static void test_work(void) {
  static struct prom_work w;
  memset(&w, 0, sizeof w);
  struct prom_work_state *s = prom_work_new(&w);
  struct gt_record *r = (struct gt_record *)rec(GT_KIND_NVTX, 1, 100);
  r->u.nvtx.op = GT_NVTX_PUSH;
  gt_record_attach_text(r, "req\"a\\b\n", 8);
  prom_work_record(s, r);
  r = (struct gt_record *)rec(GT_KIND_LAUNCH, 1, 200);
  r->u.launch.corr = 5;
  prom_work_record(s, r);
  prom_work_run(s, r);
  r = (struct gt_record *)rec(GT_KIND_MEMCPY, 1, 300);
  r->u.copy.corr = 6, r->u.copy.bytes = 100;
  prom_work_record(s, r);
  prom_work_run(s, r);
  r = (struct gt_record *)rec(GT_KIND_ALLOC, 1, 400);
  r->u.mem.bytes = 4096;
  prom_work_run(s, r);
  r = (struct gt_record *)rec(GT_KIND_LAUNCH, 2, 450); /* another thread: no range */
  r->u.launch.corr = 5;
  prom_work_record(s, r);
  prom_work_run(s, r);
  r = (struct gt_record *)rec(GT_KIND_NVTX, 1, 500);
  r->u.nvtx.op = GT_NVTX_POP;
  prom_work_record(s, r);
  device(s, 1, 5, 0, 500, 1);  /* after the pop: still the range's */
  device(s, 2, 5, 0, 700, 1);  /* the other thread's corr 5 */
  device(s, 1, 77, 0, 900, 1); /* queued outside any range */
  CHECK_MSG(w.req[0].count == 1 && w.req[0].gpu_ns == 500 && w.req[0].copy_bytes == 100 &&
                w.req[0].alloc_bytes == 4096,
            "a range's work: gpu %g copy %llu alloc %llu", w.req[0].gpu_ns,
            (unsigned long long)w.req[0].copy_bytes,
            (unsigned long long)w.req[0].alloc_bytes);
  struct prom_buf b = {0};
  prom_work_format(&b, &w);
  CHECK_MSG(
      b.s &&
          strstr(b.s, "gputrace_request_seconds_count{range=\"req\\\"a\\\\b\\n\"} 1\n") &&
          strstr(b.s, "gputrace_request_seconds_bucket{range=\"req\\\"a\\\\b\\n\",le=\"+"
                      "Inf\"} 1\n") &&
          strstr(b.s, "le=\"0.0009765625\"} 1\n") && !strstr(b.s, "range=\"other\""),
      "text:\n%s", b.s ? b.s : "(none)");
  free(b.s);
  test_bounds(&w, s);
  test_weights(s); /* after the labels are taken: weights go with names, not labels */
  prom_work_free(s);
}

int main(void) {
  test_work();
  return check_finish("test_prom_work");
}
