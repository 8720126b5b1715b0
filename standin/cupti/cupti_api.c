/* cupti_api.c — the stand-in libcupti.so.13's entry points other than the
 * record buffers (cupti_records.c): version, result strings, timestamps,
 * subscription, activity kinds, per-API collection, external correlation,
 * callback names and graph ids (docs/standin.md, "The CUPTI stand-in").
 *
 * Contract:
 *  - Built against the toolkit's cupti.h: every signature, enum value and
 *    record layout is the header's (the sizes are asserted in
 *    cupti_records.c); the exports are a subset of the real library's
 *    (standin/tests/check_cupti_abi.sh).
 *  - Without a stand-in timeline (no stand-in runtime loaded, or its
 *    timeline off) every call the real 13.0 library fails without a driver
 *    fails the same way (CUPTI_ERROR_UNKNOWN: subscribe, enable, push/pop,
 *    flush); version, timestamps, result strings, callback names and
 *    buffer callback registration work, as they do there.
 *  - One subscriber: a second cuptiSubscribe is
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED. Subscribers' callbacks
 *    are never called (the callback API is not simulated).
 *  - Timestamps: CLOCK_REALTIME ns, or the registered timestamp callback's
 *    values; device times (CLOCK_MONOTONIC in the runtime) are converted at
 *    the time they are written, the callback's by a line through its value
 *    at registration and now (so a callback in TSC ticks scales them).
 *  - External correlation: a stack per thread and per kind (depth 64).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_int.h"

struct cs_state cs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static __thread uint64_t tls_ext[CS_EXT_KINDS][CS_EXT_DEPTH];
static __thread uint32_t tls_ext_n[CS_EXT_KINDS];

/* ---- the runtime's callback ids (generated from cupti_runtime_cbid.h) ---- */

struct cs_cbid {
  const char *name; /* with its _vNNNN suffix, as cuptiGetCallbackName */
  int id;
};
static const struct cs_cbid cs_cbids[] = {
#include "cupti_cbids.inc"
};
#define CS_NCBIDS (sizeof cs_cbids / sizeof cs_cbids[0])

/* The highest-versioned cbid whose name is api + "_v<digits>"; 0 if none.
 * The runtime passes string literals: a per-thread cache by address. */
static int lookup_cbid(const char *api);

int cs_runtime_cbid(const char *api) {
  static __thread struct {
    const char *api;
    int cbid;
  } cache[16];
  unsigned h = (unsigned)(((uintptr_t)api >> 3) * 2654435761u) % 16;
  if (cache[h].api != api) {
    cache[h].cbid = lookup_cbid(api);
    cache[h].api = api;
  }
  return cache[h].cbid;
}

static int lookup_cbid(const char *api) {
  size_t n = strlen(api);
  int best = 0;
  for (size_t i = 0; i < CS_NCBIDS; i++) {
    const char *c = cs_cbids[i].name;
    if (strncmp(c, api, n) == 0 && c[n] == '_' && c[n + 1] == 'v' && c[n + 2] >= '0' &&
        c[n + 2] <= '9' && cs_cbids[i].id > best)
      best = cs_cbids[i].id;
  }
  return best;
}

int cs_api_collected(int cbid) {
  uint8_t o =
      cs.rt_api && cbid > 0 && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? cs.rt_api[cbid] : 0;
  return o == 1 || (o == 0 && cs.kind_on[CUPTI_ACTIVITY_KIND_RUNTIME]);
}

