/* gen_trace.c — gputrace-gen-trace: write a synthetic trace of N records.
 *
 * Usage: gputrace-gen-trace OUT.gtrace N_EVENTS [--seed S] [--threads T]
 *                           [--device]
 *
 * Contract: a deterministic (per seed) trace, written with gt_writer like
 * the collector writes it, that looks like an inference server: a process
 * start record (command line), kernel_name records, then T threads serving
 * requests — an NVTX "request" push/pop around an async HtoD copy, decode
 * steps (an NVTX "decode" push/pop around a few kernel launches, now and
 * then a memset), an async DtoH copy and a stream sync; allocations and
 * frees of a bounded working set, event records, marks, a rare failed
 * call, and NVTX start/end "batch" ranges that span requests. Timestamps
 * are monotonic per thread and records are written in global time order.
 * With --device every launch, copy and memset also gets a DEVICE record
 * (its time on the thread's stream), written at the next sync as a
 * device-timing source would. N_EVENTS counts records (text slots aside).
 * It exists for benchmarks (bench/chrome.sh) and tests of large traces.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_file.h"

#define MAX_THREADS 64
#define N_KERNELS 24
#define WORKING_SET 16
#define MAX_PENDING 256 /* device records waiting for the next sync */

struct thread {
  uint32_t tid;
  uint64_t clock;       /* ns from the trace start */
  uint64_t stream;      /* its own stream */
  uint64_t device_free; /* when its stream is idle again */
  uint32_t corr;
  int phase, step, steps;
  uint64_t live[WORKING_SET];
  struct gt_record pending[MAX_PENDING];
  int npending;
};

struct gen {
  struct gt_writer *w;
  uint64_t seed, written, target, base;
  uint32_t pid;
  int device;
  int nthreads;
  struct thread th[MAX_THREADS];
  uint64_t batch_id;
  uint64_t batch_open; /* range id of the open "batch" range, 0 if none */
};

static uint64_t rnd(struct gen *g) { /* xorshift64* */
  g->seed ^= g->seed >> 12;
  g->seed ^= g->seed << 25;
  g->seed ^= g->seed >> 27;
  return g->seed * 0x2545F4914F6CDD1Dull;
}

static uint64_t between(struct gen *g, uint64_t lo, uint64_t hi) {
  return lo + rnd(g) % (hi - lo + 1);
}

static void put(struct gen *g, struct gt_record *r) {
  if (gt_writer_append(g->w, r) != 0) {
    fprintf(stderr, "gputrace-gen-trace: %s\n", gt_writer_error(g->w));
    exit(1);
  }
  g->written++;
}

static struct gt_record rec(struct gen *g, struct thread *t, unsigned api, uint64_t dur) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.ts_ns = g->base + t->clock;
  r.dur_ns = dur;
  r.pid = g->pid;
  r.tid = t->tid;
  r.api = (uint16_t)api;
  r.kind = (uint8_t)gt_api_kind(api);
  r.nslots = 1;
  t->clock += dur + between(g, 50, 400); /* host work between calls */
  return r;
}

static void with_text(struct gen *g, struct gt_record *r, const char *text) {
  struct gt_record buf[GT_MAX_SLOTS];
  buf[0] = *r;
  gt_record_attach_text(&buf[0], text, strlen(text));
  put(g, &buf[0]);
}

static void nvtx(struct gen *g, struct thread *t, unsigned api, unsigned op,
                 const char *msg, uint64_t range_id) {
  struct gt_record r = rec(g, t, api, 0);
  r.u.nvtx.op = op;
  r.u.nvtx.range_id = range_id;
  if (msg)
    with_text(g, &r, msg);
  else
    put(g, &r);
}

static uint64_t kernel_stub(int k) {
  return 0x401000u + (uint64_t)k * 0x40;
}

/* The device side of queued work: kept until the thread's next sync. */
static void queue_device(struct gen *g, struct thread *t, const struct gt_record *host,
                         uint64_t bytes, uint64_t kernel, unsigned of_kind,
                         uint32_t corr) {
  if (!g->device || t->npending == MAX_PENDING)
    return;
  uint64_t start = host->ts_ns - g->base + host->dur_ns + between(g, 1000, 5000);
  if (start < t->device_free)
    start = t->device_free;
  uint64_t dur = of_kind == GT_KIND_LAUNCH ? between(g, 2000, 40000) : 1000 + bytes / 20;
  t->device_free = start + dur;
  struct gt_record *d = &t->pending[t->npending++];
  memset(d, 0, sizeof *d);
  d->ts_ns = g->base + start;
  d->dur_ns = dur;
  d->pid = g->pid;
  d->tid = t->tid;
  d->api = host->api;
  d->kind = GT_KIND_DEVICE;
  d->nslots = 1;
  d->u.device =
      (struct gt_device_args){.stream = t->stream,
                              .kernel = kernel,
                              .bytes = bytes,
                              .corr = corr,
                              .sample = 1,
                              .of_kind = (uint8_t)of_kind,
                              .dir = host->kind == GT_KIND_MEMCPY ? host->u.copy.dir : 0,
                              .source = GT_DEVTIME_EVENTS};
}

