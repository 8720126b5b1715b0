/* export_tables.c — the tables of `gputrace export` (see export.h): the
 * one definition both writers work from, and docs/export.md's schema.
 *
 * Contract: each table lists its columns in the order ex_run fills them
 * (export_rows.c); a column named "id" comes first and is the table's key
 * (SQLite's INTEGER PRIMARY KEY). Times are ns relative to the trace's
 * origin (metadata.origin_ns), signed. The per-kind columns follow the
 * names dump --json gives the same fields (model/fields.c), split into one
 * column per value (grid_x, ..., not "[x,y,z]") and as numbers, not hex
 * strings, so that they join and compare. Appending a column is safe;
 * changing one's meaning raises EX_SCHEMA_VERSION. */
#include "export.h"

#define I(n, u)                                                                          \
  { n, EX_INT, u }
#define R(n, u)                                                                          \
  { n, EX_REAL, u }
#define T(n)                                                                             \
  { n, EX_TEXT, "" }
#define N(cols) (sizeof(cols) / sizeof((cols)[0]))
/* What every call table starts with, after its id. */
#define CALL_COLUMNS                                                                     \
  I("pid", ""), I("tid", ""), T("api"), I("start_ns", "ns"), I("dur_ns", "ns"),          \
      I("result", "cudaError_t"), I("stack_id", "")
/* When the work ran on the device, and how that was measured: its DEVICE
 * record (which then has no row of its own), NULL when untimed. */
#define DEVICE_COLUMNS                                                                   \
  I("device_start_ns", "ns"), I("device_end_ns", "ns"), I("device_ns", "ns"),            \
      I("device_sample", "1 in N"), T("device_source"), I("device", ""),                 \
      I("device_estimated", "0/1"), I("device_wait_ns", "ns"),                           \
      I("device_upper_bound", "0/1")

static const struct ex_column metadata[] = {T("key"), T("value")};
static const struct ex_column processes[] = {
    I("pid", ""),      I("ppid", ""),      I("start_ns", "ns"),
    I("end_ns", "ns"), I("exited", "0/1"), T("cmdline"),
    I("records", ""),  I("dropped", ""),   I("lost", "")};
static const struct ex_column threads[] = {
    I("pid", ""), I("tid", ""), I("first_ns", "ns"), I("last_ns", "ns"), I("calls", "")};
static const struct ex_column api_calls[] = {I("id", ""), CALL_COLUMNS, T("kind"),
                                             I("handle", ""), I("handle2", "")};
static const struct ex_column launches[] = {I("id", ""),       CALL_COLUMNS,
                                            T("kernel"),       I("grid_x", ""),
                                            I("grid_y", ""),   I("grid_z", ""),
                                            I("block_x", ""),  I("block_y", ""),
                                            I("block_z", ""),  I("shared_mem", "bytes"),
                                            I("stream", ""),   I("corr", ""),
                                            I("graph", "0/1"), I("captured", "0/1"),
                                            I("node", "0/1"),  DEVICE_COLUMNS};
static const struct ex_column copies[] = {
    I("id", ""),         CALL_COLUMNS,         T("dir"),
    I("bytes", "bytes"), I("stream", ""),      I("dst", ""),
    I("src", ""),        I("width", "bytes"),  I("height", "rows"),
    I("pinned", "0/1"),  I("pageable", "0/1"), I("async", "0/1"),
    I("corr", ""),       I("captured", "0/1"), I("node", "0/1"),
    DEVICE_COLUMNS};
static const struct ex_column memsets[] = {
    I("id", ""),      CALL_COLUMNS,    I("ptr", ""),  I("bytes", "bytes"),
    I("value", ""),   I("stream", ""), I("corr", ""), I("captured", "0/1"),
    I("node", "0/1"), DEVICE_COLUMNS};
static const struct ex_column allocations[] = {
    I("id", ""),         I("pid", ""),
    I("tid", ""),        T("api"),
    I("start_ns", "ns"), I("result", "cudaError_t"),
    I("stack_id", ""),   T("memory"),
    I("ptr", ""),        I("bytes", "bytes"),
    T("ended"),          I("free_id", ""),
    I("free_ns", "ns"),  I("free_tid", ""),
    T("free_api"),       I("free_stack_id", "")};
static const struct ex_column frees[] = {
    I("id", ""), CALL_COLUMNS,        I("ptr", ""),     T("status"),
    T("memory"), I("bytes", "bytes"), I("alloc_id", "")};
static const struct ex_column stacks[] = {I("pid", ""), I("stack_id", ""),
                                          I("depth", "frames"), I("python", "frames")};
static const struct ex_column frames[] = {
    I("pid", ""),  I("stack_id", ""), I("level", ""),     T("function"), T("file"),
    I("line", ""), T("module"),       I("python", "0/1"), I("ip", "")};
