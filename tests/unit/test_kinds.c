/* test_kinds.c — the record kind table (schema.h GT_KIND_LIST): the enum,
 * the names and the class tests all come from it, and they agree with the
 * on-disk values the trace format documents; and the METRIC ids' values,
 * names and units. */
#include <stdio.h>
#include <string.h>

#include "check.h"

#include "gputrace/schema.h"

int main(void) {
  /* on-disk values, names and classes (docs/trace-format.md): one pin per
   * kind (tests/arch/check_checklists.py checks every kind has its pin) */
  static const struct {
    unsigned kind, value;
    const char *name;
    unsigned kclass;
  } pins[] = {
      {GT_KIND_ALLOC, 1, "alloc", GT_KCLASS_CALL},
      {GT_KIND_FREE, 2, "free", GT_KCLASS_CALL},
      {GT_KIND_MEMCPY, 3, "memcpy", GT_KCLASS_CALL},
      {GT_KIND_MEMSET, 4, "memset", GT_KCLASS_CALL},
      {GT_KIND_LAUNCH, 5, "launch", GT_KCLASS_CALL},
      {GT_KIND_SYNC, 6, "sync", GT_KCLASS_CALL},
      {GT_KIND_STREAM, 7, "stream", GT_KCLASS_CALL},
      {GT_KIND_EVENT, 8, "event", GT_KCLASS_CALL},
      {GT_KIND_NVTX, 9, "nvtx", GT_KCLASS_CALL},
      {GT_KIND_PROCESS, 10, "process", GT_KCLASS_MACHINE},
      {GT_KIND_KERNEL_NAME, 11, "kernel_name", GT_KCLASS_DEF},
      {GT_KIND_DROP, 12, "drop", GT_KCLASS_LOSS},
      {GT_KIND_LOST, 13, "lost", GT_KCLASS_LOSS},
      {GT_KIND_DEVICE, 14, "device", GT_KCLASS_DEVICE},
      {GT_KIND_STACK, 15, "stack", GT_KCLASS_DEF},
      {GT_KIND_MODULE, 16, "module", GT_KCLASS_DEF},
      {GT_KIND_PYFRAME, 17, "pyframe", GT_KCLASS_DEF},
      {GT_KIND_FRAME, 18, "frame", GT_KCLASS_DEF},
      {GT_KIND_METRIC, 19, "metric", GT_KCLASS_MACHINE},
      {GT_KIND_NOTE, 20, "note", GT_KCLASS_MACHINE},
      {GT_KIND_GRAPH, 21, "graph", GT_KCLASS_CALL},
      {GT_KIND_HEAP, 22, "heap", GT_KCLASS_MACHINE},
  };
  CHECK_MSG(GT_KIND_COUNT == 23, "%u kinds", (unsigned)GT_KIND_COUNT);
  CHECK_MSG(sizeof pins / sizeof pins[0] == GT_KIND_COUNT - 1, "a kind without its pin");
  for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
    CHECK_MSG(pins[i].kind == pins[i].value &&
                  !strcmp(gt_kind_name(pins[i].kind), pins[i].name) &&
                  gt_kind_class(pins[i].kind) == pins[i].kclass,
              "kind %s: value %u, name %s, class %u", pins[i].name, pins[i].kind,
              gt_kind_name(pins[i].kind), gt_kind_class(pins[i].kind));
  static const char *const calls[] = {"alloc", "free",   "memcpy", "memset", "launch",
                                      "sync",  "stream", "event",  "nvtx",   "graph"};
  unsigned ncalls = 0;
  for (unsigned k = 0; k < GT_KIND_COUNT; k++) {
    const char *name = gt_kind_name(k);
    CHECK_MSG(name && strcmp(name, "?") != 0, "kind %u has no name", k);
    for (unsigned j = 0; j < k; j++)
      CHECK_MSG(strcmp(name, gt_kind_name(j)) != 0, "kinds %u and %u share %s", j, k,
                name);
    int is_call = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
      is_call |= strcmp(name, calls[i]) == 0;
    CHECK_MSG(gt_kind_is_call(k) == is_call, "%s: is_call %d", name, gt_kind_is_call(k));
    ncalls += gt_kind_is_call(k);
    CHECK_MSG(gt_kind_class(k) != GT_KCLASS_NONE || k == GT_KIND_NONE, "%s: no class",
              name);
  }
  CHECK_MSG(ncalls == sizeof calls / sizeof calls[0], "%u call kinds", ncalls);
  CHECK_MSG(gt_kind_is_def(GT_KIND_KERNEL_NAME) && gt_kind_is_def(GT_KIND_STACK) &&
                gt_kind_is_def(GT_KIND_MODULE) && gt_kind_is_def(GT_KIND_PYFRAME) &&
                gt_kind_is_def(GT_KIND_FRAME) && !gt_kind_is_def(GT_KIND_DEVICE),
            "definitions");
  CHECK_MSG(gt_kind_class(GT_KIND_DEVICE) == GT_KCLASS_DEVICE &&
                gt_kind_class(GT_KIND_DROP) == GT_KCLASS_LOSS &&
                gt_kind_class(GT_KIND_METRIC) == GT_KCLASS_MACHINE &&
                gt_kind_class(GT_KIND_COUNT) == GT_KCLASS_NONE &&
                gt_kind_class(255) == GT_KCLASS_NONE,
            "classes");
  CHECK_MSG(strcmp(gt_kind_name(GT_KIND_COUNT), "?") == 0, "past the table");
  unsigned in_table = 0, records = 0;
  for (unsigned k = 0; k < 256; k++) {
    in_table += (unsigned)gt_kind_in_table(k);
    records += (unsigned)gt_kind_is_record(k);
  }
  CHECK_MSG(in_table == GT_KIND_COUNT && records == GT_KIND_COUNT - 1 &&
                gt_kind_in_table(GT_KIND_NONE) && !gt_kind_is_record(GT_KIND_NONE) &&
                gt_kind_is_record(GT_KIND_GRAPH) && !gt_kind_is_record(GT_KIND_COUNT),
            "in the table %u, record kinds %u", in_table, records);
  /* NVML readings (METRIC records): on-disk values, a name and a unit each */
  CHECK_MSG(GT_METRIC_TEMP_SLOWDOWN == 12 && GT_METRIC_CLOCK_EVENTS == 13 &&
                GT_METRIC_ECC_CORRECTED == 14 && GT_METRIC_ECC_UNCORRECTED == 15 &&
                GT_METRIC_XID == 16 && GT_METRIC_PROCS == 17 &&
                GT_METRIC_PROC_MEM == 18 && GT_METRIC_COUNT == 19,
            "metric values moved");
  for (unsigned m = 1; m < GT_METRIC_COUNT; m++) {
    CHECK_MSG(strcmp(gt_metric_name(m), "?") && strcmp(gt_metric_unit(m), "?"),
              "metric %u has no name or unit", m);
    for (unsigned j = 1; j < m; j++)
      CHECK_MSG(strcmp(gt_metric_name(m), gt_metric_name(j)) != 0, "metrics %u and %u", j,
                m);
  }
  CHECK_MSG(strcmp(gt_metric_name(GT_METRIC_PROC_MEM), "proc_mem") == 0 &&
                strcmp(gt_metric_name(GT_METRIC_COUNT), "?") == 0,
            "metric names");
  return check_finish("test_kinds");
}
