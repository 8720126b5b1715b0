/* progress.c — see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define EVERY_NS 250000000ull /* a few updates a second: readable, and cheap */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "12.3 M", "45.6 k" or "789": as nsys export counts. */
static void count(char *buf, size_t len, uint64_t n) {
  if (n >= 1000000)
    snprintf(buf, len, "%.1f M", (double)n / 1e6);
  else if (n >= 1000)
    snprintf(buf, len, "%.1f k", (double)n / 1e3);
  else
    snprintf(buf, len, "%llu", (unsigned long long)n);
}

static void show(void *ctx, uint64_t read, uint64_t total) {
  struct gt_progress *p = ctx;
  uint64_t now = now_ns();
  if (p->shown && now - p->last_ns < EVERY_NS)
    return;
  char done[32], all[32];
  count(done, sizeof done, read);
  if (total < read) /* a trace still growing, or headers that undercount */
    total = read;
  count(all, sizeof all, total);
  fprintf(stderr, "\r%s: %s of %s records (%d %%)", p->cmd, done, all,
          total ? (int)(read * 100 / total) : 100);
  fflush(stderr);
  p->shown = 1;
  p->last_ns = now;
}

void gt_progress_watch(struct gt_progress *p, const char *cmd, int streams,
                       struct gt_session_opts *so) {
  *p = (struct gt_progress){.cmd = cmd};
  if (!isatty(STDERR_FILENO) || (streams && isatty(STDOUT_FILENO)))
    return;
  so->progress = show;
  so->progress_ctx = p;
}

void gt_progress_done(struct gt_progress *p) {
  if (p->shown)
    fputs("\r\033[K", stderr);
  p->shown = 0;
}
