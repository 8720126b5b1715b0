/* fuzz_ring.c — libFuzzer target: the collector's view of a ring whose
 * contents a traced process controls. The first 8 bytes set the shared
 * ring's `head`, the rest overwrite everything after the header of a valid
 * 16 KiB ring: the shared ring's sequence words and slots, the directory of
 * its sub-rings (heads, states), their block lists, the free-block bitmap
 * and the blocks. The consumer must read,
 * skip, free and abandon without faulting or looping forever, and every
 * record it hands out must be consistent.
 *
 * Built with -DGT_FUZZ_CONCURRENT (fuzz_ring_concurrent), a second thread
 * also replays the input as a mutation script — (offset lo, offset hi,
 * byte) triples written into the ring over and over — while the consumer
 * reads: the process may change its ring between the consumer's checks and
 * its copy. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef GT_FUZZ_CONCURRENT
/* The mutation script: (slot, field, value) triples. Fields are the bytes
 * the consumer judges — a frame's format and slot count, a full record's
 * slot count, kind and API, a sequence word, a sub-ring's slot or head — or
 * (field >= 6) any byte of the ring after its header. */
struct mutation {
  struct gt_ring *ring;
  size_t body_len;
  const uint8_t *script;
  size_t len;
  _Atomic int started, stop;
};

static volatile unsigned char *target(const struct mutation *m, const uint8_t *t) {
  const struct gt_ring *r = m->ring;
  size_t slot = t[0] & r->mask;
  volatile unsigned char *s = r->slots + slot * GT_RSLOT;
  static const size_t fields[5] = {0, 1, 8 + 27, 8 + 26, 8 + 24};
  switch (t[1] % 8) {
  case 5:
    return (volatile unsigned char *)&r->seq[slot];
  case 6: /* a block's slot, a sub-ring's head, or a block list entry */
    if ((t[0] & 0xc0) == 0x80)
      return (volatile unsigned char *)&r->dir[t[0] % r->nsub].head;
    if ((t[0] & 0xc0) == 0xc0)
      return (volatile unsigned char *)&r->lists[t[0] % (r->nsub * r->nblocks)];
    return r->blocks + (t[0] % (r->nblocks * r->block_slots)) * GT_RSLOT +
           fields[t[1] / 8 % 5];
  case 7:
    return (volatile unsigned char *)r->seq +
           ((size_t)t[0] | (size_t)t[1] << 8) % m->body_len;
  default:
    return s + fields[t[1] % 8];
  }
}

static void *mutate(void *p) {
  struct mutation *m = p;
  atomic_store(&m->started, 1);
  while (!atomic_load_explicit(&m->stop, memory_order_relaxed))
    for (size_t i = 0; i + 3 <= m->len; i += 3)
      *target(m, m->script + i) = m->script[i + 2];
  return NULL;
}
#endif

static void check_record(const struct gt_record *out) {
  unsigned n = out[0].nslots;
  if (n == 0 || n > GT_MAX_SLOTS || !gt_kind_is_record(out[0].kind) ||
      out[0].api >= GT_API_COUNT)
    abort(); /* the consumer must never hand out an invalid record */
  for (unsigned i = 1; i < n; i++) {
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      abort();
  }
}

enum { BYTES = 16384 };
static unsigned char mem[BYTES] __attribute__((aligned(64)));

/* A valid 16 KiB ring whose heads and contents come from the input. */
static void load(struct gt_ring *ring, const uint8_t *data, size_t size) {
  size_t bytes = gt_ring_bytes_for(BYTES);
  gt_ring_init(mem, BYTES, 1, GT_CLOCK_MONOTONIC);
  if (gt_ring_attach(ring, mem, bytes) != 0 || ring->nsub == 0)
    abort();
  if (size >= 8) {
    uint64_t head;
    memcpy(&head, data, 8);
    atomic_store(&ring->hdr->head, head);
    data += 8;
    size -= 8;
  }
  unsigned char *body = (unsigned char *)ring->seq;
  size_t body_len = bytes - (size_t)(body - mem); /* all of it after the header */
  memcpy(body, data, size < body_len ? size : body_len);
}

/* Every read, skip or abandon consumes a slot, so 4 laps of every slot in
 * the region bound the work. */
static void consume(struct gt_ring *ring) {
  struct gt_record out[GT_MAX_SLOTS];
  for (int i = 0; i < 4 * BYTES / (int)GT_RSLOT; i++) {
    enum gt_ring_status st = gt_ring_read(ring, out);
    if (st == GT_RING_EMPTY)
      break;
    if (st == GT_RING_PENDING && gt_ring_abandon(ring) == 0)
      break;
    if (st == GT_RING_RECORD)
      check_record(out);
    if (i % 64 == 0)
      gt_ring_publish(ring);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct gt_ring ring;
  load(&ring, data, size);
#ifndef GT_FUZZ_CONCURRENT
  consume(&ring);
#else
  /* The ring is reloaded and read again for a few rounds while the mutator
   * runs, so the reads overlap its writes. */
  const uint8_t *script = size > 8 ? data + 8 : data;
  /* The mutator's own views: the consumer's struct is re-bound by load(). */
  struct gt_ring views = ring;
  struct mutation m = {.ring = &views,
                       .body_len = gt_ring_bytes_for(BYTES) -
                                   (size_t)((unsigned char *)ring.seq - mem),
                       .script = script,
                       .len = size > 8 ? size - 8 : 0};
  pthread_t th;
  if (pthread_create(&th, NULL, mutate, &m) != 0)
    return 0;
  while (!atomic_load(&m.started))
    ;
  for (int round = 0; round < 16; round++) {
    if (round)
      load(&ring, data, size);
    consume(&ring);
  }
  atomic_store(&m.stop, 1);
  pthread_join(th, NULL);
#endif
  return 0;
}
