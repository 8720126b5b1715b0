/* cmd_flame.c — `gputrace flame FILE [--leaked | --allocated | --peak | --gpu]
 * [--functions]`
 *
 * Folded stacks for flamegraph.pl and speedscope: one line per stack,
 * "pid N;outermost;...;innermost BYTES", weighted by the bytes still live
 * at the end (--leaked, the default), every allocation's bytes
 * (--allocated), or the bytes live at each process's device-memory peak
 * (--peak); or "pid N;outermost;...;innermost;KERNEL NS", weighted by the GPU
 * time of the kernels (copies, memsets) each launch stack queued (--gpu, the
 * estimates of gpu_attr.h). Frames read "function (file:line)", the file's
 * base name as leaks and report give it, so that calls on different lines
 * are different stacks; "function" alone with --functions, or when the
 * file is unknown. The CUDA runtime's frames and the code nvcc puts
 * between a launch and the user's line (gt_glue_frames) are left out.
 * Names are made safe (gt_text_clean) and carry no ';'. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpu_attr.h"
#include "leaks.h"
#include "notices.h"
#include "progress.h"
#include "session.h"
#include "shared_options.h"
#include "util.h"

#define MAX_FRAMES 256

enum weight { LEAKED, ALLOCATED, PEAK, GPU };

/* Names go between ';' and before the count: no ';', no newline (a
 * control byte, which gt_text_clean replaces). */
static void put_name(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = gt_text_clean(gt_xcalloc(n, 1), n, s);
  for (const char *p = c; *p; p++)
    putchar(*p == ';' ? ':' : *p);
  free(c);
}

static void put_frame(const struct gt_frame *f, int functions) {
  put_name(f->function);
  if (functions || !f->file[0])
    return;
  printf(" (");
  put_name(gt_base_name(f->file));
  if (f->line)
    printf(":%u", f->line);
  putchar(')');
}

/* "pid N;outermost;...;innermost", glue left out unless it is all. */
static void fold_frames(uint32_t pid, const struct gt_frame *f, int n, int functions) {
  int users = 0;
  char glue[MAX_FRAMES] = {0};
  for (int i = 0, k; i < n; i += k ? k : 1) {
    k = gt_glue_frames(f, n, i);
    memset(glue + i, 1, (size_t)k);
    users += !k;
  }
  printf("pid %u", pid);
  if (n == 0)
    printf(";[no stack]");
  for (int i = n - 1; i >= 0; i--) {
    if (glue[i] && users)
      continue;
    putchar(';');
    put_frame(&f[i], functions);
  }
}

static void fold_stack(struct gt_symtab *st, uint32_t pid, uint32_t stack,
                       int functions) {
  struct gt_frame f[MAX_FRAMES];
  int n = stack ? gt_symtab_stack(st, pid, stack, f, MAX_FRAMES) : 0;
  fold_frames(pid, f, n, functions);
}

static void fold(const struct gt_leaks *l, const struct gt_group *g, int functions) {
  fold_stack(l->symtab, g->pid, g->stack_id, functions);
  printf(" %" PRIu64 "\n", g->bytes);
}

static void on_gpu_record(void *ctx, const struct gt_event *ev) {
  void **a = ctx;
  gt_gpu_attr_feed(a[0], gt_session_model(a[1]), ev->rec);
}

/* --gpu: one line per (launch stack, kernel), in ns of GPU time. */
static int fold_gpu(const char *path, int no_wait, int functions) {
  char err[512];
  struct gt_session_opts so = {.path = path,
                               .layers = GT_LAYER_SYMBOLS | GT_LAYER_GRAPHS,
                               .threads = -1,
                               .no_wait = no_wait};
  struct gt_progress pg;
  gt_progress_watch(&pg, "gputrace flame", 0, &so);
  struct gt_session *s = gt_session_open(&so, err, sizeof err);
  if (!s) {
    fprintf(stderr, "gputrace flame: %s\n", err);
    return 2;
  }
  struct gt_gpu_attr g;
  gt_gpu_attr_init(&g);
  void *ctx[2] = {&g, s};
  struct gt_tool tool = {.ctx = ctx};
  gt_tool_kinds(&tool, GT_GPU_ATTR_KINDS, on_gpu_record);
  gt_session_run(s, &tool);
  gt_progress_done(&pg);
  gt_notice_no_cuda("gputrace flame", path, s);
  gt_gpu_attr_finish(&g);
  struct gt_symtab *st = gt_model_symtab(gt_session_model(s));
  for (size_t i = 0; i < g.nsites; i++) {
    const struct gt_gpu_site *x = &g.sites[i];
    if (x->gpu_ns < 0.5)
      continue; /* untimed work has no weight here */
    struct gt_frame f[MAX_FRAMES];
    fold_frames(x->pid, f, gt_gpu_site_frames(x, st, f, MAX_FRAMES), functions);
    putchar(';');
    put_name(g.names.strs[x->name]);
    printf(" %.0f\n", x->gpu_ns);
  }
  int damaged = gt_session_damaged(s);
  gt_gpu_attr_free(&g);
  gt_session_close(s);
  return damaged ? 3 : 0;
}

int cmd_flame(int argc, char **argv) {
  int w = LEAKED, nargs, functions = 0;
  struct gt_leaks_opts lo = {.cmd = "gputrace flame"};
  const struct gt_option options[] = {
      GT_OPT_SET(0, "leaked", &w, LEAKED, "bytes still allocated at the end (default)"),
      GT_OPT_SET(0, "allocated", &w, ALLOCATED, "bytes of every allocation"),
      GT_OPT_SET(0, "peak", &w, PEAK, "bytes live at each process's device-memory peak"),
      GT_OPT_SET(0, "gpu", &w, GPU, "GPU time of the work each launch stack queued"),
      GT_OPT_FLAG(0, "functions", &functions,
                  "frames by function alone, without their file:line"),
      GT_OPT_NO_WAIT(&lo.no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd = GT_TRACE_COMMAND(
      "flame", options, "folded stacks for flamegraph.pl and speedscope");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  const char *path = argv[0];
  if (w == GPU) {
    int rc = fold_gpu(path, lo.no_wait, functions);
    return rc == 2 ? 2 : gt_exit_status("gputrace flame", rc == 3, rc);
  }
  struct gt_leaks l;
  char err[512];
  if (gt_leaks_run(path, &lo, &l, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace flame: %s\n", err);
    gt_leaks_free(&l);
    return 2;
  }
  gt_notice_no_cuda("gputrace flame", path, l.session);
  if (w == LEAKED)
    for (size_t i = 0; i < l.nleaks; i++)
      fold(&l, &l.leaks[i], functions);
  else if (w == ALLOCATED)
    for (size_t i = 0; i < l.nallocated; i++)
      fold(&l, &l.allocated[i], functions);
  else
    for (size_t p = 0; p < l.nprocs; p++)
      for (size_t i = 0; i < l.procs[p].nat_peak; i++)
        fold(&l, &l.procs[p].at_peak[i], functions);
  int damaged = l.damaged;
  gt_leaks_free(&l);
  return gt_exit_status("gputrace flame", damaged, 0);
}
