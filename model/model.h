/* model.h — what every analysis needs to know while streaming a trace: the
 * layers of the session (session.h), which feeds them every record once.
 *
 * Contract:
 *  - Always kept: kernel names (demangled, per process and stub), command
 *    lines, run totals (records, drops, losses, first/last timestamp).
 *  - Layers, chosen at gt_model_new: GT_LAYER_HEAP, the allocation model
 *    (heap.h: live allocations, each free matched once, live and peak bytes
 *    per process and memory kind); GT_LAYER_NVTX, NVTX ranges (nvtx.h);
 *    GT_LAYER_SYMBOLS, stacks and their frames (symtab.h).
 *  - gt_model_feed never changes the record: what the layers learn about it
 *    comes back in the event (the allocation a free matched, the range a pop
 *    completed). gt_event_record shows a free with its allocation's bytes.
 *  - Memory is bounded by live allocations, open ranges, names, processes
 *    and distinct stacks, never by the number of records.
 */
#ifndef GPUTRACE_MODEL_MODEL_H
#define GPUTRACE_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"
#include "heap.h"
#include "nvtx.h"
#include "symtab.h"

#define GT_LAYER_HEAP 1u
#define GT_LAYER_NVTX 2u
#define GT_LAYER_SYMBOLS 4u
/* The session's CUDA graph layer (graphs.h): captured and added nodes are
 * definitions, not work (hidden from the tool), and a graph launch runs its
 * nodes (their records follow it). */
#define GT_LAYER_GRAPHS 8u

/* One record as the tool sees it: the record, read in place (valid during
 * the callback), and what the layers made of it. */
struct gt_event {
  const struct gt_record *rec;
  /* GT_LAYER_HEAP. FREE: how it matched; block: the allocation it freed (or
   * the live one a wrong-kind or failed free named). ALLOC: block is a live
   * allocation at the same address it replaced (its free was not seen).
   * NULL when there is none. */
  enum gt_free_status free_status;
  const struct gt_block *block;
  /* GT_LAYER_NVTX: the range this record completed, or NULL. */
  const struct gt_range *range;
};

struct gt_model_totals {
  uint64_t records, dropped, lost, processes;
  uint64_t first_ns, last_ns; /* over timed records: earliest start, latest end */
  uint64_t last_start_ns;     /* latest start */
  uint64_t dropped_by_kind[GT_KIND_COUNT];
  /* CUDA calls: records of a call kind (gt_kind_is_call) other than NVTX,
   * kept or dropped. NVTX is a library of its own, traced without CUDA, so
   * 0 here means the program's CUDA was not traced at all (every command
   * warns: analyze/notices.h). */
  uint64_t cuda_calls;
  /* A flight recorder's snapshot cut by --last (GT_NOTE_WINDOW): where its
   * window starts; 0 for any other trace. */
  uint64_t window_from_ns;
};

struct gt_model;

struct gt_model *gt_model_new(unsigned layers);
void gt_model_free(struct gt_model *m);
unsigned gt_model_layers(const struct gt_model *m);

/* GT_LAYER_NVTX: called when a range opens (a push or a start); its result
 * is the range's tag (gt_range.tag, and gt_block.range for allocations
 * made inside the outermost push range of a thread). */
void gt_model_set_open_hook(struct gt_model *m, gt_range_open_fn hook, void *ctx);

/* Feed one record; fills *ev (rec included). */
void gt_model_feed(struct gt_model *m, const struct gt_record *rec, struct gt_event *ev);
/* A record the tool does not see (a graph's node, GT_LAYER_GRAPHS): in
 * the run totals only. */
void gt_model_count(struct gt_model *m, const struct gt_record *rec);
/* A record the analyzer made (a graph's memory as a launch allocates it,
 * GT_LAYER_GRAPHS): the layers see it, the run totals do not. */
void gt_model_feed_made(struct gt_model *m, const struct gt_record *rec,
                        struct gt_event *ev);

