/* devtime_resolve.c — the resolver thread: turns completed event pairs into
 * DEVICE records on the host clock (docs/devtime.md, "The clock").
 *
 * Contract:
 *  - One detached thread per process ("gputrace-dt"), started by the first
 *    timed call, all signals blocked, the recursion guard held for life (no
 *    call of its own is traced). While ops are pending it sweeps every 2 ms;
 *    otherwise it sleeps until the queue becomes non-empty. In CUPTI mode
 *    it flushes and parses the activity buffers every 20 ms instead (the
 *    choice of CUPTI wakes it), checks the session's health (cupti.c
 *    gt_cupti_trouble) and, when it fails, stops CUPTI and times with
 *    events from then on, with one warning saying why.
 *  - Events: a kernel whose span overlaps one of the device's last 64
 *    spans on another stream is flagged GT_F_UPPER_BOUND (it may have
 *    waited behind that work).
 *  - A sweep takes the whole queue, queries each op's end event in queue
 *    order (after one NotReady op it skips the rest of that stream: work on
 *    a stream completes in order), and puts what is not complete back at
 *    the head. It never waits for the app's work.
 *  - Clock: each device has a private non-blocking stream that is always
 *    idle, so an anchor event recorded there completes at once. The first
 *    anchor's host time is the midpoint of the window from before its
 *    cudaEventRecord to the cudaEventQuery that saw it complete
 *    (CLOCK_MONOTONIC; a window within 1 us of the tightest of 5 tries or
 *    more); later anchors (every 10 ms of sweeping) are chained on the
 *    device clock, host(A') = host(A) + elapsed(A, A'), and re-based on
 *    their own measurement only when the two disagree by more than 50 us
 *    (clock drift). An op's end = host(A) + elapsed(A, end), its start =
 *    end - elapsed(start, end); a kernel launch's start then raised to
 *    when the host had queued it, host_end + the device's submission lag
 *    (launch_start, devtime_lag.h: on an idle stream the start event runs
 *    before the kernel is queued), the difference kept as wait_ns; then
 *    clamped to no earlier than the host time just after its start event
 *    was recorded (work cannot start before it was queued), and nudged by
 *    at most 64 ns to keep each stream's records in order despite float
 *    rounding.
 *  - DEVICE records carry CLOCK_MONOTONIC ns in ts_ns and dur_ns whatever
 *    the ring's clock: the collector does not convert them.
 *  - An op whose events fail (not NotReady) goes untimed and is counted.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "devtime_int.h"
#include "devtime_lag.h"
#include "transport.h"

#define DT_SWEEP_NS 2000000ll /* between sweeps while ops are pending */
#define DT_CUPTI_FLUSH_NS 20000000ll
#define DT_IDLE_WAIT_NS 200000000ll /* re-check for exit while idle */
#define DT_ANCHOR_EVERY_NS 10000000ull
#define DT_RESYNC_NS 50000ll
#define DT_GOOD_WINDOW_NS 50000ull /* an anchor measured tighter than this is trusted */
#define DT_ANCHOR_WAIT_NS 2000000ull
/* A device's first anchor: a try within DT_ANCHOR_SLACK_NS of the tightest
 * window of at least DT_ANCHOR_TRIES (at most DT_ANCHOR_TRIES_MAX). */
#define DT_ANCHOR_TRIES 5
#define DT_ANCHOR_TRIES_MAX 16
#define DT_ANCHOR_SLACK_NS 1000ull
#define DT_ROUNDING_NS 64ll
#define DT_BLOCKED_MAX 64

/* Per stream: the end of the last record emitted (resolve_mu). */
static struct {
  uint64_t key;
  int64_t end;
} g_last[256];

struct sweep {
  int32_t kept_head, kept_tail, freed, bare;
  uint32_t kept;
  uint64_t lost;
  uint32_t anchored, failed; /* device bits, this sweep */
  uint32_t pid;
  int nblocked;
  uint64_t blocked[DT_BLOCKED_MAX];
};

static int elapsed_ns(cudaEvent_t a, cudaEvent_t b, int64_t *out) {
  float ms = 0;
  if (gt_dt_cu.elapsed(&ms, a, b) != 0)
    return -1;
  double ns = (double)ms * 1e6;
  *out = (int64_t)(ns >= 0 ? ns + 0.5 : ns - 0.5);
  return 0;
}

