/* top_bench.c — what `gputrace top` costs per series (analyze/top_*.c):
 * a /metrics body of N series (N/2 processes, N/2 kernels whose names
 * share a 60-byte start, as C++ names do) parsed into a sample, twice, and
 * the screen drawn from the two, for N = 10,000, 100,000 and 1,000,000,
 * alternating, REPS rounds. Prints the fastest round of each N in ns per
 * series for the parse and for the screen, and the ratio of the total at
 * each N to that at 10,000 (10 and 100 when linear; 100 and 10,000 when
 * quadratic). No network: the bodies are built in memory, past the 8 MiB
 * a fetch reads (top.h), so that the parse is measured at every N.
 * Usage: gputrace-top-bench [REPS=5] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

#define SIZES 3
static const size_t series[SIZES] = {10000, 100000, 1000000};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The body of n series whose figures grow with `round`; *len set. */
static char *body(size_t n, int round, size_t *len) {
  size_t cap = n * 128 + 1, k = 0;
  char *b = malloc(cap);
  if (!b)
    exit(2);
  for (size_t i = 0; i < n / 2; i++)
    k += (size_t)snprintf(b + k, cap - k,
                          "gputrace_device_memory_bytes{pid=\"%zu\"} %zu\n"
                          "gputrace_kernel_gpu_seconds_total{kernel=\"void "
                          "inference::attention::detail::flash_fwd<half, 128>::k%zu"
                          "(int)\"} %d.5\n",
                          i + 1, (i + 1) << 10, i, round);
  *len = k;
  return b;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  double best_parse[SIZES], best_view[SIZES];
  for (int s = 0; s < SIZES; s++)
    best_parse[s] = best_view[s] = 1e30;
  for (int r = 0; r < reps; r++)
    for (int s = 0; s < SIZES; s++) {
      size_t la, lb;
      char *a = body(series[s], 1, &la), *b = body(series[s], 2, &lb), **lines;
      struct top_sample x = {0}, y = {0};
      double t0 = now_s();
      top_parse_metrics(a, la, &x);
      top_parse_metrics(b, lb, &y);
      x.t = 1, y.t = 2;
      double t1 = now_s();
      struct top_screen scr = {"127.0.0.1:9400", 120, 60, 1, TOP_SORT_MEMORY};
      size_t n = top_view_lines(&scr, &x, &y, &lines);
      double t2 = now_s();
      top_lines_free(lines, n);
      top_sample_free(&x);
      top_sample_free(&y);
      free(a);
      free(b);
      best_parse[s] = t1 - t0 < best_parse[s] ? t1 - t0 : best_parse[s];
      best_view[s] = t2 - t1 < best_view[s] ? t2 - t1 : best_view[s];
    }
  printf("%9s %14s %15s %12s %10s\n", "series", "parse ns/ser", "screen ns/ser",
         "total ms", "x 10k");
  for (int s = 0; s < SIZES; s++) {
    double per = 1e9 / (2.0 * (double)series[s]); /* two samples a round */
    printf("%9zu %14.1f %15.1f %12.2f %10.1f\n", series[s], best_parse[s] * per,
           best_view[s] * per, (best_parse[s] + best_view[s]) * 1e3,
           (best_parse[s] + best_view[s]) / (best_parse[0] + best_view[0]));
  }
  return 0;
}
