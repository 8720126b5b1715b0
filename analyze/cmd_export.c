/* cmd_export.c — `gputrace export [--format sqlite|csv] [-o OUT] [--force]
 *                  [--pid P] [--from T] [--to T] [--no-wait] FILE`
 *
 * The trace as tables (docs/export.md): a SQLite database, or a directory
 * of CSV files, one per table, from the same table definitions
 * (export_tables.c). OUT defaults to FILE with .gtrace replaced by .sqlite
 * (or .csv, a directory). The output follows gputrace/outfile.h's rules
 * (0600, no symbolic link, an existing one only with --force, never the
 * trace itself); an export that fails, or whose --pid/--from/--to matches
 * nothing, removes what it wrote: the SQLite file, or (CSV) its .part
 * files, the directory's old tables and other files untouched, the tables
 * renamed into place only at the end (export_csv.c, ex_csv_commit), and
 * the directory if it made it. A closing line on stderr says what was
 * written. Exit: 0; 2 bad usage, an unreadable trace, a filter matching
 * nothing, or a failed write; 3 a damaged trace (what could be read is
 * exported). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"
#include "gputrace/outfile.h"
#include "notices.h"
#include "progress.h"
#include "shared_options.h"
#include "util.h"

enum { FMT_SQLITE, FMT_CSV };

struct export_opts {
  const char *in, *out;
  char *out_owned;
  int format, force, no_wait;
  struct ex_filter f;
};

static int format_option(const struct gt_option *o, const char *arg, char *want,
                         size_t len) {
  if (!strcmp(arg, "sqlite") || !strcmp(arg, "csv")) {
    *(int *)o->value = arg[0] == 'c' ? FMT_CSV : FMT_SQLITE;
    return 0;
  }
  snprintf(want, len, "sqlite or csv");
  return -1;
}

/* run.gtrace -> run.sqlite (run.csv), anything else -> NAME.sqlite. */
static char *default_out(const char *in, int format) {
  const char *ext = format == FMT_CSV ? ".csv" : ".sqlite";
  size_t n = strlen(in), keep = n;
  if (n > 7 && !strcmp(in + n - 7, ".gtrace"))
    keep = n - 7;
  char *out = gt_xcalloc(1, keep + strlen(ext) + 1);
  memcpy(out, in, keep);
  strcpy(out + keep, ext);
  return out;
}

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse(int argc, char **argv, struct export_opts *o) {
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_CALLBACK(0, "format", &o->format, format_option, "FMT",
                      "sqlite (default) or csv (a directory of TABLE.csv)"),
      GT_OPT_OUTPUT(&o->out, "OUT", "where to write (default: FILE's .sqlite or .csv)"),
      GT_OPT_FORCE(&o->force),
      GT_OPT_PID(&o->f.pid, &o->f.has_pid),
      GT_OPT_FROM(&o->f.from_ns),
      GT_OPT_TO(&o->f.to_ns),
      GT_OPT_NO_WAIT(&o->no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd = GT_TRACE_COMMAND(
      "export", options, "the trace as SQL tables (SQLite) or CSV files, for queries");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  o->in = argv[0];
  if (!gt_notice_window("export", o->f.from_ns, o->f.to_ns))
    return 2;
  if (!o->out)
    o->out = o->out_owned = default_out(o->in, o->format);
  return GT_OPTIONS_RUN;
}

static int same_inode(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* What a failed export may remove: nothing (the output was refused), what
 * it wrote in an existing output of ours, or what it created. */
enum { OUT_NONE, OUT_OURS, OUT_CREATED };

/* The CSV directory: made 0700, or, with --force, an existing directory of
 * ours (not a symbolic link). */
static int make_dir(const char *dir, int force, int *state, char *err, size_t len) {
  struct stat st;
  if (mkdir(dir, 0700) == 0) {
    *state = OUT_CREATED;
    return 0;
  }
  if (errno != EEXIST) {
    snprintf(err, len, "%s: %s", dir, strerror(errno));
    return -1;
  }
  if (!force) {
    snprintf(err, len,
             "%s: it exists (not overwritten; --force overwrites a directory of yours)",
             dir);
    return -1;
  }
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    snprintf(err, len, "%s: not a directory of yours (not overwritten)", dir);
    return -1;
  }
  *state = OUT_OURS;
  return 0;
}

static int open_output(const struct export_opts *o, struct ex_writer *w, int *fd,
                       int *state, char *err, size_t len) {
  if (o->format == FMT_CSV)
    return make_dir(o->out, o->force, state, err, len) != 0
               ? -1
               : ex_csv_open(w, o->out, o->force, err, len);
  *fd = gt_out_open(o->out, o->force ? GT_OUT_FORCE : GT_OUT_NEW, err, len);
  if (*fd < 0)
    return -1;
  *state = OUT_CREATED;
  return ex_sqlite_open(w, o->out, *fd, err, len);
}

static void close_writer(const struct export_opts *o, struct ex_writer *w) {
  if (o->format == FMT_CSV)
    ex_csv_close(w);
  else
    ex_sqlite_close(w);
}

/* Bytes written: the database, or the table files. */
static uint64_t output_bytes(const struct export_opts *o, int fd) {
  struct stat st;
  if (o->format == FMT_SQLITE)
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
  uint64_t sum = 0;
  char path[4096];
  for (unsigned t = 0; t < EX_NTABLES; t++) {
    snprintf(path, sizeof path, "%s/%s.csv", o->out, ex_tables[t].name);
    if (lstat(path, &st) == 0)
      sum += (uint64_t)st.st_size;
  }
  return sum;
}

/* After a failure, once the writer is closed (CSV: its .part files gone):
 * what this export wrote goes (only if still ours), the CSV directory if it
 * made it. */
static void remove_output(const struct export_opts *o, int fd, int state) {
  struct stat a, b;
  if (state == OUT_NONE)
    return;
  if (o->format == FMT_SQLITE) {
    if (fd >= 0 && fstat(fd, &a) == 0 && lstat(o->out, &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
      unlink(o->out);
    return;
  }
  if (state == OUT_CREATED)
    rmdir(o->out); /* empty again, or kept: it holds what someone else put there */
}

static void closing_line(const struct export_opts *o, int fd, uint64_t rows) {
  double mb = (double)output_bytes(o, fd) / 1e6;
  if (o->format == FMT_SQLITE)
    fprintf(stderr, "gputrace export: wrote %s (%.1f MB, %" PRIu64 " rows): sqlite3 %s\n",
            o->out, mb, rows, o->out);
  else
    fprintf(stderr,
            "gputrace export: wrote %s/ (%.1f MB, %" PRIu64 " rows in %d files)\n",
            o->out, mb, rows, EX_NTABLES);
}

/* The trace read into the writer; the status to exit with. */
static int run_export(const struct export_opts *o, struct ex_writer *w, int fd) {
  char err[1024];
  struct gt_session_opts so = {.path = o->in, .threads = -1, .no_wait = o->no_wait};
  struct gt_progress pg;
  struct ex_result res;
  gt_progress_watch(&pg, "gputrace export", 0, &so);
  int rc = ex_run(&so, &o->f, w, &res, err, sizeof err);
  gt_progress_done(&pg);
  if (rc != 0) {
    fprintf(stderr, "gputrace export: %s\n", err);
    return 2;
  }
  gt_notice_no_cuda("gputrace export", o->in, res.session);
  const struct gt_filter f = {o->f.has_pid, o->f.pid, o->f.from_ns, o->f.to_ns};
  int st = gt_notice_filter("gputrace export", o->in, res.session, &f);
  if (!st && res.failed) {
    fprintf(stderr, "gputrace export: %s: %s\n", o->out, w->err);
    st = 2;
  }
  int damaged = gt_session_damaged(res.session);
  gt_session_close(res.session);
  if (st)
    return st;
  if (o->format == FMT_CSV && ex_csv_commit(w, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace export: %s\n", err);
    return 2;
  }
  closing_line(o, fd, res.rows);
  if (w->warning) /* the rows are all there: kept, but said, and status 1 */
    fprintf(stderr, "gputrace export: warning: %s\n", w->warning);
  return damaged ? 3 : w->warning ? 1 : 0;
}

int cmd_export(int argc, char **argv) {
  struct export_opts o = {.f.to_ns = UINT64_MAX};
  int rc = parse(argc, argv, &o);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  if (same_inode(o.in, o.out)) {
    fprintf(stderr, "gputrace export: %s is the trace itself (not overwritten)\n", o.out);
    free(o.out_owned);
    return 2;
  }
  char err[1024];
  struct ex_writer w = {0};
  int fd = -1, state = OUT_NONE;
  if (open_output(&o, &w, &fd, &state, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace export: %s\n", err);
    rc = 2;
  } else {
    rc = run_export(&o, &w, fd);
  }
  close_writer(&o, &w);
  if (rc == 2)
    remove_output(&o, fd, state);
  if (fd >= 0)
    close(fd);
  free(o.out_owned);
  return rc;
}
