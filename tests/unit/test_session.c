/* test_session.c — the session (model/session.h) on synthetic traces:
 * time order across threads and chunks with each thread's order kept,
 * DEVICE records in their own stream (after host records of the same ns),
 * a thread inside a long call holding the others back, arrivals later than
 * the window counted, the same records whatever the number of
 * decompression threads, damaged and truncated chunks skipped with the rest
 * read, and rolling sets read once. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "synth.h"

#define MAX_SEEN 4096

struct seen {
  size_t n;
  uint64_t ts[MAX_SEEN];
  uint32_t tid[MAX_SEEN];
  uint8_t kind[MAX_SEEN];
};

static void note(void *ctx, const struct gt_event *ev) {
  struct seen *s = ctx;
  if (s->n < MAX_SEEN) {
    s->ts[s->n] = ev->rec->ts_ns;
    s->tid[s->n] = ev->rec->tid;
    s->kind[s->n] = ev->rec->kind;
  }
  s->n++;
}

/* Read `path` through a session; returns it (closed by the caller). */
static struct gt_session *read_all(const char *path, uint32_t ordered, int threads,
                                   struct seen *out) {
  struct gt_session_opts o = {.path = path,
                              .layers = GT_LAYER_HEAP | GT_LAYER_NVTX,
                              .ordered = ordered,
                              .quiet = 1,
                              .threads = threads};
  memset(out, 0, sizeof *out);
  struct gt_tool t = {.ctx = out};
  gt_tool_all(&t, note);
  return synth_session(&o, &t);
}

/* Two threads, each drained in its own chunk, interleave in time; a thread
 * whose stamps cross keeps its file order; DEVICE work comes at its time (us apart:
 * GT_ORDER_DEVICE_SLACK_NS is 2 us). */
static void test_time_order(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("order.gtrace", path, sizeof path));
  w.tid = 1;
  synth_launch(&w, 10000, 1, 0x10, 0, 0);
  synth_launch(&w, 30000, 1, 0x10, 0, 0);
  synth_launch(&w, 50000, 1, 0x10, 0, 0);
  synth_launch(&w, 45000, 1, 0x10, 0, 0); /* crossing stamps on one thread */
  synth_chunk(&w);
  w.tid = 2;
  synth_launch(&w, 20000, 1, 0x10, 0, 0);
  synth_launch(&w, 40000, 1, 0x10, 0, 0);
  synth_device(&w, 35000, 5, GT_KIND_LAUNCH, 1); /* written last, ran at 35 us */
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 0, &s);
  static const uint64_t want_ts[] = {10000, 20000, 30000, 35000, 40000, 50000, 45000};
  static const uint32_t want_tid[] = {1, 2, 1, 2, 2, 1, 1};
  CHECK_EQ_U64(s.n, 7);
  for (size_t i = 0; i < 7; i++) {
    CHECK_EQ_U64(s.ts[i], want_ts[i]);
    CHECK_EQ_U64(s.tid[i], want_tid[i]);
  }
  CHECK_EQ_U64(s.kind[3], GT_KIND_DEVICE);
  CHECK_EQ_U64(gt_session_late(ss), 0);
  CHECK_EQ_U64(gt_session_origin(ss), 10000);
  gt_session_close(ss);
  /* file order: as written */
  ss = read_all(path, 0, 0, &s);
  static const uint64_t file_ts[] = {10000, 30000, 50000, 45000, 20000, 40000, 35000};
  for (size_t i = 0; i < 7; i++)
    CHECK_EQ_U64(s.ts[i], file_ts[i]);
  gt_session_close(ss);
}

/* Device work clamped to the start of the launch that queued it (the same
 * ns), its stream drained first: in time order the launch still comes
 * first (chrome's flow arrow between them depends on it), and so does a
 * launch 20 ns later (within GT_ORDER_DEVICE_SLACK_NS), not one 5 us later. */
static void test_device_tie(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("tie.gtrace", path, sizeof path));
  w.tid = 1;
  synth_device(&w, 100, 5, GT_KIND_LAUNCH, 1);
  synth_launch(&w, 100, 3, 0x10, 0, 0);
  synth_launch(&w, 120, 3, 0x10, 0, 0);
  synth_launch(&w, 5100, 3, 0x10, 0, 0);
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 0, &s);
  CHECK_EQ_U64(s.n, 4);
  CHECK_EQ_U64(s.ts[0], 100);
  CHECK_EQ_U64(s.ts[1], 120);
  CHECK_EQ_U64(s.kind[2], GT_KIND_DEVICE);
  CHECK_EQ_U64(s.ts[3], 5100);
  gt_session_close(ss);
}

/* A copy's DEVICE record stamped 330 ns before its call (the shim's clamp
 * reads CLOCK_MONOTONIC just before the call's own TSC stamp, which the
 * collector converts), written after a record 20 ms later has let the
 * call go (GT_ORDER_HORIZON_NS): it comes right after the call, and is not
 * counted late (`gputrace chrome` on the demo said "1 records came after
 * the time-order window" for it). */
