/* devtime_int.h — state shared by devtime.c (configuration, event pool, the
 * hooks' side, fork, exit, cudaDeviceReset), devtime_resolve.c (the
 * resolver thread, clock anchors, DEVICE records) and cupti.c. Not for
 * hooks: they use devtime.h.
 *
 * Locking: `mu` guards the slot lists and the pending queue and is never
 * held across a CUDA call. `resolve_mu` is held by whoever resolves (the
 * resolver thread, the exit handler) across its CUDA calls, and by
 * cudaDeviceReset around the real reset, so no event is queried while the
 * runtime destroys it. The hot path takes only `mu`, twice, briefly.
 */
#ifndef GPUTRACE_DEVTIME_INT_H
#define GPUTRACE_DEVTIME_INT_H

#include <pthread.h>
#include <string.h>

#include "devtime.h"

#define DT_MAX_DEV 16           /* devices timed; higher ordinals go untimed */
#define DT_DEFAULT_EVENTS 65536 /* GPUTRACE_GPU_TIMING_EVENTS */
#define DT_TOKEN_CUPTI 0x7fffffff
#define DT_MAX_SAMPLE 65536u /* adaptive sampling never times less than 1 in this */

enum dt_mode { DT_MODE_OFF, DT_MODE_AUTO, DT_MODE_EVENTS, DT_MODE_CUPTI };
enum dt_source { DT_SRC_NONE = 0, DT_SRC_EVENTS = 1, DT_SRC_CUPTI = 2 };

/* The real runtime functions devtime calls (resolved with gt_resolve). */
struct dt_cuda {
  cudaError_t (*peek)(void);
  cudaError_t (*get_last)(void);
  cudaError_t (*get_device)(int *);
  cudaError_t (*set_device)(int);
  cudaError_t (*event_create)(cudaEvent_t *, unsigned);
  cudaError_t (*event_destroy)(cudaEvent_t);
  cudaError_t (*event_record)(cudaEvent_t, cudaStream_t);
  cudaError_t (*event_query)(cudaEvent_t);
  cudaError_t (*event_sync)(cudaEvent_t);
  cudaError_t (*elapsed)(float *, cudaEvent_t, cudaEvent_t);
  cudaError_t (*stream_create)(cudaStream_t *, unsigned);
  cudaError_t (*is_capturing)(cudaStream_t, int *); /* may be NULL */
};
extern struct dt_cuda gt_dt_cu;

/* One timed op: a pair of events and what the DEVICE record will say. */
struct dt_slot {
  cudaEvent_t ev[2];   /* start, end */
  int32_t next;        /* free list or pending queue; -1 ends */
  int16_t dev1;        /* device of the events + 1; 0 = none */
  uint8_t ptsz;        /* recorded through the _ptsz entry point */
  uint8_t of_kind;     /* GT_KIND_LAUNCH, MEMCPY, MEMSET */
  uint32_t gen;        /* the device's generation when the events were made */
  const void *stream;  /* as the app passed it */
  uint64_t host_lb;    /* CLOCK_MONOTONIC ns just after the start record */
  uint64_t stream_key; /* 0x1 legacy, 0x2 per-thread, else the handle */
  uint64_t kernel, bytes;
  uint32_t tid, corr, flags;
  uint32_t sample;   /* the 1-in-N this op was timed at (DEVICE record) */
  uint32_t shape;    /* launches: gt_launch_shape */
  uint64_t host_end; /* CLOCK_MONOTONIC ns just after the call returned (the
                        work was queued by then); kept for kernel launches
                        only, else 0 once committed */
  uint16_t api;
  uint8_t dir;
};

#define DT_LAGS 256
#define DT_RECENT 64

