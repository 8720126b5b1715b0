/* timeline.c — the simulated device: configuration from the environment,
 * operation durations, and the per-stream / per-engine schedule.
 *
 * Contract (the model is documented with its formulas in docs/standin.md):
 *  - Device time is CLOCK_MONOTONIC in ns, the profiler's clock, so simulated
 *    start/end times line up with traced API calls.
 *  - An op on stream s using engine e starts at
 *      max(now, s.tail, engine_free[e], sync constraints)
 *    and ends at start + duration; s.tail and engine_free[e] move to the end.
 *    Sync constraints: an op on the legacy stream also waits for every
 *    blocking stream (blocking_max); an op on a blocking stream (user streams
 *    without cudaStreamNonBlocking and per-thread default streams) also waits
 *    for the legacy stream's tail.
 *  - One mutex guards all tails; it is never held while sleeping or while
 *    calling back into the program.
 *  - Waits sleep (si_sleep_until: no call at all for a time already past);
 *    the wait before a host function or host node (si_wait_until_precise)
 *    sleeps until 200 us before its time and spins the rest, so the
 *    sleep's slack does not move the stream's later work.
 *  - Configuration is read once (first use or library load); invalid values
 *    are reported on stderr and ignored.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "standin.h"

struct si_config si_cfg;
int si_cfg_ready;

extern struct si_stream si_legacy_stream; /* streams_events.c */

/* Durations saturate far below UINT64_MAX so start + duration cannot wrap. */
#define SI_DUR_MAX (1ull << 62)

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tl_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t engine_free[SI_ENG_N];
static uint64_t blocking_max; /* max tail over blocking + per-thread streams */
static uint64_t device_max;   /* max tail over all streams */

/* ---- configuration ------------------------------------------------------- */

static void warn_env(const char *name, const char *val) {
  fprintf(stderr, "gputrace standin: ignoring invalid %s=%s\n", name, val);
}

static void env_u64(const char *name, uint64_t *out) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || *v == '-')
    warn_env(name, v);
  else
    *out = x;
}

static void env_gbps(const char *name, double *out) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return;
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno != 0 || *end != '\0' || !(x > 0.0) || !isfinite(x))
    warn_env(name, v);
  else
    *out = x;
}

static void config_load(void) {
  /* errno is the program's: restore it (we may run inside any API call). */
  int saved = errno;
  struct si_config c = {
      .timeline = 1,
      .kernel_base_ns = 2000,
      .kernel_ps_thread = 100,
      .copy_latency_ns = 2000,
      .pageable_gbps = 6.0,
      .pinned_gbps = 24.0,
      .dtod_gbps = 1000.0,
      .memset_gbps = 1000.0,
      .graph_ns = 10000,
      .mem_bytes = 80ull << 30,
  };
  uint64_t timeline = 1;
  env_u64("GPUTRACE_STANDIN_TIMELINE", &timeline);
  c.timeline = timeline != 0;
  env_u64("GPUTRACE_STANDIN_KERNEL_BASE_NS", &c.kernel_base_ns);
  env_u64("GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD", &c.kernel_ps_thread);
  env_u64("GPUTRACE_STANDIN_COPY_LATENCY_NS", &c.copy_latency_ns);
  env_gbps("GPUTRACE_STANDIN_PAGEABLE_GBPS", &c.pageable_gbps);
  env_gbps("GPUTRACE_STANDIN_PINNED_GBPS", &c.pinned_gbps);
  env_gbps("GPUTRACE_STANDIN_DTOD_GBPS", &c.dtod_gbps);
  env_gbps("GPUTRACE_STANDIN_MEMSET_GBPS", &c.memset_gbps);
  env_u64("GPUTRACE_STANDIN_GRAPH_NS", &c.graph_ns);
  env_u64("GPUTRACE_STANDIN_MEM_BYTES", &c.mem_bytes);
  env_u64("GPUTRACE_STANDIN_LAUNCH_HOST_NS", &c.launch_host_ns);
  uint64_t *clamp[] = {&c.kernel_base_ns, &c.kernel_ps_thread, &c.copy_latency_ns,
                       &c.graph_ns, &c.launch_host_ns};
  for (size_t i = 0; i < sizeof(clamp) / sizeof(clamp[0]); i++)
    if (*clamp[i] > SI_DUR_MAX)
      *clamp[i] = SI_DUR_MAX;
  si_cfg = c;
  __atomic_store_n(&si_cfg_ready, 1, __ATOMIC_RELEASE);
  errno = saved;
}

void si_config_init(void) {
  pthread_once(&cfg_once, config_load);
}

/* Read the environment at load time so that the launch fast path only ever
 * sees si_cfg_ready set (calls made before this constructor still work). */