static void test_device_before_its_call(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("skew.gtrace", path, sizeof path));
  w.tid = 1;
  synth_copy(&w, 1000330, 54000000, 64 << 20, GT_DIR_HTOD, 0);
  synth_nvtx(&w, 55000000, GT_NVTX_MARK, "after");
  synth_device(&w, 1000000, 53000000, GT_KIND_MEMCPY, 1);
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 0, &s);
  CHECK_EQ_U64(s.n, 3);
  CHECK_EQ_U64(s.kind[0], GT_KIND_MEMCPY);
  CHECK_EQ_U64(s.kind[1], GT_KIND_DEVICE);
  CHECK_EQ_U64(s.kind[2], GT_KIND_NVTX);
  CHECK_EQ_U64(gt_session_late(ss), 0);
  gt_session_close(ss);
}

/* Thread 2 enters a long call at 15, its record written after thread 1's
 * next `later` records: within the window it is placed at 15; past it, it
 * comes late and is counted. */
static void long_call(const char *name, unsigned later, uint64_t *late,
                      size_t *position) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path(name, path, sizeof path));
  w.tid = 1;
  synth_launch(&w, 10, 1, 0x10, 0, 0);
  w.tid = 2;
  synth_launch(&w, 12, 1, 0x10, 0, 0); /* thread 2 is known and active */
  w.tid = 1;
  for (unsigned i = 0; i < later; i++) {
    synth_launch(&w, 20 + i, 1, 0x10, 0, 0);
    synth_chunk(&w); /* one record a chunk: the window is 16 chunks */
  }
  w.tid = 2;
  synth_sync(&w, 15, 1000000);
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 2, &s);
  *late = gt_session_late(ss);
  *position = SIZE_MAX;
  for (size_t i = 0; i < s.n && i < MAX_SEEN; i++)
    if (s.kind[i] == GT_KIND_SYNC)
      *position = i;
  CHECK_EQ_U64(s.n, later + 3);
  gt_session_close(ss);
}

static void test_window(void) {
  uint64_t late;
  size_t pos;
  long_call("within.gtrace", 8, &late, &pos);
  CHECK_EQ_U64(late, 0);
  CHECK_EQ_U64(pos, 2); /* after 10 and 12, before thread 1's 20... */
  long_call("past.gtrace", GT_SESSION_WINDOW + 8, &late, &pos);
  CHECK_EQ_U64(late, 1);
  /* after the first two and thread 1's records of the 8 chunks the window
   * let go before it came */
  CHECK_EQ_U64(pos, 8 + 2);
}

/* Records leave early once nothing can come before them: a thread seen
 * for the first time is still placed when its first record reaches the
 * file within GT_ORDER_HORIZON_NS of its time, and counted late after. */
static void test_new_thread(void) {
  char path[256];
  struct synth w;
  const uint64_t ms = 1000000;
  synth_open(&w, synth_path("newthread.gtrace", path, sizeof path));
  for (uint64_t k = 0; k <= 30; k++) {
    w.tid = 1;
    synth_launch(&w, k * ms, 1, 0x10, 0, 0);
    w.tid = 2; /* thread 2 starts at 5 ms; its first record comes 7 ms late */
    if (k == 12)
      synth_launch(&w, 5 * ms + 1, 1, 0x10, 0, 0);
    if (k >= 12)
      synth_launch(&w, (k - 6) * ms + 1, 1, 0x10, 0, 0);
  }
  w.tid = 3; /* 24 ms late: records up to 20 ms have gone */
  synth_launch(&w, 6 * ms + 2, 1, 0x10, 0, 0);
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 0, &s);
  CHECK_EQ_U64(s.n, 31 + 20 + 1);
  CHECK_EQ_U64(s.tid[6], 2); /* 0..5 ms, then thread 2's first */
  CHECK_EQ_U64(s.ts[6], 5 * ms + 1);
  CHECK_EQ_U64(gt_session_late(ss), 1);
  size_t at = 0;
  while (at < s.n && s.tid[at] != 3)
    at++;
  CHECK_EQ_U64(at, 21 + 15); /* thread 1 to 20 ms, thread 2 to 19 ms: 10 ms before 30 */
  uint64_t prev = 0;
  int ordered = 1;
  for (size_t i = 0; i < s.n; i++)
    if (i != at)
      ordered &= s.ts[i] >= prev, prev = s.ts[i];
  CHECK(ordered);
  gt_session_close(ss);
}

/* Many chunks read with 0, 1 and 3 decompression threads: same records in
 * the same order. */
