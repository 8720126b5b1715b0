/* cupti.c — device times from the CUPTI activity API (GPUTRACE_GPU_TIMING
 * auto or cupti), when libcupti can be dlopen'ed and initializes — that
 * is, on a machine with a GPU and a driver. Never a build or run-time
 * requirement: the few CUPTI types used are declared in cupti_abi.h, with
 * the record layouts of cupti_activity.h (CUDA 12 and 13 keep these
 * prefixes), checked against the toolkit's header by test_cupti_abi.
 *
 * NOT YET SEEN WORKING ON HARDWARE. On an H200 (2026-11-27) a session never
 * started: PyTorch's libcupti was in its wheel, beside libcudart, on no
 * loader path, and once found, enabling the DRIVER kind (declared 6, the
 * header's 4) failed, so every `cupti` run fell back to events. Both are
 * fixed and tested here; the parsing after a successful enable has still
 * not run. What is checked here: libcupti.so.13 loads and
 * cuptiActivityEnable fails without a driver, so `cupti` falls back to
 * events (tests/e2e/test_devtime.py).
 *
 * Contract:
 *  - gt_cupti_start enables CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME and
 *    DRIVER (the API records external correlation needs: driver launches by
 *    cuBLAS or Triton have no runtime record) and EXTERNAL_CORRELATION;
 *    any failure disables what was enabled and returns -1 (libcupti stays
 *    loaded: it may own threads).
 *  - A timed call pushes an external correlation id (a process-wide
 *    counter) around the real call; its host record's metadata (tid, corr,
 *    api, stream, kernel, flags, dir) is stored under that id in a
 *    direct-mapped table. Activity buffers are parsed when CUPTI completes
 *    them (the resolver flushes every 20 ms, and at exit): external
 *    correlation records map CUPTI's correlationId to our id, kernel /
 *    memcpy / memset records become DEVICE records (source CUPTI); a
 *    record whose mapping has not arrived yet waits in a small ring.
 *    Activity of untimed calls (sampling, the driver calls a runtime call
 *    makes inside) has no mapping and is not reported.
 *  - Times: CUPTI timestamps (cuptiGetTimestamp's clock) + an offset to
 *    CLOCK_MONOTONIC measured at each flush (the tightest of 5 reads).
 *  - A graph launch yields one DEVICE record per kernel or copy node, all
 *    with the launch's corr.
 *  - gt_cupti_healthy says 0 when 2 s after 64 timed calls nothing was
 *    matched: the resolver then switches to events.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti_abi.h"
#include "devtime_int.h"

typedef int (*cupti_fn_ts)(uint64_t *);
typedef void (*cupti_req_fn)(uint8_t **, size_t *, size_t *);
typedef void (*cupti_done_fn)(void *, uint32_t, uint8_t *, size_t, size_t);

static struct {
  int (*timestamp)(uint64_t *);
  int (*register_callbacks)(cupti_req_fn, cupti_done_fn);
  int (*enable)(int);
  int (*disable)(int);
  int (*flush_all)(uint32_t);
  int (*next_record)(uint8_t *, size_t, void **);
  int (*push)(int, uint64_t);
  int (*pop)(int, uint64_t *);
} api;

#define META_SLOTS 65536u
#define CORR_SLOTS 65536u
#define ORPHANS 1024u
#define BUFFER_BYTES (1u << 20)

struct meta {
  _Atomic uint64_t id; /* 0 = empty; written last */
  uint64_t kernel, stream;
  uint32_t tid, corr, flags, sample;
  uint16_t api;
  uint8_t dir, pad;
};
struct corr_entry {
  uint32_t correlation_id;
  uint64_t external_id;
};
struct orphan {
  uint32_t kind, correlation_id, device_id, age;
  uint64_t start, end, bytes;
};

static struct meta *g_meta;
static struct corr_entry *g_corr;
static struct orphan g_orphans[ORPHANS];
static unsigned g_norphans;
static pthread_mutex_t g_parse_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t g_next_id = 1;
static _Atomic uint64_t g_committed, g_matched, g_first_commit_ns;
static _Atomic int64_t g_offset_ns;  /* CLOCK_MONOTONIC - CUPTI clock */
static int g_enabled[8], g_nenabled; /* the kinds enabled, for stop */
static __thread uint64_t tls_ext_id __attribute__((tls_model("initial-exec")));

/* ---- clock ---- */

static void calibrate(void) {
  uint64_t best_gap = UINT64_MAX;
  int64_t offset = 0;
  for (int i = 0; i < 5; i++) {
    uint64_t a = gt_dt_mono_ns(), c = 0;
    if (api.timestamp(&c) != 0)
      return;
    uint64_t b = gt_dt_mono_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      offset = (int64_t)(a + (b - a) / 2) - (int64_t)c;
    }
  }
  atomic_store(&g_offset_ns, offset);
}

