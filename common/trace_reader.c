/* trace_reader.c — the analyzer's side of trace_file.h: the one place a
 * trace is decompressed.
 *
 * Chunks are independent zstd frames, so they are decompressed in parallel:
 * each worker thread takes a free job, reads the next chunk header and frame
 * under the source lock (file order, resynchronization and rolling sets all
 * happen there, sequentially), then decompresses outside it. Jobs carry a
 * serial number; the caller gets them back strictly in serial order, with
 * any warning a job collected printed on the caller's thread at that point,
 * so messages come in file order whatever the number of threads. Without
 * threads (the default) the caller does the same work itself; with them, a
 * caller whose next chunk is not ready decompresses a later one itself
 * rather than sleep, so that the caller plus its workers keep every core
 * busy without a worker ever taking the caller's core from it
 * (gt_session: one worker fewer than the CPUs). The thread that
 * decompresses a chunk also looks at its records once: a chunk with every
 * record valid, none replayed and no note to say is plain, and
 * gt_chunk_next steps it inline on the caller's thread, which the
 * analysis keeps busy (the checks leave its path).
 *
 * Memory: a job owns its compressed and decompressed buffers (about 1 MiB
 * each chunk; buffers over KEEP_BYTES are freed with the chunk); workers
 * stay at most `ahead` chunks and AHEAD_BYTES decompressed bytes ahead of
 * the caller (the chunks each thread is decompressing may pass it: a chunk
 * is at most GT_CHUNK_MAX_BYTES), so jobs in use are those plus the chunks
 * the caller holds.
 */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "gputrace/knobs.h"
#include "gputrace/trace_file.h"

#define MAX_THREADS 16
#define JOB_WARNINGS 4 /* messages one chunk can bring (resync, corruption, ...) */
#define WARN_LEN 600
#define AHEAD_BYTES (16u << 20) /* decompressed bytes ahead: no new chunk past it */
#define KEEP_BYTES (2u * GT_CHUNK_TARGET) /* a job's buffers kept for the next chunk */

enum job_status { JOB_OK, JOB_BAD, JOB_END };

struct job {
  uint64_t serial; /* position of the chunk among all chunks read */
  int ready;       /* filled and waiting for the caller */
  int in_use;      /* taken by a worker or held by the caller */
  enum job_status status;
  uint32_t file;    /* index of its file in a rolling set */
  uint32_t records; /* from its header */
  uint64_t index;   /* from its header */
  struct gt_chunk_header header;
  unsigned char *frame, *data, *dense; /* dense: a dense chunk's payload */
  size_t frame_cap, data_cap, dense_cap, frame_len, data_len;
  size_t counted;     /* its part of the reader's ahead_bytes */
  int bad, truncated; /* counted by the caller when it takes the job */
  int plain;          /* gt_chunk.plain */
  int nwarn, unsaid;  /* messages kept; more, counted but not kept */
  char warn[JOB_WARNINGS][WARN_LEN];
};

struct worker {
  struct gt_reader *r;
  ZSTD_DCtx *dctx;
  pthread_t thread;
};

struct gt_reader {
  /* ---- the source: the file (or set) being read; under src_mu ---- */
  pthread_mutex_t src_mu;
  FILE *fp;
  char *path; /* the current file's */
  uint64_t offset;
  uint32_t file; /* index of the current file in the set */
  uint64_t next_serial;
  int src_done;
  glob_t set; /* a rolling set: the files in order */
  size_t set_next;
  ZSTD_DCtx *dctx; /* the caller's, without worker threads */
  /* ---- jobs; under mu ---- */
  pthread_mutex_t mu;
  pthread_cond_t cv_ready, cv_free;
  struct job **jobs;
  size_t njobs;
  uint64_t next_out; /* serial the caller gets next */
  uint64_t taken;    /* serials handed to workers (== next_serial) */
  unsigned ahead, threads, started;
  uint64_t ahead_bytes; /* decompressed size of the chunks taken, not yet handed out */
  int stop, oom;        /* oom: a job could not be allocated; reading stops */
  struct worker workers[MAX_THREADS];
  /* ---- the caller's ---- */
  char *first_path;
  struct gt_file_header header;
  uint64_t warnings, bad_chunks;
  int truncated, done, quiet;
  unsigned flags;      /* GT_READ_* */
  struct gt_chunk cur; /* gt_reader_next's chunk */
  size_t cur_pos;
  int have_cur;
  /* a rolling set's graph making repeated before its first use in a file
   * (GT_F_REPLAY_BLOCK): kept unless a file read before held it */
  uint8_t *file_read;  /* per file of the set: its records were read */
  uint32_t block_file; /* 1 + the file of the block being read; 0: none */
  int block_keep;
};