static void test_threads(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("many.gtrace", path, sizeof path));
  for (unsigned i = 0; i < 3000; i++) {
    w.tid = 1 + i % 3;
    synth_launch(&w, 1000 + i * 7 % 997 + i, 1, 0x10, 0, 0);
    if (i % 50 == 49)
      synth_chunk(&w);
  }
  synth_close(&w);
  static struct seen a, b;
  for (int ordered = 0; ordered < 2; ordered++) {
    gt_session_close(read_all(path, ordered ? GT_ORDER_ALL : 0, 0, &a));
    for (int threads = 1; threads <= 3; threads += 2) {
      gt_session_close(read_all(path, ordered ? GT_ORDER_ALL : 0, threads, &b));
      CHECK_EQ_U64(b.n, 3000);
      CHECK(memcmp(a.ts, b.ts, sizeof a.ts) == 0 &&
            memcmp(a.tid, b.tid, sizeof a.tid) == 0);
    }
  }
}

static long chunk_offset(const char *path, int which) {
  int fd = open(path, O_RDONLY);
  long off = sizeof(struct gt_file_header);
  struct gt_chunk_header h;
  for (int i = 0; i < which && pread(fd, &h, sizeof h, off) == sizeof h; i++)
    off += (long)sizeof h + h.compressed_bytes;
  close(fd);
  return off;
}

/* Three chunks of 10 records; the middle one damaged, then the file cut
 * inside the last one: the first chunk is read, the session says damaged. */
static void test_damage(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("damaged.gtrace", path, sizeof path));
  for (unsigned c = 0; c < 3; c++) {
    for (unsigned i = 0; i < 10; i++)
      synth_launch(&w, 100 * c + i + 1, 1, 0x10, 0, 0);
    synth_chunk(&w);
  }
  synth_close(&w);
  struct seen s;
  struct gt_session *ss = read_all(path, GT_ORDER_ALL, 2, &s);
  CHECK_EQ_U64(s.n, 30);
  CHECK(!gt_session_damaged(ss));
  CHECK_EQ_U64(gt_session_records_hint(ss), 30);
  gt_session_close(ss);
  int fd = open(path, O_RDWR);
  long mid = chunk_offset(path, 1) + (long)sizeof(struct gt_chunk_header) + 20;
  char junk[8] = "garbage";
  CHECK(pwrite(fd, junk, sizeof junk, mid) ==
        sizeof junk); /* the frame's checksum fails */
  ss = read_all(path, GT_ORDER_ALL, 2, &s);
  CHECK_EQ_U64(s.n, 20);
  CHECK_EQ_U64(s.ts[10], 201);
  CHECK(gt_session_damaged(ss));
  gt_session_close(ss);
  CHECK(ftruncate(fd, chunk_offset(path, 2) + 40) == 0);
  close(fd);
  ss = read_all(path, 0, 0, &s);
  CHECK_EQ_U64(s.n, 10);
  CHECK(gt_session_damaged(ss));
  gt_session_close(ss);
}

/* A rolling set: the second file repeats the process start and kernel name
 * (GT_F_REPLAYED); the set reads them once and names the later launch. */
static void test_rolling_set(void) {
  char path[256], base[256];
  struct synth w;
  synth_open(&w, synth_path("roll.0001.gtrace", path, sizeof path));
  synth_process(&w, 1, "./server");
  synth_kernel_name(&w, 2, 0x10, "_Z4stepv");
  synth_launch(&w, 10, 1, 0x10, 0, 0);
  synth_close(&w);
  synth_open(&w, synth_path("roll.0002.gtrace", path, sizeof path));
  struct gt_record r = synth_rec(GT_KIND_PROCESS, GT_API_gputrace_process, 1, 0);
  r.u.proc.phase = GT_PROC_START;
  r.flags = GT_F_REPLAYED;
  synth_put_text(&w, r, "./server");
  r = synth_rec(GT_KIND_KERNEL_NAME, GT_API_gputrace_kernel_name, 2, 0);
  r.u.kname.kernel = 0x10;
  r.flags = GT_F_REPLAYED;
  synth_put_text(&w, r, "_Z4stepv");
  synth_launch(&w, 20, 1, 0x10, 0, 0);
  synth_close(&w);
  struct seen s;
  struct gt_session *ss =
      read_all(synth_path("roll.gtrace", base, sizeof base), GT_ORDER_ALL, 2, &s);
  CHECK_EQ_U64(s.n, 4);
  CHECK_EQ_U64(gt_model_totals(gt_session_model(ss))->processes, 1);
  struct gt_record launch = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, 20, 1);
  launch.pid = 100;
  launch.u.launch.kernel = 0x10;
  CHECK(!strcmp(gt_model_kernel(gt_session_model(ss), &launch), "step()"));
  CHECK_EQ_U64(gt_session_records_hint(ss), 6); /* both files' headers */
  CHECK(!gt_session_damaged(ss));
  gt_session_close(ss);
}

int main(void) {
  test_time_order();
  test_device_tie();
  test_device_before_its_call();
  test_window();
  test_new_thread();
  test_threads();
  test_damage();
  test_rolling_set();
  return check_finish("test_session");
}
