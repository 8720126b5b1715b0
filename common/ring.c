/* ring.c — see include/gputrace/ring.h for the contract.
 *
 * The algorithm is Vyukov's bounded queue with per-slot sequence words,
 * extended to reserve several contiguous slots with one CAS, and with a CAS
 * on commit so that a consumer can abandon a slot whose writer died. */
#include "gputrace/ring.h"

#include <string.h>

#define GT_ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

static size_t seq_offset(void) {
  return GT_ALIGN64(sizeof(struct gt_ring_hdr));
}

static size_t slots_offset(uint64_t capacity) {
  return GT_ALIGN64(seq_offset() + capacity * sizeof(uint64_t));
}

size_t gt_ring_bytes(uint64_t capacity) {
  return slots_offset(capacity) + capacity * GT_SLOT_SIZE;
}

uint64_t gt_ring_capacity_for(size_t bytes) {
  uint64_t cap = GT_RING_MIN_SLOTS;
  if (gt_ring_bytes(cap) > bytes)
    return 0;
  while (gt_ring_bytes(cap * 2) <= bytes && cap < (1ull << 40))
    cap *= 2;
  return cap;
}

static void bind_views(struct gt_ring *ring, void *mem, uint64_t capacity) {
  ring->hdr = mem;
  ring->seq = (_Atomic uint64_t *)((unsigned char *)mem + seq_offset());
  ring->slots = (unsigned char *)mem + slots_offset(capacity);
  ring->mask = capacity - 1;
}

void gt_ring_init(void *mem, uint64_t capacity, uint32_t pid, uint32_t clock) {
  struct gt_ring ring;
  memset(mem, 0, sizeof(struct gt_ring_hdr));
  bind_views(&ring, mem, capacity);
  struct gt_ring_hdr *hdr = mem;
  hdr->magic = GT_RING_MAGIC;
  hdr->version = GT_RING_VERSION;
  hdr->slot_size = GT_SLOT_SIZE;
  hdr->capacity = capacity;
  hdr->total_bytes = gt_ring_bytes(capacity);
  hdr->pid = pid;
  hdr->clock = clock;
  atomic_init(&hdr->head, 0);
  for (unsigned k = 0; k < GT_KIND_COUNT; k++)
    atomic_init(&hdr->dropped[k], 0);
  for (uint64_t i = 0; i < capacity; i++)
    atomic_init(&ring.seq[i], i);
}

int gt_ring_attach(struct gt_ring *ring, void *mem, size_t bytes) {
  const struct gt_ring_hdr *hdr = mem;
  if (bytes < sizeof(*hdr) || hdr->magic != GT_RING_MAGIC ||
      hdr->version != GT_RING_VERSION || hdr->slot_size != GT_SLOT_SIZE)
    return -1;
  uint64_t cap = hdr->capacity;
  if (cap < GT_RING_MIN_SLOTS || (cap & (cap - 1)) != 0 || cap > (1ull << 40) ||
      gt_ring_bytes(cap) > bytes)
    return -1;
  bind_views(ring, mem, cap);
  ring->tail = 0;
  ring->lost = 0;
  return 0;
}

static unsigned char *slot_at(const struct gt_ring *ring, uint64_t pos) {
  return ring->slots + (pos & ring->mask) * GT_SLOT_SIZE;
}

/* 0: all n slots from pos are free for this lap; <0: ring full; >0: another
 * producer moved head past pos. */
static int probe_free(const struct gt_ring *ring, uint64_t pos, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    uint64_t s =
        atomic_load_explicit(&ring->seq[(pos + i) & ring->mask], memory_order_acquire);
    int64_t diff = (int64_t)(s - (pos + i));
    if (diff != 0)
      return diff < 0 ? -1 : 1;
  }
  return 0;
}

static void count_drop(struct gt_ring *ring, unsigned kind) {
  if (kind >= GT_KIND_COUNT)
    kind = GT_KIND_NONE;
  atomic_fetch_add_explicit(&ring->hdr->dropped[kind], 1, memory_order_relaxed);
}

