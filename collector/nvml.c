/* nvml.c — hardware metrics from NVML (see collector.h).
 *
 * libnvidia-ml.so.1 is dlopen'ed when present: it is never a build or run
 * requirement, and the few types used are declared here. A sampling thread
 * reads every device each GPUTRACE_NVML_MS (default 500) milliseconds and
 * queues METRIC records; the drain loop takes them with a trylock between
 * passes, so a slow NVML call (they can take milliseconds on real
 * hardware) never holds up draining. A reading the device refuses is
 * skipped, never recorded as zero; a function the library lacks (an older
 * driver) or a device refuses (MIG) is skipped alone, per function, never
 * the device. Health readings come with the others: clock-event (throttle)
 * reasons, volatile ECC counts, the compute processes and the GPU memory
 * each holds (a PROCS count, then one PROC_MEM per process), and XID
 * errors, polled from an NVML event set with a 0 ms wait after each sample
 * (a METRIC record and a NOTE "xid X on GPU D" at the time of the poll).
 * Each device's name and UUID are read once, at start (gt_nvml_device). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/knobs.h"

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct { /* nvmlMemory_v2_t */
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2 ((unsigned)sizeof(nvmlMemory_v2_t) | 2u << 24)
typedef struct { /* nvmlProcessInfo_t of the _v3 (and _v2) functions */
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef void *nvmlEventSet_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

#define NVML_EVENT_XID 0x8ull /* nvmlEventTypeXidCriticalError */
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

#define GT_NVML_QUEUE 4096 /* readings waiting for the drain loop */
#define GT_NVML_MAX_DEV 64
#define GT_NVML_MAX_PROCS 64 /* processes read per device and sample */
#define GT_NVML_MAX_XIDS 16  /* XID events taken per sample (the rest: next one) */

struct nvml_fns {
  nvmlReturn_t (*init)(void);
  nvmlReturn_t (*shutdown)(void);
  nvmlReturn_t (*count)(unsigned int *);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
  nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
  nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
  nvmlReturn_t (*mem_v2)(nvmlDevice_t, nvmlMemory_v2_t *); /* optional */
  nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int *);
  nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned int *); /* optional */
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
  /* optional, each skipped alone when missing */
  nvmlReturn_t (*clock_events)(nvmlDevice_t, unsigned long long *);
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
  nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
  nvmlReturn_t (*set_create)(nvmlEventSet_t *);
  nvmlReturn_t (*set_free)(nvmlEventSet_t);
  nvmlReturn_t (*reg_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
  nvmlReturn_t (*set_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
  nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
};

struct gt_nvml {
  void *lib;
  struct nvml_fns f;
  unsigned ndev;
  nvmlDevice_t dev[GT_NVML_MAX_DEV];
  char uuid[GT_NVML_MAX_DEV][96], name[GT_NVML_MAX_DEV][96];
  nvmlEventSet_t xids;                        /* NULL: no XID events */
  nvmlProcessInfo_t procs[GT_NVML_MAX_PROCS]; /* the sampler's */
  uint64_t interval_ns;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  struct gt_record q[GT_NVML_QUEUE];
  size_t nq;
  struct xid_event {
    uint64_t ts;
    unsigned dev, xid;
  } xq[GT_NVML_MAX_XIDS * 4]; /* XIDs for the drain loop (a METRIC and a NOTE each) */
  size_t nxq;
  uint64_t overflow; /* readings the full queue could not take */
};

static void note(struct gt_sink *sink, uint64_t ts, const char *text) {
  gt_sink_note(sink, ts, 0, 0, text); /* not a process: the machine */
}

struct reading {
  unsigned metric;
  uint32_t pid; /* PROC_MEM */
  double v;
};

static void fill(struct gt_record *r, uint64_t ts, unsigned dev,
                 const struct reading *g) {
  memset(r, 0, sizeof *r);
  r->ts_ns = ts;
  r->pid = 0; /* not a process: the machine */
  r->kind = GT_KIND_METRIC;
  r->api = GT_API_gputrace_metric;
  r->nslots = 1;
  r->u.metric.device = dev;
  r->u.metric.metric = g->metric;
  r->u.metric.pid = g->pid;
  r->u.metric.value = g->v;
}

static void push(struct gt_nvml *n, uint64_t ts, unsigned dev, const struct reading *g) {
  if (n->nq == GT_NVML_QUEUE) {
    n->overflow++;
    return;
  }
  fill(&n->q[n->nq++], ts, dev, g);
}

/* Total and used memory as nvidia-smi shows them: _v2 reports what the
 * driver reserves for itself apart (615 MiB of an H200 on driver 580), where
 * the first function counts it as used (docs/gpu-validation.md); drivers
 * before 510 have only that one. */
static int memory_info(struct gt_nvml *n, nvmlDevice_t h, nvmlMemory_t *m) {
  nvmlMemory_v2_t v2 = {.version = NVML_MEMORY_V2};
  if (n->f.mem_v2 && n->f.mem_v2(h, &v2) == 0) {
    *m = (nvmlMemory_t){.total = v2.total, .free = v2.free, .used = v2.used};
    return 0;
  }
  return n->f.mem(h, m);
}

#define GOT(m, x) (got[k++] = (struct reading){(m), 0, (double)(x)})

/* The readings of one device, in the order a reader needs (the total before
 * the memory used, the slowdown threshold before the temperature): k. */
static int read_basic(struct gt_nvml *n, nvmlDevice_t h, struct reading *got) {
  int k = 0;
  nvmlUtilization_t u;
  nvmlMemory_t m;
  unsigned int x;
  if (n->f.util(h, &u) == 0) {
    GOT(GT_METRIC_GPU_UTIL, u.gpu);
    GOT(GT_METRIC_MEM_UTIL, u.memory);
  }
  if (memory_info(n, h, &m) == 0) {
    GOT(GT_METRIC_MEM_TOTAL, m.total);
    GOT(GT_METRIC_MEM_USED, m.used);
  }
  if (n->f.temp_threshold &&
      n->f.temp_threshold(h, 1 /* NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */, &x) == 0)
    GOT(GT_METRIC_TEMP_SLOWDOWN, x);
  if (n->f.temp(h, 0 /* NVML_TEMPERATURE_GPU */, &x) == 0)
    GOT(GT_METRIC_TEMP, x);
  if (n->f.power(h, &x) == 0)
    GOT(GT_METRIC_POWER, x / 1000.0);
  if (n->f.power_limit(h, &x) == 0)
    GOT(GT_METRIC_POWER_LIMIT, x / 1000.0);
  if (n->f.clock(h, 1 /* NVML_CLOCK_SM */, &x) == 0)
    GOT(GT_METRIC_SM_CLOCK, x);
  if (n->f.clock(h, 2 /* NVML_CLOCK_MEM */, &x) == 0)
    GOT(GT_METRIC_MEM_CLOCK, x);
  if (n->f.pcie(h, 0 /* NVML_PCIE_UTIL_TX_BYTES */, &x) == 0)
    GOT(GT_METRIC_PCIE_TX, x * 1024.0);
  if (n->f.pcie(h, 1 /* NVML_PCIE_UTIL_RX_BYTES */, &x) == 0)
    GOT(GT_METRIC_PCIE_RX, x * 1024.0);
  return k;
}

/* Health readings after the others: clock events, volatile ECC counts, the
 * compute processes (a count, then each one's memory; only the count past
 * GT_NVML_MAX_PROCS): k, at most 4 + GT_NVML_MAX_PROCS. */
static int read_health(struct gt_nvml *n, nvmlDevice_t h, struct reading *got) {
  int k = 0;
  unsigned long long v;
  if (n->f.clock_events && n->f.clock_events(h, &v) == 0)
    GOT(GT_METRIC_CLOCK_EVENTS, v);
  /* NVML_MEMORY_ERROR_TYPE_CORRECTED 0, UNCORRECTED 1; NVML_VOLATILE_ECC 0 */
  if (n->f.ecc && n->f.ecc(h, 0, 0, &v) == 0)
    GOT(GT_METRIC_ECC_CORRECTED, v);
  if (n->f.ecc && n->f.ecc(h, 1, 0, &v) == 0)
    GOT(GT_METRIC_ECC_UNCORRECTED, v);
  unsigned int np = GT_NVML_MAX_PROCS;
  nvmlReturn_t rc = n->f.procs ? n->f.procs(h, &np, n->procs) : -1;
  if (rc == 7 /* NVML_ERROR_INSUFFICIENT_SIZE: more than we read */)
    GOT(GT_METRIC_PROCS, np);
  if (rc == 0) {
    GOT(GT_METRIC_PROCS, np);
    for (unsigned i = 0; i < np && i < GT_NVML_MAX_PROCS; i++)
      if (n->procs[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
        got[k++] = (struct reading){GT_METRIC_PROC_MEM, n->procs[i].pid,
                                    (double)n->procs[i].usedGpuMemory};
  }
  return k;
}
#undef GOT

/* XID events waiting in the set (a 0 ms wait: never blocks), queued for
 * the drain loop. */
static void poll_xids(struct gt_nvml *n) {
  struct xid_event got[GT_NVML_MAX_XIDS];
  nvmlEventData_t e;
  int k = 0;
  for (int i = 0; i < GT_NVML_MAX_XIDS && n->f.set_wait(n->xids, &e, 0) == 0; i++) {
    unsigned d = 0;
    while (d < n->ndev && n->dev[d] != e.device)
      d++;
    if ((e.eventType & NVML_EVENT_XID) && d < n->ndev)
      got[k++] = (struct xid_event){gt_now_ns(), d, (unsigned)e.eventData};
  }
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < k; i++)
    if (n->nxq < sizeof n->xq / sizeof n->xq[0])
      n->xq[n->nxq++] = got[i];
    else
      n->overflow++;
  pthread_mutex_unlock(&n->mu);
}

/* One sample of every device: readings are queued under the lock, the NVML
 * calls are made outside it. */
static void sample(struct gt_nvml *n) {
  for (unsigned d = 0; d < n->ndev; d++) {
    struct reading got[GT_METRIC_COUNT + GT_NVML_MAX_PROCS];
    uint64_t ts = gt_now_ns();
    int k = read_basic(n, n->dev[d], got);
    k += read_health(n, n->dev[d], got + k);
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < k; i++)
      push(n, ts, d, &got[i]);
    pthread_mutex_unlock(&n->mu);
  }
  if (n->xids)
    poll_xids(n);
}

static void *sampler(void *arg) {
  struct gt_nvml *n = arg;
  pthread_mutex_lock(&n->mu);
  while (!n->stop) {
    pthread_mutex_unlock(&n->mu);
    sample(n);
    pthread_mutex_lock(&n->mu);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + n->interval_ns;
    until.tv_sec += (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    while (!n->stop && pthread_cond_timedwait(&n->cv, &n->mu, &until) != ETIMEDOUT)
      ;
  }
  pthread_mutex_unlock(&n->mu);
  return NULL;
}

static int resolve(struct gt_nvml *n) {
#define SYM(field, name)                                                                 \
  if (!(*(void **)&n->f.field = dlsym(n->lib, name)))                                    \
    return -1;
  SYM(init, "nvmlInit_v2")
  SYM(shutdown, "nvmlShutdown")
  SYM(count, "nvmlDeviceGetCount_v2")
  SYM(handle, "nvmlDeviceGetHandleByIndex_v2")
  SYM(util, "nvmlDeviceGetUtilizationRates")
  SYM(mem, "nvmlDeviceGetMemoryInfo")
  SYM(temp, "nvmlDeviceGetTemperature")
  SYM(power, "nvmlDeviceGetPowerUsage")
  SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit")
  SYM(clock, "nvmlDeviceGetClockInfo")
  SYM(pcie, "nvmlDeviceGetPcieThroughput")
#undef SYM
#define OPT(field, name) *(void **)&n->f.field = dlsym(n->lib, name);
  OPT(temp_threshold, "nvmlDeviceGetTemperatureThreshold")
  OPT(mem_v2, "nvmlDeviceGetMemoryInfo_v2")
  OPT(clock_events, "nvmlDeviceGetCurrentClocksEventReasons")
  if (!n->f.clock_events) /* drivers before 535 */
    OPT(clock_events, "nvmlDeviceGetCurrentClocksThrottleReasons")
  OPT(ecc, "nvmlDeviceGetTotalEccErrors")
  OPT(procs, "nvmlDeviceGetComputeRunningProcesses_v3")
  if (!n->f.procs) /* same struct, drivers before 510 */
    OPT(procs, "nvmlDeviceGetComputeRunningProcesses_v2")
  OPT(set_create, "nvmlEventSetCreate")
  OPT(set_free, "nvmlEventSetFree")
  OPT(reg_events, "nvmlDeviceRegisterEvents")
  OPT(set_wait, "nvmlEventSetWait_v2")
  OPT(uuid, "nvmlDeviceGetUUID")
  OPT(name, "nvmlDeviceGetName")
#undef OPT
  return 0;
}

/* Names, UUIDs and an XID event set with every device that takes it. */
static void identify(struct gt_nvml *n) {
  for (unsigned d = 0; d < n->ndev; d++) {
    if (!n->f.uuid || n->f.uuid(n->dev[d], n->uuid[d], sizeof n->uuid[d]) != 0)
      n->uuid[d][0] = '\0';
    if (!n->f.name || n->f.name(n->dev[d], n->name[d], sizeof n->name[d]) != 0)
      n->name[d][0] = '\0';
    n->uuid[d][sizeof n->uuid[d] - 1] = n->name[d][sizeof n->name[d] - 1] = '\0';
  }
  if (!n->f.set_create || !n->f.set_free || !n->f.reg_events || !n->f.set_wait ||
      n->f.set_create(&n->xids) != 0) {
    n->xids = NULL;
    return;
  }
  int any = 0;
  for (unsigned d = 0; d < n->ndev; d++) /* NOT_SUPPORTED on some: skip them */
    any |= n->f.reg_events(n->dev[d], NVML_EVENT_XID, n->xids) == 0;
  if (!any) {
    n->f.set_free(n->xids);
    n->xids = NULL;
  }
}

int gt_nvml_device(const struct gt_nvml *n, unsigned dev, const char **uuid,
                   const char **name) {
  if (!n || dev >= n->ndev)
    return 0;
  *uuid = n->uuid[dev];
  *name = n->name[dev];
  return 1;
}

static uint64_t interval_ns(void) {
  return gt_knob(GT_KNOB_NVML_MS) * 1000000ull; /* 10 ms .. 1 h, default 500 */
}

struct gt_nvml *gt_nvml_start(struct gt_sink *sink) {
  struct gt_nvml *n = calloc(1, sizeof *n);
  if (!n)
    return NULL;
  const char *why = "nvml unavailable";
  n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n->lib || resolve(n) != 0 || n->f.init() != 0)
    goto unavailable;
  unsigned cnt = 0;
  if (n->f.count(&cnt) != 0 || cnt == 0) {
    n->f.shutdown();
    goto unavailable;
  }
  for (unsigned i = 0; i < cnt && n->ndev < GT_NVML_MAX_DEV; i++)
    if (n->f.handle(i, &n->dev[n->ndev]) == 0)
      n->ndev++;
  identify(n);
  n->interval_ns = interval_ns();
  pthread_mutex_init(&n->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&n->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&n->thread, NULL, sampler, n) != 0) {
    pthread_cond_destroy(&n->cv);
    pthread_mutex_destroy(&n->mu);
    if (n->xids)
      n->f.set_free(n->xids);
    n->f.shutdown();
    goto unavailable;
  }
  return n;
unavailable:
  note(sink, gt_now_ns(), why);
  if (n->lib)
    dlclose(n->lib);
  free(n);
  return NULL;
}

