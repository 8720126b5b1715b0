/* html.h — the page `gputrace html` writes: one self-contained HTML file of
 * a run (docs/cli.md, `html`).
 *
 * Contract:
 *  - The figures are the report's and the leak analysis's (report.h,
 *    leaks.h), never derived again; html_collect.c adds only what they do
 *    not keep: time series, gathered by the report's pass (report.tap) into
 *    HT_BUCKETS time buckets whose width doubles as the run goes on (two
 *    neighbours merged, min of the mins, max of the maxes), so a series
 *    holds at most 2 * HT_BUCKETS points whatever the trace's length and
 *    its peaks survive; and at most HT_MARKS NVTX ranges, evenly thinned.
 *  - Files: html_collect.c (the series), html_page.c (the document,
 *    escaping, tables, the findings; it places the charts),
 *    html_charts.c (SVG charts and flame graphs, escaping with ht_text),
 *    cmd_html.c (the command: options, the passes, the output file).
 *  - Every text from the trace goes through ht_text (UTF-8 made valid,
 *    control bytes replaced, then escaped for HTML text and attributes);
 *    no text from the trace goes into a script.
 *  - The page's size is bounded whatever the trace (HT_PAGE_MAX, docs/cli.md
 *    `html`): what grows with the trace is cut and the cut said on the
 *    page. Lists (the kernel and NVTX tables, the findings, the stacks held
 *    at the peak, each flame graph's frames) show at most HT_ROWS items
 *    (fewer where said) and HT_PART_BYTES each, largest first (ht_cut),
 *    the rest counted and, in tables, summed in a last row, so the page's
 *    totals stay exact; charts are bounded by their series (HT_MAX_SERIES
 *    of HT_BUCKETS), HT_MARKS shaded ranges (names cut at HT_TITLE_MAX
 *    bytes) and the range names drawn (html_charts.c); the texts a trace
 *    holds are at most GT_TEXT_MAX bytes, symbols are cut where they are
 *    formatted. ht_page builds the page in memory, so ftell measures a part
 *    whatever the output is, and writes it out at the end. The parts' bounds
 *    (escaping makes a byte at most 6): the findings, the kernel and NVTX
 *    tables and the 3 flame graphs 6 x (256 KiB + one item) = 1.6 MB; the
 *    memory chart 16 x 500 buckets x ~50 bytes + 256 bands x ~850 = 0.6 MB;
 *    utilization and NVML charts 16 x 500 x ~40 each = 0.65 MB; the range
 *    bars 16 x ~9 KB, the held stacks 21 x ~4 KB, the API and sync tables a
 *    row per API: 0.5 MB; the rest (style, script, summary, the trace's path
 *    three times) under 0.1 MB: about 3.5 MB in all, under HT_PAGE_MAX.
 */
#ifndef GPUTRACE_ANALYZE_HTML_H
#define GPUTRACE_ANALYZE_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "leaks.h"
#include "report.h"
#include "stats.h"

#define HT_BUCKETS 500             /* per series: at most 1000 points (min and max) */
#define HT_MAX_SERIES 16           /* processes' memory lines, and NVML series, each */
#define HT_MARKS 256               /* NVTX ranges drawn on the memory chart */
#define HT_ROWS 200                /* items of a list that grows with the trace */
#define HT_PART_BYTES (256u << 10) /* bytes of such a list, at most (and one item) */
#define HT_TITLE_MAX 120           /* bytes of a shaded range's name (then "…") */
#define HT_PAGE_MAX (5u << 20)     /* the page, whatever the trace (docs/cli.md) */

/* A list that grows with the trace, written to o (a memory stream: ftell
 * works): ht_cut_room says whether the next item may be written (fewer
 * than max shown and fewer than HT_PART_BYTES written since ht_cut_open),
 * counting it in shown or in left. Items come largest first, so once one
 * is left out the rest are too. */
struct ht_cut {
  FILE *o;
  long start;
  size_t max, shown, left;
};
void ht_cut_open(struct ht_cut *c, FILE *o, size_t max);
int ht_cut_room(struct ht_cut *c);

struct ht_series {
  uint32_t key; /* pid, or metric << 8 | device */
  double peak;  /* the largest value seen */
  uint64_t peak_ts;
  double min[HT_BUCKETS], max[HT_BUCKETS], last[HT_BUCKETS];
  unsigned char has[HT_BUCKETS]; /* a value was seen in the bucket */
};

struct ht_mark { /* an outermost NVTX range */
  uint64_t start, end;
  uint32_t pid;
  size_t name; /* in ht_data.mark_names */
};

struct ht_data {
  const struct report *r;
  int has_pid;
  uint32_t pid;
  uint64_t from, to;    /* absolute window, [from, to) */
  uint64_t base, width; /* bucket i covers base + i * width */
  int nb;               /* buckets in use */
  struct ht_series *mem[HT_MAX_SERIES], *metric[HT_MAX_SERIES];
  int nmem, nmetric;
  uint64_t mem_pids_left; /* processes past HT_MAX_SERIES, not drawn */
  uint64_t metric_left;   /* readings of series past HT_MAX_SERIES, not drawn */
  struct ht_mark marks[HT_MARKS];
  int nmarks;
  uint64_t mark_seen, mark_stride; /* ranges seen; one in stride is kept */
  struct gt_strtab mark_names;
};

/* html_collect.c */
void ht_init(struct ht_data *d, struct report *r); /* sets r->tap */
void ht_free(struct ht_data *d);
/* Seconds from the window's start of bucket i's start. */
double ht_bucket_s(const struct ht_data *d, int i);

/* html_charts.c: SVG. Units of a chart's values. */
enum ht_unit { HT_BYTES, HT_PCT, HT_PLAIN, HT_NS };
void ht_fmt(char *buf, size_t len, double v, enum ht_unit u);
void ht_memory_chart(FILE *o, const struct ht_data *d, const struct gt_leaks *l);
void ht_util_chart(FILE *o, const struct ht_data *d);
void ht_metric_charts(FILE *o, const struct ht_data *d);
void ht_range_histogram(FILE *o, const struct report *r);
/* An icicle graph of stacks (root on top), zoomable; GPU: the gpu_attr sites. */
enum ht_flame { HT_FLAME_PEAK, HT_FLAME_EXIT, HT_FLAME_GPU };
void ht_flame(FILE *o, const struct ht_data *d, const struct gt_leaks *l,
              enum ht_flame which);

/* html_page.c */
void ht_text(FILE *o, const char *s); /* trace text, escaped */
/* The same, cut to max (<= HT_TITLE_MAX) bytes at a character, then "…". */
void ht_text_cut(FILE *o, const char *s, size_t max);
void ht_page(FILE *o, const struct ht_data *d, const struct gt_leaks *l,
             const char *trace);

#endif
