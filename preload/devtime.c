/* devtime.c — device timing, the application's side: configuration, the
 * event pool, the hooks' before/after/commit, fork, exit, cudaDeviceReset.
 * The design, accuracy and limits are in docs/devtime.md.
 *
 * Contract:
 *  - Environment, read once by gt_dt_configure (the shim's constructor):
 *    GPUTRACE_GPU_TIMING=auto|events|cupti|off (auto),
 *    GPUTRACE_GPU_TIMING_SAMPLE=auto|N (auto: adaptive, see devtime.h; 1:
 *    time every call; N: per thread, the first call of each kernel / graph
 *    / copy or memset entry point and then every Nth),
 *    GPUTRACE_GPU_TIMING_BUDGET=PCT (1: the share of a thread's time that
 *    adaptive sampling lets timing its launches cost), GPUTRACE_GPU_TIMING_EVENTS=N
 *    (65536 events, i.e. 32768 ops in flight).
 *  - The source is chosen at the first timed call: CUDA events for auto and
 *    events; CUPTI (cupti.c) for cupti when libcupti loads and initializes,
 *    else events with one warning on stderr. auto does not pick CUPTI: it
 *    has not been validated on a GPU yet (docs/gpu-validation.md), and a
 *    CUPTI session of ours would take torch.profiler's or nsys' place.
 *  - Events: a timed call takes a slot — two timing events made lazily
 *    with the real cudaEventCreateWithFlags on the current device, reused
 *    once resolved, at most EVENTS / 2 slots — and records them with the
 *    real cudaEventRecord on the call's own stream (stream 0 of a _ptsz /
 *    _ptds entry point is cudaStreamPerThread) just before and just after
 *    the real call. No call of ours is traced: they are made through
 *    resolved pointers with the recursion guard held.
 *  - A call goes untimed, and is counted as a dropped DEVICE record when the
 *    real call succeeded, when no slot is free, its stream is capturing
 *    (cudaStreamIsCapturing, when the runtime has it), the thread has a
 *    pending CUDA error (an event failure would overwrite it), the device
 *    ordinal is >= 16, or an event call fails (its error is then cleared:
 *    the last error was clear before it). Failed calls are never timed.
 *  - errno, results and the thread's last CUDA error are the app's.
 *  - Fork: fork() waits (at most 200 ms) for the resolver to be outside
 *    the runtime; a child process (gt_dt_after_fork, from core.c) forgets
 *    the parent's pool, queue, thread and CUPTI session and starts afresh
 *    on its first timed call.
 *  - Exit: an atexit handler — registered once the first events (or the
 *    CUPTI session) exist, so after the runtime registered its teardown and
 *    before it in exit order — stops the resolver, resolves what completed
 *    and ends every CUDA call of ours. Work still queued then is not reported.
 *  - cudaDeviceReset (exported here, not traced) holds the resolver off
 *    while it runs, then counts pending ops as untimed and retires every
 *    event and the anchors (they died with the context).
 *    Once it succeeded, the shim's table of open captures is emptied too
 *    (capture.h gt_capture_reset: the captures went with the streams).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "devtime_int.h"
#include "gputrace/knobs.h"
#include "transport.h"

int gt_dt_source;
uint32_t gt_dt_sample = 0;
int gt_dt_adaptive = 1;
/* gt_tls_dt_n, gt_tls_dt_calls, gt_tls_dt_skip: struct gt_tls (core.c). */
/* The adaptive budget: time this thread's timing cost within the window. */
static __thread uint64_t tls_win_start __attribute__((tls_model("initial-exec")));
static __thread uint64_t tls_win_cost __attribute__((tls_model("initial-exec")));
static double g_budget = 0.01;
struct dt_cuda gt_dt_cu;
struct dt_state gt_dt;