void gt_nvml_take(struct gt_nvml *n, struct gt_sink *sink, int wait) {
  if (!n)
    return;
  if (wait)
    pthread_mutex_lock(&n->mu);
  else if (pthread_mutex_trylock(&n->mu) != 0)
    return;
  for (size_t i = 0; i < n->nq; i++)
    gt_sink_put(sink, &n->q[i]);
  n->nq = 0;
  for (size_t i = 0; i < n->nxq; i++) {
    const struct xid_event *e = &n->xq[i];
    struct gt_record r;
    fill(&r, e->ts, e->dev, &(struct reading){GT_METRIC_XID, 0, e->xid});
    gt_sink_put(sink, &r);
    char text[64];
    snprintf(text, sizeof text, "xid %u on GPU %u", e->xid, e->dev);
    note(sink, e->ts, text);
  }
  n->nxq = 0;
  pthread_mutex_unlock(&n->mu);
}

void gt_nvml_stop(struct gt_nvml *n, struct gt_sink *sink) {
  if (!n)
    return;
  pthread_mutex_lock(&n->mu);
  n->stop = 1;
  pthread_cond_signal(&n->cv);
  pthread_mutex_unlock(&n->mu);
  pthread_join(n->thread, NULL);
  gt_nvml_take(n, sink, 1);
  if (n->xids)
    n->f.set_free(n->xids);
  n->f.shutdown();
  pthread_cond_destroy(&n->cv);
  pthread_mutex_destroy(&n->mu);
  dlclose(n->lib);
  free(n);
}
