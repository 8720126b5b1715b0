/* output.c — where chunks go: one trace file, or a rolling set of them.
 *
 * Contract (collector.h has the API):
 *  - Without limits, a single file at the given path. Files are opened by
 *    outfile.h's rules (no symbolic link followed; an existing file refused
 *    unless forced, then only a regular one of ours); a name the shim picked
 *    (gputrace-<pid>.gtrace) that is taken becomes BASE-1.gtrace, ....
 *  - With --max-size and/or --keep (always-on recording), files
 *    BASE.0001.gtrace, BASE.0002.gtrace, ... (BASE: the path less
 *    ".gtrace"). A file is closed and the next one opened when it passes
 *    the roll size (--roll-size, default a quarter of --max-size, at least
 *    1 MiB), when a quarter of --keep has passed and it holds records of
 *    its own (not only the replayed ones), or on request (SIGUSR1). After
 *    each roll the oldest closed files are deleted while the set is over
 *    --max-size, older than --keep, or the file system has less free space
 *    than the floor (1 GiB or 5 %, whichever is smaller). Age is measured
 *    against when records last came (not the clock): a collector that waits
 *    (for its symbolizer, after the last process ended) or a quiet program
 *    keeps the last --keep of what was recorded. The file being written is
 *    never deleted.
 *  - The roll size counts a file's own records: what it repeats (below) is
 *    on top. A file that repeats more than a third of the roll size grows
 *    until it holds three times what it repeats, so the repeats stay a
 *    quarter of it at most; with --max-size no file grows past half of it
 *    (or the roll size, if larger), and when that leaves a file less room
 *    of its own than the roll size the collector says so once.
 *  - Every file is a complete trace on its own: it starts with the records
 *    that give the later ones meaning (process starts, kernel names,
 *    modules, stacks, frames, Python frames), replayed from a cache that
 *    forgets a process when it ends; and how each graph it uses was made
 *    (captures, graph building and their nodes, instantiations: so that a
 *    graph launched days after start-up still runs its kernels) is
 *    repeated just before the file first needs it (graph_cache.c): a file
 *    repeats only the graphs it uses. Graph making is kept for live graphs
 *    up to GT_GRAPH_CACHE_MAX bytes; the making of graphs that found no
 *    room is not repeated, and each later file says so in a note (flagged
 *    GT_F_INCOMPLETE, so every reader warns) with their number: their
 *    launches there run only what of them the file holds (the nodes of a
 *    capture still open when it opened, none for the others). After the
 *    metadata comes what each live process holds (heap_carry.c): its live
 *    allocations (their ALLOC records, with their stacks and times) and
 *    its peaks (a HEAP record), flagged GT_F_CARRIED: a set whose older
 *    files were deleted still reads the same leaks, peaks and holders.
 *  - Records are cached as they go into a file (not as they are queued), so
 *    a new file repeats exactly what the files before it hold.
 *  - The flight recorder (--flight-recorder SIZE, GPUTRACE_FLIGHT_RECORDER)
 *    is a rolling set kept in memory: each file of the set is a memfd (a
 *    segment), rolled and dropped by the rules above with SIZE as the
 *    --max-size (no free-space floor: nothing is on disk), and --keep, when
 *    given, ages segments out as it does files. Nothing is
 *    written to disk until a snapshot (gt_output_snapshot, flight.c) rolls
 *    the segment being written, so that every record taken so far is in a
 *    closed segment, and writes the kept ones as one trace. At the end the
 *    window is dropped.
 *  - gputrace start (gt_output_start) makes a file of the requester's the
 *    set's next, written as a segment would be (its own number, the
 *    metadata, live allocations and the graphs it uses repeated) but never
 *    rolled nor dropped, until gt_output_stop closes it and opens the next
 *    segment; the window keeps what it held meanwhile, and a snapshot is
 *    refused. Each switch writes its note on both sides.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/outfile.h"
#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"

#define MIN_ROLL_BYTES (1u << 20)
#define REPLAY_SHARE 4 /* a file's repeats: at most 1/REPLAY_SHARE of it */
#define FREE_FLOOR_BYTES (1ull << 30)
#define MAX_FILES 100000

