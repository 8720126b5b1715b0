/* range.h — capture ranges (GPUTRACE_CAPTURE_RANGE, `gputrace record
 * --capture-range`): record only between cudaProfilerStart and
 * cudaProfilerStop, or only inside NVTX ranges of one name (range.c).
 *
 * Contract:
 *  - Outside the process's ranges GT_MODE_PAUSED (shim.h) is set: launches
 *    leave the fast form, whose mode comparison fails; a thread outside
 *    its own ranges too (gt_range_paused) has them forwarded untraced by
 *    the general form (gt_range_skips_launch) unless they go into a stream
 *    capture (a graph's definition, kept), gt_emit drops what
 *    gt_range_drops says, and device timing times nothing.
 *  - Kept whatever the range: allocations and frees (memory accounting
 *    stays whole: a block allocated before a range and freed inside it is
 *    no invalid free), captures, graph building and graph nodes (a graph
 *    launched inside a range was usually captured before it), and every
 *    definition (kernel names, stacks, modules). Dropped outside: every
 *    other call and NVTX record. Nothing dropped by the range is counted
 *    as a loss.
 *  - Ranges may repeat and nest. A profiler range, and an NVTX start/end
 *    range of the name (which one thread may start and another end), are
 *    the process's: every thread records while one is open. An NVTX push
 *    range of the name is its thread's (gt_tls_range): that thread records
 *    while it holds one open, and other threads, outside ranges of their
 *    own, record nothing meanwhile — never a part of one of their ranges
 *    (GT_MODE_PAUSED stays set, so every launch takes the general form,
 *    which asks gt_range_paused). The range's own markers
 *    (cudaProfilerStart and Stop, the NVTX push and pop or start and end)
 *    are inside it.
 *  - cudaProfilerStart / Stop are hooked here (GRAPH records without
 *    fields, in every mode).
 */
#ifndef GPUTRACE_RANGE_H
#define GPUTRACE_RANGE_H

#include "gputrace/knobs.h"
#include "shim.h"

extern int gt_range_mode; /* GT_RANGE_* (knobs.h) */

void gt_range_configure(void); /* the constructor, after the knobs */
/* In a child process, whose mode word starts over: GT_MODE_PAUSED again,
 * as the ranges it inherited open say. */
void gt_range_after_fork(void);
void gt_range_open(void);
void gt_range_close(void);
/* The NVTX name of the range mode: 1 when `text` is it. */
int gt_range_nvtx_matches(const char *text, size_t len);
/* While paused: 1 when a launch on `stream` is to go untraced. */
int gt_range_skips_launch(const void *stream, int ptsz) __attribute__((cold));

/* While paused: 1 when gt_emit is to drop `rec`. */
static inline int gt_range_drops(const struct gt_record *rec) {
  if (!gt_kind_is_call(rec->kind))
    return 0;
  if (rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE ||
      rec->kind == GT_KIND_GRAPH)
    return 0;
  return !(rec->flags & (GT_F_CAPTURED | GT_F_NODE));
}

#endif
