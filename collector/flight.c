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
 *  - Cut at from_ns (snapshot --last): the snapshot's own records are
 *    exactly the window's records stamped at or after it (and those with
 *    no time); what is stamped before it is the past, and only what gives
 *    the rest its meaning is kept of it, as a file of a set repeats it: the
 *    definitions (output.c's meta) flagged GT_F_REPLAYED, notes that say
 *    part of the run is missing or untraced, the blocks live at from_ns and
 *    the peaks reached by then (heap_carry.c, from the first segment's
 *    carried blocks and the past's allocations and frees, over every
 *    segment: file order is not time order across threads; a first pass),
 *    each graph's making the cut left in the past, repeated just before the
 *    record that first uses it (graph_cache.c, as at a rolling file's
 *    start; a second pass, which writes; a graph the cache had no room for is
 *    said in a NOTE flagged GT_F_INCOMPLETE). The first segment's own carried
 *    blocks and peaks are replaced by those at from_ns. A NOTE stamped
 *    from_ns opens the snapshot's own records (GT_NOTE_WINDOW).
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
  uint32_t first_index;                 /* of the snapshot's first segment */
  int later;                            /* reading a segment after the first */
  int in_block, block_keep;             /* a graph's making, repeated, kept or not */
  unsigned char *frame, *slots, *dense; /* one chunk: compressed, not, dense */
  size_t frame_cap, slots_cap, dense_cap;
  ZSTD_DCtx *dctx;
  uint64_t from_ns;              /* the cut (0: none) */
  struct gt_heap_carry *heap;    /* the past's live blocks and peaks */
  struct gt_graph_cache *graphs; /* the past's graph making */
  struct gt_replay_buf replay;   /* what graph_cache gives back */
};
enum { PAST_FILE = 0, WINDOW_FILE = 1 }; /* the cut's two sides, to graph_cache */

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

static void append(struct compose *c, const struct gt_record *rec, uint32_t add_flags) {
  if (!add_flags) {
    gt_writer_append(c->w, rec);
    return;
  }
  unsigned char buf[GT_MAX_SLOTS * GT_SLOT_SIZE];
  memcpy(buf, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
  ((struct gt_record *)(void *)buf)->flags |= add_flags;
  gt_writer_append(c->w, (const void *)buf);
}

/* Records built here (a carry, a graph's making), less block markers. */
static void append_all(struct compose *c, const struct gt_replay_buf *b) {
  for (size_t off = 0; off < b->len;) {
    const struct gt_record *rec = (const void *)(b->data + off);
    if (!(rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_REPLAY_BLOCK)))
      append(c, rec, 0);
    off += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
}

static int in_past(const struct compose *c, const struct gt_record *rec) {
  return rec->ts_ns && rec->ts_ns < c->from_ns;
}

static int process_ended(const struct gt_record *rec) {
  return rec->kind == GT_KIND_PROCESS && rec->u.proc.phase == GT_PROC_END;
}

/* The first pass of a cut: what was live, and how high, at from_ns. */
static void take_past(struct compose *c, const struct gt_record *rec) {
  if (rec->flags & GT_F_REPLAYED) {
    if (!c->later)
      gt_heap_carry_seed(c->heap, rec);
  } else if (in_past(c, rec)) {
    if (process_ended(rec))
      gt_heap_carry_forget(c->heap, rec->pid);
    else if (!gt_output_is_graph(rec))
      gt_heap_carry_put(c->heap, rec);
  }
}

/* Whether a repeated record of a segment goes in (the contract). */
static int keep_repeat(struct compose *c, const struct gt_record *rec) {
  if (rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_REPLAY_BLOCK)) {
    c->in_block = 1;
    c->block_keep = rec->u.note.last_file < c->first_index;
    return 0;
  }
  if (!c->later)
    return !(c->from_ns && (rec->flags & GT_F_CARRIED)); /* replaced by the cut's */
  return c->in_block && c->block_keep;
}

/* What of the past goes in: what the window's records refer to. */
static uint32_t past_flags(const struct gt_record *rec) {
  if (gt_output_is_meta(rec))
    return GT_F_REPLAYED;
  if (rec->kind == GT_KIND_NOTE && (rec->flags & (GT_F_INCOMPLETE | GT_F_UNTRACED)))
    return GT_F_REPLAYED;
  return 0;
}

/* The second pass (the only one without a cut): a record into the snapshot. */
static void take(struct compose *c, const struct gt_record *rec) {
  if (rec->flags & GT_F_REPLAYED) {
    if (keep_repeat(c, rec))
      append(c, rec, 0);
    return;
  }
  c->in_block = 0;
  if (!c->from_ns) {
    append(c, rec, 0);
    return;
  }
  int past = in_past(c, rec);
  if (gt_output_is_graph(rec)) {
    c->replay.len = c->replay.records = 0;
    gt_graph_cache_put(c->graphs, rec, past ? PAST_FILE : WINDOW_FILE, &c->replay);
    if (!past)
      append_all(c, &c->replay);
  } else if (past && process_ended(rec)) {
    gt_graph_cache_forget(c->graphs, rec->pid);
  }
  if (!past)
    append(c, rec, 0);
  else if (past_flags(rec))
    append(c, rec, past_flags(rec));
}

/* Each record of one decompressed chunk to fn. */
static int each_record(struct compose *c, size_t len,
                       void (*fn)(struct compose *, const struct gt_record *)) {
  for (size_t in = 0; in + GT_SLOT_SIZE <= len;) {
    const struct gt_record *rec = (const void *)(c->slots + in);
    size_t rlen = (size_t)rec->nslots * GT_SLOT_SIZE;
    if (rlen == 0 || rlen > len - in)
      return -1;
    fn(c, rec);
    in += rlen;
  }
  return gt_writer_error(c->w) ? -1 : 0;
}

