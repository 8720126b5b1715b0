/* cmd_start.c — `gputrace start [-o FILE] [--force] TARGET` and `gputrace
 * stop TARGET`: switch a flight recorder (record --flight-recorder) to full
 * recording into FILE, and back to the window kept in memory.
 *
 * Contract:
 *  - TARGET is snapshot's (cmd_snapshot.c: the collector's pid or control
 *    socket, a collector of our uid); the request is protocol.h's
 *    GT_CTL_START / GT_CTL_STOP.
 *  - start creates FILE here by outfile.h's rules (default: the first free
 *    gputrace-recording-N.gtrace) and hands the collector its descriptor:
 *    from then on every record goes to FILE, which starts with what gives
 *    them meaning (names, stacks, live allocations), until stop finishes
 *    it. Each switch leaves a NOTE in the trace ("recording started by
 *    gputrace start" / "recording stopped by gputrace stop"), at the end of
 *    the side it leaves and the start of the side it enters.
 *  - Status: 0 switched (one line on stderr), 2 for bad usage, a TARGET
 *    that is no flight recorder of ours, a start while recording or a stop
 *    while not; 1 when the collector could not switch. A start that failed
 *    leaves no file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/outfile.h"
#include "gputrace/protocol.h"
#include "shared_options.h"

/* The collector's error answer said under prog; its status (see contract). */
static int say_refused(const char *prog, const char *target, const char *reply) {
  const char *why = gt_ctl_why(reply);
  fprintf(stderr, "%s: %s: %s\n", prog, target, why);
  return !strncmp(why, GT_CTL_ALREADY, strlen(GT_CTL_ALREADY)) ||
                 !strncmp(why, GT_CTL_NOT_RECORDING, strlen(GT_CTL_NOT_RECORDING))
             ? 2
             : 1;
}

int cmd_start(int argc, char **argv) {
  const char *output = NULL;
  int force = 0, nargs;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&output, "FILE", "the trace (default: gputrace-recording-N.gtrace)"),
      GT_OPT_FORCE(&force),
      GT_OPT_END,
  };
  const struct gt_command cmd = {
      .prog = "gputrace start",
      .options = options,
      .args = "TARGET",
      .min_args = 1,
      .max_args = 1,
      .about = "switch a flight recorder (TARGET: its pid or socket) to recording to a "
               "file"};
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  int s = gt_ctl_connect(cmd.prog, argv[0]);
  if (s < 0)
    return 2;
  char picked[64], reply[GT_CTL_LINE_MAX];
  int fd = gt_ctl_open_output(cmd.prog, "gputrace-recording-", &output, force, picked,
                              sizeof picked);
  if (fd < 0) {
    close(s);
    return 2;
  }
  int rc = gt_ctl_ask(s, GT_CTL_START "\n", fd, reply, sizeof reply);
  close(s);
  if (rc == 0 && !strncmp(reply, "ok ", 3)) {
    close(fd);
    fprintf(stderr, "gputrace start: recording to %s until gputrace stop %s\n", output,
            argv[0]);
    return 0;
  }
  gt_ctl_drop_output(fd, output);
  return say_refused(cmd.prog, argv[0], reply);
}

int cmd_stop(int argc, char **argv) {
  int nargs;
  const struct gt_option options[] = {GT_OPT_END};
  const struct gt_command cmd = {
      .prog = "gputrace stop",
      .options = options,
      .args = "TARGET",
      .min_args = 1,
      .max_args = 1,
      .about =
          "finish gputrace start's file; the flight recorder keeps its window again"};
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  int s = gt_ctl_connect(cmd.prog, argv[0]);
  if (s < 0)
    return 2;
  char reply[GT_CTL_LINE_MAX];
  int rc = gt_ctl_ask(s, GT_CTL_STOP "\n", -1, reply, sizeof reply);
  close(s);
  unsigned long long records, bytes, segments, span_ns;
  if (rc == 0 && sscanf(reply, "ok %llu %llu %llu %llu", &records, &bytes, &segments,
                        &span_ns) == 4) {
    fprintf(stderr, "gputrace stop: %llu records (%.1f s) recorded; the window goes on\n",
            records, (double)span_ns / 1e9);
    return 0;
  }
  return say_refused(cmd.prog, argv[0], reply);
}
