/* test_flight_compose.c — a flight recorder's snapshot (collector/flight.c)
 * from two hand-made segments: the first whole (its repeats kept, block
 * markers left out), the second without its repeats (metadata, carried
 * blocks, the making of a graph the first holds), except the making of a
 * graph whose last holder is older than the snapshot; read back with the
 * project's reader, each record once, in order. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "collector.h"
#include "synth.h"

#define REPEAT GT_F_REPLAYED

/* A record told apart by its time; flags as a segment would carry them. */
static struct gt_record rec(uint64_t ts, uint32_t flags) {
  struct gt_record r = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, ts, 1);
  r.flags = flags;
  return r;
}

/* The marker of a graph's making repeated, last held by segment `last`. */
static struct gt_record marker(uint64_t ts, uint64_t last) {
  struct gt_record r = synth_rec(GT_KIND_NOTE, GT_API_gputrace_note, ts, 0);
  r.flags = GT_F_REPLAYED | GT_F_REPLAY_BLOCK;
  r.u.note.last_file = last;
  return r;
}

/* A segment in a memfd holding recs, as output.c writes one. */
static struct gt_segment segment(uint32_t index, const struct gt_record *recs, size_t n) {
  int fd = memfd_create("segment", MFD_CLOEXEC);
  char err[256];
  struct gt_writer *w = gt_writer_open_fd(dup(fd), "segment", 0, err, sizeof err);
  CHECK_MSG(fd >= 0 && w, "segment %u: %s", index, err);
  for (size_t i = 0; w && i < n; i++)
    gt_writer_append(w, &recs[i]);
  gt_writer_close(w);
  return (struct gt_segment){fd, index, index * 100, index * 100 + 99};
}

/* ---- a cut (snapshot --last) ---- */

#define CUT 550
#define PID 100

static struct gt_record mem(unsigned kind, uint64_t ts, uint64_t ptr, uint32_t flags) {
  struct gt_record r = synth_rec(
      kind, kind == GT_KIND_ALLOC ? GT_API_cudaMalloc : GT_API_cudaFree, ts, 10);
  r.pid = r.tid = PID;
  r.u.mem.ptr = ptr;
  r.u.mem.bytes = kind == GT_KIND_ALLOC ? ptr : 0; /* sizes told apart too */
  r.u.mem.memory = GT_MEM_DEVICE;
  r.flags = flags;
  return r;
}

static struct gt_record graph(unsigned api, uint64_t ts, uint64_t g, uint64_t x) {
  struct gt_record r = synth_rec(GT_KIND_GRAPH, api, ts, 5);
  r.pid = r.tid = PID;
  r.u.graph.graph = g;
  r.u.graph.exec = x;
  r.u.graph.capture = 7;
  return r;
}

static struct gt_record pid_rec(struct gt_record r, uint32_t flags) {
  r.pid = r.tid = PID;
  r.flags = flags;
  return r;
}

/* What the reader gives back of a snapshot: each record's (ts, flags). */
static size_t read_back(const char *path, uint64_t *ts, uint32_t *flags, size_t max) {
  char err[256];
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK_MSG(r != NULL, "open: %s", err);
  size_t n = 0;
  const struct gt_record *got;
  while (r && gt_reader_next(r, &got)) {
    if (n < max) {
      ts[n] = got->ts_ns;
      flags[n] = got->flags & (GT_F_REPLAYED | GT_F_CARRIED);
    }
    n++;
  }
  CHECK(r && gt_reader_warnings(r) == 0);
  gt_reader_close(r);
  return n;
}

/* Before CUT: a carried block freed, one allocated and live, a name, a
 * graph's making, a launch; one allocation of the past comes late, in the
 * second segment (another thread's ring drained later). After: launches, a
 * graph launch, a free of a block from the past. */
