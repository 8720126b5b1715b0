/* ring.c — the region's layout and the producers' side; see
 * include/gputrace/ring.h for the contract (the consumer: ring_read.c).
 *
 * The shared ring is Vyukov's bounded queue with per-slot sequence words,
 * extended to reserve a frame's slots with one CAS, and with a CAS on
 * commit so that a consumer can abandon a slot whose writer died. The
 * sub-rings need none of that: one writer each, so a private head and one
 * release store. */
#include "gputrace/ring.h"

#include <string.h>

#define GT_ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

/* Blocks of `bs` slots that fit in `rest` bytes with `nsub` lists and
 * the bitmap beside them. */
static uint64_t blocks_for(size_t rest, unsigned nsub, unsigned bs) {
  size_t fixed = nsub * sizeof(struct gt_sub) + 3u * 64u; /* + alignment slack */
  if (rest <= fixed)
    return 0;
  return (rest - fixed) / ((size_t)bs * GT_RSLOT + nsub * 4u + 1u);
}

int gt_ring_layout(size_t bytes, struct gt_ring_layout *l) {
  memset(l, 0, sizeof *l);
  size_t hdr = GT_ALIGN64(sizeof(struct gt_ring_hdr));
  /* The shared ring takes about 1/32 of the region: it serves only threads
   * beyond the sub-rings (and a thread's records after its retirement). */
  uint64_t sc = GT_RING_MIN_SLOTS;
  while ((sc * 2) * (GT_RSLOT + 8u) <= bytes / 32u && sc < (1ull << 30))
    sc *= 2;
  l->shared_cap = sc;
  l->seq_off = hdr;
  l->shared_off = GT_ALIGN64(hdr + sc * 8u);
  size_t after = l->shared_off + sc * GT_RSLOT;
  if (after > bytes)
    return -1;
  size_t rest = bytes - after;
  /* As many sub-rings as there are blocks for two each, in large blocks
   * (fewer switches) when there is room. */
  static const unsigned nsubs[] = {GT_RING_NSUB_MAX, 16, 4, 2};
  for (unsigned i = 0; i < sizeof nsubs / sizeof nsubs[0] && !l->nsub; i++)
    for (unsigned bs = GT_RING_BLOCK_MAX; bs >= GT_RING_BLOCK_MIN; bs /= 2) {
      uint64_t nb = blocks_for(rest, nsubs[i], bs);
      if (nb >= 2u * nsubs[i] && nb <= UINT32_MAX) {
        l->nsub = nsubs[i];
        l->block_slots = bs;
        l->nblocks = nb;
        break;
      }
    }
  l->dir_off = after;
  l->list_off = GT_ALIGN64(after + l->nsub * sizeof(struct gt_sub));
  l->map_off = GT_ALIGN64(l->list_off + (size_t)l->nsub * l->nblocks * 4u);
  l->block_off = GT_ALIGN64(l->map_off + (l->nblocks + 63u) / 64u * 8u);
  l->bytes = l->nsub ? l->block_off + l->nblocks * l->block_slots * GT_RSLOT : after;
  return 0;
}

size_t gt_ring_bytes_for(size_t bytes) {
  struct gt_ring_layout l;
  return gt_ring_layout(bytes, &l) == 0 ? l.bytes : 0;
}

static void bind_views(struct gt_ring *ring, void *mem, const struct gt_ring_layout *l) {
  unsigned char *base = mem;
  memset(ring, 0, sizeof *ring);
  ring->hdr = mem;
  ring->seq = (_Atomic uint64_t *)(void *)(base + l->seq_off);
  ring->slots = base + l->shared_off;
  ring->mask = l->shared_cap - 1;
  ring->nsub = l->nsub;
  ring->dir = (struct gt_sub *)(void *)(base + l->dir_off);
  ring->lists = (uint32_t *)(void *)(base + l->list_off);
  ring->freemap = (_Atomic uint64_t *)(void *)(base + l->map_off);
  ring->blocks = base + l->block_off;
  ring->nblocks = l->nblocks;
  ring->block_slots = l->block_slots;
  ring->block_shift = (unsigned)__builtin_ctz(l->block_slots ? l->block_slots : 1);
  ring->cur = 0;
  ring->batch_left = GT_RING_BATCH;
  ring->eager = 1;
  ring->epoch = 1;
}

