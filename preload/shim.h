/* shim.h — what every hook file of libgputrace.so may use.
 *
 * Contract for hooks:
 *  - Declare the hook's type in hook_sigs.h (the toolkit's, checked by
 *    preload/sigcheck at build time): shim.h declares every RT and DRV
 *    hook from it, so the hook's definition must agree.
 *  - Resolve the real function with GT_REAL(name) (an apis.h entry, typed
 *    from hook_sigs.h; GT_REAL_UNLISTED(name, ret, params) for exported
 *    entry points that are not traced):
 *    the slot a lookup filled, else dlsym(RTLD_NEXT), else the library
 *    loaded RTLD_LOCAL (resolve.c), cached. If it cannot be found the hook
 *    returns GT_ERR_NOT_SUPPORTED (a driver hook, DRV_REAL in
 *    hooks_driver.h: CUDA_ERROR_NOT_FOUND) without recording anything.
 *  - Bracket the real call with gt_hook_enter()/gt_hook_leave(). enter()
 *    returns 0 when the call must be forwarded untraced: tracing is off or
 *    failed, or this thread is already inside a hook (recursion guard). In
 *    that case call the real function and return its result directly.
 *  - Build a struct gt_record with gt_record_begin(), fill the union, then
 *    gt_emit() (or gt_emit_text() for records carrying text). A hook whose
 *    call needs no stack never allocates, locks or makes a syscall beyond
 *    the two clock reads, with two exceptions on a thread's first record:
 *    gettid, and claiming its sub-ring (core.c). Taking a stack
 *    (gt_stack_id, stacks.c) may mmap a table segment, take the module
 *    lock when a library was loaded or unloaded since, and yield while
 *    another thread writes the same stack's record. Two families do more,
 *    outside [t0, t1] so that a record's duration stays the call's: device
 *    timing (devtime.h) records CUDA events around a sampled call, and the
 *    capture hooks (capture.h) take capture.c's mutex, as device timing's
 *    slow path does while a capture is open.
 *  - Save errno right after the real call and restore it before returning:
 *    the traced program must see the runtime's errno and return value.
 *  - Macros only where a function cannot do: each hook file defines its
 *    hooks with macros (GT_HOOK_*, DRV_*, GT_LAUNCH_HOOK, ...) because each
 *    defines an exported function named after an apis.h entry, once per
 *    twin (_ptsz, _ptds, Async), and only a macro can name a function; the
 *    hook bodies (GT_REAL, GT_TRACE_CALL, GT_TRACE_TIMED, ...) are macros
 *    because they name variables and types after the entry or return from
 *    the hook. Anything else is a (static inline) function; each macro says
 *    why it is one.
 */
#ifndef GPUTRACE_SHIM_H
#define GPUTRACE_SHIM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cuda_abi.h"
#include "gputrace/ring.h"
#include "gputrace/schema.h"
#include "hook_sigs.h"

/* Everything declared from here on is defined in this library (the hooks
 * say GT_EXPORT): hidden, GCC addresses its globals directly, where an
 * -fPIC extern costs a GOT load (a lea once the linker relaxes it) each
 * time the launch path reads gt_mode or gt_slot. */
#pragma GCC visibility push(hidden)

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_ERR_NOT_SUPPORTED 801 /* cudaErrorNotSupported */

/* Every RT and DRV entry of apis.h declared with its type from hook_sigs.h
 * (which preload/sigcheck compares with the toolkit's headers), so that a
 * hook defined otherwise fails to compile; gt_fn_<name>_t is the pointer
 * type of its real function. */
#define GT_X_SIG_TYPE(base, ret, params) typedef ret gt_sig_##base params;
GT_SIG_LIST(GT_X_SIG_TYPE)
#undef GT_X_SIG_TYPE
#define GT_X_HOOK_DECL_RT(name, sig)                                                     \
  typedef sig *gt_fn_##name##_t;                                                         \
  GT_EXPORT sig name;
