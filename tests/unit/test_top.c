/* test_top.c — `gputrace top`'s parsers and screen (analyze/top_*.c): a
 * /metrics text and a /top.jsonl text as the collector writes them
 * (escaped labels and strings, series top does not read), two samples 2 s
 * apart, and the exact 80x24 screen made from them: rates, the sort keys,
 * the user's frame of a site (the runtime's frames skipped), the keys on
 * the bottom line. Then what a server that is not the collector may send:
 * values that are no figures (NaN, Inf, 1e400, negative, a 33-bit pid, a
 * "} " inside a label), each line skipped and counted on the screen; 100k
 * processes and kernels and 20 sites of 14 frames, kept to the caps with
 * the rest counted; the same parsed and drawn within a CPU bound that a
 * parse quadratic in them exceeds a hundredfold; CJK and fullwidth names
 * laid out by display columns. */
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
  top_parse_jsonl(v, strlen(v), s);
  top_parse_metrics(m, strlen(m), s);
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

static void test_screen(void) {
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
}

/* The screen of cur (prev: the earlier sample, or NULL) at 80 columns. */
static size_t screen_of(const struct top_sample *prev, const struct top_sample *cur,
                        int height, char ***lines) {
  struct top_screen scr = {"127.0.0.1:9400", 80, height, 0, TOP_SORT_MEMORY};
  return top_view_lines(&scr, prev, cur, lines);
}

static void check_lines(char **lines, size_t n, const char *const *want, size_t nwant,
                        const char *what) {
  CHECK_MSG(n >= nwant, "%s: %zu lines, want at least %zu", what, n, nwant);
  for (size_t i = 0; i < n && i < nwant; i++)
    CHECK_MSG(!strcmp(lines[i], want[i]), "%s, line %zu: got '%s', want '%s'", what, i,
              lines[i], want[i]);
}

/* Values that are no figures: each line is skipped and counted, never cast. */
static void test_bad_values(void) {
  char m[] = "gputrace_kernel_launches_total NaN\n"
             "gputrace_events_dropped_total 1e400\n"
             "gputrace_memcpy_bytes_total{dir=\"HtoD\"} +Inf\n"
             "gputrace_memcpy_bytes_total{dir=\"DtoH\"} 2048\n"
             "gputrace_device_memory_bytes{pid=\"42\"} NaN\n"
             "gputrace_device_memory_bytes{pid=\"7\"} -1\n"
             "gputrace_device_memory_bytes{pid=\"99999999999\"} 5\n"
             "gputrace_device_memory_bytes{pid=\"8\"} 1048576\n"
             "gputrace_process_gpu_seconds_total{pid=\"8\"} -Inf\n"
             "gputrace_process_gpu_seconds_total{pid=\"9\"} 1e10\n"
             "gputrace_kernel_gpu_seconds_total{kernel=\"k\"} NaN\n"
             "gputrace_kernel_gpu_seconds_total{kernel=\"a} 9\"} 0.25\n"
             "gputrace_kernel_gpu_seconds_total{kernel=\"open} 1\n"
             "gputrace_gpu_utilization_percent{gpu=\"0\"} NaN\n"
             "gputrace_gpu_utilization_percent{gpu=\"1\"} 50\n"
             "gputrace_gpu_utilization_percent{gpu=\"2\"} 150\n"
             "gputrace_not_read_by_top NaN\n";
  char v[] = "{\"gputrace_top\":1}\n"
             "{\"process\":42,\"live_bytes\":1e400,\"peak_bytes\":0,\"launches\":0}\n"
             "{\"process\":43,\"live_bytes\":-1,\"peak_bytes\":0,\"launches\":0}\n"
             "{\"process\":44,\"live_bytes\":2097152,\"peak_bytes\":3145728,"
             "\"launches\":10}\n"
             "{\"process\":\"x\"}\n"
             "{\"process\":45,\"live_bytes\":1 \n"
             "{\"site\":1,\"pid\":44,\"live_bytes\":NaN,\"blocks\":1}\n";
  struct top_sample s = {0};
  top_parse_jsonl(v, sizeof v - 1, &s);
  top_parse_metrics(m, sizeof m - 1, &s);
  CHECK_EQ_U64(s.loss.bad_lines, 17); /* 12 of /metrics, 5 of /top.jsonl */
  CHECK_EQ_U64(s.loss.over_caps, 0);
  CHECK_EQ_U64(s.nprocs, 2);
  CHECK_EQ_U64(s.launches, 0);
  CHECK_EQ_U64(s.copy_bytes[1], 0); /* HtoD: +Inf */
  CHECK_EQ_U64(s.copy_bytes[2], 2048);
  CHECK_EQ_U64(s.nkernels, 1);
  CHECK(s.nkernels == 1 && !strcmp(s.kernels[0].name, "a} 9") &&
        s.kernels[0].gpu_s == 0.25);
  CHECK(s.gpu_util == 50 && s.ngpus == 1);
  char **lines;
  size_t n = screen_of(NULL, &s, 24, &lines);
  static const char *const want[] = {
      "gputrace top 127.0.0.1:9400  every 0.0s  GPU util 50 %  dropped 0",
      "incomplete: 17 bad lines skipped",
      "PID            LIVE*        PEAK    LAUNCH/S    GPU%",
      "44          2.00 MiB    3.00 MiB           -       -",
      "8           1.00 MiB           -           -       -",
      "COPIES  DtoH - (2.00 KiB)",
  };
  check_lines(lines, n, want, sizeof want / sizeof *want, "bad values");
  top_lines_free(lines, n);
  top_sample_free(&s);
}

