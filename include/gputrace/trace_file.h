/* trace_file.h — the .gtrace file: a header, then independent zstd chunks.
 *
 * Contract (docs/trace-format.md has the byte layout):
 *  - File header (64 bytes), then chunks. A chunk is a 32-byte header and one
 *    zstd frame (with content checksum) holding whole records, as they are
 *    or dense (allocations and frees as templates and deltas: chunk_codec.c;
 *    file version 3): a record and its text slots never straddle chunks. So a file cut
 * short by a crash is readable up to its last complete chunk, and a corrupt chunk costs
 * only its own records: the reader resynchronizes on the next chunk header.
 *  - The writer (collector) appends records to an in-memory chunk and
 *    compresses it when it reaches GT_CHUNK_TARGET bytes or on gt_writer_flush.
 *    Write errors (ENOSPC, EFBIG, EIO) are sticky: later appends are counted
 *    as lost, never block, and gt_writer_error() reports them.
 *  - While a collector writes a file it holds an exclusive flock(2) on it and
 *    sets GT_FILE_F_COMPLETE in the header just before it lets go, so a
 *    reader can tell a file still being written (the lock is held, the
 *    header not marked, and the pid it names is a live gputrace-collector:
 *    by default it waits for it, at most GPUTRACE_READ_WAIT), finished (the
 *    mark: whoever holds a lock), or left unfinished by a collector that
 *    died (no mark, no live collector: a warning). A writer whose writes failed
 *    (full disk) marks GT_FILE_F_WRITE_FAILED instead: the reader's
 *    warning says it ran out of space.
 *  - The reader never trusts the file: every length is bounded and checked;
 *    problems become warnings (counted, with the file name and offset) and
 *    reading continues where it safely can. A NOTE flagged GT_F_INCOMPLETE
 *    (the collector stopped early) is a warning too, so every command says
 *    that part of the run is missing; one flagged GT_F_UNTRACED (a process
 *    the collector could not trace) is a warning that is no damage.
 */
#ifndef GPUTRACE_TRACE_FILE_H
#define GPUTRACE_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/schema.h"

#define GT_FILE_MAGIC "GPUTRACE"
/* Version 2: the header's GT_FILE_F_COMPLETE and the writer's lock.
 * Version 3: chunks may be dense (GT_CHUNK_MAGIC_DENSE). */
#define GT_FILE_VERSION 3u
#define GT_FILE_VERSION_MIN 1u     /* still read: version 1 has no completion mark */
#define GT_FILE_F_COMPLETE 1u      /* header flags: the collector finished this file */
#define GT_FILE_F_WRITE_FAILED 2u  /* header flags: a write failed (full disk) */
#define GT_CHUNK_MAGIC 0x4b434847u /* "GHCK": the frame holds the records */
/* "GHCD": the frame holds them dense (chunk_codec.c); file version 3 */
#define GT_CHUNK_MAGIC_DENSE 0x44434847u
#define GT_CHUNK_TARGET (1u << 20)     /* uncompressed bytes per chunk */
#define GT_CHUNK_MAX_BYTES (64u << 20) /* bound a reader accepts */
/* zstd level of every chunk: -1 (no entropy coding of literals) decompresses
 * faster than 1 (the readers' largest cost) and compresses faster (the
 * collector's), for files a little larger (docs/PERFORMANCE.md, One session
 * for every command). */
#define GT_ZSTD_LEVEL (-1)
/* A dense chunk's level: its payload is a tenth of the records' size, and
 * its fields' bytes need entropy coding to be small (docs/PERFORMANCE.md,
 * Dense allocation records). */
#define GT_ZSTD_DENSE_LEVEL 3

struct gt_file_header {
  char magic[8];         /* "GPUTRACE" */
  uint32_t version;      /* GT_FILE_VERSION */
  uint32_t header_bytes; /* 64 */
  uint32_t slot_size;    /* GT_SLOT_SIZE */
  uint32_t flags;        /* GT_FILE_F_*: set by the writer when it closes the file */
  uint64_t realtime_ns;  /* CLOCK_REALTIME when the file was created */
  uint64_t monotonic_ns; /* CLOCK_MONOTONIC at the same moment */
  uint32_t collector_pid;
  uint8_t reserved[20];
};

