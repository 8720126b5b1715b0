/* launch.c — the launch path's slow side (see launch.h): claiming a
 * sub-ring, full sub-rings, device-timed launches, wide values, and launch
 * stacks sampled per call site and per thread under a time budget.
 *
 * Contract:
 *  - gt_launch_post_slow writes the record the fast path would have (with
 *    its stack id), or counts it dropped (dropped[LAUNCH]): never silent,
 *    from the launch gt_launch_pre kept (gt_tls_pend) or wrote into the
 *    slot, after a timed launch's end event. It saves and restores errno.
 *  - Call sites: a process-wide lock-free set of GT_ST_SITES call-site keys
 *    (launch.h gt_st_key; CAS into the first empty slot of a short probe),
 *    each with its stack id: the first thread to launch from a key takes
 *    its stack (a <<<>>>'s from its line: stacks.c gt_stack_id_at) and
 *    publishes the id; a thread that finds a key without one yet takes its
 *    own. Each thread caches the keys it has seen with their ids
 *    (launch.h), so the set is probed once per thread and key (and on cache
 *    collisions), and every launch carries its site's id. Past the set's
 *    capacity a key's launches carry none (sampling goes on).
 *  - Sampling: per thread, one launch in N takes a stack. With
 *    GPUTRACE_LAUNCH_STACKS=auto (the default) N starts at GT_ST_N0 and,
 *    after each sample, moves toward the N at which the stacks cost
 *    GT_ST_BUDGET of the thread's time since the previous sample (at most a
 *    factor 4 per step, within 1..GT_ST_N_MAX). A forked child starts over.
 */
#include <stdatomic.h>
#include <string.h>

#include "capture.h"
#include "gputrace/knobs.h"
#include "launch.h"

#define GT_ST_SITES 4096u
#define GT_ST_PROBES 32u
#define GT_ST_N0 1024u
#define GT_ST_N_MAX (1u << 24)
#define GT_ST_BUDGET 0.01 /* of a thread's time spent on sampled launch stacks */

static __thread uint32_t tls_st_n __attribute__((tls_model("initial-exec")));
static __thread uint64_t tls_st_last __attribute__((tls_model("initial-exec")));

static _Atomic uintptr_t g_sites[GT_ST_SITES];
static _Atomic uint32_t g_site_ids[GT_ST_SITES]; /* each site's stack id; 0: none yet */

enum { ST_OFF, ST_AUTO, ST_FIXED };
static int g_st_mode = -1; /* -1: not configured yet */
static uint32_t g_st_fixed;

void gt_launch_configure(void) {
  uint64_t n = gt_knob(GT_KNOB_LAUNCH_STACKS);
  if (gt_stacks_mode == GT_STACKS_NONE) {
    g_st_mode = ST_OFF;
  } else if (gt_stacks_mode == GT_STACKS_ALL || n != 0) {
    g_st_fixed = gt_stacks_mode == GT_STACKS_ALL ? 1u : (uint32_t)n;
    g_st_mode = ST_FIXED;
  } else {
    g_st_mode = ST_AUTO;
  }
}

/* The process-wide slot of call-site key `site` (claimed by the first
 * thread to launch from it: *first = 1), or NULL when the set is full. */
static _Atomic uint32_t *site_slot(uintptr_t site, int *first) {
  unsigned h = (unsigned)(((uint64_t)site * 0x9E3779B97F4A7C15ull) >> 52);
  *first = 0;
  for (unsigned i = 0; i < GT_ST_PROBES; i++) {
    unsigned at = (h + i) & (GT_ST_SITES - 1u);
    _Atomic uintptr_t *s = &g_sites[at];
    uintptr_t cur = atomic_load_explicit(s, memory_order_relaxed);
    if (cur == site)
      return &g_site_ids[at];
    if (cur == 0 && atomic_compare_exchange_strong_explicit(
                        s, &cur, site, memory_order_relaxed, memory_order_relaxed)) {
      *first = 1;
      return &g_site_ids[at];
    }
    if (cur == site)
      return &g_site_ids[at];
  }
  return NULL; /* the set is full: these launches carry no site stack */
}

/* The launch's stack from its call site: a <<<>>> launch's from its line
 * (launch.h gt_launch_site: the site is the push's return address). */
static uint32_t site_stack(const struct gt_launch *l) {
  if (l->site != NULL && l->site == gt_tls_push_last)
    return gt_stack_id_at(l->site, gt_tls_push_sp);
  return gt_stack_id();
}

