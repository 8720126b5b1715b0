/* sym_bench.c — the collector's symbolizer (collector/symbols.c) per
 * unique address: every call's return address in FILE (an -O2 -g object),
 * in STACK records of 64, symbolized once each (cold: the file's DWARF is read on
 * the first lookups) and again in a fresh process entry of the same file
 * (warm: the file stays cached, so only the lookups count). Prints ns per
 * address and FRAME records per address (inline levels).
 * Usage: gputrace-sym-bench FILE [REPEATS=3]
 * Addresses come from `objdump -d FILE` (run by the bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "gputrace/schema.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void count(void *ctx, const struct gt_record *frame) {
  (void)frame;
  ++*(uint64_t *)ctx;
}

/* Every call's return address in FILE (objdump -d: the instruction after
 * each call), as a stack holds them. */
static size_t addresses(const char *file, uint64_t **out) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "objdump -d --no-show-raw-insn '%s'", file);
  FILE *p = popen(cmd, "r");
  if (!p)
    return 0;
  size_t n = 0, cap = 0;
  int after_call = 0;
  char line[4096];
  while (fgets(line, sizeof line, p)) {
    unsigned long long a;
    char op[16];
    if (sscanf(line, " %llx: %15s", &a, op) != 2)
      continue;
    if (after_call) {
      if (n == cap &&
          !(*out = realloc(*out, (cap = cap ? cap * 2 : 1024) * sizeof **out)))
        exit(1);
      (*out)[n++] = a;
    }
    after_call = strncmp(op, "call", 4) == 0;
  }
  pclose(p);
  return n;
}

static double run(struct gt_symbolizer *s, uint32_t pid, const char *file,
                  const uint64_t *ips, size_t n, uint64_t *frames) {
  struct gt_record mod[GT_MAX_SLOTS];
  memset(mod, 0, sizeof mod);
  mod[0].kind = GT_KIND_MODULE;
  mod[0].u.module.start = 0;
  mod[0].u.module.end = UINT64_MAX >> 1;
  gt_record_attach_text(&mod[0], file, strlen(file));
  uint64_t t0 = now_ns();
  gt_sym_add_module(s, pid, &mod[0]);
  for (size_t i = 0; i < n; i += 64) {
    struct gt_record st[GT_MAX_SLOTS];
    memset(st, 0, sizeof st);
    st[0].kind = GT_KIND_STACK;
    size_t k = n - i < 64 ? n - i : 64;
    st[0].u.stack.depth = (uint32_t)k;
    gt_record_attach_text(&st[0], (const char *)(ips + i), k * sizeof *ips);
    gt_sym_stack(s, pid, &st[0], count, frames);
  }
  double ns = (double)(now_ns() - t0) / (double)n;
  gt_sym_forget(s, pid);
  return ns;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gputrace-sym-bench FILE [REPEATS]\n");
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  uint64_t *ips = NULL;
  size_t n = addresses(argv[1], &ips);
  if (n == 0) {
    fprintf(stderr, "gputrace-sym-bench: no function symbols in %s\n", argv[1]);
    return 2;
  }
  for (int r = 0; r < reps; r++) {
    struct gt_symbolizer *s = gt_sym_new();
    uint64_t cold_frames = 0, warm_frames = 0;
    double cold = run(s, 1, argv[1], ips, n, &cold_frames);
    double warm = run(s, 2, argv[1], ips, n, &warm_frames);
    printf("%zu addresses: cold %.0f ns/address, warm %.0f ns/address, %.2f "
           "frames/address\n",
           n, cold, warm, (double)warm_frames / (double)n);
    gt_sym_free(s);
  }
  free(ips);
  return 0;
}
