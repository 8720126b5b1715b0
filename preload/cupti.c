/* cupti.c — device times from the CUPTI activity API: the session (finding
 * libcupti, subscribing, the clock, what is enabled), the hooks' side, its
 * health and how it yields. Records are parsed in cupti_parse.c. Never a
 * build or run-time requirement: the CUPTI ABI used is cupti_abi.h.
 *
 * Checked on the stand-in libcupti (standin/cupti/, docs/standin.md), which
 * is as strict as the real 13.0 library where the shim depends on it; not
 * yet seen working on a GPU (docs/devtime.md).
 *
 * Contract:
 *  - gt_cupti_start (first timed call, g_select_mu held): cuptiGetVersion
 *    at least CUDA 12.0's; cuptiSubscribe first — refused, CUPTI belongs to
 *    another client (Nsight Systems, torch.profiler): nothing else is
 *    touched and *why names the client; then our timestamp callback
 *    (CLOCK_MONOTONIC: CUPTI's times are then the shim's clock) before any
 *    enable; buffer callbacks (cupti_parse.c: a preallocated pool); the
 *    kinds EXTERNAL_CORRELATION, CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET;
 *    API records only for the runtime and driver entry points the shim
 *    times (their cbids found by name with cuptiGetCallbackName), never the
 *    RUNTIME or DRIVER kind for every call of the process. Any failure
 *    undoes what was enabled, unsubscribes and returns -1 with *why; the
 *    tables and buffers stay allocated once CUPTI has our callbacks.
 *  - A timed call pushes its external id (a process-wide counter; kind
 *    CUSTOM2: CUSTOM0/1 are Kineto's) around the real call; its metadata
 *    goes to a slot (seqlock, no lock or allocation) at commit.
 *  - The resolver flushes every 20 ms (gt_cupti_flush) and at exit
 *    (forced). At each flush the clock is checked: cuptiGetTimestamp must
 *    read CLOCK_MONOTONIC (within 1 ms, and its rate within 0.1 % of ours
 *    since the first check, allowing for the time the reads took: a
 *    preempted resolver is not a replaced clock); otherwise another client
 *    replaced the timestamp callback.
 *  - gt_cupti_trouble: NULL while healthy; else why to stop: the clock
 *    check failed, or in the last 2 s window at least 64 timed calls were
 *    lost and none matched. The resolver then stops the session
 *    (gt_cupti_stop) and times with events, with one warning saying why.
 *  - gt_cupti_final_words (when the session stops, and at exit): one
 *    warning with CUPTI's own count of records it dropped, if any; at exit
 *    first the last parse (calls still waiting, or in flight at a stop,
 *    counted lost).
 *  - gt_cupti_stop: our kinds and API records are disabled only while the
 *    session is still ours (the clock intact, and not a session that
 *    delivered and then stopped: another client took the callbacks); then
 *    unsubscribe.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_int.h"
#include "devtime_int.h"
#include "transport.h"

struct cupti_api gt_cu;
struct cu_meta *g_cu_meta;
_Atomic uint64_t g_cu_next_id = 1;

#define CU_AGE_NS 2000000000ull    /* a call with no activity this long after: lost */
#define CU_WINDOW_NS 2000000000ull /* the health window */
#define CU_MAX_CBIDS 4096u
#define CU_MAX_APIS 512 /* timed entry points with API records, per domain */

static void *g_subscriber;
static int g_subscribed;
static int g_enabled[8], g_nenabled;
static uint16_t g_api_on[2]
                        [CU_MAX_APIS]; /* the runtime [1] and driver [0] cbids enabled */
static int g_napi[2];
static const char *g_trouble;
static int g_taken_over; /* another client replaced our clock or callbacks */
static uint64_t g_win_at, g_win_matched, g_win_lost;
static __thread uint64_t tls_ext_id __attribute__((tls_model("initial-exec")));

/* ---- the clock ---- */

static uint64_t CUPTI_mono(void) {
  return gt_mono_ns();
}

/* 1 when cuptiGetTimestamp reads our clock: within [before, after] (1 ms
 * slack), and at a rate within 0.1 % of ours since the first check. Each
 * reading is known only to within its bracket [before, after]: a resolver
 * preempted between its reads (a loaded host) widens it, never fails it,
 * so the rate is judged against the anchor's and this bracket's widths,
 * over at least 100 ms. */
