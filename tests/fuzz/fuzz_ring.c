/* fuzz_ring.c — libFuzzer target: the collector's view of a ring whose
 * contents a traced process controls. The first 8 bytes set `head`, the
 * rest overwrite the sequence words and slots of a valid 64-slot ring; the
 * consumer must read, skip and abandon without faulting or looping forever. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
  struct gt_record out[GT_MAX_SLOTS];
  /* Every read or abandon consumes a slot, so 4 laps bound the work. */
  for (int i = 0; i < 4 * CAP; i++) {
    enum gt_ring_status st = gt_ring_read(&ring, out);
    if (st == GT_RING_EMPTY)
      break;
    if (st == GT_RING_PENDING && gt_ring_abandon(&ring) == 0)
      break;
    if (st == GT_RING_RECORD && (out[0].nslots == 0 || out[0].nslots > GT_MAX_SLOTS))
      abort(); /* the consumer must never hand out an invalid record */
  }
  return 0;
}