/* CUPTI mode: the timed call's stream, for its metadata. */
static __thread const void *tls_cupti_stream __attribute__((tls_model("initial-exec")));
static __thread int tls_cupti_ptsz __attribute__((tls_model("initial-exec")));
static __thread uint64_t tls_cupti_call_ns __attribute__((tls_model("initial-exec")));
/* The 1-in-N of the op being timed on this thread. */
static __thread uint32_t tls_op_sample __attribute__((tls_model("initial-exec")));

static int g_mode = DT_MODE_AUTO;
static uint32_t g_events = DT_DEFAULT_EVENTS;
static pthread_mutex_t g_select_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t g_atexit_pid;
static int g_exit_registered; /* this process registered dt_atexit */

enum { R_EXHAUSTED = 1, R_CAPTURE, R_ERROR_STATE, R_DEVICE, R_FAILED };

/* ---- configuration ---- */

static void state_init(void) {
  pthread_mutex_init(&gt_dt.mu, NULL);
  pthread_mutex_init(&gt_dt.resolve_mu, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&gt_dt.wake, &attr);
  pthread_condattr_destroy(&attr);
  gt_dt.free_bare = gt_dt.pend_head = gt_dt.pend_tail = -1;
  for (int d = 0; d < DT_MAX_DEV; d++)
    gt_dt.dev[d].free_head = -1;
}

/* Fork: the resolver makes its CUDA calls holding resolve_mu. If fork()
 * came while it was inside the runtime, the child could inherit the
 * runtime's locks held by a thread it does not have: wait (bounded, in case
 * the runtime's own fork handlers hold what the resolver waits for) until
 * it is between sweeps. */
static __thread int tls_fork_locked __attribute__((tls_model("initial-exec")));

static void dt_atfork_prepare(void) {
  if (__atomic_load_n(&gt_dt.thread_state, __ATOMIC_ACQUIRE) != 1)
    return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += 200000000l;
  if (until.tv_nsec >= 1000000000l) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000l;
  }
  tls_fork_locked = pthread_mutex_timedlock(&gt_dt.resolve_mu, &until) == 0;
}

static void dt_atfork_parent(void) {
  if (tls_fork_locked)
    pthread_mutex_unlock(&gt_dt.resolve_mu);
  tls_fork_locked = 0;
}

/* Device timing on or off: its bit of gt_mode (shim.h), which the hooks
 * read. */
static void dt_set_enabled(int on) {
  gt_mode_set(GT_MODE_DT, on);
}

/* In a child process (core.c calls it, from fork()'s child handler or for
 * a child that skipped it): the parent's thread, pool and anchors are not
 * ours. */
void gt_dt_after_fork(void) {
  tls_fork_locked = 0;
  free(gt_dt.slots);
  memset(&gt_dt, 0, sizeof gt_dt);
  state_init();
  g_select_mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
  if (gt_dt_source == DT_SRC_CUPTI) {
    gt_cupti_forget();
    g_mode = DT_MODE_EVENTS; /* a CUPTI session does not survive fork */
  }
  gt_dt_source = DT_SRC_NONE;
  gt_dt_resolver_forget();
  gt_tls_dt_token = 0;
  g_exit_registered = 0; /* the parent's handler is a no-op here */
  dt_set_enabled(g_mode != DT_MODE_OFF);
}

void gt_dt_configure(void) {
  static const int modes[] = {[GT_TIMING_AUTO] = DT_MODE_AUTO,
                              [GT_TIMING_EVENTS] = DT_MODE_EVENTS,
                              [GT_TIMING_CUPTI] = DT_MODE_CUPTI,
                              [GT_TIMING_OFF] = DT_MODE_OFF};
  g_mode = modes[gt_knob(GT_KNOB_GPU_TIMING)];
  gt_dt_sample = (uint32_t)gt_knob(GT_KNOB_GPU_TIMING_SAMPLE); /* 0: auto */
  gt_dt_adaptive = gt_dt_sample == 0;
  g_budget = (double)gt_knob(GT_KNOB_GPU_TIMING_BUDGET) / 100.0;
  g_events = (uint32_t)gt_knob(GT_KNOB_GPU_TIMING_EVENTS);
  state_init();
  pthread_atfork(dt_atfork_prepare, dt_atfork_parent, NULL);
  dt_set_enabled(g_mode != DT_MODE_OFF);
}