struct dt_device {
  int32_t free_head; /* slots whose events belong to this device */
  uint32_t gen;      /* bumped by cudaDeviceReset: older events are dead */
  /* resolver-owned (under resolve_mu): */
  int ready; /* private stream and anchors exist for ready_gen */
  uint32_t ready_gen;
  cudaStream_t stream; /* private, non-blocking, always idle */
  cudaEvent_t anchor[2];
  int cur; /* anchor[cur] is the reference */
  int have_ref;
  int64_t ref_host; /* CLOCK_MONOTONIC ns of anchor[cur] */
  uint64_t ref_at;  /* when it was taken */
  /* lags (start - host_lb) of the last DT_LAGS ops resolved, and the
     submission lag estimated from them (devtime_resolve.c, lag_estimate) */
  int64_t lags[DT_LAGS];
  uint32_t nlags, lag_next;
  uint32_t lag_fresh; /* lags noted since the estimate */
  int lag_known;
  int64_t lag;
  /* the spans of the last DT_RECENT ops resolved here, any stream: one that
     overlaps a later op's on another stream makes that op an upper bound */
  struct {
    uint64_t stream;
    int64_t start, end;
  } recent[DT_RECENT];
  uint32_t recent_next;
  int64_t recent_max; /* the latest end noted */
};

struct dt_state {
  pthread_mutex_t mu;
  pthread_mutex_t resolve_mu;
  pthread_cond_t wake; /* with mu: the resolver waits for work */
  struct dt_slot *slots;
  uint32_t nslots;   /* GPUTRACE_GPU_TIMING_EVENTS / 2 */
  uint32_t fresh;    /* slots [fresh, nslots) were never used */
  int32_t free_bare; /* slots without usable events */
  int32_t pend_head, pend_tail;
  uint32_t npending;
  struct dt_device dev[DT_MAX_DEV];
  int thread_state; /* 0 not started, 1 running, 2 could not start */
  int waiting;      /* the resolver sleeps on `wake` */
  int stopping;     /* exit: the resolver leaves */
  int dead;         /* exit done: no CUDA call from devtime any more */
};
extern struct dt_state gt_dt;
extern int gt_dt_source;      /* enum dt_source */
extern uint32_t gt_dt_sample; /* GPUTRACE_GPU_TIMING_SAMPLE; 0: adaptive (auto) */

/* A DEVICE record's common part: the host call's pid, tid, api and flags,
 * the device start and duration on the host clock, the source, and the
 * sampling rate; the caller fills the rest of u.device and emits it. */
static inline void gt_dt_device_begin(struct gt_record *rec, uint32_t pid, uint32_t tid,
                                      unsigned api, uint32_t flags, uint64_t start_ns,
                                      uint64_t dur_ns, unsigned source, uint32_t sample) {
  memset(rec, 0, sizeof *rec);
  rec->ts_ns = start_ns;
  rec->dur_ns = dur_ns;
  rec->pid = pid;
  rec->tid = tid;
  rec->api = (uint16_t)api;
  rec->kind = GT_KIND_DEVICE;
  rec->nslots = 1;
  rec->flags = flags;
  rec->u.device.sample = sample ? sample : 1;
  rec->u.device.source = (uint8_t)source;
}

void gt_dt_register_exit(void); /* atexit, once per process */
/* Slots back to their device's free list (their events stay usable). */
void gt_dt_release_locked(int32_t i);

/* devtime_resolve.c */
int gt_dt_start_thread(void);     /* 0 on success */
void gt_dt_sweep(int final);      /* resolve what completed; resolve_mu held */
void gt_dt_resolver_forget(void); /* device reset, fork: drop anchors */

/* cupti.c: 0 when the CUPTI activity API is collecting for us; else -1
 * and *why, for the warning. */
int gt_cupti_start(const char **why);
int gt_cupti_before(void); /* DT_TOKEN_CUPTI, or -1: untimed (counted) */
void gt_cupti_after(cudaError_t result);
/* The call's metadata; call_ns: CLOCK_MONOTONIC before the real call. */
void gt_cupti_commit(const struct dt_slot *op, uint64_t call_ns);
void gt_cupti_flush(int forced);
const char *gt_cupti_trouble(void);     /* NULL: healthy; else why to use events */
const char *gt_cupti_trouble_now(void); /* the same, without a window's end (exit) */
void gt_cupti_stop(void);
void gt_cupti_final_words(int at_exit); /* CUPTI's own losses, once */
void gt_cupti_forget(void);             /* forked child */

#endif
