/* test_ring.c — the shared-memory ring: order, text records, drops counted
 * exactly per kind, abandoned slots, and 8 writer threads against one
 * reader (also run under TSan by scripts/test.sh). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gputrace/ring.h"

static struct gt_ring make_ring(uint64_t capacity) {
  struct gt_ring ring;
  size_t bytes = gt_ring_bytes(capacity);
  void *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  gt_ring_init(mem, capacity, 42, GT_CLOCK_MONOTONIC);
  CHECK(gt_ring_attach(&ring, mem, bytes) == 0);
  return ring;
}

static struct gt_record launch(uint32_t tid, uint64_t seq) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.kind = GT_KIND_LAUNCH;
  r.api = GT_API_cudaLaunchKernel;
  r.nslots = 1;
  r.tid = tid;
  r.ts_ns = seq;
  return r;
}

static void test_order_and_text(void) {
  struct gt_ring ring = make_ring(64);
  struct gt_record out[GT_MAX_SLOTS];
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  for (uint64_t i = 0; i < 10; i++) {
    struct gt_record r = launch(1, i);
    CHECK(gt_ring_write(&ring, &r) == 1);
  }
  struct gt_record buf[GT_MAX_SLOTS];
  memset(buf, 0, sizeof buf);
  buf[0].kind = GT_KIND_KERNEL_NAME;
  buf[0].api = GT_API_gputrace_kernel_name;
  const char *name = "_Z5inferPfS_i_with_a_name_long_enough_to_need_two_text_slots_"
                     "0123456789012345678901234567890123456789";
  gt_record_attach_text(&buf[0], name, strlen(name));
  CHECK_EQ_U64(buf[0].nslots, 3);
  CHECK(gt_ring_write(&ring, &buf[0]) == 1);
  for (uint64_t i = 0; i < 10; i++) {
    CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
    CHECK_EQ_U64(out[0].ts_ns, i);
  }
  CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  CHECK_EQ_U64(out[0].nslots, 3);
  CHECK_EQ_U64(out[0].u.kname.text_len, strlen(name));
  const struct gt_text_slot *t = (const void *)&out[1];
  CHECK(memcmp(t[0].text, name, GT_TEXT_PER_SLOT) == 0);
  CHECK(memcmp(t[1].text, name + GT_TEXT_PER_SLOT, strlen(name) - GT_TEXT_PER_SLOT) == 0);
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  CHECK_EQ_U64(ring.lost, 0);
  free(ring.hdr);
}

static void test_full_ring_counts_drops(void) {
  struct gt_ring ring = make_ring(64);
  int written = 0;
  for (int i = 0; i < 100; i++) {
    struct gt_record r = launch(1, (uint64_t)i);
    if (i % 2)
      r.kind = GT_KIND_MEMCPY;
    written += gt_ring_write(&ring, &r);
  }
  CHECK_EQ_U64(written, 64);
  /* 36 dropped, alternating kinds: 18 launches and 18 copies. */
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_LAUNCH], 18);
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_MEMCPY], 18);
  struct gt_record out[GT_MAX_SLOTS];
  int read = 0;
  while (gt_ring_read(&ring, out) == GT_RING_RECORD)
    read++;
  CHECK_EQ_U64(read, 64);
  /* A record wider than the free space is dropped whole, never split. */
  struct gt_record big[GT_MAX_SLOTS];
  memset(big, 0, sizeof big);
  big[0].kind = GT_KIND_NVTX;
  big[0].api = GT_API_nvtxRangePushA;
  char text[GT_TEXT_MAX];
  memset(text, 'x', sizeof text);
  gt_record_attach_text(&big[0], text, sizeof text);
  for (int i = 0; i < 60; i++) {
    struct gt_record r = launch(1, 0);
    gt_ring_write(&ring, &r);
  }
  CHECK(gt_ring_write(&ring, &big[0]) == 0);
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_NVTX], 1);
  free(ring.hdr);
}

