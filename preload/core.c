/* core.c — the shim's life cycle: lazy start, the recursion guard, record
 * emission, fork. (Symbol resolution: resolve.c.)
 *
 * Contract:
 *  - At load time (construct(), also run by a hook that comes before the
 *    constructor) the shim reads its knobs, checks the TSC (cpuid, the
 *    kernel's clocksource), configures stacks, launches, device timing and
 *    ranges, makes the thread-exit key, sets NVTX_INJECTION64_PATH; under
 *    plain LD_PRELOAD (no GPUTRACE_SOCKET) it takes a stand-alone
 *    collector's socket when one runs (GPUTRACE_SOCKET_DIR: an lstat, and
 *    an open and flock of its lock file when it is there), else picks the
 *    output and socket and setenvs both for children, making the socket
 *    directory (0700) if missing (transport.c); it arms the wipe-on-fork
 *    page and registers the fork handler. No ring, no collector, no
 *    thread: those come with the first traced call, so a process that
 *    never touches CUDA costs a few syscalls at start.
 *  - Tracing states: OFF (not started), STARTING (one thread connects while
 *    the others wait briefly), ON, DISABLED (no collector, GPUTRACE_DISABLE,
 *    or the collector went away: calls are only forwarded, one warning).
 *  - A child process drops the parent's ring and connection without touching
 *    them and starts its own on its first traced call, under its own pid:
 *    from fork()'s child handler, or, for a child that clone() made without
 *    fork()'s handlers, from its first slow path (the kernel hands it the
 *    page of gt_wiped zeroed: tracing off). There the thread clone()
 *    returned in (tid == pid) inherited the parent thread's thread-local
 *    state; until it has reset its own (its first slow path), the child
 *    traces nothing, and the calls of its other threads are counted
 *    (dropped[NONE]) in its own ring. Without MADV_WIPEONFORK (Linux before
 *    4.14) such a child is not found (docs/cli.md, record).
 *  - Each thread writes its records to a sub-ring of its own (ring.h),
 *    claimed at its first record and retired by a thread-specific-data
 *    destructor at its exit; a thread that finds none free, or writes after
 *    its retirement, uses the shared ring; DEVICE records, whichever
 *    thread makes them, share one sub-ring (gt_emit_device). Every write
 *    happens with the recursion guard held, so a signal handler's CUDA
 *    call never writes into a sub-ring the interrupted code is writing.
 *  - A full sub-ring is waited on before a record is dropped: the thread
 *    yields its core while the collector reads its sub-ring, and gives up
 *    after GPUTRACE_FULL_WAIT_US (default 50 ms) without (a stalled or gone
 *    collector: it then drops at once for 10 s) or 1 s in all (full_wait).
 *    The shared ring drops at once. Every drop is counted in the header.
 *  - No destructor: records are in shared memory the moment they are
 *    committed, so exit, _exit, a crash or SIGKILL lose nothing already
 *    written, and no CUDA call is made at teardown. (Device timing,
 *    devtime.c, resolves completed work from an atexit handler that runs
 *    before the runtime's own teardown; gt_dt_configure is called from the
 *    constructor.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture.h"
#include "devtime.h"
#include "gputrace/knobs.h"
#include "gputrace/protocol.h"
#include "gputrace/ring.h"
#include "range.h"
#include "shim.h"
#include "transport.h"

enum { ST_OFF = 0, ST_STARTING = 1, ST_ON = 2, ST_DISABLED = 3 };

/* Adoption of a child process (gt_wiped.adopt): none yet (the kernel
 * wiped the page), one thread is at it, the process's state is its own but
 * its first thread's is not yet, done. */
enum { ADOPT_NONE = 0, ADOPT_BUSY = 1, ADOPT_PROCESS = 2, ADOPT_DONE = 3 };

