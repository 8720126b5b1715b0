/* prom.c — live metrics for Prometheus (see collector.h, docs/monitoring/).
 *
 * The drain loop counts every record the sink takes (gt_prom_observe: plain
 * increments, no lock; O(1) per record however many series there are) and
 * publishes a copy of its counters every GT_PROM_PUBLISH_NS
 * (gt_prom_publish: one memcpy under the mutex). The HTTP thread
 * (libmicrohttpd's own) copies the published snapshot under the same mutex
 * and formats /metrics outside it, so a scrape never holds up draining.
 * Labels are bounded: APIs (the fixed table), copy directions, up to
 * GT_PROM_MAX_PIDS live processes, GT_PROM_MAX_GPUS devices, the NVML
 * readings and clock-event reasons (fixed tables), GT_PROM_MAX_XIDS XID
 * values per device, GT_PROM_MAX_PIDS GPU processes in all, and the
 * ranges and kernels of prom_work.c (prom_series.h). HTTP is bounded too:
 * GT_PROM_MAX_CONNECTIONS at once, idle ones closed, a short backlog, poll
 * (not select), so held connections cannot take the descriptors tracing
 * needs nor make the server spin. API latency is a
 * histogram (prom_api_bounds). NVML readings: the last of each; a device's
 * GPU processes are replaced by each sample's list (its PROCS reading).
 * CUDA graphs as every analysis counts them (model/graphs.h): a captured
 * or added node is a call, not a launch, and its memory is the graph's; a
 * graph launch counts the kernels and copies it runs.
 * --snapshot-webhook: POST /snapshot (an Alertmanager webhook's call; its
 * body is read and ignored) asks the flight recorder for a snapshot: the
 * HTTP thread only counts it (atomic), the drain loop writes it (control.c:
 * BASE.alert-N.gtrace, at most one per 10 s) and the reply is 202 at once.
 * Off, POST is 405 as any method but GET and HEAD; "local" (the default)
 * answers 403 to a peer that is not on a loopback address. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/map.h"
#include "gputrace/units.h"
#include "graphs.h"
#include "live_view.h"
#include "prom_series.h"

#ifdef GT_HAVE_MHD
#include <microhttpd.h>
#endif

#define GT_PROM_MAX_PIDS 64
#define GT_PROM_MAX_GPUS 16
#define GT_PROM_MAX_XIDS 8 /* XID values per device with a label of their own */
#define GT_PROM_PUBLISH_NS 100000000ull /* 100 ms */
/* HTTP is a guest of the collector, whose descriptors trace processes: at
 * most this many connections at once (a scraper, top, a person: a few),
 * each closed after GT_PROM_IDLE_S without a byte, and a short listen
 * backlog, so held connections cost at most these descriptors and past them
 * wait in the kernel or are refused there (docs/monitoring/README.md). */
#define GT_PROM_MAX_CONNECTIONS 32u
#define GT_PROM_IDLE_S 5u
#define GT_PROM_BACKLOG 16u

struct prom_counters {
  uint64_t launches;
  uint64_t api_calls[GT_API_COUNT];
  uint64_t api_ns[GT_API_COUNT];
  uint64_t api_buckets[GT_API_COUNT][PROM_API_BUCKETS + 1];
  uint64_t memcpy_bytes[6]; /* enum gt_dir */
  uint64_t dropped;
  uint32_t pid[GT_PROM_MAX_PIDS]; /* 0 = free slot */
  uint64_t pid_bytes[GT_PROM_MAX_PIDS];
  double pid_gpu_ns[GT_PROM_MAX_PIDS];
  struct prom_gpu {
    double hw[GT_METRIC_COUNT]; /* the last reading of each */
    uint8_t has[GT_METRIC_COUNT];
    char uuid[96], model[96]; /* NVML's, "" when unknown */
    struct {
      uint32_t xid;
      uint64_t count;
    } xids[GT_PROM_MAX_XIDS + 1]; /* the last: every other XID (xid 0) */
    unsigned nxids;
  } gpu[GT_PROM_MAX_GPUS];
  struct {
    uint32_t gpu, pid;
    double bytes;
  } gproc[GT_PROM_MAX_PIDS]; /* the driver's view (NVML) */
  unsigned ngproc;
  char hostname[256];
  struct prom_work work;
};

