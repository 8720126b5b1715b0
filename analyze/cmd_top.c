/* cmd_top.c — `gputrace top ADDR:PORT [--interval DURATION] [-n N]`: a live
 * view of the programs a collector traces, from the server of `gputrace
 * record --prometheus ADDR:PORT` (its /metrics and /top.jsonl: top.h).
 *
 * Every interval (default 1 s) it takes a sample and shows the figures
 * and the rates since the previous one (top_view.c). On a terminal: the
 * alternate screen, redrawn in place (cursor home, each line cleared to
 * its end), resized on SIGWINCH, keys read raw (q quits; m, g, l sort the
 * processes by memory, GPU time, launches); the terminal is restored on
 * q, at the end, on SIGINT, SIGTERM and SIGHUP. Keys and those signals are
 * read while a sample is fetched too (top_input): a slow server delays
 * nothing. Otherwise (a pipe, a file): one block of plain lines a sample,
 * separated by a blank line. -n N stops after N samples shown.
 *
 * Exit: 0 when asked to stop, after N samples, or when the collector goes
 * away (the traced program finished: said on stdout); 2 for bad usage, for
 * nothing serving ADDR:PORT at the start, or an answer that is not the
 * collector's. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/options.h"
#include "top.h"

#define PLAIN_HEIGHT 48 /* lines of a block when stdout is not a terminal */

struct top_opts {
  uint64_t interval_ns;
  uint32_t count;
};

static volatile sig_atomic_t got_stop, got_winch;
static struct termios saved;
static int tty_out, tty_in;

static void on_signal(int sig) {
  if (sig == SIGWINCH)
    got_winch = 1;
  else
    got_stop = 1;
}

static void term_restore(void) {
  if (tty_in)
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  if (tty_out)
    fputs("\x1b[?25h\x1b[?1049l", stdout); /* the cursor, the main screen */
  fflush(stdout);
  tty_in = tty_out = 0;
}

static void term_setup(void) {
  struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll wakes */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGWINCH, &sa, NULL);
  if (!isatty(STDOUT_FILENO))
    return;
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
    struct termios raw = saved;
    raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tty_in = tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
  }
  tty_out = 1;
  atexit(term_restore);
  fputs("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J", stdout);
}

static void draw(const char *source, enum top_sort sort, const struct top_sample *prev,
                 const struct top_sample *cur) {
  struct top_screen scr = {source, 80, PLAIN_HEIGHT, 0, sort};
  struct winsize ws;
  if (tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row)
    scr.width = ws.ws_col, scr.height = ws.ws_row;
  scr.footer = tty_out;
  char **lines;
  size_t n = top_view_lines(&scr, prev, cur, &lines);
  if (tty_out)
    fputs("\x1b[H", stdout);
  for (size_t i = 0; i < n; i++)
    printf(tty_out ? "%s\x1b[K%s" : "%s\n", lines[i], i + 1 < n ? "\r\n" : "");
  printf(tty_out ? "\x1b[J" : "\n");
  fflush(stdout);
  top_lines_free(lines, n);
}

struct keys {
  enum top_sort sort;
  int redraw; /* the sort changed */
};

/* A stop signal, or the keyboard's revents (0: none): 1 to quit. */
static int on_input(void *ctx, short revents) {
  struct keys *k = ctx;
  char c;
  if (got_stop || revents & (POLLHUP | POLLERR | POLLNVAL))
    return 1; /* asked to, or the terminal has gone */
  if (!(revents & POLLIN) || read(STDIN_FILENO, &c, 1) != 1)
    return 0;
  if (c == 'q' || c == 'Q')
    return 1;
  enum top_sort s = c == 'm'   ? TOP_SORT_MEMORY
                    : c == 'g' ? TOP_SORT_GPU
                    : c == 'l' ? TOP_SORT_LAUNCHES
                               : k->sort;
  k->redraw |= s != k->sort;
  k->sort = s;
  return 0;
}

/* Sleep until `until` (CLOCK_MONOTONIC s), handling keys: 1 to quit. */
static int wait_keys(double until, struct keys *k) {
  for (;;) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = until - ((double)now.tv_sec + (double)now.tv_nsec / 1e9);
    if (on_input(k, 0))
      return 1;
    if (got_winch || k->redraw || left <= 0)
      return 0;
    struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
    int r = poll(&pfd, tty_in ? 1 : 0, (int)(left * 1000) + 1);
    if (r > 0 && on_input(k, pfd.revents))
      return 1;
  }
}

static int run(const char *source, const struct top_opts *o) {
  struct top_sample a = {0}, b = {0}, *old = &a, *last = &b; /* last: the newest */
  char err[512];
  int rc = top_fetch(source, last, NULL, err, sizeof err);
  if (rc != TOP_OK) {
    if (rc == TOP_GONE)
      fprintf(stderr,
              "gputrace top: nothing serves %s (start the program with gputrace record "
              "--prometheus %s)\n",
              source, source);
    else
      fprintf(stderr, "gputrace top: %s\n", err);
    top_sample_free(last);
    return 2;
  }
  term_setup();
  struct keys k = {TOP_SORT_MEMORY, 0};
  struct top_input in = {tty_in ? STDIN_FILENO : -1, on_input, &k};
  unsigned shown = 0;
  int status = 0;
  while (!o->count || shown < o->count) {
    if (wait_keys(last->t + (double)o->interval_ns / 1e9, &k))
      break;
    if (k.redraw || got_winch) {
      k.redraw = got_winch = 0;
      if (shown && tty_out)
        draw(source, k.sort, old, last); /* the same figures, sorted or fitted anew */
      continue;
    }
    top_sample_free(old);
    rc = top_fetch(source, old, &in, err, sizeof err);
    if (rc == TOP_STOP)
      break;
    if (rc != TOP_OK) {
      term_restore();
      if (rc == TOP_GONE)
        printf("gputrace top: %s has gone: the traced program finished (%u samples "
               "shown)\n",
               source, shown);
      else
        fprintf(stderr, "gputrace top: %s\n", err), status = 2;
      break;
    }
    struct top_sample *t = old;
    old = last, last = t;
    draw(source, k.sort, old, last);
    k.redraw = 0; /* a key read during the fetch: drawn with it */
    shown++;
  }
  top_sample_free(old);
  top_sample_free(last);
  term_restore();
  return status;
}

int cmd_top(int argc, char **argv) {
  struct top_opts o = {.interval_ns = 1000000000ull};
  struct gt_option opts[] = {
      {.name = "interval",
       .type = GT_OPTION_DURATION,
       .arg = "DURATION",
       .help = "time between samples, 100ms to 1h (default 1s)",
       .value = GT_OPT_VALUE_PTR(&o.interval_ns, uint64_t),
       .min = 100000000ull,
       .max = 3600000000000ull},
      GT_OPT_UINT32('n', "iterations", &o.count, "N",
                    "stop after N samples (default: until q or the end)"),
      GT_OPT_END,
  };
  const struct gt_command cmd = {
      .prog = "gputrace top",
      .options = opts,
      .args = "ADDR:PORT",
      .min_args = 1,
      .max_args = 1,
      .about = "a live view of a program run with record --prometheus ADDR:PORT",
  };
  int nargs;
  int rc = gt_options_parse(&cmd, argc, argv, &nargs);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  return run(argv[0], &o);
}
