/* test_pprof.c — model/pprof_build.c: interning, merging and the written
 * file, read back (gunzip, protobuf-c unpack) field by field. What go tool
 * pprof makes of real profiles is checked end to end (tests/e2e). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "pprof_build.h"
#include "profile.pb-c.h"

static const char *str(const Perftools__Profiles__Profile *pr, int64_t i) {
  return i >= 0 && (size_t)i < pr->n_string_table ? pr->string_table[i] : "?";
}

static Perftools__Profiles__Profile *read_back(const char *path) {
  gzFile gz = gzopen(path, "rb");
  static uint8_t buf[1 << 16];
  int n = gz ? gzread(gz, buf, sizeof buf) : -1;
  if (gz)
    gzclose(gz);
  return n > 0 ? perftools__profiles__profile__unpack(NULL, (size_t)n, buf) : NULL;
}

int main(void) {
  const char *types[] = {"alloc_objects", "alloc_space"}, *units[] = {"count", "bytes"};
  struct gt_pprof *p = gt_pprof_new(types, units, 2, 0); /* headline: the first */
  uint64_t f_main = gt_pprof_function(p, "main", "app.c");
  uint64_t f_leak = gt_pprof_function(p, "leak", "app.c");
  CHECK(gt_pprof_function(p, "main", "app.c") == f_main); /* interned */
  CHECK(gt_pprof_function(p, "main", "other.c") != f_main);
  uint64_t m = gt_pprof_mapping(p, 0x400000, 0x500000, 0, "/bin/app", "abcd");
  struct gt_pprof_line inl[] = {{f_leak, 20}, {f_main, 52}}; /* leak inlined in main */
  uint64_t l1 = gt_pprof_native(p, m, 0x401000, inl, 2);
  CHECK(gt_pprof_native(p, m, 0x401000, inl, 2) == l1);
  uint64_t py = gt_pprof_source(p, gt_pprof_function(p, "serve", "server.py"), 7);
  CHECK(gt_pprof_source(p, gt_pprof_function(p, "serve", "server.py"), 7) == py);
  uint64_t stack[] = {l1, py};
  int64_t one_mib[] = {1, 1 << 20};
  struct gt_pprof_label dev[] = {{"memory", "device", 0}, {"pid", NULL, 42}};
  struct gt_pprof_label pin[] = {{"memory", "pinned_host", 0}, {"pid", NULL, 42}};
  gt_pprof_add(p, stack, 2, one_mib, dev, 2);
  gt_pprof_add(p, stack, 2, one_mib, dev, 2); /* merged with the first */
  gt_pprof_add(p, stack, 2, one_mib, pin, 2); /* another label: another sample */
  int64_t tot[2];
  gt_pprof_totals(p, tot);
  CHECK(tot[0] == 3 && tot[1] == 3 << 20);
  char path[] = "/tmp/test_pprof_XXXXXX", err[256] = "";
  int fd = mkstemp(path);
  close(fd);
  CHECK(gt_pprof_write(p, path, 1000, 2000, err, sizeof err) == 0);
  Perftools__Profiles__Profile *pr = read_back(path);
  CHECK(pr != NULL);
  if (pr) {
    CHECK(pr->n_string_table > 0 && strcmp(pr->string_table[0], "") == 0);
    CHECK(pr->n_sample_type == 2 &&
          !strcmp(str(pr, pr->sample_type[1]->type), "alloc_space") &&
          !strcmp(str(pr, pr->sample_type[1]->unit), "bytes"));
    CHECK(!strcmp(str(pr, pr->default_sample_type), "alloc_objects") && pr->period_type &&
          !strcmp(str(pr, pr->period_type->type), "alloc_objects"));
    CHECK(pr->n_sample == 2);
    CHECK(pr->sample[0]->n_value == 2 && pr->sample[0]->value[0] == 2 &&
          pr->sample[0]->value[1] == 2 << 20);
    CHECK(pr->sample[0]->n_location_id == 2 && pr->sample[0]->location_id[0] == l1);
    CHECK(pr->sample[0]->n_label == 2 &&
          !strcmp(str(pr, pr->sample[0]->label[0]->str), "device") &&
          pr->sample[0]->label[1]->num == 42);
    CHECK(pr->n_location == 2 && pr->location[0]->n_line == 2 &&
          pr->location[0]->line[0]->line == 20 && pr->location[0]->mapping_id == m &&
          pr->location[0]->address == 0x401000);
    CHECK(pr->n_function == 4 &&
          !strcmp(str(pr, pr->function[f_leak - 1]->name), "leak") &&
          !strcmp(str(pr, pr->function[f_leak - 1]->filename), "app.c"));
    CHECK(pr->n_mapping == 1 && !strcmp(str(pr, pr->mapping[0]->build_id), "abcd"));
    CHECK(pr->time_nanos == 1000 && pr->duration_nanos == 2000);
    perftools__profiles__profile__free_unpacked(pr, NULL);
  }
  CHECK(gt_pprof_write(p, "/nonexistent-dir/x.pb.gz", 0, 0, err, sizeof err) == -1 &&
        strstr(err, "/nonexistent-dir/x.pb.gz") != NULL);
  unlink(path);
  gt_pprof_free(p);
  return check_finish("test_pprof");
}
