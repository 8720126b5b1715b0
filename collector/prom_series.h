/* prom_series.h — what the parts of the collector's /metrics share (prom.c:
 * the endpoint, API and NVML series; prom_work.c: requests, and GPU time
 * with prom_kernels.c).
 *
 * Contract:
 *  - Every series has bounded labels: the constants below are the bounds
 *    docs/monitoring/README.md states (change both).
 *  - A part keeps two things: its drain-loop state (fed one record at a
 *    time, no lock, O(1) per record whatever the number of series) and a
 *    plain struct of figures copied by value when prom.c publishes; the
 *    HTTP thread formats only such a copy. Work that grows with the number
 *    of names (ranking kernels) is done at publish, never per record.
 *  - Histogram buckets are counted one bucket per observation (not
 *    cumulative); prom_put_hist cumulates them when formatting.
 */
#ifndef GPUTRACE_COLLECTOR_PROM_SERIES_H
#define GPUTRACE_COLLECTOR_PROM_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"

#define PROM_REQ_MAX 32     /* NVTX range names with a label of their own */
#define PROM_KERNEL_MAX 64  /* kernel names with a label of their own */
#define PROM_NAME_MAX 128   /* bytes of a range or kernel label kept */
#define PROM_REQ_BUCKETS 33 /* request seconds: 2^(k/2), k = -20..12 (~1 ms..64 s) */
#define PROM_API_BUCKETS 25 /* API seconds: 2^k, k = -20..4 (~1 us..16 s) */
#define PROM_OTHER "other"  /* the label of everything past a bound */

/* ---- formatting (prom.c) ---- */
struct prom_buf {
  char *s;
  size_t len, cap;
};
__attribute__((format(printf, 2, 3))) void prom_put(struct prom_buf *b, const char *fmt,
                                                    ...);
/* A label value, escaped as the exposition format wants (\\, \", \n). */
void prom_put_label(struct prom_buf *b, const char *value);
/* The bucket of value v among n ascending bounds (n: above the last). */
unsigned prom_bucket(const double *bounds, unsigned n, double v);
/* One histogram's samples: name_bucket{LABELS,le=...} (cumulated from the
 * n + 1 per-bucket counts), name_sum, name_count. labels: already
 * formatted ("api=\"x\""), or "" for none. */
void prom_put_hist(struct prom_buf *b, const char *name, const char *labels,
                   const uint64_t *buckets, const double *bounds, unsigned n, double sum,
                   uint64_t count);
extern const double prom_req_bounds[PROM_REQ_BUCKETS];
extern const double prom_api_bounds[PROM_API_BUCKETS];
/* A label kept: at most PROM_NAME_MAX - 1 bytes of src; its FNV-1a hash. */
void prom_set_name(char *dst, const char *src);
uint64_t prom_name_hash(const char *name);

/* ---- prom_work.c: NVTX requests (and prom_kernels.c: GPU time by kernel) ---- */
struct prom_request { /* one NVTX range name (the last slot: PROM_OTHER) */
  char name[PROM_NAME_MAX];
  uint64_t count, sum_ns;
  uint64_t buckets[PROM_REQ_BUCKETS + 1];
  double gpu_ns;        /* device time of work queued inside it */
  uint64_t copy_bytes;  /* bytes copied by calls inside it */
  uint64_t alloc_bytes; /* device memory allocated inside it */
};
struct prom_work { /* the published figures */
  struct prom_request req[PROM_REQ_MAX + 1];
  unsigned nreq; /* named slots used */
  struct {
    char name[PROM_NAME_MAX];
    double gpu_ns;
  } kern[PROM_KERNEL_MAX + 1]; /* the last: PROM_OTHER */
  unsigned nkern;              /* labels used */
};
struct prom_work_state;
struct prom_work_state *prom_work_new(struct prom_work *w);
void prom_work_free(struct prom_work_state *s);
/* Every record, before the graph layer (NVTX, KERNEL_NAME, PROCESS). */
void prom_work_record(struct prom_work_state *s, const struct gt_record *r);
/* Work as it ran (graph launches expanded): LAUNCH, MEMCPY, MEMSET, ALLOC
 * (device memory, successful) and DEVICE. Returns the GPU ns a DEVICE
 * record of a kernel adds (weighted by the launches it stands for), else 0. */
double prom_work_run(struct prom_work_state *s, const struct gt_record *r);
/* Before each publish (the drain loop): kernel labels ranked by GPU time. */
void prom_work_publish(struct prom_work_state *s);
void prom_work_format(struct prom_buf *b, const struct prom_work *w);

/* ---- prom_kernels.c (prom_work.c's): names, their time, their labels ---- */
struct prom_kernels;
struct prom_kernels *prom_kernels_new(void);
void prom_kernels_free(struct prom_kernels *k);
void prom_kernels_named(struct prom_kernels *k, struct prom_work *w,
                        const struct gt_record *kernel_name);
void prom_kernels_ended(struct prom_kernels *k, uint32_t pid);
/* A successful kernel launch (or a graph's run of a kernel node). */
void prom_kernels_launched(struct prom_kernels *k, const struct gt_record *launch);
/* A kernel's DEVICE record: its time, weighted by the launches it stands
 * for (prom_kernels.c), added to its name's; returns that time. */
double prom_kernels_device(struct prom_kernels *k, struct prom_work *w,
                           const struct gt_record *r);
void prom_kernels_rank(struct prom_kernels *k, struct prom_work *w);

#endif
