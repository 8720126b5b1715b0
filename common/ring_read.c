/* ring_read.c — the consumer's side of the ring (the collector); see
 * include/gputrace/ring.h for the contract.
 *
 * Everything in the region is the traced process's to change at any time:
 * a frame is copied out of shared memory first, and only the private copy
 * is judged and converted, so what gt_ring_read hands out is consistent
 * whatever the process did meanwhile. Positions live in struct gt_ring;
 * heads read from the region are only upper bounds to check. */
#include <string.h>

#include "gputrace/ring.h"

enum { SRC_EMPTY, SRC_RECORD, SRC_PENDING, SRC_INVALID, SRC_PAD };

/* ---- frames ---- */

/* Every byte of `out` is assigned (no memset: this runs per launch). */
static inline unsigned decode_launch(const struct gt_frame_launch *f,
                                     struct gt_record *out) {
  unsigned api = (unsigned)(f->frame >> 16) & 0xffffu;
  if (((f->frame >> 8) & 0xffu) != 1 || api >= GT_API_COUNT ||
      gt_apis[api].kind != GT_KIND_LAUNCH)
    return 0;
  out->ts_ns = f->ts;
  out->dur_ns = f->dur;
  out->pid = 0; /* the caller knows its process */
  out->tid = (uint32_t)(f->frame >> 32);
  out->api = (uint16_t)api;
  out->kind = GT_KIND_LAUNCH;
  out->nslots = 1;
  out->result = f->result;
  out->flags = gt_launch_flags(api) |
               (f->stack_id & GT_FRAME_STACK_SAMPLED ? GT_F_STACK_SAMPLED : 0u);
  out->stack_id = f->stack_id & ~GT_FRAME_STACK_SAMPLED;
  out->u.launch.kernel = f->kernel;
  out->u.launch.grid[0] = f->grid_x;
  out->u.launch.grid[1] = f->grid_y;
  out->u.launch.grid[2] = f->grid_z;
  out->u.launch.block[0] = f->block_x;
  out->u.launch.block[1] = f->block_y;
  out->u.launch.block[2] = f->block_z;
  out->u.launch.shared_mem = f->shared_mem;
  out->u.launch.stream = f->stream;
  out->u.launch.corr = f->corr;
  out->u.launch.node = 0;
  return 1;
}

/* 1 when a full frame's record (already in `out`, private) and its text
 * slots are plausible and fill exactly the `n` ring slots of the frame. */
static int full_valid(const struct gt_record *out, unsigned n) {
  const struct gt_text_slot *maybe_text = (const void *)out;
  unsigned k = out->nslots;
  if (maybe_text->magic == GT_TEXT_MAGIC || !gt_kind_is_record(out->kind) || k == 0 ||
      k > GT_MAX_SLOTS || out->api >= GT_API_COUNT || gt_frame_slots(k) != n)
    return 0;
  for (unsigned i = 1; i < k; i++) {
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      return 0;
  }
  return 1;
}

/* Copy `len` bytes from byte offset `off` of a ring of `cap` slots. */
static void get_bytes(void *dst, const unsigned char *slots, uint64_t cap, uint64_t off,
                      size_t len) {
  size_t end = (size_t)cap * GT_RSLOT;
  off %= end;
  size_t first = len < end - off ? len : end - off;
  memcpy(dst, slots + off, first);
  if (first < len)
    memcpy((unsigned char *)dst + first, slots, len - first);
}

/* The bytes of a full frame's record and text slots (after its word). */
static size_t full_len(unsigned n) {
  size_t len = (size_t)n * GT_RSLOT - 8u;
  return len > (size_t)GT_MAX_SLOTS * GT_SLOT_SIZE ? (size_t)GT_MAX_SLOTS * GT_SLOT_SIZE
                                                   : len;
}

/* Judge the frame whose first slot (copied) says `n` slots; a full frame's
 * bytes are copied from `at` (contiguous) into `out` first. 1 valid. */
static int take_frame(const unsigned char *first, const unsigned char *at, unsigned n,
                      struct gt_record out[GT_MAX_SLOTS]) {
  if (first[0] == GT_FRAME_LAUNCH)
    return decode_launch((const struct gt_frame_launch *)(const void *)first, out);
  if (first[0] != GT_FRAME_FULL || n < 2)
    return 0;
  memcpy(out, at + 8, full_len(n));
  return full_valid(out, n);
}

/* The slot count a first slot (private copy) claims; 0 if impossible. */
static unsigned frame_len(const unsigned char *first) {
  uint64_t word;
  memcpy(&word, first, 8);
  unsigned n = (unsigned)(word >> 8) & 0xffu;
  return n >= 1 && n <= GT_FRAME_MAX_SLOTS ? n : 0;
}

/* ---- sub-rings ---- */

static void publish(struct gt_ring *ring, unsigned i) {
  struct gt_ring_src *src = &ring->src[i];
  if (src->published != src->tail) {
    atomic_store_explicit(&ring->dir[i].tail, src->tail, memory_order_release);
    src->published = src->tail;
  }
}

