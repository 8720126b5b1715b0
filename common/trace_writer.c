/* trace_writer.c — the collector's side of trace_file.h. A chunk holding
 * allocations or frees is written dense (chunk_codec.c) when that is
 * smaller, except into a file of an older version being appended to. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "gputrace/outfile.h"
#include "gputrace/trace_file.h"

struct gt_writer {
  int fd;
  int dense; /* the file's version has dense chunks */
  ZSTD_CCtx *cctx;
  struct gt_chunk_codec *codec;
  unsigned char *chunk; /* pending uncompressed slots */
  size_t chunk_len;
  uint32_t chunk_records;
  unsigned char *frame; /* compression output */
  size_t frame_cap;
  uint64_t next_index;
  uint64_t records;
  uint64_t lost;
  uint64_t bytes;
  char error[256];
};

uint32_t gt_chunk_check(const struct gt_chunk_header *h) {
  const unsigned char *p = (const unsigned char *)h;
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < offsetof(struct gt_chunk_header, check); i++)
    hash = (hash ^ p[i]) * 16777619u;
  return hash;
}

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_all(struct gt_writer *w, const void *buf, size_t len) {
  const unsigned char *p = buf;
  while (len > 0) {
    ssize_t n = write(w->fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      snprintf(w->error, sizeof w->error, "%s", n < 0 ? strerror(errno) : "short write");
      return -1;
    }
    p += n;
    len -= (size_t)n;
    w->bytes += (uint64_t)n;
  }
  return 0;
}

/* Append mode: the version of the trace `fd` holds, 0 if it is empty,
 * -1 (with err) if it holds something else. */
static int existing_trace(int fd, const char *path, char *err, size_t errlen) {
  struct gt_file_header h;
  ssize_t n = pread(fd, &h, sizeof h, 0);
  if (n == 0)
    return 0;
  if (n != (ssize_t)sizeof h || memcmp(h.magic, GT_FILE_MAGIC, 8) != 0 ||
      h.version < GT_FILE_VERSION_MIN || h.version > GT_FILE_VERSION) {
    snprintf(err, errlen, "%s exists and is not a gputrace trace: not appending", path);
    return -1;
  }
  return (int)h.version;
}

/* The header's flags word, in place (a version-1 file keeps none). On Linux
 * pwrite ignores its offset on an O_APPEND descriptor (appending collectors
 * have one), so the flag is dropped around it. */
static void mark(struct gt_writer *w, uint32_t flags) {
  struct gt_file_header h;
  if (pread(w->fd, &h, sizeof h, 0) != (ssize_t)sizeof h || h.version < 2)
    return;
  int fl = fcntl(w->fd, F_GETFL);
  if (fl >= 0 && (fl & O_APPEND))
    fcntl(w->fd, F_SETFL, fl & ~O_APPEND);
  if (pwrite(w->fd, &flags, sizeof flags, offsetof(struct gt_file_header, flags)) !=
          (ssize_t)sizeof flags &&
      !w->error[0])
    snprintf(w->error, sizeof w->error, "marking the file: %s", strerror(errno));
  if (fl >= 0 && (fl & O_APPEND))
    fcntl(w->fd, F_SETFL, fl);
}

struct gt_writer *gt_writer_open(const char *path, int flags, char *err, size_t errlen) {
  enum gt_out_mode mode = (flags & GT_WRITER_APPEND)  ? GT_OUT_APPEND
                          : (flags & GT_WRITER_FORCE) ? GT_OUT_FORCE
                                                      : GT_OUT_NEW;
  int fd = gt_out_open(path, mode, err, errlen);
  return fd < 0 ? NULL : gt_writer_open_fd(fd, path, flags, err, errlen);
}

struct gt_writer *gt_writer_open_fd(int fd, const char *path, int flags, char *err,
                                    size_t errlen) {
  int append = (flags & GT_WRITER_APPEND) != 0;
  int has_header = append ? existing_trace(fd, path, err, errlen) : 0;
  if (has_header < 0) {
    close(fd);
    return NULL;
  }
  struct gt_writer *w = calloc(1, sizeof *w);
  if (w) {
    w->frame_cap = ZSTD_compressBound(GT_CHUNK_TARGET + GT_MAX_SLOTS * GT_SLOT_SIZE);
    w->chunk = malloc(GT_CHUNK_TARGET + GT_MAX_SLOTS * GT_SLOT_SIZE);
    w->frame = malloc(w->frame_cap);
    w->cctx = ZSTD_createCCtx();
    w->codec = gt_codec_new();
  }
  if (!w || !w->chunk || !w->frame || !w->cctx || !w->codec) {
    snprintf(err, errlen, "out of memory opening %s", path);
    close(fd);
    if (w) {
      free(w->chunk), free(w->frame), ZSTD_freeCCtx(w->cctx), gt_codec_free(w->codec);
      free(w);
    }
    return NULL;
  }
  w->fd = fd;
  w->dense = has_header == 0 || has_header >= 3; /* a version-2 file stays one */
  /* Readers wait while this lock is held (trace_file.h); a second collector
   * appending to the file waits for the first to finish it. */
  while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  if (has_header)
    mark(w, 0); /* being written again */
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
  struct gt_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, GT_FILE_MAGIC, 8);
  h.version = GT_FILE_VERSION;
  h.header_bytes = sizeof h;
  h.slot_size = GT_SLOT_SIZE;
  h.realtime_ns = clock_ns(CLOCK_REALTIME);
  h.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  h.collector_pid = (uint32_t)getpid();
  if (!has_header && write_all(w, &h, sizeof h) != 0) {
    snprintf(err, errlen, "cannot write %s: %s", path, w->error);
    gt_writer_close(w);
    return NULL;
  }
  return w;
}

