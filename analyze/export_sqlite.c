/* export_sqlite.c — the SQLite writer of `gputrace export` (export.h).
 *
 * Contract:
 *  - Opens the file cmd_export.c created and checked (gt_out_open: new or
 *    forced, 0600, no symbolic link), by path, without creating or
 *    following a link (SQLITE_OPEN_NOFOLLOW), and refuses it unless it is
 *    the very file of `fd` (same device and inode): a name swapped between
 *    the check and the open is not written.
 *  - The file is new and ours alone, so its rows are written without a
 *    journal and without syncs (journal_mode=OFF, synchronous=OFF,
 *    exclusive lock): an export cut short leaves a file to delete, never a
 *    trace.
 *  - Tables from ex_tables (a column "id" is the INTEGER PRIMARY KEY);
 *    prepared INSERTs per table (one row, and EX_MULTI rows), values
 *    bound, never spliced into SQL text, and only those that differ from
 *    what the parameter holds from the statement's last run (struct
 *    bound); rows committed in transactions of about EX_SQLITE_BATCH; the
 *    indexes each table names are made after the last row (faster than
 *    keeping them up to date row by row), reading the table through a
 *    memory map, their sorts' temporary files in the output's directory
 *    (SQLITE_TMPDIR, when set, instead); the view `device`
 *    (ex_device_view) made with the tables.
 *  - An index that cannot be made (no room for its sort or its pages) is
 *    rolled back (a journal in memory for the index builds) and left out:
 *    the tables stay whole, the other indexes are made, and the writer's
 *    warning names what is missing and the SQL that makes it.
 *  - SQLite runs on a writer thread of its own: the caller's thread
 *    (ex_run: reading the trace, making rows) encodes each row into the
 *    current batch (a byte buffer per table) and hands a batch of
 *    EX_BATCH_BYTES over through a bounded queue of EX_BUFS buffers (its
 *    memory: EX_BUFS batches). Each table's rows reach SQLite in the order
 *    they were given, so ids are what export.h says. The connection is
 *    used by one thread at a time: set up on the caller's, then the
 *    writer's until it is joined, then the caller's for the indexes.
 *  - A failed INSERT stops the writer; the next row or finish reports it.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "util.h"

#define EX_SQLITE_BATCH 1000000u
#define EX_BUFS 4
#define EX_BATCH_BYTES (1u << 20) /* a batch is handed over past this */
#define EX_MULTI 32               /* rows an INSERT statement takes at once */

enum { TAG_NULL, TAG_INT, TAG_REAL, TAG_TEXT, TAG_NONE };

struct buf { /* rows: per column a tag, then 8 bytes or u32 length, text, NUL */
  unsigned char *p;
  size_t len, cap;
  unsigned rows;
};

struct batch { /* rows by table: each table's in the order given */
  struct buf t[EX_NTABLES];
  size_t len; /* bytes in all */
};

/* What one parameter of a prepared INSERT holds now. SQLite keeps a
 * statement's bindings across sqlite3_reset, so a value equal to the one
 * bound is not bound again (about half of a launch row's values repeat
 * in the same place 32 rows later: pid, api, grid, block, flags); text is
 * bound from the slot's own copy (SQLITE_STATIC), never from a batch
 * buffer that is refilled while SQLite still points into it. */
struct bound {
  unsigned char tag; /* TAG_*; TAG_NONE until first bound */
  uint32_t len, cap; /* text: bytes, and room at s */
  int64_t i;         /* an integer's or a real's 8 bytes */
  char *s;
};

/* The parameters of one statement, in order. */
struct params {
  struct bound *b;
  unsigned n;
};

struct sq {
  sqlite3 *db;
  sqlite3_stmt *ins[EX_NTABLES], *insn[EX_NTABLES]; /* 1 row, EX_MULTI rows */
  struct params ins_bound[EX_NTABLES], insn_bound[EX_NTABLES];
  unsigned char has_id[EX_NTABLES]; /* its first column is "id" */
  pthread_t thread;
  int started, sync_made;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct batch bufs[EX_BUFS];
  unsigned full[EX_BUFS], nfull, fhead; /* queue of full buffers */
  unsigned freel[EX_BUFS], nfree;       /* empty buffers */
  unsigned cur;                         /* the one being filled (caller's) */
  int done, failed;                     /* under mu */
  uint64_t in_batch;                    /* the writer's */
  char werr[512];                       /* the writer's message, then failed */
  char err[1024];                       /* what the caller reports */
  struct ex_writer *w;                  /* the writer this is (its warning) */
  unsigned nmissing;                    /* indexes not made */
  char why[256], missing[2048], warn[8192];
  char path[4096]; /* the output, for the warning's command */
};

