/* trace_reader.c — the analyzer's side of trace_file.h. */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "gputrace/trace_file.h"

#define GT_CHUNK_MAX_SLOTS (GT_CHUNK_MAX_BYTES / GT_SLOT_SIZE)

struct gt_reader {
  FILE *fp;
  char *path;
  struct gt_file_header header;
  ZSTD_DCtx *dctx;
  unsigned char *frame;
  size_t frame_cap;
  unsigned char *chunk; /* decompressed slots of the current chunk */
  size_t chunk_cap;
  size_t chunk_len;
  size_t pos;      /* offset of the next record in chunk */
  uint64_t offset; /* file offset of the next chunk header */
  uint64_t chunks;
  uint64_t warnings;
  uint64_t bad_chunks;
  int truncated;
  int done;
  int quiet;
  glob_t set; /* a rolling set: the files in order */
  size_t set_next;
};

__attribute__((format(printf, 2, 3))) static void warn(struct gt_reader *r,
                                                       const char *fmt, ...) {
  r->warnings++;
  if (r->quiet)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gputrace: warning: %s: ", r->path);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Open `path` and check its header: the FILE, or NULL with err set. */
static FILE *open_checked(const char *path, struct gt_file_header *h, char *err,
                          size_t errlen) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t n = fread(h, 1, sizeof *h, fp);
  const char *problem = NULL;
  if (ferror(fp))
    problem = strerror(errno);
  else if (n == 0)
    problem = "not a gputrace trace (empty file)";
  else if (n < sizeof *h || memcmp(h->magic, GT_FILE_MAGIC, 8) != 0)
    problem = "not a gputrace trace (bad magic)";
  else if (h->version != GT_FILE_VERSION)
    problem = "unsupported trace version (made by a different gputrace)";
  else if (h->header_bytes != sizeof *h || h->slot_size != GT_SLOT_SIZE)
    problem = "corrupt file header";
  if (problem) {
    snprintf(err, errlen, "%s: %s", path, problem);
    fclose(fp);
    return NULL;
  }
  return fp;
}

/* A rolling set (BASE.0001.gtrace, ...) for a path that is not a file. */
static int find_set(const char *path, glob_t *g) {
  char pattern[4200];
  size_t len = strlen(path);
  int suffix = len > 7 && strcmp(path + len - 7, ".gtrace") == 0;
  snprintf(pattern, sizeof pattern, "%.*s.[0-9][0-9][0-9][0-9]*.gtrace",
           (int)(suffix ? len - 7 : len), path);
  return glob(pattern, 0, NULL, g) == 0 && g->gl_pathc > 0; /* sorted by glob */
}

struct gt_reader *gt_reader_open(const char *path, char *err, size_t errlen) {
  struct gt_file_header h;
  glob_t set = {0};
  int is_set = access(path, F_OK) != 0 && errno == ENOENT && find_set(path, &set);
  FILE *fp = open_checked(is_set ? set.gl_pathv[0] : path, &h, err, errlen);
  struct gt_reader *r = fp ? calloc(1, sizeof *r) : NULL;
  if (fp && (!r || !(r->path = strdup(is_set ? set.gl_pathv[0] : path)) ||
             !(r->dctx = ZSTD_createDCtx()))) {
    snprintf(err, errlen, "%s: out of memory", path);
    if (r)
      free(r->path), free(r);
    r = NULL;
  }
  if (!r) {
    if (fp)
      fclose(fp);
    if (is_set)
      globfree(&set);
    return NULL;
  }
  r->fp = fp;
  r->header = h;
  r->offset = sizeof h;
  if (is_set) {
    r->set = set;
    r->set_next = 1;
  }
  return r;
}

/* At the end of one file of a rolling set: go on with the next readable
 * one (a file deleted meanwhile, or damaged, is reported and skipped). */
static int next_file(struct gt_reader *r) {
  while (r->set_next < r->set.gl_pathc) {
    const char *path = r->set.gl_pathv[r->set_next++];
    struct gt_file_header h;
    char err[512];
    FILE *fp = open_checked(path, &h, err, sizeof err);
    if (!fp) {
      warn(r, "skipping %s", err);
      continue;
    }
    char *copy = strdup(path);
    if (!copy) {
      fclose(fp);
      return 0;
    }
    fclose(r->fp);
    free(r->path);
    r->fp = fp;
    r->path = copy;
    r->offset = sizeof h;
    r->chunk_len = r->pos = 0;
    return 1;
  }
  return 0;
}

static int grow(unsigned char **buf, size_t *cap, size_t need) {
  if (*cap >= need)
    return 0;
  unsigned char *p = realloc(*buf, need);
  if (!p)
    return -1;
  *buf = p;
  *cap = need;
  return 0;
}

static int header_valid(const struct gt_chunk_header *h) {
  return h->magic == GT_CHUNK_MAGIC && h->header_bytes == sizeof *h &&
         h->check == gt_chunk_check(h) && h->slots > 0 &&
         h->slots <= GT_CHUNK_MAX_SLOTS &&
         h->compressed_bytes <= ZSTD_compressBound((size_t)h->slots * GT_SLOT_SIZE);
}

/* After a bad chunk header at r->offset: scan forward for the next valid
 * one. Returns 1 and leaves the file positioned after it, or 0 at EOF. */
static int resync(struct gt_reader *r, struct gt_chunk_header *h) {
  uint64_t start = r->offset;
  for (uint64_t off = start + 1;; off++) {
    if (fseeko(r->fp, (off_t)off, SEEK_SET) != 0 ||
        fread(h, 1, sizeof *h, r->fp) != sizeof *h)
      return 0;
    if (header_valid(h)) {
      warn(r, "skipped %" PRIu64 " damaged bytes at offset %" PRIu64, off - start, start);
      r->offset = off;
      return 1;
    }
  }
}

