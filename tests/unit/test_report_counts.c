/* test_report_counts.c — one count, one meaning in `gputrace report` (issue
 * 36), on synthetic traces: evidence strings and messages are whole (a
 * 600-byte range name is not cut); alloc_churn tells stream-ordered churn
 * (cudaMallocAsync, a pool's) from cudaMalloc's and names only sites that
 * reallocated (a site whose blocks are never freed is none); the cold start
 * is each process's first occurrence of a range (a second process's first
 * is not warm). */
#include "check.h"
#include "report.h"
#include "synth.h"

#define MS 1000000ull

typedef void (*build_fn)(struct synth *w);

static struct report *read_trace(const char *name, build_fn build) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path(name, path, sizeof path));
  synth_process(&w, 1, "./counts");
  build(&w);
  synth_close(&w);
  struct report *r = gt_xcalloc(1, sizeof *r);
  struct rp_options o = {.to_ns = UINT64_MAX};
  rp_init(r, &o);
  CHECK(rp_read(r, path, "test") == 0);
  rp_finish(r);
  return r;
}

static void done(struct report *r) {
  rp_free(r);
  free(r);
}

static const struct rp_finding *finding(const struct report *r, const char *rule) {
  for (size_t i = 0; i < r->nfindings; i++)
    if (strcmp(r->findings[i].rule, rule) == 0)
      return &r->findings[i];
  return NULL;
}

static const struct rp_ev *evidence(const struct rp_finding *f, const char *key) {
  for (int i = 0; f && i < f->nev; i++)
    if (strcmp(f->ev[i].key, key) == 0)
      return &f->ev[i];
  return NULL;
}

static char long_name[601];

static void cold_long(struct synth *w) {
  for (int i = 0; i < 4; i++) {
    uint64_t t = (10 + 10 * i) * MS;
    synth_nvtx(w, t, GT_NVTX_PUSH, long_name);
    synth_nvtx(w, t + (i == 0 ? 5 : 1) * MS, GT_NVTX_POP, NULL);
  }
}

static void alloc_async(struct synth *w, uint64_t ts, uint64_t ptr, uint64_t bytes,
                        uint32_t stack) {
  struct gt_record r = synth_rec(GT_KIND_ALLOC, GT_API_cudaMallocAsync, ts, 10);
  r.flags = GT_F_ASYNC;
  r.u.mem.ptr = ptr;
  r.u.mem.bytes = bytes;
  r.u.mem.memory = GT_MEM_DEVICE;
  r.stack_id = stack;
  synth_put(w, &r);
}

/* 11 cudaMallocAsync/cudaFreeAsync pairs of one size at stack 5 (10
 * reallocations), and 30 cudaMalloc blocks at stack 7, never freed. */
static void churn_async(struct synth *w) {
  for (int i = 0; i < 11; i++) {
    alloc_async(w, (10 + 2 * i) * MS, 0xa000, 4096, 5);
    struct gt_record r =
        synth_rec(GT_KIND_FREE, GT_API_cudaFreeAsync, (11 + 2 * i) * MS, 10);
    r.flags = GT_F_ASYNC;
    r.u.mem.ptr = 0xa000;
    synth_put(w, &r);
  }
  for (int i = 0; i < 30; i++)
    synth_alloc(w, (40 + i) * MS, 0x100000 + 0x1000 * (uint64_t)i, 4096, GT_MEM_DEVICE,
                7);
}

/* The same with cudaMalloc/cudaFree at stack 6: the usual advice. */
static void churn_sync(struct synth *w) {
  churn_async(w);
  for (int i = 0; i < 11; i++) {
    synth_alloc(w, (80 + 2 * i) * MS, 0xb000, 8192, GT_MEM_DEVICE, 6);
    synth_free(w, (81 + 2 * i) * MS, 0xb000, GT_API_cudaFree, 0);
  }
}

/* Two processes, each running "load" three times: 5 ms first, 1 ms then. */
static void two_processes(struct synth *w) {
  for (uint32_t pid = 1; pid <= 2; pid++)
    for (int i = 0; i < 3; i++) {
      uint64_t t = (100 * pid + 10 * (uint64_t)i) * MS;
      struct gt_record r = synth_rec(GT_KIND_NVTX, GT_API_nvtxRangePushA, t, 0);
      r.u.nvtx.op = GT_NVTX_PUSH;
      r.pid = r.tid = pid == 1 ? 100 : 200;
      synth_put_text(w, r, "load");
      r = synth_rec(GT_KIND_NVTX, GT_API_nvtxRangePop, t + (i == 0 ? 5 : 1) * MS, 0);
      r.u.nvtx.op = GT_NVTX_POP;
      r.pid = r.tid = pid == 1 ? 100 : 200;
      synth_put(w, &r);
    }
}

int main(void) {
  memset(long_name, 'n', 600);
  struct report *r = read_trace("cold_long.gtrace", cold_long);
  const struct rp_finding *f = finding(r, "cold_start");
  const struct rp_ev *e = evidence(f, "range");
  CHECK_MSG(e && strlen(e->s) == 600 && strcmp(e->s, long_name) == 0,
            "the range's name whole in the evidence (%zu bytes)", e ? strlen(e->s) : 0);
  CHECK_MSG(f && strstr(f->message, long_name), "and in the message");
  done(r);

  r = read_trace("churn_async.gtrace", churn_async);
  f = finding(r, "alloc_churn");
  CHECK_MSG(f && strncmp(f->advice, "These are stream-ordered", 24) == 0,
            "cudaMallocAsync churn: the pool's advice (%s)",
            f ? f->advice : "no finding");
  e = evidence(f, "reallocations");
  CHECK_MSG(e && e->u == 10, "10 reallocations (%llu)", e ? (unsigned long long)e->u : 0);
  e = evidence(f, "call_sites");
  CHECK_MSG(e && strcmp(e->s, "pid 100 stack 5 ×10") == 0,
            "the churning site only, not the one never freed (%s)", e ? e->s : "none");
  done(r);

  r = read_trace("churn_sync.gtrace", churn_sync);
  f = finding(r, "alloc_churn");
  CHECK_MSG(f && strncmp(f->advice, "Allocate buffers once", 21) == 0,
            "cudaMalloc churn: reuse, or cudaMallocAsync (%s)", f ? f->advice : "none");
  e = evidence(f, "reallocations");
  CHECK(e && e->u == 10);
  e = evidence(f, "async_reallocations");
  CHECK(e && e->u == 10);
  e = evidence(f, "call_sites");
  CHECK_MSG(e && strcmp(e->s, "pid 100 stack 6 ×10") == 0, "cudaMalloc's site (%s)",
            e ? e->s : "none");
  done(r);

  r = read_trace("two_processes.gtrace", two_processes);
  CHECK(r->rnames.n == 1);
  const struct rp_range *g = &r->ranges[0];
  CHECK_MSG(g->n == 6 && g->warm == 4 && g->colds == 1,
            "6 ranges, 4 warm, 2 cold (%zu %llu)", g->n, (unsigned long long)g->warm);
  CHECK_MSG(g->max == 1 * MS && g->p50 == 1 * MS, "warm: 1 ms each (max %llu)",
            (unsigned long long)g->max);
  CHECK_MSG(g->cold.pid == 100 && g->cold.end - g->cold.start == 5 * MS,
            "the first process's cold start shown");
  CHECK(g->total_ns == 14 * MS);
  done(r);
  return check_finish("test_report_counts");
}
