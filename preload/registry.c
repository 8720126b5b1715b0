/* registry.c — kernel names, cudaKernel_t handles and page-locked ranges.
 *
 * Contract:
 *  - Kernel names (gt_kernels_register, gt_kernels_emit_all): every
 *    __cudaRegisterFunction adds {stub, private copy of the mangled name} to
 *    an append-only, lock-free list (CAS push, never freed). Registration may
 *    allocate; emit_all only walks the list, so it is safe in a forked child
 *    whatever other threads were doing at fork time.
 *    No name is missed when registration races ring activation: register
 *    publishes the entry, then (after a full fence) reads gt_active; the core
 *    sets gt_active, then calls emit_all, which fences before walking the
 *    list. At least one side sees the other; both may, which only
 *    duplicates a KERNEL_NAME record (harmless: same key, same text).
 *  - Handles (gt_kernels_map_handle / gt_kernels_stub_for): a fixed
 *    open-addressing table of GT_HANDLE_SLOTS atomic {key, stub} pairs with
 *    linear probing bounded to GT_HANDLE_PROBES slots. No lock, no
 *    allocation. Entries are never removed (a handle stays valid for the
 *    life of its module). When no free slot lies within the probe window the
 *    mapping is dropped and later lookups of that handle return NULL.
 *    A lookup racing the insertion of the same handle may return NULL.
 *  - Pinned ranges (gt_pinned_*): a fixed array of GT_PINNED_SLOTS atomic
 *    {start, end} ranges; contains() scans slots below a high-water mark
 *    (the peak number of ranges live at once), so a copy pays for at most
 *    that many pairs of loads. add() takes the lowest free slot. When all
 *    slots are taken the range is not recorded and counted as lost; while
 *    any lost range may still be live, contains() answers -1 (unknown)
 *    instead of 0 for pointers outside every known range. remove() of a
 *    pointer not in the table is taken to be the release of a lost range.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

extern int gt_active; /* owned by core.c; 1 while a ring is connected */

/* ---- kernel names ---- */

struct kname {
  const void *stub;
  struct kname *next;
  size_t len;
  char name[]; /* NUL-terminated private copy */
};

static _Atomic(struct kname *) g_knames;

static void emit_kname(const struct kname *k) {
  uint64_t now = gt_now();
  struct gt_record rec;
  gt_record_begin(&rec, GT_API_gputrace_kernel_name, now, now, 0);
  rec.u.kname.kernel = (uint64_t)(uintptr_t)k->stub;
  gt_emit_text(&rec, k->name, k->len);
}

void gt_kernels_register(const void *stub, const char *device_name) {
  if (stub == NULL || device_name == NULL)
    return;
  size_t len = strlen(device_name);
  struct kname *k = malloc(sizeof *k + len + 1);
  if (k == NULL)
    return;
  k->stub = stub;
  k->len = len;
  memcpy(k->name, device_name, len + 1);
  struct kname *head = atomic_load_explicit(&g_knames, memory_order_relaxed);
  do
    k->next = head;
  while (!atomic_compare_exchange_weak_explicit(&g_knames, &head, k, memory_order_seq_cst,
                                                memory_order_relaxed));
  atomic_thread_fence(memory_order_seq_cst);
  if (__atomic_load_n(&gt_active, __ATOMIC_SEQ_CST))
    emit_kname(k);
}

void gt_kernels_emit_all(void) {
  atomic_thread_fence(memory_order_seq_cst);
  for (const struct kname *k = atomic_load_explicit(&g_knames, memory_order_acquire);
       k != NULL; k = k->next)
    emit_kname(k);
}

/* ---- cudaKernel_t -> stub ---- */

#define GT_HANDLE_BITS 13u
#define GT_HANDLE_SLOTS (1u << GT_HANDLE_BITS) /* 8192 slots, 128 KiB */
#define GT_HANDLE_PROBES 32u

struct handle_slot {
  _Atomic uintptr_t key; /* the cudaKernel_t; 0 = free */
  _Atomic uintptr_t stub;
};

static struct handle_slot g_handles[GT_HANDLE_SLOTS];

static inline unsigned handle_hash(uintptr_t key) {
  return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64u - GT_HANDLE_BITS));
}