/* ---- a kernel's start on an idle stream ---- */

static void lag_note(struct dt_device *d, int64_t lag) {
  d->lag_fresh++;
  d->lags[d->lag_next] = lag;
  d->lag_next = (d->lag_next + 1) % DT_LAGS;
  d->nlags += d->nlags < DT_LAGS;
}

/* Made again after each new lag while there are few, then after every 32
 * (a 256-value insertion sort). */
static void lag_estimate(struct dt_device *d) {
  if (!d->lag_fresh || (d->nlags > 64 && d->lag_fresh < 32))
    return;
  d->lag_fresh = 0;
  int64_t v[DT_LAGS];
  memcpy(v, d->lags, d->nlags * sizeof v[0]);
  d->lag_known = gt_dt_lag_estimate(v, d->nlags, &d->lag);
}

/* When a kernel started: its start event ran once the stream's earlier
 * work was done, or, on an idle stream, once the host queued the event,
 * before the launch call (4-5 us of host work on an H200) had queued the
 * kernel: then the kernel started about a lag after the call returned,
 * not at the event. max(start, host_end + lag), unless that reaches the
 * end (then the estimate is off: the event's start is kept). */
static int64_t launch_start(struct dt_device *d, const struct dt_slot *s, int64_t start,
                            int64_t end) {
  if (s->host_end)
    lag_estimate(d);
  if (!s->host_end || !d->lag_known)
    return start;
  int64_t queued = (int64_t)s->host_end + d->lag;
  return queued > start && queued < end ? queued : start;
}

/* ---- anchors ---- */

static int device_setup(struct dt_device *d, int dev) {
  if (gt_dt_cu.set_device(dev) != 0 ||
      gt_dt_cu.stream_create(&d->stream, cudaStreamNonBlocking) != 0 ||
      gt_dt_cu.event_create(&d->anchor[0], cudaEventDefault) != 0 ||
      gt_dt_cu.event_create(&d->anchor[1], cudaEventDefault) != 0)
    return -1; /* what was made is leaked: this only fails when CUDA is broken */
  d->ready = 1;
  d->ready_gen = d->gen;
  d->have_ref = 0;
  d->cur = 0;
  return 0;
}

/* Record `ev` on the idle private stream and poll until it completes: its
 * device time lies in [t0, t1], so the midpoint is off by at most half the
 * window. (A private stream can still share a hardware queue with busy
 * streams; a long window then says so, and the measurement is not used.) */
static int measure(struct dt_device *d, cudaEvent_t ev, int64_t *mid, uint64_t *window) {
  uint64_t t0 = gt_mono_ns(), t1;
  if (gt_dt_cu.event_record(ev, d->stream) != 0)
    return -1;
  for (;;) {
    cudaError_t q = gt_dt_cu.event_query(ev);
    t1 = gt_mono_ns();
    if (q == 0)
      break;
    if (q != cudaErrorNotReady)
      return -1;
    if (t1 - t0 > DT_ANCHOR_WAIT_NS) {
      if (gt_dt_cu.event_sync(ev) != 0)
        return -1;
      t1 = gt_mono_ns();
      break;
    }
  }
  *mid = (int64_t)(t0 + (t1 - t0) / 2);
  *window = t1 - t0;
  return 0;
}

/* Take anchor[next] and give it a host time: the first one measured about
 * as tightly as it can be (its error, up to half its window, stays in every
 * record of the device through the chain; a try preempted between reading
 * the clock and recording the event reads early by up to half its window,
 * which cuts kernels on an idle stream short under load: docs/devtime.md,
 * "The clock"), later ones chained on the device clock and re-based on a
 * good measurement only when the two drift apart. Each try records the
 * event again, so the last try is the one used. */
