/* export.h — `gputrace export`: a trace as relational tables, written to
 * SQLite or to CSV files (docs/export.md is the user's schema).
 *
 * Contract:
 *  - ex_tables (export_tables.c) is the one definition of the tables: each
 *    table's name and its columns (name, type, unit). Both writers create
 *    what they write from it (SQLite's CREATE TABLE and INSERT, CSV's
 *    header row), and ex_run hands them rows of exactly those columns, in
 *    that order.
 *  - ex_run reads the trace once (file order, heap, NVTX and symbol
 *    layers) and gives each row to the writer as it is made; rows that wait
 *    for a later record (a launch for its DEVICE record, an allocation for
 *    its free) are held in bounded memory (export_tables.c says how).
 *  - A writer (struct ex_writer) takes rows through `row` (0, or -1 with a
 *    message in its own err buffer, which stops the export) and is told
 *    `finish` once at the end (indexes, commit, close).
 *  - Ids (a table's "id" column) are 1, 2, 3... in the order its rows are
 *    handed to the writer.
 *  - Text is stored as UTF-8: invalid bytes become U+FFFD (gt_text_utf8);
 *    everything else, quotes, commas and newlines included, as it is. An
 *    empty text (an unknown file, an empty name) is NULL, in SQLite as in
 *    CSV, whose empty field is NULL: no TEXT column ever holds ''.
 */
#ifndef GPUTRACE_ANALYZE_EXPORT_H
#define GPUTRACE_ANALYZE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* The layout version of the exported tables (metadata.schema_version):
 * raised when a column changes meaning or goes away; new columns and
 * tables do not raise it (docs/export.md). */
#define EX_SCHEMA_VERSION 1

enum ex_type { EX_INT, EX_REAL, EX_TEXT };

struct ex_column {
  const char *name;
  unsigned char type; /* enum ex_type */
  const char *unit;   /* docs: "ns", "bytes", ... or "" */
};

#define EX_MAX_COLUMNS 32
/* The device columns that end launches, copies and memsets (their DEVICE
 * record's: export_tables.c DEVICE_COLUMNS, checked there). */
#define EX_DEVICE_COLUMNS 9

struct ex_table {
  const char *name;
  const struct ex_column *cols;
  unsigned ncols;
  const char *indexes; /* SQLite: "col,col;col": one index per ';' group */
};

enum ex_table_id {
  EX_METADATA,
  EX_PROCESSES,
  EX_THREADS,
  EX_API_CALLS,
  EX_LAUNCHES,
  EX_COPIES,
  EX_MEMSETS,
  EX_ALLOCATIONS,
  EX_FREES,
  EX_STACKS,
  EX_FRAMES,
  EX_NVTX_RANGES,
  EX_DEVICE_UNMATCHED,
  EX_METRICS,
  EX_NTABLES
};

extern const struct ex_table ex_tables[EX_NTABLES];
/* SQLite: CREATE VIEW device, every DEVICE record (docs/export.md). */
extern const char ex_device_view[];

/* One value of a row: NULL, or of its column's type. */
struct ex_value {
  unsigned char null;
  int64_t i;
  double d;
  const char *s; /* UTF-8, NUL-terminated, valid during the row call */
};

struct ex_writer {
  void *ctx;
  int (*row)(void *ctx, unsigned table, const struct ex_value *v);
  int (*finish)(void *ctx);
  const char *err;     /* its message when row or finish failed */
  const char *warning; /* after a finish that succeeded: what it left out
                          (SQLite: indexes it could not make), or NULL */
};

struct ex_filter {
  int has_pid;
  uint32_t pid;
  uint64_t from_ns, to_ns; /* relative to the origin; to_ns UINT64_MAX: the end */
};

struct ex_result {
  struct gt_session *session; /* open: the caller closes it */
  uint64_t rows;
  uint64_t unmatched_device; /* DEVICE records no held work row matched */
  int failed;                /* the writer failed (its err says why) */
};

/* Read `so`'s trace into the writer. 0, or -1 with a message in err when
 * the trace cannot be opened. */
int ex_run(struct gt_session_opts *so, const struct ex_filter *f, struct ex_writer *w,
           struct ex_result *res, char *err, size_t errlen);

/* The writers: 0, or -1 with a message in err. The path has passed
 * gt_out_open's checks (cmd_export.c); fd is that open file (SQLite); dir
 * the directory for the CSV files, one TABLE.csv each. */
int ex_sqlite_open(struct ex_writer *w, const char *path, int fd, char *err,
                   size_t errlen);
int ex_csv_open(struct ex_writer *w, const char *dir, int force, char *err,
                size_t errlen);
/* CSV: after a finish that succeeded and the decision to keep the export,
 * the tables renamed into place (export_csv.c). 0, or -1 with a message. */
int ex_csv_commit(struct ex_writer *w, char *err, size_t errlen);
/* Release a writer whether or not finish ran (CSV: what was not committed
 * is removed). */
void ex_sqlite_close(struct ex_writer *w);
void ex_csv_close(struct ex_writer *w);

#endif