static int clock_ours(void) {
  static uint64_t anchor_mid, anchor_c, anchor_width; /* the first check's */
  uint64_t a = gt_mono_ns(), c = 0;
  if (gt_cu.timestamp(&c) != CUPTI_OK)
    return 0;
  uint64_t b = gt_mono_ns();
  if (c + 1000000 < a || c > b + 1000000)
    return 0;
  uint64_t mid = a + (b - a) / 2;
  if (anchor_mid == 0) {
    anchor_mid = mid, anchor_c = c, anchor_width = b - a;
    return 1;
  }
  double span = (double)(mid - anchor_mid);
  if (span < 1e8)
    return 1;
  double off =
      (double)(int64_t)(c - anchor_c) - span; /* our reading's drift since the anchor */
  double slack = 0.001 * span + (double)(b - a + anchor_width) / 2 + 1000.0;
  return off <= slack && -off <= slack;
}

/* ---- finding libcupti ---- */

/* The directory of the process's own CUDA runtime, if one is loaded. */
static int cudart_dir(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  const char *slash = strrchr(info->dlpi_name, '/');
  if (!slash || strncmp(slash + 1, "libcudart.so", 12) != 0)
    return 0;
  snprintf(arg, 512, "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
  return 1;
}

/* libcupti in this order: one the process already loaded (a profiler's:
 * two copies in one process would fight over the device); the one beside
 * the process's libcudart, which matches it: a wheel's, as PyTorch's
 * (nvidia/cu13/lib holds both; CUDA 12 wheels put it in a sibling
 * nvidia/cuda_cupti/lib), where no loader path reaches; by soname; the
 * toolkit's (CUDA_HOME, else /usr/local/cuda). */
static void *open_cupti(void) {
  static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
                                      "../../cuda_cupti/lib/libcupti.so.12"};
  enum { SONAMES = 3, BESIDE = 4 };
  void *h = NULL;
  for (size_t i = 0; !h && i < SONAMES; i++)
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  char dir[512] = "", path[1024];
  if (!h)
    dl_iterate_phdr(cudart_dir, dir);
  for (size_t i = 0; !h && dir[0] && i < BESIDE; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  for (size_t i = 0; !h && i < SONAMES; i++)
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (h)
    return h;
  const char *home = getenv("CUDA_HOME");
  snprintf(path, sizeof path, "%s/extras/CUPTI/lib64/libcupti.so",
           home && *home ? home : "/usr/local/cuda");
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static int resolve_api(void *h) {
  static const struct {
    size_t off;
    const char *name;
  } syms[] = {
#define S(f, n) {offsetof(struct cupti_api, f), n}
      S(version, "cuptiGetVersion"),
      S(timestamp, "cuptiGetTimestamp"),
      S(subscribe, "cuptiSubscribe"),
      S(unsubscribe, "cuptiUnsubscribe"),
      S(callback_name, "cuptiGetCallbackName"),
      S(register_callbacks, "cuptiActivityRegisterCallbacks"),
      S(register_timestamp, "cuptiActivityRegisterTimestampCallback"),
      S(enable, "cuptiActivityEnable"),
      S(disable, "cuptiActivityDisable"),
      S(enable_runtime_api, "cuptiActivityEnableRuntimeApi"),
      S(enable_driver_api, "cuptiActivityEnableDriverApi"),
      S(flush_all, "cuptiActivityFlushAll"),
      S(next_record, "cuptiActivityGetNextRecord"),
      S(dropped, "cuptiActivityGetNumDroppedRecords"),
      S(push, "cuptiActivityPushExternalCorrelationId"),
      S(pop, "cuptiActivityPopExternalCorrelationId"),
#undef S
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    void *p = dlsym(h, syms[i].name);
    if (p == NULL)
      return 0;
    memcpy((char *)&gt_cu + syms[i].off, &p, sizeof p);
  }
  return 1;
}

/* ---- who else holds CUPTI ---- */

static int has_lib(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  return strstr(info->dlpi_name, (const char *)arg) != NULL;
}

static const char *other_client(void) {
  static char buf[600];
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  if (inj && *inj) {
    snprintf(buf, sizeof buf,
             "the CUDA injection library %.512s (Nsight Systems or Compute)", inj);
    return buf;
  }
  if (dl_iterate_phdr(has_lib, (void *)"libkineto") ||
      dl_iterate_phdr(has_lib, (void *)"libtorch_cpu"))
    return "torch.profiler (Kineto)";
  return "another CUPTI client of this process";
}

/* ---- the entry points gputrace times ---- */

static int timed_api(const char *name, size_t n, unsigned family) {
  for (unsigned a = 1; a < GT_API_COUNT; a++) {
    const struct gt_api_info *i = &gt_apis[a];
    if (i->family != family || strlen(i->name) != n || strncmp(i->name, name, n) != 0)
      continue;
    return (i->kind == GT_KIND_LAUNCH || i->kind == GT_KIND_MEMCPY ||
            i->kind == GT_KIND_MEMSET) &&
           !(i->flags & (GT_AF_NODE | GT_AF_EDIT | GT_AF_HOST_FN));
  }
  return 0;
}

/* Enable API records for the timed entry points of one domain (runtime:
 * names end in _v<digits>). -1 when an enable failed. */
static int enable_apis(int domain) {
  int rt = domain == CB_DOMAIN_RUNTIME_API;
  for (uint32_t cbid = 1; cbid < CU_MAX_CBIDS; cbid++) {
    const char *name = NULL;
    if (gt_cu.callback_name(domain, cbid, &name) != CUPTI_OK || name == NULL)
      break; /* past the domain's last id */
    size_t n = strlen(name);
    const char *v = strrchr(name, '_');
    if (rt && v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9')
      n = (size_t)(v - name);
    if (!timed_api(name, n, rt ? GT_FAM_RT : GT_FAM_DRV) || g_napi[rt] == CU_MAX_APIS)
      continue;
    int r = rt ? gt_cu.enable_runtime_api(cbid, 1) : gt_cu.enable_driver_api(cbid, 1);
    if (r != CUPTI_OK)
      return -1;
    g_api_on[rt][g_napi[rt]++] = (uint16_t)cbid;
  }
  return 0;
}

/* ---- life cycle ---- */

/* The subscriber's callback: we subscribe to hold CUPTI, not for callbacks. */
static void on_callback(void *userdata, int domain, uint32_t cbid, const void *data) {
  (void)userdata, (void)domain, (void)cbid, (void)data;
}

static int setup(const char **why) {
  static const int kinds[] = {KIND_EXTERNAL_CORRELATION, KIND_CONCURRENT_KERNEL,
                              KIND_MEMCPY, KIND_MEMCPY2, KIND_MEMSET};
  if (gt_cu.register_timestamp(CUPTI_mono) != CUPTI_OK) {
    *why = "cuptiActivityRegisterTimestampCallback failed";
    return -1;
  }
  if (gt_cu.register_callbacks(gt_cu_buffer_requested, gt_cu_buffer_completed) !=
      CUPTI_OK) {
    *why = "cuptiActivityRegisterCallbacks failed";
    return -1;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    if (gt_cu.enable(kinds[i]) != CUPTI_OK) {
      *why = "cuptiActivityEnable failed (no driver or device?)";
      return -1;
    }
    g_enabled[g_nenabled++] = kinds[i];
  }
  if (enable_apis(CB_DOMAIN_RUNTIME_API) != 0 || g_napi[1] == 0) {
    *why = "cuptiActivityEnableRuntimeApi failed";
    return -1;
  }
  enable_apis(
      CB_DOMAIN_DRIVER_API); /* a library without driver names times the runtime */
  if (!clock_ours()) {
    *why = "cuptiGetTimestamp does not follow the registered callback";
    return -1;
  }
  return 0;
}

int gt_cupti_start(const char **why) {
  *why = "libcupti was not found";
  void *h = open_cupti();
  if (h == NULL)
    return -1;
  *why = "libcupti lacks the activity API";
  uint32_t version = 0;
  if (!resolve_api(h))
    return -1; /* left loaded, unused */
  *why = "libcupti is older than CUDA 12.0's";
  if (gt_cu.version(&version) != CUPTI_OK || version < CUPTI_VERSION_MIN)
    return -1;
  int s = gt_cu.subscribe(&g_subscriber, on_callback, NULL);
  if (s == CUPTI_ERR_MULTIPLE_SUBSCRIBERS) {
    static char buf[700];
    snprintf(buf, sizeof buf, "CUPTI is in use by %s", other_client());
    *why = buf;
    return -1;
  }
  if (s != CUPTI_OK) {
    *why = "cuptiSubscribe failed (no driver or device?)";
    return -1;
  }
  g_subscribed = 1;
  g_cu_meta = calloc(CU_META_SLOTS, sizeof *g_cu_meta);
  if (g_cu_meta == NULL || gt_cu_buffers_init() != 0) {
    *why = "out of memory";
    gt_cupti_stop();
    return -1; /* what was allocated stays: CUPTI never had our callbacks */
  }
  if (setup(why) != 0) {
    gt_cupti_stop();
    return -1;
  }
  g_win_at = gt_mono_ns();
  return 0;
}

void gt_cupti_stop(void) {
  if (!g_taken_over) { /* still ours: undo what we enabled */
    for (int rt = 0; rt < 2; rt++)
      while (g_napi[rt] > 0) {
        uint16_t cbid = g_api_on[rt][--g_napi[rt]];
        rt ? gt_cu.enable_runtime_api(cbid, 0) : gt_cu.enable_driver_api(cbid, 0);
      }
    while (g_nenabled > 0)
      gt_cu.disable(g_enabled[--g_nenabled]);
  }
  if (g_subscribed)
    gt_cu.unsubscribe(g_subscriber);
  g_subscribed = 0;
}

void gt_cupti_forget(void) {
  g_nenabled = 0; /* the child has no CUPTI session; never call into it */
  g_napi[0] = g_napi[1] = 0;
  g_subscribed = 0;
  gt_cu_parse_forget();
}

/* ---- the hooks' side ---- */

int gt_cupti_before(void) {
  uint64_t id = atomic_fetch_add_explicit(&g_cu_next_id, 1, memory_order_relaxed);
  struct cu_meta *m = &g_cu_meta[id % CU_META_SLOTS];
  if (atomic_exchange_explicit(&m->id, 0, memory_order_acq_rel) != 0)
    gt_cu_meta_overwritten(m); /* a call whose activity never came: lost */
  atomic_store_explicit(&m->state, CU_WAITING, memory_order_relaxed);
  tls_ext_id = id;
  if (gt_cu.push(EXT_KIND_CUSTOM2, id) != CUPTI_OK) {
    atomic_store_explicit(&m->state, CU_VOID, memory_order_relaxed);
    return -1; /* untimed, counted */
  }
  return DT_TOKEN_CUPTI;
}

void gt_cupti_after(cudaError_t result) {
  uint64_t last = 0;
  gt_cu.pop(EXT_KIND_CUSTOM2, &last);
  if (result != 0)
    atomic_store_explicit(&g_cu_meta[tls_ext_id % CU_META_SLOTS].state, CU_VOID,
                          memory_order_relaxed);
}

void gt_cupti_commit(const struct dt_slot *op, uint64_t call_ns) {
  uint64_t id = tls_ext_id;
  struct cu_meta *m = &g_cu_meta[id % CU_META_SLOTS];
  m->tid = op->tid;
  m->api = op->api;
  m->flags = op->flags;
  m->kernel = op->kernel;
  m->stream = op->stream_key;
  m->corr = op->corr;
  m->sample = op->sample;
  m->dir = op->dir;
  m->call_ns = call_ns;
  m->commit_ns = gt_mono_ns();
  atomic_store_explicit(&m->id, id, memory_order_release);
}

/* ---- the resolver's side ---- */

void gt_cupti_flush(int forced) {
  if (g_nenabled == 0)
    return;
  if (g_trouble == NULL && !clock_ours()) {
    g_trouble = "CUPTI's timestamps stopped following gputrace's clock (another client "
                "registered a timestamp callback)";
    g_taken_over = 1;
  }
  if (!(forced && g_taken_over)) /* another client's buffers are not ours to force */
    gt_cu.flush_all(forced ? CUPTI_FLUSH_FORCED : 0);
  gt_cu_parse(forced ? 0 : CU_AGE_NS, 0);
}

void gt_cupti_final_words(int at_exit) {
  static int said;
  if (g_cu_meta != NULL && at_exit)
    gt_cu_parse(0, 1); /* the last: calls in flight at a stop or now, counted */
  uint64_t n = gt_cu_cupti_dropped();
  if (n == 0 || said)
    return;
  said = 1;
  gt_warn("gputrace: CUPTI dropped %llu activity records (its buffers were full); timed "
          "calls "
          "left without any are counted as untimed",
          (unsigned long long)n);
}

const char *gt_cupti_trouble_now(void) {
  return g_trouble;
}

const char *gt_cupti_trouble(void) {
  if (g_trouble != NULL)
    return g_trouble;
  uint64_t now = gt_mono_ns();
  if (now - g_win_at < CU_WINDOW_NS)
    return NULL;
  uint64_t matched = gt_cu_matched(), lost = gt_cu_lost();
  if (lost - g_win_lost >= 64 && matched == g_win_matched) {
    g_trouble = "CUPTI delivered no activity for the calls timed in the last 2 s";
    g_taken_over = matched > 0; /* it worked, then stopped: another client's now */
  }
  g_win_at = now;
  g_win_matched = matched;
  g_win_lost = lost;
  return g_trouble;
}
