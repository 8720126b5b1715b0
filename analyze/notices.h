/* notices.h — what every trace-reading command says when the trace cannot
 * answer what was asked: no CUDA calls at all, or a --pid/--from/--to that
 * selects nothing the trace holds; and whether text may be coloured. One
 * text for each, here, so every command says it alike.
 *
 * Contract:
 *  - gt_notice_no_cuda: after a session has run, when its model counted no
 *    CUDA call (model.h, gt_model_totals.cuda_calls: NVTX alone is not
 *    CUDA), prints on stderr "CMD: warning: no CUDA calls were recorded in
 *    PATH" with the likely causes and what to try, and returns 1; else 0.
 *  - gt_notice_filter: after a session has run, 0 when the filter can
 *    match (no --pid, or a pid whose start the trace recorded; a window
 *    that overlaps the span of the trace's calls (NVTX included), or a
 *    trace without any); else prints on stderr "CMD: --pid P matches nothing in PATH: it
 *    holds pids A, B; its calls span +X .. +Y" (or "--from T .. --to U
 *    matches nothing") and returns 2, the exit status of bad usage.
 *  - gt_notice_window: before reading, 1 when --from and --to make a
 *    window (to later than from); else prints "gputrace CMD: --to must be
 *    later than --from" and returns 0 (the command exits 2).
 *  - gt_notice_stacks_lost: given the calls whose stack the shim could not
 *    keep (DROP records of kind stack: past GPUTRACE_STACK_CAP distinct
 *    stacks; dropped_by_kind[GT_KIND_STACK]), returns them and puts in buf
 *    "N calls' stacks were not recorded: the process passed its
 *    cap of distinct stacks (GPUTRACE_STACK_CAP, 1,048,576 unless lowered)";
 *    0 and an empty buf when none. leaks, report and pprof say it.
 *  - gt_exit_status: a trace-reading command's last word: stdout flushed
 *    and checked (a write error, e.g. a full disk or a closed pipe: "CMD:
 *    writing output: <error>" and 2), then 3 for a damaged trace (what
 *    could be read was printed), else `otherwise` (the command's own 0 or
 *    1). Every command ends through it, so these codes mean one thing.
 *  - gt_color_choose: whether a command's text on `f` is coloured, from its
 *    --color choice (GT_COLOR_*): always and never as said; auto colours a
 *    terminal unless NO_COLOR is set to a non-empty value (no-color.org).
 */
#ifndef GPUTRACE_ANALYZE_NOTICES_H
#define GPUTRACE_ANALYZE_NOTICES_H

#include <stdint.h>
#include <stdio.h>

#include "gputrace/options.h"
#include "session.h"

int gt_notice_no_cuda(const char *cmd, const char *path, struct gt_session *s);
int gt_exit_status(const char *cmd, int damaged, int otherwise);
/* The same for a trace not yet read (`record`, at its end): read up to its
 * first CUDA call (gt_trace_has_cuda_call), not through a whole run's
 * trace; nothing is said of a trace it cannot open. */
int gt_notice_no_cuda_file(const char *cmd, const char *path);
/* 1 when the trace at path holds a CUDA call (model.h's cuda_calls: NVTX
 * is not), read in file order and no further than the record that shows
 * it; 0 when none; -1 when it cannot be opened. *read: records read. */
int gt_trace_has_cuda_call(const char *path, uint64_t *read);

struct gt_filter {
  int has_pid;
  uint32_t pid;
  uint64_t from_ns, to_ns; /* relative to the origin; to_ns UINT64_MAX: the end */
};
int gt_notice_filter(const char *cmd, const char *path, struct gt_session *s,
                     const struct gt_filter *f);
int gt_notice_window(const char *cmd, uint64_t from_ns, uint64_t to_ns);

uint64_t gt_notice_stacks_lost(uint64_t n, char *buf, size_t len);

enum { GT_COLOR_AUTO, GT_COLOR_ALWAYS, GT_COLOR_NEVER };
/* The --color=WHEN option: int *p, one of GT_COLOR_*. */
int gt_color_option(const struct gt_option *o, const char *arg, char *want, size_t len);
#define GT_OPT_COLOR(p)                                                                  \
  GT_OPT_CALLBACK(0, "color", p, gt_color_option, "WHEN",                                \
                  "severities in colour: auto (a tty), always, never")
int gt_color_choose(int when, FILE *f);

#endif