/* ---- activity records ---- */

static void emit(const struct orphan *o, const struct meta *m) {
  struct gt_record rec;
  gt_dt_device_begin(&rec, (uint32_t)getpid(), m->tid, m->api, m->flags,
                     (uint64_t)((int64_t)o->start + atomic_load(&g_offset_ns)),
                     o->end > o->start ? o->end - o->start : 0, GT_DEVTIME_CUPTI,
                     m->sample);
  rec.u.device.stream = m->stream;
  rec.u.device.kernel = m->kernel;
  rec.u.device.bytes = o->bytes;
  rec.u.device.corr = m->corr;
  rec.u.device.of_kind = o->kind == KIND_MEMCPY   ? GT_KIND_MEMCPY
                         : o->kind == KIND_MEMSET ? GT_KIND_MEMSET
                                                  : GT_KIND_LAUNCH;
  rec.u.device.dir = o->kind == KIND_MEMCPY ? m->dir : 0;
  rec.u.device.device = (int32_t)o->device_id;
  gt_emit_device(&rec);
  atomic_fetch_add(&g_matched, 1);
}

/* 1 when the activity's call is known (and its DEVICE record written). */
static int try_emit(const struct orphan *o) {
  const struct corr_entry *c = &g_corr[o->correlation_id % CORR_SLOTS];
  if (c->correlation_id != o->correlation_id || c->external_id == 0)
    return 0;
  struct meta *m = &g_meta[c->external_id % META_SLOTS];
  if (atomic_load_explicit(&m->id, memory_order_acquire) != c->external_id)
    return 0;
  struct meta copy = {0};
  memcpy((char *)&copy + sizeof copy.id, (char *)m + sizeof m->id,
         sizeof copy - sizeof copy.id);
  if (atomic_load_explicit(&m->id, memory_order_acquire) != c->external_id)
    return 0; /* overwritten while read */
  emit(o, &copy);
  return 1;
}

static void device_activity(const void *r) {
  uint32_t kind;
  memcpy(&kind, r, sizeof kind);
  struct orphan o = {.kind = kind};
  if (kind == KIND_KERNEL || kind == KIND_CONCURRENT_KERNEL) {
    const struct act_kernel *k = r;
    o = (struct orphan){kind, k->correlation_id, k->device_id, 0, k->start, k->end, 0};
  } else if (kind == KIND_MEMCPY || kind == KIND_MEMSET) {
    const struct act_copy *c = r;
    o = (struct orphan){kind,   c->correlation_id, c->device_id, 0, c->start,
                        c->end, c->bytes};
  } else {
    return;
  }
  if (!try_emit(&o) && g_norphans < ORPHANS)
    g_orphans[g_norphans++] = o;
}

static void retry_orphans(void) {
  unsigned kept = 0;
  for (unsigned i = 0; i < g_norphans; i++)
    if (!try_emit(&g_orphans[i]) && ++g_orphans[i].age < 8)
      g_orphans[kept++] = g_orphans[i]; /* untimed calls' activity ages out */
  g_norphans = kept;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid) {
  (void)ctx, (void)stream, (void)size;
  pthread_mutex_lock(&g_parse_mu);
  for (int pass = 0; pass < 2 && buffer != NULL; pass++) {
    void *r = NULL;
    while (api.next_record(buffer, valid, &r) == 0) {
      uint32_t kind;
      memcpy(&kind, r, sizeof kind);
      if (pass == 0 && kind == KIND_EXTERNAL_CORRELATION) {
        const struct act_extcorr *e = r;
        if (e->external_kind == EXT_KIND_CUSTOM0)
          g_corr[e->correlation_id % CORR_SLOTS] =
              (struct corr_entry){e->correlation_id, e->external_id};
      } else if (pass == 1) {
        device_activity(r);
      }
    }
  }
  retry_orphans();
  pthread_mutex_unlock(&g_parse_mu);
  free(buffer);
}

/* ---- life cycle ---- */

