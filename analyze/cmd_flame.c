/* cmd_flame.c — `gputrace flame FILE [--leaked | --allocated | --peak]`
 *
 * Folded stacks for flamegraph.pl and speedscope: one line per stack,
 * "pid N;outermost;...;innermost BYTES", weighted by the bytes still live
 * at the end (--leaked, the default), every allocation's bytes
 * (--allocated), or the bytes live at each process's device-memory peak
 * (--peak). Python frames read "function (file:line)". */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "leaks.h"
#include "util.h"

#define SYNOPSIS "flame FILE [--leaked | --allocated | --peak]"
#define MAX_FRAMES 256

enum weight { LEAKED, ALLOCATED, PEAK };

/* Names go between ';' and before the count: keep those characters out. */
static void put_name(const char *s) {
  for (; *s; s++)
    putchar(*s == ';' ? ':' : *s == '\n' ? ' ' : *s);
}

static void fold(const struct gt_leaks *l, const struct gt_group *g) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(l->symtab, g->pid, g->stack_id, f, MAX_FRAMES);
  printf("pid %u", g->pid);
  if (n == 0)
    printf(";[no stack]");
  for (int i = n - 1; i >= 0; i--) {
    putchar(';');
    put_name(f[i].function);
    if (f[i].python) {
      printf(" (");
      put_name(f[i].file);
      printf(":%u)", f[i].line);
    }
  }
  printf(" %" PRIu64 "\n", g->bytes);
}

int cmd_flame(int argc, char **argv) {
  enum weight w = LEAKED;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (gt_streq(argv[i], "--leaked"))
      w = LEAKED;
    else if (gt_streq(argv[i], "--allocated"))
      w = ALLOCATED;
    else if (gt_streq(argv[i], "--peak"))
      w = PEAK;
    else if (gt_streq(argv[i], "-h") || gt_streq(argv[i], "--help"))
      return gt_usage_ok(SYNOPSIS);
    else if (argv[i][0] == '-' || path)
      return gt_usage_error("flame", argv[i], SYNOPSIS);
    else
      path = argv[i];
  }
  if (!path)
    return gt_usage_error("flame", NULL, SYNOPSIS);
  struct gt_leaks l;
  char err[512];
  struct gt_leaks_opts lo = {0};
  if (gt_leaks_run(path, &lo, &l, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace flame: %s\n", err);
    gt_leaks_free(&l);
    return 2;
  }
  if (w == LEAKED)
    for (size_t i = 0; i < l.nleaks; i++)
      fold(&l, &l.leaks[i]);
  else if (w == ALLOCATED)
    for (size_t i = 0; i < l.nallocated; i++)
      fold(&l, &l.allocated[i]);
  else
    for (size_t p = 0; p < l.nprocs; p++)
      for (size_t i = 0; i < l.procs[p].nat_peak; i++)
        fold(&l, &l.procs[p].at_peak[i]);
  int damaged = l.damaged;
  gt_leaks_free(&l);
  if (fflush(stdout) != 0) {
    perror("gputrace flame: writing output");
    return 2;
  }
  return damaged ? 3 : 0;
}