static int take_anchor(struct dt_device *d) {
  int next = !d->cur;
  int64_t host;
  uint64_t window, tightest = UINT64_MAX;
  for (int tries = 1;; tries++) {
    if (measure(d, d->anchor[next], &host, &window) != 0)
      return -1;
    if (window < tightest)
      tightest = window;
    if (d->have_ref || tries == DT_ANCHOR_TRIES_MAX ||
        (tries >= DT_ANCHOR_TRIES && window <= tightest + DT_ANCHOR_SLACK_NS))
      break;
  }
  if (d->have_ref) {
    int64_t el;
    if (elapsed_ns(d->anchor[d->cur], d->anchor[next], &el) != 0)
      return -1;
    int64_t chained = d->ref_host + el, err = host - chained;
    if (window > DT_GOOD_WINDOW_NS || (err < DT_RESYNC_NS && err > -DT_RESYNC_NS))
      host = chained; /* keep one consistent mapping; re-base only on drift */
  }
  d->cur = next;
  d->ref_host = host;
  d->ref_at = gt_mono_ns();
  d->have_ref = 1;
  return 0;
}

/* The device's anchor for this sweep, fresh enough; NULL if none can be had. */
static struct dt_device *anchor_for(struct sweep *sw, int dev) {
  uint32_t bit = 1u << dev;
  if (sw->anchored & bit)
    return &gt_dt.dev[dev];
  if (sw->failed & bit)
    return NULL;
  struct dt_device *d = &gt_dt.dev[dev];
  int ok = 1;
  if (!d->ready || d->ready_gen != d->gen)
    ok = device_setup(d, dev) == 0;
  if (ok && (!d->have_ref || gt_mono_ns() - d->ref_at > DT_ANCHOR_EVERY_NS))
    ok = take_anchor(d) == 0;
  if (ok)
    sw->anchored |= bit;
  else
    sw->failed |= bit;
  return ok ? d : NULL;
}

void gt_dt_resolver_forget(void) {
  memset(g_last, 0, sizeof g_last);
  for (int i = 0; i < DT_MAX_DEV; i++) { /* dead handles: never touched again */
    gt_dt.dev[i].ready = 0;
    gt_dt.dev[i].have_ref = 0;
  }
}

/* ---- one op ---- */

/* What identifies the op's stream: per device; the per-thread default
 * stream per host thread. */
static uint64_t stream_id(const struct dt_slot *s) {
  uint64_t k = s->stream_key ^ ((uint64_t)(s->dev1 - 1) << 56);
  return s->stream_key == 0x2 ? k ^ ((uint64_t)s->tid << 24) : k;
}

static int is_blocked(const struct sweep *sw, uint64_t id) {
  for (int i = 0; i < sw->nblocked; i++)
    if (sw->blocked[i] == id)
      return 1;
  return 0;
}

/* Keep one stream's records ordered across float rounding. */
static void keep_order(uint64_t id, int64_t *start, int64_t *end) {
  unsigned h = (unsigned)((id * 0x9E3779B97F4A7C15ull) >> 56);
  if (g_last[h].key == id && *start < g_last[h].end &&
      g_last[h].end - *start <= DT_ROUNDING_NS) {
    *start = g_last[h].end;
    if (*end < *start)
      *end = *start;
  }
  if (g_last[h].key != id || *end > g_last[h].end) {
    g_last[h].key = id;
    g_last[h].end = *end;
  }
}

/* Whether the kernel [start, end) on stream `id` overlaps the span of an op
 * resolved before it on another stream of device d; every op's span is
 * noted among d's recent ones. Ops resolve in the order they were queued,
 * so of two overlapping spans the later one is the one that may have
 * waited behind the other. Only kernels are checked (the per-kernel table
 * shows the flag), and only when the span starts before the latest end
 * noted: one stream's work in sequence costs a compare. */
static int overlapped(struct dt_device *d, uint64_t id, int kernel, int64_t start,
                      int64_t end) {
  int hit = 0;
  for (unsigned i = 0; kernel && start < d->recent_max && i < DT_RECENT && !hit; i++)
    hit = d->recent[i].stream != 0 && d->recent[i].stream != id &&
          start < d->recent[i].end && d->recent[i].start < end;
  unsigned k = d->recent_next++ % DT_RECENT;
  d->recent[k].stream = id;
  d->recent[k].start = start;
  d->recent[k].end = end;
  if (end > d->recent_max)
    d->recent_max = end;
  return hit;
}