#define MANY 100000
#define SITES 20
#define FRAMES 14
/* A common start, as C++ names have: the cost of each comparison */
#define PREFIX "void deep::name_space::detail::kernels::templated<float, 128, 4, true>::"

/* /metrics of MANY processes and MANY kernels; /top.jsonl of SITES sites
 * of FRAMES frames, the first holding a 1 MiB function name of \u escapes. */
static void hostile_sample(struct top_sample *s, double t, double seconds) {
  size_t cap = (size_t)MANY * 256, n = 0;
  char *m = gt_xcalloc(cap, 1), *v = gt_xcalloc(4u << 20, 1);
  for (int i = 1; i <= MANY; i++)
    n += (size_t)snprintf(m + n, cap - n,
                          "gputrace_device_memory_bytes{pid=\"%d\"} %d\n"
                          "gputrace_kernel_gpu_seconds_total{kernel=\"" PREFIX
                          "k%06d\"} %.1f\n",
                          i, i * 1024, i, seconds);
  size_t k = (size_t)sprintf(v, "{\"gputrace_top\":1}\n");
  for (int i = 1; i <= SITES; i++) {
    k +=
        (size_t)sprintf(v + k, "{\"site\":%d,\"pid\":1,\"live_bytes\":%d,\"blocks\":1}\n",
                        i, (SITES + 1 - i) << 20);
    for (int f = 0; f < FRAMES; f++) {
      k += (size_t)sprintf(v + k, "{\"frame\":%d,\"function\":\"", i);
      for (int e = 0; i == 1 && f == 0 && e < (1 << 20) / 6; e++)
        k += (size_t)sprintf(v + k, "\\u0041");
      k +=
          (size_t)sprintf(v + k, "f%d\",\"file\":\"/src/a.cu\",\"line\":%d}\n", f, f + 1);
    }
  }
  memset(s, 0, sizeof *s);
  top_parse_jsonl(v, k, s);
  top_parse_metrics(m, n, s);
  s->t = t;
  free(m);
  free(v);
}

