/* top.h — `gputrace top`'s parts: samples of a collector's live state
 * (top_fetch.c: HTTP; top_parse.c: the bodies) and the screen made from
 * two of them (top_view.c); cmd_top.c runs the terminal.
 *
 * Contract:
 *  - top_fetch takes one sample over HTTP/1.0 (a plain TCP socket): GET
 *    /metrics (the Prometheus text, docs/monitoring/README.md) and GET
 *    /top.jsonl (collector/live_view.h: one JSON object a line). It
 *    returns 0, TOP_GONE when nothing accepts the connection (no
 *    collector, or it has finished), TOP_STOP when `in` said to stop while
 *    it waited, or TOP_BAD with a message (a timeout, an answer that is not
 *    the collector's). A collector without /top.jsonl still gives its
 *    /metrics figures.
 *  - Bounded whatever the server does: one TOP_DEADLINE_MS for the whole
 *    sample (connects and both answers), TOP_HEAD_MAX bytes of headers
 *    (more is TOP_BAD), TOP_BODY_MAX bytes of each body (the rest is not
 *    read: the body is cut after its last whole line and the sample says
 *    so in `loss`), TOP_PROCS_MAX processes, TOP_KERNELS_MAX kernels and
 *    TOP_REQUESTS_MAX range names kept (TOP_SITES sites of TOP_FRAMES frames; the others
 * counted in `loss`). A sample never holds more than these, a fetch never more than two
 * bodies.
 *  - top_parse_metrics and top_parse_jsonl fill a sample from a body of
 *    `len` bytes (text[len] is '\0'), parsed in place (the text is
 *    changed), in one pass: time linear in its length. Series and keys
 *    top does not read are skipped; a line of a series it reads whose
 *    labels or value do not parse, or whose value is not a finite number
 *    in the figure's range (NaN, Inf, 1e400, negative, a pid over 32
 *    bits), and a line holding a NUL byte, is skipped and counted in
 *    loss.bad_lines.
 *  - top_view_lines makes the screen from the previous sample and the
 *    current one (rates over the time between them): at most `height`
 *    lines, each at most `width` display columns (gt_text_width: wide
 *    characters are two), names shortened with gt_name_fit; a line under
 *    the title when the sample is incomplete (its loss); with `footer`,
 *    the keys on the last line. Returns the number of lines (each
 *    malloc'd; top_lines_free).
 */
#ifndef GPUTRACE_ANALYZE_TOP_H
#define GPUTRACE_ANALYZE_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "symtab.h"
#include "util.h"

#define TOP_SITES 16  /* sites a sample keeps (the collector's LV_SITES) */
#define TOP_FRAMES 12 /* frames of a site */
#define TOP_DIRS 6    /* copy directions (enum gt_dir) */

/* The caps (docs/cli.md#top): far above what a collector serves (64
 * processes, 65 kernel series, a /metrics of some 100 KB). */
#define TOP_DEADLINE_MS 5000     /* a whole sample */
#define TOP_HEAD_MAX (16u << 10) /* bytes of an answer's status and headers */
#define TOP_BODY_MAX (8u << 20)  /* bytes of a body read */
#define TOP_PROCS_MAX 1024       /* processes a sample keeps */
#define TOP_KERNELS_MAX 1024     /* kernel series a sample keeps */
#define TOP_REQUESTS_MAX 64      /* range names a sample keeps (the collector's 33) */
#define TOP_SECONDS_MAX 9e9      /* seconds a figure may hold (its ns fit) */

enum { TOP_OK = 0, TOP_GONE = 1, TOP_BAD = 2, TOP_STOP = 3 };
enum top_sort { TOP_SORT_MEMORY, TOP_SORT_GPU, TOP_SORT_LAUNCHES };

struct top_proc {
  uint32_t pid;
  uint64_t live, peak, launches;
  double gpu_s;
  int has_view; /* live, peak and launches came from /top.jsonl */
  int has_live; /* a live figure came (/top.jsonl's or /metrics') */
};

struct top_kernel {
  char *name;
  double gpu_s;
};

/* An NVTX range name's requests (/metrics: gputrace_request_seconds_count
 * and gputrace_request_gpu_seconds_total, the collector's range_gpu rule:
 * the device time of the work the range's thread queued while it was
 * open). */
struct top_request {
  char *name;
  uint64_t count;
  double gpu_s;
};

struct top_site {
  uint32_t pid;
  uint64_t live, blocks;
  int nframes;
  struct gt_frame frames[TOP_FRAMES]; /* strings malloc'd */
};

/* What a sample lacks: shown under the title, never silent. */
enum { TOP_CUT_METRICS = 1, TOP_CUT_VIEW = 2 }; /* a body cut at TOP_BODY_MAX */
struct top_loss {
  unsigned cut;
  uint64_t over_caps; /* processes, kernels, sites, frames not kept */
  uint64_t bad_lines; /* lines of series top reads that did not parse */
};

/* A sample starts zeroed ({0} or memset). */
struct top_sample {
  double t; /* CLOCK_MONOTONIC seconds */
  struct top_proc *procs;
  size_t nprocs, cprocs;
  struct gt_map proc_index; /* pid -> index in procs */
  struct top_kernel *kernels;
  size_t nkernels, ckernels;
  struct top_request *requests;
  size_t nrequests, crequests;
  struct top_site sites[TOP_SITES];
  int nsites;
  int skip_frames; /* the frames that follow belong to a site not kept */
  uint64_t copy_bytes[TOP_DIRS], dropped, launches;
  double gpu_util; /* NVML's, averaged over the devices; < 0: none */
  unsigned ngpus;  /* the devices it is a mean of */
  struct top_loss loss;
};

/* What top_fetch watches while it waits on the network: `on_input` is
 * called with the revents of fd (the keyboard; -1: none) when it has some,
 * and with 0 before each wait and after a signal; it returns 1 to stop. */
struct top_input {
  int fd;
  int (*on_input)(void *ctx, short revents);
  void *ctx;
};

void top_sample_free(struct top_sample *s);
int top_fetch(const char *addr_port, struct top_sample *s, const struct top_input *in,
              char *err, size_t errlen);
void top_parse_metrics(char *text, size_t len, struct top_sample *s);
void top_parse_jsonl(char *text, size_t len, struct top_sample *s);

struct top_screen {
  const char *source; /* ADDR:PORT */
  int width, height, footer;
  enum top_sort sort;
};
size_t top_view_lines(const struct top_screen *scr, const struct top_sample *prev,
                      const struct top_sample *cur, char ***lines);
void top_lines_free(char **lines, size_t n);

#endif
