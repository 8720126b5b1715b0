/* test_ring.c — the shared-memory ring (ring.h): the shared ring's order,
 * text records, drops counted exactly per kind and abandoned slots; the
 * sub-rings' wrap, compact launches written in place, full sub-rings,
 * claim/retire/reuse, more threads than sub-rings falling back to the shared
 * ring, invalid frames, and 8 writer threads against one concurrent reader
 * (also run under TSan by scripts/test.sh). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gputrace/ring.h"

static struct gt_ring make_ring(size_t bytes) {
  struct gt_ring ring;
  size_t len = gt_ring_bytes_for(bytes);
  CHECK(len > 0 && len <= bytes);
  void *mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  memset(mem, 0xa5, bytes); /* init must not rely on zeroed memory */
  gt_ring_init(mem, bytes, 42, GT_CLOCK_MONOTONIC);
  CHECK(gt_ring_attach(&ring, mem, len) == 0);
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

/* What the shim's launch path does (preload/launch.h), for the tests. */
static int put_launch(struct gt_ring_producer *p, uint64_t seq, uint32_t kernel) {
  if (gt_ring_room(p) == 0 && !gt_ring_producer_room(p, 1))
    return 0;
  struct gt_frame_launch *f = gt_ring_slot(p);
  f->frame =
      GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)GT_API___cudaLaunchKernel << 16 | p->tid;
  f->ts = seq;
  f->dur = 5;
  f->corr = (uint32_t)seq + 1;
  f->kernel = kernel;
  f->stream = 0x5000;
  f->grid_x = 70000;
  f->grid_y = 2;
  f->grid_z = 3;
  f->block_x = 128;
  f->block_y = 1;
  f->block_z = 1;
  f->result = 0;
  f->shared_mem = 48;
  f->stack_id = 9;
  gt_ring_commit1(p);
  return 1;
}

static const char *g_name =
    "_Z5inferPfS_i_with_a_name_long_enough_to_need_two_text_slots_"
    "0123456789012345678901234567890123456789";

static void name_record(struct gt_record buf[GT_MAX_SLOTS], uint32_t tid, uint64_t seq) {
  memset(buf, 0, sizeof buf[0]);
  buf[0].kind = GT_KIND_KERNEL_NAME;
  buf[0].api = GT_API_gputrace_kernel_name;
  buf[0].tid = tid;
  buf[0].ts_ns = seq;
  gt_record_attach_text(&buf[0], g_name, strlen(g_name));
}

static void check_name(const struct gt_record *out) {
  CHECK_EQ_U64(out[0].nslots, 3);
  CHECK_EQ_U64(out[0].u.kname.text_len, strlen(g_name));
  const struct gt_text_slot *t = (const void *)&out[1];
  CHECK(memcmp(t[0].text, g_name, GT_TEXT_PER_SLOT) == 0);
  CHECK(memcmp(t[1].text, g_name + GT_TEXT_PER_SLOT, strlen(g_name) - GT_TEXT_PER_SLOT) ==
        0);
}

static void test_layout(void) {
  struct gt_ring_layout l;
  CHECK(gt_ring_layout(16 * 1024, &l) == 0);
  CHECK(l.nsub >= 2 && l.bytes <= 16 * 1024 && l.block_slots >= GT_RING_BLOCK_MIN);
  CHECK(gt_ring_layout(32u << 20, &l) == 0);
  CHECK_EQ_U64(l.nsub, GT_RING_NSUB_MAX);
  CHECK_EQ_U64(l.block_slots, GT_RING_BLOCK_MAX);
  /* the blocks, which any one thread may fill, are most of the region */
  CHECK(l.nblocks * l.block_slots * GT_RSLOT > (30u << 20) && l.bytes <= (32u << 20));
  CHECK(gt_ring_layout(4096, &l) != 0);
}