static int fail(struct sq *l, const char *what) {
  snprintf(l->werr, sizeof l->werr, "%.200s: %.300s", what,
           l->db ? sqlite3_errmsg(l->db) : "?");
  return -1;
}

static int exec(struct sq *l, const char *sql) {
  return sqlite3_exec(l->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(l, sql);
}

/* n parameters, none bound yet. */
static void params_make(struct params *ps, unsigned n) {
  ps->b = gt_xcalloc(n, sizeof *ps->b);
  ps->n = n;
  for (unsigned k = 0; k < n; k++)
    ps->b[k].tag = TAG_NONE;
}

static void params_free(struct params *ps) {
  for (unsigned k = 0; ps->b && k < ps->n; k++)
    free(ps->b[k].s);
  free(ps->b);
  *ps = (struct params){0};
}

/* "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT, ...)" and its INSERTs of one row and of
 * EX_MULTI rows ("VALUES (?,?),(?,?)...": one statement run for 32 rows costs SQLite a
 * quarter less a row). */
static int make_table(struct sq *l, unsigned t) {
  static const char *const types[] = {"INTEGER", "REAL", "TEXT"};
  const struct ex_table *tb = &ex_tables[t];
  char create[2048], *insert = gt_xcalloc(1, 1024 + EX_MULTI * (4 + 2 * EX_MAX_COLUMNS));
  int n = snprintf(create, sizeof create, "CREATE TABLE %s (", tb->name);
  int m = sprintf(insert, "INSERT INTO %s (", tb->name), one = 0;
  l->has_id[t] = tb->ncols && !strcmp(tb->cols[0].name, "id");
  for (unsigned c = 0; c < tb->ncols; c++) {
    const struct ex_column *col = &tb->cols[c];
    n += snprintf(create + n, sizeof create - (size_t)n, "%s%s %s%s", c ? ", " : "",
                  col->name, types[col->type],
                  c == 0 && l->has_id[t] ? " PRIMARY KEY" : "");
    if (c >= l->has_id[t])
      m += sprintf(insert + m, "%s%s", c > l->has_id[t] ? "," : "", col->name);
  }
  snprintf(create + n, sizeof create - (size_t)n, ")");
  m += sprintf(insert + m, ") VALUES ");
  for (unsigned r = 0; r < EX_MULTI; r++) {
    m += sprintf(insert + m, "%s(", r ? "," : "");
    for (unsigned c = l->has_id[t]; c < tb->ncols; c++)
      m += sprintf(insert + m, "%s?", c > l->has_id[t] ? "," : "");
    m += sprintf(insert + m, ")");
    if (r == 0)
      one = m;
  }
  int rc = exec(l, create);
  if (rc == 0 && (sqlite3_prepare_v3(l->db, insert, one, SQLITE_PREPARE_PERSISTENT,
                                     &l->ins[t], NULL) != SQLITE_OK ||
                  sqlite3_prepare_v3(l->db, insert, m, SQLITE_PREPARE_PERSISTENT,
                                     &l->insn[t], NULL) != SQLITE_OK))
    rc = fail(l, tb->name);
  free(insert);
  unsigned nvalues = tb->ncols - l->has_id[t];
  params_make(&l->ins_bound[t], nvalues);
  params_make(&l->insn_bound[t], EX_MULTI * nvalues);
  return rc;
}

/* Room for n more bytes at b->p + b->len. */
static unsigned char *room(struct buf *b, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = b->cap ? b->cap * 2 : 65536;
    while (b->cap < b->len + n)
      b->cap *= 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p)
      gt_oom();
  }
  return b->p + b->len;
}

/* An id column is left out (the INSERT names the other columns): SQLite
 * takes the next rowid without looking it up, and ids come 1, 2, 3... in
 * row order (export.h): the same value. */