CS_API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                        const char **name) {
  if (name == NULL || domain != CUPTI_CB_DOMAIN_RUNTIME_API)
    return CUPTI_ERROR_INVALID_PARAMETER; /* only the runtime's names are known */
  if (cbid == 0) {
    *name = "INVALID";
    return CUPTI_SUCCESS;
  }
  for (size_t i = 0; i < CS_NCBIDS; i++)
    if (cs_cbids[i].id == (int)cbid) {
      *name = cs_cbids[i].name;
      return CUPTI_SUCCESS;
    }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- attaching to the stand-in runtime's timeline ---- */

static int find_cudart(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  const char *slash = strrchr(info->dlpi_name, '/');
  const char *base = slash ? slash + 1 : info->dlpi_name;
  if (strncmp(base, "libcudart.so", 12) != 0)
    return 0;
  *(void **)arg = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  return *(void **)arg != NULL;
}

/* cs.mu held. The runtime's table for SI_CUPTI_UUID, if the process has
 * the stand-in runtime with its timeline on. */
static void attach_locked(void) {
  if (cs.attach_state != 0)
    return;
  void *h = NULL;
  dl_iterate_phdr(find_cudart, &h);
  cudaError_t (*get)(const void **, const cudaUUID_t *) = NULL;
  if (h != NULL)
    *(void **)&get = dlsym(h, "cudaGetExportTable");
  const void *t = NULL;
  cudaUUID_t uuid;
  memcpy(uuid.bytes, SI_CUPTI_UUID, sizeof uuid.bytes);
  if (get == NULL || get(&t, &uuid) != cudaSuccess || t == NULL ||
      ((const struct si_cupti_table *)t)->size < sizeof(struct si_cupti_table) ||
      ((const struct si_cupti_table *)t)->attach(&cs_client) != 0) {
    return; /* not yet: a runtime loaded later may have one */
  }
  cs.table = t;
  cs.rt_api = calloc(CUPTI_RUNTIME_TRACE_CBID_SIZE, 1);
  cs.attach_state = cs.rt_api ? 1 : -1;
}

int cs_attached(void) {
  pthread_mutex_lock(&cs.mu);
  attach_locked();
  int a = cs.attach_state == 1;
  pthread_mutex_unlock(&cs.mu);
  return a;
}

__attribute__((constructor)) static void cs_load(void) {
  cs_knobs_load();
  if (cs.knobs.nsys)
    cs.subscribed = 1; /* as Nsight Systems' injection does at load */
}

/* ---- version, results, timestamps ---- */

CS_API CUptiResult cuptiGetVersion(uint32_t *version) {
  if (version == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiGetResultString(CUptiResult result, const char **str) {
  static const struct {
    CUptiResult r;
    const char *s;
  } names[] = {
      {CUPTI_SUCCESS, "CUPTI_SUCCESS"},
      {CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER"},
      {CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION"},
      {CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED"},
      {CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED"},
      {CUPTI_ERROR_QUEUE_EMPTY, "CUPTI_ERROR_QUEUE_EMPTY"},
      {CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND"},
      {CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED"},
      {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
       "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
      {CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN"},
  };
  if (str == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].r == result) {
      *str = names[i].s;
      return CUPTI_SUCCESS;
    }
  *str = NULL;
  return CUPTI_ERROR_INVALID_PARAMETER;
}

static uint64_t clock_ns(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The clock step knob moves CLOCK_REALTIME as settimeofday would. */
static int64_t realtime_step(void) {
  return cs.knobs.clock_step_at &&
                 __atomic_load_n(&cs.device_records, __ATOMIC_RELAXED) >=
                     cs.knobs.clock_step_at
             ? cs.knobs.clock_step_ns
             : 0;
}

uint64_t cs_host_now(void) {
  CUpti_TimestampCallbackFunc cb = __atomic_load_n(&cs.ts_cb, __ATOMIC_ACQUIRE);
  if (cb != NULL)
    return cb();
  return clock_ns(CLOCK_REALTIME) + (uint64_t)realtime_step();
}

void cs_device_ts(uint64_t mono_start, uint64_t mono_end, uint64_t *start,
                  uint64_t *end) {
  uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
  CUpti_TimestampCallbackFunc cb = __atomic_load_n(&cs.ts_cb, __ATOMIC_ACQUIRE);
  if (cb == NULL) {
    uint64_t off = clock_ns(CLOCK_REALTIME) + (uint64_t)realtime_step() - m1;
    *start = mono_start + off;
    *end = mono_end + off;
    return;
  }
  uint64_t c1 = 0, best = UINT64_MAX;
  for (int i = 0; i < 3; i++) { /* the tightest bracket: a preemption between reads */
    uint64_t a = clock_ns(CLOCK_MONOTONIC), c = cb(), b = clock_ns(CLOCK_MONOTONIC);
    if (b - a < best) {
      best = b - a;
      m1 = a + (b - a) / 2;
      c1 = c;
    }
  }
  double slope = 1.0;
  if (m1 > cs.ts_m0 + 1000000)
    slope = (double)(c1 - cs.ts_c0) / (double)(m1 - cs.ts_m0);
  *start = (uint64_t)((double)c1 + ((double)mono_start - (double)m1) * slope);
  *end = (uint64_t)((double)c1 + ((double)mono_end - (double)m1) * slope);
}

CS_API CUptiResult cuptiGetTimestamp(uint64_t *timestamp) {
  if (timestamp == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  static uint32_t calls;
  if (cs.knobs.stall_every != 0 &&
      __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) % cs.knobs.stall_every == 0) {
    struct timespec stall = {0, 5000000}; /* the caller preempted, as on a loaded host */
    nanosleep(&stall, NULL);
  }
  *timestamp = cs_host_now();
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  if (f == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&cs.mu);
  uint64_t a = clock_ns(CLOCK_MONOTONIC);
  cs.ts_c0 = f();
  cs.ts_m0 = a + (clock_ns(CLOCK_MONOTONIC) - a) / 2;
  __atomic_store_n(&cs.ts_cb, f, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

/* ---- subscription ---- */

static char cs_subscriber; /* the one handle */

CS_API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                  CUpti_CallbackFunc callback, void *userdata) {
  (void)callback, (void)userdata;
  if (subscriber == NULL)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  pthread_mutex_lock(&cs.mu);
  CUptiResult r =
      cs.subscribed ? CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED : CUPTI_SUCCESS;
  if (r == CUPTI_SUCCESS) {
    cs.subscribed = 1;
    *subscriber = (CUpti_SubscriberHandle)&cs_subscriber;
  }
  pthread_mutex_unlock(&cs.mu);
  return r;
}

CS_API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  if (subscriber != (CUpti_SubscriberHandle)&cs_subscriber)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&cs.mu);
  cs.subscribed = cs.knobs.nsys; /* nsys' own subscription stays */
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiFinalize(void) {
  if (cs_attached())
    cs_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&cs.mu);
  memset(cs.kind_on, 0, sizeof cs.kind_on);
  if (cs.rt_api)
    memset(cs.rt_api, 0, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  cs.request = NULL;
  cs.complete = NULL;
  __atomic_store_n(&cs.ts_cb, NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

/* ---- activity kinds ---- */

static int simulated(CUpti_ActivityKind k) {
  return k == CUPTI_ACTIVITY_KIND_MEMCPY || k == CUPTI_ACTIVITY_KIND_MEMSET ||
         k == CUPTI_ACTIVITY_KIND_KERNEL || k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
         k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER ||
         k == CUPTI_ACTIVITY_KIND_MEMCPY2 ||
         k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on) {
  if ((int)kind <= 0 || (int)kind >= CS_KINDS)
    return CUPTI_ERROR_INVALID_KIND;
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  if (!simulated(kind))
    return CUPTI_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&cs.mu);
  cs.kind_on[kind] = (uint8_t)on;
  if (on)
    cs_start_worker_locked();
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  return set_kind(kind, 1);
}

CS_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  return set_kind(kind, 0);
}

CS_API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&cs.mu);
  cs.rt_api[cbid] = enable ? 1 : 2;
  if (enable)
    cs_start_worker_locked();
  pthread_mutex_unlock(&cs.mu);
  return CUPTI_SUCCESS;
}

/* Driver API records are not simulated: the call is accepted, nothing
 * comes of it (docs/standin.md). */
CS_API CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  (void)enable;
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  return cbid == 0 || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE ? CUPTI_ERROR_INVALID_PARAMETER
                                                           : CUPTI_SUCCESS;
}

/* ---- external correlation ---- */

static int ext_kind_ok(CUpti_ExternalCorrelationKind k) {
  return k > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && k < CS_EXT_KINDS;
}

CS_API CUptiResult
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  if (!ext_kind_ok(kind))
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (tls_ext_n[kind] == CS_EXT_DEPTH)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  tls_ext[kind][tls_ext_n[kind]++] = id;
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiActivityPopExternalCorrelationId(
    CUpti_ExternalCorrelationKind kind, uint64_t *lastId) {
  if (!cs_attached())
    return CUPTI_ERROR_UNKNOWN;
  if (!ext_kind_ok(kind))
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (tls_ext_n[kind] == 0)
    return CUPTI_ERROR_QUEUE_EMPTY;
  uint64_t id = tls_ext[kind][--tls_ext_n[kind]];
  if (lastId != NULL)
    *lastId = id;
  return CUPTI_SUCCESS;
}

void cs_ext_tops(uint64_t ids[CS_EXT_KINDS]) {
  for (int k = 0; k < CS_EXT_KINDS; k++)
    ids[k] = tls_ext_n[k] ? tls_ext[k][tls_ext_n[k] - 1] : 0;
}

/* ---- graph ids ---- */

CS_API CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId) {
  if (nodeId == NULL || !cs_attached())
    return nodeId == NULL ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_ERROR_UNKNOWN;
  uint64_t id = cs.table->node_id(node);
  if (id == 0)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *nodeId = id;
  return CUPTI_SUCCESS;
}

CS_API CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *pId) {
  if (pId == NULL || !cs_attached())
    return pId == NULL ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_ERROR_UNKNOWN;
  uint32_t id = cs.table->graph_id(graph);
  if (id == 0)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *pId = id;
  return CUPTI_SUCCESS;
}