__attribute__((constructor)) static void config_ctor(void) {
  si_config_init();
}

/* ---- clock ----------------------------------------------------------------- */

uint64_t si_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A time already past returns at once: the kernel does not. An absolute
 * clock_nanosleep that has expired still schedules out and is woken by the
 * next timer interrupt within the task's timer slack (tens of us:
 * docs/PERFORMANCE.md, Figures moved out of code comments), which would
 * make every synchronize on an idle device, and every blocking call that
 * ended in time, look that much longer (real hardware: an idle device's
 * synchronize returns at once). */
void si_sleep_until(uint64_t t_ns) {
  if (t_ns <= si_now())
    return;
  struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000ull),
                        .tv_nsec = (long)(t_ns % 1000000000ull)};
  int saved = errno;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
  errno = saved;
}

/* Host functions run on the simulated timeline: a sleep's slack (tens of us)
 * would delay the stream's later work by as much, every time. Sleep until
 * shortly before t, then spin (the wait of a host function or host node). */
#define SI_SPIN_NS 200000ull

void si_wait_until_precise(uint64_t t_ns) {
  uint64_t now = si_now();
  if (t_ns <= now)
    return;
  if (t_ns - now > SI_SPIN_NS)
    si_sleep_until(t_ns - SI_SPIN_NS);
  while (si_now() < t_ns) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/* ---- durations ------------------------------------------------------------- */

/* base + floor(threads * ps_per_thread / 1000) ns. threads < 2^74 and the
 * configured values are clamped to SI_DUR_MAX, so the product is checked
 * against the saturation bound before it is formed. */
uint64_t si_dur_kernel(dim3 g, dim3 b) {
  const struct si_config *c = si_config();
  unsigned __int128 threads = (unsigned __int128)g.x * g.y * g.z;
  threads *= (unsigned __int128)b.x * b.y * b.z;
  const unsigned __int128 max_ps = (unsigned __int128)SI_DUR_MAX * 1000;
  if (threads != 0 && c->kernel_ps_thread > max_ps / threads)
    return SI_DUR_MAX;
  unsigned __int128 ns = threads * c->kernel_ps_thread / 1000 + c->kernel_base_ns;
  return ns > SI_DUR_MAX ? SI_DUR_MAX : (uint64_t)ns;
}

/* Copy/memset duration: latency + floor(bytes / GB/s) ns (1 GB/s = 1 B/ns). */
uint64_t si_dur_bytes(uint64_t bytes, double gbps) {
  double ns = floor((double)bytes / gbps) + (double)si_config()->copy_latency_ns;
  return ns >= (double)SI_DUR_MAX ? SI_DUR_MAX : (uint64_t)ns;
}

/* ---- schedule ---------------------------------------------------------------- */

static inline uint64_t max64(uint64_t a, uint64_t b) {
  return a > b ? a : b;
}

/* Caller holds tl_mu. */
static void set_tail(struct si_stream *s, uint64_t t) {
  s->tail_ns = max64(s->tail_ns, t);
  if (s->blocking)
    blocking_max = max64(blocking_max, t);
  device_max = max64(device_max, t);
}

uint64_t si_tl_enqueue(struct si_stream *s, int engine, uint64_t dur_ns, unsigned flags) {
  return si_tl_enqueue_at(s, engine, dur_ns, flags, si_now());
}

uint64_t si_tl_enqueue_at(struct si_stream *s, int engine, uint64_t dur_ns,
                          unsigned flags, uint64_t now) {
  pthread_mutex_lock(&tl_mu);
  uint64_t start = max64(now, s->tail_ns);
  if (engine >= 0)
    start = max64(start, engine_free[engine]);
  if (s->kind == SI_STREAM_LEGACY)
    start = max64(start, blocking_max);
  else if (s->blocking)
    start = max64(start, si_legacy_stream.tail_ns);
  if (flags & SI_OP_DEVICE_WIDE)
    start = max64(start, device_max);
  uint64_t end = start + dur_ns;
  set_tail(s, end);
  if (engine >= 0)
    engine_free[engine] = end;
  pthread_mutex_unlock(&tl_mu);
  return end;
}

uint64_t si_tl_tail(struct si_stream *s) {
  pthread_mutex_lock(&tl_mu);
  uint64_t t = s->tail_ns;
  pthread_mutex_unlock(&tl_mu);
  return t;
}

void si_tl_extend(struct si_stream *s, uint64_t t_ns) {
  pthread_mutex_lock(&tl_mu);
  set_tail(s, t_ns);
  pthread_mutex_unlock(&tl_mu);
}

uint64_t si_tl_device_tail(void) {
  pthread_mutex_lock(&tl_mu);
  uint64_t t = device_max;
  pthread_mutex_unlock(&tl_mu);
  return t;
}
