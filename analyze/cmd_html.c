/* cmd_html.c — `gputrace html FILE [-o OUT] [--force] [--pid P] [--from T]
 * [--to T] [--no-wait]`: one self-contained HTML page of the run — the
 * verdict and findings, device memory over time with who held its peak,
 * device utilization and NVML readings, request latencies per NVTX range,
 * the report's tables and flame graphs of memory and GPU time.
 *
 * Contract (docs/cli.md, `html`, is the user's version):
 *  - The figures are report's (report.h: one pass, the series gathered on
 *    the way, html_collect.c) and the leak analysis's (leaks.h: a second
 *    pass, the stacks at each peak and at the end); the page is html.h's.
 *  - Default OUT: FILE with .gtrace replaced by .html; "-" is stdout. The
 *    output is created by gputrace/outfile.h's rules (--force to replace a
 *    file of ours) and checked before any work; it may not be the trace.
 *  - Filters as report's: a --pid/--from/--to matching nothing is an error
 *    (status 2, the output removed); a trace without CUDA calls is warned
 *    of (notices.h). Progress on a terminal (progress.h).
 *  - Exit 0; 2 for bad usage, an unreadable trace or an unwritable output;
 *    3 when the trace is damaged (the page shows what could be read). On a
 *    regular file, a closing line on stderr: "gputrace html: wrote OUT (N
 *    KB): open it in a browser".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/outfile.h"
#include "html.h"
#include "notices.h"
#include "shared_options.h"
#include "util.h"

struct html_opts {
  const char *in, *out;
  char *out_owned;
  int force, no_wait;
  struct rp_options rp;
};

/* "run.gtrace" -> "run.html"; anything else gets ".html" added. */
static char *default_out(const char *in) {
  size_t n = strlen(in), keep = n > 7 && !strcmp(in + n - 7, ".gtrace") ? n - 7 : n;
  char *out = gt_xcalloc(keep + 6, 1);
  memcpy(out, in, keep);
  memcpy(out + keep, ".html", 6);
  return out;
}

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse_opts(int argc, char **argv, struct html_opts *op) {
  int nargs;
  struct rp_options *o = &op->rp;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&op->out, "OUT", "OUT.html or - (default: FILE's .html)"),
      GT_OPT_FORCE(&op->force),
      GT_OPT_PID(&o->pid, &o->has_pid),
      GT_OPT_FROM(&o->from_ns),
      GT_OPT_TO(&o->to_ns),
      GT_OPT_NO_WAIT(&op->no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd = GT_TRACE_COMMAND(
      "html", options, "one self-contained HTML page of the run: charts, tables, flames");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  op->in = argv[0];
  o->no_wait = op->no_wait;
  if (!gt_notice_window("html", o->from_ns, o->to_ns))
    return 2;
  if (!op->out)
    op->out = op->out_owned = default_out(op->in);
  return GT_OPTIONS_RUN;
}

static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* The output, checked and opened before any work; NULL after a message. */
static FILE *open_out(const struct html_opts *op, int *regular) {
  char err[512];
  *regular = 0;
  if (!strcmp(op->out, "-"))
    return stdout;
  if (same_file(op->in, op->out)) {
    fprintf(stderr, "gputrace html: %s: the output would overwrite the trace\n", op->out);
    return NULL;
  }
  int fd = gt_out_open(op->out, op->force ? GT_OUT_FORCE : GT_OUT_NEW, err, sizeof err);
  if (fd < 0) {
    fprintf(stderr, "gputrace html: %s\n", err);
    return NULL;
  }
  struct stat st;
  *regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    fprintf(stderr, "gputrace html: %s: %s\n", op->out, strerror(errno));
  }
  return f;
}

/* Report's pass (the series on the way) and finish; 0, or the status. */
static int read_report(struct report *r, struct ht_data *d, const struct html_opts *op) {
  rp_init(r, &op->rp);
  ht_init(d, r);
  if (rp_read(r, op->in, "html") != 0)
    return 2;
  gt_notice_no_cuda("gputrace html", op->in, r->session);
  const struct rp_options *o = &op->rp;
  const struct gt_filter f = {o->has_pid, o->pid, o->from_ns, o->to_ns};
  if (gt_notice_filter("gputrace html", op->in, r->session, &f))
    return 2;
  rp_finish(r);
  return 0;
}

static int finish(struct html_opts *op, FILE *out, int regular, int rc) {
  if (out && out != stdout && fclose(out) != 0 && rc != 2) {
    fprintf(stderr, "gputrace html: writing %s: %s\n", op->out, strerror(errno));
    rc = 2;
  } else if (out == stdout && (fflush(stdout) != 0 || ferror(stdout)) && rc != 2) {
    perror("gputrace html: writing output");
    rc = 2;
  }
  struct stat st;
  if (regular && rc == 2)
    unlink(op->out); /* half a page helps nobody */
  else if (regular && stat(op->out, &st) == 0)
    fprintf(stderr, "gputrace html: wrote %s (%lld KB): open it in a browser\n", op->out,
            (long long)(st.st_size + 999) / 1000);
  free(op->out_owned);
  return rc;
}

int cmd_html(int argc, char **argv) {
  struct html_opts op = {.rp = {.to_ns = UINT64_MAX}};
  int rc = parse_opts(argc, argv, &op), regular;
  if (rc != GT_OPTIONS_RUN)
    return finish(&op, NULL, 0, rc);
  FILE *out = open_out(&op, &regular);
  if (!out)
    return finish(&op, NULL, 0, 2);
  struct report *r = gt_xcalloc(1, sizeof *r);
  struct ht_data *d = gt_xcalloc(1, sizeof *d);
  struct gt_leaks l = {0};
  char err[512];
  rc = read_report(r, d, &op);
  const struct gt_leaks_opts lo = {.no_wait = op.no_wait, .cmd = "gputrace html"};
  if (rc == 0 && gt_leaks_run(op.in, &lo, &l, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace html: %s\n", err);
    rc = 2;
  }
  if (rc == 0) {
    ht_page(out, d, &l, op.in);
    rc = r->damaged || l.damaged ? 3 : 0;
  }
  gt_leaks_free(&l);
  ht_free(d);
  rp_free(r);
  free(d);
  free(r);
  return finish(&op, out, regular, rc);
}