static void encode(struct batch *bt, unsigned t, int has_id, const struct ex_value *v) {
  const struct ex_table *tb = &ex_tables[t];
  struct buf *b = &bt->t[t];
  size_t need = 9 * (size_t)tb->ncols, len[EX_MAX_COLUMNS];
  for (unsigned c = (unsigned)has_id; c < tb->ncols; c++)
    if (tb->cols[c].type == EX_TEXT && !v[c].null && v[c].s)
      need += (len[c] = strlen(v[c].s)) + 5;
  unsigned char *p = room(b, need), *start = p;
  for (unsigned c = (unsigned)has_id; c < tb->ncols; c++) {
    if (v[c].null || (tb->cols[c].type == EX_TEXT && !v[c].s)) {
      *p++ = TAG_NULL;
    } else if (tb->cols[c].type == EX_INT) {
      *p++ = TAG_INT;
      memcpy(p, &v[c].i, 8);
      p += 8;
    } else if (tb->cols[c].type == EX_REAL) {
      *p++ = TAG_REAL;
      memcpy(p, &v[c].d, 8);
      p += 8;
    } else {
      uint32_t n32 = (uint32_t)len[c];
      *p++ = TAG_TEXT;
      memcpy(p, &n32, 4);
      memcpy(p + 4, v[c].s, len[c] + 1);
      p += 4 + len[c] + 1;
    }
  }
  b->len += (size_t)(p - start);
  b->rows++;
  bt->len += (size_t)(p - start);
}

/* Bind value i of a statement to the slot's copy of a text, unless it
 * holds that text already. */
static int bind_text(sqlite3_stmt *st, int i, struct bound *b, const char *s,
                     uint32_t n) {
  if (b->tag == TAG_TEXT && b->len == n && memcmp(b->s, s, n) == 0)
    return SQLITE_OK;
  if (n + 1 > b->cap) {
    b->cap = n + 1 > 64 ? n + 1 : 64;
    free(b->s);
    b->s = malloc(b->cap);
    if (!b->s)
      gt_oom();
  }
  memcpy(b->s, s, n + 1);
  b->tag = TAG_TEXT;
  b->len = n;
  return sqlite3_bind_text(st, i, b->s, (int)n, SQLITE_STATIC);
}

/* Bind a row's values from p to parameters first+1... (bound: what they
 * hold, kept up to date): past the row. */
static const unsigned char *bind_row(sqlite3_stmt *st, unsigned ncols, int first,
                                     struct bound *bound, const unsigned char *p,
                                     int *rc) {
  for (unsigned c = 0; c < ncols && *rc == SQLITE_OK; c++) {
    int i = first + (int)c + 1;
    struct bound *b = &bound[first + (int)c];
    unsigned char tag = *p++;
    if (tag == TAG_TEXT) {
      uint32_t n;
      memcpy(&n, p, 4);
      *rc = bind_text(st, i, b, (const char *)p + 4, n);
      p += 4 + (size_t)n + 1;
      continue;
    }
    int64_t v = 0;
    if (tag != TAG_NULL) {
      memcpy(&v, p, 8);
      p += 8;
    }
    if (b->tag == tag && b->i == v)
      continue; /* bound already */
    b->tag = tag;
    b->i = v;
    if (tag == TAG_NULL) {
      *rc = sqlite3_bind_null(st, i);
    } else if (tag == TAG_INT) {
      *rc = sqlite3_bind_int64(st, i, v);
    } else {
      double d;
      memcpy(&d, &v, 8);
      *rc = sqlite3_bind_double(st, i, d);
    }
  }
  return p;
}

/* Insert the rows of one batch (the writer), EX_MULTI at a time. */
static int write_batch(struct sq *l, const struct batch *b) {
  for (unsigned t = 0; t < EX_NTABLES; t++) {
    const struct buf *tb = &b->t[t];
    const unsigned char *p = tb->p;
    unsigned ncols = ex_tables[t].ncols - l->has_id[t]; /* values bound */
    for (unsigned left = tb->rows; left;) {
      unsigned n = left >= EX_MULTI ? EX_MULTI : 1;
      sqlite3_stmt *st = n > 1 ? l->insn[t] : l->ins[t];
      struct bound *bound = n > 1 ? l->insn_bound[t].b : l->ins_bound[t].b;
      int rc = SQLITE_OK;
      for (unsigned r = 0; r < n; r++)
        p = bind_row(st, ncols, (int)(r * ncols), bound, p, &rc);
      if (rc != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_reset(st);
        return fail(l, ex_tables[t].name);
      }
      sqlite3_reset(st);
      left -= n;
      l->in_batch += n;
    }
  }
  if (l->in_batch >= EX_SQLITE_BATCH) {
    l->in_batch = 0;
    if (exec(l, "COMMIT; BEGIN") != 0)
      return -1;
  }
  return 0;
}

