/* cmd_report.c — `gputrace report FILE [--json] [--pid P] [--from T] [--to T]
 * [--device-memory SIZE]`: where an inference run's time went, the verdict
 * (transfer-, compute-, launch- or cpu-bound) and findings with advice.
 *
 * Exit 0, 2 on bad usage or an unreadable trace, 3 when the trace is
 * damaged (the report covers what could be read, warnings on stderr) —
 * the statuses of `gputrace dump`. The figures and rules are defined in
 * docs/report.md; the work is in report_*.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report.h"
#include "util.h"

#define SYNOPSIS                                                                         \
  "report FILE [--json] [--pid P] [--from T] [--to T] [--device-memory SIZE]\n"          \
  "  T: seconds from the first record (1.5, 250ms, 10us, 800ns); SIZE: bytes (80GiB, "   \
  "16G, 1e9)"

static int bad_value(const char *opt, const char *val) {
  fprintf(stderr, "gputrace report: bad value for %s: '%s'\nusage: gputrace %s\n", opt,
          val, SYNOPSIS);
  return 2;
}

static int parse_args(int argc, char **argv, struct rp_options *o, const char **path,
                      int *json) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    if (gt_streq(a, "--json")) {
      *json = 1;
    } else if (gt_streq(a, "-h") || gt_streq(a, "--help")) {
      return gt_usage_ok(SYNOPSIS) - 1; /* -1: stop, status 0 */
    } else if (gt_streq(a, "--pid") && has_val) {
      char *end;
      unsigned long v = strtoul(argv[++i], &end, 10);
      if (*end || end == argv[i] || v > UINT32_MAX)
        return bad_value(a, argv[i]);
      o->has_pid = 1;
      o->pid = (uint32_t)v;
    } else if ((gt_streq(a, "--from") || gt_streq(a, "--to")) && has_val) {
      uint64_t t;
      if (gt_parse_duration(argv[++i], &t) != 0)
        return bad_value(a, argv[i]);
      if (a[2] == 'f')
        o->from_ns = t;
      else
        o->to_ns = t;
    } else if (gt_streq(a, "--device-memory") && has_val) {
      if (gt_parse_size(argv[++i], &o->device_memory) != 0 || !o->device_memory)
        return bad_value(a, argv[i]);
    } else if (a[0] == '-' || *path) {
      return gt_usage_error("report", a, SYNOPSIS);
    } else {
      *path = a;
    }
  }
  if (!*path)
    return gt_usage_error("report", NULL, SYNOPSIS);
  if (o->to_ns <= o->from_ns) {
    fprintf(stderr, "gputrace report: --to must be later than --from\n");
    return 2;
  }
  return 0;
}

int cmd_report(int argc, char **argv) {
  struct rp_options o = {.to_ns = UINT64_MAX};
  const char *path = NULL;
  int json = 0, st = parse_args(argc, argv, &o, &path, &json);
  if (st)
    return st < 0 ? 0 : st;
  struct report *r = gt_xcalloc(1, sizeof *r);
  rp_init(r, &o);
  if (rp_read(r, path, "report") != 0) {
    rp_free(r);
    free(r);
    return 2;
  }
  rp_finish(r);
  if (json)
    rp_print_json(stdout, r);
  else
    rp_print_text(stdout, r, path);
  int damaged = r->damaged;
  rp_free(r);
  free(r);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("gputrace report: writing output");
    return 2;
  }
  return damaged ? 3 : 0;
}
