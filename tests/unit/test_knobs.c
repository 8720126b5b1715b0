/* test_knobs.c — one parser for every GPUTRACE_* knob (common/knobs.c):
 * exact values, bounds, defaults, the one-line warning for a bad value
 * (once per knob), GPUTRACE_QUIET silencing it, unknown names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/knobs.h"

static char g_log[] = "/tmp/gt_knobs_XXXXXX";
static int g_saved_stderr;

/* What was written to stderr since the last call. */
static void said(char *buf, size_t len) {
  static long read_to;
  FILE *f = fopen(g_log, "r");
  size_t n = 0;
  if (f && fseek(f, read_to, SEEK_SET) == 0)
    n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  read_to += (long)n;
  if (f)
    fclose(f);
}

static uint64_t knob_with(enum gt_knob_id id, const char *name, const char *value,
                          char *out, size_t len) {
  setenv(name, value, 1);
  uint64_t v = gt_knob(id);
  unsetenv(name);
  said(out, len);
  return v;
}

#define EXPECT(id, name, value, want, line)                                              \
  do {                                                                                   \
    char out_[512];                                                                      \
    CHECK_EQ_U64(knob_with(id, name, value, out_, sizeof out_), want);                   \
    if (strcmp(out_, line) != 0) {                                                       \
      fprintf(stderr, "%s=%s said '%s', expected '%s'\n", name, value, out_, line);      \
      CHECK(0);                                                                          \
    }                                                                                    \
  } while (0)

/* What the man page says of each knob, from the same table: every knob has
 * a name and a help line; values and default as a user writes them. */
static void test_docs(void) {
  char buf[256];
  for (int k = 0; k < GT_KNOB_COUNT; k++) {
    CHECK(gt_knob_name((enum gt_knob_id)k) != NULL);
    CHECK(gt_knob_help((enum gt_knob_id)k) != NULL);
  }
  gt_knob_values(GT_KNOB_RING_KB, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "a whole number of KiB from 16 to 1048576; default 32768"), "%s",
            buf);
  gt_knob_values(GT_KNOB_PPROF_EVERY, buf, sizeof buf);
  CHECK_MSG(
      !strcmp(buf, "a duration such as 60s, 5m or 1h, from 1s to 86400s; default 60s"),
      "%s", buf);
  gt_knob_values(GT_KNOB_STACKS, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "alloc, all, none or alloc+free; default alloc"), "%s", buf);
  gt_knob_values(GT_KNOB_LAUNCH_STACKS, buf, sizeof buf);
  CHECK_MSG(
      !strcmp(buf,
              "auto or a whole number of launches from 1 to 1000000000; default auto"),
      "%s", buf);
}