struct gt_wiped gt_wiped __attribute__((aligned(GT_WIPED_BYTES)));
#define g_state (gt_wiped.state)
static _Atomic int g_state_copy; /* g_state outside the page: what a child inherited */
static int g_wipe_armed;         /* the kernel wipes gt_wiped in children */
static int g_tsc;                /* GT_MODE_TSC, outside the page */
static _Atomic int g_constructed;
static struct gt_ring g_ring;
static uint32_t g_pid;
static int g_quiet;
static _Atomic uint64_t g_skipped_while_starting;

/* The first launch of a thread opens its first device-timing window. */
__thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec"))) = {
    .dt_n = 1, .dt_calls = GT_DT_WINDOW - 1};
static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));
/* DEVICE records come from the resolver thread, CUPTI's, and the exiting
 * thread's final sweep: all through one sub-ring of their own, under a
 * mutex (off the launch path), so that they reach the trace in the order
 * they were made — per stream, in device time order, as readers expect —
 * whichever thread made them. */
static pthread_mutex_t g_dev_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gt_ring_producer g_dev_prod;
static pthread_key_t g_retire_key;
static pthread_once_t g_retire_once = PTHREAD_ONCE_INIT;

void gt_warn(const char *fmt, ...) {
  if (g_quiet)
    return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof buf - 2)
    n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t ignored = write(2, buf, (size_t)n); /* no stdio: the app owns it */
  (void)ignored;
}

static uint32_t current_tid(void) {
  if (__builtin_expect(tls_tid == 0, 0))
    tls_tid = (uint32_t)syscall(SYS_gettid);
  return tls_tid;
}

static void state_set(int st) {
  atomic_store(&g_state, st);
  atomic_store_explicit(&g_state_copy, st, memory_order_relaxed);
}

/* 1 when the state was `from` and is now `to`. */
static int state_move(int from, int to) {
  if (!atomic_compare_exchange_strong(&g_state, &from, to))
    return 0;
  atomic_store_explicit(&g_state_copy, to, memory_order_relaxed);
  return 1;
}

/* ---- child processes ---- */

/* 1 while this process has not made what it inherited its own. */
static int unadopted(void) {
  return g_wipe_armed && __atomic_load_n(&gt_wiped.adopt, __ATOMIC_SEQ_CST) != ADOPT_DONE;
}

/* The calling thread's own state, in place of its parent thread's. */
static void adopt_thread(void) {
  tls_tid = 0;
  memset(&gt_tls_prod, 0, sizeof gt_tls_prod); /* the parent's sub-ring */
  gt_tls_dt_token = 0;
  gt_launch_after_fork();
}

/* In a child process: the parent's ring and socket stay the parent's:
 * forget them, and start afresh on this process's first traced call. The
 * mode word starts over (wiped by the kernel, or the parent's without
 * MADV_WIPEONFORK), each part setting its bit again. */
static void adopt_process(void) {
  int was = atomic_load(&g_state_copy);
  memset(&g_dev_prod, 0, sizeof g_dev_prod);
  pthread_mutex_init(&g_dev_mu, NULL);
  g_pid = (uint32_t)getpid();
  atomic_store(&g_skipped_while_starting, 0);
  __atomic_store_n(&gt_mode, g_tsc ? GT_MODE_TSC : 0, __ATOMIC_SEQ_CST);
  gt_capture_after_fork(); /* a capture does not survive fork */
  gt_dt_after_fork();
  gt_range_after_fork();
  if (was == ST_ON || was == ST_STARTING) {
    gt_transport_forget();
    gt_stacks_after_fork();
    memset(&g_ring, 0, sizeof g_ring);
    was = ST_OFF;
  }
  state_set(was);
  adopt_thread();
}

/* fork()'s child handler: the child's one thread, before anything else of
 * ours runs in it (unless another library's handler made a CUDA call). */
static void atfork_child(void) {
  if (!g_wipe_armed || unadopted()) {
    adopt_process();
    __atomic_store_n(&gt_wiped.adopt, ADOPT_DONE, __ATOMIC_SEQ_CST);
  }
}