int gt_ring_write(struct gt_ring *ring, const struct gt_record *rec) {
  unsigned n = rec->nslots;
  if (n == 0 || n > GT_MAX_SLOTS || n > ring->mask + 1) {
    count_drop(ring, rec->kind);
    return 0;
  }
  _Atomic uint64_t *head = &ring->hdr->head;
  uint64_t pos = atomic_load_explicit(head, memory_order_relaxed);
  for (;;) {
    int state = probe_free(ring, pos, n);
    if (state < 0) {
      count_drop(ring, rec->kind);
      return 0;
    }
    if (state > 0) {
      pos = atomic_load_explicit(head, memory_order_relaxed);
      continue;
    }
    if (atomic_compare_exchange_weak_explicit(head, &pos, pos + n, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  const unsigned char *src = (const unsigned char *)rec;
  for (unsigned i = 0; i < n; i++)
    memcpy(slot_at(ring, pos + i), src + (size_t)i * GT_SLOT_SIZE, GT_SLOT_SIZE);
  /* Text slots first, the record last: a consumer that sees the record
   * committed finds its text committed too. */
  for (unsigned i = n; i-- > 0;) {
    uint64_t expected = pos + i;
    atomic_compare_exchange_strong_explicit(&ring->seq[(pos + i) & ring->mask], &expected,
                                            pos + i + 1, memory_order_release,
                                            memory_order_relaxed);
  }
  return 1;
}

static void release_slots(struct gt_ring *ring, uint64_t tail, unsigned n) {
  uint64_t cap = ring->mask + 1;
  for (unsigned i = 0; i < n; i++)
    atomic_store_explicit(&ring->seq[(tail + i) & ring->mask], tail + i + cap,
                          memory_order_release);
  ring->tail = tail + n;
  ring->hdr->consumer_tail = ring->tail;
}

static int is_committed(const struct gt_ring *ring, uint64_t pos) {
  return atomic_load_explicit(&ring->seq[pos & ring->mask], memory_order_acquire) ==
         pos + 1;
}

/* 1 when the first slot, in the consumer's private copy, is a plausible
 * record (not corrupt, not a text slot whose record was abandoned). */
static int first_slot_valid(const struct gt_record *rec) {
  const struct gt_text_slot *maybe_text = (const void *)rec;
  return maybe_text->magic != GT_TEXT_MAGIC && rec->kind != GT_KIND_NONE &&
         rec->kind < GT_KIND_COUNT && rec->nslots != 0 && rec->nslots <= GT_MAX_SLOTS &&
         rec->api < GT_API_COUNT;
}

/* Copy the record at `tail` into `out` and judge the copy: the traced
 * process owns the ring and may change it at any moment, so what was
 * checked in shared memory could differ from what is copied afterwards.
 * Returns the slots the record occupies, or 0 if it is not a valid one. */
static unsigned copy_record(const struct gt_ring *ring, uint64_t tail,
                            struct gt_record out[GT_MAX_SLOTS]) {
  memcpy(&out[0], slot_at(ring, tail), GT_SLOT_SIZE);
  if (!first_slot_valid(&out[0]))
    return 0;
  unsigned n = out[0].nslots;
  for (unsigned i = 1; i < n; i++) {
    if (!is_committed(ring, tail + i))
      return 0;
    memcpy(&out[i], slot_at(ring, tail + i), GT_SLOT_SIZE);
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      return 0;
  }
  return n;
}

enum gt_ring_status gt_ring_read(struct gt_ring *ring,
                                 struct gt_record out[GT_MAX_SLOTS]) {
  /* A producer committing garbage as fast as it is skipped must not keep
   * the consumer here: give the caller back control after a bounded run. */
  for (unsigned skipped = 0;; skipped++) {
    uint64_t tail = ring->tail;
    if (!is_committed(ring, tail)) {
      uint64_t head = atomic_load_explicit(&ring->hdr->head, memory_order_acquire);
      return head == tail ? GT_RING_EMPTY : GT_RING_PENDING;
    }
    if (skipped == GT_RING_MAX_SKIP)
      return GT_RING_SKIPPED;
    unsigned n = copy_record(ring, tail, out);
    if (n == 0) {
      ring->lost++;
      release_slots(ring, tail, 1);
      continue;
    }
    release_slots(ring, tail, n);
    return GT_RING_RECORD;
  }
}

uint64_t gt_ring_abandon(struct gt_ring *ring) {
  uint64_t tail = ring->tail;
  uint64_t head = atomic_load_explicit(&ring->hdr->head, memory_order_acquire);
  if (head == tail)
    return 0;
  uint64_t expected = tail;
  uint64_t cap = ring->mask + 1;
  if (!atomic_compare_exchange_strong_explicit(&ring->seq[tail & ring->mask], &expected,
                                               tail + cap, memory_order_acq_rel,
                                               memory_order_acquire))
    return 0; /* committed meanwhile: nothing to abandon */
  ring->tail = tail + 1;
  ring->hdr->consumer_tail = ring->tail;
  ring->lost++;
  return 1;
}

uint64_t gt_ring_used(const struct gt_ring *ring) {
  uint64_t head = atomic_load_explicit(&ring->hdr->head, memory_order_acquire);
  return head - ring->tail;
}
