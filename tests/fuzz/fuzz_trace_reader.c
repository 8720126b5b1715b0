/* fuzz_trace_reader.c — libFuzzer target: arbitrary bytes as a .gtrace file,
 * read to the end through a session with every layer, in time order, each
 * record printed as dump prints it (what every subcommand runs). Built two
 * ways: with clang -fsanitize=fuzzer for fuzz sessions (scripts/fuzz.sh),
 * and with replay.c as a plain program that runs the seed corpus in ctest
 * (under ASan+UBSan in CI). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fields.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ctx {
  FILE *out;
  struct gt_model *model;
};

static void print(void *arg, const struct gt_event *ev) {
  struct ctx *c = arg;
  struct gt_record scratch;
  const struct gt_record *r = gt_event_record(ev, &scratch);
  gt_fields_json(c->out, r, c->model);
  gt_fields_text(c->out, r, c->model);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  if (write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return 0;
  }
  char path[64], err[256];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  struct gt_session_opts o = {.path = path,
                              .layers = GT_LAYER_HEAP | GT_LAYER_NVTX | GT_LAYER_SYMBOLS,
                              .ordered = 1,
                              .quiet = 1, /* damage is the point here */
                              .threads = 0};
  struct gt_session *s = gt_session_open(&o, err, sizeof err);
  struct ctx c = {.out = fopen("/dev/null", "w")};
  if (s && c.out) {
    c.model = gt_session_model(s);
    struct gt_tool tool = {.ctx = &c};
    gt_tool_all(&tool, print);
    gt_session_run(s, &tool);
  }
  if (c.out)
    fclose(c.out);
  gt_session_close(s);
  close(fd);
  return 0;
}
