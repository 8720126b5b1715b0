/* cupti_int.h — state shared by the stand-in libcupti's files: cupti_api.c
 * (entry points, subscription, kinds, external correlation, clocks),
 * cupti_records.c (activity records, buffers, flushing, the worker) and
 * cupti_kineto.c (the late-Kineto knob).
 *
 * Locking: cs.mu guards everything below that is not a thread-local; it is
 * never held while a client callback (buffer request/complete, timestamp)
 * runs, nor across a call into the runtime.
 */
#ifndef GPUTRACE_STANDIN_CUPTI_INT_H
#define GPUTRACE_STANDIN_CUPTI_INT_H

#include <cupti.h>
#include <pthread.h>
#include <stdint.h>

#include "attach.h"

#define CS_API __attribute__((visibility("default")))
#define CS_KINDS 64
#define CS_EXT_KINDS CUPTI_EXTERNAL_CORRELATION_KIND_SIZE
#define CS_EXT_DEPTH 64

/* The fault knobs (GPUTRACE_STANDIN_CUPTI_*, docs/standin.md). */
struct cs_knobs {
  uint32_t zero_every;    /* every Nth device record 0/0 */
  uint32_t reverse_every; /* every Nth device record end < start */
  uint32_t drop_every;    /* every Nth device record dropped (counted) */
  int order;              /* 0 thread buffers first, 1 device first, 2 shuffled */
  int nsys;               /* a subscriber exists from load */
  int64_t clock_step_ns;  /* CLOCK_REALTIME steps by this ... */
  uint32_t clock_step_at; /* ... after this many device records */
  uint32_t kineto_at;     /* a late Kineto session after this many (cupti_kineto.c) */
  uint32_t stall_every;   /* every Nth cuptiGetTimestamp stalls 5 ms first */
};

/* A buffer the client lent: records are appended until full. */
struct cs_buf {
  uint8_t *p;
  size_t size, used, max_records, nrecords;
};

/* A device operation not written yet (its end is in the future). */
struct cs_op {
  uint32_t corr;
  struct si_cupti_op op;
};

struct cs_thread; /* cupti_records.c */

struct cs_state {
  pthread_mutex_t mu;
  int attach_state; /* 0 not tried, 1 attached, -1 no stand-in timeline */
  const struct si_cupti_table *table;
  int subscribed;
  CUpti_BuffersCallbackRequestFunc request;
  CUpti_BuffersCallbackCompleteFunc complete;
  CUpti_TimestampCallbackFunc ts_cb;
  uint64_t ts_m0, ts_c0; /* CLOCK_MONOTONIC and ts_cb() at registration */
  uint8_t kind_on[CS_KINDS];
  uint8_t *rt_api; /* per runtime cbid: 0 as the kind, 1 on, 2 off */
  uint32_t next_corr;
  uint64_t dropped;
  uint64_t device_records; /* written, for the knobs */
  struct cs_op *pending;
  size_t npending, cap_pending;
  struct cs_buf device; /* device records (the device buffer) */
  struct cs_thread *threads;
  struct cs_buf *ready; /* full or flushed buffers to deliver */
  size_t nready, cap_ready;
  int worker; /* 0 none, 1 running, 2 stop */
  struct cs_knobs knobs;
};
extern struct cs_state cs;

/* cupti_api.c */
int cs_attached(void);      /* 1 when a stand-in timeline is attached */
uint64_t cs_host_now(void); /* a host timestamp: ts_cb or CLOCK_REALTIME */
/* A device operation's CLOCK_MONOTONIC times, converted to CUPTI's clock. */
void cs_device_ts(uint64_t mono_start, uint64_t mono_end, uint64_t *start, uint64_t *end);
int cs_runtime_cbid(const char *api);
int cs_api_collected(int cbid); /* cs.mu held */
/* The external ids on top of this thread's stacks: ids[k] for kind k, 0
 * when empty. */
void cs_ext_tops(uint64_t ids[CS_EXT_KINDS]);

/* cupti_records.c */
extern const struct si_cupti_client cs_client;
size_t cs_record_size(uint32_t kind); /* 0: not a kind the stand-in writes */
void cs_start_worker_locked(void);
CUptiResult cs_flush(uint32_t flag);
void cs_knobs_load(void);

/* cupti_kineto.c */
void cs_kineto_maybe_start_locked(void);
void cs_kineto_ext(uint64_t ids[CS_EXT_KINDS]); /* its CUSTOM0/1 ids, while on */

#endif