/* The record as commands show it: a free matched to its allocation carries
 * the allocation's bytes and memory kind (a copy in *scratch); any other
 * record is returned as it is. */
const struct gt_record *gt_event_record(const struct gt_event *ev,
                                        struct gt_record *scratch);

/* Demangled kernel name of a launch (host functions and graphs get "host
 * function 0x..." / "graph 0x..."); gt_model_kernel_of for a kernel named
 * elsewhere (DEVICE records). Valid until gt_model_free. */
const char *gt_model_kernel(struct gt_model *m, const struct gt_record *launch);
const char *gt_model_kernel_of(struct gt_model *m, uint32_t pid, uint64_t kernel,
                               uint32_t flags);
/* 1 when the kernel's name has been seen (gt_model_kernel_of gives it),
 * 0 while it is known by address only. */
int gt_model_kernel_known(const struct gt_model *m, uint32_t pid, uint64_t kernel);
const char *gt_model_cmdline(struct gt_model *m, uint32_t pid); /* "" if unknown */

/* GT_LAYER_HEAP: live and peak bytes of a process per memory kind (enum
 * gt_memory); the peak of device + managed bytes together (what occupies
 * device memory); the memory kind of the live allocation based at ptr, or
 * GT_MEM_UNKNOWN. */
uint64_t gt_model_live_bytes(struct gt_model *m, uint32_t pid, unsigned memory);
uint64_t gt_model_peak_bytes(struct gt_model *m, uint32_t pid, unsigned memory);
uint64_t gt_model_peak_device_total(struct gt_model *m, uint32_t pid);
unsigned gt_model_alloc_memory(const struct gt_model *m, uint32_t pid, uint64_t ptr);
struct gt_heap *gt_model_heap(struct gt_model *m);     /* NULL without the layer */
struct gt_symtab *gt_model_symtab(struct gt_model *m); /* GT_LAYER_SYMBOLS */

const struct gt_model_totals *gt_model_totals(const struct gt_model *m);
/* The CUDA calls one record stands for (what cuda_calls adds up): 1 for a
 * call other than NVTX, a DROP's count of such calls, else 0. */
static inline uint64_t gt_record_cuda_calls(const struct gt_record *r) {
  if (r->flags & GT_F_CARRIED)
    return 0; /* a block live when a rolling file opened: allocated before it */
  if (gt_kind_is_call(r->kind) && r->kind != GT_KIND_NVTX)
    return 1;
  if (r->kind == GT_KIND_DROP && gt_kind_is_call(r->u.count.of_kind) &&
      r->u.count.of_kind != GT_KIND_NVTX)
    return r->u.count.count;
  return 0;
}
/* A record the totals' first_ns, last_ns and last_start_ns are over: a call
 * with a start, not a graph's making replayed at a rolling file's start. */
static inline int gt_record_timed(const struct gt_record *r) {
  return gt_kind_is_call(r->kind) && r->ts_ns && !(r->flags & GT_F_REPLAYED);
}
/* The processes the trace holds: those whose start it recorded or whose
 * calls it holds, in the order seen; *n of them. Valid until the next
 * record is fed. */
const uint32_t *gt_model_pids(const struct gt_model *m, size_t *n);

/* GT_LAYER_NVTX: push ranges open on a thread; ranges still open (see
 * gt_nvtx_open_ranges). */
unsigned gt_model_thread_depth(const struct gt_model *m, uint32_t pid, uint32_t tid);
/* The tag of the outermost push range open on a thread (the session tool's
 * range_open hook gave it), 0 when none is. */
uint64_t gt_model_outer_tag(const struct gt_model *m, uint32_t pid, uint32_t tid);
void gt_model_open_ranges(struct gt_model *m,
                          void (*fn)(void *ctx, const struct gt_range *r), void *ctx);

/* The text of a record (NVTX message, kernel name, command line), valid
 * until the next call. */
const char *gt_model_text(struct gt_model *m, const struct gt_record *rec);

#endif
