/* stats.h — building blocks every reader shares (the graph layer, GPU
 * attribution, pprof, report, diff, leaks): durations and their
 * percentiles, interned strings, human units.
 *
 * Contract:
 *  - gt_durs: every duration added is kept, 4 bytes each while all of them
 *    fit in 32 bits (< 4.29 s), widened once to 8 bytes each when one does
 *    not. Percentiles are exact, by the nearest-rank definition: the p-th
 *    percentile of n values is the k-th smallest, k = ceil(p * n / 100)
 *    (k >= 1). Computing them may reorder the values (quickselect; large
 *    32-bit arrays: a two-pass radix select), so call gt_durs_percentiles
 *    once, after the last add.
 *  - gt_strtab: interns strings; an index stays valid, and its string
 *    unchanged, until gt_strtab_free.
 *  - gt_sampled_total: the one estimate of sampled GPU work (kernels,
 *    transfers, graphs).
 *  - gt_fmt_*: human units for text output, into a caller's buffer.
 * Out of memory is fatal (message, exit 2: util.h).
 */
#ifndef GPUTRACE_MODEL_STATS_H
#define GPUTRACE_MODEL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/map.h"
#include "util.h"

struct gt_durs {
  void *v; /* uint32_t[] or, once wide, uint64_t[] */
  size_t n, cap;
  int wide;
  uint64_t sum, max;
};

void gt_durs_add(struct gt_durs *d, uint64_t ns);
/* out[i] = the pcts[i]-th percentile (pcts ascending, in 1..100); 0 when empty. */
void gt_durs_percentiles(struct gt_durs *d, const unsigned *pcts, size_t npcts,
                         uint64_t *out);
size_t gt_durs_bytes(const struct gt_durs *d); /* memory held */
void gt_durs_free(struct gt_durs *d);

/* Nearest-rank index (0-based) of the p-th percentile of n values. */
size_t gt_rank(unsigned pct, size_t n);

/* GPU work timed 1 in `sample` (docs/devtime.md): 1 and *total its timed
 * mean times its runs, when sample > 1 and it has timed runs, no more than
 * it ran; else 0 (its timed time is exact as summed). Not the sum of each
 * timed one's N: every key's first call is timed under its thread's N, so
 * that would count work run a few times as N runs. */
static inline int gt_sampled_total(double timed_ns, uint64_t timed, uint64_t runs,
                                   uint32_t sample, double *total) {
  if (sample <= 1 || !timed || runs < timed)
    return 0;
  *total = timed_ns / (double)timed * (double)runs;
  return 1;
}

struct gt_strtab {
  struct gt_map index; /* FNV-1a hash (probed on collision) -> index */
  char **strs;
  size_t n, cap;
};

size_t gt_strtab_intern(struct gt_strtab *t, const char *s);
/* Index of s, or SIZE_MAX when it was never interned. */
size_t gt_strtab_find(const struct gt_strtab *t, const char *s);
void gt_strtab_free(struct gt_strtab *t);

/* "812 ns", "12.4 µs", "3.25 ms", "1.50 s" */
const char *gt_fmt_ns(char *buf, size_t len, uint64_t ns);
/* "512 B", "64.0 KiB", "1.00 MiB", "2.50 GiB" */
const char *gt_fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* bytes per ns = GB/s: "23.9 GB/s"; "-" when ns is 0 */
const char *gt_fmt_gbps(char *buf, size_t len, uint64_t bytes, uint64_t ns);
/* "12.3 %" of part / whole, within 0 .. 100 %; "-" when whole is 0 */
const char *gt_fmt_pct(char *buf, size_t len, double part, double whole);

#endif