static void test_cut(void) {
  struct gt_record knm =
      pid_rec(synth_rec(GT_KIND_KERNEL_NAME, GT_API_gputrace_kernel_name, 510, 0), 0);
  struct gt_record heap = pid_rec(synth_rec(GT_KIND_HEAP, GT_API_gputrace_note, 500, 0),
                                  REPEAT | GT_F_CARRIED);
  heap.u.heap.peak[GT_MEM_DEVICE] = 0x1000;
  struct gt_record captured = pid_rec(rec(536, GT_F_CAPTURED), GT_F_CAPTURED);
  captured.u.launch.corr = 7;
  struct gt_record glaunch = pid_rec(rec(600, GT_F_GRAPH), GT_F_GRAPH);
  glaunch.api = GT_API_cudaGraphLaunch;
  glaunch.u.launch.kernel = 0x60;
  const struct gt_record first[] = {
      pid_rec(rec(1, REPEAT), REPEAT),                    /* a name repeated */
      mem(GT_KIND_ALLOC, 2, 0x10, REPEAT | GT_F_CARRIED), /* live when it opened */
      heap,
      knm,
      mem(GT_KIND_ALLOC, 520, 0x20, 0),
      mem(GT_KIND_FREE, 530, 0x10, 0),
      graph(GT_API_cudaStreamBeginCapture, 535, 0, 0),
      captured,
      graph(GT_API_cudaStreamEndCapture, 537, 0x50, 0),
      graph(GT_API_cudaGraphInstantiateWithFlags, 538, 0x50, 0x60),
      pid_rec(rec(540, 0), 0),
      pid_rec(rec(560, 0), 0),
  };
  const struct gt_record later[] = {
      pid_rec(rec(1, REPEAT), REPEAT),
      mem(GT_KIND_ALLOC, 545, 0x30, 0), /* the past, drained late */
      glaunch,
      mem(GT_KIND_FREE, 610, 0x20, 0),
      pid_rec(rec(620, 0), 0),
  };
  struct gt_segment segs[] = {segment(5, first, sizeof first / sizeof first[0]),
                              segment(6, later, sizeof later / sizeof later[0])};
  char path[256], err[256];
  synth_path("cut.gtrace", path, sizeof path);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  struct gt_snapshot_stats st;
  int rc = gt_flight_compose(segs, 2, CUT, fd, path, &st, err, sizeof err);
  close(fd);
  CHECK_MSG(rc == 0, "compose: %s", err);
  CHECK_MSG(st.from_ns == CUT && st.to_ns == 699, "from %llu to %llu",
            (unsigned long long)st.from_ns, (unsigned long long)st.to_ns);
  /* the note; the blocks live at the cut (0x20, and 0x30 from the second
   * segment) and the peaks, carried; the first segment's repeats less its
   * carry; the name from the past, repeated; the launch after the cut; the
   * graph's making just before its launch, repeated; the rest */
  const uint64_t want_ts[] = {CUT, 520, 545, CUT, 1,   510, 560,
                              535, 536, 537, 538, 600, 610, 620};
  const uint32_t C = REPEAT | GT_F_CARRIED;
  const uint32_t want_flags[] = {0,      C,      C,      C,      REPEAT, REPEAT, 0,
                                 REPEAT, REPEAT, REPEAT, REPEAT, 0,      0,      0};
  enum { WANT = sizeof want_ts / sizeof want_ts[0] };
  uint64_t ts[32];
  uint32_t flags[32];
  size_t n = read_back(path, ts, flags, 32);
  CHECK_MSG(n == WANT, "%zu records read, %d wanted", n, WANT);
  for (size_t i = 0; i < n && i < WANT; i++)
    CHECK_MSG(ts[i] == want_ts[i] && flags[i] == want_flags[i],
              "record %zu: ts %llu flags %#x, wanted %llu %#x", i,
              (unsigned long long)ts[i], flags[i], (unsigned long long)want_ts[i],
              want_flags[i]);
  close(segs[0].fd);
  close(segs[1].fd);
}

int main(void) {
  test_cut();
  const struct gt_record first[] = {
      rec(1, REPEAT),
      marker(2, 4),
      rec(3, REPEAT), /* a name; graph A's making */
      rec(10, 0),
  };
  const struct gt_record later[] = {
      rec(1, REPEAT),                /* the name again */
      rec(5, REPEAT | GT_F_CARRIED), /* a block carried */
      rec(20, 0),
      marker(2, 5), /* graph A: the first segment holds it */
      rec(3, REPEAT),
      rec(21, 0),
      marker(4, 3), /* graph B: made before the snapshot */
      rec(6, REPEAT),
      rec(7, REPEAT),
      rec(22, 0),
  };
  struct gt_segment segs[] = {segment(5, first, sizeof first / sizeof first[0]),
                              segment(6, later, sizeof later / sizeof later[0])};
  char path[256], err[256];
  synth_path("snap.gtrace", path, sizeof path);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  struct gt_snapshot_stats st;
  int rc = gt_flight_compose(segs, 2, 0, fd, path, &st, err, sizeof err);
  close(fd); /* the writer's lock is on this description too */
  CHECK_MSG(rc == 0, "compose: %s", err);
  CHECK_MSG(st.records == 8 && st.segments == 2 && st.from_ns == 500 && st.to_ns == 699,
            "stats: %llu records, %llu segments", (unsigned long long)st.records,
            (unsigned long long)st.segments);
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK_MSG(r != NULL, "open: %s", err);
  const uint64_t want[] = {1, 3, 10, 20, 21, 6, 7, 22};
  size_t n = 0;
  const struct gt_record *got;
  while (r && gt_reader_next(r, &got)) {
    CHECK_MSG(n < 8 && got->ts_ns == want[n], "record %zu: ts %llu", n,
              (unsigned long long)got->ts_ns);
    n++;
  }
  CHECK_MSG(n == 8, "%zu records read", n);
  CHECK(r && gt_reader_warnings(r) == 0);
  gt_reader_close(r);
  close(segs[0].fd);
  close(segs[1].fd);
  return check_finish("test_flight_compose");
}