static void test_shared_order_and_text(void) {
  struct gt_ring ring = make_ring(64 * 1024);
  struct gt_record out[GT_MAX_SLOTS];
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  for (uint64_t i = 0; i < 10; i++) {
    struct gt_record r = launch(1, i);
    CHECK(gt_ring_write(&ring, &r) == 1);
  }
  struct gt_record buf[GT_MAX_SLOTS];
  name_record(buf, 1, 10);
  CHECK(gt_ring_write(&ring, &buf[0]) == 1);
  for (uint64_t i = 0; i < 10; i++) {
    CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
    CHECK_EQ_U64(out[0].ts_ns, i);
  }
  CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  check_name(out);
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  CHECK_EQ_U64(ring.lost, 0);
  free(ring.hdr);
}

static void test_shared_full_counts_drops(void) {
  struct gt_ring ring = make_ring(64 * 1024);
  CHECK_EQ_U64(ring.mask + 1, 64); /* a one-slot record is a 2-slot frame */
  int written = 0;
  for (int i = 0; i < 100; i++) {
    struct gt_record r = launch(1, (uint64_t)i);
    if (i % 2)
      r.kind = GT_KIND_MEMCPY;
    written += gt_ring_write(&ring, &r);
  }
  CHECK_EQ_U64(written, 32);
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_LAUNCH], 34);
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_MEMCPY], 34);
  struct gt_record out[GT_MAX_SLOTS];
  int read = 0;
  while (gt_ring_read(&ring, out) == GT_RING_RECORD)
    read++;
  CHECK_EQ_U64(read, 32);
  /* A record wider than the free space is dropped whole, never split. */
  struct gt_record big[GT_MAX_SLOTS];
  memset(big, 0, sizeof big);
  big[0].kind = GT_KIND_NVTX;
  big[0].api = GT_API_nvtxRangePushA;
  char text[GT_TEXT_MAX];
  memset(text, 'x', sizeof text);
  gt_record_attach_text(&big[0], text, sizeof text);
  for (int i = 0; i < 25; i++) {
    struct gt_record r = launch(1, 0);
    gt_ring_write(&ring, &r);
  }
  CHECK(gt_ring_write(&ring, &big[0]) == 0);
  CHECK_EQ_U64(ring.hdr->dropped[GT_KIND_NVTX], 1);
  free(ring.hdr);
}

static void test_shared_abandon(void) {
  struct gt_ring ring = make_ring(64 * 1024);
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
  /* A garbage frame (invalid kind) is skipped and counted. */
  struct gt_record bad = launch(1, 8);
  bad.kind = 200;
  CHECK(gt_ring_write(&ring, &bad) == 1);
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  CHECK(ring.lost >= 2);
  free(ring.hdr);
}

/* Compact launches and 3-slot text records through one sub-ring, many laps
 * (frames wrap around its end), in order and intact. */
static void test_sub_wrap(void) {
  struct gt_ring ring = make_ring(64 * 1024);
  struct gt_ring_producer p;
  memset(&p, 0, sizeof p);
  CHECK(gt_ring_claim(&ring, &p, 77) == 0);
  CHECK(p.state == GT_PROD_SUB);
  struct gt_record out[GT_MAX_SLOTS], buf[GT_MAX_SLOTS];
  uint64_t seq = 0, want = 0;
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 13; i++, seq++) {
      if (seq % 5 == 4) {
        name_record(buf, 77, seq);
        CHECK(gt_ring_producer_write(&p, &buf[0]) == 1);
      } else {
        CHECK(put_launch(&p, seq, 0xabc) == 1);
      }
    }
    while (gt_ring_read(&ring, out) == GT_RING_RECORD) {
      CHECK_EQ_U64(out[0].ts_ns, want);
      CHECK_EQ_U64(out[0].tid, 77);
      if (want % 5 == 4) {
        check_name(out);
      } else {
        CHECK_EQ_U64(out[0].kind, GT_KIND_LAUNCH);
        CHECK_EQ_U64(out[0].api, GT_API___cudaLaunchKernel);
        CHECK_EQ_U64(out[0].flags, GT_F_KERNEL_HANDLE);
        CHECK_EQ_U64(out[0].u.launch.kernel, 0xabc);
        CHECK_EQ_U64(out[0].u.launch.grid[0], 70000);
        CHECK_EQ_U64(out[0].u.launch.grid[2], 3);
        CHECK_EQ_U64(out[0].u.launch.block[0], 128);
        CHECK_EQ_U64(out[0].u.launch.shared_mem, 48);
        CHECK_EQ_U64(out[0].u.launch.stream, 0x5000);
        CHECK_EQ_U64(out[0].u.launch.corr, want + 1);
        CHECK_EQ_U64(out[0].stack_id, 9);
        CHECK_EQ_U64(out[0].dur_ns, 5);
      }
      want++;
    }
    gt_ring_publish(&ring);
  }
  CHECK_EQ_U64(want, seq);
  CHECK(seq * 2 > ring.nblocks * ring.block_slots * 3); /* several laps of the pool */
  CHECK_EQ_U64(ring.lost, 0);
  free(ring.hdr);
}