struct gt_chunk_header {
  uint32_t magic;            /* GT_CHUNK_MAGIC */
  uint32_t header_bytes;     /* 32 */
  uint64_t index;            /* 0, 1, 2, ... */
  uint32_t records;          /* logical records in the chunk */
  uint32_t slots;            /* 96-byte slots: the uncompressed size / 96 */
  uint32_t compressed_bytes; /* size of the zstd frame that follows */
  uint32_t check;            /* FNV-1a of the 28 bytes before it */
};

_Static_assert(sizeof(struct gt_file_header) == 64, "file header is 64 bytes");
_Static_assert(sizeof(struct gt_chunk_header) == 32, "chunk header is 32 bytes");

uint32_t gt_chunk_check(const struct gt_chunk_header *h);
/* Magic, size, check and bounds: a header a reader may follow. */
int gt_chunk_header_valid(const struct gt_chunk_header *h);

/* ---- chunk payloads (chunk_codec.c) ---- */
struct gt_chunk_codec; /* an encoder's buffers */
struct gt_chunk_codec *gt_codec_new(void);
void gt_codec_free(struct gt_chunk_codec *c);
/* `len` bytes of whole records made dense: its length, *out set (valid
 * until the next call), or 0 when they are better written as they are (no
 * allocation or free among them, no gain, no memory). */
size_t gt_chunk_dense_encode(struct gt_chunk_codec *c, const unsigned char *slots,
                             size_t len, const unsigned char **out);
/* A dense payload back into exactly `out_len` bytes of records: NULL, or
 * what is wrong with it. */
const char *gt_chunk_dense_decode(const unsigned char *in, size_t len, unsigned char *out,
                                  size_t out_len);
/* A chunk's frame (h->compressed_bytes, after a valid header h) into its
 * h->slots records at out, through *scratch (grown as needed, the caller's
 * to free) when it is dense; dctx is a ZSTD_DCtx. NULL, or what is wrong. */
const char *gt_chunk_inflate(void *dctx, const struct gt_chunk_header *h,
                             const void *frame, unsigned char *out,
                             unsigned char **scratch, size_t *scratch_cap);

/* ---- writer ---- */
struct gt_writer;

/* Create `path` (mode 0600, never through a symbolic link: outfile.h) and
 * write the file header. An existing file is refused, unless
 * GT_WRITER_FORCE (overwrite a regular file of ours with one link) or
 * GT_WRITER_APPEND (keep an existing trace and add chunks after it: several
 * collectors writing one file one after another). On failure returns NULL
 * and puts a message in err. */
#define GT_WRITER_APPEND 1
#define GT_WRITER_FORCE 2
struct gt_writer *gt_writer_open(const char *path, int flags, char *err, size_t errlen);
/* The same on a descriptor already opened for writing (taken over; `path`
 * names it in messages). */
struct gt_writer *gt_writer_open_fd(int fd, const char *path, int flags, char *err,
                                    size_t errlen);

/* Append one record (rec->nslots slots). Returns 0, or -1 once the file
 * has a write error (the record is counted in gt_writer_lost). */
int gt_writer_append(struct gt_writer *w, const struct gt_record *rec);

/* Compress and write the pending chunk, if any. Returns 0 or -1. */
int gt_writer_flush(struct gt_writer *w);

/* Compress and write `len` bytes of whole records (`records` of them) as
 * one chunk, bypassing the pending chunk (for a writer thread that receives
 * ready-made chunks). Returns 0, or -1 and counts them lost. */
int gt_writer_write_chunk(struct gt_writer *w, const void *slots, size_t len,
                          uint32_t records);

uint64_t gt_writer_records(const struct gt_writer *w);
uint64_t gt_writer_lost(const struct gt_writer *w);
uint64_t gt_writer_bytes(const struct gt_writer *w);    /* bytes in the file */
const char *gt_writer_error(const struct gt_writer *w); /* NULL if none */

/* Flush, close, free. Returns 0, or -1 if any write failed. */
int gt_writer_close(struct gt_writer *w);

/* ---- reader ---- */
struct gt_reader;

/* Open and check the header. Returns NULL with a message naming the file
 * and the problem ("not a gputrace trace", "unsupported version", ...).
 * A path that does not exist but names a rolling set (the collector's
 * --max-size/--keep output: PATH less ".gtrace", then .0001.gtrace, ...)
 * opens the whole set, read in order as one trace. */