static const struct ex_column nvtx_ranges[] = {
    I("id", ""),         I("pid", ""),      I("tid", ""),      T("name"),
    I("start_ns", "ns"), I("end_ns", "ns"), I("dur_ns", "ns"), I("depth", ""),
    I("domain", ""),     I("gpu_ns", "ns")};
/* DEVICE records that no call row took (the others are in their call's
 * row, DEVICE_COLUMNS): the columns of the `device` view (ex_device_view). */
static const struct ex_column device_unmatched[] = {I("id", ""),
                                                    I("pid", ""),
                                                    I("tid", ""),
                                                    T("of_kind"),
                                                    T("api"),
                                                    T("kernel"),
                                                    I("start_ns", "ns"),
                                                    I("end_ns", "ns"),
                                                    I("dur_ns", "ns"),
                                                    I("stream", ""),
                                                    I("bytes", "bytes"),
                                                    T("dir"),
                                                    I("corr", ""),
                                                    I("sample", "1 in N"),
                                                    T("source"),
                                                    I("device", ""),
                                                    I("estimated", "0/1"),
                                                    I("wait_ns", "ns"),
                                                    I("upper_bound", "0/1")};
static const struct ex_column metrics[] = {
    I("id", ""), I("ts_ns", "ns"),   I("device", ""), T("metric"),
    T("unit"),   R("value", "unit"), I("pid", "")};

#define TABLE(id, n, ix) [id] = {#n, n, N(n), ix}
const struct ex_table ex_tables[EX_NTABLES] = {
    TABLE(EX_METADATA, metadata, ""),
    TABLE(EX_PROCESSES, processes, ""),
    TABLE(EX_THREADS, threads, ""),
    TABLE(EX_API_CALLS, api_calls, ""),
    TABLE(EX_LAUNCHES, launches, "tid,start_ns"),
    TABLE(EX_COPIES, copies, "tid,start_ns"),
    TABLE(EX_MEMSETS, memsets, ""),
    TABLE(EX_ALLOCATIONS, allocations, "pid,start_ns;pid,stack_id"),
    TABLE(EX_FREES, frees, "alloc_id"),
    TABLE(EX_STACKS, stacks, "pid,stack_id"),
    TABLE(EX_FRAMES, frames, "pid,stack_id"),
    TABLE(EX_NVTX_RANGES, nvtx_ranges, ""),
    TABLE(EX_DEVICE_UNMATCHED, device_unmatched, ""),
    TABLE(EX_METRICS, metrics, "metric,ts_ns"),
};
_Static_assert(N(((const struct ex_column[]){DEVICE_COLUMNS})) == EX_DEVICE_COLUMNS,
               "export.h counts the device columns");
_Static_assert(N(launches) <= EX_MAX_COLUMNS && N(copies) <= EX_MAX_COLUMNS &&
                   N(device_unmatched) <= EX_MAX_COLUMNS &&
                   N(allocations) <= EX_MAX_COLUMNS,
               "rows fit a row buffer");

/* Every DEVICE record in one view (SQLite's `device`), beside their calls' rows:
 * the timed rows of launches, copies and memsets (call_id: the row's id),
 * then device_unmatched (call_id NULL).
 * A launch's DEVICE record has bytes 0 and no dir; stream, bytes, dir, api
 * and kernel of a matched one are its call's. One clause a line (not
 * clang-formatted). */
#define DEV_COLS(t)                                                                      \
  "device_start_ns AS start_ns, device_end_ns AS end_ns, device_ns AS dur_ns, "          \
  "stream, " t ", corr, device_sample AS sample, device_source AS source, device, "      \
  "device_estimated AS estimated, id AS call_id, device_wait_ns AS wait_ns, "            \
  "device_upper_bound AS upper_bound"
/* clang-format off */
const char ex_device_view[] =
    "CREATE VIEW device AS "
    "SELECT pid, tid, 'launch' AS of_kind, api, kernel, "
    DEV_COLS("0 AS bytes, NULL AS dir") " FROM launches WHERE device_start_ns IS NOT NULL "
    "UNION ALL SELECT pid, tid, 'memcpy', api, NULL, "
    DEV_COLS("bytes, dir") " FROM copies WHERE device_start_ns IS NOT NULL "
    "UNION ALL SELECT pid, tid, 'memset', api, NULL, "
    DEV_COLS("bytes, NULL") " FROM memsets WHERE device_start_ns IS NOT NULL "
    "UNION ALL SELECT pid, tid, of_kind, api, kernel, start_ns, end_ns, dur_ns, stream, "
    "bytes, dir, corr, sample, source, device, estimated, NULL, wait_ns, upper_bound "
    "FROM device_unmatched";
/* clang-format on */
