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

int main(void) {
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
  int rc = gt_flight_compose(segs, 2, fd, path, &st, err, sizeof err);
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
