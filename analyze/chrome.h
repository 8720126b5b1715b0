/* chrome.h — the state of one `gputrace chrome` export, shared by
 * cmd_chrome.c (options, the record loop), chrome_events.c (one JSON event
 * per trace event) and chrome_tracks.c (which track each slice goes on).
 *
 * Contract:
 *  - Times inside the exporter are int64 nanoseconds from the trace start
 *    (the first record's ts_ns, the zero `dump` uses too); records earlier
 *    than that are clamped to 0 and counted.
 *  - Every slice written on one track nests perfectly: two X events on a
 *    (pid, tid) are disjoint or one contains the other, and when two start
 *    at the same instant the enclosing one comes first in the file (the
 *    tie-break Perfetto and chrome://tracing use). The track code moves a
 *    start or an end by the few nanoseconds needed when the clock gave equal
 *    or crossing stamps, and counts it.
 *  - Memory is bounded by threads, processes, streams, open NVTX ranges,
 *    kernel names and device work in flight — never by the number of events.
 */
#ifndef GPUTRACE_ANALYZE_CHROME_H
#define GPUTRACE_ANALYZE_CHROME_H

#include <stdint.h>

#include "chrome_out.h"
#include "gputrace/schema.h"
#include "model.h"
#include "session.h"
#include "util.h"

/* Synthetic tids (NVTX start/end lanes, device streams) start above any
 * Linux tid (pid_max <= 2^22) and are unique across processes: Perfetto
 * treats a tid seen under a second pid as a new thread. */
#define CH_SYNTH_TID_BASE 0x40000000u

struct ch_lane {
  int64_t end; /* end of the last slice placed on it */
  uint32_t tid;
  uint8_t named;
};

/* Tracks whose slices must not overlap at all: the first whose last slice
 * ended by the new slice's start takes it; a new lane when none does. */
struct ch_lanes {
  struct ch_lane *v;
  uint32_t n, cap;
};

struct ch_name { /* a JSON string literal, ready to copy */
  size_t len;
  char s[];
};

struct ch_open { /* a push/pop range open on a thread */
  uint64_t domain;
  int64_t start;   /* placed start */
  int64_t max_end; /* latest end of anything placed inside it */
};

struct ch_flowslot { /* one side of a host call -> device work arrow */
  uint32_t corr;
  uint8_t side; /* 0 empty, 1 host call seen, 2 device work seen */
  uint8_t written;
  uint8_t kind; /* launch, memcpy or memset: the category of both slices */
  uint32_t dev_tid;
  int64_t ts;
};

struct ch_thread {
  uint32_t pid, tid;
  int64_t floor; /* earliest start for the next slice at the current level */
  struct ch_open *stack;
  uint32_t depth, cap;
  uint8_t named;
  uint8_t head_len;
  char head[48]; /* ,"pid":P,"tid":T,"ts":  — written with every event,
                    copied whole (fixed size), advanced by head_len */
  /* Arrows waiting for their other end, by corr (sequential per thread, so
   * this is walked in order). It grows when device work is reported later
   * than the table reaches back: bounded by work in flight, not events. */
  struct ch_flowslot *flows;
  uint32_t flow_mask;
};

struct ch_proc {
  uint32_t pid;
  uint32_t sort;        /* order of first appearance */
  uint8_t named;        /* 0 not yet, 1 without a command line, 2 with it */
  uint8_t primed;       /* memory counters written at the window start */
  struct ch_lanes nvtx; /* start/end ranges */
  uint64_t dropped, lost;
};

struct ch_devtrack { /* one stream of one device in one process */
  uint32_t pid;
  int32_t device;
  uint64_t stream;
  struct ch_lanes lanes; /* lane 0: the stream; others: overlapping work */
  /* the last graph launch's span: its nodes' shares go on its lane, inside it */
  uint32_t graph_lane;
  int64_t graph_s, graph_e;
};

