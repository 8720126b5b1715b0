/* nvtx.h — NVTX ranges while a trace streams by: the session's NVTX layer.
 *
 * Contract:
 *  - Feed NVTX records in order. Push/pop ranges are kept per thread, all
 *    domains on one stack: a pop closes the latest open push of its domain
 *    on that thread (a pop with none open, as when tracing began inside the
 *    range, is ignored). Start/end ranges are kept per process by range id.
 *  - A pop or an end that closes a range reports it (gt_range); its depth
 *    is the number of ranges of its domain still open under it on the
 *    thread (0: outermost), -1 for start/end ranges.
 *  - An optional hook sees each push and start; what it returns is the
 *    range's tag, given back when the range completes, and, for the
 *    outermost push range open on a thread, by gt_nvtx_outer_tag (what the
 *    session attaches to allocations made inside it).
 *  - Memory: the ranges open, never the ranges seen.
 */
#ifndef GPUTRACE_MODEL_NVTX_H
#define GPUTRACE_MODEL_NVTX_H

#include <stdint.h>

#include "gputrace/schema.h"

struct gt_range {    /* a completed NVTX range */
  uint32_t pid, tid; /* tid of the push/start */
  uint64_t start_ns, end_ns;
  int depth; /* see above */
  uint64_t domain;
  const char *name; /* valid until the next record is fed */
  uint64_t tag;     /* what the open hook returned for it (0 without one) */
};

typedef uint64_t (*gt_range_open_fn)(void *ctx, const struct gt_record *open);

struct gt_nvtx;

struct gt_nvtx *gt_nvtx_new(void);
void gt_nvtx_free(struct gt_nvtx *n);
void gt_nvtx_set_open_hook(struct gt_nvtx *n, gt_range_open_fn hook, void *ctx);
/* An NVTX record and its text: 1 and *done when it completed a range. */
int gt_nvtx_feed(struct gt_nvtx *n, const struct gt_record *r, const char *text,
                 struct gt_range *done);
/* Push ranges open on a thread (all domains). */
unsigned gt_nvtx_depth(const struct gt_nvtx *n, uint32_t pid, uint32_t tid);
/* Tag of the outermost push range open on a thread; 0 when none is. */
uint64_t gt_nvtx_outer_tag(const struct gt_nvtx *n, uint32_t pid, uint32_t tid);
/* Ranges still open, as completed ones with end_ns 0 (name valid during
 * the call): push ranges thread by thread, outermost first, then start/end
 * ranges. */
void gt_nvtx_open_ranges(const struct gt_nvtx *n,
                         void (*fn)(void *ctx, const struct gt_range *r), void *ctx);

#endif