/* A thread's first launch from key `s` (cache slot `slot`): the site's
 * stack id, taken now when this is the process's first launch from it (or
 * when the first thread's capture is not published yet or failed), and
 * kept in the thread's cache. */
static uint32_t site_first_stack(const struct gt_launch *l, uintptr_t s, unsigned slot) {
  int first;
  _Atomic uint32_t *at = site_slot(s, &first);
  uint32_t id = at ? atomic_load_explicit(at, memory_order_acquire) : 0;
  if (at && id == 0) {
    id = site_stack(l);
    if (first && id)
      atomic_store_explicit(at, id, memory_order_release);
  }
  gt_tls_st_site[slot] = s;
  gt_tls_st_id[slot] = id;
  return id;
}

uint32_t gt_site_stack(const void *site, uintptr_t what) {
  if (g_st_mode < 0)
    gt_launch_configure();
  if (g_st_mode == ST_OFF || site == NULL)
    return 0;
  uintptr_t s = gt_st_key(site, (const void *)what);
  unsigned slot = gt_st_slot(s);
  if (gt_tls_st_site[slot] == s)
    return gt_tls_st_id[slot];
  struct gt_launch l = {.site = site};
  return site_first_stack(&l, s, slot);
}

/* After a sampled stack that cost `cost` (gt_now units): the next N. */
static void adapt(uint64_t now, uint64_t cost) {
  if (tls_st_last != 0 && now > tls_st_last) {
    double want =
        (double)tls_st_n * (double)cost / (GT_ST_BUDGET * (double)(now - tls_st_last));
    double lo = tls_st_n / 4.0, hi = tls_st_n * 4.0;
    want = want < lo ? lo : want > hi ? hi : want;
    tls_st_n = want < 1.0 ? 1u : want > GT_ST_N_MAX ? GT_ST_N_MAX : (uint32_t)want;
  }
  tls_st_last = now;
}

/* The stack id this launch carries (0: none): its call site's (every
 * launch: the counts per site are exact), or its own full stack with
 * GT_FRAME_STACK_SAMPLED when it is the thread's one-in-N sample; resets
 * the countdown. A thread's first launch from a site is never the sample
 * (it may take the site's stack): when both fall on one launch, the sample
 * moves to the thread's next launch. */
static uint32_t launch_stack(const struct gt_launch *l) {
  if (g_st_mode < 0) /* a launch before the constructor */
    gt_launch_configure();
  uintptr_t s = gt_st_key(l->site, l->kernel);
  unsigned slot = gt_st_slot(s);
  if (g_st_mode == ST_OFF) { /* cached, so that its next launch is fast */
    gt_tls_st_site[slot] = s;
    gt_tls_st_id[slot] = 0;
    gt_tls_st_left = UINT32_MAX;
    return 0;
  }
  int first = 0, sampled = 0;
  uint32_t id;
  if (gt_tls_st_site[slot] != s) {
    id = site_first_stack(l, s, slot);
    first = 1;
  } else {
    id = gt_tls_st_id[slot];
  }
  if (tls_st_n == 0) { /* this thread's first launch */
    tls_st_n = g_st_mode == ST_FIXED ? g_st_fixed : GT_ST_N0;
    gt_tls_st_left = tls_st_n;
  } else if (gt_tls_st_left == 0) {
    sampled = !first;
    gt_tls_st_left = first ? 1u : tls_st_n;
  }
  if (!sampled)
    return id;
  uint64_t t0 = gt_now();
  uint32_t own = site_stack(l);
  uint64_t t1 = gt_now();
  if (g_st_mode == ST_AUTO) {
    adapt(t1, t1 - t0);
    gt_tls_st_left = tls_st_n; /* the next N, as adapted */
  }
  return own ? own | GT_FRAME_STACK_SAMPLED : id;
}

static void emit_launch_full(const struct gt_launch *l, uint32_t stack);

/* `checked`: gt_launch_pre found no stack due (the call site seen, no
 * sample): the launch was written before the call and only its times or
 * result need a full frame. */
