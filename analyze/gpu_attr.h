/* gpu_attr.h — GPU time by the stack that launched it: what `pprof --gpu`,
 * `flame --gpu` and report's "GPU time by launching line" show.
 *
 * Contract:
 *  - Feed it every LAUNCH, MEMCPY, MEMSET and DEVICE record of a session
 *    (gt_gpu_attr_feed, with the session's model for kernel names), then
 *    gt_gpu_attr_finish once.
 *  - Work is grouped per process and name: the demangled kernel, or
 *    "memcpy HtoD" / "memset" for copies and memsets. A group's GPU total is
 *    the report's estimate: its mean timed duration (DEVICE records, which
 *    may be sampled) times its calls; untimed groups have 0.
 *  - Stacks are a sample too (launch stacks are taken for one launch in N
 *    by default): a group's calls, GPU time and bytes are spread over the
 *    stacks of its calls that have one, in proportion to how many of them
 *    each stack has; a group none of whose calls has a stack keeps all of
 *    it at stack 0 ("no stack"). So every site's figures are estimates and
 *    their sums per group equal the group's totals.
 *  - Memory: bounded by distinct (process, name, stack) sites.
 */
#ifndef GPUTRACE_ANALYZE_GPU_ATTR_H
#define GPUTRACE_ANALYZE_GPU_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "report_stats.h"

struct gt_gpu_site {
  uint32_t pid, stack_id; /* stack 0: none was taken */
  size_t name;            /* in gt_gpu_attr.names */
  unsigned kind;          /* GT_KIND_LAUNCH, MEMCPY or MEMSET */
  double calls, gpu_ns, bytes;
};

struct gt_gpu_group; /* gpu_attr.c */

struct gt_gpu_attr {
  struct gt_strtab names;
  struct gt_gpu_group *groups;
  size_t ngroups, cgroups;
  struct gt_map group_index, site_index;
  struct gt_map kernel_index; /* (pid, kernel) -> group + 1, once named */
  struct gt_gpu_site *sites;  /* after finish: the estimates */
  size_t nsites, csites;
  uint64_t from_ns, to_ns; /* absolute window; to 0: none */
  int has_pid;
  uint32_t pid;
};

void gt_gpu_attr_init(struct gt_gpu_attr *g);
void gt_gpu_attr_feed(struct gt_gpu_attr *g, struct gt_model *m,
                      const struct gt_record *rec);
void gt_gpu_attr_finish(struct gt_gpu_attr *g);
void gt_gpu_attr_free(struct gt_gpu_attr *g);
/* Totals over sites of one kind (GT_KIND_LAUNCH: kernels). */
double gt_gpu_attr_total_ns(const struct gt_gpu_attr *g, unsigned kind);

#endif