/* Load the next chunk. Returns 1 when one was loaded, 0 at the end. */
static int load_chunk(struct gt_reader *r) {
  for (;;) {
    struct gt_chunk_header h;
    if (fseeko(r->fp, (off_t)r->offset, SEEK_SET) != 0)
      return 0;
    size_t n = fread(&h, 1, sizeof h, r->fp);
    if (n == 0)
      return 0;
    if (n < sizeof h) {
      r->truncated = 1;
      warn(r,
           "truncated: the trace ends inside a chunk header at offset %" PRIu64
           " (the writer was interrupted); events up to there are shown",
           r->offset);
      return 0;
    }
    if (!header_valid(&h)) {
      r->bad_chunks++;
      warn(r, "corrupt chunk header at offset %" PRIu64, r->offset);
      if (!resync(r, &h))
        return 0;
    }
    size_t raw = (size_t)h.slots * GT_SLOT_SIZE;
    if (grow(&r->frame, &r->frame_cap, h.compressed_bytes) ||
        grow(&r->chunk, &r->chunk_cap, raw)) {
      warn(r, "out of memory reading chunk %" PRIu64, h.index);
      return 0;
    }
    if (fread(r->frame, 1, h.compressed_bytes, r->fp) != h.compressed_bytes) {
      r->truncated = 1;
      warn(r,
           "truncated: chunk %" PRIu64 " (%" PRIu32 " records) is cut short; "
           "events before it are shown",
           h.index, h.records);
      return 0;
    }
    r->offset += sizeof h + h.compressed_bytes;
    size_t got =
        ZSTD_decompressDCtx(r->dctx, r->chunk, raw, r->frame, h.compressed_bytes);
    if (ZSTD_isError(got) || got != raw) {
      r->bad_chunks++;
      warn(r, "chunk %" PRIu64 " is corrupt (%s): its %" PRIu32 " records are skipped",
           h.index, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size", h.records);
      continue;
    }
    r->chunk_len = raw;
    r->pos = 0;
    r->chunks++;
    return 1;
  }
}

static int record_valid(const struct gt_record *rec, size_t room) {
  return rec->nslots >= 1 && rec->nslots <= GT_MAX_SLOTS &&
         (size_t)rec->nslots * GT_SLOT_SIZE <= room && rec->kind > GT_KIND_NONE &&
         rec->kind < GT_KIND_COUNT && rec->api < GT_API_COUNT;
}

int gt_reader_next(struct gt_reader *r, const struct gt_record **rec) {
  while (!r->done) {
    if (r->pos >= r->chunk_len) {
      if (!load_chunk(r)) {
        if (next_file(r))
          continue;
        r->done = 1;
        break;
      }
    }
    const struct gt_record *cur = (const void *)(r->chunk + r->pos);
    if (!record_valid(cur, r->chunk_len - r->pos)) {
      r->bad_chunks++;
      warn(r, "invalid record at chunk offset %zu: rest of the chunk skipped", r->pos);
      r->pos = r->chunk_len;
      continue;
    }
    r->pos += (size_t)cur->nslots * GT_SLOT_SIZE;
    if ((cur->flags & GT_F_REPLAYED) && r->set_next > 1)
      continue; /* a later file of a set repeats what an earlier one had */
    if (cur->kind == GT_KIND_NOTE && (cur->flags & GT_F_INCOMPLETE)) {
      char
          text[GT_TEXT_MAX + 1]; /* every command shows that part of the run is missing */
      gt_record_text(cur, cur->u.note.text_len, text, sizeof text);
      warn(r, "incomplete: %s", text);
    }
    *rec = cur;
    return 1;
  }
  return 0;
}

size_t gt_record_text(const struct gt_record *rec, uint32_t len, char *buf,
                      size_t buflen) {
  size_t avail = (size_t)(rec->nslots - 1) * GT_TEXT_PER_SLOT;
  size_t n = len < avail ? len : avail;
  if (buflen == 0)
    return 0;
  if (n > buflen - 1)
    n = buflen - 1;
  const struct gt_text_slot *slots = (const void *)(rec + 1);
  for (size_t done = 0; done < n;) {
    size_t i = done / GT_TEXT_PER_SLOT, off = done % GT_TEXT_PER_SLOT;
    size_t take = GT_TEXT_PER_SLOT - off;
    if (take > n - done)
      take = n - done;
    memcpy(buf + done, slots[i].text + off, take);
    done += take;
  }
  buf[n] = '\0';
  /* Text is untrusted: stop at an embedded NUL. */
  return strlen(buf);
}

void gt_reader_set_quiet(struct gt_reader *r, int quiet) {
  r->quiet = quiet;
}

const struct gt_file_header *gt_reader_header(const struct gt_reader *r) {
  return &r->header;
}
uint64_t gt_reader_warnings(const struct gt_reader *r) {
  return r->warnings;
}
uint64_t gt_reader_bad_chunks(const struct gt_reader *r) {
  return r->bad_chunks;
}
int gt_reader_truncated(const struct gt_reader *r) {
  return r->truncated;
}

void gt_reader_close(struct gt_reader *r) {
  if (!r)
    return;
  if (r->set.gl_pathc)
    globfree(&r->set);
  fclose(r->fp);
  ZSTD_freeDCtx(r->dctx);
  free(r->frame);
  free(r->chunk);
  free(r->path);
  free(r);
}
