/* test_trace_file.c — the .gtrace format: exact round trip with text,
 * append, and damage: truncation at every chunk boundary region, a flipped
 * bit, an empty file, a random file; plain chunks stepped inline. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/trace_file.h"

static char dir[] = "/tmp/gt_test_XXXXXX";

static void path_of(char *out, const char *name) {
  snprintf(out, 256, "%s/%s", dir, name);
}

/* Write n records (every 1000th carries a 200-byte text) in chunks of
 * `per_chunk` records. */
static void write_trace(const char *path, uint64_t n, int flags) {
  char err[256];
  struct gt_writer *w = gt_writer_open(path, flags, err, sizeof err);
  CHECK(w != NULL);
  if (!w)
    return;
  char text[200];
  memset(text, 'k', sizeof text);
  for (uint64_t i = 0; i < n; i++) {
    struct gt_record buf[GT_MAX_SLOTS];
    memset(buf, 0, sizeof buf[0]);
    buf[0].ts_ns = i;
    buf[0].pid = 7;
    buf[0].nslots = 1;
    if (i % 1000 == 0) {
      buf[0].kind = GT_KIND_KERNEL_NAME;
      buf[0].api = GT_API_gputrace_kernel_name;
      gt_record_attach_text(&buf[0], text, sizeof text);
    } else {
      buf[0].kind = GT_KIND_LAUNCH;
      buf[0].api = GT_API___cudaLaunchKernel;
      buf[0].u.launch.grid[0] = (uint32_t)i;
    }
    CHECK(gt_writer_append(w, &buf[0]) == 0);
  }
  CHECK(gt_writer_close(w) == 0);
}

/* Read everything; return the count, check ts are 0..count-1 in order. */
static uint64_t read_all(const char *path, uint64_t *warnings, int *ordered) {
  char err[256];
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  if (!r) {
    *warnings = UINT64_MAX;
    return 0;
  }
  const struct gt_record *rec;
  uint64_t n = 0;
  *ordered = 1;
  char text[GT_TEXT_MAX + 1];
  while (gt_reader_next(r, &rec) == 1) {
    if (rec->ts_ns != n % 100000)
      *ordered = 0;
    if (rec->kind == GT_KIND_KERNEL_NAME &&
        (gt_record_text(rec, rec->u.kname.text_len, text, sizeof text) != 200 ||
         text[199] != 'k'))
      *ordered = 0;
    n++;
  }
  *warnings = gt_reader_warnings(r);
  gt_reader_close(r);
  return n;
}

static void test_round_trip_and_append(void) {
  char path[256];
  path_of(path, "a.gtrace");
  write_trace(path, 100000, GT_WRITER_FORCE);
  uint64_t warnings;
  int ordered;
  CHECK_EQ_U64(read_all(path, &warnings, &ordered), 100000);
  CHECK_EQ_U64(warnings, 0);
  CHECK(ordered);
  struct stat st;
  stat(path, &st);
  CHECK((st.st_mode & 0777) == 0600);
  write_trace(path, 100000, GT_WRITER_APPEND);
  CHECK_EQ_U64(read_all(path, &warnings, &ordered), 200000);
  CHECK_EQ_U64(warnings, 0);
  CHECK(ordered);
}

static off_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : -1;
}

static void copy_prefix(const char *from, const char *to, off_t len) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char *buf = malloc((size_t)len + 1);
  CHECK(pread(in, buf, (size_t)len, 0) == len);
  CHECK(write(out, buf, (size_t)len) == len);
  free(buf);
  close(in);
  close(out);
}

static void test_truncation(void) {
  char path[256], cut[256];
  path_of(path, "a.gtrace");
  path_of(cut, "cut.gtrace");
  write_trace(path, 100000, GT_WRITER_FORCE); /* ~9 chunks of 10922 slots */
  off_t size = file_size(path);
  uint64_t prev = 0;
  int monotonic = 1, all_ordered = 1, cuts = 0, warned = 0, over_warned = 0;
  for (off_t len = 64; len < size; len += size / 97) {
    copy_prefix(path, cut, len);
    uint64_t warnings;
    int ordered;
    uint64_t n = read_all(cut, &warnings, &ordered);
    if (n < prev)
      monotonic = 0;
    prev = n;
    cuts++;
    warned += warnings == 1;
    over_warned += warnings > 1;
    if (!ordered)
      all_ordered = 0;
  }
  CHECK(monotonic); /* a longer prefix never yields fewer records */
  /* Every cut inside a chunk is reported, once; a cut that falls exactly on
   * a chunk boundary (like the first, after the file header) reads as a
   * shorter complete trace. */
  CHECK_EQ_U64(over_warned, 0);
  CHECK(warned >= cuts - 3);
  CHECK(all_ordered); /* what is read is the true prefix */
  CHECK(prev > 80000);
}

