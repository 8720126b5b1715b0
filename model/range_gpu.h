/* range_gpu.h — the GPU time of NVTX ranges: the device time of the work
 * each range's own thread queued while it was open (Nsight Systems' NVTX
 * GPU projection). The one rule; report, html, export, the collector's
 * /metrics and top all use it (docs/report.md, "A request's GPU time").
 *
 * Contract:
 *  - A range occurrence is opened (gt_rgpu_open: its process, thread and a
 *    caller's value) and closed (gt_rgpu_close) by the caller as its NVTX
 *    layer reports them; push ranges are kept per thread, nested: a work
 *    call counts for every occurrence open on its thread when it was made
 *    (the outer range includes the inner), deepest GT_RGPU_DEPTH of them.
 *    Start/end ranges are opened on the thread that started them and count
 *    that thread's work the same way.
 *  - Work calls (gt_rgpu_call): launches (a graph launch included), copies
 *    and memsets with a correlation id that succeeded and ran (not a
 *    captured or added graph node, not a node record made from a graph
 *    launch: its launch was the call). Each is remembered by (pid, tid,
 *    corr) among the last `ring` such calls.
 *  - Device records (gt_rgpu_device): every DEVICE record as measured —
 *    a kernel's, copy's or memset's, a graph launch's span, or a graph
 *    node's own record (CUPTI) — but not the apportioned shares of a graph
 *    launch's span (GT_F_GRAPH_RUN with GT_F_ESTIMATED: the span counted).
 *    Its duration, times its sample (1 in N), goes to each occurrence its
 *    call was made in (the `add` callback). A call's entry is released at
 *    its first DEVICE record, a graph launch's when the ring comes round
 *    (its nodes may have a record each). DEVICE records may come before
 *    their call in file order (a synchronous copy's; work that ended while
 *    the calling thread, preempted, had not yet written its call): the
 *    last 4,096 calls' such records wait, a call's summed, for it.
 *  - An occurrence is done (the `done` callback, with its total) once it
 *    closed and no remembered call refers to it; gt_rgpu_flush ends every
 *    one (open ones too, in no order) at the end of a trace.
 *  - Work whose DEVICE record never comes (untimed, sampled out, lost, or
 *    more than `ring` calls late) adds nothing; gt_rgpu_late counts calls
 *    that left the ring unmatched. Device time that overlaps other
 *    streams' or threads' work counts in full for the range that queued it.
 *  - Memory: the ring, the open occurrences and those still referred to.
 */
#ifndef GPUTRACE_MODEL_RANGE_GPU_H
#define GPUTRACE_MODEL_RANGE_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"

#define GT_RGPU_DEPTH 8
#define GT_RGPU_RING_DEFAULT 65536

struct gt_rgpu_hooks {
  void *ctx;
  /* ns of device time for the occurrence opened with `user` (may be NULL) */
  void (*add)(void *ctx, uint64_t user, double ns);
  /* the occurrence is done: its GPU time in all (may be NULL) */
  void (*done)(void *ctx, uint64_t user, double gpu_ns);
};

struct gt_rgpu;

struct gt_rgpu *gt_rgpu_new(size_t ring, const struct gt_rgpu_hooks *hooks);
void gt_rgpu_free(struct gt_rgpu *g);
/* An occurrence opens on (pid, tid): its handle (never 0). */
uint64_t gt_rgpu_open(struct gt_rgpu *g, uint32_t pid, uint32_t tid, uint64_t user);
void gt_rgpu_close(struct gt_rgpu *g, uint64_t handle);
/* Whether a call record is work that gt_rgpu_call remembers (see above). */
int gt_rgpu_is_work(const struct gt_record *call);
void gt_rgpu_call(struct gt_rgpu *g, const struct gt_record *call);
/* Whether a DEVICE record counts (see above). */
int gt_rgpu_counts(const struct gt_record *dev);
void gt_rgpu_device(struct gt_rgpu *g, const struct gt_record *dev);
void gt_rgpu_flush(struct gt_rgpu *g);
uint64_t gt_rgpu_late(const struct gt_rgpu *g);

#endif
