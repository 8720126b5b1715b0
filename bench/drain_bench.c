/* drain_bench.c — the collector's per-record costs, apart from any traced
 * program (bench/drain.sh runs it):
 *  - read: gt_ring_read of compact launches out of a filled 32 MiB ring's
 *    first sub-ring, converted to struct gt_record into a 1 MiB chunk (what
 *    the collector does per record before compression), records/s;
 *  - live: the same while a producer thread writes them (one core each):
 *    records/s the consumer takes, and how many the producer found no room
 *    for;
 *  - zstd: compressing such chunks as the trace writer does (GT_ZSTD_LEVEL),
 *    records/s;
 *  - tsc: a record's start and duration converted from TSC ticks to ns
 *    along the collector's line (collector/tsc.c) after 30 s of refreshes,
 *    ticks in order as a thread's come, records/s;
 *  - prom: the live metrics' work per launch (collector/prom_work.c, with
 *    --prometheus or top): launches of 64 named kernels in turn, each 4th
 *    followed by its DEVICE record at 1 in 4, records/s.
 * Usage: gputrace-drain-bench [RECORDS=20000000]; one line per measure. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "collector.h"
#include "gputrace/ring.h"
#include "gputrace/trace_file.h"
#include "prom_series.h"

#define REGION (32u << 20)
#define CHUNK_RECORDS ((1u << 20) / GT_SLOT_SIZE)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int put(struct gt_ring_producer *p, uint64_t i) {
  if (gt_ring_room(p) == 0 && !gt_ring_producer_room(p, 1))
    return 0;
  struct gt_frame_launch *f = gt_ring_slot(p);
  f->frame =
      GT_FRAME_LAUNCH | 1u << 8 | (uint64_t)GT_API___cudaLaunchKernel << 16 | p->tid;
  f->ts = 1000000 + i * 40;
  f->dur = 30 + (uint32_t)(i & 7);
  f->corr = (uint32_t)i;
  f->kernel = 0x7f0000001000 + (i & 3) * 64;
  f->stream = 0;
  f->grid_x = 1;
  f->grid_y = f->grid_z = 1;
  f->block_x = 128;
  f->block_y = f->block_z = 1;
  f->result = 0;
  f->shared_mem = 0;
  f->stack_id = 0;
  gt_ring_commit1(p);
  return 1;
}

struct live {
  struct gt_ring_producer *p;
  uint64_t n, refused;
  _Atomic int done;
};

static void *producer(void *arg) {
  struct live *l = arg;
  for (uint64_t i = 0; i < l->n; i++)
    if (!put(l->p, i))
      l->refused++;
  atomic_store(&l->done, 1);
  return NULL;
}

/* prom: n records through prom_work_run, as the collector's observer sends
 * them (4 launches, then a DEVICE record); returns the seconds spent. */