static void launch(struct gen *g, struct thread *t) {
  struct gt_record r = rec(g, t, GT_API___cudaLaunchKernel, between(g, 2000, 6000));
  int k = (int)(rnd(g) % N_KERNELS);
  r.u.launch.kernel = kernel_stub(k);
  r.u.launch.grid[0] = (uint32_t)between(g, 1, 4096), r.u.launch.grid[1] = 1;
  r.u.launch.grid[2] = 1;
  r.u.launch.block[0] = 256, r.u.launch.block[1] = r.u.launch.block[2] = 1;
  r.u.launch.stream = t->stream;
  r.u.launch.corr = ++t->corr;
  if (rnd(g) % 20000 == 0)
    r.result = 1; /* cudaErrorInvalidValue: a rare failure */
  put(g, &r);
  if (r.result == 0)
    queue_device(g, t, &r, 0, r.u.launch.kernel, GT_KIND_LAUNCH, r.u.launch.corr);
}

static void copy(struct gen *g, struct thread *t, unsigned dir) {
  uint64_t bytes = between(g, 4096, 4u << 20);
  struct gt_record r = rec(g, t, GT_API_cudaMemcpyAsync, between(g, 3000, 9000));
  r.flags = GT_F_ASYNC | GT_F_PINNED;
  r.u.copy = (struct gt_copy_args){.dst = 0x7f0000000000u + bytes,
                                   .src = 0x200000000u,
                                   .bytes = bytes,
                                   .stream = t->stream,
                                   .kind = (uint8_t)dir,
                                   .dir = (uint8_t)dir,
                                   .dst_device = -1,
                                   .src_device = -1,
                                   .corr = ++t->corr};
  put(g, &r);
  queue_device(g, t, &r, bytes, 0, GT_KIND_MEMCPY, r.u.copy.corr);
}

static void memset_async(struct gen *g, struct thread *t) {
  struct gt_record r = rec(g, t, GT_API_cudaMemsetAsync, between(g, 2000, 5000));
  r.flags = GT_F_ASYNC;
  r.u.set = (struct gt_set_args){
      .ptr = 0x300000000u, .bytes = 65536, .stream = t->stream, .corr = ++t->corr};
  put(g, &r);
  queue_device(g, t, &r, 65536, 0, GT_KIND_MEMSET, r.u.set.corr);
}

/* Replace one slot of the working set: free the old block, allocate anew. */
static void churn(struct gen *g, struct thread *t) {
  int i = (int)(rnd(g) % WORKING_SET);
  if (t->live[i]) {
    struct gt_record f = rec(g, t, GT_API_cudaFreeAsync, between(g, 1000, 3000));
    f.flags = GT_F_ASYNC;
    f.u.mem.ptr = t->live[i];
    f.u.mem.stream = t->stream;
    put(g, &f);
  }
  struct gt_record a = rec(g, t, GT_API_cudaMallocAsync, between(g, 2000, 20000));
  a.flags = GT_F_ASYNC;
  a.u.mem.bytes = between(g, 1, 64) << 20;
  a.u.mem.ptr = 0x500000000000u + ((uint64_t)t->tid << 24) + (rnd(g) & 0xffff) * 0x100000;
  a.u.mem.stream = t->stream;
  a.u.mem.memory = GT_MEM_DEVICE;
  for (int j = 0; j < WORKING_SET; j++)
    if (j != i && t->live[j] == a.u.mem.ptr)
      a.u.mem.ptr += 0x10; /* keep pointers of live blocks distinct */
  t->live[i] = a.u.mem.ptr;
  put(g, &a);
}

static void sync_stream(struct gen *g, struct thread *t) {
  uint64_t wait = t->device_free > t->clock ? t->device_free - t->clock : 0;
  struct gt_record r =
      rec(g, t, GT_API_cudaStreamSynchronize, wait + between(g, 1000, 3000));
  r.u.handle.handle = t->stream;
  put(g, &r);
  for (int i = 0; i < t->npending && g->written < g->target; i++)
    put(g, &t->pending[i]);
  t->npending = 0;
}

static void event_record(struct gen *g, struct thread *t) {
  struct gt_record r = rec(g, t, GT_API_cudaEventRecord, between(g, 500, 2000));
  r.u.handle.handle = 0x600000u + t->tid;
  r.u.handle.handle2 = t->stream;
  put(g, &r);
}

