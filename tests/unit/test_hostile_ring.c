/* test_hostile_ring.c — the collector's consumer against a traced process
 * that changes its ring while the consumer reads it (issue 14).
 *
 * A producer thread writes valid records (one slot, and three-slot text
 * records) while a mutator thread keeps flipping the slot count, kind and
 * text-slot magic of every slot. Whatever the timing, every record the
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

#define CAP 64u
#define RUN_NS 1500000000ull

static _Atomic int g_stop;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *producer(void *p) {
  struct gt_ring *ring = p;
  struct gt_record buf[GT_MAX_SLOTS];
  const char *name = "_Z6kernelPfS_i_a_name_that_needs_two_text_slots_"
                     "0123456789012345678901234567890123456789012345678901234567890";
  for (uint64_t i = 0; !atomic_load_explicit(&g_stop, memory_order_relaxed); i++) {
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
    gt_ring_write(ring, &buf[0]);
  }
  return NULL;
}

/* Flip bytes the consumer validates, in every slot, as fast as it can. */
static void *mutator(void *p) {
  struct gt_ring *ring = p;
  volatile unsigned char *slots = ring->slots;
  for (unsigned round = 0; !atomic_load_explicit(&g_stop, memory_order_relaxed);
       round++) {
    for (unsigned s = 0; s < CAP; s++) {
      volatile unsigned char *slot = slots + (size_t)s * GT_SLOT_SIZE;
      struct gt_record *r = (struct gt_record *)(uintptr_t)slot;
      volatile uint8_t *nslots = &r->nslots;
      volatile uint8_t *kind = &r->kind;
      *nslots = (uint8_t)(round & 1 ? 255 : 1);
      *nslots = 1;
      *nslots = (uint8_t)(round & 2 ? 200 : 3);
      if (round % 7 == 0)
        *kind = 250;
      *kind = GT_KIND_LAUNCH;
      if (round % 11 == 0)
        slot[0] ^= 0xff; /* a text slot's magic */
    }
  }
  return NULL;
}

static int record_consistent(const struct gt_record *out) {
  unsigned n = out[0].nslots;
  if (n == 0 || n > GT_MAX_SLOTS || out[0].kind == GT_KIND_NONE ||
      out[0].kind >= GT_KIND_COUNT || out[0].api >= GT_API_COUNT)
    return 0;
  for (unsigned i = 1; i < n; i++) {
    const struct gt_text_slot *t = (const void *)&out[i];
    if (t->magic != GT_TEXT_MAGIC || t->index != i)
      return 0;
  }
  return 1;
}

int main(void) {
  size_t bytes = gt_ring_bytes(CAP);
  void *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  gt_ring_init(mem, CAP, 7, GT_CLOCK_MONOTONIC);
  struct gt_ring ring;
  CHECK(gt_ring_attach(&ring, mem, bytes) == 0);
  pthread_t prod, mut;
  pthread_create(&prod, NULL, producer, &ring);
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
  }
  atomic_store(&g_stop, 1);
  pthread_join(prod, NULL);
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
