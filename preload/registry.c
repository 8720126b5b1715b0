/* registry.c — kernel names, cudaKernel_t handles and page-locked ranges.
 *
 * Contract:
 *  - Kernel names (gt_kernels_register, gt_kernels_emit_names): every
 *    __cudaRegisterFunction adds {stub, private copy of the mangled name} to
 *    an append-only, lock-free list (CAS push, never freed). Registration may
 *    allocate; emit_names only walks the list, so it is safe in a forked child
 *    whatever other threads were doing at fork time.
 *    The core emits names twice around ring activation: once before it
 *    sets GT_MODE_ACTIVE (so every name registered so far is in the ring before
 *    any other thread's hook can record a launch: such hooks wait for
 *    ACTIVE), once after, for the entries pushed meanwhile (the list's
 *    head the first pass began from marks where the second stops). No name
 *    is missed when registration races activation: register publishes the
 *    entry, then (after a full fence) reads ACTIVE; the core sets
 *    ACTIVE, then fences before its second walk. At least one side sees
 *    the other; both may, which only duplicates a KERNEL_NAME record
 *    (harmless: same key, same text).
 *    Each name is also indexed by stub in a fixed lock-free table (CAS on
 *    the key, bounded probes; past that, a walk of the list) for the names
 *    of handles.
 *  - Handles (gt_kernels_map_handle / gt_kernels_stub_for): a fixed
 *    open-addressing table of 8192 atomic {key, stub} pairs (kv_slot) with
 *    linear probing bounded to GT_KV_PROBES slots. No lock, no
 *    allocation. Entries are never removed (a handle stays valid for the
 *    life of its module). When no free slot lies within the probe window the
 *    mapping is dropped and later lookups of that handle return NULL.
 *    A lookup racing the insertion of the same handle may return NULL.
 *    Launches record handles as they are (no lookup per launch),
 *    so a new or changed mapping emits KERNEL_NAME(handle, its stub's name)
 *    with the same ordering argument as registration, and so does a
 *    mapping of the same handle by another thread before that name was
 *    written (its launches would come first); emit_names writes the
 *    handles' names after the stubs'. The collector holds names back until
 *    a launch refers to them (collector/knames.c).
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

/* ---- kernel names ---- */

struct kname {
  const void *stub;
  struct kname *next;
  size_t len;
  char name[]; /* NUL-terminated private copy */
};

static _Atomic(struct kname *) g_knames;

/* Lock-free tables of pointer-sized keys and values: a key is claimed by
 * CAS from 0 within GT_KV_PROBES slots of its hash (never removed); its
 * value is stored after. */
#define GT_KV_PROBES 32u

struct kv_slot {
  _Atomic uintptr_t key; /* 0 = free */
  _Atomic uintptr_t value;
  _Atomic uintptr_t named; /* handles: the stub whose name a mapper has written */
};

static inline unsigned ptr_hash(uintptr_t key, unsigned bits) {
  return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64u - bits));
}

/* The slot of `key`, claimed if `claim`; NULL when absent (or no room). */
static struct kv_slot *kv_slot(struct kv_slot *table, unsigned bits, uintptr_t key,
                               int claim) {
  if (key == 0)
    return NULL;
  unsigned h = ptr_hash(key, bits);
  for (unsigned i = 0; i < GT_KV_PROBES; i++) {
    struct kv_slot *s = &table[(h + i) & ((1u << bits) - 1u)];
    uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == 0 && claim &&
        atomic_compare_exchange_strong_explicit(&s->key, &cur, key, memory_order_acq_rel,
                                                memory_order_acquire))
      cur = key;
    if (cur == key)
      return s;
    if (cur == 0)
      return NULL;
  }
  return NULL;
}

#define GT_NAME_BITS 15u /* 32768 stubs -> struct kname, 512 KiB (bss) */
static struct kv_slot g_names[1u << GT_NAME_BITS];