static void emit_launch_slow(const struct gt_launch *l, int checked) {
  int saved_errno = errno;
  uint32_t stack = checked ? l->stack : launch_stack(l);
  struct gt_ring_producer *p = &gt_tls_prod;
  if (gt_launch_wide(l) == 0 && gt_tls_dt_token == 0 && gt_tls_cap == 0) {
    if (gt_ring_room(p) == 0)
      gt_ring_room_slow(1); /* claims a sub-ring at the thread's first record */
    if (gt_ring_room(p) > 0) {
      gt_put_launch(p, l, stack);
      errno = saved_errno;
      return;
    }
    if (p->state == GT_PROD_SUB && gt_ring_wait_room(1)) { /* it was full */
      gt_put_launch(p, l, stack);
      errno = saved_errno;
      return;
    }
    if (p->state == GT_PROD_SUB) { /* its sub-ring is full */
      gt_count_launch_drop();
      errno = saved_errno;
      return;
    }
  }
  emit_launch_full(l, stack);
  errno = saved_errno;
}

/* A full frame: to the shared ring, or values that need one, or a record
 * devtime needs to see. Out of line: its record is not on the stack while
 * launch_stack walks it (docs/stack-budget.md). */
static __attribute__((noinline)) void emit_launch_full(const struct gt_launch *l,
                                                       uint32_t stack) {
  struct gt_record rec;
  memset(&rec, 0, sizeof rec);
  rec.ts_ns = l->t0;
  rec.dur_ns = l->t1 - l->t0;
  rec.pid = gt_pid();
  rec.tid = gt_current_tid();
  rec.api = (uint16_t)l->api;
  rec.kind = GT_KIND_LAUNCH;
  rec.nslots = 1;
  rec.result = l->result;
  rec.flags = gt_launch_flags(l->api) |
              (stack & GT_FRAME_STACK_SAMPLED ? GT_F_STACK_SAMPLED : 0u);
  rec.stack_id = stack & ~GT_FRAME_STACK_SAMPLED;
  rec.u.launch.kernel = (uint64_t)(uintptr_t)l->kernel;
  memcpy(rec.u.launch.grid, l->grid, sizeof rec.u.launch.grid);
  memcpy(rec.u.launch.block, l->block, sizeof rec.u.launch.block);
  rec.u.launch.shared_mem = l->shmem;
  rec.u.launch.stream = (uint64_t)(uintptr_t)l->stream;
  rec.u.launch.corr = gt_call_corr(&rec);
  gt_emit(&rec);
  gt_dt_commit(&rec);
}

__thread struct gt_launch gt_tls_pend __attribute__((tls_model("initial-exec")));
__thread int gt_tls_pend_dt __attribute__((tls_model("initial-exec")));

void gt_launch_post_slow(struct gt_frame_launch *f, uint64_t t0, uint64_t t1,
                         int result) {
  gt_tls_depth = 1; /* the call is over: records go to the sub-ring again */
  if (f != GT_LAUNCH_PENDING)
    gt_tls_cap = 0; /* a compact frame: the launch went into no capture */
  if (f == GT_LAUNCH_PENDING) {
    f = NULL;
    if (gt_tls_pend_dt != 0) { /* a timed launch: its end event */
      int dt_errno = errno;
      gt_dt_after(gt_tls_pend_dt, result);
      errno = dt_errno;
    }
  }
  /* The slot is no longer the thread's next only when the call forked and
   * this is the child: the slot, in the parent's ring (unmapped here), is
   * the parent's to commit; the child traces afresh from its next call. */
  if (f && gt_tls_prod.next != (unsigned char *)f)
    return;
  struct gt_launch l = gt_tls_pend;
  if (f) /* written before the call; its times or result need a full frame */
    l = (struct gt_launch){.api = (unsigned)(f->frame >> 16 & 0xffff),
                           .kernel = (const void *)(uintptr_t)f->kernel,
                           .grid = {f->grid_x, f->grid_y, f->grid_z},
                           .block = {f->block_x, f->block_y, f->block_z},
                           .shmem = f->shared_mem,
                           .stream = (const void *)(uintptr_t)f->stream,
                           .stack = f->stack_id};
  l.t0 = t0;
  l.t1 = t1;
  l.result = result;
  emit_launch_slow(&l, f != NULL);
}

void gt_launch_after_fork(void) {
  /* The parent's sites are in the parent's trace: this process's first
   * launch from each gets its own stack. */
  for (unsigned i = 0; i < GT_ST_SITES; i++)
    atomic_store_explicit(&g_sites[i], 0, memory_order_relaxed);
  for (unsigned i = 0; i < GT_ST_SITES; i++)
    atomic_store_explicit(&g_site_ids[i], 0, memory_order_relaxed);
  memset(gt_tls_st_site, 0, sizeof gt_tls_st_site);
  memset(gt_tls_st_id, 0, sizeof gt_tls_st_id);
  tls_st_n = 0;
  tls_st_last = 0;
  gt_tls_st_left = 0;
}