struct gt_prom {
  struct prom_counters live; /* the drain loop's own */
  struct gt_map allocs;      /* (pid, ptr) -> bytes of live device allocations */
  struct gt_graphs *graphs;  /* what each graph launch runs */
  struct prom_work_state *work;
  struct gt_live_view *view;
  uint32_t last_pid; /* the process of the last DEVICE record, and its slot */
  int last_slot;
  uint64_t last_publish;
  pthread_mutex_t mu;
  struct prom_counters snap; /* published, under mu */
  int webhook;               /* GT_WEBHOOK_* */
  atomic_uint alerts;        /* POST /snapshot taken, not yet handed over */
#ifdef GT_HAVE_MHD
  struct MHD_Daemon *daemon;
#endif
};

static int pid_slot(struct prom_counters *c, uint32_t pid, int create) {
  int free_slot = -1;
  for (int i = 0; i < GT_PROM_MAX_PIDS; i++) {
    if (c->pid[i] == pid)
      return i;
    if (!c->pid[i] && free_slot < 0)
      free_slot = i;
  }
  if (!create || free_slot < 0)
    return -1;
  c->pid[free_slot] = pid;
  c->pid_bytes[free_slot] = 0;
  c->pid_gpu_ns[free_slot] = 0;
  return free_slot;
}

static void observe_work(struct gt_prom *p, const struct gt_record *r);

/* The GPU processes of a device, as its last sample listed them. */
static void gpu_process(struct prom_counters *c, unsigned g, const struct gt_record *r) {
  if (r->u.metric.metric == GT_METRIC_PROCS) { /* a new list: the old one goes */
    unsigned j = 0;
    for (unsigned i = 0; i < c->ngproc; i++)
      if (c->gproc[i].gpu != g)
        c->gproc[j++] = c->gproc[i];
    c->ngproc = j;
  } else if (c->ngproc < GT_PROM_MAX_PIDS) {
    c->gproc[c->ngproc].gpu = g;
    c->gproc[c->ngproc].pid = r->u.metric.pid;
    c->gproc[c->ngproc++].bytes = r->u.metric.value;
  }
}

static void gpu_xid(struct prom_gpu *d, uint32_t xid) {
  unsigned i = 0;
  while (i < d->nxids && d->xids[i].xid != xid)
    i++;
  if (i == d->nxids && d->nxids < GT_PROM_MAX_XIDS)
    d->xids[d->nxids++].xid = xid;
  else if (i == d->nxids)
    i = GT_PROM_MAX_XIDS;
  d->xids[i].count++;
}

/* Device time: the kernel's, its process's, its request's (prom_work.c). */
static void observe_device(struct gt_prom *p, const struct gt_record *r) {
  struct prom_counters *c = &p->live;
  double ns = prom_work_run(p->work, r);
  if (ns > 0 && (r->pid != p->last_pid || c->pid[p->last_slot] != r->pid)) {
    p->last_slot = pid_slot(c, r->pid, 1); /* a scan only when the process changes */
    p->last_pid = p->last_slot >= 0 ? r->pid : 0;
  }
  if (ns > 0 && p->last_pid == r->pid)
    c->pid_gpu_ns[p->last_slot] += ns;
}

static void observe_metric(struct prom_counters *c, const struct gt_record *r) {
  unsigned g = r->u.metric.device, m = r->u.metric.metric;
  if (g >= GT_PROM_MAX_GPUS || m == 0 || m >= GT_METRIC_COUNT)
    return;
  struct prom_gpu *d = &c->gpu[g];
  if (m == GT_METRIC_PROCS || m == GT_METRIC_PROC_MEM)
    gpu_process(c, g, r);
  if (m == GT_METRIC_XID)
    gpu_xid(d, (uint32_t)r->u.metric.value);
  d->hw[m] = r->u.metric.value;
  d->has[m] = 1;
}

void gt_prom_observe(void *ctx, const struct gt_record *r) {
  struct gt_prom *p = ctx;
  struct prom_counters *c = &p->live;
  if (gt_kind_is_call(r->kind) && r->api < GT_API_COUNT) {
    c->api_calls[r->api]++;
    c->api_ns[r->api] += r->dur_ns;
    c->api_buckets[r->api][prom_bucket(prom_api_bounds, PROM_API_BUCKETS,
                                       (double)r->dur_ns / 1e9)]++;
  }
  prom_work_record(p->work, r);
  enum gt_graphs_verdict v = gt_graphs_feed(p->graphs, r);
  if (v == GT_GRAPHS_HIDE)
    return; /* a graph's node: ran nothing */
  if (v == GT_GRAPHS_PASS) {
    observe_work(p, r);
    return;
  }
  size_t n;
  const struct gt_record *runs = gt_graphs_expansion(p->graphs, &n);
  for (size_t i = 0; i < n; i++)
    observe_work(p, &runs[i]);
}