#define GT_X_HOOK_DECL_DRV GT_X_HOOK_DECL_RT
#define GT_X_HOOK_DECL_NVTX(name, sig)
#define GT_X_HOOK_DECL_META(name, sig)
#define GT_X_HOOK_DECL(name, kind, family, base, ...)                                    \
  GT_X_HOOK_DECL_##family(name, gt_sig_##base)
GT_API_LIST(GT_X_HOOK_DECL)
#undef GT_X_HOOK_DECL

/* Look up a real symbol (resolve.c). Thread-safe, cached by caller. */
void *gt_resolve(const char *name);
/* dlsym itself, never wrapped (hooks_driver.c interposes dlsym). */
void *gt_real_dlsym(void *handle, const char *name);

/* The hooks of apis.h's RT and DRV entries, and where they forward to
 * (resolve.c). */
struct gt_hook {
  unsigned api;
  void *hook;
};
extern const struct gt_hook gt_hooks[];
extern const size_t gt_nhooks;
const struct gt_hook *gt_hook_named(const char *name);
int gt_is_hook(const void *p);
void *gt_real_in_library(const void *fn_in_library, const char *name);
extern void *gt_slot[GT_API_COUNT];
void *gt_slot_set(unsigned api, void *real); /* the slot's function after the CAS */
void *gt_real_fn_slow(unsigned api);

static inline void *gt_real_fn(unsigned api) {
  void *p = __atomic_load_n(&gt_slot[api], __ATOMIC_ACQUIRE);
  return __builtin_expect(p != NULL, 1) ? p : gt_real_fn_slow(api);
}

/* The real function of a traced API (an apis.h entry), as real_<name>, of
 * its type in hook_sigs.h. A macro: it names the variable and type after
 * the entry and returns GT_ERR_NOT_SUPPORTED from the hook when there is no
 * real function. */
