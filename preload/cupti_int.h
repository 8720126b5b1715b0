/* cupti_int.h — state shared by cupti.c (the CUPTI session: finding
 * libcupti, subscribing, the clock, enabling, the hooks' side, health,
 * yielding) and cupti_parse.c (activity buffers, the join of records to
 * timed calls, DEVICE records, losses).
 *
 * Threads: the hooks (any application thread) write g_cu_meta slots with a
 * seqlock and never lock or allocate; CUPTI's buffer callbacks (its thread,
 * or whoever flushes) only take and hand back preallocated buffers; the
 * resolver thread (and the exit handler, under resolve_mu) parses.
 */
#ifndef GPUTRACE_CUPTI_INT_H
#define GPUTRACE_CUPTI_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "cupti_abi.h"

struct cupti_api {
  int (*version)(uint32_t *);
  int (*timestamp)(uint64_t *);
  int (*subscribe)(void **, void (*)(void *, int, uint32_t, const void *), void *);
  int (*unsubscribe)(void *);
  int (*callback_name)(int, uint32_t, const char **);
  int (*register_callbacks)(void (*)(uint8_t **, size_t *, size_t *),
                            void (*)(void *, uint32_t, uint8_t *, size_t, size_t));
  int (*register_timestamp)(uint64_t (*)(void));
  int (*enable)(int);
  int (*disable)(int);
  int (*enable_runtime_api)(uint32_t, uint8_t);
  int (*enable_driver_api)(uint32_t, uint8_t);
  int (*flush_all)(uint32_t);
  int (*next_record)(uint8_t *, size_t, void **);
  int (*dropped)(void *, uint32_t, size_t *);
  int (*push)(int, uint64_t);
  int (*pop)(int, uint64_t *);
};
extern struct cupti_api gt_cu;

/* A timed call's metadata, under its external id (id % CU_META_SLOTS). */
#define CU_META_SLOTS (1u << 17)
enum { CU_WAITING = 0, CU_MATCHED = 1, CU_LOST = 2, CU_VOID = 3 /* the call failed */ };
struct cu_meta {
  _Atomic uint64_t id;    /* seqlock: 0 while written; the external id */
  _Atomic uint32_t state; /* CU_WAITING, CU_MATCHED, CU_LOST */
  uint32_t tid, corr, flags, sample;
  uint16_t api;
  uint8_t dir, pad;
  uint64_t kernel, stream;
  uint64_t call_ns;   /* CLOCK_MONOTONIC just before the real call */
  uint64_t commit_ns; /* when this slot was written */
};
extern struct cu_meta *g_cu_meta;
extern _Atomic uint64_t g_cu_next_id; /* the next external id */

/* cupti_parse.c */
int gt_cu_buffers_init(void); /* 0 on success; the pool, the join tables */
void gt_cu_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void gt_cu_buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);
/* Parse what was delivered, join, write DEVICE records; count losses (of
 * calls committed before now - age_ns; all when age_ns is 0; last: also
 * past calls still running). Resolver, or exit. */
void gt_cu_parse(uint64_t age_ns, int last);
/* Matched and lost so far (the health window's counters). */
uint64_t gt_cu_matched(void);
uint64_t gt_cu_lost(void);
/* The lost count of a slot overwritten before its activity came. */
void gt_cu_meta_overwritten(struct cu_meta *m);
uint64_t gt_cu_cupti_dropped(void); /* CUPTI's own count of records it lost */
void gt_cu_parse_forget(void);      /* forked child */

#endif