static void emit_device(const struct dt_slot *s, int64_t start, int64_t end,
                        uint32_t wait_ns, uint32_t pid, int upper_bound) {
  struct gt_record rec;
  gt_dt_device_begin(&rec, pid, s->tid, s->api,
                     s->flags | (upper_bound ? GT_F_UPPER_BOUND : 0u), (uint64_t)start,
                     (uint64_t)(end - start), GT_DEVTIME_EVENTS, s->sample);
  rec.u.device.stream = s->stream_key;
  rec.u.device.kernel = s->kernel;
  rec.u.device.bytes = s->bytes;
  rec.u.device.corr = s->corr;
  rec.u.device.of_kind = s->of_kind;
  rec.u.device.dir = s->dir;
  rec.u.device.device = s->dev1 - 1;
  rec.u.device.shape = s->shape;
  rec.u.device.wait_ns = wait_ns;
  gt_emit_device(&rec);
}

static void keep(struct sweep *sw, int32_t i) {
  gt_dt.slots[i].next = -1;
  if (sw->kept_tail >= 0)
    gt_dt.slots[sw->kept_tail].next = i;
  else
    sw->kept_head = i;
  sw->kept_tail = i;
  sw->kept++;
}

static void push(int32_t *list, int32_t i) {
  gt_dt.slots[i].next = *list;
  *list = i;
}

/* Ops that completed: a DEVICE record; errors: counted untimed. */
static void resolve_one(struct sweep *sw, int32_t i) {
  struct dt_slot *s = &gt_dt.slots[i];
  uint64_t id = stream_id(s);
  if (is_blocked(sw, id)) {
    keep(sw, i);
    return;
  }
  cudaError_t q = gt_dt_cu.event_query(s->ev[1]);
  if (q == cudaErrorNotReady) {
    if (sw->nblocked < DT_BLOCKED_MAX)
      sw->blocked[sw->nblocked++] = id;
    keep(sw, i);
    return;
  }
  if (q != 0) { /* the events themselves are broken: never reuse them */
    sw->lost++;
    push(&sw->bare, i);
    return;
  }
  struct dt_device *d = anchor_for(sw, s->dev1 - 1);
  int64_t el_end, dur;
  if (d == NULL || elapsed_ns(d->anchor[d->cur], s->ev[1], &el_end) != 0 ||
      elapsed_ns(s->ev[0], s->ev[1], &dur) != 0) {
    sw->lost++;
    push(&sw->freed, i);
    return;
  }
  int64_t end = d->ref_host + el_end, start = end - (dur > 0 ? dur : 0);
  lag_note(d, start - (int64_t)s->host_lb);
  int64_t queued = launch_start(d, s, start, end);
  uint32_t wait_ns =
      queued - start < UINT32_MAX ? (uint32_t)(queued - start) : UINT32_MAX;
  start = queued;
  if (start < (int64_t)s->host_lb)
    start = (int64_t)s->host_lb; /* cannot have started before it was queued */
  if (end < start)
    end = start;
  keep_order(id, &start, &end);
  emit_device(s, start, end, wait_ns, sw->pid,
              overlapped(d, id | 1ull << 63, s->of_kind == GT_KIND_LAUNCH, start, end));
  push(&sw->freed, i);
}

/* ---- the sweep ---- */

static void put_back(struct sweep *sw) {
  pthread_mutex_lock(&gt_dt.mu);
  if (sw->kept_head >= 0) {
    gt_dt.slots[sw->kept_tail].next = gt_dt.pend_head;
    if (gt_dt.pend_tail < 0)
      gt_dt.pend_tail = sw->kept_tail;
    gt_dt.pend_head = sw->kept_head;
    gt_dt.npending += sw->kept;
  }
  for (int32_t i = sw->freed, next; i >= 0; i = next) {
    next = gt_dt.slots[i].next;
    gt_dt_release_locked(i);
  }
  for (int32_t i = sw->bare, next; i >= 0; i = next) {
    next = gt_dt.slots[i].next;
    gt_dt.slots[i].dev1 = 0;
    push(&gt_dt.free_bare, i);
  }
  pthread_mutex_unlock(&gt_dt.mu);
}