/* ---- choosing the source (first timed call) ---- */

/* Resolve `name` into *fn, a function pointer of gt_dt_cu; 1 when found. */
static int dt_resolve(void *fn, const char *name) {
  void *p = gt_resolve(name);
  memcpy(fn, &p, sizeof p);
  return p != NULL;
}

static int resolve_cuda(void) {
  dt_resolve(&gt_dt_cu.is_capturing, "cudaStreamIsCapturing"); /* not in every runtime */
  return dt_resolve(&gt_dt_cu.peek, "cudaPeekAtLastError") &&
         dt_resolve(&gt_dt_cu.get_last, "cudaGetLastError") &&
         dt_resolve(&gt_dt_cu.get_device, "cudaGetDevice") &&
         dt_resolve(&gt_dt_cu.set_device, "cudaSetDevice") &&
         dt_resolve(&gt_dt_cu.event_create, "cudaEventCreateWithFlags") &&
         dt_resolve(&gt_dt_cu.event_destroy, "cudaEventDestroy") &&
         dt_resolve(&gt_dt_cu.event_record, "cudaEventRecord") &&
         dt_resolve(&gt_dt_cu.event_query, "cudaEventQuery") &&
         dt_resolve(&gt_dt_cu.event_sync, "cudaEventSynchronize") &&
         dt_resolve(&gt_dt_cu.elapsed, "cudaEventElapsedTime") &&
         dt_resolve(&gt_dt_cu.stream_create, "cudaStreamCreateWithFlags");
}

static int select_source_locked(void) {
  if (!resolve_cuda())
    return DT_SRC_NONE;
  gt_dt.nslots = g_events / 2;
  gt_dt.slots = calloc(gt_dt.nslots, sizeof *gt_dt.slots); /* pages touched as used */
  if (gt_dt.slots == NULL)
    return DT_SRC_NONE;
  const char *why = NULL;
  if (g_mode == DT_MODE_CUPTI && gt_cupti_start(&why) == 0) {
    if (gt_dt_start_thread() == 0) { /* the flushes, the health checks */
      gt_dt_register_exit();         /* for the final flush */
      return DT_SRC_CUPTI;
    }
    gt_cupti_stop();
    why = "the device timing thread could not start";
  }
  if (g_mode == DT_MODE_CUPTI)
    gt_warn("gputrace: CUPTI is not used (%s); timing device work with CUDA events", why);
  return DT_SRC_EVENTS;
}

static int select_source(void) {
  pthread_mutex_lock(&g_select_mu);
  int src = __atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE);
  if (src == DT_SRC_NONE) {
    src = select_source_locked();
    if (src == DT_SRC_NONE)
      dt_set_enabled(0);
    else
      __atomic_store_n(&gt_dt_source, src, __ATOMIC_RELEASE);
    if (src ==
        DT_SRC_CUPTI) { /* the resolver may have looked before: flushing starts now */
      pthread_mutex_lock(&gt_dt.mu);
      pthread_cond_signal(&gt_dt.wake);
      pthread_mutex_unlock(&gt_dt.mu);
    }
  }
  pthread_mutex_unlock(&g_select_mu);
  return src;
}

/* ---- the pool ---- */

void gt_dt_release_locked(int32_t i) {
  struct dt_slot *s = &gt_dt.slots[i];
  struct dt_device *d = &gt_dt.dev[s->dev1 - 1];
  s->next = d->free_head;
  d->free_head = i;
}

static void release(int32_t i) {
  pthread_mutex_lock(&gt_dt.mu);
  gt_dt_release_locked(i);
  pthread_mutex_unlock(&gt_dt.mu);
}

