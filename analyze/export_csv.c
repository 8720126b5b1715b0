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
 *  - Each file is created with gt_out_open (0600, no symbolic link,
 *    existing ones only with --force), so the same rules hold for every
 *    file of the directory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "gputrace/outfile.h"
#include "util.h"

struct csv {
  FILE *f[EX_NTABLES];
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

static int open_table(struct csv *c, unsigned t, const char *dir, int force, char *err,
                      size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.csv", dir, ex_tables[t].name);
  int fd = gt_out_open(path, force ? GT_OUT_FORCE : GT_OUT_NEW, err, errlen);
  if (fd < 0)
    return -1;
  if (!(c->f[t] = fdopen(fd, "w"))) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
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
  for (unsigned t = 0; t < EX_NTABLES; t++)
    if (open_table(c, t, dir, force, err, errlen) != 0)
      return -1;
  return 0;
}

void ex_csv_close(struct ex_writer *w) {
  struct csv *c = w->ctx;
  if (!c)
    return;
  for (unsigned t = 0; t < EX_NTABLES; t++)
    if (c->f[t])
      fclose(c->f[t]);
  free(c);
  w->ctx = NULL;
}
