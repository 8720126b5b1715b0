/* gpu_attr.h — GPU time by the stack that launched it: what `pprof --gpu`,
 * `flame --gpu` and report's "GPU time by launching line" show.
 *
 * Contract:
 *  - Feed it every LAUNCH, MEMCPY, MEMSET, DEVICE and KERNEL_NAME record of
 *    a session (gt_gpu_attr_feed, with the session's model for kernel
 *    names), then gt_gpu_attr_finish once. A KERNEL_NAME (a handle
 *    registered again) sends that kernel's later launches to the group of
 *    its new name.
 *  - Work is grouped per process and name: the demangled kernel, or
 *    "memcpy HtoD" / "memset" for copies and memsets. A group's GPU total is
 *    the report's estimate: its mean timed duration (DEVICE records, which
 *    may be sampled) times its calls; untimed groups have 0.
 *  - Counts per stack are exact: every launch carries its call site's
 *    stack (the shim takes it at the site's first launch in the process;
 *    for a <<<>>> the site is the <<<>>> line), or, one launch in N per
 *    thread, a full stack of its own (GT_F_STACK_SAMPLED: the same line,
 *    its own callers), and each call counts once at the stack it carries;
 *    copies and memsets likewise when they carry a stack. A group's calls
 *    without a stack (stacks off, or none taken) stay at stack 0 ("no
 *    stack"). GPU time is the group's mean times a site's calls, bytes the
 *    site's own. Sums per group equal the group's totals.
 *  - A graph launch expanded into its nodes (GT_F_EXPANDED, then the
 *    nodes' GT_F_GRAPH_RUN records): each node's work counts at the graph
 *    launch's stack with the node's capture stack as its inner_id, so by
 *    line it is at the line that launched the graph, and its frames (
 *    gt_gpu_site_frames) have the capturing line beneath that line.
 *  - Memory: bounded by distinct (process, name, stack) sites.
 */
#ifndef GPUTRACE_MODEL_GPU_ATTR_H
#define GPUTRACE_MODEL_GPU_ATTR_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "stats.h"

struct gt_gpu_site {
  uint32_t pid, stack_id;      /* stack 0: none was taken */
  uint32_t inner_id;           /* a graph's node: the stack that captured it, under
                                  stack_id, its graph launch's; else 0 */
  size_t name;                 /* in gt_gpu_attr.names */
  unsigned kind;               /* GT_KIND_LAUNCH, MEMCPY or MEMSET */
  double calls, gpu_ns, bytes; /* the estimates, after gt_gpu_attr_finish */
  /* Before finish: its calls that carried this stack as their site's
   * (exact) or as their own sample (sampled), and their bytes. */
  uint64_t exact, sampled;
  double exact_bytes;
};

struct gt_gpu_group; /* gpu_attr.c */

struct gt_gpu_attr {
  struct gt_strtab names;
  struct gt_gpu_group *groups;
  size_t ngroups, cgroups;
  struct gt_map group_index, site_index;
  /* A group by key without its name: (pid, kernel) once named, (pid, kind,
   * direction) of copies and memsets -> group + 1; and kernels last found,
   * by handle (launches repeat a few kernels: compares, not a map probe). */
  struct gt_map fast_index;
  struct gt_gpu_hot {
    uint64_t kernel, at; /* at: group + 1, 0 for an empty slot */
    uint32_t pid, flags;
  } hot[256];
  struct gt_gpu_site *sites; /* after finish: the estimates */
  size_t nsites, csites;
  uint64_t from_ns, to_ns; /* absolute window; to 0: none */
  int has_pid;
  uint32_t pid;
  /* The expanded graph launch whose nodes' records follow (session.c). */
  uint32_t run_pid, run_stack;
};

/* The kinds of record gt_gpu_attr_feed wants, as a mask of 1 << kind. */
#define GT_GPU_ATTR_KINDS                                                                \
  (1u << GT_KIND_LAUNCH | 1u << GT_KIND_MEMCPY | 1u << GT_KIND_MEMSET |                  \
   1u << GT_KIND_DEVICE | 1u << GT_KIND_KERNEL_NAME)

void gt_gpu_attr_init(struct gt_gpu_attr *g);
void gt_gpu_attr_feed(struct gt_gpu_attr *g, struct gt_model *m,
                      const struct gt_record *rec);
void gt_gpu_attr_finish(struct gt_gpu_attr *g);
void gt_gpu_attr_free(struct gt_gpu_attr *g);
/* A site's frames, innermost first, into f (at most max; gt_symtab_stack):
 * a graph node's are its capturing line (the first address of its capture
 * stack, with its inline levels) above its graph launch's stack, as if the
 * graph launch had called the captured code. */
int gt_gpu_site_frames(const struct gt_gpu_site *x, struct gt_symtab *st,
                       struct gt_frame *f, int max);
/* Totals over sites of one kind (GT_KIND_LAUNCH: kernels). */
double gt_gpu_attr_total_ns(const struct gt_gpu_attr *g, unsigned kind);

#endif