/* The block holding the tail is read: back to the bitmap for any writer. */
static void release_block(struct gt_ring *ring, struct gt_ring_src *src) {
  if (src->base != NULL)
    atomic_fetch_or_explicit(&ring->freemap[src->block / 64u], 1ull << (src->block % 64u),
                             memory_order_release);
  src->base = NULL;
}

/* Past n slots of the block at the tail (n never crosses its end). */
static inline void advance(struct gt_ring *ring, struct gt_ring_src *src, uint64_t n) {
  src->tail += n;
  if ((src->tail & (ring->block_slots - 1u)) == 0)
    release_block(ring, src);
}

/* Empty: a retired sub-ring whose last record is consumed is free again,
 * its partly used block back in the bitmap and its position on the next
 * block boundary (where its next writer starts with a block of its own). */
static void maybe_free(struct gt_ring *ring, unsigned i) {
  struct gt_sub *s = &ring->dir[i];
  struct gt_ring_src *src = &ring->src[i];
  uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
  if (st != GT_SUB_RETIRED ||
      atomic_load_explicit(&s->head, memory_order_acquire) != src->tail)
    return;
  uint64_t bs = ring->block_slots;
  if (src->tail & (bs - 1u)) {
    release_block(ring, src);
    src->tail = (src->tail | (bs - 1u)) + 1u;
  }
  src->seen = src->tail;
  atomic_store_explicit(&s->head, src->tail, memory_order_relaxed); /* no writer now */
  publish(ring, i);
  atomic_compare_exchange_strong_explicit(&s->state, &st, GT_SUB_FREE,
                                          memory_order_release, memory_order_relaxed);
}

static inline __attribute__((always_inline)) int
read_sub(struct gt_ring *ring, unsigned i, struct gt_record *out) {
  struct gt_ring_src *src = &ring->src[i];
  uint64_t head = src->seen;
  if (head == src->tail) {
    /* Caught up: the head again, but once a pass while the writer runs. */
    if (!ring->eager && src->epoch == ring->epoch) {
      maybe_free(ring, i);
      return SRC_EMPTY;
    }
    src->epoch = ring->epoch;
    head = src->seen = atomic_load_explicit(&ring->dir[i].head, memory_order_acquire);
    if (head == src->tail) {
      maybe_free(ring, i);
      return SRC_EMPTY;
    }
  }
  uint64_t avail = head - src->tail, bs = ring->block_slots;
  if (avail > ring->nblocks * bs) {
    /* No writer of ours gets that far ahead: skip to its head, counted
     * (as lost: at most the slots that exist) and as a scribble. */
    ring->lost += ring->nblocks * bs;
    ring->scribbled++;
    release_block(ring, src);
    src->tail = src->seen = head;
    publish(ring, i);
    return SRC_INVALID;
  }
  uint64_t off = src->tail & (bs - 1u), left = bs - off;
  if (src->base == NULL) { /* a block begins: which one the list says */
    uint32_t b = ring->lists[(size_t)i * ring->nblocks +
                             (src->tail >> ring->block_shift) % ring->nblocks];
    if (b >= ring->nblocks) {
      uint64_t skip = avail < left ? avail : left;
      ring->lost += skip;
      src->tail += skip; /* not ours to give back */
      return SRC_INVALID;
    }
    src->block = b;
    src->base = ring->blocks + (size_t)b * bs * GT_RSLOT;
  }
  const unsigned char *at = src->base + off * GT_RSLOT;
  unsigned char first[GT_RSLOT];
  memcpy(first, at, GT_RSLOT);
  unsigned n = frame_len(first);
  if (n == 0 || n > avail || n > left) {
    ring->lost++;
    advance(ring, src, 1);
    return SRC_INVALID;
  }
  if ((first[0]) == GT_FRAME_PAD) {
    advance(ring, src, n);
    return SRC_PAD;
  }
  if (!take_frame(first, at, n, out)) {
    ring->lost += n;
    advance(ring, src, n);
    return SRC_INVALID;
  }
  advance(ring, src, n);
  if (src->tail - src->published >= ring->nblocks * bs / 8u)
    publish(ring, i); /* a long batch hands its space back before it ends */
  return SRC_RECORD;
}

/* ---- the shared ring ---- */

static int is_committed(const struct gt_ring *ring, uint64_t pos) {
  return atomic_load_explicit(&ring->seq[pos & ring->mask], memory_order_acquire) ==
         pos + 1;
}

static void release_slots(struct gt_ring *ring, uint64_t tail, unsigned n) {
  uint64_t cap = ring->mask + 1;
  for (unsigned i = 0; i < n; i++)
    atomic_store_explicit(&ring->seq[(tail + i) & ring->mask], tail + i + cap,
                          memory_order_release);
  ring->tail = tail + n;
}

