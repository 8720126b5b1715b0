/* fuzz_ring.c — libFuzzer target: the collector's view of a ring whose
 * contents a traced process controls. The first 8 bytes set `head`, the
 * rest overwrite the sequence words and slots of a valid 64-slot ring; the
 * consumer must read, skip and abandon without faulting or looping forever,
 * and every record it hands out must be consistent.
 *
 * Built with -DGT_FUZZ_CONCURRENT (fuzz_ring_concurrent), a second thread
 * also replays the input as a mutation script — (offset lo, offset hi,
 * byte) triples written into the ring over and over — while the consumer
 * reads: the process may change its ring between the consumer's checks and
 * its copy (issue 14). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef GT_FUZZ_CONCURRENT
/* The mutation script: (slot, field, value) triples. Fields are the bytes
 * the consumer judges — a record's slot count, kind and API, a text slot's
 * magic and index, a sequence word — or (field >= 6) any byte of the ring. */
struct mutation {
  struct gt_ring *ring;
  size_t body_len;
  const uint8_t *script;
  size_t len;
  _Atomic int started, stop;
};

static volatile unsigned char *target(const struct mutation *m, const uint8_t *t) {
  size_t slot = t[0] & m->ring->mask;
  volatile unsigned char *s = m->ring->slots + slot * GT_SLOT_SIZE;
  static const size_t fields[6] = {27, 26, 24, 0, 4, 0};
  if (t[1] % 8 == 5)
    return (volatile unsigned char *)&m->ring->seq[slot];
  if (t[1] % 8 < 5)
    return s + fields[t[1] % 8];
  return (volatile unsigned char *)m->ring->seq +
         ((size_t)t[0] | (size_t)t[1] << 8) % m->body_len;
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
  if (n == 0 || n > GT_MAX_SLOTS || out[0].kind == GT_KIND_NONE ||
      out[0].kind >= GT_KIND_COUNT || out[0].api >= GT_API_COUNT)
    abort(); /* the consumer must never hand out an invalid record */
  for (unsigned i = 1; i < n; i++) {
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      abort();
  }
}

enum { CAP = 64 };
static unsigned char mem[65536] __attribute__((aligned(64)));

/* A valid 64-slot ring whose head and contents come from the input. */
static void load(struct gt_ring *ring, const uint8_t *data, size_t size) {
  size_t bytes = gt_ring_bytes(CAP);
  if (bytes > sizeof mem)
    abort();
  gt_ring_init(mem, CAP, 1, GT_CLOCK_MONOTONIC);
  if (gt_ring_attach(ring, mem, bytes) != 0)
    abort();
  if (size >= 8) {
    uint64_t head;
    memcpy(&head, data, 8);
    atomic_store(&ring->hdr->head, head);
    data += 8;
    size -= 8;
  }
  unsigned char *body = (unsigned char *)ring->seq;
  size_t body_len = bytes - (size_t)(body - mem);
  memcpy(body, data, size < body_len ? size : body_len);
}

/* Every read, skip or abandon consumes a slot, so 4 laps bound the work. */
static void consume(struct gt_ring *ring) {
  struct gt_record out[GT_MAX_SLOTS];
  for (int i = 0; i < 4 * CAP; i++) {
    enum gt_ring_status st = gt_ring_read(ring, out);
    if (st == GT_RING_EMPTY)
      break;
    if (st == GT_RING_PENDING && gt_ring_abandon(ring) == 0)
      break;
    if (st == GT_RING_RECORD)
      check_record(out);
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
  struct mutation m = {.ring = &ring,
                       .body_len =
                           gt_ring_bytes(CAP) - (size_t)((unsigned char *)ring.seq - mem),
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
