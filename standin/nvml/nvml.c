/* nvml.c — CPU stand-in for libnvidia-ml.so.1 (docs/standin.md, "NVML").
 *
 * Implements only the calls gputrace-collector makes, with readings taken
 * from a script so tests know every value exactly:
 *
 *   GPUTRACE_STANDIN_NVML_SCRIPT=FILE   one line per sample of one device:
 *     DEV GPU% MEM% MEM_USED MEM_TOTAL TEMP_C POWER_MW LIMIT_MW SM_MHZ MEM_MHZ
 *         PCIE_TX_KBPS PCIE_RX_KBPS SLOWDOWN_C [CLOCK_EVENT_MASK ECC_CORRECTED
 *         ECC_UNCORRECTED]
 *   '-' (or a missing trailing field) for a reading the device "does not
 *   support" (NVML_ERROR_NOT_SUPPORTED); '#' starts a comment. The device count is the
 * largest DEV + 1. A device's sample advances on each nvmlDeviceGetUtilizationRates call
 * (the first call of each of the collector's samples); after its last line the last one
 * repeats.
 *
 *   GPUTRACE_STANDIN_NVML_PROCS=DEV:PID:BYTES[,...]   the compute processes
 *     nvmlDeviceGetComputeRunningProcesses_v3 lists (none without it).
 *   GPUTRACE_STANDIN_NVML_XID=DEV:XID@SAMPLE[,...]   an XID critical-error
 *     event of device DEV, delivered once by nvmlEventSetWait_v2 (to a set
 *     the device is registered in) once DEV has taken sample SAMPLE
 *     (0-based; a repeated last line counts). Without pending events the wait returns
 * NVML_ERROR_TIMEOUT at once, whatever its timeout. Device DEV is named "gputrace
 * stand-in GPU DEV", its UUID is GPU-00000000-0000-0000-0000-DEV (DEV in 12 digits).
 *
 * Without the variable (or with an unreadable file) nvmlInit_v2 fails with
 * NVML_ERROR_LIBRARY_NOT_FOUND, as on a machine without the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};
typedef struct si_nvml_dev *nvmlDevice_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2 ((unsigned)sizeof(nvmlMemory_v2_t) | 2u << 24)

#define SI_MAX_DEV 16
#define SI_MAX_SAMPLES 4096
#define SI_FIELDS 15
#define SI_MAX_EVENTS 64
#define SI_MAX_PROCS 64

struct si_nvml_dev {
  int nsamples, cur, started;
  long taken; /* samples taken (nvmlDeviceGetUtilizationRates calls) */
  long long v[SI_MAX_SAMPLES][SI_FIELDS]; /* -1: not supported */
};

static struct si_nvml_dev devs[SI_MAX_DEV];
static unsigned ndev;
static int inited;

static int load(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  memset(devs, 0, sizeof devs);
  ndev = 0;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok)
      continue;
    long d = strtol(tok, NULL, 10);
    if (d < 0 || d >= SI_MAX_DEV)
      continue;
    struct si_nvml_dev *dv = &devs[d];
    if (dv->nsamples == SI_MAX_SAMPLES)
      continue;
    long long *v = dv->v[dv->nsamples++];
    for (int i = 0; i < SI_FIELDS; i++) {
      tok = strtok_r(NULL, " \t\r\n", &save);
      v[i] = !tok || !strcmp(tok, "-") ? -1 : strtoll(tok, NULL, 10);
    }
    if ((unsigned)d + 1 > ndev)
      ndev = (unsigned)d + 1;
  }
  fclose(f);
  return 0;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  const char *s = getenv("GPUTRACE_STANDIN_NVML_SCRIPT");
  if (!s || !*s || load(s) != 0)
    return NVML_ERROR_LIBRARY_NOT_FOUND;
  inited = 1;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!inited)
    return NVML_ERROR_UNINITIALIZED;
  inited = 0;
  return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
  case NVML_SUCCESS:
    return "Success";
  case NVML_ERROR_UNINITIALIZED:
    return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT:
    return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED:
    return "Not Supported";
  case NVML_ERROR_LIBRARY_NOT_FOUND:
    return "NVML Shared Library Not Found";
  default:
    return "Unknown Error";
  }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  if (!inited)
    return NVML_ERROR_UNINITIALIZED;
  if (!count)
    return NVML_ERROR_INVALID_ARGUMENT;
  *count = ndev;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev) {
  if (!inited)
    return NVML_ERROR_UNINITIALIZED;
  if (index >= ndev || !dev)
    return NVML_ERROR_INVALID_ARGUMENT;
  *dev = &devs[index];
  return NVML_SUCCESS;
}