static void test_abandon(void) {
  struct gt_ring ring = make_ring(64);
  /* Simulate a writer that reserved one slot and died before commit. */
  atomic_store(&ring.hdr->head, 1);
  struct gt_record out[GT_MAX_SLOTS];
  CHECK(gt_ring_read(&ring, out) == GT_RING_PENDING);
  CHECK_EQ_U64(gt_ring_abandon(&ring), 1);
  CHECK_EQ_U64(ring.lost, 1);
  struct gt_record r = launch(1, 7);
  CHECK(gt_ring_write(&ring, &r) == 1);
  CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  CHECK_EQ_U64(out[0].ts_ns, 7);
  /* A garbage slot (invalid kind) is skipped and counted. */
  struct gt_record bad = launch(1, 8);
  bad.kind = 200;
  CHECK(gt_ring_write(&ring, &bad) == 1);
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  CHECK_EQ_U64(ring.lost, 2);
  free(ring.hdr);
}

#define THREADS 8
#define PER_THREAD 200000

struct shared {
  struct gt_ring *ring;
  _Atomic int writers_left;
  uint64_t written[THREADS];
};

struct writer_arg {
  struct shared *s;
  uint32_t tid;
};

static void *writer(void *p) {
  struct writer_arg *a = p;
  uint64_t ok = 0;
  for (uint64_t i = 0; i < PER_THREAD; i++) {
    struct gt_record r = launch(a->tid, i);
    ok += (uint64_t)gt_ring_write(a->s->ring, &r);
  }
  a->s->written[a->tid] = ok;
  atomic_fetch_sub(&a->s->writers_left, 1);
  return NULL;
}

static void test_threads(uint64_t capacity) {
  struct gt_ring ring = make_ring(capacity);
  struct shared s = {.ring = &ring, .writers_left = THREADS};
  pthread_t th[THREADS];
  struct writer_arg args[THREADS];
  for (uint32_t t = 0; t < THREADS; t++) {
    args[t] = (struct writer_arg){&s, t};
    pthread_create(&th[t], NULL, writer, &args[t]);
  }
  uint64_t got[THREADS] = {0}, last[THREADS];
  int in_order = 1;
  memset(last, 0xff, sizeof last);
  struct gt_record out[GT_MAX_SLOTS];
  for (;;) {
    enum gt_ring_status st = gt_ring_read(&ring, out);
    if (st == GT_RING_RECORD) {
      uint32_t t = out[0].tid;
      if (t >= THREADS) {
        in_order = 0;
        continue;
      }
      if (last[t] != UINT64_MAX && out[0].ts_ns <= last[t])
        in_order = 0;
      last[t] = out[0].ts_ns;
      got[t]++;
    } else if (st == GT_RING_EMPTY && atomic_load(&s.writers_left) == 0) {
      break;
    }
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  while (gt_ring_read(&ring, out) == GT_RING_RECORD)
    got[out[0].tid]++;
  CHECK(in_order);
  uint64_t total_written = 0, total_got = 0;
  for (int t = 0; t < THREADS; t++) {
    CHECK_EQ_U64(got[t], s.written[t]);
    total_written += s.written[t];
    total_got += got[t];
  }
  /* Exact accounting: every call was either delivered or counted dropped. */
  CHECK_EQ_U64(total_got + ring.hdr->dropped[GT_KIND_LAUNCH],
               (uint64_t)THREADS * PER_THREAD);
  CHECK_EQ_U64(ring.lost, 0);
  printf("threads: capacity %llu: %llu delivered, %llu dropped\n",
         (unsigned long long)capacity, (unsigned long long)total_got,
         (unsigned long long)ring.hdr->dropped[GT_KIND_LAUNCH]);
  free(ring.hdr);
}

int main(void) {
  test_order_and_text();
  test_full_ring_counts_drops();
  test_abandon();
  test_threads(1u << 20); /* roomy: usually nothing dropped */
  test_threads(64);       /* tiny: many drops, still exact */
  return check_finish("test_ring");
}
