/* commands.h — the gputrace subcommands, one file each (cmd_*.c).
 *
 * Contract: each takes argc/argv with argv[0] the subcommand name and
 * returns the process exit status. Each parses argv with one option table
 * of its own (gputrace/options.h; the options several commands take are
 * defined once, in shared_options.h), so its usage line and --help come
 * from that table: -h/--help prints the help (status 0), bad usage prints
 * the problem and the usage on stderr (status 2). Status 2 also means
 * unusable input, with a message naming the problem on stderr — a
 * --pid/--from/--to that selects nothing the trace holds among them — and
 * every command reading a trace warns on stderr of one without a CUDA call
 * (both in notices.h, one text each); each ends through gt_exit_status
 * (notices.h: stdout checked, 2 on a write error, 3 for a damaged trace).
 * Option values with units are parsed by gputrace/units.h, and every
 * option's value pointer is type-checked when the table compiles
 * (options.h, GT_OPT_VALUE_PTR).
 *
 * Each command's table is the only description of it: given the lone
 * argument --gt-describe=WHAT (gt_options_describe), a command prints its
 * summary, man page section or completion arm and does nothing else. The
 * list of commands is main.c's dispatch table; docgen.c builds the
 * top-level help, the man page and the completion script by asking each
 * command of that list to describe itself. */
#ifndef GPUTRACE_COMMANDS_H
#define GPUTRACE_COMMANDS_H

#include <stddef.h>

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_chrome(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);

/* cmd_snapshot.c, the flight recorder's control socket (protocol.h) for
 * snapshot, start and stop: connected to TARGET's (a pid or the socket) of
 * a collector of our uid, or -1 said on stderr under prog's name; one
 * request line sent (with fd attached unless -1) and the one-line answer
 * in reply (0), or -1 with reply "error WHY". */
int gt_ctl_connect(const char *prog, const char *target);
int gt_ctl_ask(int s, const char *line, int fd, char *reply, size_t len);
/* The file a request hands the collector: *output created by outfile.h's
 * rules (--force: replaced), or, when NULL, the first free
 * <prefix>N.gtrace (its name in picked, *output pointed at it); its
 * descriptor, or -1 said on stderr under prog's name. gt_ctl_drop_output:
 * after a refused request, that file emptied and removed, and closed. */
int gt_ctl_open_output(const char *prog, const char *prefix, const char **output,
                       int force, char *picked, size_t len);
void gt_ctl_drop_output(int fd, const char *output);
/* The WHY of a collector's "error WHY" answer (the answer itself if not). */
const char *gt_ctl_why(const char *reply);

/* One entry of the dispatch table: `gputrace NAME ...` runs run. */
struct gt_cli_command {
  const char *name;
  int (*run)(int argc, char **argv);
};

/* docgen.c, all on stdout: the top-level help (each command's summary and
 * usage), the man page gputrace(1), the bash completion script. */
void gt_cli_help(const struct gt_cli_command *cmds, size_t n);
void gt_cli_man(const struct gt_cli_command *cmds, size_t n);
void gt_cli_bash(const struct gt_cli_command *cmds, size_t n);

#endif
