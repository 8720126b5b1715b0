/* top.h — `gputrace top`'s parts: samples of a collector's live state
 * (top_fetch.c) and the screen made from two of them (top_view.c);
 * cmd_top.c runs the terminal.
 *
 * Contract:
 *  - top_fetch takes one sample over HTTP/1.0 (a plain TCP socket): GET
 *    /metrics (the Prometheus text, docs/monitoring/README.md) and GET
 *    /top.jsonl (collector/live_view.h: one JSON object a line). It
 *    returns 0, TOP_GONE when nothing accepts the connection (no
 *    collector, or it has finished), or TOP_BAD with a message (a
 *    timeout, an answer that is not the collector's). A collector without
 *    /top.jsonl still gives its /metrics figures.
 *  - top_parse_metrics and top_parse_jsonl fill a sample from a body (the
 *    unit-testable part); unknown series and keys are skipped.
 *  - top_view_lines makes the screen from the previous sample and the
 *    current one (rates over the time between them): at most `height`
 *    lines, each at most `width` display columns, names shortened with
 *    gt_name_fit; with `footer`, the keys on the last line. Returns the
 *    number of lines (each malloc'd; top_lines_free).
 */
#ifndef GPUTRACE_ANALYZE_TOP_H
#define GPUTRACE_ANALYZE_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

#define TOP_SITES 16  /* sites a sample keeps (the collector's LV_SITES) */
#define TOP_FRAMES 12 /* frames of a site */
#define TOP_DIRS 6    /* copy directions (enum gt_dir) */

enum { TOP_OK = 0, TOP_GONE = 1, TOP_BAD = 2 };
enum top_sort { TOP_SORT_MEMORY, TOP_SORT_GPU, TOP_SORT_LAUNCHES };

struct top_proc {
  uint32_t pid;
  uint64_t live, peak, launches;
  double gpu_s;
  int has_view; /* live, peak and launches came from /top.jsonl */
};

struct top_kernel {
  char *name;
  double gpu_s;
};

struct top_site {
  uint32_t pid;
  uint64_t live, blocks;
  int nframes;
  struct gt_frame frames[TOP_FRAMES]; /* strings malloc'd */
};

struct top_sample {
  double t; /* CLOCK_MONOTONIC seconds */
  struct top_proc *procs;
  size_t nprocs, cprocs;
  struct top_kernel *kernels;
  size_t nkernels, ckernels;
  struct top_site sites[TOP_SITES];
  int nsites;
  uint64_t copy_bytes[TOP_DIRS], dropped, launches;
  double gpu_util; /* NVML's, averaged over the devices; < 0: none */
  unsigned ngpus;  /* the devices it is a mean of */
};

void top_sample_free(struct top_sample *s);
int top_fetch(const char *addr_port, struct top_sample *s, char *err, size_t errlen);
void top_parse_metrics(const char *text, struct top_sample *s);
void top_parse_jsonl(const char *text, struct top_sample *s);

struct top_screen {
  const char *source; /* ADDR:PORT */
  int width, height, footer;
  enum top_sort sort;
};
size_t top_view_lines(const struct top_screen *scr, const struct top_sample *prev,
                      const struct top_sample *cur, char ***lines);
void top_lines_free(char **lines, size_t n);

#endif