/* One thread may fill every block; a block read is free again. */
static void test_sub_full(void) {
  struct gt_ring ring = make_ring(64 * 1024);
  struct gt_ring_producer p;
  memset(&p, 0, sizeof p);
  CHECK(gt_ring_claim(&ring, &p, 5) == 0);
  uint64_t cap = ring.nblocks * ring.block_slots, ok = 0, refused = 0;
  for (uint64_t i = 0; i < cap + 100; i++) {
    if (put_launch(&p, i, 1))
      ok++;
    else
      refused++;
  }
  CHECK_EQ_U64(ok, cap);
  CHECK_EQ_U64(refused, 100);
  CHECK_EQ_U64(gt_ring_fill_pct(&ring), 100);
  struct gt_record out[GT_MAX_SLOTS];
  for (unsigned i = 0; i + 1 < ring.block_slots; i++)
    CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  CHECK(put_launch(&p, 0, 1) == 0); /* the first block is not read through yet */
  CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  for (unsigned i = 0; i < ring.block_slots; i++)
    CHECK(put_launch(&p, cap + i, 1) == 1);
  CHECK(put_launch(&p, 0, 1) == 0);
  /* A frame longer than a block's rest pads it and goes to the next. */
  while (gt_ring_read(&ring, out) == GT_RING_RECORD)
    ;
  struct gt_record buf[GT_MAX_SLOTS];
  name_record(buf, 5, 1);
  CHECK(put_launch(&p, 1, 1) == 1);
  uint64_t before = p.head;
  CHECK(gt_ring_producer_write(&p, &buf[0]) == 1);
  CHECK(p.head > before);
  int names = 0;
  while (gt_ring_read(&ring, out) == GT_RING_RECORD)
    names += out[0].kind == GT_KIND_KERNEL_NAME;
  CHECK_EQ_U64(names, 1);
  CHECK_EQ_U64(ring.lost, 0);
  free(ring.hdr);
}

/* Every sub-ring claimed: the next thread gets the shared ring; a retired
 * sub-ring is drained, freed by the consumer and claimed again. */
static void test_claim_retire_reuse(void) {
  struct gt_ring ring = make_ring(4u << 20);
  CHECK_EQ_U64(ring.nsub, GT_RING_NSUB_MAX);
  struct gt_ring_producer p[GT_RING_NSUB_MAX + 1];
  memset(p, 0, sizeof p);
  for (unsigned i = 0; i < GT_RING_NSUB_MAX; i++)
    CHECK(gt_ring_claim(&ring, &p[i], 100 + i) == 0);
  CHECK(gt_ring_claim(&ring, &p[GT_RING_NSUB_MAX], 999) == -1);
  CHECK(p[GT_RING_NSUB_MAX].state == GT_PROD_SHARED);
  CHECK(put_launch(&p[3], 1, 3) == 1);
  CHECK(put_launch(&p[3], 2, 3) == 1);
  gt_ring_retire(&p[3]);
  CHECK(p[3].state == GT_PROD_RETIRED && gt_ring_room(&p[3]) == 0);
  CHECK_EQ_U64(atomic_load(&ring.dir[3].state), GT_SUB_RETIRED);
  struct gt_ring_producer q;
  memset(&q, 0, sizeof q);
  CHECK(gt_ring_claim(&ring, &q, 500) == -1); /* not drained yet */
  struct gt_record out[GT_MAX_SLOTS];
  int got = 0;
  while (gt_ring_read(&ring, out) == GT_RING_RECORD) {
    CHECK_EQ_U64(out[0].tid, 103);
    got++;
  }
  CHECK_EQ_U64(got, 2);
  CHECK_EQ_U64(atomic_load(&ring.dir[3].state), GT_SUB_FREE);
  memset(&q, 0, sizeof q);
  CHECK(gt_ring_claim(&ring, &q, 500) == 0);
  /* it starts on the next block boundary, its predecessor's block freed */
  CHECK(q.sub == &ring.dir[3] && q.head == ring.block_slots);
  CHECK(put_launch(&q, 3, 3) == 1);
  CHECK(gt_ring_read(&ring, out) == GT_RING_RECORD);
  CHECK_EQ_U64(out[0].tid, 500);
  CHECK_EQ_U64(out[0].ts_ns, 3);
  free(ring.hdr);
}

