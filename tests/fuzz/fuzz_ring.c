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
struct mutation {
  volatile unsigned char *body;
  size_t body_len;
  const uint8_t *script;
  size_t len;
  _Atomic int stop;
};

static void *mutate(void *p) {
  struct mutation *m = p;
  while (!atomic_load_explicit(&m->stop, memory_order_relaxed))
    for (size_t i = 0; i + 3 <= m->len; i += 3) {
      size_t off = ((size_t)m->script[i] | (size_t)m->script[i + 1] << 8) % m->body_len;
      m->body[off] = m->script[i + 2];
    }
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  enum { CAP = 64 };
  static unsigned char mem[65536] __attribute__((aligned(64)));
  size_t bytes = gt_ring_bytes(CAP);
  if (bytes > sizeof mem)
    abort();
  gt_ring_init(mem, CAP, 1, GT_CLOCK_MONOTONIC);
  struct gt_ring ring;
  if (gt_ring_attach(&ring, mem, bytes) != 0)
    abort();
  if (size >= 8) {
    uint64_t head;
    memcpy(&head, data, 8);
    atomic_store(&ring.hdr->head, head);
    data += 8;
    size -= 8;
  }
  unsigned char *body = (unsigned char *)ring.seq;
  size_t body_len = bytes - (size_t)(body - mem);
  memcpy(body, data, size < body_len ? size : body_len);
#ifdef GT_FUZZ_CONCURRENT
  struct mutation m = {.body = body, .body_len = body_len, .script = data, .len = size};
  pthread_t th;
  int threaded = pthread_create(&th, NULL, mutate, &m) == 0;
#endif
  struct gt_record out[GT_MAX_SLOTS];
  /* Every read, skip or abandon consumes a slot, so 4 laps bound the work. */
  for (int i = 0; i < 4 * CAP; i++) {
    enum gt_ring_status st = gt_ring_read(&ring, out);
    if (st == GT_RING_EMPTY)
      break;
    if (st == GT_RING_PENDING && gt_ring_abandon(&ring) == 0)
      break;
    if (st == GT_RING_RECORD)
      check_record(out);
  }
#ifdef GT_FUZZ_CONCURRENT
  atomic_store(&m.stop, 1);
  if (threaded)
    pthread_join(th, NULL);
#endif
  return 0;
}