static void test_bit_flip(void) {
  char path[256];
  path_of(path, "flip.gtrace");
  write_trace(path, 100000, GT_WRITER_FORCE);
  int fd = open(path, O_RDWR);
  off_t where = file_size(path) / 2;
  unsigned char b;
  CHECK(pread(fd, &b, 1, where) == 1);
  b ^= 0x10;
  CHECK(pwrite(fd, &b, 1, where) == 1);
  close(fd);
  char err[256];
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK(r != NULL);
  const struct gt_record *rec;
  uint64_t n = 0;
  while (gt_reader_next(r, &rec) == 1)
    n++;
  /* One chunk (or its header) is lost; the others are all read. */
  CHECK(n < 100000 && n >= 100000 - 2 * 10922);
  CHECK(gt_reader_bad_chunks(r) >= 1);
  CHECK(gt_reader_warnings(r) >= 1);
  gt_reader_close(r);
}

static void test_not_a_trace(void) {
  char path[256], err[256];
  path_of(path, "empty.gtrace");
  close(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  CHECK(gt_reader_open(path, err, sizeof err) == NULL);
  CHECK(strstr(err, "empty file") != NULL && strstr(err, path) != NULL);
  path_of(path, "random.gtrace");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  unsigned char junk[4096];
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (unsigned char)(i * 131 + 7);
  CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
  close(fd);
  CHECK(gt_reader_open(path, err, sizeof err) == NULL);
  CHECK(strstr(err, "not a gputrace trace") != NULL);
  path_of(path, "missing.gtrace");
  CHECK(gt_reader_open(path, err, sizeof err) == NULL);
  CHECK(strstr(err, "No such file") != NULL);
  CHECK(gt_writer_open("/nonexistent-dir/x.gtrace", 0, err, sizeof err) == NULL);
  CHECK(strstr(err, "cannot write /nonexistent-dir/x.gtrace") != NULL);
  /* Appending to something that is not a trace is refused, not clobbered. */
  path_of(path, "random.gtrace");
  CHECK(gt_writer_open(path, GT_WRITER_APPEND, err, sizeof err) == NULL);
  CHECK(file_size(path) == (off_t)sizeof junk);
}

/* gt_chunk_next: a chunk the decompressing thread found plain is stepped
 * inline, with exactly gt_chunk_record's records; one with a replayed
 * record or an invalid one is not plain, and the invalid record still ends
 * its chunk with a warning. */
static uint64_t read_chunks(const char *path, int *plain, uint64_t *warnings) {
  char err[256];
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK(r != NULL);
  if (!r)
    return 0;
  struct gt_chunk c;
  uint64_t n = 0;
  *plain = 1;
  while (gt_reader_next_chunk(r, &c)) {
    *plain &= c.plain;
    size_t pos = 0;
    for (const struct gt_record *rec; (rec = gt_chunk_next(r, &c, &pos)); n++)
      CHECK_EQ_U64(rec->ts_ns, n);
    gt_reader_release(r, &c);
  }
  *warnings = gt_reader_warnings(r);
  gt_reader_close(r);
  return n;
}

static void write_odd(const char *path, unsigned odd_flags, unsigned odd_api) {
  char err[256];
  struct gt_writer *w = gt_writer_open(path, GT_WRITER_FORCE, err, sizeof err);
  CHECK(w != NULL);
  if (!w)
    return;
  for (uint64_t i = 0; i < 10; i++) {
    struct gt_record rec = {.ts_ns = i,
                            .pid = 7,
                            .nslots = 1,
                            .kind = GT_KIND_LAUNCH,
                            .api = GT_API___cudaLaunchKernel};
    if (i == 6) {
      rec.flags = odd_flags;
      rec.api = odd_api;
    }
    CHECK(gt_writer_append(w, &rec) == 0);
  }
  CHECK(gt_writer_close(w) == 0);
}

static void test_plain_chunks(void) {
  char path[256];
  path_of(path, "plain.gtrace");
  int plain;
  uint64_t warnings;
  write_trace(path, 30000, GT_WRITER_FORCE); /* ts 0..29999, texts among them */
  CHECK_EQ_U64(read_chunks(path, &plain, &warnings), 30000);
  CHECK(plain);
  CHECK_EQ_U64(warnings, 0);
  write_odd(path, GT_F_REPLAYED, GT_API___cudaLaunchKernel); /* kept: one file */
  CHECK_EQ_U64(read_chunks(path, &plain, &warnings), 10);
  CHECK(!plain);
  CHECK_EQ_U64(warnings, 0);
  write_odd(path, 0, GT_API_COUNT); /* invalid: the rest of its chunk is lost */
  CHECK_EQ_U64(read_chunks(path, &plain, &warnings), 6);
  CHECK(!plain);
  CHECK_EQ_U64(warnings, 1);
}

static void test_disk_full(void) {
  char err[256];
  struct gt_writer *w = gt_writer_open("/dev/full", 0, err, sizeof err);
  /* The header write already fails on /dev/full: a clear error, no crash. */
  CHECK(w == NULL);
  CHECK(strstr(err, "No space left") != NULL);
}

int main(void) {
  if (!mkdtemp(dir))
    return 1;
  test_round_trip_and_append();
  test_truncation();
  test_bit_flip();
  test_not_a_trace();
  test_disk_full();
  test_plain_chunks();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    return 1;
  return check_finish("test_trace_file");
}
