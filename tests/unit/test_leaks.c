/* test_leaks.c — the leak analysis (leaks.c, docs/leaks.md) on a synthetic
 * run of 20 requests: memory held since start-up is leaked but not
 * growing, a stack that keeps one block per request grows (series and
 * rate exact, bytes per "request" range), churn leaves nothing; the peak
 * and the stacks holding it; an invalid free; the process's exit; the same
 * results in one pass (the span guessed from the first and last chunks),
 * from the log of changes and from a second pass, and when the guess is
 * wrong (a chunk in the middle starts earlier); which frames are the
 * runtime's and nvcc's glue (gt_glue_frames). */
#include <math.h>

#include "check.h"
#include "leaks.h"
#include "synth.h"

#define MIB (1ull << 20)
#define S 50000000000ull /* a request every 50 s */
#define T0 1000000000ull

/* chunked: each request in a chunk of its own; early: a launch of another
 * thread before everything else, in the chunk of request 10 (the span
 * guessed from the first and last chunks is wrong). */
static void write_run(const char *path, int chunked, int early) {
  struct synth w;
  synth_open(&w, path);
  synth_process(&w, 1, "./server");
  synth_alloc(&w, T0, 0x1000, 10 * MIB, GT_MEM_DEVICE, 1); /* held since start-up */
  for (uint64_t i = 0; i < 20; i++) {
    uint64_t t = T0 + i * S + S / 2;
    synth_nvtx(&w, t, GT_NVTX_PUSH, "request");
    synth_alloc(&w, t + 1000000, 0x100000 + i * 0x1000, MIB, GT_MEM_DEVICE, 2); /* kept */
    synth_nvtx(&w, t + 2000000, GT_NVTX_POP, NULL);
    synth_alloc(&w, t + 3000000, 0x900000, 2 * MIB, GT_MEM_DEVICE, 3); /* churn */
    synth_free(&w, t + 4000000, 0x900000, GT_API_cudaFree, 0);
    if (early && i == 10) {
      w.tid = 2;
      synth_launch(&w, T0 - 5000000, 1000, 0x4000, 0, 0);
      w.tid = w.pid;
    }
    if (chunked)
      synth_chunk(&w);
  }
  synth_free(&w, T0 + 20 * S, 0xdead, GT_API_cudaFree, 0);
  synth_process_end(&w, T0 + 20 * S + 1, 1);
  synth_close(&w);
}

static const struct gt_group *leak_of(const struct gt_leaks *l, uint32_t stack) {
  for (size_t i = 0; i < l->nleaks; i++)
    if (l->leaks[i].stack_id == stack)
      return &l->leaks[i];
  return NULL;
}

static void check_run(const struct gt_leaks *l) {
  CHECK(!l->damaged);
  CHECK_EQ_U64(l->nleaks, 2);
  CHECK_EQ_U64(l->leaks[0].stack_id, 2); /* largest first */
  const struct gt_group *held = leak_of(l, 1), *grows = leak_of(l, 2);
  CHECK(held && grows && !leak_of(l, 3));
  if (!held || !grows)
    return;
  CHECK_EQ_U64(held->bytes, 10 * MIB);
  CHECK(!held->growing);
  CHECK_EQ_U64(grows->bytes, 20 * MIB);
  CHECK_EQ_U64(grows->blocks, 20);
  CHECK(grows->growing);
  for (int b = 0; b < GT_GROWTH_BUCKETS; b++) {
    CHECK_EQ_U64(grows->series[b], (uint64_t)(b + 1) * MIB);
    CHECK_EQ_U64(held->series[b], 10 * MIB);
  }
  /* one MiB per step, the steps (last - first) / 20 + 1 ns long */
  uint64_t last = T0 + 20 * S; /* the invalid free */
  double step_min = (double)((last - T0) / GT_GROWTH_BUCKETS + 1) / 6e10;
  CHECK(grows->rated && held->rated); /* the run lasted 1000 s: a rate */
  CHECK(fabs(grows->bytes_per_min - (double)MIB / step_min) < 1e-3);
  CHECK(held->bytes_per_min == 0 && !signbit(held->bytes_per_min)); /* flat: 0, not -0 */
  CHECK(grows->range_name && !strcmp(l->ranges.strs[grows->range_name - 1], "request"));
  CHECK_EQ_U64(grows->range_bytes, 20 * MIB);
  CHECK_EQ_U64(l->range_counts[grows->range_name - 1], 20);
  CHECK_EQ_U64(held->range_name, 0);
  CHECK_EQ_U64(l->nprocs, 1);
  const struct gt_proc_summary *p = &l->procs[0];
  CHECK(p->ended && p->exited);
  CHECK_EQ_U64(p->peak_device, 32 * MIB);
  CHECK_EQ_U64(p->peak_ts, T0 + 19 * S + S / 2 + 3000000);
  CHECK_EQ_U64(p->nat_peak, 3);
  if (p->nat_peak == 3) {
    CHECK(p->at_peak[0].stack_id == 2 && p->at_peak[0].bytes == 20 * MIB);
    CHECK(p->at_peak[1].stack_id == 1 && p->at_peak[1].bytes == 10 * MIB);
    CHECK(p->at_peak[2].stack_id == 3 && p->at_peak[2].bytes == 2 * MIB);
  }
  CHECK_EQ_U64(l->invalid_total, 1);
  CHECK(l->ninvalid == 1 && l->invalid[0].status == GT_FREE_UNKNOWN &&
        l->invalid[0].ptr == 0xdead);
  CHECK_EQ_U64(l->nallocated, 3);
  CHECK(l->allocated[0].stack_id == 3 && l->allocated[0].bytes == 40 * MIB);
  CHECK_EQ_U64(l->first_ns, T0);
  CHECK_EQ_U64(l->last_ns, last);
}