static void *writer_main(void *arg) {
  struct sq *l = arg;
  pthread_mutex_lock(&l->mu);
  for (;;) {
    while (!l->nfull && !l->done)
      pthread_cond_wait(&l->cv, &l->mu);
    if (!l->nfull)
      break; /* done, and nothing left */
    unsigned i = l->full[l->fhead];
    l->fhead = (l->fhead + 1) % EX_BUFS;
    l->nfull--;
    int failed = l->failed;
    pthread_mutex_unlock(&l->mu);
    int rc = failed ? -1 : write_batch(l, &l->bufs[i]);
    for (unsigned t = 0; t < EX_NTABLES; t++)
      l->bufs[i].t[t].len = l->bufs[i].t[t].rows = 0;
    l->bufs[i].len = 0;
    pthread_mutex_lock(&l->mu);
    if (rc != 0)
      l->failed = 1;
    l->freel[l->nfree++] = i;
    pthread_cond_broadcast(&l->cv);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* The writer's message, once it failed (read after its mutex). */
static int writer_failed(struct sq *l) {
  snprintf(l->err, sizeof l->err, "%s", l->werr[0] ? l->werr : "writing failed");
  return -1;
}

/* Hand the current batch over and take an empty one. -1: the writer
 * failed (the batch stays queued: it is dropped, never reused). */
static int hand_over(struct sq *l) {
  pthread_mutex_lock(&l->mu);
  l->full[(l->fhead + l->nfull) % EX_BUFS] = l->cur;
  l->nfull++;
  pthread_cond_broadcast(&l->cv);
  while (!l->nfree && !l->failed)
    pthread_cond_wait(&l->cv, &l->mu);
  int failed = l->failed;
  if (!failed)
    l->cur = l->freel[--l->nfree];
  pthread_mutex_unlock(&l->mu);
  return failed ? writer_failed(l) : 0;
}

static int sq_row(void *ctx, unsigned t, const struct ex_value *v) {
  struct sq *l = ctx;
  struct batch *b = &l->bufs[l->cur];
  encode(b, t, l->has_id[t], v);
  return b->len >= EX_BATCH_BYTES ? hand_over(l) : 0;
}

/* The last batch written and the writer joined: 0, or -1 when it failed. */
static int writer_stop(struct sq *l) {
  if (!l->started)
    return 0;
  pthread_mutex_lock(&l->mu);
  if (!l->failed && l->bufs[l->cur].len) { /* failed: cur may be queued */
    l->full[(l->fhead + l->nfull) % EX_BUFS] = l->cur;
    l->nfull++;
  }
  l->done = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->thread, NULL);
  l->started = 0;
  return l->failed ? writer_failed(l) : 0;
}

static void finalize_all(struct sq *l) {
  for (unsigned t = 0; t < EX_NTABLES; t++) {
    sqlite3_finalize(l->ins[t]);
    sqlite3_finalize(l->insn[t]);
    l->ins[t] = l->insn[t] = NULL;
    params_free(&l->ins_bound[t]); /* the texts they pointed at */
    params_free(&l->insn_bound[t]);
  }
}

/* CREATE INDEX t_a_b ON t (a, b) for each "a,b" of the table's list. One
 * that fails is left out (the rest are still made): its statement is added
 * to l->missing, the first reason to l->why. */
static void make_indexes(struct sq *l, const struct ex_table *tb) {
  const char *p = tb->indexes;
  while (*p) {
    size_t len = strcspn(p, ";");
    char cols[128], name[160], sql[512];
    snprintf(cols, sizeof cols, "%.*s", (int)len, p);
    snprintf(name, sizeof name, "%s_%s", tb->name, cols);
    for (char *c = name; *c; c++)
      *c = *c == ',' ? '_' : *c;
    snprintf(sql, sizeof sql, "CREATE INDEX %s ON %s (%s)", name, tb->name, cols);
    if (sqlite3_exec(l->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
      if (!l->nmissing++)
        snprintf(l->why, sizeof l->why, "%s", sqlite3_errmsg(l->db));
      size_t n = strlen(l->missing);
      snprintf(l->missing + n, sizeof l->missing - n, "%s; ", sql);
    }
    p += len + (p[len] == ';');
  }
}

/* What sq_finish left out, for the caller's warning (w->warning). */
static void say_missing(struct sq *l) {
  const char *tmp = getenv("SQLITE_TMPDIR");
  snprintf(l->warn, sizeof l->warn,
           "%u index%s not made (%s; the sorts' temporary files go to %s): the tables "
           "are complete, queries that use %s are slower; make %s later with sqlite3 "
           "%s \"%.*s\"",
           l->nmissing, l->nmissing == 1 ? " was" : "es were", l->why, tmp ? tmp : "?",
           l->nmissing == 1 ? "it" : "them", l->nmissing == 1 ? "it" : "them", l->path,
           (int)(strlen(l->missing) - 1), l->missing);
}

static int sq_finish(void *ctx) {
  struct sq *l = ctx;
  if (writer_stop(l) != 0)
    return -1;
  if (exec(l, "COMMIT") != 0)
    return writer_failed(l);
  /* 64 MiB for the index sorts; the tables read through a map, not
   * copied by read(): a tenth off the launches index. A journal again (in
   * memory: it holds only the pages an index build changes, not the new
   * ones it adds), so that an index that fails (no room) is rolled back
   * and leaves the tables as they were. */
  if (exec(l, "PRAGMA cache_size=-65536; PRAGMA mmap_size=1099511627776;"
              " PRAGMA journal_mode=MEMORY") != 0)
    return writer_failed(l);
  for (unsigned t = 0; t < EX_NTABLES; t++)
    make_indexes(l, &ex_tables[t]);
  if (l->nmissing) {
    say_missing(l);
    l->w->warning = l->warn;
  }
  finalize_all(l);
  int rc = sqlite3_close(l->db);
  l->db = NULL;
  if (rc != SQLITE_OK) {
    snprintf(l->err, sizeof l->err, "closing: %s", sqlite3_errstr(rc));
    return -1;
  }
  return 0;
}

/* Is the database sqlite opened the file we created? */
static int same_file(const char *path, int fd) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && S_ISREG(b.st_mode) &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A new file of ours alone: no journal, no syncs, no other connection.
 * 2 MiB of page cache while rows are appended (the pages written stay
 * in the CPU's cache: docs/PERFORMANCE.md, Figures moved out of code
 * comments), 64 MiB for the index builds (sq_finish: their sorts spill to
 * temporary files past it). */
static int setup(struct sq *l) {
  if (exec(l, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
              " PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-2048") != 0)
    return -1;
  for (unsigned t = 0; t < EX_NTABLES; t++)
    if (make_table(l, t) != 0)
      return -1;
  return exec(l, ex_device_view) != 0 ? -1 : exec(l, "BEGIN");
}

/* The index sorts spill to temporary files past their 64 MiB (about 30 MB
 * a million launches): in the output's directory, which has room for the
 * output, rather than in TMPDIR or /var/tmp, which may be small; unless
 * SQLITE_TMPDIR says where. Before SQLite starts: it reads it then. */
static void temp_beside(const char *path) {
  const char *tmp = getenv("SQLITE_TMPDIR");
  if (tmp && *tmp)
    return;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    slash[slash == dir] = '\0'; /* "/x": "/" */
  setenv("SQLITE_TMPDIR", dir, 1);
}

int ex_sqlite_open(struct ex_writer *w, const char *path, int fd, char *err,
                   size_t errlen) {
  /* No connection mutex (one thread at a time uses it), no allocation
   * statistics (before the library starts; refused after). */
  sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  struct sq *l = gt_xcalloc(1, sizeof *l);
  *w = (struct ex_writer){.ctx = l, .row = sq_row, .finish = sq_finish, .err = l->err};
  l->w = w;
  snprintf(l->path, sizeof l->path, "%s", path);
  temp_beside(path);
  /* extended result codes set after the open: SQLITE_OPEN_EXRESCODE is
   * 3.37's, and the bundle is built against Debian 11's 3.34 */
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &l->db, flags, NULL) != SQLITE_OK) {
    snprintf(err, errlen, "%s: %s", path, l->db ? sqlite3_errmsg(l->db) : "cannot open");
    return -1;
  }
  sqlite3_extended_result_codes(l->db, 1);
  if (!same_file(path, fd)) {
    snprintf(err, errlen, "%s: changed while it was being opened (not written)", path);
    return -1;
  }
  if (setup(l) != 0) {
    snprintf(err, errlen, "%s: %s", path, l->werr);
    return -1;
  }
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->sync_made = 1;
  for (unsigned i = 1; i < EX_BUFS; i++)
    l->freel[l->nfree++] = i;
  if (pthread_create(&l->thread, NULL, writer_main, l) != 0) {
    snprintf(err, errlen, "%s: cannot start the writer thread", path);
    return -1;
  }
  l->started = 1;
  return 0;
}

void ex_sqlite_close(struct ex_writer *w) {
  struct sq *l = w->ctx;
  if (!l)
    return;
  writer_stop(l);
  finalize_all(l);
  sqlite3_close(l->db);
  for (unsigned k = 0; k < EX_BUFS; k++)
    for (unsigned t = 0; t < EX_NTABLES; t++)
      free(l->bufs[k].t[t].p);
  if (l->sync_made) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
  }
  free(l);
  w->ctx = NULL;
}