static void index_name(const struct kname *k) {
  struct kv_slot *s = kv_slot(g_names, GT_NAME_BITS, (uintptr_t)k->stub, 1);
  if (s != NULL)
    atomic_store_explicit(&s->value, (uintptr_t)k, memory_order_release);
}

/* The latest name registered for a stub, or NULL. */
static const struct kname *name_of(const void *stub) {
  struct kv_slot *s = kv_slot(g_names, GT_NAME_BITS, (uintptr_t)stub, 0);
  if (s != NULL)
    return (const struct kname *)atomic_load_explicit(&s->value, memory_order_acquire);
  for (const struct kname *k = atomic_load_explicit(&g_knames, memory_order_acquire);
       k != NULL; k = k->next)
    if (k->stub == stub)
      return k;
  return NULL;
}

static void emit_name(uint64_t key, const struct kname *k) {
  uint64_t now = gt_now();
  struct gt_record rec;
  gt_record_begin(&rec, GT_API_gputrace_kernel_name, now, now, 0);
  rec.u.kname.kernel = key;
  gt_emit_text(&rec, k->name, k->len);
}

static void emit_kname(const struct kname *k) {
  emit_name((uint64_t)(uintptr_t)k->stub, k);
}

static void emit_handle_name(uintptr_t handle, const void *stub) {
  const struct kname *k = name_of(stub);
  if (k != NULL)
    emit_name((uint64_t)handle, k);
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
  index_name(k);
  atomic_thread_fence(memory_order_seq_cst);
  if (gt_mode_active_ordered())
    emit_kname(k);
}

static void emit_handle_names(void);

const void *gt_kernels_emit_names(const void *stop) {
  atomic_thread_fence(memory_order_seq_cst);
  const struct kname *head = atomic_load_explicit(&g_knames, memory_order_acquire);
  for (const struct kname *k = head; k != NULL && k != stop; k = k->next)
    emit_kname(k);
  emit_handle_names();
  return head;
}

/* ---- cudaKernel_t -> stub ---- */

#define GT_HANDLE_BITS 13u /* 8192 handles -> stubs, 128 KiB */
static struct kv_slot g_handles[1u << GT_HANDLE_BITS];

static void emit_handle_names(void) {
  for (unsigned i = 0; i < 1u << GT_HANDLE_BITS; i++) {
    uintptr_t key = atomic_load_explicit(&g_handles[i].key, memory_order_acquire);
    uintptr_t stub = atomic_load_explicit(&g_handles[i].value, memory_order_acquire);
    if (key != 0 && stub != 0)
      emit_handle_name(key, (const void *)stub);
  }
}

void gt_kernels_map_handle(const void *handle, const void *stub) {
  struct kv_slot *s = kv_slot(g_handles, GT_HANDLE_BITS, (uintptr_t)handle, 1);
  if (s == NULL)
    return; /* window full: no name for launches of this handle (dump shows it raw) */
  uintptr_t old =
      atomic_exchange_explicit(&s->value, (uintptr_t)stub, memory_order_seq_cst);
  atomic_thread_fence(memory_order_seq_cst);
  if (!gt_mode_active_ordered())
    return;
  /* Threads racing to make the same handle (nvcc's stubs cache it in a
   * static each thread may fill): the first writes the name; one that comes
   * before that name is written writes it too, into its own ring ahead of
   * its own launches (a duplicate, harmless), which otherwise could reach
   * the trace before the name did. */
  if (old != (uintptr_t)stub ||
      atomic_load_explicit(&s->named, memory_order_acquire) != (uintptr_t)stub) {
    emit_handle_name((uintptr_t)handle, stub);
    atomic_store_explicit(&s->named, (uintptr_t)stub, memory_order_release);
  }
}

const void *gt_kernels_stub_for(const void *handle) {
  struct kv_slot *s = kv_slot(g_handles, GT_HANDLE_BITS, (uintptr_t)handle, 0);
  return s ? (const void *)atomic_load_explicit(&s->value, memory_order_acquire) : NULL;
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