void gt_kernels_map_handle(const void *handle, const void *stub) {
  uintptr_t key = (uintptr_t)handle;
  if (key == 0)
    return;
  unsigned h = handle_hash(key);
  for (unsigned i = 0; i < GT_HANDLE_PROBES; i++) {
    struct handle_slot *s = &g_handles[(h + i) & (GT_HANDLE_SLOTS - 1u)];
    uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == 0 && atomic_compare_exchange_strong_explicit(
                        &s->key, &cur, key, memory_order_acq_rel, memory_order_acquire))
      cur = key;
    if (cur == key) {
      atomic_store_explicit(&s->stub, (uintptr_t)stub, memory_order_release);
      return;
    }
  }
  /* Window full: the launch will be recorded with GT_F_KERNEL_HANDLE. */
}

const void *gt_kernels_stub_for(const void *handle) {
  uintptr_t key = (uintptr_t)handle;
  if (key == 0)
    return NULL;
  unsigned h = handle_hash(key);
  for (unsigned i = 0; i < GT_HANDLE_PROBES; i++) {
    const struct handle_slot *s = &g_handles[(h + i) & (GT_HANDLE_SLOTS - 1u)];
    uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == key)
      return (const void *)atomic_load_explicit(&s->stub, memory_order_acquire);
    if (cur == 0)
      return NULL;
  }
  return NULL;
}

/* ---- page-locked host ranges ---- */

#define GT_PINNED_SLOTS 4096u /* 64 KiB */

struct pinned_slot {
  _Atomic uintptr_t start; /* 0 = free; claimed by CAS from 0 */
  _Atomic uintptr_t end;   /* 0 while being added or removed */
};

static struct pinned_slot g_pinned[GT_PINNED_SLOTS];
static _Atomic unsigned g_pinned_hwm;  /* slots at or above are all free */
static _Atomic unsigned g_pinned_lost; /* ranges not recorded, maybe live */

static void raise_hwm(unsigned n) {
  unsigned cur = atomic_load_explicit(&g_pinned_hwm, memory_order_relaxed);
  while (cur < n && !atomic_compare_exchange_weak_explicit(&g_pinned_hwm, &cur, n,
                                                           memory_order_release,
                                                           memory_order_relaxed))
    ;
}

void gt_pinned_add(const void *ptr, size_t bytes) {
  uintptr_t start = (uintptr_t)ptr;
  if (start == 0 || bytes == 0)
    return;
  uintptr_t end = start + bytes < start ? UINTPTR_MAX : start + bytes;
  for (unsigned i = 0; i < GT_PINNED_SLOTS; i++) {
    uintptr_t expected = 0;
    if (atomic_load_explicit(&g_pinned[i].start, memory_order_relaxed) != 0 ||
        !atomic_compare_exchange_strong_explicit(&g_pinned[i].start, &expected, start,
                                                 memory_order_acq_rel,
                                                 memory_order_relaxed))
      continue;
    atomic_store_explicit(&g_pinned[i].end, end, memory_order_release);
    raise_hwm(i + 1);
    return;
  }
  atomic_fetch_add_explicit(&g_pinned_lost, 1, memory_order_relaxed);
}

void gt_pinned_remove(const void *ptr) {
  uintptr_t start = (uintptr_t)ptr;
  if (start == 0)
    return;
  unsigned n = atomic_load_explicit(&g_pinned_hwm, memory_order_acquire);
  for (unsigned i = 0; i < n; i++) {
    uintptr_t cur = atomic_load_explicit(&g_pinned[i].start, memory_order_acquire);
    if (cur != start)
      continue;
    /* end first, so no reader pairs this start with a later owner's end */
    atomic_store_explicit(&g_pinned[i].end, 0, memory_order_release);
    if (atomic_compare_exchange_strong_explicit(
            &g_pinned[i].start, &cur, 0, memory_order_acq_rel, memory_order_relaxed))
      return;
  }
  unsigned lost = atomic_load_explicit(&g_pinned_lost, memory_order_relaxed);
  while (lost > 0 &&
         !atomic_compare_exchange_weak_explicit(
             &g_pinned_lost, &lost, lost - 1, memory_order_relaxed, memory_order_relaxed))
    ;
}

int gt_pinned_contains(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  unsigned n = atomic_load_explicit(&g_pinned_hwm, memory_order_acquire);
  for (unsigned i = 0; i < n; i++) {
    uintptr_t s = atomic_load_explicit(&g_pinned[i].start, memory_order_acquire);
    if (s == 0 || p < s)
      continue;
    uintptr_t e = atomic_load_explicit(&g_pinned[i].end, memory_order_acquire);
    /* re-read start: the slot was not freed and reused between the loads */
    if (p < e && atomic_load_explicit(&g_pinned[i].start, memory_order_acquire) == s)
      return 1;
  }
  return atomic_load_explicit(&g_pinned_lost, memory_order_relaxed) ? -1 : 0;
}