struct chrome {
  struct co_out out;
  struct gt_session *session;
  struct gt_model *model; /* the session's */
  uint64_t base_ns;       /* the session's origin */
  uint64_t exported;      /* records of the export (the --pid process's) */
  int hw_named;           /* pid 0, the hardware counters' process, has its name */
  int has_pid;
  uint32_t pid;
  int64_t from, to; /* window, ns from the trace start */
  struct gt_map threads, procs, devtracks, names;
  struct ch_thread *last_thread; /* records come in runs per thread */
  uint32_t next_tid;
  uint64_t next_flow;
  uint64_t events, adjusted, clamped, overflow, flows_done;
  /* "\"cudaMalloc\"" ...: fixed-size, so the hot path copies a constant
   * 48 bytes and advances by the length. */
  char api_json[GT_API_COUNT][48];
  uint8_t api_len[GT_API_COUNT];
};

/* ---- chrome_tracks.c ---- */
int ch_init(struct chrome *ch);
void ch_free(struct chrome *ch);
struct ch_proc *ch_proc(struct chrome *ch, uint32_t pid);
struct ch_thread *ch_thread(struct chrome *ch, uint32_t pid, uint32_t tid);
struct ch_devtrack *ch_devtrack(struct chrome *ch, uint32_t pid, int32_t device,
                                uint64_t stream);
int64_t ch_rel(struct chrome *ch, uint64_t ts_ns);
/* Exported: starts before --to and ends at or after --from (so slices that
 * span the window's edges are kept whole); an instant at t: from <= t < to. */
static inline int ch_in_window(const struct chrome *ch, int64_t start, int64_t end) {
  return start < ch->to && end >= ch->from;
}

/* Start a JSON event (the separator); every event goes through it. */
void ch_event(struct chrome *ch);
/* Metadata (M events) the first time a track or process is written to. */
void ch_name_proc(struct chrome *ch, struct ch_proc *p);
void ch_name_thread(struct chrome *ch, struct ch_thread *th);
void ch_name_lane(struct chrome *ch, uint32_t pid, struct ch_lane *lane, const char *name,
                  uint32_t sort);

/* Placement on a thread track. ch_call adjusts [*s, *e) so it nests;
 * ch_push opens a range; ch_pop closes the latest open range of `domain`:
 * 1 with the placed [*s, *e) when it nests on the thread, 0 when ranges of
 * two domains cross (the caller puts it on a lane), -1 when none is open.
 * ch_instant returns where a zero-length event at t goes. */
void ch_call(struct chrome *ch, struct ch_thread *th, int64_t *s, int64_t *e);
void ch_push(struct chrome *ch, struct ch_thread *th, uint64_t domain, int64_t t);
int ch_pop(struct chrome *ch, struct ch_thread *th, uint64_t domain, int64_t t,
           int64_t *s, int64_t *e);
int64_t ch_instant(const struct ch_thread *th, int64_t t);
/* Lane for [s, e): returns its index (new lanes get a synthetic tid). */
uint32_t ch_lane_pick(struct chrome *ch, struct ch_lanes *l, int64_t s, int64_t e);

/* Flow arrows host call -> device work, matched on (pid, tid, corr) in
 * either order. ts is the start of that side's slice, `written` whether it
 * was exported, kind its category (the same on both sides). */
void ch_flow_host(struct chrome *ch, struct ch_thread *th, uint32_t corr, unsigned kind,
                  int64_t ts, int written);
/* The start of the host call `corr` when its arrow waits for its device
 * side, else INT64_MIN. */
int64_t ch_flow_host_ts(struct ch_thread *th, uint32_t corr);
void ch_flow_device(struct chrome *ch, struct ch_thread *th, uint32_t corr, unsigned kind,
                    uint32_t dev_tid, int64_t ts, int written);

/* ---- chrome_events.c ---- */
/* One record as shown (gt_event_record) and the NVTX range it completed
 * (NULL: none). */
void ch_record(struct chrome *ch, const struct gt_record *r, const struct gt_range *rng);
void ch_finish(struct chrome *ch); /* ranges still open when the trace ends */
/* Before the model sees a process's first record in the window: memory
 * counters at the window start, at the level they had then. */
void ch_prime(struct chrome *ch, const struct gt_record *r);

#endif