static void activate(void);

/* From the slow path of a child that clone() made without fork()'s
 * handlers (contract above): 1 when the calling thread may trace. */
static int adopt_child(void) {
  int first = syscall(SYS_gettid) == getpid(); /* not current_tid(): the parent's */
  for (;;) {
    int a = __atomic_load_n(&gt_wiped.adopt, __ATOMIC_SEQ_CST);
    if (a == ADOPT_DONE)
      return 1;
    if (a == ADOPT_NONE) {
      if (__atomic_compare_exchange_n(&gt_wiped.adopt, &a, ADOPT_BUSY, 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        adopt_process();
        __atomic_store_n(&gt_wiped.adopt, first ? ADOPT_DONE : ADOPT_PROCESS,
                         __ATOMIC_SEQ_CST);
        return first;
      }
    } else if (a == ADOPT_BUSY) {
      struct timespec pause = {0, 100000}; /* another thread adopts the process */
      nanosleep(&pause, NULL);
    } else if (!first) {
      return 0;
    } else { /* ADOPT_PROCESS: another thread adopted the process */
      adopt_thread();
      __atomic_store_n(&gt_wiped.adopt, ADOPT_DONE, __ATOMIC_SEQ_CST);
      /* One of this and start_tracing sees the other's store (both may:
       * names then go in twice, harmless). */
      if (atomic_load(&g_state) == ST_ON)
        activate();
      return 1;
    }
  }
}

static void start_tracing(void);

/* A call of a child whose first thread has not made its state its own:
 * forwarded untraced, and counted in the child's own ring (started here if
 * need be, but not activated), so that the loss shows in its trace. */
static int skip_unadopted(void) {
  int st = atomic_load(&g_state);
  if (st == ST_OFF && state_move(ST_OFF, ST_STARTING)) {
    gt_tls_depth = 1;
    start_tracing();
    gt_tls_depth = 0;
    st = atomic_load(&g_state);
  }
  if (st == ST_ON)
    atomic_fetch_add_explicit(&g_ring.hdr->dropped[GT_KIND_NONE], 1,
                              memory_order_relaxed);
  else if (st == ST_STARTING)
    atomic_fetch_add(&g_skipped_while_starting, 1);
  return 0;
}

/* Thread exit: hand the sub-ring back; its records stay for the collector.
 * Not in a child not yet adopted: no thread there has a sub-ring of its own,
 * and the first one's is its parent thread's. */
static void retire_thread(void *unused) {
  (void)unused;
  if (!unadopted())
    gt_ring_retire(&gt_tls_prod);
}

/* MADV_WIPEONFORK (Linux 4.14) on gt_wiped, when it is a page of its own. */
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
static void arm_wipe(void) {
  __atomic_store_n(&gt_wiped.adopt, ADOPT_DONE, __ATOMIC_SEQ_CST);
  g_wipe_armed = sysconf(_SC_PAGESIZE) == (long)sizeof gt_wiped &&
                 madvise(&gt_wiped, sizeof gt_wiped, MADV_WIPEONFORK) == 0;
}

static void make_retire_key(void) {
  if (pthread_key_create(&g_retire_key, retire_thread) != 0)
    g_retire_key = (pthread_key_t)-1;
}

/* ---- start-up ---- */

/* The TSC is a good clock here only if it is invariant (cpuid) and the
 * kernel trusts it enough to keep CLOCK_MONOTONIC with it: then every
 * process reads one consistent counter. GPUTRACE_CLOCK=monotonic opts out. */
static int tsc_usable(void) {
#if defined(__x86_64__)
  if (gt_knob(GT_KNOB_CLOCK) == GT_CLOCK_FORCE_MONOTONIC)
    return 0;
  unsigned eax, ebx, ecx, edx;
  __asm__ volatile("cpuid"
                   : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx)
                   : "a"(0x80000000u));
  if (eax < 0x80000007u)
    return 0;
  __asm__ volatile("cpuid"
                   : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx)
                   : "a"(0x80000007u));
  if (!(edx & (1u << 8)))
    return 0;
  char src[32] = {0};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, src, sizeof src - 1);
  close(fd);
  return n >= 3 && strncmp(src, "tsc", 3) == 0 && (src[3] == '\n' || src[3] == '\0');
