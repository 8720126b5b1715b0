/* flight.c — the flight recorder's snapshot (see collector.h).
 *
 * Contract:
 *  - The window is the segments output.c keeps in memory, each a complete
 *    trace (a rolling set's file, trace_file.h's format). A snapshot is one
 *    ordinary trace: the oldest segment whole, then each later one without
 *    what it repeats (records flagged GT_F_REPLAYED: names, stacks, modules
 *    and frames the file holds already, the live allocations and peaks
 *    carried, GT_F_CARRIED), except a graph's making (a GT_F_REPLAY_BLOCK
 *    block) whose last holder is a segment older than the snapshot's
 *    first: exactly what a reader of the set reads (common/trace_reader.c,
 *    keep_replayed), so the one file reads the same, with nothing counted
 *    twice. Block markers are the reader's: never written.
 *  - The segments are ours, but a length is still checked before use: a bad
 *    chunk ends its segment (said in err, the snapshot is refused).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "collector.h"
#include "gputrace/trace_file.h"

struct compose {
  struct gt_writer *w;
  uint32_t first_index;         /* of the snapshot's first segment */
  int later;                    /* reading a segment after the first */
  int in_block, block_keep;     /* a graph's making, repeated, kept or not */
  unsigned char *frame, *slots; /* one chunk, compressed and not */
  size_t frame_cap, slots_cap;
  ZSTD_DCtx *dctx;
};

static int grow(unsigned char **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return 0;
  unsigned char *p = realloc(*buf, need);
  if (!p)
    return -1;
  *buf = p;
  *cap = need;
  return 0;
}

/* Whether a record of a segment goes into the snapshot (the contract). */
static int keep_record(struct compose *c, const struct gt_record *rec) {
  if (rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_REPLAY_BLOCK)) {
    c->in_block = 1;
    c->block_keep = rec->u.note.last_file < c->first_index;
    return 0;
  }
  if (!(rec->flags & GT_F_REPLAYED)) {
    c->in_block = 0;
    return 1;
  }
  return !c->later || (c->in_block && c->block_keep);
}

/* Filter one decompressed chunk in place and write what is kept. */
static int write_kept(struct compose *c, size_t len) {
  size_t in = 0, out = 0;
  uint32_t records = 0;
  while (in + GT_SLOT_SIZE <= len) {
    const struct gt_record *rec = (const void *)(c->slots + in);
    size_t rlen = (size_t)rec->nslots * GT_SLOT_SIZE;
    if (rlen == 0 || rlen > len - in)
      return -1;
    if (keep_record(c, rec)) {
      memmove(c->slots + out, rec, rlen);
      out += rlen;
      records++;
    }
    in += rlen;
  }
  return records ? gt_writer_write_chunk(c->w, c->slots, out, records) : 0;
}

/* Each chunk of one segment, decompressed, into the snapshot. */
static int copy_segment(struct compose *c, const struct gt_segment *seg, char *err,
                        size_t errlen) {
  off_t off = sizeof(struct gt_file_header);
  struct gt_chunk_header h;
  c->in_block = 0;
  while (pread(seg->fd, &h, sizeof h, off) == (ssize_t)sizeof h) {
    size_t raw = (size_t)h.slots * GT_SLOT_SIZE;
    if (h.magic != GT_CHUNK_MAGIC || h.check != gt_chunk_check(&h) ||
        h.compressed_bytes > GT_CHUNK_MAX_BYTES || raw > GT_CHUNK_MAX_BYTES ||
        grow(&c->frame, &c->frame_cap, h.compressed_bytes) ||
        grow(&c->slots, &c->slots_cap, raw ? raw : 1) ||
        pread(seg->fd, c->frame, h.compressed_bytes, off + (off_t)sizeof h) !=
            (ssize_t)h.compressed_bytes ||
        ZSTD_decompressDCtx(c->dctx, c->slots, raw, c->frame, h.compressed_bytes) !=
            raw ||
        write_kept(c, raw) != 0) {
      snprintf(err, errlen, "flight recorder segment %u: unreadable chunk at %lld%s%s",
               seg->index, (long long)off, gt_writer_error(c->w) ? ": " : "",
               gt_writer_error(c->w) ? gt_writer_error(c->w) : "");
      return -1;
    }
    off += (off_t)sizeof h + h.compressed_bytes;
  }
  return 0;
}

int gt_flight_compose(const struct gt_segment *segs, size_t n, int fd, const char *name,
                      struct gt_snapshot_stats *st, char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  int wfd = dup(fd); /* the writer closes its own */
  struct compose c = {.first_index = n ? segs[0].index : 0, .dctx = ZSTD_createDCtx()};
  if (wfd < 0 || !c.dctx) {
    snprintf(err, errlen, "%s: %s", name, wfd < 0 ? strerror(errno) : "out of memory");
    if (wfd >= 0)
      close(wfd);
    ZSTD_freeDCtx(c.dctx);
    return -1;
  }
  int rc = (c.w = gt_writer_open_fd(wfd, name, 0, err, errlen)) ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    c.later = i > 0;
    rc = copy_segment(&c, &segs[i], err, errlen);
    st->segments++;
  }
  if (c.w) {
    st->records = gt_writer_records(c.w);
    const char *werr = gt_writer_error(c.w);
    if (rc == 0 && werr) {
      snprintf(err, errlen, "writing %s: %s", name, werr);
      rc = -1;
    }
    if (gt_writer_close(c.w) != 0 && rc == 0) {
      snprintf(err, errlen, "writing %s failed", name);
      rc = -1;
    }
    st->bytes = (uint64_t)lseek(fd, 0, SEEK_END);
  }
  if (n) {
    st->from_ns = segs[0].opened_ns;
    st->to_ns = segs[n - 1].closed_ns;
  }
  free(c.frame);
  free(c.slots);
  ZSTD_freeDCtx(c.dctx);
  return rc;
}