static int create_events_now(struct dt_slot *s) {
  if (gt_dt_cu.event_create(&s->ev[0], cudaEventDefault) != 0)
    return -1;
  if (gt_dt_cu.event_create(&s->ev[1], cudaEventDefault) != 0) {
    gt_dt_cu.event_destroy(s->ev[0]);
    return -1;
  }
  return 0;
}

/* Event creation is not a call CUDA lets a global-mode thread make while
 * another thread captures in global mode: the thread relaxed around it. */
static int create_events(struct dt_slot *s) {
  if (!(gt_mode_now() & GT_MODE_CAPTURE))
    return create_events_now(s);
  int prev = gt_capture_relax();
  int rc = create_events_now(s);
  gt_capture_restore(prev);
  return rc;
}

/* A slot with two live events of device `dev`, or -R_* . */
static int32_t take_slot(int dev) {
  struct dt_device *d = &gt_dt.dev[dev];
  pthread_mutex_lock(&gt_dt.mu);
  int32_t i = d->free_head;
  if (i >= 0)
    d->free_head = gt_dt.slots[i].next;
  else if (gt_dt.free_bare >= 0)
    gt_dt.free_bare = gt_dt.slots[i = gt_dt.free_bare].next;
  else if (gt_dt.fresh < gt_dt.nslots)
    i = (int32_t)gt_dt.fresh++;
  uint32_t gen = d->gen;
  pthread_mutex_unlock(&gt_dt.mu);
  if (i < 0)
    return -R_EXHAUSTED;
  struct dt_slot *s = &gt_dt.slots[i];
  if (s->dev1 != dev + 1 || s->gen != gen) {
    /* Never made, or made before a cudaDeviceReset (dead handles: leave them). */
    if (create_events(s) != 0) {
      gt_dt_cu.get_last();
      pthread_mutex_lock(&gt_dt.mu);
      s->dev1 = 0;
      s->next = gt_dt.free_bare;
      gt_dt.free_bare = i;
      pthread_mutex_unlock(&gt_dt.mu);
      return -R_FAILED;
    }
    s->dev1 = (int16_t)(dev + 1);
    s->gen = gen;
  }
  return i;
}

/* ---- the hooks' side ---- */

/* Stream 0 of a _ptsz / _ptds entry point is the per-thread stream. */
static inline cudaStream_t stream_for(const void *stream, int ptsz) {
  return stream == NULL && ptsz ? cudaStreamPerThread : (cudaStream_t)stream;
}

static int capturing(cudaStream_t s) {
  if (gt_dt_cu.is_capturing == NULL)
    return 0; /* a runtime without stream capture (the stand-in) */
  int status = cudaStreamCaptureStatusNone;
  if (gt_dt_cu.is_capturing(s, &status) != 0) {
    gt_dt_cu.get_last(); /* e.g. the legacy stream during a global capture */
    return 1;
  }
  return status != cudaStreamCaptureStatusNone;
}

/* Every GT_DT_WINDOW launches of a thread: a fixed N is taken as it is;
 * otherwise N doubles while timing launches cost the thread more than the
 * budget of its time in the window just ended, and halves (down to 1)
 * while it cost under a quarter of it. Time is gt_now()'s (ticks or ns: only ratios). */
void gt_dt_adapt(void) {
  gt_tls_dt_calls = 0;
  if (!gt_dt_adaptive) {
    gt_tls_dt_n = gt_dt_sample;
    return;
  }
  uint64_t now = gt_now();
  if (tls_win_start != 0 && now > tls_win_start) {
    double elapsed = (double)(now - tls_win_start), cost = (double)tls_win_cost;
    if (cost > g_budget * elapsed && gt_tls_dt_n < DT_MAX_SAMPLE)
      gt_tls_dt_n *= 2;
    else if (cost * 4 < g_budget * elapsed && gt_tls_dt_n > 1)
      gt_tls_dt_n /= 2;
  }
  tls_win_start = now;
  tls_win_cost = 0;
}

/* What timing a launch cost its thread in this file (adaptive mode). Only
 * launches count: copies and memsets are timed whatever N is, so their
 * cost would only drive N up to its bound and leave kernels untimed (a
 * loop of a launch and two small copies reached 1 in 65,536 on a busy
 * machine). */