void gt_ring_init(void *mem, size_t bytes, uint32_t pid, uint32_t clock) {
  struct gt_ring_layout l;
  if (gt_ring_layout(bytes, &l) != 0)
    return;
  struct gt_ring ring;
  memset(mem, 0, sizeof(struct gt_ring_hdr));
  bind_views(&ring, mem, &l);
  struct gt_ring_hdr *hdr = mem;
  hdr->magic = GT_RING_MAGIC;
  hdr->version = GT_RING_VERSION;
  hdr->slot_size = GT_RSLOT;
  hdr->total_bytes = bytes;
  hdr->pid = pid;
  hdr->clock = clock;
  hdr->nsub = l.nsub;
  hdr->block_slots = l.block_slots;
  hdr->shared_cap = l.shared_cap;
  hdr->nblocks = l.nblocks;
  atomic_init(&hdr->head, 0);
  for (unsigned k = 0; k < GT_RING_DROP_SLOTS; k++)
    atomic_init(&hdr->dropped[k], 0);
  for (uint64_t i = 0; i < l.shared_cap; i++)
    atomic_init(&ring.seq[i], i);
  memset(ring.dir, 0, l.nsub * sizeof(struct gt_sub));
  for (uint64_t w = 0; w < (l.nblocks + 63u) / 64u; w++) {
    uint64_t left = l.nblocks - w * 64u;
    atomic_init(&ring.freemap[w], left >= 64u ? ~0ull : (1ull << left) - 1u);
  }
}

int gt_ring_attach(struct gt_ring *ring, void *mem, size_t bytes) {
  const struct gt_ring_hdr *hdr = mem;
  struct gt_ring_layout l;
  if (bytes < sizeof(*hdr) || hdr->magic != GT_RING_MAGIC ||
      hdr->version != GT_RING_VERSION || hdr->slot_size != GT_RSLOT)
    return -1;
  /* The layout follows from the declared size; the header's copy of it
   * must agree, and all of it must lie in what is mapped. */
  if (hdr->total_bytes > (1ull << 40) || gt_ring_layout(hdr->total_bytes, &l) != 0 ||
      l.bytes > bytes || hdr->nsub != l.nsub || hdr->shared_cap != l.shared_cap ||
      hdr->block_slots != l.block_slots || hdr->nblocks != l.nblocks)
    return -1;
  bind_views(ring, mem, &l);
  return 0;
}

void gt_ring_count_drop(struct gt_ring *ring, unsigned kind) {
  if (!gt_kind_in_table(kind))
    kind = GT_KIND_NONE;
  atomic_fetch_add_explicit(&ring->hdr->dropped[kind], 1, memory_order_relaxed);
}

/* ---- the shared ring ---- */

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

/* Copy `len` bytes to byte offset `off` of a ring of `cap` slots, wrapping. */
static void put_bytes(unsigned char *slots, uint64_t cap, uint64_t off, const void *src,
                      size_t len) {
  size_t end = (size_t)cap * GT_RSLOT;
  off %= end;
  size_t first = len < end - off ? len : end - off;
  memcpy(slots + off, src, first);
  if (first < len)
    memcpy(slots, (const unsigned char *)src + first, len - first);
}