int gt_writer_write_chunk(struct gt_writer *w, const void *slots, size_t len,
                          uint32_t records) {
  if (len == 0)
    return w->error[0] ? -1 : 0;
  if (w->error[0] || len > GT_CHUNK_MAX_BYTES) {
    w->lost += records;
    return -1;
  }
  const unsigned char *dense = NULL;
  size_t dense_len = w->dense ? gt_chunk_dense_encode(w->codec, slots, len, &dense) : 0;
  const void *payload = dense_len ? (const void *)dense : slots;
  size_t payload_len = dense_len ? dense_len : len;
  size_t need = ZSTD_compressBound(payload_len);
  if (need > w->frame_cap) {
    unsigned char *p = realloc(w->frame, need);
    if (!p) {
      snprintf(w->error, sizeof w->error, "out of memory");
      w->lost += records;
      return -1;
    }
    w->frame = p;
    w->frame_cap = need;
  }
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
                         dense_len ? GT_ZSTD_DENSE_LEVEL : GT_ZSTD_LEVEL);
  size_t n = ZSTD_compress2(w->cctx, w->frame, w->frame_cap, payload, payload_len);
  struct gt_chunk_header h = {
      .magic = dense_len ? GT_CHUNK_MAGIC_DENSE : GT_CHUNK_MAGIC,
      .header_bytes = sizeof h,
      .index = w->next_index,
      .records = records,
      .slots = (uint32_t)(len / GT_SLOT_SIZE),
      .compressed_bytes = (uint32_t)n,
  };
  h.check = gt_chunk_check(&h);
  int rc = 0;
  if (ZSTD_isError(n)) {
    snprintf(w->error, sizeof w->error, "compression failed: %s", ZSTD_getErrorName(n));
    rc = -1;
  } else if (write_all(w, &h, sizeof h) != 0 || write_all(w, w->frame, n) != 0) {
    rc = -1;
  }
  if (rc == 0) {
    w->records += records;
    w->next_index++;
  } else {
    w->lost += records;
  }
  return rc;
}

int gt_writer_flush(struct gt_writer *w) {
  int rc = gt_writer_write_chunk(w, w->chunk, w->chunk_len, w->chunk_records);
  w->chunk_len = 0;
  w->chunk_records = 0;
  return rc;
}

int gt_writer_append(struct gt_writer *w, const struct gt_record *rec) {
  size_t len = (size_t)rec->nslots * GT_SLOT_SIZE;
  if (w->error[0]) {
    w->lost++;
    return -1;
  }
  memcpy(w->chunk + w->chunk_len, rec, len);
  w->chunk_len += len;
  w->chunk_records++;
  if (w->chunk_len >= GT_CHUNK_TARGET)
    return gt_writer_flush(w);
  return 0;
}

uint64_t gt_writer_records(const struct gt_writer *w) {
  return w->records;
}
uint64_t gt_writer_lost(const struct gt_writer *w) {
  return w->lost;
}
uint64_t gt_writer_bytes(const struct gt_writer *w) {
  return w->bytes;
}
const char *gt_writer_error(const struct gt_writer *w) {
  return w->error[0] ? w->error : NULL;
}

int gt_writer_close(struct gt_writer *w) {
  if (!w)
    return 0;
  int rc = gt_writer_flush(w);
  if (rc == 0 && !w->error[0])
    mark(w, GT_FILE_F_COMPLETE); /* before close() lets the readers in */
  else                           /* in place, within the file: room even on a full disk */
    mark(w, GT_FILE_F_WRITE_FAILED);
  if (close(w->fd) != 0 && !w->error[0]) {
    snprintf(w->error, sizeof w->error, "%s", strerror(errno));
    rc = -1;
  }
  ZSTD_freeCCtx(w->cctx);
  gt_codec_free(w->codec);
  free(w->chunk);
  free(w->frame);
  free(w);
  return rc;
}