static __thread int tls_op_costed __attribute__((tls_model("initial-exec")));
static inline uint64_t cost_begin(unsigned what) {
  tls_op_costed = gt_dt_adaptive && what == GT_DT_LAUNCH;
  return tls_op_costed ? gt_now() : 0;
}
/* The same op's later halves (gt_dt_after, gt_dt_commit_slow). */
static inline uint64_t cost_again(void) {
  return tls_op_costed ? gt_now() : 0;
}
/* An op's timing takes microseconds; one measured far longer was preempted
 * (a loaded machine, a sanitized build), and the time it was off the core
 * is not what timing cost the thread: counted up to DT_OP_COST_CAP (gt_now
 * units: 100 us in ns, ~33 us in ticks), so that one preemption in a window
 * cannot double N. */
#define DT_OP_COST_CAP 100000u
static inline void cost_end(uint64_t t0) {
  if (t0 != 0) {
    uint64_t cost = gt_now() - t0;
    tls_win_cost += cost < DT_OP_COST_CAP ? cost : DT_OP_COST_CAP;
  }
}

static int events_before(const void *stream, int ptsz) {
  if (__builtin_expect(__atomic_load_n(&gt_dt.thread_state, __ATOMIC_ACQUIRE) == 0, 0) &&
      gt_dt_start_thread() != 0) {
    dt_set_enabled(0); /* no resolver: no timing */
    return 0;
  }
  if (gt_dt_cu.peek() != 0)
    return -R_ERROR_STATE;
  cudaStream_t s = stream_for(stream, ptsz);
  /* While a capture is open: no event from a capturing thread (CUDA
   * forbids its queries, and its events would join the capture), and the
   * legacy stream is not even asked (using it then can invalidate a
   * capture). */
  if ((gt_mode_now() & GT_MODE_CAPTURE) &&
      (s == NULL || s == cudaStreamLegacy || gt_capture_thread_captures()))
    return -R_CAPTURE;
  if (capturing(s))
    return -R_CAPTURE;
  int dev = 0;
  if (gt_dt_cu.get_device(&dev) != 0) {
    gt_dt_cu.get_last();
    return -R_FAILED;
  }
  if (dev < 0 || dev >= DT_MAX_DEV)
    return -R_DEVICE;
  int32_t i = take_slot(dev);
  if (i < 0)
    return i;
  if (__builtin_expect(!__atomic_load_n(&g_exit_registered, __ATOMIC_RELAXED), 0))
    gt_dt_register_exit(); /* events exist: the runtime registered its teardown */
  struct dt_slot *slot = &gt_dt.slots[i];
  slot->stream = stream;
  slot->ptsz = (uint8_t)ptsz;
  if (gt_dt_cu.event_record(slot->ev[0], s) != 0) {
    gt_dt_cu.get_last();
    release(i);
    return -R_FAILED;
  }
  slot->host_lb = gt_mono_ns();
  return i + 1;
}

void gt_corr_wrapped(void) {
  gt_tls_corr = 1; /* 0 means "no correlation id" */
}

int gt_dt_before(unsigned what, const void *key, const void *stream, int ptsz) {
  (void)key;
  if (__builtin_expect(gt_tls_dt_token != 0, 0))
    gt_tls_dt_token = 0; /* a hook that never committed: cannot happen */
  uint64_t c0 = cost_begin(what);
  int saved_errno = errno;
  int src = __atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE);
  if (__builtin_expect(src == DT_SRC_NONE, 0))
    src = select_source();
  int token = 0;
  if (src != DT_SRC_NONE && !__atomic_load_n(&gt_dt.dead, __ATOMIC_ACQUIRE)) {
    /* each timed op stands for the calls sampling skipped (its DEVICE
     * record's `sample`); adaptive mode times every copy and memset */
    tls_op_sample = what == GT_DT_LAUNCH || !gt_dt_adaptive ? gt_tls_dt_n : 1;
    if (src == DT_SRC_CUPTI) {
      tls_cupti_stream = stream;
      tls_cupti_ptsz = ptsz;
      tls_cupti_call_ns = gt_mono_ns();
      token = gt_cupti_before();
    } else {
      token = events_before(stream, ptsz);
    }
  }
  errno = saved_errno;
  cost_end(c0);
  return token;
}