#else
  return 0;
#endif
}

static void set_nvtx_injection(void) {
  if (!gt_knob(GT_KNOB_NVTX) || getenv("NVTX_INJECTION64_PATH"))
    return;
  Dl_info info;
  if (dladdr((void *)&set_nvtx_injection, &info) && info.dli_fname &&
      info.dli_fname[0] == '/')
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

static void construct(void) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&g_constructed, &expected, 1))
    return;
  g_pid = (uint32_t)getpid();
  /* Every knob is read through one parser (common/knobs.c): a bad value is
   * named on stderr, and its documented default used. */
  g_quiet = (int)gt_knob(GT_KNOB_QUIET);
  if (gt_knob(GT_KNOB_DISABLE)) {
    state_set(ST_DISABLED);
    return;
  }
  gt_knobs_check_names();
  gt_knob(GT_KNOB_STACKS); /* stacks.c reads it; a bad value is reported here */
  gt_knob(GT_KNOB_FORCE);
  g_tsc = tsc_usable();
  gt_mode_set(GT_MODE_TSC, g_tsc);
  gt_stacks_configure();
  gt_launch_configure();
  gt_launch_hooks_prepare();
  /* The thread-exit key now, while the process has few: a key under 32
   * lives in the thread's own table, so a thread's first record never
   * makes pthread_setspecific allocate. */
  pthread_once(&g_retire_once, make_retire_key);
  set_nvtx_injection();
  gt_transport_prepare_env();
  arm_wipe();
  pthread_atfork(NULL, NULL, atfork_child);
  gt_dt_configure();
  gt_range_configure();
}

__attribute__((constructor)) static void gt_constructor(void) {
  int saved_errno = errno;
  construct();
  errno = saved_errno;
}

/* exit() and _exit() (not a kill or a crash) mark the ring, so traces tell
 * a process that finished from one that died, and the collector's death
 * trigger (collector/clients.c) fires only on the latter. A flag store,
 * nothing more. */
static void mark_exited(void) {
  if (atomic_load(&g_state) == ST_ON && g_ring.hdr)
    atomic_store(&g_ring.hdr->exited, 1);
}

/* _exit and _Exit (Python's os._exit, every multiprocessing child, servers'
 * forked workers): marked, then what glibc's _exit does, exit_group. A
 * vfork child shares our memory but not our pid: it marks nothing. */
static _Noreturn void exit_marked(int status) {
  if ((uint32_t)syscall(SYS_getpid) == g_pid)
    mark_exited();
  for (;;)
    syscall(SYS_exit_group, status);
}
GT_EXPORT void _exit(int status) {
  exit_marked(status);
}
GT_EXPORT void _Exit(int status) {
  exit_marked(status);
}

/* A thread whose sub-ring is full waits while its collector reads it, and
 * gives up after this long without (full_wait, below). */
static _Atomic uint64_t g_full_wait_ns;

static void start_tracing(void) {
  size_t ring_kb = (size_t)gt_knob(GT_KNOB_RING_KB); /* at most 1 GiB: protocol.h */
  atomic_store_explicit(&g_full_wait_ns, gt_knob(GT_KNOB_FULL_WAIT_US) * 1000u,
                        memory_order_relaxed);
  if (gt_transport_open(&g_ring, ring_kb * 1024u, g_pid) != 0) {
    state_set(ST_DISABLED);
    return;
  }
  static _Atomic int atexit_done;
  if (!atomic_exchange(&atexit_done, 1))
    atexit(mark_exited);
  uint64_t skipped = atomic_exchange(&g_skipped_while_starting, 0);
  atomic_fetch_add(&g_ring.hdr->dropped[GT_KIND_NONE], skipped);
  /* ON before ACTIVE: a registration that sees ACTIVE must find the
   * ring accepting records (registry.c's ordering argument). In a child
   * whose first thread has not made its state its own, that thread
   * activates (adopt_child). */
  state_set(ST_ON);
  if (!unadopted())
    activate();
}