/* Which frames are glue: a <<<>>> launch's and an allocation's stacks as
 * nvcc -g builds them (innermost first). */
static void check_glue(void) {
  const struct gt_frame launch[] = {
      {"__cudaLaunchKernel_helper(CUkern_st*)", "/cuda/include/crt/device_functions.h",
       "app", 90, 0, 0},
      {"__device_stub__Z4stepPf(float*)", "/tmp/app.cudafe1.stub.c", "app", 3, 0, 0},
      {"step(float*)", "/src/app.cu", "app", 10, 0, 0}, /* nvcc's, named as the kernel */
      {"main", "/src/app.cu", "app", 40, 0, 0},
  };
  CHECK(gt_glue_frames(launch, 4, 0) == 1 && gt_glue_frames(launch, 4, 1) == 2 &&
        gt_glue_frames(launch, 4, 3) == 0);
  CHECK(gt_leaks_origin(launch, 4) == &launch[3]);
  const struct gt_frame alloc[] = {
      {"cudaError cudaMalloc<float>(float**, unsigned long)",
       "/cuda/include/cuda_runtime.h", "app", 879, 0, 0},
      {"load(int)", "/src/app.cu", "app", 21, 0, 0},
      {"cudaMalloc", "", "libcudart.so.13", 0, 0, 0},
      {"serve", "/srv/serve.py", "", 7, 1, 0}, /* Python: never glue */
  };
  CHECK(gt_glue_frames(alloc, 4, 0) == 1 && gt_glue_frames(alloc, 4, 1) == 0 &&
        gt_glue_frames(alloc, 4, 2) == 1 && gt_glue_frames(alloc, 4, 3) == 0);
}

/* Two analyses of one trace agree on every figure. */
static void check_same(const struct gt_leaks *a, const struct gt_leaks *b) {
  CHECK_EQ_U64(a->nleaks, b->nleaks);
  for (size_t i = 0; i < a->nleaks && i < b->nleaks; i++) {
    const struct gt_group *x = &a->leaks[i], *y = &b->leaks[i];
    CHECK(x->stack_id == y->stack_id && x->bytes == y->bytes && x->blocks == y->blocks);
    CHECK(x->growing == y->growing && x->bytes_per_min == y->bytes_per_min);
    CHECK(memcmp(x->series, y->series, sizeof x->series) == 0);
  }
  CHECK(a->first_ns == b->first_ns && a->last_ns == b->last_ns);
  CHECK_EQ_U64(a->nprocs, b->nprocs);
  for (size_t i = 0; i < a->nprocs && i < b->nprocs; i++) {
    const struct gt_proc_summary *p = &a->procs[i], *q = &b->procs[i];
    CHECK(p->peak_device == q->peak_device && p->peak_ts == q->peak_ts);
    CHECK_EQ_U64(p->nat_peak, q->nat_peak);
    for (size_t k = 0; k < p->nat_peak && k < q->nat_peak; k++)
      CHECK(p->at_peak[k].stack_id == q->at_peak[k].stack_id &&
            p->at_peak[k].bytes == q->at_peak[k].bytes &&
            p->at_peak[k].blocks == q->at_peak[k].blocks);
  }
}

/* The run's results from `path` with these options, in `passes` sessions. */
static void check_path(const char *path, struct gt_leaks_opts o, int passes) {
  struct gt_leaks l;
  char err[512];
  CHECK(gt_leaks_run(path, &o, &l, err, sizeof err) == 0);
  check_run(&l);
  CHECK_EQ_U64(l.passes, passes);
  gt_leaks_free(&l);
}

int main(void) {
  check_glue();
  char path[256], err[512];
  write_run(synth_path("growth.gtrace", path, sizeof path), 0, 0);
  struct gt_leaks l;
  struct gt_leaks_opts o = {0};
  check_path(path, o, 1); /* one pass: the span from the first and last chunks */
  o.no_guess = 1;
  check_path(path, o, 1); /* the log replayed */
  o.log_max = 8;          /* the changes replayed from a second pass over the file */
  check_path(path, o, 2);
  write_run(synth_path("chunked.gtrace", path, sizeof path), 1, 0);
  check_path(path, (struct gt_leaks_opts){0}, 1); /* 22 chunks: the guess holds */
  /* A chunk in the middle starts earlier: the guess fails, a second pass
   * gives what the log gives. */
  write_run(synth_path("early.gtrace", path, sizeof path), 1, 1);
  struct gt_leaks guessed, logged;
  CHECK(gt_leaks_run(path, &(struct gt_leaks_opts){0}, &guessed, err, sizeof err) == 0);
  CHECK(gt_leaks_run(path, &(struct gt_leaks_opts){.no_guess = 1}, &logged, err,
                     sizeof err) == 0);
  CHECK_EQ_U64(guessed.passes, 2);
  CHECK_EQ_U64(logged.passes, 1);
  CHECK_EQ_U64(guessed.first_ns, T0 - 5000000);
  CHECK_EQ_U64(guessed.procs[0].nat_peak, 3);
  check_same(&guessed, &logged);
  gt_leaks_free(&guessed);
  gt_leaks_free(&logged);
  CHECK(gt_leaks_run("/no/such.gtrace", &o, &l, err, sizeof err) == -1);
  CHECK(strstr(err, "cannot open /no/such.gtrace") != NULL);
  gt_leaks_free(&l);
  return check_finish("test_leaks");
}