/* One call (or NVTX record) of thread t's request loop. */
static void step(struct gen *g, struct thread *t) {
  switch (t->phase) {
  case 0:
    nvtx(g, t, GT_API_nvtxRangePushA, GT_NVTX_PUSH, "request", 0);
    t->steps = (int)between(g, 4, 12), t->step = 0, t->phase = 1;
    break;
  case 1:
    copy(g, t, GT_DIR_HTOD);
    t->phase = 2;
    break;
  case 2: /* a decode step: push, launches, pop */
    nvtx(g, t, GT_API_nvtxRangePushA, GT_NVTX_PUSH, "decode", 0);
    t->phase = 3;
    break;
  case 3:
    launch(g, t);
    if (rnd(g) % 4 == 0)
      t->phase = rnd(g) % 8 == 0 ? 5 : 4;
    break;
  case 5:
    memset_async(g, t);
    t->phase = 4;
    break;
  case 4:
    nvtx(g, t, GT_API_nvtxRangePop, GT_NVTX_POP, NULL, 0);
    t->phase = ++t->step < t->steps ? 2 : 6;
    break;
  case 6:
    copy(g, t, GT_DIR_DTOH);
    t->phase = 7;
    break;
  case 7:
    sync_stream(g, t);
    t->phase = 8;
    break;
  case 8:
    nvtx(g, t, GT_API_nvtxRangePop, GT_NVTX_POP, NULL, 0);
    t->phase = 9;
    break;
  default: /* between requests: memory churn, an event, a mark, batches */
    if (rnd(g) % 3 == 0)
      churn(g, t);
    else if (rnd(g) % 4 == 0)
      event_record(g, t);
    else if (rnd(g) % 8 == 0)
      nvtx(g, t, GT_API_nvtxMarkA, GT_NVTX_MARK, "checkpoint", 0);
    else if (!g->batch_open)
      nvtx(g, t, GT_API_nvtxRangeStartA, GT_NVTX_START, "batch",
           g->batch_open = ++g->batch_id);
    else
      nvtx(g, t, GT_API_nvtxRangeEnd, GT_NVTX_END, NULL, g->batch_open),
          g->batch_open = 0;
    t->phase = 0;
    break;
  }
}

static void header_records(struct gen *g) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.ts_ns = g->base;
  r.pid = r.tid = g->pid;
  r.api = GT_API_gputrace_process;
  r.kind = GT_KIND_PROCESS;
  r.u.proc.phase = GT_PROC_START;
  r.u.proc.ppid = 1;
  with_text(g, &r, "python3 serve.py --model llama-3-8b --port 8000");
  for (int k = 0; k < N_KERNELS; k++) {
    char name[96];
    char base[48];
    snprintf(base, sizeof base, "fused_kernel_%02d", k);
    /* _Z<len><name>PfPKfi: void-less C++ mangling of name(float*, float const*, int) */
    snprintf(name, sizeof name, "_Z%zu%sPfPKfi", strlen(base), base);
    memset(&r, 0, sizeof r);
    r.ts_ns = g->base + 1000 + (uint64_t)k;
    r.pid = r.tid = g->pid;
    r.api = GT_API_gputrace_kernel_name;
    r.kind = GT_KIND_KERNEL_NAME;
    r.u.kname.kernel = kernel_stub(k);
    with_text(g, &r, name);
  }
}

static void footer_record(struct gen *g, uint64_t end) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.ts_ns = g->base + end;
  r.pid = r.tid = g->pid;
  r.api = GT_API_gputrace_process;
  r.kind = GT_KIND_PROCESS;
  r.nslots = 1;
  r.u.proc.phase = GT_PROC_END;
  r.u.proc.records = g->written;
  put(g, &r);
}

static int usage(void) {
  fprintf(stderr,
          "usage: gputrace-gen-trace OUT.gtrace N_EVENTS [--seed S] [--threads T] "
          "[--device]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  struct gen *g = calloc(1, sizeof *g);
  g->target = strtoull(argv[2], NULL, 10);
  g->seed = 0x9E3779B97F4A7C15ull;
  g->nthreads = 4;
  g->pid = 4242;
  g->base = 1000000000000ull; /* an uptime of 1000 s */
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      g->seed ^= strtoull(argv[++i], NULL, 0) * 0xD1B54A32D192ED03ull;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      g->nthreads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--device"))
      g->device = 1;
    else
      return free(g), usage();
  }
  if (g->target < 32 || g->nthreads < 1 || g->nthreads > MAX_THREADS)
    return free(g), usage();
  char err[256];
  if (!(g->w = gt_writer_open(argv[1], GT_WRITER_FORCE, err, sizeof err))) {
    fprintf(stderr, "gputrace-gen-trace: %s\n", err);
    return free(g), 1;
  }
  header_records(g);
  for (int i = 0; i < g->nthreads; i++) {
    struct thread *t = &g->th[i];
    t->tid = g->pid + (uint32_t)i;
    t->clock = 20000 + (uint64_t)i * 777;
    t->stream = 0x7000000u + (uint64_t)i * 0x100;
    t->phase = 0;
  }
  while (g->written + 1 < g->target) { /* the thread furthest behind goes next */
    struct thread *t = &g->th[0];
    for (int i = 1; i < g->nthreads; i++)
      if (g->th[i].clock < t->clock)
        t = &g->th[i];
    step(g, t);
  }
  uint64_t end = 0;
  for (int i = 0; i < g->nthreads; i++)
    end = g->th[i].clock > end ? g->th[i].clock : end;
  footer_record(g, end);
  int rc = gt_writer_close(g->w) == 0 ? 0 : 1;
  if (rc)
    fprintf(stderr, "gputrace-gen-trace: writing %s failed\n", argv[1]);
  free(g);
  return rc;
}