struct closed_file {
  uint32_t index;
  uint64_t bytes;
  uint64_t opened_ns, closed_ns;
  int fd; /* the flight recorder's segment (a memfd), else -1 */
};

struct gt_output {
  struct gt_output_opts o;
  char base[4096];
  char path[4200];     /* the file being written (picked, or the next of a set) */
  struct gt_writer *w; /* the file being written */
  int seg_fd;          /* flight recorder: our descriptor of its memfd, else -1 */
  uint32_t index;      /* its number (rolling) */
  uint64_t opened_ns;
  /* When records last came: files age against it. Not after opened_ns:
   * the current file holds only the records replayed at its start. */
  uint64_t data_ns;
  struct closed_file *closed;
  size_t nclosed, cap_closed;
  unsigned char *meta; /* cached metadata records */
  size_t meta_len, meta_cap;
  uint32_t meta_records;
  struct gt_graph_cache *graphs; /* how graphs were made (rolling) */
  struct gt_heap_carry *heap;    /* what each process holds (rolling) */
  struct gt_replay_buf carried;  /* its records, for a new file */
  struct gt_replay_buf lazy;     /* a graph's making, to repeat before a record */
  uint64_t replay_bytes;         /* of the file being written: what it repeats */
  int said_small;                /* said that --max-size leaves files little room */
  int recording;                 /* flight recorder: out->w is gputrace start's file */
  uint64_t records, lost, bytes, deleted;
  char error[600];
};

static int rolling(const struct gt_output *out) {
  return out->o.max_bytes || out->o.keep_ns || out->o.flight_bytes;
}

/* Whether the file being written rolls: not gputrace start's file. */
static int rolls(const struct gt_output *out) {
  return rolling(out) && !out->recording;
}

static void file_name(const struct gt_output *out, uint32_t index, char *buf,
                      size_t len) {
  snprintf(buf, len, "%s.%04u.gtrace", out->base, index);
}

/* Close the current writer, keeping its figures. */
static void close_current(struct gt_output *out) {
  if (!out->w)
    return;
  gt_writer_flush(out->w);
  out->records += gt_writer_records(out->w);
  out->lost += gt_writer_lost(out->w);
  out->bytes += gt_writer_bytes(out->w);
  const char *e = gt_writer_error(out->w);
  if (e && !out->error[0])
    snprintf(out->error, sizeof out->error, "%s", e);
  uint64_t bytes = gt_writer_bytes(out->w);
  gt_writer_close(out->w);
  out->w = NULL;
  int seg_fd = out->seg_fd;
  out->seg_fd = -1;
  if (rolls(out) && out->nclosed < MAX_FILES) {
    if (out->nclosed == out->cap_closed) {
      size_t cap = out->cap_closed ? out->cap_closed * 2 : 64;
      struct closed_file *p = realloc(out->closed, cap * sizeof *p);
      if (!p) {
        if (seg_fd >= 0)
          close(seg_fd);
        return;
      }
      out->closed = p;
      out->cap_closed = cap;
    }
    out->closed[out->nclosed++] =
        (struct closed_file){out->index, bytes, out->opened_ns, gt_now_ns(), seg_fd};
  } else if (seg_fd >= 0) {
    close(seg_fd);
  }
}

/* Write records that repeat earlier ones (chunks of up to GT_CHUNK_TARGET),
 * counted as the file's repeats. */
static void write_replay(struct gt_output *out, const unsigned char *recs, size_t total) {
  uint64_t before = gt_writer_bytes(out->w);
  size_t off = 0;
  while (off < total) {
    size_t len = 0;
    uint32_t n = 0;
    while (off + len < total && len < GT_CHUNK_TARGET) {
      const struct gt_record *r = (const void *)(recs + off + len);
      len += (size_t)r->nslots * GT_SLOT_SIZE;
      n++;
    }
    gt_writer_write_chunk(out->w, recs + off, len, n);
    off += len;
  }
  out->replay_bytes += gt_writer_bytes(out->w) - before;
}