static void dt_after(int token, cudaError_t result);

void gt_dt_after(int token, cudaError_t result) {
  uint64_t c0 = cost_again();
  dt_after(token, result);
  cost_end(c0);
}

static void dt_after(int token, cudaError_t result) {
  if (token < 0) {
    if (result == 0)
      gt_count_dropped(GT_KIND_DEVICE, 1);
    return;
  }
  if (token == DT_TOKEN_CUPTI) {
    gt_cupti_after(result);
    gt_tls_dt_token = result == 0 ? token : 0;
    return;
  }
  int32_t i = token - 1;
  struct dt_slot *s = &gt_dt.slots[i];
  if (result != 0) {
    release(i); /* nothing ran between the events */
    return;
  }
  s->host_end = gt_mono_ns(); /* the work was queued by the call's return */
  if (gt_dt_cu.event_record(s->ev[1], stream_for(s->stream, s->ptsz)) != 0) {
    gt_dt_cu.get_last(); /* clear before: the call succeeded */
    release(i);
    gt_count_dropped(GT_KIND_DEVICE, 1);
    return;
  }
  gt_tls_dt_token = token;
}

static uint64_t stream_key(const struct dt_slot *s) {
  uintptr_t h = (uintptr_t)s->stream;
  if (h == 0)
    return s->ptsz ? 0x2 : 0x1;
  return h;
}

static void fill_from_record(struct dt_slot *s, const struct gt_record *rec) {
  s->tid = rec->tid;
  s->api = rec->api;
  s->of_kind = rec->kind;
  s->flags = rec->flags &
             (GT_F_PINNED | GT_F_ASYNC | GT_F_KERNEL_HANDLE | GT_F_GRAPH | GT_F_PAGEABLE);
  s->stream_key = stream_key(s);
  s->sample = tls_op_sample;
  s->kernel = s->bytes = 0;
  s->dir = 0;
  s->shape = 0;
  switch (rec->kind) {
  case GT_KIND_LAUNCH:
    s->kernel = rec->u.launch.kernel;
    s->corr = rec->u.launch.corr;
    s->shape = gt_launch_shape(rec->u.launch.grid, rec->u.launch.block,
                               rec->u.launch.shared_mem);
    break;
  case GT_KIND_MEMCPY:
    s->bytes = rec->u.copy.bytes;
    s->dir = rec->u.copy.dir;
    s->corr = rec->u.copy.corr;
    break;
  default:
    s->bytes = rec->u.set.bytes;
    s->corr = rec->u.set.corr;
    break;
  }
}

static void dt_commit(const struct gt_record *rec);

void gt_dt_commit_slow(const struct gt_record *rec) {
  uint64_t c0 = cost_again();
  dt_commit(rec);
  cost_end(c0);
}

static void dt_commit(const struct gt_record *rec) {
  int token = gt_tls_dt_token;
  gt_tls_dt_token = 0;
  if (token == DT_TOKEN_CUPTI) {
    struct dt_slot op = {.stream = tls_cupti_stream, .ptsz = (uint8_t)tls_cupti_ptsz};
    fill_from_record(&op, rec);
    gt_cupti_commit(&op, tls_cupti_call_ns);
    return;
  }
  int32_t i = token - 1;
  struct dt_slot *s = &gt_dt.slots[i];
  fill_from_record(s, rec);
  if (rec->kind != GT_KIND_LAUNCH || (rec->flags & (GT_F_GRAPH | GT_F_HOST_FN)))
    s->host_end = 0; /* only a kernel's start is estimated (devtime_resolve.c) */
  if (rec->kind == GT_KIND_MEMCPY && s->dir == GT_DIR_HTOH) {
    release(i); /* a host copy: nothing ran on the device */
    return;
  }
  pthread_mutex_lock(&gt_dt.mu);
  s->next = -1;
  if (gt_dt.pend_tail >= 0)
    gt_dt.slots[gt_dt.pend_tail].next = i;
  else
    gt_dt.pend_head = i;
  gt_dt.pend_tail = i;
  if (gt_dt.npending++ == 0 && gt_dt.waiting)
    pthread_cond_signal(&gt_dt.wake);
  pthread_mutex_unlock(&gt_dt.mu);
}

