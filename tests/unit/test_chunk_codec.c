/* test_chunk_codec.c — dense chunks (common/chunk_codec.c): a server-shaped
 * stream of records (four threads in batches, allocations and frees of seven
 * sizes from four sites among launches, kernel names with text, times that
 * go back between threads, failed allocations, more templates than a chunk
 * holds) comes back byte for byte, through the codec alone and through the
 * writer and reader; the pair loop's density; a chunk without allocations
 * stays as it is, and so does a version-2 file appended to; and a damaged
 * payload (every cut, every byte changed) is refused or decodes to whole
 * records, never read out of bounds (ASan runs this). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "check.h"
#include "gputrace/trace_file.h"

static char dir[] = "/tmp/gt_codec_XXXXXX";

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

struct stream {
  unsigned char *buf;
  size_t len;
  uint32_t records, allocs_frees;
};

static void add(struct stream *s, const struct gt_record *rec) {
  memcpy(s->buf + s->len, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
  s->len += (size_t)rec->nslots * GT_SLOT_SIZE;
  s->records++;
  s->allocs_frees += rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE;
}

static const uint64_t sizes[7] = {256, 4096, 65536, 1 << 20, 512, 4 << 20, 8192};

/* n records of four threads, 16 at a time each (as the collector drains
 * sub-rings); `extra_sizes` more sizes make that many more templates. */
static void server_stream(struct stream *s, uint32_t n, uint32_t extra_sizes) {
  s->buf = calloc(n, GT_SLOT_SIZE * GT_MAX_SLOTS);
  s->len = s->records = s->allocs_frees = 0;
  uint64_t ts[4] = {1000000, 999000, 1001000, 2000000}, live[4][8] = {{0}};
  uint64_t next_ptr = 0x7f0000000000ull;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t t = (i / 16) % 4, r = (uint32_t)(next_rand() % 100);
    struct gt_record rec[GT_MAX_SLOTS];
    memset(rec, 0, sizeof rec);
    rec[0].pid = 4242;
    rec[0].tid = 4242 + t;
    rec[0].nslots = 1;
    ts[t] += 50 + next_rand() % 400;
    rec[0].ts_ns = ts[t];
    rec[0].dur_ns = 40 + next_rand() % 120;
    if (r < 60) { /* an allocation or a free of the slot's block */
      uint64_t *slot = &live[t][i % 8];
      rec[0].stack_id = 10 + (uint32_t)(i % 4);
      rec[0].u.mem.memory = GT_MEM_DEVICE;
      if (*slot) {
        rec[0].kind = GT_KIND_FREE;
        rec[0].api = GT_API_cudaFree;
        rec[0].stack_id = 5;
        rec[0].u.mem.ptr = *slot;
        *slot = 0;
      } else {
        rec[0].kind = GT_KIND_ALLOC;
        rec[0].api = GT_API_cudaMalloc;
        uint32_t k = (uint32_t)(next_rand() % (7 + extra_sizes));
        rec[0].u.mem.bytes = k < 7 ? sizes[k] : 100000 + k;
        if (r == 7) { /* out of memory: no pointer */
          rec[0].result = GT_RESULT_OUT_OF_MEMORY;
        } else {
          next_ptr += (next_rand() % 3 == 0) ? 0x10000000000ull : 0x200;
          rec[0].u.mem.ptr = *slot = next_ptr;
        }
      }
    } else if (r < 95) {
      rec[0].kind = GT_KIND_LAUNCH;
      rec[0].api = GT_API___cudaLaunchKernel;
      rec[0].u.launch.corr = i;
      rec[0].u.launch.kernel = 0x401000 + (i % 3) * 16;
    } else {
      char text[300];
      memset(text, 'a' + (int)(i % 26), sizeof text);
      rec[0].kind = GT_KIND_KERNEL_NAME;
      rec[0].api = GT_API_gputrace_kernel_name;
      gt_record_attach_text(&rec[0], text, 1 + (uint32_t)(i % sizeof text));
    }
    add(s, &rec[0]);
  }
}