/* A NOTE record of the trace's own, stamped now, with `flags` and text,
 * built in buf (GT_MAX_SLOTS slots); its bytes. */
static size_t make_note(unsigned char *buf, uint32_t flags, const char *text,
                        size_t len) {
  struct gt_record *rec = (void *)buf;
  memset(rec, 0, sizeof *rec);
  rec->ts_ns = gt_now_ns();
  rec->api = GT_API_gputrace_note;
  rec->kind = GT_KIND_NOTE;
  rec->flags = flags;
  gt_record_attach_text(rec, text, len);
  return (size_t)rec->nslots * GT_SLOT_SIZE;
}

/* A new file of the set says when graphs in use found no room in the cache:
 * their making is not in it (a note every reader warns about). */
static void note_unkept_graphs(struct gt_output *out) {
  struct gt_graph_cache_stats st;
  gt_graph_cache_stats(out->graphs, &st);
  if (!st.dropped_groups)
    return;
  unsigned char buf[GT_MAX_SLOTS * GT_SLOT_SIZE];
  char text[300];
  int n = snprintf(
      text, sizeof text,
      "the making of %llu graph%s in use (%llu records) is not in this file: "
      "the rolling set's graph cache (%u MiB) had no room for %s; %s launches "
      "here run only what of %s this file holds",
      (unsigned long long)st.dropped_groups, st.dropped_groups == 1 ? "" : "s",
      (unsigned long long)st.dropped_records, GT_GRAPH_CACHE_MAX >> 20,
      st.dropped_groups == 1 ? "it" : "them", st.dropped_groups == 1 ? "its" : "their",
      st.dropped_groups == 1 ? "it" : "them");
  size_t bytes = make_note(buf, GT_F_INCOMPLETE | GT_F_REPLAYED, text, (size_t)n);
  write_replay(out, buf, bytes);
}

/* The start of a new file of a set: the cached metadata, replayed. */
static void write_meta(struct gt_output *out) {
  out->replay_bytes = 0;
  write_replay(out, out->meta, out->meta_len);
  out->carried.len = 0;
  out->carried.records = 0;
  gt_heap_carry_write(out->heap, gt_now_ns(), &out->carried);
  write_replay(out, out->carried.data, out->carried.len);
  note_unkept_graphs(out);
}

/* The first file of a single-file trace: a descriptor given to us, a name
 * we picked (taken: BASE-1.gtrace, BASE-2.gtrace, ...), or the user's path. */
static struct gt_writer *open_first(struct gt_output *out, char *err, size_t errlen) {
  const struct gt_output_opts *o = &out->o;
  int fd = o->fd;
  if (fd < 0)
    fd = gt_out_open(o->path, o->pick && o->mode != GT_OUT_APPEND ? GT_OUT_NEW : o->mode,
                     err, errlen);
  if (fd < 0 && o->pick && (errno == EEXIST || errno == ELOOP || errno == EISDIR)) {
    /* taken, or planted */
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s-", out->base);
    fd = gt_out_pick(prefix, 1, ".gtrace", out->path, sizeof out->path, err, errlen);
    if (fd >= 0)
      gt_collector_say("%s exists; the trace goes to %s", o->path, out->path);
  }
  return fd < 0 ? NULL
                : gt_writer_open_fd(fd, out->path,
                                    o->mode == GT_OUT_APPEND ? GT_WRITER_APPEND : 0, err,
                                    errlen);
}

/* The flight recorder's next segment: a memfd, the writer's descriptor and
 * ours (kept after the writer closes it, until the segment is dropped). */
