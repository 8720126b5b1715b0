/* cupti_kineto.c — the stand-in libcupti's "late Kineto" fault knob
 * (GPUTRACE_STANDIN_CUPTI_KINETO_AT=N, docs/standin.md): what
 * torch.profiler does to a process's CUPTI when a profiling session starts
 * after another client set CUPTI up, played by a thread of the stand-in
 * once N device records were written.
 *
 * Contract: like Kineto's CuptiActivityApi, the session registers its own
 * timestamp callback (TSC-like ticks: 3 per ns), its own buffer callbacks
 * (buffers malloc'd, freed when completed), enables CONCURRENT_KERNEL,
 * RUNTIME and EXTERNAL_CORRELATION; while it runs, every runtime call has
 * CUSTOM0 and CUSTOM1 external ids on its stacks, as Kineto's operator and
 * annotation callbacks push them; after 100 ms it disables those kinds,
 * flushes and calls cuptiFinalize. It uses only CUPTI's public entry
 * points.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_int.h"

static int g_active;
static uint64_t g_ops;

static uint64_t CUPTIAPI ticks(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 3 * ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec);
}

static void CUPTIAPI requested(uint8_t **b, size_t *size, size_t *max) {
  *b = aligned_alloc(8, 1 << 16);
  *size = *b ? 1 << 16 : 0;
  *max = 0;
}

static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *b, size_t size,
                               size_t v) {
  (void)c, (void)s, (void)size, (void)v;
  free(b); /* whoever lent it: Kineto frees what it is given */
}

static void *session(void *arg) {
  (void)arg;
  cuptiActivityRegisterTimestampCallback(ticks);
  cuptiActivityRegisterCallbacks(requested, completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  __atomic_store_n(&g_active, 1, __ATOMIC_RELEASE);
  struct timespec t = {0, 100000000};
  nanosleep(&t, NULL);
  __atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiFinalize();
  return NULL;
}

/* cs.mu held: start the session once N device records were written. */
void cs_kineto_maybe_start_locked(void) {
  static int started;
  if (started || cs.knobs.kineto_at == 0 ||
      __atomic_load_n(&cs.device_records, __ATOMIC_RELAXED) < cs.knobs.kineto_at)
    return;
  started = 1;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &attr, session, NULL);
  pthread_attr_destroy(&attr);
}

void cs_kineto_ext(uint64_t ids[CS_EXT_KINDS]) {
  if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
    return;
  uint64_t op = __atomic_add_fetch(&g_ops, 1, __ATOMIC_RELAXED);
  if (ids[CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0] == 0)
    ids[CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0] = op;
  if (ids[CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1] == 0)
    ids[CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1] = op;
}
