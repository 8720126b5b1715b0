/* commands.h — the gputrace subcommands, one file each (cmd_*.c).
 *
 * Contract: each takes argc/argv with argv[0] the subcommand name and
 * returns the process exit status. Each parses argv with one option table
 * of its own (gputrace/options.h; the options several commands take are
 * defined once, in shared_options.h), so its usage line and --help come
 * from that table: -h/--help prints the help (status 0), bad usage prints
 * the problem and the usage on stderr (status 2). Status 2 also means
 * unusable input, with a message naming the problem on stderr. Option
 * values with units are parsed by gputrace/units.h. */
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

#endif