/* ---- messages ---- */

__attribute__((format(printf, 3, 4))) static void
job_warn(struct job *j, const char *path, const char *fmt, ...) {
  if (j->nwarn >= JOB_WARNINGS) {
    j->unsaid++;
    return;
  }
  char *m = j->warn[j->nwarn++];
  int n = snprintf(m, WARN_LEN, "gputrace: warning: %s: ", path);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && n < WARN_LEN)
    vsnprintf(m + n, WARN_LEN - (size_t)n, fmt, ap);
  va_end(ap);
}

static void say(struct gt_reader *r, const char *msg) {
  r->warnings++;
  if (!r->quiet)
    fprintf(stderr, "%s\n", msg);
}

void gt_reader_note(struct gt_reader *r, const char *what) {
  if (!r->quiet)
    fprintf(stderr, "gputrace: note: %s: %s\n", r->first_path, what);
}

/* ---- opening ---- */

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
  else if (h->version < GT_FILE_VERSION_MIN || h->version > GT_FILE_VERSION)
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

/* The header's completion mark, as the file holds it now. */
static int marked_complete(int fd) {
  uint32_t flags = 0;
  return pread(fd, &flags, sizeof flags, offsetof(struct gt_file_header, flags)) ==
             (ssize_t)sizeof flags &&
         (flags & GT_FILE_F_COMPLETE);
}

/* Is `pid` a running gputrace-collector? Its name (/proc/PID/comm, cut to
 * 15 characters by the kernel) says so; an unreadable one says no. */
static int collector_alive(uint32_t pid) {
  char path[64], comm[32] = "";
  snprintf(path, sizeof path, "/proc/%u/comm", pid);
  FILE *f = pid ? fopen(path, "r") : NULL;
  if (!f)
    return 0;
  int ok = fgets(comm, sizeof comm, f) != NULL;
  fclose(f);
  return ok && strncmp(comm, "gputrace-collec", 15) == 0;
}

/* Wait for the lock, at most GPUTRACE_READ_WAIT, while its holder is a live
 * collector and the file is not marked complete. 1: the lock is ours. */
static int wait_for_writer(int fd, const char *path, const struct gt_file_header *h) {
  fprintf(stderr,
          "gputrace: %s is still being written by its collector (pid %u): waiting for "
          "it to finish (--no-wait reads it as it is)\n",
          path, h->collector_pid);
  uint64_t limit = gt_knob(GT_KNOB_READ_WAIT), waited = 0, step = 20000000; /* 20 ms */
  while (waited < limit && collector_alive(h->collector_pid) && !marked_complete(fd)) {
    nanosleep(&(struct timespec){0, (long)step}, NULL);
    waited += step;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0)
      return 1;
  }
  return 0;
}

/* Is the collector still writing this file (it holds an exclusive lock,
 * trace_file.h)? Only if the header is not marked complete and the pid it
 * names is a live gputrace-collector: a lock anyone else holds is not
 * waited for. By default wait for the collector to finish, with a note, at
 * most GPUTRACE_READ_WAIT; with `now`, or past that, read it as it is. Then
 * a file never marked complete gets `note` (a warning for the caller). */