int gt_ring_write(struct gt_ring *ring, const struct gt_record *rec) {
  unsigned k = rec->nslots;
  unsigned n = gt_frame_slots(k);
  if (k == 0 || k > GT_MAX_SLOTS || n > ring->mask + 1) {
    gt_ring_count_drop(ring, rec->kind);
    return 0;
  }
  _Atomic uint64_t *head = &ring->hdr->head;
  uint64_t pos = atomic_load_explicit(head, memory_order_relaxed);
  for (;;) {
    int state = probe_free(ring, pos, n);
    if (state < 0) {
      gt_ring_count_drop(ring, rec->kind);
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
  uint64_t word = gt_frame_word(GT_FRAME_FULL, n, rec->api, rec->tid);
  uint64_t cap = ring->mask + 1, off = (pos & ring->mask) * GT_RSLOT;
  put_bytes(ring->slots, cap, off, &word, 8);
  put_bytes(ring->slots, cap, off + 8, rec, (size_t)k * GT_SLOT_SIZE);
  /* The later slots first, the first one last: a consumer that sees the
   * first slot committed finds the whole frame committed. */
  for (unsigned i = n; i-- > 0;) {
    uint64_t expected = pos + i;
    atomic_compare_exchange_strong_explicit(&ring->seq[(pos + i) & ring->mask], &expected,
                                            pos + i + 1, memory_order_release,
                                            memory_order_relaxed);
  }
  return 1;
}

/* ---- sub-rings ---- */

int gt_ring_claim(struct gt_ring *ring, struct gt_ring_producer *p, uint32_t tid) {
  for (unsigned i = 0; i < ring->nsub; i++) {
    struct gt_sub *s = &ring->dir[i];
    uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (st != GT_SUB_FREE ||
        !atomic_compare_exchange_strong_explicit(
            &s->state, &st, GT_SUB_OWNED, memory_order_acquire, memory_order_relaxed))
      continue;
    /* The consumer freed it with its tail at head, on a block boundary:
     * continue from there, in a block taken at the first write. */
    s->owner = tid;
    p->head = atomic_load_explicit(&s->head, memory_order_relaxed);
    p->next = p->end = NULL;
    p->tid = (uint64_t)tid << 32;
    p->sub = s;
    p->ring = ring;
    p->list = ring->lists + (size_t)i * ring->nblocks;
    p->state = GT_PROD_SUB;
    return 0;
  }
  p->state = GT_PROD_SHARED;
  p->next = p->end = NULL;
  p->sub = NULL;
  return -1;
}

void gt_ring_retire(struct gt_ring_producer *p) {
  if (p->state != GT_PROD_SUB)
    return;
  /* head is already published; RETIRED after it, so a consumer that sees
   * RETIRED sees the final head. */
  atomic_store_explicit(&p->sub->state, GT_SUB_RETIRED, memory_order_release);
  p->sub = NULL;
  p->next = p->end = NULL;
  p->state = GT_PROD_RETIRED;
}

/* The lowest free block, taken from the bitmap, or -1. Lowest first keeps
 * the pool's working set as small as the collector's backlog: a block it
 * has just read and freed is written again while its lines are still
 * cached, where walking the whole pool makes every launch's line a fresh
 * one from memory (docs/PERFORMANCE.md, Launch overhead: the pool's working
 * set). */
static int64_t take_block(struct gt_ring_producer *p) {
  struct gt_ring *r = p->ring;
  uint64_t words = (r->nblocks + 63u) / 64u;
  for (uint64_t w = 0; w < words; w++) {
    uint64_t v = atomic_load_explicit(&r->freemap[w], memory_order_relaxed);
    while (v != 0) {
      unsigned b = (unsigned)__builtin_ctzll(v);
      if (atomic_compare_exchange_weak_explicit(&r->freemap[w], &v, v & ~(1ull << b),
                                                memory_order_acquire,
                                                memory_order_relaxed))
        return (int64_t)(w * 64u + b);
    }
  }
  return -1;
}

int gt_ring_producer_room(struct gt_ring_producer *p, unsigned n) {
  if (p->state != GT_PROD_SUB)
    return 0;
  struct gt_ring *r = p->ring;
  uint64_t room = gt_ring_room(p);
  if (room >= n)
    return 1;
  if (n > r->block_slots)
    return 0;
  if (room > 0) { /* too short for this frame: pad it, take the next */
    uint64_t pad = gt_frame_word(GT_FRAME_PAD, (unsigned)room, 0, 0);
    memcpy(p->next, &pad, sizeof pad);
    p->head += room;
    p->next = p->end = NULL;
    atomic_store_explicit(&p->sub->head, p->head, memory_order_release);
  }
  int64_t b = take_block(p);
  if (b < 0)
    return 0;
  /* The block's number goes in the list before any head that covers it. */
  p->list[(p->head >> r->block_shift) % r->nblocks] = (uint32_t)b;
  p->next = r->blocks + (size_t)b * r->block_slots * GT_RSLOT;
  p->end = p->next + (size_t)r->block_slots * GT_RSLOT;
  return 1;
}

int gt_ring_producer_write(struct gt_ring_producer *p, const struct gt_record *rec) {
  unsigned k = rec->nslots;
  unsigned n = gt_frame_slots(k);
  if (k == 0 || k > GT_MAX_SLOTS || p->state != GT_PROD_SUB)
    return 0;
  if (gt_ring_room(p) < n && !gt_ring_producer_room(p, n))
    return 0;
  uint64_t word = gt_frame_word(GT_FRAME_FULL, n, rec->api, rec->tid);
  memcpy(p->next, &word, 8);
  memcpy(p->next + 8, rec, (size_t)k * GT_SLOT_SIZE);
  p->next += (size_t)n * GT_RSLOT;
  p->head += n;
  atomic_store_explicit(&p->sub->head, p->head, memory_order_release);
  return 1;
}
