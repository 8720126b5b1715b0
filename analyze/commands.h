/* commands.h — the gputrace subcommands, one file each (cmd_*.c).
 *
 * Contract: each takes argc/argv with argv[0] the subcommand name and
 * returns the process exit status. Status 2 means bad usage or unusable
 * input, with a message naming the problem on stderr. */
#ifndef GPUTRACE_COMMANDS_H
#define GPUTRACE_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_chrome(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_pprof(int argc, char **argv);

/* Shared by report and diff (cmd_report.c): "1.5" (s), "250ms", "10us",
 * "800ns" -> ns; "80GiB", "16G", "1e9" -> bytes. 0, or -1 if malformed. */
#include <stdint.h>

/* Print "usage: gputrace <synopsis>" to stdout and return 0. */
int gt_usage_ok(const char *synopsis);
/* Report a bad or missing argument and the synopsis on stderr; return 2. */
int gt_usage_error(const char *cmd, const char *bad_arg, const char *synopsis);

#endif