struct gt_reader *gt_reader_open(const char *path, char *err, size_t errlen);
/* GT_READ_NO_WAIT: read a file still being written as it is, with a warning,
 * instead of waiting for its collector to finish it. The file being written
 * in a rolling set is always read as it is (recording goes on). */
#define GT_READ_NO_WAIT 1u
struct gt_reader *gt_reader_open_flags(const char *path, unsigned flags, char *err,
                                       size_t errlen);

/* Next record: 1 and *rec set (valid until the next call), 0 at the end.
 * Damage is reported on stderr once per problem and counted. */
int gt_reader_next(struct gt_reader *r, const struct gt_record **rec);

/* Reading chunk by chunk (the analyzer's session, model/session.h):
 * decompressed chunks in file order, each valid until released; several
 * may be held at once. Damage is reported (in file order, on the caller's
 * thread) and damaged chunks are skipped; gt_reader_next is built on this. */
struct gt_chunk {
  const unsigned char *data; /* whole records */
  size_t len;
  uint32_t file; /* position of its file in a rolling set (0: the first) */
  int plain;     /* every record valid, none replayed, no note to say (the
                    decompressing thread looked): gt_chunk_next's fast path */
  void *job;     /* the reader's */
};
/* Decompress on `threads` worker threads (0, the default: on the caller's
 * thread), at most `ahead` chunks ahead of the caller, which decompresses a
 * later chunk itself while its next one is not ready. Before any read. */
void gt_reader_set_threads(struct gt_reader *r, unsigned threads, unsigned ahead);
int gt_reader_next_chunk(struct gt_reader *r, struct gt_chunk *c); /* 1, 0 at the end */
void gt_reader_release(struct gt_reader *r, struct gt_chunk *c);
/* The record of c at *pos, advancing it; NULL at the end of the chunk. An
 * invalid record is reported and ends the chunk; records a later file of a
 * rolling set repeats (GT_F_REPLAYED) are passed over, except a block of a
 * graph's making (after a GT_F_REPLAY_BLOCK marker) whose last holder is no
 * file read before it (that file was deleted). Markers are never returned.
 * Call it for the chunks in file order. */
const struct gt_record *gt_chunk_record(struct gt_reader *r, const struct gt_chunk *c,
                                        size_t *pos);
/* gt_chunk_record, inline past a plain chunk's first record (that one goes
 * through it: it marks its file read). */
static inline const struct gt_record *
gt_chunk_next(struct gt_reader *r, const struct gt_chunk *c, size_t *pos) {
  if (c->plain && *pos && *pos < c->len) {
    const struct gt_record *rec = (const void *)(c->data + *pos);
    *pos += (size_t)rec->nslots * GT_SLOT_SIZE;
    return rec;
  }
  return gt_chunk_record(r, c, pos);
}
/* Records in the trace (all files of a set) from the chunk headers alone,
 * without decompressing: up to the first damaged header of each file. */
uint64_t gt_reader_records_hint(const struct gt_reader *r);

/* The records of the first chunk and of the last `tail` chunks of the trace
 * at `path`, to fn, without a reader: a guess at what the whole holds made
 * before reading it (gputrace leaks' span), never a substitute for reading
 * it. 0, or -1 for a rolling set, an unreadable file or a damaged chunk
 * header (no guess). */
int gt_trace_peek_ends(const char *path, unsigned tail,
                       void (*fn)(void *ctx, const struct gt_record *rec), void *ctx);

/* Copy the text carried by `rec` into buf (NUL-terminated, cut to buflen-1).
 * `len` is the text_len field of the record's kind. Returns the length. */
size_t gt_record_text(const struct gt_record *rec, uint32_t len, char *buf,
                      size_t buflen);

/* Count problems without printing them (fuzzing, tools that report them
 * their own way). */
void gt_reader_set_quiet(struct gt_reader *r, int quiet);
/* Say something about the trace that is no damage (not counted): "gputrace:
 * note: PATH: what" on stderr, unless quiet. */
void gt_reader_note(struct gt_reader *r, const char *what);

const struct gt_file_header *gt_reader_header(const struct gt_reader *r);
uint64_t gt_reader_warnings(const struct gt_reader *r);
uint64_t gt_reader_bad_chunks(const struct gt_reader *r);
int gt_reader_truncated(const struct gt_reader *r);
void gt_reader_close(struct gt_reader *r);

#endif