static void writer_state(FILE *fp, const char *path, const struct gt_file_header *h,
                         int now, char *note, size_t notelen) {
  note[0] = '\0';
  if (h->version < 2)
    return; /* no lock, no mark in version 1 */
  int fd = fileno(fp);
  int locked = flock(fd, LOCK_SH | LOCK_NB) == 0;
  if (!locked && errno != EWOULDBLOCK)
    return;
  if (marked_complete(fd)) {
    if (locked)
      flock(fd, LOCK_UN);
    return; /* finished: whoever holds a lock on it now is no writer */
  }
  if (!locked && collector_alive(h->collector_pid)) {
    if (!now && wait_for_writer(fd, path, h))
      locked = 1;
    else if (!marked_complete(fd) && collector_alive(h->collector_pid)) {
      char waited[64] = "";
      if (!now)
        snprintf(waited, sizeof waited, " after %llu s of waiting",
                 (unsigned long long)(gt_knob(GT_KNOB_READ_WAIT) / 1000000000u));
      snprintf(note, notelen,
               "incomplete: still being written by its collector (pid %u)%s; read as "
               "it was",
               h->collector_pid, waited);
      return;
    }
  }
  uint32_t flags = 0; /* a collector whose writes failed (full disk) says so */
  if (!marked_complete(fd))
    snprintf(
        note, notelen,
        pread(fd, &flags, sizeof flags, offsetof(struct gt_file_header, flags)) ==
                    (ssize_t)sizeof flags &&
                (flags & GT_FILE_F_WRITE_FAILED)
            ? "incomplete: its collector (pid %u) ran out of space (a write failed); "
              "what it wrote is read"
            : "incomplete: its collector (pid %u) stopped without finishing it; what "
              "it wrote is read",
        h->collector_pid);
  if (locked)
    flock(fd, LOCK_UN);
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
  return gt_reader_open_flags(path, 0, err, errlen);
}

struct gt_reader *gt_reader_open_flags(const char *path, unsigned flags, char *err,
                                       size_t errlen) {
  struct gt_file_header h;
  glob_t set = {0};
  int is_set = access(path, F_OK) != 0 && errno == ENOENT && find_set(path, &set);
  const char *first = is_set ? set.gl_pathv[0] : path;
  FILE *fp = open_checked(first, &h, err, errlen);
  struct gt_reader *r = fp ? calloc(1, sizeof *r) : NULL;
  if (fp && (!r || !(r->path = strdup(first)) || !(r->first_path = strdup(first)) ||
             !(r->dctx = ZSTD_createDCtx()))) {
    snprintf(err, errlen, "%s: out of memory", path);
    if (r)
      free(r->path), free(r->first_path), free(r);
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
  r->flags = flags;
  if (is_set) {
    r->set = set;
    r->set_next = 1;
    r->file_read = calloc(set.gl_pathc, 1); /* without: later files' blocks passed over */
  }
  char note[200];
  writer_state(fp, first, &h, (flags & GT_READ_NO_WAIT) || is_set, note, sizeof note);
  if (note[0]) {
    char msg[WARN_LEN];
    snprintf(msg, sizeof msg, "gputrace: warning: %s: %s", first, note);
    say(r, msg);
  }
  pthread_mutex_init(&r->src_mu, NULL);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv_ready, NULL);
  pthread_cond_init(&r->cv_free, NULL);
  r->ahead = 1;
  return r;
}

/* ---- the source (under src_mu) ---- */

/* The number of a rolling set's file (BASE.NNNN.gtrace), 0 if none. */
static uint64_t set_file_number(const char *path) {
  size_t len = strlen(path), end = len > 7 ? len - 7 : 0, i = end;
  uint64_t n = 0, scale = 1;
  while (i > 0 && path[i - 1] >= '0' && path[i - 1] <= '9' && scale < 1000000000000ull) {
    n += (uint64_t)(path[i - 1] - '0') * scale;
    scale *= 10;
    i--;
  }
  return i < end && i > 0 && path[i - 1] == '.' ? n : 0;
}

/* At the end of one file of a rolling set: go on with the next readable
 * one (a file deleted meanwhile, or damaged, is reported and skipped). */
