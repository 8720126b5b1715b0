/* export_csv.c — the CSV writer of `gputrace export --format csv`
 * (export.h): one file per table, TABLE.csv, in the directory cmd_export.c
 * made (or, with --force, found and checked).
 *
 * Contract:
 *  - RFC 4180: a header row of the table's column names, then one record
 *    per row, fields separated by ',', records ended by CRLF. A field that
 *    holds ',', '"', CR or LF is quoted, its quotes doubled; other fields
 *    are written as they are. NULL is the empty field; integers in
 *    decimal, reals as %.17g (exact when read back).
 *  - Nothing the directory holds changes unless the export succeeds:
 *    every TABLE.csv name is first checked by gt_out_check (an existing
 *    one only with --force, and only a regular file of ours with one link,
 *    outfile.h), then each table is written to TABLE.csv.N.part beside it
 *    (gt_out_pick: 0600, a fresh name), and ex_csv_commit renames them
 *    into place once the export is done. ex_csv_close removes the .part
 *    files not renamed; a commit that fails part-way (the directory
 *    changed under it) removes the tables it renamed too, so the directory
 *    never holds tables of two exports. Other files are never touched.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "gputrace/outfile.h"
#include "util.h"

#define CSV_PATH 4096

struct csv {
  FILE *f[EX_NTABLES];
  char part[EX_NTABLES][CSV_PATH];  /* written here; "" when not (or no more) */
  char final[EX_NTABLES][CSV_PATH]; /* TABLE.csv: renamed to at the commit */
  int force;
  char err[640];
};

static int fail(struct csv *c, unsigned t, const char *what) {
  snprintf(c->err, sizeof c->err, "%s.csv: %s: %s", ex_tables[t].name, what,
           strerror(errno ? errno : EIO));
  return -1;
}

static void put_text(FILE *f, const char *s) {
  if (!s[strcspn(s, ",\"\r\n")]) {
    fputs(s, f);
    return;
  }
  putc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      putc('"', f);
    putc(*s, f);
  }
  putc('"', f);
}

/* Decimal, faster than fprintf (most fields are integers). */
static void put_int(FILE *f, int64_t v) {
  char b[24], *p = b + sizeof b;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do
    *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0)
    *--p = '-';
  fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

static int csv_row(void *ctx, unsigned t, const struct ex_value *v) {
  struct csv *c = ctx;
  FILE *f = c->f[t];
  const struct ex_table *tb = &ex_tables[t];
  for (unsigned i = 0; i < tb->ncols; i++) {
    if (i)
      putc(',', f);
    if (v[i].null)
      continue;
    if (tb->cols[i].type == EX_INT)
      put_int(f, v[i].i);
    else if (tb->cols[i].type == EX_REAL)
      fprintf(f, "%.17g", v[i].d);
    else if (v[i].s)
      put_text(f, v[i].s);
  }
  fputs("\r\n", f);
  return ferror(f) ? fail(c, t, "writing") : 0;
}

static int csv_finish(void *ctx) {
  struct csv *c = ctx;
  int rc = 0;
  for (unsigned t = 0; t < EX_NTABLES; t++) {
    if (fclose(c->f[t]) != 0 && rc == 0)
      rc = fail(c, t, "writing");
    c->f[t] = NULL;
  }
  return rc;
}

/* TABLE.csv.N.part, its header written. */
static int open_table(struct csv *c, unsigned t, char *err, size_t errlen) {
  char prefix[CSV_PATH + 2]; /* final (shorter than CSV_PATH - 16) and "." */
  snprintf(prefix, sizeof prefix, "%s.", c->final[t]);
  int fd = gt_out_pick(prefix, 1, ".part", c->part[t], sizeof c->part[t], err, errlen);
  if (fd < 0) {
    c->part[t][0] = '\0';
    return -1;
  }
  if (!(c->f[t] = fdopen(fd, "w"))) {
    snprintf(err, errlen, "%s: %s", c->part[t], strerror(errno));
    close(fd);
    return -1;
  }
  setvbuf(c->f[t], NULL, _IOFBF, 1 << 20);
  for (unsigned i = 0; i < ex_tables[t].ncols; i++)
    fprintf(c->f[t], "%s%s", i ? "," : "", ex_tables[t].cols[i].name);
  fputs("\r\n", c->f[t]);
  return 0;
}

int ex_csv_open(struct ex_writer *w, const char *dir, int force, char *err,
                size_t errlen) {
  struct csv *c = gt_xcalloc(1, sizeof *c);
  *w = (struct ex_writer){.ctx = c, .row = csv_row, .finish = csv_finish, .err = c->err};
  c->force = force;
  for (unsigned t = 0; t < EX_NTABLES; t++) { /* every name, before any file */
    if (snprintf(c->final[t], CSV_PATH, "%s/%s.csv", dir, ex_tables[t].name) >=
        CSV_PATH - 16) {
      snprintf(err, errlen, "%s: name too long", dir);
      return -1;
    }
    if (gt_out_check(c->final[t], force ? GT_OUT_FORCE : GT_OUT_NEW, err, errlen) != 0)
      return -1;
  }
  for (unsigned t = 0; t < EX_NTABLES; t++)
    if (open_table(c, t, err, errlen) != 0)
      return -1;
  return 0;
}

/* Table t renamed into place, if its name still takes it. */
static int commit_table(struct csv *c, unsigned t, char *err, size_t errlen) {
  if (gt_out_check(c->final[t], c->force ? GT_OUT_FORCE : GT_OUT_NEW, err, errlen) != 0)
    return -1;
  if (rename(c->part[t], c->final[t]) != 0) {
    snprintf(err, errlen, "%s: %s", c->final[t], strerror(errno));
    return -1;
  }
  c->part[t][0] = '\0';
  return 0;
}

int ex_csv_commit(struct ex_writer *w, char *err, size_t errlen) {
  struct csv *c = w->ctx;
  for (unsigned t = 0; t < EX_NTABLES; t++)
    if (commit_table(c, t, err, errlen) != 0) {
      for (unsigned k = 0; k < t; k++) /* this export's tables, renamed: they go */
        unlink(c->final[k]);
      return -1;
    }
  return 0;
}

void ex_csv_close(struct ex_writer *w) {
  struct csv *c = w->ctx;
  if (!c)
    return;
  for (unsigned t = 0; t < EX_NTABLES; t++) {
    if (c->f[t])
      fclose(c->f[t]);
    if (c->part[t][0])
      unlink(c->part[t]);
  }
  free(c);
  w->ctx = NULL;
}
