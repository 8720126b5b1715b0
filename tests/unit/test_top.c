/* test_top.c — `gputrace top`'s parsers and screen (analyze/top_*.c): a
 * /metrics text and a /top.jsonl text as the collector writes them
 * (escaped labels and strings, series top does not read), two samples 2 s
 * apart, and the exact 80x24 screen made from them: rates, the sort keys,
 * the user's frame of a site (the runtime's frames skipped), the keys on
 * the bottom line. */
#include <string.h>

#include "check.h"
#include "top.h"

static const char metrics[] =
    "# HELP gputrace_kernel_launches_total Kernel launches traced.\n"
    "# TYPE gputrace_kernel_launches_total counter\n"
    "gputrace_kernel_launches_total %d\n"
    "gputrace_api_calls_total{api=\"cudaMalloc\"} 3\n"
    "gputrace_memcpy_bytes_total{dir=\"HtoD\"} %d\n"
    "gputrace_memcpy_bytes_total{dir=\"DtoH\"} 0\n"
    "gputrace_device_memory_bytes{pid=\"42\"} 999\n"
    "gputrace_device_memory_bytes{pid=\"7\"} 1048576\n"
    "gputrace_process_gpu_seconds_total{pid=\"42\"} %s\n"
    "gputrace_events_dropped_total 5\n"
    "gputrace_kernel_gpu_seconds_total{kernel=\"void k<\\\"x\\\">(int)\"} %s\n"
    "gputrace_kernel_gpu_seconds_total{kernel=\"other\"} 0.5\n"
    "gputrace_gpu_utilization_percent{gpu=\"0\"} 30\n"
    "gputrace_gpu_utilization_percent{gpu=\"1\"} 60\n";

static const char view[] =
    "{\"gputrace_top\":1}\n"
    "{\"process\":42,\"live_bytes\":13631488,\"peak_bytes\":15728640,\"launches\":%d}\n"
    "{\"site\":1,\"pid\":42,\"live_bytes\":12582912,\"blocks\":3,\"later\":\"x\"}\n"
    "{\"frame\":1,\"function\":\"cudaError cudaMalloc<void>(void**, size_t)\","
    "\"file\":\"/usr/local/cuda/include/cuda_runtime.h\",\"line\":500,"
    "\"module\":\"app\",\"python\":0}\n"
    "{\"frame\":1,\"function\":\"load \\\"weights\\\"\",\"file\":\"/src/app.cu\","
    "\"line\":29,\"module\":\"app\",\"python\":0}\n"
    "{\"site\":2,\"pid\":42,\"live_bytes\":1048576,\"blocks\":1}\n";

static void sample(struct top_sample *s, double t, int launches, int h2d,
                   const char *proc_s, const char *kern_s) {
  char m[4096], v[4096];
  snprintf(m, sizeof m, metrics, launches, h2d, proc_s, kern_s);
  snprintf(v, sizeof v, view, launches);
  memset(s, 0, sizeof *s);
  top_parse_jsonl(v, s);
  top_parse_metrics(m, s);
  s->t = t;
}

static const char *const expect[] = {
    "gputrace top 127.0.0.1:9400  every 2.0s  GPU util 45 %  dropped 5",
    "PID            LIVE*        PEAK    LAUNCH/S    GPU%",
    "42          13.0 MiB    15.0 MiB       500.0    25.0",
    "7           1.00 MiB           -           -     0.0",
    "COPIES  HtoD 1.00 MiB/s (3.00 MiB)",
    "KERNEL (GPU time in the last interval)                        GPU TIME     GPU%",
    "void k<\"x\">(int)                                                400 ms     20.0",
    "ALLOCATION SITE (live device memory)             PID        LIVE  BLOCKS",
    "app.cu:29 load \"weights\"                          42    12.0 MiB       3",
    "(no stack)                                        42    1.00 MiB       1",
};

int main(void) {
  struct top_sample a, b;
  sample(&a, 10, 1000, 1 << 20, "1.0", "0.1");
  sample(&b, 12, 2000, 3 << 20, "1.5", "0.5");
  CHECK_EQ_U64(b.nprocs, 2);
  CHECK_EQ_U64(b.procs[0].live, 13631488); /* /top.jsonl's, not /metrics' 999 */
  CHECK_EQ_U64(b.procs[1].live, 1048576);  /* /metrics' alone: no view line */
  CHECK_EQ_U64(b.nsites, 2);
  CHECK_EQ_U64(b.sites[0].nframes, 2);
  CHECK(b.gpu_util == 45);
  struct top_screen scr = {"127.0.0.1:9400", 80, 24, 1, TOP_SORT_MEMORY};
  char **lines;
  size_t n = top_view_lines(&scr, &a, &b, &lines);
  CHECK_EQ_U64(n, 24);
  for (size_t i = 0; i < n; i++) {
    const char *want = i < sizeof expect / sizeof expect[0] ? expect[i]
                       : i + 1 < n
                           ? ""
                           : "q quit  m sort by memory  g by GPU time  l by launches";
    CHECK_MSG(!strcmp(lines[i], want), "line %zu: got '%s', want '%s'", i, lines[i],
              want);
  }
  top_lines_free(lines, n);
  scr.sort = TOP_SORT_GPU;
  scr.height = 8; /* too small for every table: each keeps its header */
  n = top_view_lines(&scr, &a, &b, &lines);
  CHECK_EQ_U64(n, 8);
  CHECK_MSG(!strcmp(lines[1], "PID             LIVE        PEAK    LAUNCH/S   GPU%*"),
            "%s", lines[1]);
  CHECK(!strncmp(lines[7], "q quit", 6));
  top_lines_free(lines, n);
  top_sample_free(&a);
  top_sample_free(&b);
  return check_finish("test_top");
}