/* Garbage in a sub-ring: skipped, counted, bounded per call; a head beyond
 * what the pool can hold, and a block number beyond the pool, are not
 * followed. */
static void test_sub_invalid(void) {
  struct gt_ring ring = make_ring(64 * 1024);
  struct gt_ring_producer p;
  memset(&p, 0, sizeof p);
  CHECK(gt_ring_claim(&ring, &p, 5) == 0);
  for (int i = 0; i < 40; i++)
    CHECK(put_launch(&p, (uint64_t)i, 1) == 1);
  memset(p.next - 40 * GT_RSLOT, 0x5a, 40 * GT_RSLOT);
  struct gt_record out[GT_MAX_SLOTS];
  enum gt_ring_status st;
  int calls = 0;
  while ((st = gt_ring_read(&ring, out)) != GT_RING_EMPTY && calls < 1000) {
    CHECK(st != GT_RING_RECORD);
    calls++;
  }
  CHECK_EQ_U64(ring.lost, 40);
  uint64_t pool = ring.nblocks * ring.block_slots;
  atomic_store(&ring.dir[0].head, 40 + pool + 1);
  CHECK(gt_ring_read(&ring, out) == GT_RING_EMPTY);
  CHECK_EQ_U64(ring.lost, 40 + pool); /* the slots that exist, not the head's jump */
  CHECK_EQ_U64(ring.scribbled, 1);
  /* a list entry naming no block of the pool */
  uint64_t at = 40 + pool + 1 + ring.block_slots - 1; /* a block boundary ahead */
  at -= at % ring.block_slots;
  ring.lists[at / ring.block_slots % ring.nblocks] = 0xffffffffu;
  atomic_store(&ring.dir[0].head, at + 3);
  uint64_t lost = ring.lost;
  while (gt_ring_read(&ring, out) != GT_RING_EMPTY)
    ;
  CHECK_EQ_U64(ring.lost, lost + (at + 3 - (40 + pool + 1)));
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

/* As the shim: a sub-ring if one is free, else the shared ring; a record
 * that finds no room in a sub-ring is counted by its kind. */
static void *writer(void *p) {
  struct writer_arg *a = p;
  struct gt_ring *ring = a->s->ring;
  struct gt_ring_producer prod;
  memset(&prod, 0, sizeof prod);
  gt_ring_claim(ring, &prod, a->tid);
  uint64_t ok = 0;
  struct gt_record buf[GT_MAX_SLOTS];
  for (uint64_t i = 0; i < PER_THREAD; i++) {
    int w;
    if (i % 16 == 15) {
      name_record(buf, a->tid, i);
      w = prod.state == GT_PROD_SUB ? gt_ring_producer_write(&prod, &buf[0])
                                    : gt_ring_write(ring, &buf[0]);
      if (!w && prod.state == GT_PROD_SUB)
        gt_ring_count_drop(ring, GT_KIND_KERNEL_NAME);
    } else if (prod.state == GT_PROD_SUB) {
      w = put_launch(&prod, i, a->tid);
      if (!w)
        gt_ring_count_drop(ring, GT_KIND_LAUNCH);
    } else {
      struct gt_record r = launch(a->tid, i);
      w = gt_ring_write(ring, &r);
    }
    ok += (uint64_t)w;
  }
  gt_ring_retire(&prod);
  a->s->written[a->tid] = ok;
  atomic_fetch_sub(&a->s->writers_left, 1);
  return NULL;
}

static void test_threads(size_t bytes) {
  struct gt_ring ring = make_ring(bytes);
  struct shared s = {.ring = &ring, .writers_left = THREADS};
  pthread_t th[THREADS];
  struct writer_arg args[THREADS];
  for (uint32_t t = 0; t < THREADS; t++) {
    args[t] = (struct writer_arg){&s, t};
    pthread_create(&th[t], NULL, writer, &args[t]);
  }
  uint64_t got[THREADS] = {0}, last[THREADS], kinds[GT_KIND_COUNT] = {0};
  int in_order = 1, intact = 1;
  memset(last, 0xff, sizeof last);
  struct gt_record out[GT_MAX_SLOTS];
  for (int done = 0; !done;) {
    int writing = atomic_load(&s.writers_left) != 0;
    enum gt_ring_status st;
    while ((st = gt_ring_read(&ring, out)) == GT_RING_RECORD) {
      uint32_t t = out[0].tid;
      if (t >= THREADS || !gt_kind_in_table(out[0].kind)) {
        intact = 0;
        continue;
      }
      if (out[0].kind == GT_KIND_LAUNCH && out[0].u.launch.grid[0] != 70000 &&
          out[0].api == GT_API___cudaLaunchKernel)
        intact = 0;
      if (last[t] != UINT64_MAX && out[0].ts_ns <= last[t])
        in_order = 0;
      last[t] = out[0].ts_ns;
      got[t]++;
      kinds[out[0].kind]++;
    }
    gt_ring_publish(&ring);
    done = !writing && st == GT_RING_EMPTY;
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  CHECK(in_order);
  CHECK(intact);
  uint64_t total_written = 0, total_got = 0;
  for (int t = 0; t < THREADS; t++) {
    CHECK_EQ_U64(got[t], s.written[t]);
    total_written += s.written[t];
    total_got += got[t];
  }
  /* Exact accounting, per kind: every call was delivered or counted. */
  uint64_t names = (uint64_t)THREADS * (PER_THREAD / 16);
  CHECK_EQ_U64(kinds[GT_KIND_KERNEL_NAME] + ring.hdr->dropped[GT_KIND_KERNEL_NAME],
               names);
  CHECK_EQ_U64(kinds[GT_KIND_LAUNCH] + ring.hdr->dropped[GT_KIND_LAUNCH],
               (uint64_t)THREADS * PER_THREAD - names);
  CHECK_EQ_U64(ring.lost, 0);
  /* Every sub-ring was retired and drained: all free again, every block
   * back in the bitmap. */
  for (unsigned i = 0; i < ring.nsub; i++)
    CHECK_EQ_U64(atomic_load(&ring.dir[i].state), GT_SUB_FREE);
  CHECK_EQ_U64(gt_ring_fill_pct(&ring), 0);
  printf("threads: %zu bytes, %u sub-rings: %llu delivered, %llu + %llu dropped\n", bytes,
         ring.nsub, (unsigned long long)total_got,
         (unsigned long long)ring.hdr->dropped[GT_KIND_LAUNCH],
         (unsigned long long)ring.hdr->dropped[GT_KIND_KERNEL_NAME]);
  free(ring.hdr);
}

int main(void) {
  test_layout();
  test_shared_order_and_text();
  test_shared_full_counts_drops();
  test_shared_abandon();
  test_sub_wrap();
  test_sub_full();
  test_claim_retire_reuse();
  test_sub_invalid();
  test_threads(64u << 20); /* roomy: 8 sub-rings */
  test_threads(64 * 1024); /* tiny: 4 sub-rings, 4 threads on the shared ring */
  return check_finish("test_ring");
}
