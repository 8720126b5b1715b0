/* main.c — `gputrace COMMAND ...`: dispatch to cmd_*.c (perf-style). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gputrace/version.h"
#include "session.h"

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
}

int gt_usage_ok(const char *synopsis) {
  printf("usage: gputrace %s\n", synopsis);
  return 0;
}

int gt_usage_error(const char *cmd, const char *bad_arg, const char *synopsis) {
  if (bad_arg)
    fprintf(stderr, "gputrace %s: unexpected argument '%s'\n", cmd, bad_arg);
  else
    fprintf(stderr, "gputrace %s: missing argument\n", cmd);
  fprintf(stderr, "usage: gputrace %s\n", synopsis);
  return 2;
}

/* `--no-wait`, which every command that reads a trace takes: removed from
 * argv (up to a `--`), remembered for the session (session.h). */
static int take_no_wait(int argc, char **argv) {
  int out = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--")) {
      while (i < argc)
        argv[out++] = argv[i++];
      break;
    }
    if (!strcmp(argv[i], "--no-wait"))
      gt_session_no_wait = 1;
    else
      argv[out++] = argv[i];
  }
  argv[out] = NULL;
  return out;
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
    if (!strcmp(argv[1], commands[i].name)) {
      if (commands[i].run != cmd_record)
        argc = take_no_wait(argc, argv);
      return commands[i].run(argc - 1, argv + 1);
    }
  fprintf(stderr, "gputrace: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