static int next_file(struct gt_reader *r, struct job *j) {
  while (r->set_next < r->set.gl_pathc) {
    const char *path = r->set.gl_pathv[r->set_next++];
    uint64_t before = set_file_number(r->set.gl_pathv[r->set_next - 2]),
             number = set_file_number(path);
    if (before && number > before + 1)
      job_warn(j, path,
               "incomplete: %llu file%s of the set before it (from number %llu) %s "
               "missing: what %s held is not in the analysis (its calls, and the "
               "allocations and frees between the files around it)",
               (unsigned long long)(number - before - 1), number - before > 2 ? "s" : "",
               (unsigned long long)(before + 1), number - before > 2 ? "are" : "is",
               number - before > 2 ? "they" : "it");
    struct gt_file_header h;
    char err[512];
    FILE *fp = open_checked(path, &h, err, sizeof err);
    if (!fp) {
      job_warn(j, r->path, "skipping %s", err);
      continue;
    }
    char note[200]; /* the set's file being written is read as it is */
    writer_state(fp, path, &h, 1, note, sizeof note);
    if (note[0])
      job_warn(j, path, "%s", note);
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
    r->file = (uint32_t)(r->set_next - 1);
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

/* After a bad chunk header at r->offset: scan forward for the next valid
 * one. Returns 1 and leaves the file positioned after it, or 0 at EOF. */
static int resync(struct gt_reader *r, struct job *j, struct gt_chunk_header *h) {
  uint64_t start = r->offset;
  for (uint64_t off = start + 1;; off++) {
    if (fseeko(r->fp, (off_t)off, SEEK_SET) != 0 ||
        fread(h, 1, sizeof *h, r->fp) != sizeof *h)
      return 0;
    if (gt_chunk_header_valid(h)) {
      job_warn(j, r->path, "skipped %" PRIu64 " damaged bytes at offset %" PRIu64,
               off - start, start);
      r->offset = off;
      return 1;
    }
  }
}

/* Read the next chunk's frame of the current file into j. Returns 1 when
 * one was read, 0 at the end of the file (or where it is cut short). */
static int read_frame(struct gt_reader *r, struct job *j) {
  struct gt_chunk_header h;
  if (fseeko(r->fp, (off_t)r->offset, SEEK_SET) != 0)
    return 0;
  size_t n = fread(&h, 1, sizeof h, r->fp);
  if (n == 0)
    return 0;
  if (n < sizeof h) {
    j->truncated = 1;
    job_warn(j, r->path,
             "truncated: the trace ends inside a chunk header at offset %" PRIu64
             " (the writer was interrupted); events up to there are shown",
             r->offset);
    return 0;
  }
  if (!gt_chunk_header_valid(&h)) {
    j->bad++;
    job_warn(j, r->path, "corrupt chunk header at offset %" PRIu64, r->offset);
    if (!resync(r, j, &h))
      return 0;
  }
  if (grow(&j->frame, &j->frame_cap, h.compressed_bytes)) {
    job_warn(j, r->path, "out of memory reading chunk %" PRIu64, h.index);
    return 0;
  }
  if (fread(j->frame, 1, h.compressed_bytes, r->fp) != h.compressed_bytes) {
    j->truncated = 1;
    job_warn(j, r->path,
             "truncated: chunk %" PRIu64 " (%" PRIu32 " records) is cut short; "
             "events before it are shown",
             h.index, h.records);
    return 0;
  }
  r->offset += sizeof h + h.compressed_bytes;
  j->frame_len = h.compressed_bytes;
  j->data_len = (size_t)h.slots * GT_SLOT_SIZE;
  j->records = h.records;
  j->index = h.index;
  j->header = h;
  return 1;
}

/* Fill j with the next chunk of the file or set (compressed), or mark it
 * as the end. Under src_mu. */
static void take_chunk(struct gt_reader *r, struct job *j) {
  j->status = JOB_END;
  j->nwarn = j->unsaid = j->bad = j->truncated = 0;
  j->serial = r->next_serial++;
  while (!r->src_done) {
    if (read_frame(r, j)) {
      j->status = JOB_OK;
      j->file = r->file;
      return;
    }
    if (!next_file(r, j))
      r->src_done = 1;
  }
}

static int chunk_plain(const unsigned char *data, size_t len);

static void decompress(struct job *j, ZSTD_DCtx *dctx, const char *path) {
  j->plain = 0;
  if (j->status != JOB_OK)
    return;
  if (grow(&j->data, &j->data_cap, j->data_len)) {
    job_warn(j, path, "out of memory reading chunk %" PRIu64, j->index);
    j->status = JOB_END;
    return;
  }
  const char *wrong =
      gt_chunk_inflate(dctx, &j->header, j->frame, j->data, &j->dense, &j->dense_cap);
  if (wrong) {
    j->bad++;
    job_warn(j, path,
             "chunk %" PRIu64 " is corrupt (%s): its %" PRIu32 " records are skipped",
             j->index, wrong, j->records);
    j->status = JOB_BAD;
    return;
  }
  j->plain = chunk_plain(j->data, j->data_len); /* here: off the caller's thread */
}

/* ---- jobs (under mu) ---- */

/* A job for the next serial, or NULL when workers are far enough ahead. */
static struct job *free_job(struct gt_reader *r) {
  if ((r->taken - r->next_out >= r->ahead ||
       (r->ahead_bytes >= AHEAD_BYTES && r->taken > r->next_out)) &&
      r->started)
    return NULL;
  for (size_t i = 0; i < r->njobs; i++)
    if (!r->jobs[i]->in_use) {
      r->jobs[i]->in_use = 1;
      return r->jobs[i];
    }
  struct job **v = realloc(r->jobs, (r->njobs + 1) * sizeof *v);
  struct job *j = v ? calloc(1, sizeof *j) : NULL;
  if (v)
    r->jobs = v;
  if (!j) {
    r->oom = 1;
    pthread_cond_broadcast(&r->cv_ready); /* the caller stops waiting */
    return NULL;
  }
  j->in_use = 1;
  r->jobs[r->njobs++] = j;
  return j;
}

/* One chunk from the file into a job: read (in order), then decompress. */
static void produce(struct gt_reader *r, struct job *j, ZSTD_DCtx *dctx) {
  pthread_mutex_lock(&r->src_mu);
  take_chunk(r, j);
  char path[WARN_LEN];
  snprintf(path, sizeof path, "%s", r->path);
  pthread_mutex_unlock(&r->src_mu);
  pthread_mutex_lock(&r->mu);
  j->counted = j->status == JOB_OK ? j->data_len : 0;
  r->ahead_bytes += j->counted;
  pthread_mutex_unlock(&r->mu);
  decompress(j, dctx, path);
  pthread_mutex_lock(&r->mu);
  j->ready = 1;
  pthread_cond_broadcast(&r->cv_ready);
  pthread_mutex_unlock(&r->mu);
}

static void *work(void *arg) {
  struct worker *w = arg;
  struct gt_reader *r = w->r;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    struct job *j = NULL;
    while (!r->stop && !r->oom && !(j = free_job(r)))
      pthread_cond_wait(&r->cv_free, &r->mu);
    if (r->stop || r->oom) {
      if (j)
        j->in_use = 0;
      break;
    }
    r->taken++;
    pthread_mutex_unlock(&r->mu);
    produce(r, j, w->dctx);
    pthread_mutex_lock(&r->mu);
    if (j->status == JOB_END)
      break; /* the source is done: nothing more for anyone */
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

void gt_reader_set_threads(struct gt_reader *r, unsigned threads, unsigned ahead) {
  r->threads = threads < MAX_THREADS ? threads : MAX_THREADS;
  r->ahead = ahead ? ahead : 1;
}

static void start_workers(struct gt_reader *r) {
  pthread_mutex_lock(&r->mu);
  r->started = 1;
  pthread_mutex_unlock(&r->mu);
  unsigned n = 0;
  for (; n < r->threads; n++) {
    struct worker *w = &r->workers[n];
    w->r = r;
    if (!(w->dctx = ZSTD_createDCtx()))
      break;
    if (pthread_create(&w->thread, NULL, work, w) != 0) {
      ZSTD_freeDCtx(w->dctx);
      break;
    }
  }
  pthread_mutex_lock(&r->mu);
  r->started = n + 1; /* 1: none could start, the caller reads */
  pthread_mutex_unlock(&r->mu);
}

/* The job with the next serial: made by the workers, or here without them. */
static struct job *next_job(struct gt_reader *r) {
  pthread_mutex_lock(&r->mu);
  for (;;) {
    for (size_t i = 0; i < r->njobs; i++)
      if (r->jobs[i]->ready && r->jobs[i]->serial == r->next_out) {
        struct job *j = r->jobs[i];
        j->ready = 0;
        r->next_out++;
        r->ahead_bytes -= j->counted;
        pthread_cond_broadcast(&r->cv_free);
        pthread_mutex_unlock(&r->mu);
        return j;
      }
    struct job *j = r->oom ? NULL : free_job(r);
    if (!j && r->started > 1 && !r->oom) { /* workers are far enough ahead */
      pthread_cond_wait(&r->cv_ready, &r->mu);
      continue;
    }
    if (!j) { /* out of memory */
      pthread_mutex_unlock(&r->mu);
      return NULL;
    }
    r->taken++;
    pthread_mutex_unlock(&r->mu);
    produce(r, j, r->dctx);
    pthread_mutex_lock(&r->mu);
  }
}

static void release_job(struct gt_reader *r, struct job *j) {
  if (j->data_cap > KEEP_BYTES) { /* an oversized chunk's buffers are not kept */
    free(j->data), free(j->frame), free(j->dense);
    j->data = j->frame = j->dense = NULL;
    j->data_cap = j->frame_cap = j->dense_cap = 0;
  }
  pthread_mutex_lock(&r->mu);
  j->in_use = 0;
  pthread_cond_broadcast(&r->cv_free);
  pthread_mutex_unlock(&r->mu);
}

/* A set whose first files were deleted (its limits): said once, no damage. */
static void note_set_start(struct gt_reader *r) {
  uint64_t first = r->set.gl_pathc ? set_file_number(r->set.gl_pathv[0]) : 0;
  if (first <= 1)
    return;
  char what[200];
  snprintf(what, sizeof what,
           "the set starts at its file %llu: the %llu before it were deleted; what "
           "was live then, and the peaks, come carried at its start",
           (unsigned long long)first, (unsigned long long)(first - 1));
  gt_reader_note(r, what);
}

int gt_reader_next_chunk(struct gt_reader *r, struct gt_chunk *c) {
  if (!r->started && !r->done) {
    note_set_start(r);
    start_workers(r);
  }
  while (!r->done) {
    struct job *j = next_job(r);
    if (!j) {
      char msg[WARN_LEN];
      snprintf(msg, sizeof msg,
               "gputrace: warning: %s: out of memory: the rest of the trace is not read",
               r->first_path);
      say(r, msg);
      r->done = 1;
      break;
    }
    for (int i = 0; i < j->nwarn; i++)
      say(r, j->warn[i]);
    r->warnings += (uint64_t)j->unsaid;
    r->bad_chunks += (uint64_t)j->bad;
    r->truncated |= j->truncated;
    if (j->status == JOB_OK) {
      *c = (struct gt_chunk){.data = j->data,
                             .len = j->data_len,
                             .file = j->file,
                             .plain = j->plain,
                             .job = j};
      return 1;
    }
    if (j->status == JOB_END)
      r->done = 1;
    release_job(r, j);
  }
  return 0;
}

void gt_reader_release(struct gt_reader *r, struct gt_chunk *c) {
  if (c->job)
    release_job(r, c->job);
  c->job = NULL;
}

/* ---- records ---- */

static int record_valid(const struct gt_record *rec, size_t room) {
  return rec->nslots >= 1 && rec->nslots <= GT_MAX_SLOTS &&
         (size_t)rec->nslots * GT_SLOT_SIZE <= room && gt_kind_is_record(rec->kind) &&
         rec->api < GT_API_COUNT;
}

/* A valid record gt_chunk_record does more with than return it: a replayed
 * one (kept or passed over) or a note it says. The one rule for it and for
 * chunk_plain. */
static int reader_acts_on(const struct gt_record *rec) {
  return (rec->flags & GT_F_REPLAYED) ||
         (rec->kind == GT_KIND_NOTE && (rec->flags & (GT_F_INCOMPLETE | GT_F_UNTRACED)));
}

/* Nothing in the chunk for gt_chunk_record to do but step: every record
 * valid, none it acts on. */
static int chunk_plain(const unsigned char *data, size_t len) {
  for (size_t pos = 0; pos < len;) {
    const struct gt_record *rec = (const void *)(data + pos);
    if (!record_valid(rec, len - pos) || reader_acts_on(rec))
      return 0;
    pos += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
  return 1;
}

static void warn_incomplete(struct gt_reader *r, const struct gt_chunk *c,
                            const struct gt_record *rec) {
  char text[GT_TEXT_MAX + 1], msg[WARN_LEN + GT_TEXT_MAX];
  gt_record_text(rec, rec->u.note.text_len, text, sizeof text);
  snprintf(msg, sizeof msg, "gputrace: warning: %s: incomplete: %s",
           c->file < r->set.gl_pathc ? r->set.gl_pathv[c->file] : r->first_path, text);
  say(r, msg);
}

/* A warning, not damage: what the trace holds is whole. */
static void warn_untraced(struct gt_reader *r, const struct gt_chunk *c,
                          const struct gt_record *rec) {
  char text[GT_TEXT_MAX + 1];
  gt_record_text(rec, rec->u.note.text_len, text, sizeof text);
  if (!r->quiet)
    fprintf(stderr, "gputrace: warning: %s: %s\n",
            c->file < r->set.gl_pathc ? r->set.gl_pathv[c->file] : r->first_path, text);
}

/* Whether a file of the set before `file`, numbered `number`, was read. */
static int read_before(const struct gt_reader *r, uint64_t number, uint32_t file) {
  for (uint32_t i = file; number && r->file_read && i-- > 0;)
    if (r->file_read[i] && set_file_number(r->set.gl_pathv[i]) == number)
      return 1;
  return 0;
}

/* A replayed record: passed over in a later file of a set, unless it is
 * part of a block (a graph's making) no file read before held. */
static int keep_replayed(struct gt_reader *r, const struct gt_chunk *c,
                         const struct gt_record *rec) {
  if (rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_REPLAY_BLOCK)) {
    r->block_file = c->file + 1;
    r->block_keep = r->file_read && !read_before(r, rec->u.note.last_file, c->file);
    return 0; /* the marker itself is the reader's */
  }
  return c->file == 0 || (r->block_file == c->file + 1 && r->block_keep);
}

const struct gt_record *gt_chunk_record(struct gt_reader *r, const struct gt_chunk *c,
                                        size_t *pos) {
  if (r->file_read && c->file < r->set.gl_pathc)
    r->file_read[c->file] = 1;
  while (*pos < c->len) {
    const struct gt_record *rec = (const void *)(c->data + *pos);
    if (!record_valid(rec, c->len - *pos)) {
      char msg[WARN_LEN];
      r->bad_chunks++;
      snprintf(msg, sizeof msg,
               "gputrace: warning: %s: invalid record at chunk offset %zu: rest of the "
               "chunk skipped",
               c->file < r->set.gl_pathc ? r->set.gl_pathv[c->file] : r->first_path,
               *pos);
      say(r, msg);
      *pos = c->len;
      return NULL;
    }
    *pos += (size_t)rec->nslots * GT_SLOT_SIZE;
    if (!reader_acts_on(rec)) {
      r->block_file = 0; /* a block ends at the first record not replayed */
      return rec;
    }
    if (!(rec->flags & GT_F_REPLAYED))
      r->block_file = 0;
    else if (!keep_replayed(r, c, rec))
      continue; /* a later file of a set repeats what an earlier one had */
    if (rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_INCOMPLETE))
      warn_incomplete(r, c,
                      rec); /* every command shows that part of the run is missing */
    else if (rec->kind == GT_KIND_NOTE && (rec->flags & GT_F_UNTRACED))
      warn_untraced(r, c, rec); /* and which processes went untraced */
    return rec;
  }
  return NULL;
}

int gt_reader_next(struct gt_reader *r, const struct gt_record **rec) {
  for (;;) {
    if (r->have_cur) {
      if ((*rec = gt_chunk_record(r, &r->cur, &r->cur_pos)))
        return 1;
      gt_reader_release(r, &r->cur);
      r->have_cur = 0;
    }
    if (!gt_reader_next_chunk(r, &r->cur))
      return 0;
    r->have_cur = 1;
    r->cur_pos = 0;
  }
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

/* Records in one file from its chunk headers alone, up to the first
 * damaged one. */
static uint64_t records_in(const char *path) {
  FILE *fp = fopen(path, "rb");
  uint64_t off = sizeof(struct gt_file_header), total = 0;
  struct gt_chunk_header h;
  while (fp && fseeko(fp, (off_t)off, SEEK_SET) == 0 && fread(&h, sizeof h, 1, fp) == 1 &&
         gt_chunk_header_valid(&h)) {
    total += h.records;
    off += sizeof h + h.compressed_bytes;
  }
  if (fp)
    fclose(fp);
  return total;
}

/* One chunk at `off` of fp, inflated, its records to fn. */
static int peek_chunk(FILE *fp, uint64_t off, ZSTD_DCtx *dctx, unsigned char **bufs,
                      size_t *caps, void (*fn)(void *, const struct gt_record *),
                      void *ctx) {
  struct gt_chunk_header h;
  if (fseeko(fp, (off_t)off, SEEK_SET) != 0 || fread(&h, sizeof h, 1, fp) != 1 ||
      !gt_chunk_header_valid(&h))
    return -1;
  size_t raw = (size_t)h.slots * GT_SLOT_SIZE;
  if (grow(&bufs[0], &caps[0], h.compressed_bytes) || grow(&bufs[1], &caps[1], raw) ||
      fread(bufs[0], 1, h.compressed_bytes, fp) != h.compressed_bytes ||
      gt_chunk_inflate(dctx, &h, bufs[0], bufs[1], &bufs[2], &caps[2]))
    return -1;
  for (size_t pos = 0; pos + GT_SLOT_SIZE <= raw;) {
    const struct gt_record *rec = (const void *)(bufs[1] + pos);
    if (!record_valid(rec, raw - pos))
      return -1;
    fn(ctx, rec);
    pos += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
  return 0;
}

int gt_trace_peek_ends(const char *path, unsigned tail,
                       void (*fn)(void *ctx, const struct gt_record *rec), void *ctx) {
  struct gt_file_header fh;
  char err[600];
  struct stat st; /* a regular file only: a FIFO's bytes are the reader's */
  FILE *fp = stat(path, &st) == 0 && S_ISREG(st.st_mode)
                 ? open_checked(path, &fh, err, sizeof err)
                 : NULL;
  if (!fp)
    return -1;
  uint64_t *offs = NULL, off = sizeof fh;
  size_t n = 0, cap = 0;
  struct gt_chunk_header h;
  int rc = 0;
  while (rc == 0 && fseeko(fp, (off_t)off, SEEK_SET) == 0) {
    size_t got = fread(&h, 1, sizeof h, fp);
    if (got == 0)
      break;
    if (got < sizeof h || !gt_chunk_header_valid(&h)) {
      rc = -1; /* damage: the reader will resynchronize, a guess would not */
      break;
    }
    if (n == cap) {
      uint64_t *v = realloc(offs, (cap = cap ? 2 * cap : 64) * sizeof *v);
      if (!v) {
        rc = -1;
        break;
      }
      offs = v;
    }
    offs[n++] = off;
    off += sizeof h + h.compressed_bytes;
  }
  ZSTD_DCtx *dctx = rc == 0 && n ? ZSTD_createDCtx() : NULL;
  unsigned char *bufs[3] = {0};
  size_t caps[3] = {0};
  if (rc == 0 && n && !dctx)
    rc = -1;
  for (size_t i = 0; rc == 0 && i < n; i = i == 0 && n > tail + 1 ? n - tail : i + 1)
    rc = peek_chunk(fp, offs[i], dctx, bufs, caps, fn, ctx);
  free(bufs[0]), free(bufs[1]), free(bufs[2]);
  ZSTD_freeDCtx(dctx);
  free(offs);
  fclose(fp);
  return rc;
}

uint64_t gt_reader_records_hint(const struct gt_reader *r) {
  if (!r->set.gl_pathc)
    return records_in(r->first_path);
  uint64_t total = 0;
  for (size_t i = 0; i < r->set.gl_pathc; i++)
    total += records_in(r->set.gl_pathv[i]);
  return total;
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
  pthread_mutex_lock(&r->mu);
  r->stop = 1;
  pthread_cond_broadcast(&r->cv_free);
  pthread_mutex_unlock(&r->mu);
  for (unsigned i = 0; r->started > 1 && i < r->started - 1; i++) {
    pthread_join(r->workers[i].thread, NULL);
    ZSTD_freeDCtx(r->workers[i].dctx);
  }
  for (size_t i = 0; i < r->njobs; i++) {
    free(r->jobs[i]->frame);
    free(r->jobs[i]->data);
    free(r->jobs[i]->dense);
    free(r->jobs[i]);
  }
  free(r->jobs);
  if (r->set.gl_pathc)
    globfree(&r->set);
  free(r->file_read);
  fclose(r->fp);
  ZSTD_freeDCtx(r->dctx);
  free(r->path);
  free(r->first_path);
  pthread_mutex_destroy(&r->src_mu);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv_ready);
  pthread_cond_destroy(&r->cv_free);
  free(r);
}
