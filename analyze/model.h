/* model.h — what every analysis needs to know while streaming a trace.
 *
 * Contract:
 *  - Feed every record, in file order, to gt_model_feed. It keeps per
 *    process: kernel names (demangled), command lines, live allocations
 *    (so frees learn their bytes and memory kind, and live/peak bytes per
 *    memory kind are known), open NVTX ranges; and run totals (records,
 *    drops, losses, first/last timestamp).
 *  - gt_model_feed may rewrite the record: a matched free gets the bytes
 *    and memory of its allocation. It reports a completed NVTX range (a pop
 *    or an end) through *range.
 *  - Memory is bounded by live allocations, open ranges, names and
 *    processes, never by the number of records.
 */
#ifndef GPUTRACE_ANALYZE_MODEL_H
#define GPUTRACE_ANALYZE_MODEL_H

#include <stdint.h>

#include "gputrace/schema.h"

struct gt_model;

struct gt_range {    /* a completed NVTX range */
  uint32_t pid, tid; /* tid of the push/start */
  uint64_t start_ns, end_ns;
  int depth; /* 0 = outermost (push/pop ranges); -1 for start/end */
  uint64_t domain;
  const char *name; /* valid until the next gt_model_feed */
  uint64_t tag;     /* what the open hook returned for it (0 without one) */
};

struct gt_model_totals {
  uint64_t records, dropped, lost, processes;
  uint64_t first_ns, last_ns; /* over timed records */
  uint64_t dropped_by_kind[GT_KIND_COUNT];
};

struct gt_model *gt_model_new(void);
void gt_model_free(struct gt_model *m);

/* Optional: `hook` is called when an NVTX range opens (a push or a start,
 * with that record); its result comes back as gt_range.tag when the range
 * completes, so a caller can attach its own state (e.g. counters at the
 * open) without keeping a second range stack. */
void gt_model_set_open_hook(struct gt_model *m,
                            uint64_t (*hook)(void *ctx, const struct gt_record *open),
                            void *ctx);

/* Returns 1 and fills *range when the record completed an NVTX range. */
int gt_model_feed(struct gt_model *m, struct gt_record *rec, struct gt_range *range);

/* Demangled kernel name of a launch record (host functions and graphs get
 * "host function 0x..." / "graph 0x..."); the pointer stays valid until
 * gt_model_free. */
const char *gt_model_kernel(struct gt_model *m, const struct gt_record *launch);
const char *gt_model_cmdline(struct gt_model *m, uint32_t pid); /* "" if unknown */

/* Live and peak bytes of a process per memory kind (enum gt_memory). */
uint64_t gt_model_live_bytes(struct gt_model *m, uint32_t pid, unsigned memory);
uint64_t gt_model_peak_bytes(struct gt_model *m, uint32_t pid, unsigned memory);
/* Peak of device + managed bytes together (what occupies device memory). */
uint64_t gt_model_peak_device_total(struct gt_model *m, uint32_t pid);
/* Memory kind (enum gt_memory) of the live allocation based at ptr, or
 * GT_MEM_UNKNOWN when ptr is not the base of an allocation we saw. */
unsigned gt_model_alloc_memory(const struct gt_model *m, uint32_t pid, uint64_t ptr);

const struct gt_model_totals *gt_model_totals(const struct gt_model *m);

/* Ranges still open (pushes not popped, starts not ended), for a reader
 * that shows them at the end of the trace: fn gets each one with end_ns 0
 * (depth as in a completed range; name valid during the call). */
void gt_model_open_ranges(struct gt_model *m,
                          void (*fn)(void *ctx, const struct gt_range *r), void *ctx);

/* The text of a record (NVTX message, kernel name, command line) — a
 * convenience over gt_record_text with the kind's length field. */
const char *gt_model_text(struct gt_model *m, const struct gt_record *rec);

#endif