static double prom_run(uint64_t n) {
  static struct prom_work w;
  struct prom_work_state *s = prom_work_new(&w);
  struct gt_record r[GT_MAX_SLOTS];
  char name[32];
  for (unsigned k = 0; k < 64; k++) {
    memset(r, 0, sizeof r);
    r[0].kind = GT_KIND_KERNEL_NAME;
    r[0].pid = 1;
    r[0].nslots = 1;
    r[0].u.kname.kernel = 0x7f0000001000 + k * 64;
    gt_record_attach_text(&r[0], name,
                          (size_t)snprintf(name, sizeof name, "_Z2k%uv", k % 10));
    prom_work_record(s, &r[0]);
  }
  struct gt_record launch = {.kind = GT_KIND_LAUNCH, .pid = 1, .tid = 1, .nslots = 1};
  struct gt_record device = {.kind = GT_KIND_DEVICE, .pid = 1, .tid = 1, .nslots = 1};
  device.u.device.of_kind = GT_KIND_LAUNCH;
  device.u.device.sample = 4;
  device.dur_ns = 1000;
  double t0 = now_s(); /* prom_work_run is in another unit: the loop stays */
  for (uint64_t i = 0; i < n; i++) {
    uint64_t kernel = 0x7f0000001000 + (i & 63) * 64;
    if (i % 5 == 4) {
      device.u.device.kernel = kernel;
      prom_work_run(s, &device);
    } else {
      launch.u.launch.kernel = kernel;
      prom_work_run(s, &launch);
    }
  }
  double spent = now_s() - t0;
  prom_work_free(s);
  return spent;
}

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000ull;
  void *mem = aligned_alloc(64, REGION);
  memset(mem, 0, REGION);
  gt_ring_init(mem, REGION, 1, GT_CLOCK_TSC);
  struct gt_ring ring;
  if (gt_ring_attach(&ring, mem, gt_ring_bytes_for(REGION)) != 0)
    return 1;
  struct gt_ring_producer p;
  memset(&p, 0, sizeof p);
  gt_ring_claim(&ring, &p, 1);
  struct gt_record *chunk = malloc((CHUNK_RECORDS + GT_MAX_SLOTS) * sizeof *chunk);
  memset(chunk, 0, (CHUNK_RECORDS + GT_MAX_SLOTS) * sizeof *chunk);
  /* read: laps of a full sub-ring */
  uint64_t got = 0, fill = ring.nblocks * ring.block_slots;
  double spent = 0;
  unsigned at = 0;
  while (got < n) {
    for (uint64_t i = 0; i < fill; i++)
      put(&p, got + i);
    double t0 = now_s();
    while (gt_ring_read(&ring, &chunk[at]) == GT_RING_RECORD) {
      got++;
      at = at + 1 < CHUNK_RECORDS ? at + 1 : 0;
    }
    gt_ring_publish(&ring);
    spent += now_s() - t0;
  }
  printf("read   %.1f M records/s (%.1f ns each, %llu records)\n", got / spent / 1e6,
         spent * 1e9 / got, (unsigned long long)got);
  /* live: producer and consumer at once */
  struct live l = {.p = &p, .n = n};
  pthread_t th;
  double t0 = now_s();
  pthread_create(&th, NULL, producer, &l);
  got = 0;
  for (;;) {
    int done = atomic_load(&l.done);
    while (gt_ring_read(&ring, &chunk[at]) == GT_RING_RECORD) {
      got++;
      at = at + 1 < CHUNK_RECORDS ? at + 1 : 0;
    }
    gt_ring_publish(&ring);
    if (done)
      break;
  }
  double live = now_s() - t0;
  pthread_join(th, NULL);
  printf("live   %.1f M records/s taken, %llu of %llu refused (ring full)\n",
         got / live / 1e6, (unsigned long long)l.refused, (unsigned long long)n);
  /* zstd, as common/trace_writer.c */
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, GT_ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t cap = ZSTD_compressBound(CHUNK_RECORDS * sizeof *chunk);
  void *frame = malloc(cap);
  uint64_t done_records = 0;
  t0 = now_s();
  size_t bytes = 0;
  while (done_records < n / 4) {
    bytes += ZSTD_compress2(cctx, frame, cap, chunk, CHUNK_RECORDS * sizeof *chunk);
    done_records += CHUNK_RECORDS;
  }
  double z = now_s() - t0;
  printf("zstd   %.1f M records/s (%.1f ns each, %.1f bytes per record)\n",
         done_records / z / 1e6, z * 1e9 / done_records, (double)bytes / done_records);
  ZSTD_freeCCtx(cctx);
  /* tsc: a 2.5 GHz TSC, 300 refreshes 100 ms apart, then n records 40 ticks apart */
  uint64_t tick0 = 1ull << 40, mono0 = 1ull << 33, sum = 0;
  gt_tsc_start(tick0, mono0, tick0 + 12500000, mono0 + 5000000);
  for (uint64_t r = 1; r <= 300; r++)
    gt_tsc_anchor(tick0 + r * 250000000ull, mono0 + r * 100000000ull + r % 3 * 20);
  uint64_t from = tick0 + 300 * 250000000ull;
  t0 = now_s();
  for (uint64_t i = 0; i < n; i++)
    sum += gt_tsc_to_ns(from + i * 40) + gt_tsc_span_ns(i & 1023);
  double tc = now_s() - t0;
  printf("tsc    %.1f M records/s (%.2f ns each; %llu)\n", n / tc / 1e6, tc * 1e9 / n,
         (unsigned long long)(sum & 1));
  double tp = prom_run(n);
  printf("prom   %.1f M records/s (%.2f ns each)\n", n / tp / 1e6, tp * 1e9 / n);
  free(frame);
  free(chunk);
  free(mem);
  return 0;
}