static struct gt_writer *open_segment(struct gt_output *out, char *err, size_t errlen) {
  snprintf(out->path, sizeof out->path, "flight recorder segment %u", out->index);
  int fd = memfd_create("gputrace-flight", MFD_CLOEXEC);
  out->seg_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (fd < 0 || out->seg_fd < 0) {
    snprintf(err, errlen, "%s: %s", out->path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  struct gt_writer *w = gt_writer_open_fd(fd, out->path, 0, err, errlen);
  if (!w) {
    close(out->seg_fd);
    out->seg_fd = -1;
  }
  return w;
}

static int open_next(struct gt_output *out, char *err, size_t errlen) {
  if (out->o.flight_bytes) {
    out->index++;
    out->w = open_segment(out, err, errlen);
  } else if (rolling(out)) {
    out->index++;
    file_name(out, out->index, out->path, sizeof out->path);
    out->w = gt_writer_open(out->path, out->o.mode == GT_OUT_FORCE ? GT_WRITER_FORCE : 0,
                            err, errlen);
  } else {
    out->w = open_first(out, err, errlen);
  }
  if (!out->w)
    return -1;
  out->opened_ns = gt_now_ns();
  if (rolling(out))
    write_meta(out);
  return 0;
}

struct gt_output *gt_output_open(const struct gt_output_opts *o, char *err,
                                 size_t errlen) {
  struct gt_output *out = calloc(1, sizeof *out);
  if (!out) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  out->o = *o;
  out->seg_fd = -1;
  if (o->flight_bytes) /* a set in memory, SIZE its --max-size (the contract) */
    out->o.max_bytes = o->flight_bytes;
  if (rolling(out) && (!(out->graphs = gt_graph_cache_new(GT_GRAPH_CACHE_MAX)) ||
                       !(out->heap = gt_heap_carry_new()))) {
    snprintf(err, errlen, "out of memory");
    gt_graph_cache_free(out->graphs);
    free(out);
    return NULL;
  }
  if (out->o.max_bytes && !out->o.roll_bytes)
    out->o.roll_bytes = out->o.max_bytes / 4;
  if (rolling(out) && out->o.roll_bytes < MIN_ROLL_BYTES)
    out->o.roll_bytes = MIN_ROLL_BYTES;
  snprintf(out->base, sizeof out->base, "%s", o->path);
  snprintf(out->path, sizeof out->path, "%s", o->path);
  size_t len = strlen(out->base);
  if (len > 7 && strcmp(out->base + len - 7, ".gtrace") == 0)
    out->base[len - 7] = '\0';
  if (open_next(out, err, errlen) != 0) {
    gt_graph_cache_free(out->graphs);
    gt_heap_carry_free(out->heap);
    free(out);
    return NULL;
  }
  return out;
}

static uint64_t free_floor_hit(const struct gt_output *out) {
  struct statvfs fs;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", out->base);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  if (statvfs(dir, &fs) != 0)
    return 0;
  uint64_t avail = (uint64_t)fs.f_bavail * fs.f_frsize;
  uint64_t total = (uint64_t)fs.f_blocks * fs.f_frsize;
  uint64_t floor = total / 20 < FREE_FLOOR_BYTES ? total / 20 : FREE_FLOOR_BYTES;
  return avail < floor;
}

/* Delete the oldest closed files beyond the limits. */
static void retain(struct gt_output *out) {
  uint64_t now = out->data_ns, total = 0;
  for (size_t i = 0; i < out->nclosed; i++)
    total += out->closed[i].bytes;
  if (out->w)
    total += gt_writer_bytes(out->w);
  size_t drop = 0;
  while (drop < out->nclosed) {
    const struct closed_file *f = &out->closed[drop];
    int over = out->o.max_bytes && total > out->o.max_bytes;
    int old = out->o.keep_ns && now > f->closed_ns && now - f->closed_ns > out->o.keep_ns;
    if (!over && !old && (f->fd >= 0 || !free_floor_hit(out)))
      break;
    if (f->fd >= 0) { /* a segment in memory */
      close(f->fd);
      out->deleted++;
    } else {
      char path[4200];
      file_name(out, f->index, path, sizeof path);
      if (unlink(path) == 0 || errno == ENOENT)
        out->deleted++;
    }
    total -= f->bytes;
    drop++;
  }
  memmove(out->closed, out->closed + drop, (out->nclosed - drop) * sizeof *out->closed);
  out->nclosed -= drop;
}

int gt_output_roll(struct gt_output *out) {
  if (!rolls(out) || !out->w)
    return 0;
  close_current(out);
  char err[512];
  if (open_next(out, err, sizeof err) != 0) {
    snprintf(out->error, sizeof out->error, "%s", err);
    return -1;
  }
  retain(out);
  return 0;
}

/* The file's own bytes it should hold before the next one is opened (see
 * the contract): the roll size, or what keeps its repeats a quarter of it,
 * within half of --max-size. */
static uint64_t own_room(struct gt_output *out) {
  uint64_t replay = out->replay_bytes, want = out->o.roll_bytes;
  if (want < (REPLAY_SHARE - 1) * replay)
    want = (REPLAY_SHARE - 1) * replay;
  if (out->o.max_bytes) {
    uint64_t cap = out->o.max_bytes / 2 > out->o.roll_bytes ? out->o.max_bytes / 2
                                                            : out->o.roll_bytes;
    if (replay + want > cap)
      want = cap > replay ? cap - replay : 0;
    if (want < out->o.roll_bytes && !out->said_small) {
      out->said_small = 1;
      gt_collector_say(
          "files of %s repeat %.1f MiB each (names, stacks and the graphs "
          "they use): --max-size leaves them %.1f MiB of their own, less than "
          "the roll size; a larger --max-size keeps more",
          out->base, (double)replay / (1 << 20), (double)want / (1 << 20));
    }
  }
  return want;
}

static void remember(struct gt_output *out, const struct gt_record *rec);

/* A chunk into the current file of a set: each record is cached as it goes
 * in, and before a record that uses a graph the file does not hold yet,
 * the graph's making is written (the chunk is split there). */
static int write_rolling(struct gt_output *out, const unsigned char *slots, size_t len,
                         uint32_t records) {
  size_t start = 0, off = 0;
  uint32_t in_part = 0, written = 0;
  int rc = 0;
  while (off < len) {
    const struct gt_record *r = (const void *)(slots + off);
    size_t rlen = (size_t)r->nslots * GT_SLOT_SIZE;
    if (rlen == 0 || rlen > len - off)
      break; /* not a whole record: the sink writes none such */
    if (gt_output_is_graph(r)) {
      out->lazy.len = 0;
      out->lazy.records = 0;
      gt_graph_cache_put(out->graphs, r, out->index, &out->lazy);
      if (out->lazy.len) {
        rc |= gt_writer_write_chunk(out->w, slots + start, off - start, in_part);
        written += in_part;
        write_replay(out, out->lazy.data, out->lazy.len);
        start = off;
        in_part = 0;
      }
    } else {
      remember(out, r);
    }
    off += rlen;
    in_part++;
  }
  rc |= gt_writer_write_chunk(out->w, slots + start, len - start, records - written);
  return rc;
}

int gt_output_write_chunk(struct gt_output *out, const void *slots, size_t len,
                          uint32_t records) {
  if (!out->w) {
    out->lost += records;
    return -1;
  }
  if (!rolling(out))
    return gt_writer_write_chunk(out->w, slots, len, records);
  int rc = write_rolling(out, slots, len, records);
  out->data_ns = gt_now_ns();
  if (gt_writer_bytes(out->w) - out->replay_bytes >= own_room(out))
    gt_output_roll(out);
  return rc;
}

void gt_output_tick(struct gt_output *out, uint64_t now_ns) {
  if (out->o.keep_ns && rolls(out) && out->w && out->data_ns > out->opened_ns &&
      now_ns - out->opened_ns >= out->o.keep_ns / 4)
    gt_output_roll(out);
}

/* Forget what a process that ended had cached. */
static void forget_pid(struct gt_output *out, uint32_t pid) {
  size_t w = 0;
  uint32_t kept = 0;
  for (size_t r = 0; r < out->meta_len;) {
    const struct gt_record *rec = (const void *)(out->meta + r);
    size_t len = (size_t)rec->nslots * GT_SLOT_SIZE;
    if (rec->pid != pid) {
      memmove(out->meta + w, out->meta + r, len);
      w += len;
      kept++;
    }
    r += len;
  }
  out->meta_len = w;
  out->meta_records = kept;
  gt_graph_cache_forget(out->graphs, pid);
  gt_heap_carry_forget(out->heap, pid);
}

/* A record (not of a graph's making) goes into the current file: kept if
 * later files need it (metadata, what processes hold). */
static void remember(struct gt_output *out, const struct gt_record *rec) {
  if (rec->kind == GT_KIND_PROCESS && rec->u.proc.phase == GT_PROC_END) {
    forget_pid(out, rec->pid);
    return;
  }
  gt_heap_carry_put(out->heap, rec);
  if (!gt_output_is_meta(rec))
    return;
  size_t len = (size_t)rec->nslots * GT_SLOT_SIZE;
  if (out->meta_len + len > out->meta_cap) {
    size_t cap = out->meta_cap ? out->meta_cap * 2 : 65536;
    while (cap < out->meta_len + len)
      cap *= 2;
    unsigned char *p = realloc(out->meta, cap);
    if (!p)
      return; /* later files miss this name; the set as a whole still has it */
    out->meta = p;
    out->meta_cap = cap;
  }
  memcpy(out->meta + out->meta_len, rec, len);
  ((struct gt_record *)(void *)(out->meta + out->meta_len))->flags |= GT_F_REPLAYED;
  out->meta_len += len;
  out->meta_records++;
}

void gt_output_graph_stats(const struct gt_output *out, struct gt_graph_cache_stats *st) {
  if (out->graphs)
    gt_graph_cache_stats(out->graphs, st);
  else
    memset(st, 0, sizeof *st);
}

uint64_t gt_output_records(const struct gt_output *out) {
  return out->records + (out->w ? gt_writer_records(out->w) : 0);
}
uint64_t gt_output_lost(const struct gt_output *out) {
  return out->lost + (out->w ? gt_writer_lost(out->w) : 0);
}
uint64_t gt_output_bytes(const struct gt_output *out) {
  return out->bytes + (out->w ? gt_writer_bytes(out->w) : 0);
}
const char *gt_output_path(const struct gt_output *out) {
  return out->path;
}
uint64_t gt_output_kept(const struct gt_output *out) {
  uint64_t total = out->w ? gt_writer_bytes(out->w) : 0;
  for (size_t i = 0; i < out->nclosed; i++)
    total += out->closed[i].bytes;
  return total;
}
uint64_t gt_output_deleted(const struct gt_output *out) {
  return out->deleted;
}
const char *gt_output_error(const struct gt_output *out) {
  if (out->error[0])
    return out->error;
  return out->w ? gt_writer_error(out->w) : NULL;
}

int gt_output_close(struct gt_output *out) {
  if (!out)
    return 0;
  close_current(out);
  int rc = out->error[0] ? -1 : 0;
  for (size_t i = 0; i < out->nclosed; i++)
    if (out->closed[i].fd >= 0)
      close(out->closed[i].fd);
  free(out->closed);
  free(out->meta);
  free(out->lazy.data);
  free(out->carried.data);
  gt_graph_cache_free(out->graphs);
  gt_heap_carry_free(out->heap);
  free(out);
  return rc;
}

/* Roll, so that every record taken so far is in a closed segment, then
 * write the kept segments (those closed within last_ns of now: 0, all) as
 * one trace (flight.c), cut at now - last_ns when the first began before. */
int gt_output_snapshot(struct gt_output *out, int fd, const char *name, uint64_t last_ns,
                       struct gt_snapshot_stats *st, char *err, size_t errlen) {
  if (!out->o.flight_bytes) {
    snprintf(err, errlen, "this collector keeps no flight recorder");
    return -1;
  }
  if (out->recording) {
    snprintf(err, errlen, "recording to a file (gputrace start): the file has it all");
    return -1;
  }
  if (gt_output_roll(out) != 0) {
    snprintf(err, errlen, "%s", out->error);
    return -1;
  }
  uint64_t now = gt_now_ns();
  size_t first = 0;
  while (last_ns && first + 1 < out->nclosed &&
         now - out->closed[first].closed_ns > last_ns)
    first++;
  size_t n = out->nclosed - first;
  struct gt_segment *segs = calloc(n ? n : 1, sizeof *segs);
  if (!segs) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const struct closed_file *f = &out->closed[first + i];
    segs[i] = (struct gt_segment){f->fd, f->index, f->opened_ns, f->closed_ns};
  }
  uint64_t from = last_ns && last_ns < now ? now - last_ns : 0;
  if (!n || from <= segs[0].opened_ns)
    from = 0; /* the window is younger than asked: all of it */
  int rc = gt_flight_compose(segs, n, from, fd, name, st, err, errlen);
  free(segs);
  return rc;
}

/* A NOTE of the trace's own (not replayed) into the file being written. */
static void write_note(struct gt_output *out, const char *text) {
  unsigned char buf[GT_MAX_SLOTS * GT_SLOT_SIZE];
  size_t bytes = make_note(buf, 0, text, strlen(text));
  gt_writer_write_chunk(out->w, buf, bytes, 1);
}

/* The window's segment ends with the note; fd's file starts as a segment
 * would (the metadata and live allocations, replayed), then the note. */
int gt_output_start(struct gt_output *out, int fd, const char *note, char *err,
                    size_t errlen) {
  if (!out->o.flight_bytes || out->recording || !out->w) {
    snprintf(err, errlen, "%s",
             !out->o.flight_bytes ? "this collector keeps no flight recorder"
             : out->recording     ? GT_CTL_ALREADY " (gputrace stop ends it)"
                                  : out->error);
    return -1;
  }
  int wfd = fcntl(fd, F_DUPFD_CLOEXEC, 0); /* the writer closes its own */
  if (wfd < 0) {
    snprintf(err, errlen, "the recording's file: %s", strerror(errno));
    return -1;
  }
  write_note(out, note);
  close_current(out);
  out->index++; /* a file of the set's own: it repeats the graphs it uses */
  out->recording = 1;
  snprintf(out->path, sizeof out->path, "gputrace start's file");
  if (!(out->w = gt_writer_open_fd(wfd, out->path, 0, err, errlen))) {
    out->recording = 0;
    char ignored[512];
    open_next(out, ignored, sizeof ignored);
    return -1;
  }
  out->opened_ns = gt_now_ns();
  write_meta(out);
  write_note(out, note);
  retain(out);
  return 0;
}

/* The file ends with the note and is closed; the window goes on in a new
 * segment, which starts with the note too. */
int gt_output_stop(struct gt_output *out, const char *note, struct gt_snapshot_stats *st,
                   char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  if (!out->recording) {
    snprintf(err, errlen, GT_CTL_NOT_RECORDING " (gputrace start begins)");
    return -1;
  }
  write_note(out, note);
  gt_writer_flush(out->w);
  const char *werr = gt_writer_error(out->w);
  int rc = werr ? (snprintf(err, errlen, "writing the recording: %s", werr), -1) : 0;
  st->records = gt_writer_records(out->w);
  st->bytes = gt_writer_bytes(out->w);
  st->segments = 1;
  st->from_ns = out->opened_ns;
  st->to_ns = gt_now_ns();
  close_current(out);
  out->recording = 0;
  if (open_next(out, err, errlen) != 0) {
    snprintf(out->error, sizeof out->error, "%s", err);
    return -1;
  }
  write_note(out, note);
  return rc;
}
