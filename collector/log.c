/* log.c — what the collector tells its user (see collector.h): one line on
 * stderr per message, "gputrace-collector: " first, nothing with --quiet.
 * One place for the rule, so no file needs main.c's options to follow it. */
#include <stdarg.h>
#include <stdio.h>

#include "collector.h"

int gt_collector_quiet;

void gt_collector_say(const char *fmt, ...) {
  if (gt_collector_quiet)
    return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "gputrace-collector: %s\n", line);
}