static void check_round_trip(const struct stream *s, int expect_dense) {
  struct gt_chunk_codec *c = gt_codec_new();
  const unsigned char *dense = NULL;
  size_t len = gt_chunk_dense_encode(c, s->buf, s->len, &dense);
  CHECK_MSG(expect_dense ? len > 0 && len < s->len : len == 0, "dense %zu of %zu", len,
            s->len);
  if (len) {
    unsigned char *out = malloc(s->len);
    const char *why = gt_chunk_dense_decode(dense, len, out, s->len);
    CHECK_MSG(why == NULL, "decode: %s", why ? why : "");
    CHECK(memcmp(out, s->buf, s->len) == 0);
    /* the header's slots must be exactly what it decodes to */
    CHECK(gt_chunk_dense_decode(dense, len, out, s->len - GT_SLOT_SIZE) != NULL);
    CHECK(gt_chunk_dense_decode(dense, len, out, s->len + GT_SLOT_SIZE) != NULL);
    free(out);
  }
  gt_codec_free(c);
}

/* Every cut and every single changed byte of a dense payload: refused, or
 * whole records of the right size. */
static void check_damage(const struct stream *s) {
  struct gt_chunk_codec *c = gt_codec_new();
  const unsigned char *dense = NULL;
  size_t len = gt_chunk_dense_encode(c, s->buf, s->len, &dense);
  CHECK(len > 0);
  unsigned char *copy = malloc(len), *out = malloc(s->len);
  size_t refused_cuts = 0, accepted = 0;
  for (size_t cut = 0; cut < len; cut++)
    refused_cuts += gt_chunk_dense_decode(dense, cut, out, s->len) != NULL;
  CHECK_EQ_U64(refused_cuts, len);
  for (size_t i = 0; i < len; i++) {
    memcpy(copy, dense, len);
    copy[i] ^= (unsigned char)(1 + next_rand() % 255);
    if (gt_chunk_dense_decode(copy, len, out, s->len) == NULL) {
      accepted++; /* a changed value, not a changed structure: whole records */
      for (size_t off = 0; off < s->len;) {
        const struct gt_record *rec = (const void *)(out + off);
        CHECK(rec->nslots >= 1 && rec->nslots <= GT_MAX_SLOTS);
        off += (size_t)(rec->nslots ? rec->nslots : GT_MAX_SLOTS) * GT_SLOT_SIZE;
      }
    }
  }
  CHECK(accepted < len); /* the head and the tags are checked */
  free(copy);
  free(out);
  gt_codec_free(c);
}

/* The pair loop (bench/alloc_loop): one site each for cudaMalloc and
 * cudaFree, three pointers in turn, times and durations as the stand-in
 * gives them: bytes per event once compressed as the writer does. */
static void check_density(void) {
  struct stream s = {.buf = calloc(10000, GT_SLOT_SIZE)};
  uint64_t ts = 5000000, ptrs[3] = {0x55e0ac739000, 0x55e0ac739200, 0x55e0ac738e00};
  for (uint32_t i = 0; i < 10000; i++) {
    struct gt_record rec = {.pid = 1213, .tid = 1213, .nslots = 1};
    int is_free = i & 1;
    ts += is_free ? 450 + next_rand() % 100 : 70 + next_rand() % 20;
    rec.ts_ns = ts;
    rec.dur_ns = (4 + next_rand() % 12) * 10;
    rec.kind = is_free ? GT_KIND_FREE : GT_KIND_ALLOC;
    rec.api = is_free ? GT_API_cudaFree : GT_API_cudaMalloc;
    rec.stack_id = is_free ? 2 : 3;
    rec.u.mem.memory = GT_MEM_DEVICE;
    rec.u.mem.bytes = 256;
    rec.u.mem.ptr = ptrs[(i / 2) % 3];
    add(&s, &rec);
  }
  struct gt_chunk_codec *c = gt_codec_new();
  const unsigned char *dense = NULL;
  size_t len = gt_chunk_dense_encode(c, s.buf, s.len, &dense);
  size_t bound = ZSTD_compressBound(len);
  void *frame = malloc(bound);
  size_t z = ZSTD_compress(frame, bound, dense, len, GT_ZSTD_DENSE_LEVEL);
  CHECK(!ZSTD_isError(z));
  double per_event = (double)z / s.records;
  printf("pair loop: %zu records, %zu bytes dense, %zu compressed: %.2f bytes/event\n",
         (size_t)s.records, len, z, per_event);
  CHECK_MSG(per_event <= 2.0, "%.2f bytes per event",
            per_event); /* the format's goal (docs/PERFORMANCE.md) */
  free(frame);
  free(s.buf);
  gt_codec_free(c);
}

