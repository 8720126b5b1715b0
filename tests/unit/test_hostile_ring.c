/* test_hostile_ring.c — the collector's consumer against a traced process
 * that changes its ring while the consumer reads it.
 *
 * Two producer threads write valid records (compact launches into a
 * sub-ring, and one-slot and three-slot text records as full frames into
 * the sub-ring and the shared ring) while a mutator thread keeps flipping
 * frame words (format, slot count), records' slot count and kind, text
 * magic, and the sub-ring's head. Whatever the timing, every record the
 * consumer hands out must be consistent in the consumer's private copy: a
 * slot count in 1..GT_MAX_SLOTS, a known kind, text slots with the right
 * magic and index, and nothing written past the output buffer.
 *
 * Not part of the ThreadSanitizer run: the races with the mutator are the
 * point of the test (a hostile process owns that memory). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "gputrace/ring.h"

#define BYTES (64u * 1024u)
#define RUN_NS 1500000000ull

static _Atomic int g_stop;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct producer_arg {
  struct gt_ring *ring;
  int sub; /* write to a sub-ring of its own, else to the shared ring */
};

static void *producer(void *p) {
  struct producer_arg *a = p;
  struct gt_ring_producer prod;
  memset(&prod, 0, sizeof prod);
  if (a->sub && gt_ring_claim(a->ring, &prod, 1) != 0)
    return NULL;
  struct gt_record buf[GT_MAX_SLOTS];
  const char *name = "_Z6kernelPfS_i_a_name_that_needs_two_text_slots_"
                     "0123456789012345678901234567890123456789012345678901234567890";
  for (uint64_t i = 0; !atomic_load_explicit(&g_stop, memory_order_relaxed); i++) {
    if (a->sub && i % 3 == 1) {
      if (gt_ring_room(&prod) == 0 && !gt_ring_producer_room(&prod, 1))
        continue;
      struct gt_frame_launch *f = gt_ring_slot(&prod);
      memset(f, 0, sizeof *f);
      f->frame = GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)GT_API_cudaLaunchKernel << 16;
      f->ts = i;
      gt_ring_commit1(&prod);
      continue;
    }
    memset(buf, 0, sizeof buf[0]);
    buf[0].ts_ns = i;
    buf[0].nslots = 1;
    if (i % 3 == 0) {
      buf[0].kind = GT_KIND_KERNEL_NAME;
      buf[0].api = GT_API_gputrace_kernel_name;
      gt_record_attach_text(&buf[0], name, strlen(name));
    } else {
      buf[0].kind = GT_KIND_LAUNCH;
      buf[0].api = GT_API_cudaLaunchKernel;
    }
    if (a->sub)
      gt_ring_producer_write(&prod, &buf[0]);
    else
      gt_ring_write(a->ring, &buf[0]);
  }
  return NULL;
}

/* Flip the bytes of one 64-byte slot the consumer judges. */
static void flip(volatile unsigned char *slot, unsigned round) {
  slot[1] = (uint8_t)(round & 1 ? 255 : 1); /* frame: slot count */
  slot[1] = (uint8_t)(round & 2 ? 30 : 2);
  if (round % 5 == 0)
    slot[0] = (uint8_t)(round & 8 ? GT_FRAME_LAUNCH : GT_FRAME_FULL); /* format */
  slot[8 + 27] = (uint8_t)(round & 4 ? 200 : 3); /* a full record's nslots */
  if (round % 7 == 0)
    slot[8 + 26] = 250; /* its kind */
  slot[8 + 26] = GT_KIND_LAUNCH;
  if (round % 11 == 0)
    slot[0] ^= 0xff; /* a text slot's magic, or the format */
}

/* Flip bytes the consumer validates, in every slot, as fast as it can. */
static void *mutator(void *p) {
  struct gt_ring *ring = p;
  for (unsigned round = 0; !atomic_load_explicit(&g_stop, memory_order_relaxed);
       round++) {
    for (unsigned s = 0; s <= ring->mask; s++)
      flip(ring->slots + (size_t)s * GT_RSLOT, round);
    for (uint64_t s = 0; s < ring->nblocks * ring->block_slots; s++)
      flip(ring->blocks + (size_t)s * GT_RSLOT, round);
    if (round % 13 == 0) /* a head that runs ahead, then comes back */
      atomic_fetch_add(&ring->dir[0].head, round & 16 ? 1000000 : 3);
    if (round % 17 == 0) /* a block list naming nothing, or another block */
      ring->lists[round % ring->nblocks] = round & 32 ? 0xffffffffu : round % 3;
  }
  return NULL;
}

static int record_consistent(const struct gt_record *out) {
  unsigned n = out[0].nslots;
  if (n == 0 || n > GT_MAX_SLOTS || !gt_kind_is_record(out[0].kind) ||
      out[0].api >= GT_API_COUNT)
    return 0;
  for (unsigned i = 1; i < n; i++) {
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      return 0;
  }
  return 1;
}

int main(void) {
  void *mem = aligned_alloc(64, BYTES);
  gt_ring_init(mem, BYTES, 7, GT_CLOCK_MONOTONIC);
  struct gt_ring ring;
  CHECK(gt_ring_attach(&ring, mem, gt_ring_bytes_for(BYTES)) == 0);
  pthread_t prod, prod2, mut;
  struct producer_arg shared = {&ring, 0}, sub = {&ring, 1};
  pthread_create(&prod, NULL, producer, &shared);
  pthread_create(&prod2, NULL, producer, &sub);
  pthread_create(&mut, NULL, mutator, &ring);
  /* One slot more than the reader may fill: a canary for overruns. */
  struct gt_record out[GT_MAX_SLOTS + 1];
  memset(&out[GT_MAX_SLOTS], 0xa5, sizeof out[GT_MAX_SLOTS]);
  unsigned char canary[GT_SLOT_SIZE];
  memset(canary, 0xa5, sizeof canary);
  uint64_t records = 0, inconsistent = 0, start = now_ns();
  while (now_ns() - start < RUN_NS) {
    enum gt_ring_status st = gt_ring_read(&ring, out);
    if (st == GT_RING_RECORD) {
      records++;
      inconsistent += !record_consistent(out);
    } else if (st == GT_RING_PENDING) {
      gt_ring_abandon(&ring);
    }
    gt_ring_publish(&ring);
  }
  atomic_store(&g_stop, 1);
  pthread_join(prod, NULL);
  pthread_join(prod2, NULL);
  pthread_join(mut, NULL);
  printf("hostile ring: %llu records read, %llu skipped as corrupt, %llu inconsistent\n",
         (unsigned long long)records, (unsigned long long)ring.lost,
         (unsigned long long)inconsistent);
  CHECK(records > 0);
  CHECK_EQ_U64(inconsistent, 0);
  CHECK(memcmp(&out[GT_MAX_SLOTS], canary, sizeof canary) == 0);
  free(mem);
  return check_finish("test_hostile_ring");
}
