/* nvml.c — hardware metrics from NVML (see collector.h).
 *
 * libnvidia-ml.so.1 is dlopen'ed when present: it is never a build or run
 * requirement, and the few types used are declared here. A sampling thread
 * reads every device each GPUTRACE_NVML_MS (default 500) milliseconds and
 * queues METRIC records; the drain loop takes them with a trylock between
 * passes, so a slow NVML call (they can take milliseconds on real
 * hardware) never holds up draining. A reading the device refuses is
 * skipped, never recorded as zero. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
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

#define GT_NVML_QUEUE 4096 /* readings waiting for the drain loop */
#define GT_NVML_MAX_DEV 64

struct nvml_fns {
  nvmlReturn_t (*init)(void);
  nvmlReturn_t (*shutdown)(void);
  nvmlReturn_t (*count)(unsigned int *);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
  nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
  nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
  nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int *);
  nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned int *); /* optional */
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
};

struct gt_nvml {
  void *lib;
  struct nvml_fns f;
  unsigned ndev;
  nvmlDevice_t dev[GT_NVML_MAX_DEV];
  uint64_t interval_ns;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  struct gt_record q[GT_NVML_QUEUE];
  size_t nq;
  uint64_t overflow; /* readings the full queue could not take */
};

static void note(struct gt_sink *sink, const char *text) {
  struct gt_record rec[GT_MAX_SLOTS];
  memset(rec, 0, sizeof rec);
  rec[0].ts_ns = gt_now_ns();
  rec[0].pid = 0; /* not a process: the machine */
  rec[0].kind = GT_KIND_NOTE;
  rec[0].api = GT_API_gputrace_note;
  gt_record_attach_text(&rec[0], text, strlen(text));
  gt_sink_put(sink, &rec[0]);
}

static void push(struct gt_nvml *n, uint64_t ts, unsigned dev, unsigned metric,
                 double v) {
  if (n->nq == GT_NVML_QUEUE) {
    n->overflow++;
    return;
  }
  struct gt_record *r = &n->q[n->nq++];
  memset(r, 0, sizeof *r);
  r->ts_ns = ts;
  r->pid = 0; /* not a process: the machine */
  r->kind = GT_KIND_METRIC;
  r->api = GT_API_gputrace_metric;
  r->nslots = 1;
  r->u.metric.device = dev;
  r->u.metric.metric = metric;
  r->u.metric.value = v;
}

/* One sample of every device, in the order a reader needs (the total before
 * the memory used, the slowdown threshold before the temperature); readings are queued
 * under the lock, the NVML calls are made outside it. */
static void sample(struct gt_nvml *n) {
  for (unsigned d = 0; d < n->ndev; d++) {
    struct {
      unsigned metric;
      double v;
    } got[GT_METRIC_COUNT];
    int k = 0;
    uint64_t ts = gt_now_ns();
    nvmlDevice_t h = n->dev[d];
    nvmlUtilization_t u;
    nvmlMemory_t m;
    unsigned int x;
    if (n->f.util(h, &u) == 0) {
      got[k].metric = GT_METRIC_GPU_UTIL, got[k++].v = u.gpu;
      got[k].metric = GT_METRIC_MEM_UTIL, got[k++].v = u.memory;
    }
    if (n->f.mem(h, &m) == 0) {
      got[k].metric = GT_METRIC_MEM_TOTAL, got[k++].v = (double)m.total;
      got[k].metric = GT_METRIC_MEM_USED, got[k++].v = (double)m.used;
    }
    if (n->f.temp_threshold &&
        n->f.temp_threshold(h, 1 /* NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */, &x) == 0)
      got[k].metric = GT_METRIC_TEMP_SLOWDOWN, got[k++].v = x;
    if (n->f.temp(h, 0 /* NVML_TEMPERATURE_GPU */, &x) == 0)
      got[k].metric = GT_METRIC_TEMP, got[k++].v = x;
    if (n->f.power(h, &x) == 0)
      got[k].metric = GT_METRIC_POWER, got[k++].v = x / 1000.0;
    if (n->f.power_limit(h, &x) == 0)
      got[k].metric = GT_METRIC_POWER_LIMIT, got[k++].v = x / 1000.0;
    if (n->f.clock(h, 1 /* NVML_CLOCK_SM */, &x) == 0)
      got[k].metric = GT_METRIC_SM_CLOCK, got[k++].v = x;
    if (n->f.clock(h, 2 /* NVML_CLOCK_MEM */, &x) == 0)
      got[k].metric = GT_METRIC_MEM_CLOCK, got[k++].v = x;
    if (n->f.pcie(h, 0 /* NVML_PCIE_UTIL_TX_BYTES */, &x) == 0)
      got[k].metric = GT_METRIC_PCIE_TX, got[k++].v = x * 1024.0;
    if (n->f.pcie(h, 1 /* NVML_PCIE_UTIL_RX_BYTES */, &x) == 0)
      got[k].metric = GT_METRIC_PCIE_RX, got[k++].v = x * 1024.0;
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < k; i++)
      push(n, ts, d, got[i].metric, got[i].v);
    pthread_mutex_unlock(&n->mu);
  }
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
  *(void **)&n->f.temp_threshold = dlsym(n->lib, "nvmlDeviceGetTemperatureThreshold");
  return 0;
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
    n->f.shutdown();
    goto unavailable;
  }
  return n;
unavailable:
  note(sink, why);
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
  n->f.shutdown();
  pthread_cond_destroy(&n->cv);
  pthread_mutex_destroy(&n->mu);
  dlclose(n->lib);
  free(n);
}
