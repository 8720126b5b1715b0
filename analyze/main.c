/* main.c — `gputrace COMMAND ...`: dispatch to cmd_*.c (perf-style).
 *
 * Contract: `gputrace` alone, or an unknown command, prints the list of
 * commands on stderr (status 2); `-h`, `--help` and `help` print it on
 * stdout, `--version` prints "gputrace VERSION" (status 0). Anything else
 * is the command's: it gets argv from its name on and parses it with its
 * own option table (commands.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gputrace/version.h"

struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
    {"record", cmd_record, "run a command traced: record [-o FILE] -- CMD [ARGS...]"},
    {"dump", cmd_dump, "print every event: dump FILE [--json | --summary]"},
    {"leaks", cmd_leaks, "memory still allocated, by stack: leaks FILE [--json] ..."},
    {"flame", cmd_flame,
     "folded stacks by bytes: flame FILE [--leaked|--allocated|--peak]"},
    {"chrome", cmd_chrome,
     "export for Perfetto/chrome://tracing: chrome FILE [-o OUT.json]"},
    {"report", cmd_report,
     "what bounds the run, and what to change: report FILE [--json]"},
    {"diff", cmd_diff,
     "regressions between two traces: diff A B [--json] [--threshold PCT]"},
    {"pprof", cmd_pprof,
     "a pprof profile of device memory or GPU time (--gpu): pprof FILE [-o OUT]"},
};

static void usage(FILE *to) {
  fprintf(to, "usage: gputrace COMMAND [ARGS...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(to, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(to, "\n`gputrace COMMAND --help` lists the command's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("gputrace %s\n", GT_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "gputrace: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
