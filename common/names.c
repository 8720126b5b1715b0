/* names.c — printable names of the schema's enums (see schema.h), and the API
 * table gt_apis[] generated from apis.h. */
#include "gputrace/schema.h"

#define GT_VAR_L 0
#define GT_VAR_PT 1
const struct gt_api_info gt_apis[GT_API_COUNT] = {
#define GT_X_INFO(name, kind, fam, base, var, v2_from, flags)                            \
  {#name, #base, GT_KIND_##kind, GT_FAM_##fam, GT_VAR_##var, v2_from, flags},
    GT_API_LIST(GT_X_INFO)
#undef GT_X_INFO
};
#undef GT_VAR_L
#undef GT_VAR_PT

static const char *const kind_names[GT_KIND_COUNT] = {
#define GT_X_KIND_NAME(name, value, class, text) [value] = text,
    GT_KIND_LIST(GT_X_KIND_NAME)
#undef GT_X_KIND_NAME
};

const char *gt_api_name(unsigned api) {
  return api < GT_API_COUNT ? gt_apis[api].name : "?";
}

unsigned gt_api_kind(unsigned api) {
  return api < GT_API_COUNT ? gt_apis[api].kind : 0;
}

const char *gt_kind_name(unsigned kind) {
  return gt_kind_in_table(kind) ? kind_names[kind] : "?";
}

const char *gt_memory_name(unsigned memory) {
  static const char *const names[] = {"unknown", "device", "pinned_host", "managed"};
  return memory < 4 ? names[memory] : "?";
}

const char *gt_dir_name(unsigned dir) {
  static const char *const names[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default", "peer"};
  return dir < 6 ? names[dir] : "?";
}

const char *gt_nvtx_op_name(unsigned op) {
  static const char *const names[] = {"?", "push", "pop", "mark", "start", "end"};
  return op < 6 ? names[op] : "?";
}

static const char *const metric_names[] = {
    "?",
    "gpu_util",
    "mem_util",
    "mem_used",
    "mem_total",
    "temperature",
    "power",
    "power_limit",
    "sm_clock",
    "mem_clock",
    "pcie_tx",
    "pcie_rx",
    "temp_slowdown",
    "clock_events",
    "ecc_corrected",
    "ecc_uncorrected",
    "xid",
    "processes",
    "proc_mem",
};
static const char *const metric_units[] = {
    "?",   "%",   "%", "bytes", "bytes", "C",     "W",   "W",     "MHz",   "MHz",
    "B/s", "B/s", "C", "mask",  "count", "count", "xid", "count", "bytes",
};

_Static_assert(sizeof metric_names / sizeof metric_names[0] == GT_METRIC_COUNT &&
                   sizeof metric_units / sizeof metric_units[0] == GT_METRIC_COUNT,
               "a name and a unit per metric");

const char *gt_metric_name(unsigned metric) {
  return metric < GT_METRIC_COUNT ? metric_names[metric] : "?";
}

const char *gt_metric_unit(unsigned metric) {
  return metric < GT_METRIC_COUNT ? metric_units[metric] : "?";
}