/* Written by gt_writer (chunks of 1,000 records) and read back by the
 * reader: the same records, the chunks dense. */
static void check_file(const struct stream *s, const char *path) {
  char err[256];
  struct gt_writer *w = gt_writer_open(path, 0, err, sizeof err);
  CHECK(w != NULL);
  if (!w)
    return;
  uint32_t n = 0;
  for (size_t off = 0; off < s->len; n++) {
    const struct gt_record *rec = (const void *)(s->buf + off);
    CHECK(gt_writer_append(w, rec) == 0);
    if (n % 1000 == 999)
      gt_writer_flush(w);
    off += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
  CHECK(gt_writer_close(w) == 0);
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK_EQ_U64(gt_reader_header(r)->version, 3);
  const struct gt_record *rec;
  size_t off = 0, same = 0, read = 0;
  while (gt_reader_next(r, &rec)) {
    size_t rlen = (size_t)rec->nslots * GT_SLOT_SIZE;
    same += off + rlen <= s->len && memcmp(rec, s->buf + off, rlen) == 0;
    off += rlen;
    read++;
  }
  CHECK_EQ_U64(read, s->records);
  CHECK_EQ_U64(same, s->records);
  CHECK_EQ_U64(gt_reader_warnings(r), 0);
  gt_reader_close(r);
  int fd = open(path, O_RDONLY);
  struct gt_chunk_header h;
  CHECK(pread(fd, &h, sizeof h, sizeof(struct gt_file_header)) == (ssize_t)sizeof h);
  CHECK_EQ_U64(h.magic, GT_CHUNK_MAGIC_DENSE);
  close(fd);
}

/* A version-2 file appended to stays version 2: its new chunks are plain. */
static void check_append_v2(const struct stream *s, const char *path) {
  char err[256];
  struct gt_writer *w = gt_writer_open(path, 0, err, sizeof err);
  CHECK(w != NULL && gt_writer_close(w) == 0);
  int fd = open(path, O_RDWR);
  uint32_t v2 = 2;
  CHECK(pwrite(fd, &v2, sizeof v2, offsetof(struct gt_file_header, version)) == 4);
  close(fd);
  w = gt_writer_open(path, GT_WRITER_APPEND, err, sizeof err);
  CHECK(w != NULL);
  if (!w)
    return;
  for (size_t off = 0; off < s->len;) {
    const struct gt_record *rec = (const void *)(s->buf + off);
    gt_writer_append(w, rec);
    off += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
  CHECK(gt_writer_close(w) == 0);
  fd = open(path, O_RDONLY);
  struct gt_chunk_header h;
  CHECK(pread(fd, &h, sizeof h, sizeof(struct gt_file_header)) == (ssize_t)sizeof h);
  CHECK_EQ_U64(h.magic, GT_CHUNK_MAGIC);
  close(fd);
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  CHECK(r != NULL);
  const struct gt_record *rec;
  uint64_t read = 0;
  while (r && gt_reader_next(r, &rec))
    read++;
  CHECK_EQ_U64(read, s->records);
  gt_reader_close(r);
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL);
  struct stream s;
  server_stream(&s, 20000, 0);
  CHECK(s.allocs_frees > 10000);
  check_round_trip(&s, 1);
  char path[256];
  snprintf(path, sizeof path, "%s/server.gtrace", dir);
  check_file(&s, path);
  snprintf(path, sizeof path, "%s/v2.gtrace", dir);
  check_append_v2(&s, path);
  free(s.buf);

  server_stream(&s, 3000, 400); /* more templates than 255: the rest kept whole */
  check_round_trip(&s, 1);
  free(s.buf);

  server_stream(&s, 400, 0);
  check_damage(&s);
  free(s.buf);

  struct stream launches = {.buf = calloc(100, GT_SLOT_SIZE)};
  for (uint32_t i = 0; i < 100; i++) {
    struct gt_record rec = {.ts_ns = i,
                            .nslots = 1,
                            .kind = GT_KIND_LAUNCH,
                            .api = GT_API___cudaLaunchKernel};
    add(&launches, &rec);
  }
  check_round_trip(&launches, 0); /* nothing to make dense */
  free(launches.buf);

  check_density();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  return check_finish("test_chunk_codec");
}