void gt_dt_sweep(int final) {
  (void) final; /* the same sweep: what is not complete is left */
  struct sweep sw;
  memset(&sw, 0, sizeof sw);
  sw.kept_head = sw.kept_tail = sw.freed = sw.bare = -1;
  pthread_mutex_lock(&gt_dt.mu);
  int32_t head = gt_dt.pend_head;
  gt_dt.pend_head = gt_dt.pend_tail = -1;
  gt_dt.npending = 0;
  pthread_mutex_unlock(&gt_dt.mu);
  if (head < 0)
    return;
  sw.pid = (uint32_t)getpid();
  for (int32_t i = head, next; i >= 0; i = next) {
    next = gt_dt.slots[i].next;
    resolve_one(&sw, i);
  }
  put_back(&sw);
  if (sw.lost)
    gt_count_dropped(GT_KIND_DEVICE, sw.lost);
}

/* ---- the thread ---- */

static void pause_ns(long long ns) {
  struct timespec ts = {ns / 1000000000ll, ns % 1000000000ll};
  nanosleep(&ts, NULL);
}

static void cupti_cycle(void) {
  gt_cupti_flush(0);
  const char *why = gt_cupti_trouble();
  if (why == NULL)
    return;
  gt_cupti_flush(1); /* what arrived so far, and every call still waiting counted */
  gt_cupti_stop();
  gt_cupti_final_words(0);
  __atomic_store_n(&gt_dt_source, DT_SRC_EVENTS, __ATOMIC_RELEASE);
  gt_warn("gputrace: CUPTI stopped (%s); timing device work with CUDA events", why);
}

static void *resolver_main(void *arg) {
  (void)arg;
  gt_tls_depth = 1; /* nothing this thread calls is traced */
  /* Its event queries, syncs and records are "potentially unsafe" calls,
   * which a thread in the default (global) capture mode may not make while
   * any other thread captures in global mode (PyTorch's default): the call
   * would fail and invalidate the application's capture. Relaxed, they are
   * legal whenever; the private stream and the timed events never belong
   * to a capture (capture.h). */
  gt_capture_relax();
  pthread_mutex_lock(&gt_dt.mu);
  while (!gt_dt.stopping) {
    int cupti = __atomic_load_n(&gt_dt_source, __ATOMIC_ACQUIRE) == DT_SRC_CUPTI;
    if (!cupti && gt_dt.npending == 0) {
      struct timespec until;
      clock_gettime(CLOCK_MONOTONIC, &until);
      until.tv_sec += DT_IDLE_WAIT_NS / 1000000000ll;
      until.tv_nsec += DT_IDLE_WAIT_NS % 1000000000ll;
      if (until.tv_nsec >= 1000000000l) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000l;
      }
      gt_dt.waiting = 1;
      pthread_cond_timedwait(&gt_dt.wake, &gt_dt.mu, &until);
      gt_dt.waiting = 0;
      continue;
    }
    pthread_mutex_unlock(&gt_dt.mu);
    pause_ns(cupti ? DT_CUPTI_FLUSH_NS : DT_SWEEP_NS);
    pthread_mutex_lock(&gt_dt.resolve_mu);
    if (!__atomic_load_n(&gt_dt.dead, __ATOMIC_ACQUIRE)) {
      if (cupti)
        cupti_cycle();
      else
        gt_dt_sweep(0);
    }
    pthread_mutex_unlock(&gt_dt.resolve_mu);
    pthread_mutex_lock(&gt_dt.mu);
  }
  pthread_mutex_unlock(&gt_dt.mu);
  return NULL;
}

int gt_dt_start_thread(void) {
  pthread_mutex_lock(&gt_dt.mu);
  int st = gt_dt.thread_state;
  if (st == 0) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the app's handlers never run here */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 1u << 20);
    pthread_t t;
    int rc = pthread_create(&t, &attr, resolver_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
      pthread_setname_np(t, "gputrace-dt");
    st = rc == 0 ? 1 : 2;
    __atomic_store_n(&gt_dt.thread_state, st, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&gt_dt.mu);
    if (st != 1)
      gt_warn("gputrace: cannot start the device timing thread; device times are off");
    return st == 1 ? 0 : -1;
  }
  pthread_mutex_unlock(&gt_dt.mu);
  return st == 1 ? 0 : -1;
}