/* The caps: what is kept, what is counted. */
static void test_caps(void) {
  struct top_sample a, b;
  hostile_sample(&a, 10, 1.0);
  hostile_sample(&b, 12, 1.5);
  CHECK_EQ_U64(b.nprocs, TOP_PROCS_MAX);
  CHECK_EQ_U64(b.nkernels, TOP_KERNELS_MAX);
  CHECK_EQ_U64(b.nsites, TOP_SITES);
  CHECK_EQ_U64(b.sites[0].nframes, TOP_FRAMES);
  CHECK_EQ_U64(b.sites[TOP_SITES - 1].nframes, TOP_FRAMES);
  CHECK_EQ_U64(strlen(b.sites[0].frames[0].function), (1 << 20) / 6 + 2); /* "AAA…f0" */
  /* kept: the first ones; counted: the processes and kernels past 1024, 4
   * sites (their frames go with them), 2 frames of each site kept */
  CHECK_EQ_U64(b.loss.over_caps, 2 * (MANY - 1024) + (SITES - TOP_SITES) +
                                     TOP_SITES * (FRAMES - TOP_FRAMES));
  CHECK_EQ_U64(b.loss.bad_lines, 0);
  CHECK_EQ_U64(b.procs[TOP_PROCS_MAX - 1].pid, 1024);
  char **lines;
  size_t n = screen_of(&a, &b, 24, &lines);
  static const char *const want[] = {
      "gputrace top 127.0.0.1:9400  every 2.0s  GPU util -  dropped 0",
      "incomplete: 197988 series over the caps",
      "PID            LIVE*        PEAK    LAUNCH/S    GPU%",
      "1024        1.00 MiB           -           -     0.0",
      "1023        1023 KiB           -           -     0.0",
  };
  check_lines(lines, n, want, sizeof want / sizeof *want, "caps");
  top_lines_free(lines, n);
  top_sample_free(&a);
  top_sample_free(&b);
}

/* Two hostile samples parsed and drawn: linear, this takes a few hundred
 * ms (seconds under sanitizers); the parse that was quadratic in the series
 * (a process found by a scan, a kernel's earlier figure by a scan of the
 * earlier sample's, a \u escape measured with strlen of the rest) takes
 * minutes. The child runs under RLIMIT_CPU: SIGXCPU if it is not linear. */