static void observe_work(struct gt_prom *p, const struct gt_record *r) {
  struct prom_counters *c = &p->live;
  gt_live_view_observe(p->view, r);
  switch (r->kind) {
  case GT_KIND_LAUNCH:
    c->launches++;
    break;
  case GT_KIND_MEMCPY:
    if (r->result == 0 && r->u.copy.dir < 6)
      c->memcpy_bytes[r->u.copy.dir] += r->u.copy.bytes;
    break;
  case GT_KIND_ALLOC:
    if (r->result == 0 && r->u.mem.memory == GT_MEM_DEVICE && r->u.mem.ptr) {
      int s = pid_slot(c, r->pid, 1);
      if (s >= 0 &&
          gt_map_put(&p->allocs, gt_pid_key(r->pid, r->u.mem.ptr), r->u.mem.bytes) == 0)
        c->pid_bytes[s] += r->u.mem.bytes;
    }
    break;
  case GT_KIND_FREE: {
    uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), bytes;
    if (r->result == 0 && gt_map_get(&p->allocs, key, &bytes)) {
      gt_map_del(&p->allocs, key);
      int s = pid_slot(c, r->pid, 0);
      if (s >= 0)
        c->pid_bytes[s] -= bytes < c->pid_bytes[s] ? bytes : c->pid_bytes[s];
    }
    break;
  }
  case GT_KIND_PROCESS:
    if (r->u.proc.phase == GT_PROC_END) { /* bounded labels: a gone process leaves */
      int s = pid_slot(c, r->pid, 0);
      if (s >= 0)
        c->pid[s] = 0;
    }
    break;
  case GT_KIND_DROP:
    c->dropped += r->u.count.count;
    break;
  case GT_KIND_METRIC:
    observe_metric(c, r);
    break;
  case GT_KIND_DEVICE:
    observe_device(p, r);
    return;
  }
  if (r->result == 0 && (r->kind == GT_KIND_LAUNCH || r->kind == GT_KIND_MEMCPY ||
                         r->kind == GT_KIND_MEMSET ||
                         (r->kind == GT_KIND_ALLOC && r->u.mem.memory == GT_MEM_DEVICE)))
    prom_work_run(p->work, r); /* inside a request */
}

void gt_prom_publish(struct gt_prom *p, uint64_t now, int force) {
  if (!p || (!force && now - p->last_publish < GT_PROM_PUBLISH_NS))
    return;
  p->last_publish = now;
  prom_work_publish(p->work);
  gt_live_view_publish(p->view);
  pthread_mutex_lock(&p->mu);
  p->snap = p->live;
  pthread_mutex_unlock(&p->mu);
}

/* ---- the exposition format ---- */

void prom_put(struct prom_buf *b, const char *fmt, ...) {
  if (!b->s && !(b->s = malloc(b->cap = 256)))
    return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s)
      return;
    b->s = s;
    b->cap = cap;
  }
}

void prom_put_label(struct prom_buf *b, const char *v) {
  prom_put(b, "\"");
  for (const char *q = v; *q;) {
    size_t n = strcspn(q, "\\\"\n");
    prom_put(b, "%.*s", (int)n, q);
    q += n;
    if (*q)
      prom_put(b, "\\%c", *q == '\n' ? 'n' : *q);
    q += *q != '\0';
  }
  prom_put(b, "\"");
}

void prom_set_name(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n > PROM_NAME_MAX - 1)
    n = PROM_NAME_MAX - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

uint64_t prom_name_hash(const char *name) { /* FNV-1a of the label kept */
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; name[i] && i < PROM_NAME_MAX - 1; i++)
    h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
  return h;
}

/* 2^(k/2) seconds, k = -20..12, and 2^k, k = -20..4: log-spaced, on the
 * bucket boundaries of native histograms' schemas 1 and 0. */
