/* fuzz_trace_reader.c — libFuzzer target: arbitrary bytes as a .gtrace file,
 * read to the end through the reader and the analysis model (what every
 * subcommand runs). Built two ways: with clang -fsanitize=fuzzer for fuzz
 * sessions (scripts/fuzz.sh), and with replay.c as a plain program that runs
 * the seed corpus in ctest (under ASan+UBSan in CI). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gputrace/trace_file.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
  struct gt_reader *r = gt_reader_open(path, err, sizeof err);
  if (r) {
    gt_reader_set_quiet(r, 1); /* damage is the point here */
    struct gt_model *m = gt_model_new();
    const struct gt_record *rec;
    struct gt_record buf[GT_MAX_SLOTS];
    struct gt_range range;
    while (gt_reader_next(r, &rec) == 1) {
      memcpy(buf, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
      gt_model_feed(m, &buf[0], &range);
      if (buf[0].kind == GT_KIND_LAUNCH)
        (void)gt_model_kernel(m, &buf[0]);
    }
    gt_model_free(m);
    gt_reader_close(r);
  }
  close(fd);
  return 0;
}