/* The directory of the process's own CUDA runtime, if one is loaded. */
static int cudart_dir(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  const char *slash = strrchr(info->dlpi_name, '/');
  if (!slash || strncmp(slash + 1, "libcudart.so", 12) != 0)
    return 0;
  snprintf(arg, 512, "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
  return 1;
}

/* libcupti in this order: one the process already loaded (a profiler's);
 * the one beside the process's libcudart, which matches it: a wheel's, as
 * PyTorch's (nvidia/cu13/lib holds both; CUDA 12 wheels put it in a sibling
 * nvidia/cuda_cupti/lib), where no loader path reaches; by soname; the
 * toolkit's (CUDA_HOME, else /usr/local/cuda). */
static void *open_cupti(void) {
  /* the names, then (beside libcudart only) a CUDA 12 wheel's sibling */
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

/* Look `name` up in libcupti (handle h) into *fn, a function pointer of
 * `api`; 1 when found. */
static int cupti_sym(void *h, void *fn, const char *name) {
  void *p = dlsym(h, name);
  memcpy(fn, &p, sizeof p);
  return p != NULL;
}

int gt_cupti_start(void) {
  void *h = open_cupti();
  if (h == NULL || !cupti_sym(h, &api.timestamp, "cuptiGetTimestamp") ||
      !cupti_sym(h, &api.register_callbacks, "cuptiActivityRegisterCallbacks") ||
      !cupti_sym(h, &api.enable, "cuptiActivityEnable") ||
      !cupti_sym(h, &api.disable, "cuptiActivityDisable") ||
      !cupti_sym(h, &api.flush_all, "cuptiActivityFlushAll") ||
      !cupti_sym(h, &api.next_record, "cuptiActivityGetNextRecord") ||
      !cupti_sym(h, &api.push, "cuptiActivityPushExternalCorrelationId") ||
      !cupti_sym(h, &api.pop, "cuptiActivityPopExternalCorrelationId"))
    return -1; /* a library without the activity API: left loaded, unused */
  g_meta = calloc(META_SLOTS, sizeof *g_meta);
  g_corr = calloc(CORR_SLOTS, sizeof *g_corr);
  uint64_t ts;
  if (g_meta == NULL || g_corr == NULL || api.timestamp(&ts) != 0 ||
      api.register_callbacks(buffer_requested, buffer_completed) != 0)
    goto fail;
  /* External correlation records come with API records: RUNTIME for the
   * runtime's hooks, DRIVER for the driver's (cuBLAS, Triton). */
  static const int kinds[] = {KIND_EXTERNAL_CORRELATION, KIND_RUNTIME, KIND_DRIVER,
                              KIND_CONCURRENT_KERNEL,    KIND_MEMCPY,  KIND_MEMSET};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    if (api.enable(kinds[i]) != 0)
      goto fail; /* no driver, no device, or another profiler owns CUPTI */
    g_enabled[g_nenabled++] = kinds[i];
  }
  calibrate();
  return 0;
fail:
  gt_cupti_stop();
  free(g_meta);
  free(g_corr);
  g_meta = NULL;
  g_corr = NULL;
  return -1;
}

void gt_cupti_stop(void) {
  while (g_nenabled > 0)
    api.disable(g_enabled[--g_nenabled]);
}

void gt_cupti_forget(void) {
  g_nenabled = 0; /* the child has no CUPTI session; never call into it */
  g_norphans = 0;
  g_parse_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* ---- the hooks' side ---- */

int gt_cupti_before(void) {
  uint64_t id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
  if (api.push(EXT_KIND_CUSTOM0, id) != 0)
    return 0;
  tls_ext_id = id;
  return DT_TOKEN_CUPTI;
}

void gt_cupti_after(cudaError_t result) {
  (void)result;
  uint64_t last = 0;
  api.pop(EXT_KIND_CUSTOM0, &last);
}

void gt_cupti_commit(const struct dt_slot *op) {
  uint64_t id = tls_ext_id;
  struct meta *m = &g_meta[id % META_SLOTS];
  atomic_store_explicit(&m->id, 0, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  m->tid = op->tid;
  m->api = op->api;
  m->flags = op->flags;
  m->kernel = op->kernel;
  m->stream = op->stream_key;
  m->corr = op->corr;
  m->sample = op->sample;
  m->dir = op->dir;
  atomic_store_explicit(&m->id, id, memory_order_release);
  uint64_t zero = 0;
  atomic_compare_exchange_strong(&g_first_commit_ns, &zero, gt_dt_mono_ns());
  atomic_fetch_add_explicit(&g_committed, 1, memory_order_relaxed);
}

/* ---- the resolver's side ---- */

void gt_cupti_flush(int forced) {
  if (g_nenabled == 0)
    return;
  calibrate();
  api.flush_all(forced ? CUPTI_FLUSH_FORCED : 0);
}

int gt_cupti_healthy(void) {
  if (atomic_load(&g_matched) > 0 || atomic_load(&g_committed) < 64)
    return 1;
  return gt_dt_mono_ns() - atomic_load(&g_first_commit_ns) < 2000000000ull;
}