#define GT_REAL(name)                                                                    \
  gt_fn_##name##_t real_##name = (gt_fn_##name##_t)gt_real_fn(GT_API_##name);            \
  if (real_##name == NULL)                                                               \
  return GT_ERR_NOT_SUPPORTED

/* The real function of an exported entry point that is not traced itself
 * (a macro, as GT_REAL; its pointer cached in a static of the hook). */
#define GT_REAL_UNLISTED(name, ret, params)                                              \
  typedef ret(*gt_fn_##name##_t) params;                                                 \
  static gt_fn_##name##_t real_##name;                                                   \
  if (__builtin_expect(real_##name == NULL, 0))                                          \
    real_##name = (gt_fn_##name##_t)gt_resolve(#name);                                   \
  if (real_##name == NULL)                                                               \
  return GT_ERR_NOT_SUPPORTED

/* Per-thread state of the hot paths, in one initial-exec TLS block (no
 * allocation on access): one TLS offset for the whole launch path instead
 * of one GOT load per variable. Each file names its fields through the
 * gt_tls_* names below (object-like macros: lvalues, read and assigned). */
#define GT_DT_KEYS 128u
#define GT_ST_SITE_BITS 6u
struct gt_tls {
  int depth;                    /* recursion guard (gt_hook_enter) */
  uint32_t corr;                /* devtime.h: the current call's correlation id */
  int dt_token;                 /* devtime.h: a timed op waiting for its record */
  uint32_t dt_n;                /* devtime.h: one launch in dt_n is timed */
  uint32_t dt_calls;            /* devtime.h: launches in the budget window */
  uint32_t st_left;             /* launch.h: launches until the next sampled stack */
  struct gt_ring_producer prod; /* launch.h, core.c: the sub-ring */
  uintptr_t st_site[1u << GT_ST_SITE_BITS]; /* launch.h: call sites seen */
  uint32_t st_id[1u << GT_ST_SITE_BITS];    /* launch.h: each one's site stack */
  const void *push_ra;   /* launch.h: the last <<<>>>'s line, until a launch takes it */
  const void *push_last; /* launch.h: the same, kept for the launch's stack */
  uintptr_t push_sp;     /* launch.h: the <<<>>> caller's stack pointer */
  const void *call_ra;   /* GT_TRACE_CALL/TIMED: the traced hook's return address */
  uint32_t dt_skip[GT_DT_KEYS];       /* devtime.h: per-key countdown (launches) */
  uint32_t dt_skip_api[GT_API_COUNT]; /* devtime.h: per entry point (copies, memsets) */
  uint32_t cap; /* capture.h: the current call's capture id; 0: none */
  int range;    /* range.h: this thread's open push ranges of the capture name */
};
extern __thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));
#define gt_tls_depth (gt_tls.depth)
#define gt_tls_corr (gt_tls.corr)
#define gt_tls_dt_token (gt_tls.dt_token)
#define gt_tls_dt_n (gt_tls.dt_n)
#define gt_tls_dt_calls (gt_tls.dt_calls)
#define gt_tls_dt_skip (gt_tls.dt_skip)
#define gt_tls_dt_skip_api (gt_tls.dt_skip_api)
#define gt_tls_st_left (gt_tls.st_left)
#define gt_tls_st_site (gt_tls.st_site)
#define gt_tls_st_id (gt_tls.st_id)
#define gt_tls_push_ra (gt_tls.push_ra)
#define gt_tls_push_last (gt_tls.push_last)
#define gt_tls_push_sp (gt_tls.push_sp)
#define gt_tls_call_ra (gt_tls.call_ra)
#define gt_tls_prod (gt_tls.prod)
#define gt_tls_cap (gt_tls.cap)
#define gt_tls_range (gt_tls.range)

int gt_hook_enter_slow(void);

/* The shim's state in one word, so that a launch tests one load (launch.h):
 * a ring is connected and hooks record (set by core.c), records are stamped
 * with rdtsc (core.c, at start-up), device timing is on (devtime.c), a
 * stream capture is open somewhere in the process (capture.c: every launch
 * then takes the general form, which asks whether its stream captures),
 * the process is outside its capture range (range.c).
 * Bits are set and cleared with gt_mode_set, a full barrier (registry.c's
 * ordering argument needs one for ACTIVE). */
#define GT_MODE_ACTIVE 1
#define GT_MODE_TSC 2
#define GT_MODE_DT 4
#define GT_MODE_CAPTURE 8
#define GT_MODE_PAUSED 16 /* outside a capture range (range.h) */

/* The mode word and core.c's per-process state, alone in a page that the
 * kernel hands a child process zeroed (MADV_WIPEONFORK, core.c): a child
 * that clone() made without fork()'s handlers, which inherits every other
 * byte of its parent's, finds tracing off there, takes the slow path, and
 * is made a process of its own (core.c) before it writes a record. */
#define GT_WIPED_BYTES 4096u
struct gt_wiped {
  int mode;          /* GT_MODE_*: read on every hook */
  _Atomic int state; /* core.c: tracing state */
  _Atomic int adopt; /* core.c: how far this process made its state its own */
  unsigned char rest[GT_WIPED_BYTES - 3 * sizeof(int)];
};
extern struct gt_wiped gt_wiped;
#define gt_mode (gt_wiped.mode)

static inline int gt_mode_now(void) {
  return __atomic_load_n(&gt_mode, __ATOMIC_RELAXED);
}

/* ACTIVE, read in order with gt_mode_set (sequentially consistent): for
 * registry.c's ordering argument and the start-up wait (core.c). */
static inline int gt_mode_active_ordered(void) {
  return __atomic_load_n(&gt_mode, __ATOMIC_SEQ_CST) & GT_MODE_ACTIVE;
}

/* Outside a capture range (range.h): the process is paused and this
 * thread holds no push range of the capture name open. */
static inline int gt_range_paused(void) {
  return __builtin_expect(gt_mode_now() & GT_MODE_PAUSED, 0) && gt_tls_range == 0;
}

static inline void gt_mode_set(int bit, int on) {
  if (on)
    __atomic_fetch_or(&gt_mode, bit, __ATOMIC_SEQ_CST);
  else
    __atomic_fetch_and(&gt_mode, ~bit, __ATOMIC_SEQ_CST);
}

static inline int gt_hook_enter(void) {
  if (gt_tls_depth != 0)
    return 0;
  if (__builtin_expect(!(gt_mode_now() & GT_MODE_ACTIVE), 0) && !gt_hook_enter_slow())
    return 0;
  gt_tls_depth = 1;
  return 1;
}

/* Inside a launch hook, whose frame is written into the thread's sub-ring
 * before the real call and committed after it (launch.h): a record this
 * thread writes meanwhile (a kernel registered inside the call) goes to the
 * shared ring instead (core.c), never over that frame. */
#define GT_DEPTH_LAUNCH 2

static inline void gt_hook_leave(void) {
  gt_tls_depth = 0;
}

/* Timestamps: invariant-TSC ticks when the kernel itself keeps time with
 * the TSC (an rdtsc is cheaper than a clock_gettime: docs/PERFORMANCE.md,
 * "Figures moved out of code comments"), else CLOCK_MONOTONIC ns. The ring
 * header says which; the collector converts ticks to ns, so traces always
 * hold CLOCK_MONOTONIC ns. */
static inline uint64_t gt_mono_ns(void) { /* CLOCK_MONOTONIC, in ns */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gt_now(void) {
#if defined(__x86_64__)
  if (__builtin_expect(gt_mode_now() & GT_MODE_TSC, 1))
    return __builtin_ia32_rdtsc();
#endif
  return gt_mono_ns();
}

/* gt_now when GT_MODE_TSC says the clock is the TSC: no test. */
static inline uint64_t gt_now_tsc(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return gt_now(); /* GT_MODE_TSC is never set */
#endif
}

/* The usual hook body. Forwards `call` (an expression of type cudaError_t)
 * untraced when gt_hook_enter() says so; otherwise times it, runs the
 * statements in `...` with t0, t1 and r (the result) in scope — they fill
 * and emit the record — and returns r with the runtime's errno. A macro:
 * it returns from the hook, and `call` and `...` are code run in its
 * midst. */
#define GT_TRACE_CALL(call, ...)                                                         \
  do {                                                                                   \
    if (!gt_hook_enter())                                                                \
      return call;                                                                       \
    gt_tls_call_ra = __builtin_return_address(0); /* its call site (core.c) */           \
    uint64_t t0 = gt_now();                                                              \
    cudaError_t r = call;                                                                \
    int saved_errno = errno;                                                             \
    uint64_t t1 = gt_now();                                                              \
    __VA_ARGS__;                                                                         \
    gt_hook_leave();                                                                     \
    errno = saved_errno;                                                                 \
    return r;                                                                            \
  } while (0)

/* A parenthesized parameter or argument list without its parentheses: for
 * the macros that take one as a single argument and add to it. */
#define GT_UNPAREN(...) __VA_ARGS__

/* Zero the record and fill the common header (pid, tid, api, kind from the
 * API table, timestamps, result). */
void gt_record_begin(struct gt_record *rec, unsigned api, uint64_t t0, uint64_t t1,
                     int result);

/* Write a one-slot record to the thread's sub-ring (or the shared ring;
 * drops and counts when full). */
void gt_emit(struct gt_record *rec);
/* A DEVICE record (devtime_resolve.c, cupti.c): one sub-ring for all of
 * them, whichever thread resolves, so they stay in the order made. */
void gt_emit_device(struct gt_record *rec);
/* Launch path (launch.h): room for n slots in the thread's own sub-ring,
 * claiming one at its first record (0: none, or full); a launch that had
 * no room; the thread's tid; this process's pid. */
int gt_ring_room_slow(unsigned n);
/* The calling thread's sub-ring is full: yield to the collector until it
 * has room for a frame of n slots (1) or a bounded wait ends (0: drop).
 * core.c full_wait. */
int gt_ring_wait_room(unsigned n);
void gt_count_launch_drop(void);
uint32_t gt_current_tid(void);
uint32_t gt_pid(void);

/* Write a record followed by `len` bytes of text (truncated to GT_TEXT_MAX,
 * flagged GT_F_TEXT_TRUNC). The record's text_len field must be the one of
 * its kind's union member; this function sets it. */
void gt_emit_text(struct gt_record *rec, const char *text, size_t len);

/* Kernel registry: stub address -> mangled name; cudaKernel_t -> stub. */
void gt_kernels_register(const void *stub, const char *device_name);
/* Emit a KERNEL_NAME record for every kernel registered since `stop` (a
 * value this returned before; NULL: all) and every mapped cudaKernel_t
 * (keyed by the handle, with its stub's name); returns where this walk
 * began. The core calls it before and after setting GT_MODE_ACTIVE
 * (registry.c).
 * Lock-free and allocation-free, so it is safe in a forked child. */
const void *gt_kernels_emit_names(const void *stop);
/* Map a cudaKernel_t to its stub and emit KERNEL_NAME(handle, stub's name):
 * launches record handles as they are, never looking them up. */
void gt_kernels_map_handle(const void *handle, const void *stub);
/* The stub for a cudaKernel_t, or NULL when unknown. Lock-free. */
const void *gt_kernels_stub_for(const void *handle);

/* Call stacks (stacks.c): configure at start-up, capture from
 * gt_record_begin for the kinds GPUTRACE_STACKS asks for (launches: from
 * the launch path, sampled: launch.h), forget in a forked child. */
void gt_stacks_configure(void);
extern int gt_stacks_mode; /* GPUTRACE_STACKS's choice: knobs.h GT_STACKS_* */
/* A call of this kind and api, ending with `result`, takes its own stack:
 * allocations and rare structural calls (GT_AF_STACK) under alloc, a free
 * only when it failed (else its call site's: gt_site_stack) unless
 * alloc+free asks; every call under all. */
int gt_stacks_wanted(unsigned kind, unsigned api, int result);
uint32_t gt_stack_id(void);
/* The stack of call site `site` (a hook's return address) for calls of
 * kind `what` (launch.c: cached per thread and process like a launch's;
 * 0 when stacks are off). */
uint32_t gt_site_stack(const void *site, uintptr_t what);
/* hooks_launch.c: look up what the untraced launch-path hooks forward to. */
void gt_launch_hooks_prepare(void);
/* The same, the stack starting at `top` (a return address) in the frame
 * whose stack pointer at its call was `top_sp` (stacks.c top_frame): a
 * <<<>>> launch's stack from its line, without nvcc's stubs. */
uint32_t gt_stack_id_at(const void *top, uintptr_t top_sp);
void gt_stacks_after_fork(void);
/* Launch stacks' sampling (launch.c): read the knobs (after
 * gt_stacks_configure), forget the parent's sites in a forked child. */
void gt_launch_configure(void);
void gt_launch_after_fork(void);

/* a * b, or UINT64_MAX when that does not fit (sizes computed from what
 * a failed call was passed may be anything). */
static inline uint64_t gt_mul_sat(uint64_t a, uint64_t b) {
  uint64_t p;
  return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

static inline uint64_t gt_add_sat(uint64_t a, uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}

/* Sizes of CUDA arrays (hooks_memory.c), as their creation asked for them:
 * the logical size, not the driver's padded allocation. Element size: the
 * channels' bits / 8 (0 for NULL). Bytes: element size x width x height x
 * depth (a 0 height or depth counts as 1), summed over `levels` mipmap
 * levels, each half the one before in every dimension but a layered or
 * cubemap array's depth (keep_depth), at least 1; saturates at UINT64_MAX. */
uint64_t gt_channel_bytes(const struct cudaChannelFormatDesc *d);
uint64_t gt_array_bytes(uint64_t elem, size_t width, size_t height, size_t depth,
                        unsigned levels, int keep_depth);
/* The bytes of the device allocation mapped at ptr (an IPC mapping), from
 * the driver's cuMemGetAddressRange_v2 (the range's end minus ptr); 0 when
 * libcuda is not loaded or does not know the address. Call inside a hook
 * only: the driver call is then untraced. */
uint64_t gt_ipc_mapped_bytes(uint64_t ptr);

/* Page-locked host ranges, for tagging copies pinned or pageable. */
void gt_pinned_add(const void *ptr, size_t bytes);
void gt_pinned_remove(const void *ptr);
/* 1: inside a known page-locked range; 0: not; -1: unknown (the range table
 * overflowed and some page-locked ranges could not be recorded). */
int gt_pinned_contains(const void *ptr);

#pragma GCC visibility pop

#endif
