/* nvml.c — CPU stand-in for libnvidia-ml.so.1 (docs/standin.md, "NVML").
 *
 * Implements only the calls gputrace-collector makes, with readings taken
 * from a script so tests know every value exactly:
 *
 *   GPUTRACE_STANDIN_NVML_SCRIPT=FILE   one line per sample of one device:
 *     DEV GPU% MEM% MEM_USED MEM_TOTAL TEMP_C POWER_MW LIMIT_MW SM_MHZ MEM_MHZ
 *         PCIE_TX_KBPS PCIE_RX_KBPS SLOWDOWN_C
 *   '-' for a reading the device "does not support" (NVML_ERROR_NOT_SUPPORTED);
 *   '#' starts a comment. The device count is the largest DEV + 1. A device's
 *   sample advances on each nvmlDeviceGetUtilizationRates call (the first
 *   call of each of the collector's samples); after its last line the last
 *   one repeats.
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
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
};
typedef struct si_nvml_dev *nvmlDevice_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

#define SI_MAX_DEV 16
#define SI_MAX_SAMPLES 4096
#define SI_FIELDS 12

struct si_nvml_dev {
  int nsamples, cur, started;
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
  long long g = field(d, 0), m = field(d, 1);
  if (g < 0 || m < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = (unsigned)g;
  u->memory = (unsigned)m;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
  CHECK(d, m);
  long long used = field(d, 2), total = field(d, 3);
  if (used < 0 || total < 0)
    return NVML_ERROR_NOT_SUPPORTED;
  m->used = (unsigned long long)used;
  m->total = (unsigned long long)total;
  m->free = m->total > m->used ? m->total - m->used : 0;
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