/* ---- exit ---- */

static void dt_atexit(void) {
  if (g_atexit_pid != getpid())
    return; /* registered by the parent of this forked child */
  int saved_errno = errno;
  dt_set_enabled(0);
  pthread_mutex_lock(&gt_dt.mu);
  gt_dt.stopping = 1;
  pthread_cond_signal(&gt_dt.wake);
  pthread_mutex_unlock(&gt_dt.mu);
  pthread_mutex_lock(&gt_dt.resolve_mu); /* the resolver is between sweeps */
  if (!gt_dt.dead) {
    gt_tls_depth++;                /* our CUDA calls stay untraced on this thread too */
    int prev = gt_capture_relax(); /* legal during another thread's capture */
    if (__atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE) == DT_SRC_CUPTI) {
      gt_cupti_flush(1);
      const char *why = gt_cupti_trouble_now();
      if (why != NULL)
        gt_warn(
            "gputrace: CUPTI stopped (%s) at exit; the calls it did not time are counted "
            "as untimed",
            why);
      gt_cupti_final_words(1);
    } else {
      gt_cupti_final_words(1); /* a session that stopped earlier: its stragglers */
    }
    if (__atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE) != DT_SRC_CUPTI)
      gt_dt_sweep(1);
    gt_capture_restore(prev);
    gt_tls_depth--;
    __atomic_store_n(&gt_dt.dead, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&gt_dt.resolve_mu);
  errno = saved_errno;
}

/* Called once the runtime is initialized (events or CUPTI exist), so that
 * dt_atexit runs before the runtime's own teardown. */
void gt_dt_register_exit(void) {
  if (__atomic_exchange_n(&g_exit_registered, 1, __ATOMIC_ACQ_REL))
    return;
  g_atexit_pid = getpid();
  atexit(dt_atexit);
}

/* ---- cudaDeviceReset ---- */

/* Every event and anchor died with the context: pending ops go untimed and
 * slots get new events when next taken (generation). Caller holds
 * resolve_mu. */
static void forget_events(void) {
  pthread_mutex_lock(&gt_dt.mu);
  uint64_t lost = gt_dt.npending;
  for (int32_t i = gt_dt.pend_head, next; i >= 0; i = next) {
    next = gt_dt.slots[i].next;
    gt_dt_release_locked(i);
  }
  gt_dt.pend_head = gt_dt.pend_tail = -1;
  gt_dt.npending = 0;
  for (int d = 0; d < DT_MAX_DEV; d++)
    gt_dt.dev[d].gen++;
  pthread_mutex_unlock(&gt_dt.mu);
  gt_dt_resolver_forget();
  if (lost)
    gt_count_dropped(GT_KIND_DEVICE, lost);
}

GT_EXPORT cudaError_t cudaDeviceReset(void) {
  GT_REAL_UNLISTED(cudaDeviceReset, cudaError_t, (void));
  int events = __atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE) == DT_SRC_EVENTS;
  if (events)
    pthread_mutex_lock(&gt_dt.resolve_mu);
  cudaError_t r = real_cudaDeviceReset();
  int saved_errno = errno;
  if (events) {
    forget_events();
    pthread_mutex_unlock(&gt_dt.resolve_mu);
  }
  if (r == 0)
    gt_capture_reset(); /* the streams went, and their captures */
  errno = saved_errno;
  return r;
}