static int read_shared(struct gt_ring *ring, struct gt_record *out) {
  uint64_t tail = ring->tail;
  if (!is_committed(ring, tail)) {
    uint64_t head = atomic_load_explicit(&ring->hdr->head, memory_order_acquire);
    return head == tail ? SRC_EMPTY : SRC_PENDING;
  }
  unsigned char first[GT_RSLOT];
  memcpy(first, ring->slots + (tail & ring->mask) * GT_RSLOT, GT_RSLOT);
  unsigned n = frame_len(first);
  int ok = n != 0 && n <= ring->mask + 1;
  for (unsigned i = 1; ok && i < n; i++)
    ok = is_committed(ring, tail + i);
  if (ok && first[0] == GT_FRAME_FULL && n >= 2) {
    get_bytes(out, ring->slots, ring->mask + 1, (tail & ring->mask) * GT_RSLOT + 8u,
              full_len(n));
    ok = full_valid(out, n);
  } else if (ok) {
    ok = first[0] == GT_FRAME_LAUNCH && n == 1 &&
         decode_launch((const struct gt_frame_launch *)(const void *)first, out);
  }
  if (!ok) {
    ring->lost++;
    release_slots(ring, tail, 1);
    return SRC_INVALID;
  }
  release_slots(ring, tail, n);
  return SRC_RECORD;
}

/* ---- round-robin ---- */

static void next_source(struct gt_ring *ring) {
  if (ring->cur < ring->nsub)
    publish(ring, ring->cur);
  ring->cur = ring->cur >= ring->nsub ? 0 : ring->cur + 1;
  ring->batch_left = GT_RING_BATCH;
}

enum gt_ring_status gt_ring_read(struct gt_ring *ring,
                                 struct gt_record out[GT_MAX_SLOTS]) {
  unsigned sources = ring->nsub + 1, idle = 0, skipped = 0;
  int pending = 0;
  if (ring->cur > ring->nsub)
    ring->cur = 0;
  while (idle < sources) {
    int st =
        ring->cur == ring->nsub ? read_shared(ring, out) : read_sub(ring, ring->cur, out);
    if (st == SRC_RECORD) {
      ring->last_src = ring->cur;
      if (--ring->batch_left == 0)
        next_source(ring);
      return GT_RING_RECORD;
    }
    if (st == SRC_INVALID || st == SRC_PAD) {
      /* A process committing garbage as fast as it is skipped must not keep
       * the consumer here: give the caller back control after a bounded run. */
      if (++skipped >= GT_RING_MAX_SKIP)
        return GT_RING_SKIPPED;
      continue;
    }
    pending |= st == SRC_PENDING;
    next_source(ring);
    idle++;
  }
  return pending ? GT_RING_PENDING : GT_RING_EMPTY;
}

enum gt_ring_status gt_ring_read_source(struct gt_ring *ring, unsigned src,
                                        struct gt_record out[GT_MAX_SLOTS]) {
  if (src > ring->nsub)
    return GT_RING_EMPTY;
  int st = SRC_PAD;
  for (unsigned pads = 0; st == SRC_PAD && pads < GT_RING_MAX_SKIP; pads++)
    st = src == ring->nsub ? read_shared(ring, out) : read_sub(ring, src, out);
  if (st == SRC_PAD)
    st = SRC_INVALID;
  static const enum gt_ring_status map[] = {[SRC_EMPTY] = GT_RING_EMPTY,
                                            [SRC_RECORD] = GT_RING_RECORD,
                                            [SRC_PENDING] = GT_RING_PENDING,
                                            [SRC_INVALID] = GT_RING_SKIPPED};
  return map[st];
}

void gt_ring_publish(struct gt_ring *ring) {
  for (unsigned i = 0; i < ring->nsub; i++)
    publish(ring, i);
  ring->epoch++;
  ring->hdr->consumer_tail = ring->tail;
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
  ring->lost++;
  return 1;
}

unsigned gt_ring_fill_pct(const struct gt_ring *ring) {
  uint64_t head = atomic_load_explicit(&ring->hdr->head, memory_order_acquire);
  uint64_t used = head - ring->tail, cap = ring->mask + 1;
  unsigned pct = used >= cap ? 100u : (unsigned)(used * 100 / cap);
  /* The backlog (committed, not yet read) of every sub-ring against the
   * pool: what a storm has left to drain, not blocks idle threads hold. */
  uint64_t pool = ring->nblocks * ring->block_slots, backlog = 0;
  for (unsigned i = 0; i < ring->nsub && backlog < pool; i++) {
    uint64_t h = atomic_load_explicit(&ring->dir[i].head, memory_order_relaxed);
    uint64_t b = h - ring->src[i].tail;
    backlog += b < pool ? b : pool;
  }
  if (pool) {
    unsigned p = backlog >= pool ? 100u : (unsigned)(backlog * 100 / pool);
    pct = p > pct ? p : pct;
  }
  return pct;
}