const double prom_req_bounds[PROM_REQ_BUCKETS] = {
    0x1p-10, 0x1.6a09e667f3bcdp-10, 0x1p-9, 0x1.6a09e667f3bcdp-9,
    0x1p-8,  0x1.6a09e667f3bcdp-8,  0x1p-7, 0x1.6a09e667f3bcdp-7,
    0x1p-6,  0x1.6a09e667f3bcdp-6,  0x1p-5, 0x1.6a09e667f3bcdp-5,
    0x1p-4,  0x1.6a09e667f3bcdp-4,  0x1p-3, 0x1.6a09e667f3bcdp-3,
    0x1p-2,  0x1.6a09e667f3bcdp-2,  0x1p-1, 0x1.6a09e667f3bcdp-1,
    0x1p0,   0x1.6a09e667f3bcdp+0,  0x1p1,  0x1.6a09e667f3bcdp+1,
    0x1p2,   0x1.6a09e667f3bcdp+2,  0x1p3,  0x1.6a09e667f3bcdp+3,
    0x1p4,   0x1.6a09e667f3bcdp+4,  0x1p5,  0x1.6a09e667f3bcdp+5,
    0x1p6,
};
const double prom_api_bounds[PROM_API_BUCKETS] = {
    0x1p-20, 0x1p-19, 0x1p-18, 0x1p-17, 0x1p-16, 0x1p-15, 0x1p-14, 0x1p-13, 0x1p-12,
    0x1p-11, 0x1p-10, 0x1p-9,  0x1p-8,  0x1p-7,  0x1p-6,  0x1p-5,  0x1p-4,  0x1p-3,
    0x1p-2,  0x1p-1,  0x1p0,   0x1p1,   0x1p2,   0x1p3,   0x1p4,
};

