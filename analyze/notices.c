/* notices.c — see notices.h. */
#include "notices.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/trace_file.h"
#include "model.h"
#include "stats.h"

/* Why a trace can hold no CUDA call, most likely first, each with what to
 * try (docs/cli.md, "Nothing recorded"). */
static void say_no_cuda(const char *cmd, const char *path) {
  fprintf(
      stderr,
      "%s: warning: no CUDA calls were recorded in %s\n"
      "  likely causes:\n"
      "  - the program links the CUDA runtime statically (nvcc's default,\n"
      "    libcudart_static) and no CUDA driver was loaded: rebuild it with\n"
      "    `nvcc -cudart shared` (`ldd PROGRAM | grep cudart` prints nothing\n"
      "    when static)\n"
      "  - the program never reached CUDA: it failed or exited first (see its output)\n"
      "  - the CUDA runtime was loaded from an unusual path: `LD_DEBUG=libs PROGRAM\n"
      "    2>&1 | grep -i cuda` shows which CUDA libraries it loaded, from where\n",
      cmd, path);
}

int gt_notice_no_cuda(const char *cmd, const char *path, struct gt_session *s) {
  const struct gt_model_totals *t = gt_model_totals(gt_session_model(s));
  if (t->cuda_calls)
    return 0;
  if (t->window_from_ns) /* the program was traced: it was quiet then */
    fprintf(stderr,
            "%s: note: no CUDA call in %s: the flight recorder's window it was cut to "
            "(snapshot --last) holds none\n",
            cmd, path);
  else
    say_no_cuda(cmd, path);
  return 1;
}

int gt_trace_has_cuda_call(const char *path, uint64_t *read) {
  char err[512];
  *read = 0;
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  if (!r)
    return -1;
  gt_reader_set_quiet(r, 1);
  int found = 0;
  for (const struct gt_record *rec; !found && gt_reader_next(r, &rec) == 1; (*read)++)
    found = gt_record_cuda_calls(rec) > 0;
  gt_reader_close(r);
  return found;
}

int gt_notice_no_cuda_file(const char *cmd, const char *path) {
  uint64_t read;
  if (gt_trace_has_cuda_call(path, &read) != 0)
    return 0; /* a CUDA call, or the collector said what went wrong with it */
  say_no_cuda(cmd, path);
  return 1;
}

static void print_pids(const struct gt_model *m) {
  size_t n;
  const uint32_t *p = gt_model_pids(m, &n);
  if (!n) {
    fputs("no process", stderr);
    return;
  }
  fprintf(stderr, "pid%s", n == 1 ? "" : "s");
  for (size_t i = 0; i < n && i < 8; i++)
    fprintf(stderr, "%s %" PRIu32, i ? "," : "", p[i]);
  if (n > 8)
    fprintf(stderr, ", ... (%zu in all)", n);
}

static int has_pid(const struct gt_model *m, uint32_t pid) {
  size_t n;
  const uint32_t *p = gt_model_pids(m, &n);
  for (size_t i = 0; i < n; i++)
    if (p[i] == pid)
      return 1;
  return 0;
}

int gt_notice_window(const char *cmd, uint64_t from_ns, uint64_t to_ns) {
  if (to_ns > from_ns)
    return 1;
  fprintf(stderr, "gputrace %s: --to must be later than --from\n", cmd);
  return 0;
}

int gt_notice_filter(const char *cmd, const char *path, struct gt_session *s,
                     const struct gt_filter *f) {
  const struct gt_model *m = gt_session_model(s);
  const struct gt_model_totals *t = gt_model_totals(m);
  uint64_t origin = gt_session_origin(s);
  uint64_t first = t->first_ns > origin ? t->first_ns - origin : 0;
  uint64_t last = t->last_ns > origin ? t->last_ns - origin : 0;
  int bad_pid = f->has_pid && !has_pid(m, f->pid);
  /* a trace without timed calls has no span to miss: it has no data */
  int bad_window = t->last_ns && (f->from_ns > last || f->to_ns <= first);
  if (!bad_pid && !bad_window)
    return 0;
  char a[32], b[32];
  if (bad_pid)
    fprintf(stderr, "%s: --pid %" PRIu32 " matches nothing in %s", cmd, f->pid, path);
  else if (f->to_ns == UINT64_MAX)
    fprintf(stderr, "%s: --from %s matches nothing in %s", cmd,
            gt_fmt_ns(a, sizeof a, f->from_ns), path);
  else
    fprintf(stderr, "%s: --from %s --to %s matches nothing in %s", cmd,
            gt_fmt_ns(a, sizeof a, f->from_ns), gt_fmt_ns(b, sizeof b, f->to_ns), path);
  fputs(": it holds ", stderr);
  print_pids(m);
  if (t->last_ns)
    fprintf(stderr, "; its calls span +%s .. +%s\n", gt_fmt_ns(a, sizeof a, first),
            gt_fmt_ns(b, sizeof b, last));
  else
    fputs("; no timed calls\n", stderr);
  return 2;
}

uint64_t gt_notice_stacks_lost(uint64_t n, char *buf, size_t len) {
  if (len)
    buf[0] = '\0';
  if (n && len)
    snprintf(buf, len,
             "%" PRIu64 " call%s stack%s not recorded: the process passed its cap of "
             "distinct stacks (GPUTRACE_STACK_CAP, 1,048,576 unless lowered)",
             n, n == 1 ? "'s" : "s'", n == 1 ? " was" : "s were");
  return n;
}

int gt_color_option(const struct gt_option *o, const char *arg, char *want, size_t len) {
  static const char *const names[] = {"auto", "always", "never"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(arg, names[i])) {
      *(int *)o->value = i;
      return 0;
    }
  snprintf(want, len, "auto, always or never");
  return -1;
}

int gt_color_choose(int when, FILE *f) {
  if (when != GT_COLOR_AUTO)
    return when == GT_COLOR_ALWAYS;
  const char *no = getenv("NO_COLOR");
  return !(no && *no) && isatty(fileno(f));
}

int gt_exit_status(const char *cmd, int damaged, int otherwise) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: writing output: %s\n", cmd, strerror(errno));
    return 2;
  }
  return damaged ? 3 : otherwise;
}
