/* test_heap_carry.c — what a rolling file carries of each process's memory
 * (collector/heap_carry.c): the live blocks' ALLOC records and a HEAP
 * record of the peaks, flagged GT_F_REPLAYED | GT_F_CARRIED; allocations
 * and frees applied in time order, so that a free of one thread and another
 * thread's allocation at the address it freed, written the other way round,
 * still leave the new block live; frees the analyzer's rule refuses (wrong
 * kind, failed) free nothing; an ended process is forgotten; a storm in
 * time order with one record late is applied in time order too. */
#include "check.h"
#include "collector.h"
#include "synth.h"

#define PID 7
#define MS 1000000ull

static struct gt_record mem(unsigned kind, unsigned api, uint32_t tid, uint64_t ts,
                            uint64_t ptr, uint64_t bytes, unsigned memory) {
  struct gt_record r = synth_rec(kind, api, ts, 10);
  r.pid = PID;
  r.tid = tid;
  r.stack_id = tid;
  r.u.mem.ptr = ptr;
  r.u.mem.bytes = bytes;
  r.u.mem.memory = (uint8_t)memory;
  return r;
}

static struct gt_record alloc(uint32_t tid, uint64_t ts, uint64_t ptr, uint64_t bytes) {
  return mem(GT_KIND_ALLOC, GT_API_cudaMalloc, tid, ts, ptr, bytes, GT_MEM_DEVICE);
}
static struct gt_record release(uint32_t tid, uint64_t ts, uint64_t ptr) {
  return mem(GT_KIND_FREE, GT_API_cudaFree, tid, ts, ptr, 0, 0);
}

struct carried {
  uint64_t blocks, bytes, flags_ok, peak_device, peak_ts;
  uint32_t tid_of_0x1000;
};

static struct carried written(struct gt_heap_carry *c) {
  struct gt_replay_buf out = {0};
  gt_heap_carry_write(c, 999 * MS, &out);
  struct carried k = {0};
  for (size_t off = 0; off < out.len; off += GT_SLOT_SIZE) {
    const struct gt_record *r = (const void *)(out.data + off);
    k.flags_ok +=
        (r->flags & (GT_F_REPLAYED | GT_F_CARRIED)) == (GT_F_REPLAYED | GT_F_CARRIED);
    if (r->kind == GT_KIND_ALLOC) {
      k.blocks++;
      k.bytes += r->u.mem.bytes;
      if (r->u.mem.ptr == 0x1000)
        k.tid_of_0x1000 = r->tid;
    } else if (r->kind == GT_KIND_HEAP) {
      k.peak_device = r->u.heap.peak[GT_MEM_DEVICE];
      k.peak_ts = r->u.heap.peak_ts_ns[0];
    }
  }
  CHECK_MSG(k.flags_ok == out.records, "every record flagged replayed and carried");
  free(out.data);
  return k;
}

int main(void) {
  struct gt_heap_carry *c = gt_heap_carry_new();
  /* thread 1 holds 0x1000 (100 B) and frees it at 3 ms; thread 2 gets the
   * address at 4 ms (200 B): thread 2's records reach the file first */
  struct gt_record recs[] = {
      alloc(2, 4 * MS, 0x1000, 200),
      alloc(1, 1 * MS, 0x1000, 100),
      release(1, 3 * MS, 0x1000),
      /* weights, held; a wrong-kind free (cudaFreeHost) frees nothing */
      alloc(1, 5 * MS, 0x9000, 1000),
      mem(GT_KIND_FREE, GT_API_cudaFreeHost, 1, 6 * MS, 0x9000, 0, 0),
      /* a transient block: the peak (1000 + 200 + 5000) at 7 ms */
      alloc(1, 7 * MS, 0x5000, 5000),
      release(1, 8 * MS, 0x5000),
  };
  for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
    gt_heap_carry_put(c, &recs[i]);
  struct carried k = written(c);
  CHECK_MSG(k.blocks == 2 && k.bytes == 1200, "live: %llu blocks, %llu bytes",
            (unsigned long long)k.blocks, (unsigned long long)k.bytes);
  CHECK_MSG(k.tid_of_0x1000 == 2, "0x1000 is thread 2's block (got thread %u)",
            k.tid_of_0x1000);
  CHECK_MSG(k.peak_device == 6200 && k.peak_ts == 7 * MS, "peak %llu at %llu",
            (unsigned long long)k.peak_device, (unsigned long long)k.peak_ts);
  CHECK(gt_heap_carry_blocks(c) == 2);
  /* records already applied are applied once: the next file carries the same */
  k = written(c);
  CHECK_MSG(k.blocks == 2 && k.bytes == 1200 && k.peak_device == 6200, "written again");
  /* a process that ended carries nothing */
  gt_heap_carry_forget(c, PID);
  k = written(c);
  CHECK_MSG(k.blocks == 0 && k.peak_device == 0, "forgotten: %llu blocks",
            (unsigned long long)k.blocks);
  gt_heap_carry_free(c);
  /* a storm in time order (queued), past the hold time, with one free that
   * comes after later records (heaped): applied in time order all the same,
   * so one 16-byte block at a time is live, never two */
  c = gt_heap_carry_new();
  for (uint64_t i = 0; i < 1000; i++) {
    struct gt_record a = alloc(1, (10 + 2 * i) * MS, 0x100000 + 16 * i, 16);
    struct gt_record f = release(1, (11 + 2 * i) * MS, 0x100000 + 16 * i);
    gt_heap_carry_put(c, &a);
    if (i != 990)
      gt_heap_carry_put(c, &f);
  }
  struct gt_record late = release(1, (11 + 2 * 990) * MS, 0x100000 + 16 * 990);
  gt_heap_carry_put(c, &late);
  k = written(c);
  CHECK_MSG(k.blocks == 0 && k.peak_device == 16, "storm: %llu blocks live, peak %llu",
            (unsigned long long)k.blocks, (unsigned long long)k.peak_device);
  gt_heap_carry_free(c);
  return check_finish("test_heap_carry");
}
