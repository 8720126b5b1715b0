/* main.c — `gputrace COMMAND ...`: dispatch to cmd_*.c (perf-style).
 *
 * Contract: `commands` below is the one list of the commands. `gputrace`
 * alone, or an unknown command, prints a short usage naming the commands on
 * stderr (status 2); `-h`, `--help` and `help` print the full help on stdout
 * (each command's summary and usage, from its own option table: docgen.c),
 * `--version` prints "gputrace VERSION" (status 0). The hidden
 * `--gt-describe=man` and `--gt-describe=bash` print the man page and the
 * bash completion script (the build writes them with these). Anything else
 * is the command's: it gets argv from its name on and parses it with its
 * own option table (commands.h). Out of memory anywhere (model/util.h's
 * gt_oom) prints "gputrace: out of memory" and exits 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gputrace/version.h"
#include "util.h"

static const struct gt_cli_command commands[] = {
    {"record", cmd_record},     {"dump", cmd_dump},     {"leaks", cmd_leaks},
    {"flame", cmd_flame},       {"chrome", cmd_chrome}, {"report", cmd_report},
    {"diff", cmd_diff},         {"pprof", cmd_pprof},   {"top", cmd_top},
    {"html", cmd_html},         {"export", cmd_export}, {"collect", cmd_collect},
    {"snapshot", cmd_snapshot}, {"start", cmd_start},   {"stop", cmd_stop},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The short usage for mistakes: the names, and where the rest is. */
static void short_usage(void) {
  fprintf(stderr, "usage: gputrace COMMAND [ARGS...]\ncommands:");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(stderr, " %s", commands[i].name);
  fprintf(stderr, "\n`gputrace --help` says what each does and lists its options.\n");
}

static void out_of_memory(void) {
  fputs("gputrace: out of memory\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  gt_set_oom_handler(out_of_memory);
  if (argc < 2) {
    short_usage();
    return 2;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    gt_cli_help(commands, NCOMMANDS);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("gputrace %s\n", GT_VERSION);
    return 0;
  }
  if (!strcmp(argv[1], "--gt-describe=man") || !strcmp(argv[1], "--gt-describe=bash")) {
    (argv[1][14] == 'm' ? gt_cli_man : gt_cli_bash)(commands, NCOMMANDS);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 2;
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "gputrace: unknown command '%s'\n", argv[1]);
  short_usage();
  return 2;
}