/* Each chunk of one segment, decompressed, to fn. */
static int read_segment(struct compose *c, const struct gt_segment *seg,
                        void (*fn)(struct compose *, const struct gt_record *), char *err,
                        size_t errlen) {
  off_t off = sizeof(struct gt_file_header);
  struct gt_chunk_header h;
  c->in_block = 0;
  while (pread(seg->fd, &h, sizeof h, off) == (ssize_t)sizeof h) {
    size_t raw = (size_t)h.slots * GT_SLOT_SIZE;
    if (!gt_chunk_header_valid(&h) ||
        grow(&c->frame, &c->frame_cap, h.compressed_bytes) ||
        grow(&c->slots, &c->slots_cap, raw) ||
        pread(seg->fd, c->frame, h.compressed_bytes, off + (off_t)sizeof h) !=
            (ssize_t)h.compressed_bytes ||
        gt_chunk_inflate(c->dctx, &h, c->frame, c->slots, &c->dense, &c->dense_cap) ||
        each_record(c, raw, fn) != 0) {
      snprintf(err, errlen, "flight recorder segment %u: unreadable chunk at %lld%s%s",
               seg->index, (long long)off, gt_writer_error(c->w) ? ": " : "",
               gt_writer_error(c->w) ? gt_writer_error(c->w) : "");
      return -1;
    }
    off += (off_t)sizeof h + h.compressed_bytes;
  }
  return 0;
}

static int read_all(struct compose *c, const struct gt_segment *segs, size_t n,
                    void (*fn)(struct compose *, const struct gt_record *), char *err,
                    size_t errlen) {
  for (size_t i = 0; i < n; i++) {
    c->later = i > 0;
    if (read_segment(c, &segs[i], fn, err, errlen) != 0)
      return -1;
  }
  return 0;
}

/* A NOTE of the snapshot's own, stamped at the cut. */
static void append_note(struct compose *c, uint32_t flags, const char *text) {
  unsigned char buf[GT_MAX_SLOTS * GT_SLOT_SIZE];
  struct gt_record *note = (void *)buf;
  memset(note, 0, sizeof *note);
  note->ts_ns = c->from_ns;
  note->api = GT_API_gputrace_note;
  note->kind = GT_KIND_NOTE;
  note->flags = flags;
  gt_record_attach_text(note, text, strlen(text));
  append(c, note, 0);
}

/* A graph the cut left in the past whose making found no room in the
 * cache is not in the snapshot: said in a note every reader warns about. */
static void note_unkept_graphs(struct compose *c) {
  struct gt_graph_cache_stats st;
  gt_graph_cache_stats(c->graphs, &st);
  if (!st.ever_dropped_groups)
    return;
  char text[300];
  snprintf(
      text, sizeof text,
      "the making of %llu graph%s (%llu records) from before the snapshot's cut is "
      "not in it: the graph cache (%u MiB) had no room; their launches run only what "
      "of them the snapshot holds",
      (unsigned long long)st.ever_dropped_groups, st.ever_dropped_groups == 1 ? "" : "s",
      (unsigned long long)st.ever_dropped_records, GT_GRAPH_CACHE_MAX >> 20);
  append_note(c, GT_F_INCOMPLETE, text);
}

/* A cut's first records: the note, then the blocks live at from_ns. */
static int open_cut(struct compose *c, const struct gt_segment *segs, size_t n, char *err,
                    size_t errlen) {
  if (!(c->heap = gt_heap_carry_new()) ||
      !(c->graphs = gt_graph_cache_new(GT_GRAPH_CACHE_MAX))) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (read_all(c, segs, n, take_past, err, errlen) != 0)
    return -1;
  append_note(c, 0, GT_NOTE_WINDOW);
  struct gt_replay_buf carried = {0};
  gt_heap_carry_write(c->heap, c->from_ns, &carried);
  append_all(c, &carried);
  free(carried.data);
  return 0;
}

int gt_flight_compose(const struct gt_segment *segs, size_t n, uint64_t from_ns, int fd,
                      const char *name, struct gt_snapshot_stats *st, char *err,
                      size_t errlen) {
  memset(st, 0, sizeof *st);
  int wfd = dup(fd); /* the writer closes its own */
  struct compose c = {.first_index = n ? segs[0].index : 0,
                      .dctx = ZSTD_createDCtx(),
                      .from_ns = from_ns};
  if (wfd < 0 || !c.dctx) {
    snprintf(err, errlen, "%s: %s", name, wfd < 0 ? strerror(errno) : "out of memory");
    if (wfd >= 0)
      close(wfd);
    ZSTD_freeDCtx(c.dctx);
    return -1;
  }
  int rc = (c.w = gt_writer_open_fd(wfd, name, 0, err, errlen)) ? 0 : -1;
  if (rc == 0 && from_ns && n)
    rc = open_cut(&c, segs, n, err, errlen);
  if (rc == 0)
    rc = read_all(&c, segs, n, take, err, errlen);
  if (rc == 0 && c.graphs)
    note_unkept_graphs(&c);
  st->segments = n;
  if (c.w) {
    gt_writer_flush(c.w);
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
    st->from_ns = from_ns > segs[0].opened_ns ? from_ns : segs[0].opened_ns;
    st->to_ns = segs[n - 1].closed_ns;
  }
  free(c.frame);
  free(c.slots);
  free(c.dense);
  free(c.replay.data);
  gt_heap_carry_free(c.heap);
  gt_graph_cache_free(c.graphs);
  ZSTD_freeDCtx(c.dctx);
  return rc;
}
