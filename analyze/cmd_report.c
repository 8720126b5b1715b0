/* cmd_report.c — `gputrace report FILE [--json] [--wide] [--pid P] [--from T]
 * [--to T] [--device-memory SIZE] [--color WHEN]`: where an inference run's time
 * went, the verdict (transfer-, compute-, launch- or cpu-bound; none when the
 * window holds no CUDA call) and findings with advice.
 *
 * A trace without CUDA calls is warned of, and a --pid/--from/--to that
 * selects nothing the trace holds is an error (notices.h).
 * Exit 0, 2 on bad usage, an unreadable trace or a filter matching nothing, 3 when the
 * trace is damaged (the report covers what could be read, warnings on stderr) — the
 * statuses of `gputrace dump`. The figures and rules are defined in docs/report.md; the
 * work is in report_*.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "notices.h"
#include "report.h"
#include "shared_options.h"
#include "util.h"

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse_args(int argc, char **argv, struct rp_options *o, const char **path,
                      int *json, int *color) {
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_JSON(json),
      GT_OPT_WIDE(&o->wide),
      GT_OPT_PID(&o->pid, &o->has_pid),
      GT_OPT_FROM(&o->from_ns),
      GT_OPT_TO(&o->to_ns),
      {.name = "device-memory",
       .type = GT_OPTION_SIZE,
       .arg = "SIZE",
       .help = "the device's memory (80GiB, 16G, 1e9)",
       .value = &o->device_memory,
       .min = 1},
      GT_OPT_NO_WAIT(&o->no_wait),
      GT_OPT_COLOR(color),
      GT_OPT_END,
  };
  const struct gt_command cmd = GT_TRACE_COMMAND(
      "report", options, "where the run's time went, the verdict, findings");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  *path = argv[0];
  if (!gt_notice_window("report", o->from_ns, o->to_ns))
    return 2;
  return GT_OPTIONS_RUN;
}

int cmd_report(int argc, char **argv) {
  struct rp_options o = {.to_ns = UINT64_MAX};
  const char *path = NULL;
  int json = 0, color = GT_COLOR_AUTO,
      st = parse_args(argc, argv, &o, &path, &json, &color);
  if (st != GT_OPTIONS_RUN)
    return st;
  o.color = !json && gt_color_choose(color, stdout);
  struct report *r = gt_xcalloc(1, sizeof *r);
  rp_init(r, &o);
  if (rp_read(r, path, "report") != 0) {
    rp_free(r);
    free(r);
    return 2;
  }
  gt_notice_no_cuda("gputrace report", path, r->session);
  const struct gt_filter f = {o.has_pid, o.pid, o.from_ns, o.to_ns};
  if (gt_notice_filter("gputrace report", path, r->session, &f)) {
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
  return gt_exit_status("gputrace report", damaged, 0);
}