/* The names known now go in before ACTIVE lets other threads' hooks record
 * launches (they wait for it), so the collector finds a kernel's name ahead
 * of its launches; then the names registered meanwhile. */
static void activate(void) {
  const void *named = gt_kernels_emit_names(NULL);
  gt_mode_set(GT_MODE_ACTIVE, 1);
  gt_kernels_emit_names(named);
}

/* How long a thread waits for another one to connect before it lets its
 * call through untraced (and counted): the connecting thread may itself be
 * waiting for a lock this one holds, e.g. the loader's inside dlopen. */
#define GT_START_WAIT_NS 2000000000ull

static int hook_enter_slow(void);

/* Starting up makes syscalls that set errno; the caller must see only the
 * runtime's errno, so it is put back whatever happens here. */
int gt_hook_enter_slow(void) {
  int saved_errno = errno;
  int traced = hook_enter_slow();
  errno = saved_errno;
  return traced;
}

static int hook_enter_slow(void) {
  if (!atomic_load_explicit(&g_constructed, memory_order_acquire))
    construct();
  if (__builtin_expect(unadopted(), 0) && !adopt_child())
    return skip_unadopted();
  uint64_t waited = 0;
  for (;;) {
    int st = atomic_load(&g_state);
    if (st == ST_ON && gt_mode_active_ordered())
      break; /* (ON without ACTIVE: the starting thread writes names) */
    if (st == ST_DISABLED)
      return 0;
    if (st == ST_OFF && state_move(ST_OFF, ST_STARTING)) {
      gt_tls_depth = 1; /* calls made while connecting are not traced */
      start_tracing();
      gt_tls_depth = 0;
      continue;
    }
    if (waited >= GT_START_WAIT_NS) {
      atomic_fetch_add(&g_skipped_while_starting, 1);
      return 0;
    }
    struct timespec pause = {0, 100000}; /* another thread is connecting */
    nanosleep(&pause, NULL);
    waited += 100000;
  }
  gt_tls_depth = 1;
  return 1;
}

/* ---- records ---- */

/* The calling thread's first record: a sub-ring of its own, or the shared
 * ring for the rest of its life (its records then stay in order there). */
static void claim(struct gt_ring_producer *p) {
  pthread_once(&g_retire_once, make_retire_key);
  /* Without a destructor the sub-ring could never be reused: none then. */
  if (g_retire_key == (pthread_key_t)-1) {
    p->state = GT_PROD_SHARED;
    return;
  }
  if (gt_ring_claim(&g_ring, p, current_tid()) != 0)
    return;
  if (pthread_setspecific(g_retire_key, (void *)1) != 0)
    gt_ring_retire(p); /* no destructor would run: give it back now */
}

int gt_ring_room_slow(unsigned n) {
  struct gt_ring_producer *p = &gt_tls_prod;
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != ST_ON)
    return 0;
  if (p->state == GT_PROD_NONE) {
    int saved_errno = errno;
    claim(p);
    errno = saved_errno;
  }
  return gt_ring_producer_room(p, n);
}

static void on_drop(void);

/* ---- a full sub-ring: wait for the collector, boundedly ---- */

#define FULL_QUIET_NS 10000000000ull       /* after a stall: no wait for this long */
#define FULL_WAIT_MAX_NS 1000000000ull     /* the longest one record waits */
static __thread uint64_t tls_wait_again_ns /* a stall was seen: no wait before */
    __attribute__((tls_model("initial-exec")));