static void test_linear(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit cpu = {20, 21};
    setrlimit(RLIMIT_CPU, &cpu);
    struct top_sample a, b;
    char **lines;
    hostile_sample(&a, 10, 1.0);
    hostile_sample(&b, 12, 1.5);
    size_t n = screen_of(&a, &b, 24, &lines);
    int drawn = n > 5 && !strcmp(lines[1], "incomplete: 197988 series over the caps");
    top_lines_free(lines, n);
    top_sample_free(&a);
    top_sample_free(&b);
    _exit(drawn ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "parsing and drawing %d series: %s %d (SIGXCPU: over 20 s of CPU)", 2 * MANY,
            WIFSIGNALED(status) ? "signal" : "status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* CJK and fullwidth names: two columns a character, padded and cut so. */
static void test_wide_names(void) {
  static const char *const kern[] = {"核函数_ｆｕｌｌ",
                                     "ns::" /* 40 CJK characters */
                                     "漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢"
                                     "漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢(int)"};
  struct top_sample a = {0}, b = {0};
  for (int i = 0; i < 2; i++) {
    char m[1024];
    int n = snprintf(m, sizeof m,
                     "gputrace_kernel_gpu_seconds_total{kernel=\"%s\"} %s\n"
                     "gputrace_kernel_gpu_seconds_total{kernel=\"%s\"} %s\n",
                     kern[0], i ? "0.5" : "0.1", kern[1], i ? "0.3" : "0.1");
    top_parse_metrics(m, (size_t)n, i ? &b : &a);
  }
  a.t = 10, b.t = 12;
  char **lines;
  size_t n = screen_of(&a, &b, 24, &lines);
  /* a name column of 58: 15 columns and 43 spaces; 1 + 27 * 2 + 3 */
  static const char *const want[] = {
      "KERNEL (GPU time in the last interval)                        GPU TIME     GPU%",
      "核函数_ｆｕｌｌ                                                 400 ms     20.0",
      "…漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢(…)      200 ms     10.0",
  };
  CHECK_MSG(n > 7, "%zu lines", n);
  if (n > 7)
    check_lines(lines + 4, n - 4, want, sizeof want / sizeof *want, "wide names");
  top_lines_free(lines, n);
  top_sample_free(&a);
  top_sample_free(&b);
}

/* Requests: /metrics' per-range count and own-work GPU seconds (the
 * collector's range_gpu rule) as requests/s over the interval, GPU time per
 * request (totals over count) and GPU % over the interval, by GPU time; a
 * name without requests yet left out. */
static const char req_metrics[] =
    "gputrace_request_seconds_bucket{range=\"req:chat\",le=\"0.01\"} %d\n"
    "gputrace_request_seconds_sum{range=\"req:chat\"} 1.5\n"
    "gputrace_request_seconds_count{range=\"req:chat\"} %d\n"
    "gputrace_request_seconds_count{range=\"req:embed\"} %d\n"
    "gputrace_request_seconds_count{range=\"idle\"} 0\n"
    "gputrace_request_gpu_seconds_total{range=\"req:chat\"} %s\n"
    "gputrace_request_gpu_seconds_total{range=\"req:embed\"} %s\n"
    "gputrace_request_gpu_seconds_total{range=\"idle\"} 0\n"
    "gputrace_request_copy_bytes_total{range=\"req:chat\"} 7\n";

static void req_sample(struct top_sample *s, double t, int chat, int embed,
                       const char *chat_s, const char *embed_s) {
  char m[2048];
  snprintf(m, sizeof m, req_metrics, chat, chat, embed, chat_s, embed_s);
  memset(s, 0, sizeof *s);
  top_parse_metrics(m, strlen(m), s);
  s->t = t;
}

static void test_requests(void) {
  struct top_sample a, b;
  req_sample(&a, 10, 100, 10, "0.5", "0.02");
  req_sample(&b, 12, 300, 14, "1.5", "0.028");
  CHECK_EQ_U64(b.nrequests, 3);
  CHECK_EQ_U64(b.loss.bad_lines, 0);
  CHECK_EQ_U64(b.requests[0].count, 300);
  CHECK(b.requests[0].gpu_s == 1.5);
  struct top_screen scr = {"127.0.0.1:9400", 80, 16, 0, TOP_SORT_MEMORY};
  char **lines;
  size_t n = top_view_lines(&scr, &a, &b, &lines);
  static const char *const want[] = {
      "REQUEST (NVTX range)                                 REQ/S     GPU/REQ     GPU%",
      "req:chat                                             100.0     5.00 ms     50.0",
      "req:embed                                              2.0     2.00 ms      0.4",
      "ALLOCATION SITE (live device memory)             PID        LIVE  BLOCKS",
  };
  size_t at = 0;
  while (at < n && strncmp(lines[at], "REQUEST", 7))
    at++;
  CHECK_MSG(at + 4 <= n, "no requests table in %zu lines", n);
  for (size_t i = 0; at + i < n && i < 4; i++)
    CHECK_MSG(!strcmp(lines[at + i], want[i]), "line %zu: got '%s', want '%s'", at + i,
              lines[at + i], want[i]);
  top_lines_free(lines, n);
  n = top_view_lines(&scr, NULL, &b, &lines); /* the first sample: no rates yet */
  at = 0;
  while (at < n && strncmp(lines[at], "REQUEST", 7))
    at++;
  CHECK_MSG(at + 1 < n &&
                !strcmp(lines[at + 1], "req:chat                                         "
                                       "        -     5.00 ms        -"),
            "first sample: '%s'", at + 1 < n ? lines[at + 1] : "");
  top_lines_free(lines, n);
  top_sample_free(&a);
  top_sample_free(&b);
}

int main(void) {
  test_screen();
  test_requests();
  test_bad_values();
  test_caps();
  test_linear();
  test_wide_names();
  return check_finish("test_top");
}