/* The current sample's field i, or -1. */
static long long field(nvmlDevice_t d, int i) {
  if (!d || d->nsamples == 0)
    return -1;
  return d->v[d->cur][i];
}

#define CHECK(d, out)                                                                    \
  do {                                                                                   \
    if (!inited)                                                                         \
      return NVML_ERROR_UNINITIALIZED;                                                   \
    if (!(d) || !(out))                                                                  \
      return NVML_ERROR_INVALID_ARGUMENT;                                                \
  } while (0)

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
  CHECK(d, u);
  if (d->started && d->cur + 1 < d->nsamples)
    d->cur++;
  d->started = 1;
  d->taken++;
  long long g = field(d, 0), m = field(d, 1);
  if (g < 0 || m < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = (unsigned)g;
  u->memory = (unsigned)m;
  return NVML_SUCCESS;
}

/* What the driver keeps for itself: 1/256 of the total here (615 MiB of an
 * H200's 143,771 MiB on driver 580). The first function counts it as used,
 * as a real driver does; _v2 (and nvidia-smi) report it apart, and used is
 * the script's MEM_USED. */
static unsigned long long reserved_of(unsigned long long total) {
  return total / 256;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
  CHECK(d, m);
  long long used = field(d, 2), total = field(d, 3);
  if (used < 0 || total < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  m->total = (unsigned long long)total;
  m->used = (unsigned long long)used + reserved_of(m->total);
  if (m->used > m->total)
    m->used = m->total;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
  CHECK(d, m);
  if (m->version != NVML_MEMORY_V2)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  long long used = field(d, 2), total = field(d, 3);
  if (used < 0 || total < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  m->total = (unsigned long long)total;
  m->reserved = reserved_of(m->total);
  m->used = (unsigned long long)used;
  unsigned long long taken = m->used + m->reserved;
  m->free = m->total > taken ? m->total - taken : 0;
  return NVML_SUCCESS;
}

static nvmlReturn_t uint_field(nvmlDevice_t d, unsigned int *out, int i) {
  CHECK(d, out);
  long long v = field(d, i);
  if (v < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *out = (unsigned)v;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
                                             unsigned int *t) {
  if (sensor != 0) /* NVML_TEMPERATURE_GPU */
    return NVML_ERROR_INVALID_ARGUMENT;
  return uint_field(d, t, 4);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int type,
                                                      unsigned int *t) {
  if (type != 1) /* NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */
    return NVML_ERROR_NOT_SUPPORTED;
  return uint_field(d, t, 11);
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
  return uint_field(d, mw, 5);
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw) {
  return uint_field(d, mw, 6);
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
  if (type == 1) /* NVML_CLOCK_SM */
    return uint_field(d, mhz, 7);
  if (type == 2) /* NVML_CLOCK_MEM */
    return uint_field(d, mhz, 8);
  return NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter,
                                                unsigned int *kbps) {
  if (counter == 0) /* NVML_PCIE_UTIL_TX_BYTES */
    return uint_field(d, kbps, 9);
  if (counter == 1) /* NVML_PCIE_UTIL_RX_BYTES */
    return uint_field(d, kbps, 10);
  return NVML_ERROR_INVALID_ARGUMENT;
}

/* ---- health: clock events, ECC, processes, XID events, identity ---- */

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                           unsigned long long *mask) {
  CHECK(d, mask);
  long long v = field(d, 12);
  if (v < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *mask = (unsigned long long)v;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                              unsigned long long *mask) {
  return nvmlDeviceGetCurrentClocksEventReasons(d, mask);
}

/* type: 0 NVML_MEMORY_ERROR_TYPE_CORRECTED, 1 UNCORRECTED; counter: 0
 * NVML_VOLATILE_ECC (the only one scripted). */
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                                unsigned long long *count) {
  CHECK(d, count);
  if ((type != 0 && type != 1) || counter != 0)
    return NVML_ERROR_NOT_SUPPORTED;
  long long v = field(d, type == 0 ? 13 : 14);
  if (v < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  *count = (unsigned long long)v;
  return NVML_SUCCESS;
}

typedef struct { /* nvmlProcessInfo_t of the _v3 (and _v2) ABI */
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

/* The next DEV:A:B[@C] item of a comma-separated list; 1 while one is left. */
static int next_item(const char **s, long long v[4], char sep2) {
  while (**s == ',' || **s == ' ')
    (*s)++;
  if (!**s)
    return 0;
  char *end;
  for (int i = 0; i < 3; i++) {
    v[i] = strtoll(*s, &end, 10);
    *s = end;
    if (i < 2 && **s != (i == 0 ? ':' : sep2))
      break;
    if (i < 2)
      (*s)++;
  }
  while (**s && **s != ',')
    (*s)++;
  return 1;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
                                                            unsigned int *count,
                                                            nvmlProcessInfo_t *infos) {
  CHECK(d, count);
  const char *s = getenv("GPUTRACE_STANDIN_NVML_PROCS");
  long long v[4] = {0};
  unsigned n = 0;
  for (; s && next_item(&s, v, ':');)
    if (v[0] == d - devs) {
      if (infos && n < *count)
        infos[n] =
            (nvmlProcessInfo_t){(unsigned)v[1], (unsigned long long)v[2], ~0u, ~0u};
      n++;
    }
  nvmlReturn_t r = n > *count ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
  *count = n;
  return r;
}

typedef struct si_nvml_set *nvmlEventSet_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
struct si_nvml_set {
  unsigned long long registered[SI_MAX_DEV];
  unsigned char delivered[SI_MAX_EVENTS];
};
#define SI_XID_EVENT 0x8ull /* nvmlEventTypeXidCriticalError */

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
  if (!inited)
    return NVML_ERROR_UNINITIALIZED;
  if (!set || !(*set = calloc(1, sizeof **set)))
    return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  free(set);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                             nvmlEventSet_t set) {
  CHECK(d, set);
  if (types & ~SI_XID_EVENT)
    return NVML_ERROR_NOT_SUPPORTED;
  set->registered[d - devs] |= types;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                        unsigned int timeout_ms) {
  (void)timeout_ms;
  CHECK(set, data);
  const char *s = getenv("GPUTRACE_STANDIN_NVML_XID");
  long long v[4] = {0};
  for (unsigned i = 0; s && i < SI_MAX_EVENTS && next_item(&s, v, '@'); i++) {
    if (v[0] < 0 || v[0] >= (long long)ndev || set->delivered[i])
      continue;
    struct si_nvml_dev *dv = &devs[v[0]];
    if (!(set->registered[v[0]] & SI_XID_EVENT) || dv->taken <= v[2])
      continue;
    set->delivered[i] = 1;
    *data = (nvmlEventData_t){dv, SI_XID_EVENT, (unsigned long long)v[1], ~0u, ~0u};
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

static nvmlReturn_t text(nvmlDevice_t d, char *out, unsigned len, const char *fmt) {
  CHECK(d, out);
  int n = snprintf(out, len, fmt, (int)(d - devs));
  return n < 0 || (unsigned)n >= len ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len) {
  return text(d, uuid, len, "GPU-00000000-0000-0000-0000-%012d");
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len) {
  return text(d, name, len, "gputrace stand-in GPU %d");
}