unsigned prom_bucket(const double *bounds, unsigned n, double v) {
  unsigned lo = 0, hi = n; /* the first bound >= v */
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (bounds[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void prom_put_hist(struct prom_buf *b, const char *name, const char *labels,
                   const uint64_t *buckets, const double *bounds, unsigned n, double sum,
                   uint64_t count) {
  const char *sep = *labels ? "," : "";
  uint64_t cum = 0;
  for (unsigned i = 0; i < n; i++) {
    cum += buckets[i];
    prom_put(b, "%s_bucket{%s%sle=\"%.17g\"} %llu\n", name, labels, sep, bounds[i],
             (unsigned long long)cum);
  }
  prom_put(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
           (unsigned long long)count);
  const char *o = *labels ? "{" : "", *c = *labels ? "}" : "";
  prom_put(b, "%s_sum%s%s%s %.9f\n%s_count%s%s%s %llu\n", name, o, labels, c, sum, name,
           o, labels, c, (unsigned long long)count);
}

#ifdef GT_HAVE_MHD
/* NVML readings shown as gauges (the last reading of each), by device. */
static const struct {
  unsigned metric;
  const char *name, *help;
  double scale;
} hw_gauges[] = {
    {GT_METRIC_GPU_UTIL, "gputrace_gpu_utilization_percent", "GPU utilization (NVML).",
     1},
    {GT_METRIC_MEM_UTIL, "gputrace_gpu_memory_copy_utilization_percent",
     "Percent of time device memory was read or written (NVML).", 1},
    {GT_METRIC_MEM_USED, "gputrace_gpu_memory_used_bytes", "GPU memory used (NVML).", 1},
    {GT_METRIC_MEM_TOTAL, "gputrace_gpu_memory_total_bytes", "GPU memory in all (NVML).",
     1},
    {GT_METRIC_TEMP, "gputrace_gpu_temperature_celsius", "GPU temperature (NVML).", 1},
    {GT_METRIC_TEMP_SLOWDOWN, "gputrace_gpu_slowdown_temperature_celsius",
     "Temperature at which the GPU slows down (NVML).", 1},
    {GT_METRIC_POWER, "gputrace_gpu_power_watts", "GPU power draw (NVML).", 1},
    {GT_METRIC_POWER_LIMIT, "gputrace_gpu_power_limit_watts",
     "Enforced power limit (NVML).", 1},
    {GT_METRIC_SM_CLOCK, "gputrace_gpu_sm_clock_hertz", "SM clock (NVML).", 1e6},
    {GT_METRIC_MEM_CLOCK, "gputrace_gpu_memory_clock_hertz", "Memory clock (NVML).", 1e6},
    {GT_METRIC_PCIE_TX, "gputrace_gpu_pcie_tx_bytes_per_second",
     "PCIe transmit throughput (NVML).", 1},
    {GT_METRIC_PCIE_RX, "gputrace_gpu_pcie_rx_bytes_per_second",
     "PCIe receive throughput (NVML).", 1},
    {GT_METRIC_CLOCK_EVENTS, "gputrace_gpu_clock_event_reasons",
     "Mask of NVML clock-event (throttle) reasons now active.", 1},
    {GT_METRIC_PROCS, "gputrace_gpu_compute_processes",
     "Compute processes on the GPU (NVML).", 1},
    {GT_METRIC_XID, "gputrace_gpu_last_xid", "The last XID error of the GPU (NVML).", 1},
};

/* NVML's clock-event reason bits (nvmlClocksEventReason*). */
static const struct {
  unsigned long long bit;
  const char *reason;
} clock_reasons[] = {
    {0x1, "gpu_idle"},    {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"}, {0x10, "sync_boost"},         {0x20, "sw_thermal"},
    {0x40, "hw_thermal"}, {0x80, "hw_power_brake"},     {0x100, "display_clocks"},
};

static void put_hw_gauges(struct prom_buf *b, const struct prom_counters *c) {
  for (size_t i = 0; i < sizeof hw_gauges / sizeof hw_gauges[0]; i++) {
    const char *name = hw_gauges[i].name;
    unsigned m = hw_gauges[i].metric;
    prom_put(b, "# HELP %s %s\n# TYPE %s gauge\n", name, hw_gauges[i].help, name);
    for (int g = 0; g < GT_PROM_MAX_GPUS; g++)
      if (c->gpu[g].has[m])
        prom_put(b, "%s{gpu=\"%d\"} %.17g\n", name, g,
                 c->gpu[g].hw[m] * hw_gauges[i].scale);
  }
}

static void put_health(struct prom_buf *b, const struct prom_counters *c) {
  prom_put(b,
           "# HELP gputrace_gpu_clock_event_active 1 while NVML reports the clock-event "
           "(throttle) reason.\n# TYPE gputrace_gpu_clock_event_active gauge\n");
  for (int g = 0; g < GT_PROM_MAX_GPUS; g++)
    for (size_t i = 0; c->gpu[g].has[GT_METRIC_CLOCK_EVENTS] && i < 9; i++)
      prom_put(b, "gputrace_gpu_clock_event_active{gpu=\"%d\",reason=\"%s\"} %d\n", g,
               clock_reasons[i].reason,
               ((unsigned long long)c->gpu[g].hw[GT_METRIC_CLOCK_EVENTS] &
                clock_reasons[i].bit) != 0);
  prom_put(b,
           "# HELP gputrace_gpu_ecc_errors_total Volatile ECC errors (NVML), by type.\n"
           "# TYPE gputrace_gpu_ecc_errors_total counter\n");
  for (int g = 0; g < GT_PROM_MAX_GPUS; g++)
    for (unsigned m = GT_METRIC_ECC_CORRECTED; m <= GT_METRIC_ECC_UNCORRECTED; m++)
      if (c->gpu[g].has[m])
        prom_put(b, "gputrace_gpu_ecc_errors_total{gpu=\"%d\",type=\"%s\"} %.17g\n", g,
                 m == GT_METRIC_ECC_CORRECTED ? "corrected" : "uncorrected",
                 c->gpu[g].hw[m]);
  prom_put(b, "# HELP gputrace_gpu_xid_errors_total XID errors (NVML events), by XID.\n"
              "# TYPE gputrace_gpu_xid_errors_total counter\n");
  for (int g = 0; g < GT_PROM_MAX_GPUS; g++)
    for (unsigned i = 0; i <= GT_PROM_MAX_XIDS; i++)
      if (c->gpu[g].xids[i].count && i < GT_PROM_MAX_XIDS)
        prom_put(b, "gputrace_gpu_xid_errors_total{gpu=\"%d\",xid=\"%u\"} %llu\n", g,
                 c->gpu[g].xids[i].xid, (unsigned long long)c->gpu[g].xids[i].count);
      else if (c->gpu[g].xids[i].count)
        prom_put(
            b, "gputrace_gpu_xid_errors_total{gpu=\"%d\",xid=\"" PROM_OTHER "\"} %llu\n",
            g, (unsigned long long)c->gpu[g].xids[i].count);
  prom_put(b,
           "# HELP gputrace_gpu_process_memory_bytes GPU memory a process holds, as the "
           "driver sees it (NVML).\n# TYPE gputrace_gpu_process_memory_bytes gauge\n");
  for (unsigned i = 0; i < c->ngproc; i++)
    prom_put(b, "gputrace_gpu_process_memory_bytes{gpu=\"%u\",pid=\"%u\"} %.17g\n",
             c->gproc[i].gpu, c->gproc[i].pid, c->gproc[i].bytes);
}

/* One series per device NVML named: the labels dcgm-exporter's series carry
 * (docs/monitoring/dcgm-rules.yml renames them). */
static void put_gpu_info(struct prom_buf *b, const struct prom_counters *c) {
  prom_put(b, "# HELP gputrace_gpu_info The GPU's identity (NVML).\n"
              "# TYPE gputrace_gpu_info gauge\n");
  for (int g = 0; g < GT_PROM_MAX_GPUS; g++) {
    if (!c->gpu[g].uuid[0] && !c->gpu[g].model[0])
      continue;
    prom_put(b, "gputrace_gpu_info{gpu=\"%d\",uuid=", g);
    prom_put_label(b, c->gpu[g].uuid);
    prom_put(b, ",model_name=");
    prom_put_label(b, c->gpu[g].model);
    prom_put(b, ",hostname=");
    prom_put_label(b, c->hostname);
    prom_put(b, "} 1\n");
  }
}

static void put_api(struct prom_buf *b, const struct prom_counters *c) {
  prom_put(b, "# HELP gputrace_api_calls_total CUDA API calls traced, by API.\n"
              "# TYPE gputrace_api_calls_total counter\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++)
    if (c->api_calls[a])
      prom_put(b, "gputrace_api_calls_total{api=\"%s\"} %llu\n", gt_api_name(a),
               (unsigned long long)c->api_calls[a]);
  prom_put(b, "# HELP gputrace_api_seconds Host time spent in CUDA API calls, by API.\n"
              "# TYPE gputrace_api_seconds histogram\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++) {
    if (!c->api_calls[a])
      continue;
    char labels[128];
    snprintf(labels, sizeof labels, "api=\"%s\"", gt_api_name(a));
    prom_put_hist(b, "gputrace_api_seconds", labels, c->api_buckets[a], prom_api_bounds,
                  PROM_API_BUCKETS, (double)c->api_ns[a] / 1e9, c->api_calls[a]);
  }
}

static void put_processes(struct prom_buf *b, const struct prom_counters *c) {
  prom_put(b,
           "# HELP gputrace_device_memory_bytes Device memory allocated and not freed, "
           "by traced process.\n# TYPE gputrace_device_memory_bytes gauge\n");
  for (int i = 0; i < GT_PROM_MAX_PIDS; i++)
    if (c->pid[i])
      prom_put(b, "gputrace_device_memory_bytes{pid=\"%u\"} %llu\n", c->pid[i],
               (unsigned long long)c->pid_bytes[i]);
  prom_put(b, "# HELP gputrace_process_gpu_seconds_total Device time of the kernels of a "
              "traced process.\n# TYPE gputrace_process_gpu_seconds_total counter\n");
  for (int i = 0; i < GT_PROM_MAX_PIDS; i++)
    if (c->pid[i])
      prom_put(b, "gputrace_process_gpu_seconds_total{pid=\"%u\"} %.9f\n", c->pid[i],
               c->pid_gpu_ns[i] / 1e9);
}

/* The text of /metrics (malloc'd; *len set). */
static char *prom_format(const struct prom_counters *c, size_t *len) {
  struct prom_buf b = {malloc(65536), 0, 65536};
  if (!b.s)
    return NULL;
  b.s[0] = '\0';
  prom_put(&b,
           "# HELP gputrace_kernel_launches_total Kernel launches traced.\n"
           "# TYPE gputrace_kernel_launches_total counter\n"
           "gputrace_kernel_launches_total %llu\n",
           (unsigned long long)c->launches);
  put_api(&b, c);
  prom_put(&b, "# HELP gputrace_memcpy_bytes_total Bytes copied by cudaMemcpy*, by "
               "direction.\n# TYPE gputrace_memcpy_bytes_total counter\n");
  for (unsigned d = 0; d < 6; d++)
    prom_put(&b, "gputrace_memcpy_bytes_total{dir=\"%s\"} %llu\n", gt_dir_name(d),
             (unsigned long long)c->memcpy_bytes[d]);
  put_processes(&b, c);
  prom_put(&b,
           "# HELP gputrace_events_dropped_total Records the rings had no room for.\n"
           "# TYPE gputrace_events_dropped_total counter\n"
           "gputrace_events_dropped_total %llu\n",
           (unsigned long long)c->dropped);
  prom_work_format(&b, &c->work);
  put_gpu_info(&b, c);
  put_hw_gauges(&b, c);
  put_health(&b, c);
  *len = b.len;
  return b.s;
}

/* /top.jsonl: what `gputrace top` reads beside /metrics (live_view.c). */
static struct MHD_Response *live_view_response(struct gt_prom *p) {
  size_t len = 0;
  char *text = gt_live_view_format(p->view, &len);
  struct MHD_Response *resp =
      text ? MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE) : NULL;
  if (resp)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/jsonl");
  else
    free(text);
  return resp;
}

static int loopback_peer(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const struct sockaddr *sa = ci ? ci->client_addr : NULL;
  if (sa && sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >>
            24) == 127;
  if (sa && sa->sa_family == AF_INET6) {
    const struct in6_addr *a =
        &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
  }
  return 0;
}

/* POST /snapshot, once its body is read: counted for the drain loop. */
static struct MHD_Response *
webhook_response(struct gt_prom *p, struct MHD_Connection *conn, unsigned *status) {
  static const char taken[] =
      "gputrace-collector: snapshot asked for: the collector writes it beside its "
      "output as BASE.alert-N.gtrace (at most one per 10 s)\n";
  static const char refused[] = "gputrace-collector: POST /snapshot is taken from this "
                                "host only (--snapshot-webhook any: from anywhere)\n";
  int ok = p->webhook == GT_WEBHOOK_ANY || loopback_peer(conn);
  if (ok)
    atomic_fetch_add_explicit(&p->alerts, 1, memory_order_relaxed);
  *status = ok ? MHD_HTTP_ACCEPTED : MHD_HTTP_FORBIDDEN;
  return ok ? MHD_create_response_from_buffer(sizeof taken - 1, (void *)taken,
                                              MHD_RESPMEM_PERSISTENT)
            : MHD_create_response_from_buffer(sizeof refused - 1, (void *)refused,
                                              MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **con_cls) {
  (void)version, (void)upload;
  struct gt_prom *p = cls;
  struct MHD_Response *resp;
  unsigned status = MHD_HTTP_OK;
  if (p->webhook && !strcmp(method, "POST") && !strcmp(url, "/snapshot")) {
    static int seen;                /* a mark: this connection's request began */
    if (!*con_cls || *upload_len) { /* the headers, then the body: read, ignored */
      *con_cls = &seen;
      *upload_len = 0;
      return MHD_YES;
    }
    resp = webhook_response(p, conn, &status);
  } else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
    status = MHD_HTTP_METHOD_NOT_ALLOWED;
    resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  } else if (!strcmp(url, "/top.jsonl")) {
    if (!(resp = live_view_response(p)))
      return MHD_NO;
  } else if (strcmp(url, "/metrics")) {
    static const char msg[] = "gputrace-collector: metrics are at /metrics\n";
    status = MHD_HTTP_NOT_FOUND;
    resp = MHD_create_response_from_buffer(sizeof msg - 1, (void *)msg,
                                           MHD_RESPMEM_PERSISTENT);
  } else {
    struct prom_counters *c = malloc(sizeof *c);
    if (!c)
      return MHD_NO;
    pthread_mutex_lock(&p->mu);
    *c = p->snap;
    pthread_mutex_unlock(&p->mu);
    size_t len = 0;
    char *text = prom_format(c, &len);
    free(c);
    if (!text)
      return MHD_NO;
    resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (resp)
      MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                              "text/plain; version=0.0.4; charset=utf-8");
    else
      free(text);
  }
  if (!resp)
    return MHD_NO;
  enum MHD_Result ret = MHD_queue_response(conn, status, resp);
  MHD_destroy_response(resp);
  return ret;
}

/* Why MHD could not listen at `ai` (it keeps no errno): the same bind, as
 * MHD makes it (SO_REUSEADDR), tried again to learn the reason. */
static const char *why_not_listening(const struct addrinfo *ai) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1;
  int e = fd < 0 ? errno : 0;
  if (!e)
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (!e && (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1) != 0))
    e = errno;
  if (fd >= 0)
    close(fd);
  return e ? strerror(e) : "the server did not start";
}
#endif

unsigned gt_prom_alerts(struct gt_prom *p) {
  return p ? atomic_exchange_explicit(&p->alerts, 0, memory_order_relaxed) : 0;
}

struct gt_prom *gt_prom_start(const char *addr_port, int webhook, char *err,
                              size_t errlen) {
#ifndef GT_HAVE_MHD
  (void)addr_port, (void)webhook;
  snprintf(err, errlen, "--prometheus: built without libmicrohttpd");
  return NULL;
#else
  char host[256], service[8];
  unsigned want_port;
  if (gt_parse_host_port(addr_port, host, sizeof host, &want_port) != 0) {
    snprintf(err, errlen, "--prometheus %s: expected ADDR:PORT (a port from 0 to 65535)",
             addr_port);
    return NULL;
  }
  snprintf(service, sizeof service, "%u", want_port);
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
  int rc = getaddrinfo(host, service, &hints, &ai);
  if (rc != 0) {
    snprintf(err, errlen, "--prometheus %s: %s", addr_port, gai_strerror(rc));
    return NULL;
  }
  struct gt_prom *p = calloc(1, sizeof *p);
  if (!p) {
    freeaddrinfo(ai);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  p->webhook = webhook;
  gt_map_init(&p->allocs);
  p->graphs = gt_graphs_new(NULL); /* no model: kernels by stub */
  p->work = prom_work_new(&p->live.work);
  p->view = gt_live_view_new();
  if (gethostname(p->live.hostname, sizeof p->live.hostname - 1) != 0)
    p->live.hostname[0] = '\0';
  pthread_mutex_init(&p->mu, NULL);
  /* poll, not select: a descriptor past FD_SETSIZE (a collector with many
   * traced processes) must not stop the server or make it spin */
  unsigned flags = MHD_USE_POLL_INTERNAL_THREAD;
  if (ai->ai_family == AF_INET6)
    flags |= MHD_USE_IPv6;
  uint16_t port = ai->ai_family == AF_INET6
                      ? ntohs(((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_port)
                      : ntohs(((struct sockaddr_in *)(void *)ai->ai_addr)->sin_port);
  p->daemon =
      MHD_start_daemon(flags, port, NULL, NULL, handle, p, MHD_OPTION_SOCK_ADDR,
                       ai->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, GT_PROM_IDLE_S,
                       MHD_OPTION_CONNECTION_LIMIT, GT_PROM_MAX_CONNECTIONS,
                       MHD_OPTION_LISTEN_BACKLOG_SIZE, GT_PROM_BACKLOG, MHD_OPTION_END);
  if (!p->daemon)
    snprintf(err, errlen, "--prometheus %s: cannot listen there: %s", addr_port,
             why_not_listening(ai));
  freeaddrinfo(ai);
  if (!p->daemon) {
    gt_map_free(&p->allocs);
    gt_graphs_free(p->graphs);
    prom_work_free(p->work);
    gt_live_view_free(p->view);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
  }
  const union MHD_DaemonInfo *bound =
      MHD_get_daemon_info(p->daemon, MHD_DAEMON_INFO_BIND_PORT);
  if (want_port == 0 && bound) /* the system chose: say which, or nobody can scrape */
    fprintf(stderr, "gputrace-collector: serving http://%s%s%s:%u/metrics\n",
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
            (unsigned)bound->port);
  return p;
#endif
}

void gt_prom_stop(struct gt_prom *p) {
  if (!p)
    return;
#ifdef GT_HAVE_MHD
  MHD_stop_daemon(p->daemon);
#endif
  gt_map_free(&p->allocs);
  gt_graphs_free(p->graphs);
  prom_work_free(p->work);
  gt_live_view_free(p->view);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void gt_prom_gpu_info(struct gt_prom *p, unsigned gpu, const char *uuid,
                      const char *model) {
  if (!p || gpu >= GT_PROM_MAX_GPUS)
    return;
  snprintf(p->live.gpu[gpu].uuid, sizeof p->live.gpu[gpu].uuid, "%s", uuid);
  snprintf(p->live.gpu[gpu].model, sizeof p->live.gpu[gpu].model, "%s", model);
}