struct full_wait {
  uint64_t start_ns;    /* 0: not begun */
  uint64_t progress_ns; /* when the collector last read this sub-ring */
  uint64_t tail;        /* what it had read then */
};

/* The calling thread's sub-ring p has no room: 1 after yielding the core
 * once (the caller tries again), 0 once the wait is over (the caller
 * drops). A storm outruns a collector that shares the cores with it
 * (docs/PERFORMANCE.md, Storms): yielding lets it drain instead of the
 * records being lost. The wait goes on while the collector reads this
 * sub-ring (its tail moves) and at most FULL_WAIT_MAX_NS; a collector that
 * read nothing of it for GPUTRACE_FULL_WAIT_US is stalled or gone, and the
 * thread then drops at once for FULL_QUIET_NS (a stopped collector costs a
 * thread one wait in ten seconds). Slow path only; no lock,
 * async-signal-safe (sched_yield, clock_gettime). */
static int full_wait(struct full_wait *w, const struct gt_ring_producer *p) {
  uint64_t now = gt_mono_ns();
  uint64_t tail = atomic_load_explicit(&p->sub->tail, memory_order_relaxed);
  uint64_t stall_ns = atomic_load_explicit(&g_full_wait_ns, memory_order_relaxed);
  if (w->start_ns == 0) {
    if (stall_ns == 0 || now < tls_wait_again_ns)
      return 0;
    *w = (struct full_wait){now, now, tail};
  } else if (tail != w->tail) {
    w->progress_ns = now;
    w->tail = tail;
  } else if (now - w->progress_ns >= stall_ns) {
    tls_wait_again_ns = now + FULL_QUIET_NS;
    return 0;
  }
  if (now - w->start_ns >= FULL_WAIT_MAX_NS)
    return 0; /* it reads on, but others take the room it frees */
  sched_yield();
  return 1;
}

/* Out of line and cold: its wait state stays off the stack of every
 * record's write (docs/stack-budget.md), which only calls it when full. */
__attribute__((noinline, cold)) int gt_ring_wait_room(unsigned n) {
  struct gt_ring_producer *p = &gt_tls_prod;
  struct full_wait w = {0};
  while (p->state == GT_PROD_SUB && full_wait(&w, p))
    if (gt_ring_producer_room(p, n))
      return 1;
  return 0;
}

/* A full frame into producer p's sub-ring (no room after a wait: dropped
 * and counted), or, when p has none, into the shared ring (counted there
 * when full, at once: its threads are few and rare). */
static void write_via(struct gt_ring_producer *p, const struct gt_record *rec) {
  if (p->state == GT_PROD_SUB) {
    if (gt_ring_producer_write(p, rec))
      return;
    if (gt_ring_wait_room(gt_frame_slots(rec->nslots)) && gt_ring_producer_write(p, rec))
      return;
    gt_ring_count_drop(&g_ring, rec->kind);
    on_drop();
    return;
  }
  if (!gt_ring_write(&g_ring, rec))
    on_drop();
}

/* The calling thread's full frame, with the recursion guard held (a
 * signal handler's traced call then forwards untraced instead of writing
 * into the sub-ring this thread is in the middle of writing). Inside a
 * launch's real call (GT_DEPTH_LAUNCH), whose frame waits in the sub-ring,
 * it goes to the shared ring. */
static void write_guarded(const struct gt_record *rec) {
  static struct gt_ring_producer shared_only = {.state = GT_PROD_SHARED};
  int depth = gt_tls_depth;
  gt_tls_depth = 1;
  struct gt_ring_producer *p = &gt_tls_prod;
  if (depth == GT_DEPTH_LAUNCH)
    p = &shared_only;
  else if (p->state == GT_PROD_NONE)
    claim(p);
  write_via(p, rec);
  gt_tls_depth = depth;
}