int main(void) {
  test_docs();
  int log = mkstemp(g_log);
  g_saved_stderr = dup(2);
  dup2(log, 2);
  unsetenv("GPUTRACE_QUIET");
  /* Good values, silently. */
  EXPECT(GT_KNOB_DISABLE, "GPUTRACE_DISABLE", "yes", 1, "");
  EXPECT(GT_KNOB_DISABLE, "GPUTRACE_DISABLE", "TRUE", 1, "");
  EXPECT(GT_KNOB_DISABLE, "GPUTRACE_DISABLE", "off", 0, "");
  EXPECT(GT_KNOB_RING_KB, "GPUTRACE_RING_KB", "1048576", 1048576, "");
  EXPECT(GT_KNOB_RING_KB, "GPUTRACE_RING_KB", "16", 16, "");
  EXPECT(GT_KNOB_RING_KB, "GPUTRACE_RING_KB", "", 32768, "");
  EXPECT(GT_KNOB_STACKS, "GPUTRACE_STACKS", "none", GT_STACKS_NONE, "");
  EXPECT(GT_KNOB_GPU_TIMING, "GPUTRACE_GPU_TIMING", "off", GT_TIMING_OFF, "");
  EXPECT(GT_KNOB_CLOCK, "GPUTRACE_CLOCK", "monotonic", GT_CLOCK_FORCE_MONOTONIC, "");
  EXPECT(GT_KNOB_NVML_MS, "GPUTRACE_NVML_MS", "250", 250, "");
  /* Bad values: the default, after one line naming the knob, what it wants
   * and what is used; once per knob. */
  EXPECT(
      GT_KNOB_RING_KB, "GPUTRACE_RING_KB", "16777216", 32768,
      "gputrace: ignoring GPUTRACE_RING_KB=16777216 (want a whole number of KiB from 16 "
      "to 1048576); using 32768\n");
  EXPECT(GT_KNOB_RING_KB, "GPUTRACE_RING_KB", "-5", 32768, "");
  EXPECT(GT_KNOB_DISABLE, "GPUTRACE_DISABLE", "2", 0,
         "gputrace: ignoring GPUTRACE_DISABLE=2 (want 1 or 0 (also true/false, yes/no, "
         "on/off)); using 0\n");
  EXPECT(GT_KNOB_STACKS, "GPUTRACE_STACKS", "some", GT_STACKS_ALLOC,
         "gputrace: ignoring GPUTRACE_STACKS=some (want alloc, all, none or alloc+free); "
         "using alloc\n");
  EXPECT(GT_KNOB_GPU_TIMING, "GPUTRACE_GPU_TIMING", "fast", GT_TIMING_AUTO,
         "gputrace: ignoring GPUTRACE_GPU_TIMING=fast (want auto, events, cupti or off); "
         "using auto\n");
  EXPECT(
      GT_KNOB_GPU_TIMING_SAMPLE, "GPUTRACE_GPU_TIMING_SAMPLE", "0", 0,
      "gputrace: ignoring GPUTRACE_GPU_TIMING_SAMPLE=0 (want auto or a whole number of "
      "calls from 1 to 1000000); using auto\n");
  EXPECT(GT_KNOB_GPU_TIMING_SAMPLE, "GPUTRACE_GPU_TIMING_SAMPLE", "auto", 0, "");
  EXPECT(GT_KNOB_GPU_TIMING_BUDGET, "GPUTRACE_GPU_TIMING_BUDGET", "5", 5, "");
  EXPECT(
      GT_KNOB_GPU_TIMING_BUDGET, "GPUTRACE_GPU_TIMING_BUDGET", "0", 1,
      "gputrace: ignoring GPUTRACE_GPU_TIMING_BUDGET=0 (want a whole number of percent "
      "from 1 to 100); using 1\n");
  EXPECT(
      GT_KNOB_GPU_TIMING_EVENTS, "GPUTRACE_GPU_TIMING_EVENTS", "1e3", 65536,
      "gputrace: ignoring GPUTRACE_GPU_TIMING_EVENTS=1e3 (want a whole number of events "
      "from 2 to 4194304); using 65536\n");
  EXPECT(GT_KNOB_STACK_CAP, "GPUTRACE_STACK_CAP", "1000", 1000, "");
  EXPECT(GT_KNOB_STACK_CAP, "GPUTRACE_STACK_CAP", "", 1048576, "");
  EXPECT(GT_KNOB_STACK_CAP, "GPUTRACE_STACK_CAP", "2000000", 1048576,
         "gputrace: ignoring GPUTRACE_STACK_CAP=2000000 (want a whole number of stacks "
         "from 1 to 1048576); using 1048576\n");
  EXPECT(GT_KNOB_NVML_MS, "GPUTRACE_NVML_MS", "abc", 500,
         "gputrace: ignoring GPUTRACE_NVML_MS=abc (want a whole number of ms from 10 to "
         "3600000); using 500\n");
  EXPECT(GT_KNOB_PPROF_EVERY, "GPUTRACE_PPROF_EVERY", "90s", 90000000000ull, "");
  EXPECT(GT_KNOB_PPROF_EVERY, "GPUTRACE_PPROF_EVERY", "5m", 300000000000ull, "");
  EXPECT(GT_KNOB_PPROF_EVERY, "GPUTRACE_PPROF_EVERY", "500ms", 60000000000ull,
         "gputrace: ignoring GPUTRACE_PPROF_EVERY=500ms (want a duration such as 60s, 5m "
         "or 1h, from 1s to 86400s); using 60s\n");
  EXPECT(GT_KNOB_PPROF_KEEP, "GPUTRACE_PPROF_KEEP", "0", 0, "");
  EXPECT(GT_KNOB_READ_WAIT, "GPUTRACE_READ_WAIT", "0s", 0, "");
  EXPECT(GT_KNOB_READ_WAIT, "GPUTRACE_READ_WAIT", "5m", 300000000000ull, "");
  EXPECT(GT_KNOB_READ_WAIT, "GPUTRACE_READ_WAIT", "2d", 60000000000ull,
         "gputrace: ignoring GPUTRACE_READ_WAIT=2d (want a duration such as 60s, 5m "
         "or 1h, from 0s to 86400s); using 60s\n");
  EXPECT(GT_KNOB_CLOCK, "GPUTRACE_CLOCK", "tsc", GT_CLOCK_AUTO,
         "gputrace: ignoring GPUTRACE_CLOCK=tsc (want auto or monotonic); using auto\n");
  EXPECT(GT_KNOB_NVTX, "GPUTRACE_NVTX", "99999999999999999999999", 1,
         "gputrace: ignoring GPUTRACE_NVTX=99999999999999999999999 (want 1 or 0 (also "
         "true/false, yes/no, on/off)); using 1\n");
  /* GPUTRACE_QUIET=1 silences the others. */
  setenv("GPUTRACE_QUIET", "1", 1);
  EXPECT(GT_KNOB_FORCE, "GPUTRACE_FORCE", "please", 0, "");
  /* Unknown names, once. */
  setenv("GPUTRACE_QUIET", "0", 1);
  setenv("GPUTRACE_RINGKB", "64", 1);
  setenv("GPUTRACE_STANDIN_MEM_BYTES", "1", 1);      /* the stand-in's own */
  setenv("GPUTRACE_SOCKET_DIR", "/run/gputrace", 1); /* ours, a path: no knob */
  char out[512];
  gt_knobs_check_names();
  gt_knobs_check_names();
  said(out, sizeof out);
  CHECK(strcmp(out,
               "gputrace: ignoring unknown variable GPUTRACE_RINGKB (docs/cli.md)\n") ==
        0);
  char want[160];
  uint64_t v;
  CHECK(gt_knob_parse(GT_KNOB_RING_KB, "2048", &v, want, sizeof want) == 0 && v == 2048);
  CHECK(gt_knob_parse(GT_KNOB_RING_KB, "0x10", &v, want, sizeof want) == -1);
  CHECK(strcmp(want, "a whole number of KiB from 16 to 1048576") == 0);
  dup2(g_saved_stderr, 2);
  unlink(g_log);
  return check_finish("test_knobs");
}
