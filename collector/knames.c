/* knames.c — kernel names held back until a launch refers to them.
 *
 * Contract (collector.h): the shim writes a KERNEL_NAME record for every
 * kernel registered and every cudaKernel_t made (PyTorch registers tens of
 * thousands at import and launches few: docs/gpu-validation.md), but a
 * trace needs only the names of kernels it launched. Per traced process:
 *  - gt_knames_offer: a KERNEL_NAME from the ring is held (0), or, when a
 *    launch already referred to its kernel, to be written at once (1);
 *  - gt_knames_refer: a launch (or its DEVICE record) refers to a kernel:
 *    its held name, to be written just before it (then written, never
 *    again), or NULL. A kernel never seen is reported as unknown once, so
 *    that the caller can look for its name in the process's other sources
 *    first (another thread may have written it: the thread that made a
 *    cudaKernel_t, or loaded a module; clients.c).
 * So every name a launch needs precedes the launch in the file (the look
 * ahead reads every other source past what it held when the launch was
 * read, parking another source's launch of a kernel not named yet until it
 * is done; a name it still cannot reach, behind a shared-ring slot
 * reserved but not yet committed, follows the launch at once), and names
 * of kernels never launched are never written.
 * Bounded against a hostile process: past GT_KNAMES_MAX_BYTES held or
 * GT_KNAMES_MAX_KEYS kernels, names are written through as they come.
 * The table never shrinks; a process's table is freed with its client.
 */
#include <stdlib.h>
#include <string.h>

#include "collector.h"

#define GT_KNAMES_MAX_BYTES (64u << 20)
#define GT_KNAMES_MAX_KEYS (1u << 20)

enum { K_EMPTY = 0, K_HELD = 1, K_WRITTEN = 2, K_REFERENCED = 3 };

struct entry {
  uint64_t key;
  uint32_t state;
  uint32_t slot; /* K_HELD: index of its first slot in the arena */
};

struct gt_knames {
  struct entry *table;
  size_t cap, used; /* table slots (a power of two), keys in it */
  struct gt_record *arena;
  size_t arena_cap, arena_used; /* 96-byte slots */
  uint64_t last;                /* the last kernel referred to: nothing to do */
  int have_last;
};

struct gt_knames *gt_knames_new(void) {
  return calloc(1, sizeof(struct gt_knames));
}

void gt_knames_free(struct gt_knames *k) {
  if (!k)
    return;
  free(k->table);
  free(k->arena);
  free(k);
}

static size_t hash(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static struct entry *find(struct gt_knames *k, uint64_t key) {
  if (!k->cap)
    return NULL;
  for (size_t i = hash(key, k->cap);; i = (i + 1) & (k->cap - 1)) {
    struct entry *e = &k->table[i];
    if (e->state == K_EMPTY)
      return NULL;
    if (e->key == key)
      return e;
  }
}

/* A new entry for `key` (absent), or NULL at the bounds or without memory. */
static struct entry *insert(struct gt_knames *k, uint64_t key) {
  if (k->used >= GT_KNAMES_MAX_KEYS)
    return NULL;
  if ((k->used + 1) * 2 > k->cap) {
    size_t ncap = k->cap ? k->cap * 2 : 1024;
    struct entry *nt = calloc(ncap, sizeof *nt);
    if (!nt)
      return NULL;
    for (size_t i = 0; i < k->cap; i++) {
      if (k->table[i].state == K_EMPTY)
        continue;
      size_t j = hash(k->table[i].key, ncap);
      while (nt[j].state != K_EMPTY)
        j = (j + 1) & (ncap - 1);
      nt[j] = k->table[i];
    }
    free(k->table);
    k->table = nt;
    k->cap = ncap;
  }
  size_t i = hash(key, k->cap);
  while (k->table[i].state != K_EMPTY)
    i = (i + 1) & (k->cap - 1);
  k->used++;
  k->table[i].key = key;
  return &k->table[i];
}

/* Keep a copy of the record in the arena: its slot index, or -1. */
static long keep(struct gt_knames *k, const struct gt_record *rec) {
  size_t n = rec->nslots;
  if ((k->arena_used + n) * GT_SLOT_SIZE > GT_KNAMES_MAX_BYTES)
    return -1;
  if (k->arena_used + n > k->arena_cap) {
    size_t ncap = k->arena_cap ? k->arena_cap * 2 : 4096;
    while (ncap < k->arena_used + n)
      ncap *= 2;
    struct gt_record *na = realloc(k->arena, ncap * sizeof *na);
    if (!na)
      return -1;
    k->arena = na;
    k->arena_cap = ncap;
  }
  memcpy(&k->arena[k->arena_used], rec, n * GT_SLOT_SIZE);
  k->arena_used += n;
  return (long)(k->arena_used - n);
}

int gt_knames_offer(struct gt_knames *k, const struct gt_record *rec) {
  uint64_t key = rec->u.kname.kernel;
  struct entry *e = find(k, key);
  if (e && e->state != K_HELD) {
    e->state = K_WRITTEN; /* launched already: a (re)naming, written now */
    return 1;
  }
  long slot = keep(k, rec);
  if (slot < 0)
    return 1;
  if (!e && (e = insert(k, key)) == NULL)
    return 1; /* the copy stays unused: bounded all the same */
  e->state = K_HELD;
  e->slot = (uint32_t)slot;
  return 0;
}

const struct gt_record *gt_knames_refer(struct gt_knames *k, uint64_t kernel,
                                        int *unknown) {
  if (unknown)
    *unknown = 0;
  if (k->have_last && k->last == kernel)
    return NULL;
  struct entry *e = find(k, kernel);
  if (!e && unknown) {
    *unknown = 1; /* the caller looks ahead, then asks again */
    return NULL;
  }
  k->last = kernel;
  k->have_last = 1;
  if (!e) {
    if ((e = insert(k, kernel)) != NULL)
      e->state = K_REFERENCED;
    return NULL;
  }
  if (e->state != K_HELD)
    return NULL;
  e->state = K_WRITTEN;
  return &k->arena[e->slot];
}