void gt_count_launch_drop(void) {
  gt_ring_count_drop(&g_ring, GT_KIND_LAUNCH);
  on_drop();
}

uint32_t gt_current_tid(void) {
  return current_tid();
}

uint32_t gt_pid(void) {
  return g_pid;
}

void gt_record_begin(struct gt_record *rec, unsigned api, uint64_t t0, uint64_t t1,
                     int result) {
  memset(rec, 0, sizeof *rec);
  rec->ts_ns = t0;
  rec->dur_ns = t1 - t0;
  rec->pid = g_pid;
  rec->tid = current_tid();
  rec->api = (uint16_t)api;
  rec->kind = (uint8_t)gt_api_kind(api);
  rec->nslots = 1;
  rec->result = result;
  if (__builtin_expect(gt_stacks_wanted(rec->kind, api, result), 0))
    rec->stack_id = gt_stack_id();
  else if (rec->kind == GT_KIND_MEMCPY || rec->kind == GT_KIND_MEMSET ||
           rec->kind == GT_KIND_SYNC || rec->kind == GT_KIND_FREE)
    rec->stack_id = gt_site_stack(gt_tls_call_ra, api); /* counted per call site */
}

static void on_drop(void) {
  /* Only on the full-ring path: see whether the collector is still there. */
  static _Atomic uint32_t drops; /* look at the first drop, then every 1024th */
  if ((atomic_fetch_add_explicit(&drops, 1, memory_order_relaxed) & 1023u) != 0)
    return;
  int saved_errno = errno;
  if (gt_transport_peer_gone()) {
    if (state_move(ST_ON, ST_DISABLED)) {
      gt_mode_set(GT_MODE_ACTIVE, 0);
      gt_warn("gputrace: the collector went away; tracing of pid %u stopped", g_pid);
    }
  }
  errno = saved_errno;
}

void gt_emit(struct gt_record *rec) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != ST_ON)
    return;
  if (gt_range_paused() && gt_range_drops(rec))
    return;
  rec->nslots = 1;
  write_guarded(rec);
}

void gt_emit_device(struct gt_record *rec) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != ST_ON)
    return;
  rec->nslots = 1;
  int depth = gt_tls_depth;
  gt_tls_depth = 1;
  pthread_mutex_lock(&g_dev_mu);
  if (g_dev_prod.state == GT_PROD_NONE)
    gt_ring_claim(&g_ring, &g_dev_prod, rec->tid);
  write_via(&g_dev_prod, rec);
  pthread_mutex_unlock(&g_dev_mu);
  gt_tls_depth = depth;
}

void gt_count_dropped(unsigned kind, uint64_t n) {
  /* The collector turns the ring's per-kind counters into DROP records. */
  if (gt_kind_in_table(kind) &&
      atomic_load_explicit(&g_state, memory_order_relaxed) == ST_ON)
    atomic_fetch_add_explicit(&g_ring.hdr->dropped[kind], n, memory_order_relaxed);
}

/* A record with its text slots, built off the program's stack (1.5 KiB:
 * docs/stack-budget.md). One per thread: gt_emit_text holds the recursion
 * guard while it fills and writes it, so a signal handler's traced call
 * meanwhile forwards untraced instead of writing over it. */
static __thread struct {
  struct gt_record rec;
  struct gt_text_slot text[GT_MAX_SLOTS - 1];
} tls_text_frame __attribute__((tls_model("initial-exec")));

void gt_emit_text(struct gt_record *rec, const char *text, size_t len) {
  if (atomic_load_explicit(&g_state, memory_order_relaxed) != ST_ON)
    return;
  if (gt_range_paused() && gt_range_drops(rec))
    return;
  int depth = gt_tls_depth;
  gt_tls_depth = depth ? depth : 1;
  tls_text_frame.rec = *rec;
  gt_record_attach_text(&tls_text_frame.rec, text, len);
  write_guarded(&tls_text_frame.rec);
  gt_tls_depth = depth;
}
