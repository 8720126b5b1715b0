/* knobs.h — the GPUTRACE_* environment variables, parsed in one place.
 *
 * Contract:
 *  - Every knob has a type, a documented default and bounds (GT_KNOBS
 *    below, the one list; docs/cli.md lists them). gt_knob returns its value:
 *    booleans 0/1 (1, true, yes, on / 0, false, no, off, any case),
 *    numbers within their bounds (decimal digits only; "auto" is 0 for the
 *    numbers that adapt by default), choices as their index in the table's
 *    list.
 *  - Unset or empty: the default, silently. Anything else that does not
 *    parse, or is out of bounds: the default, after one line on stderr
 *    ("gputrace: ignoring GPUTRACE_RING_KB=16777216 (want ...); using
 *    32768"), once per knob and process, unless GPUTRACE_QUIET=1.
 *  - gt_knobs_check_names warns (once) about GPUTRACE_* variables that are
 *    no knob at all, such as a misspelt GPUTRACE_RINGKB.
 *  - No allocation and no lock: the shim calls it at start-up, from the
 *    traced process.
 */
#ifndef GPUTRACE_KNOBS_H
#define GPUTRACE_KNOBS_H

#include <stddef.h>
#include <stdint.h>

/* A WINDOW knob's value: a size in bytes, or a duration in ns with
 * GT_WINDOW_BY_TIME set (gt_window_by_time, gt_window_value); a duration
 * from 1 s to 30 days, kept within GT_WINDOW_TIME_CAP_BYTES. */
#define GT_WINDOW_BY_TIME (1ull << 63)
#define GT_WINDOW_TIME_CAP_BYTES (1024ull << 20)
#define GT_WINDOW_TIME_CAP_TEXT "1GiB"
#define GT_WINDOW_DURATION_MAX_S (30ull * 86400)
static inline int gt_window_by_time(uint64_t v) {
  return (v & GT_WINDOW_BY_TIME) != 0;
}
static inline uint64_t gt_window_value(uint64_t v) {
  return v & ~GT_WINDOW_BY_TIME;
}

/* The knobs, one row each: X(ID, NAME, TYPE, DEFAULT, LO, HI, UNIT,
 * (CHOICES), HELP). The enum below is made of the IDs; knobs.c makes the
 * parser's table of the rest (TYPE: one of its types; DURATION bounds in
 * whole seconds, SIZE and WINDOW bounds in MiB; a choice ending in ":NAME" takes any
 * non-empty name after its prefix), and the warnings and the man page come from that
 * table. */
/* clang-format off */
#define GT_KNOBS(X) \
  X(DISABLE, GT_ENV_DISABLE, BOOL, \
    0, 0, 1, NULL, (NULL), \
    "forward calls only, trace nothing") \
  X(QUIET, GT_ENV_QUIET, BOOL, \
    0, 0, 1, NULL, (NULL), \
    "no warnings on stderr") \
  X(FORCE, "GPUTRACE_FORCE", BOOL, \
    0, 0, 1, NULL, (NULL), \
    "overwrite an existing GPUTRACE_OUTPUT (as record --force)") \
  X(NVTX, "GPUTRACE_NVTX", BOOL, \
    1, 0, 1, NULL, (NULL), \
    "set NVTX_INJECTION64_PATH when unset, to record NVTX ranges") \
  X(RING_KB, GT_ENV_RING_KB, NUMBER, \
    GT_DEFAULT_RING_KB, 16, GT_RING_MAX_BYTES / 1024, "KiB", (NULL), \
    "the ring each traced process writes into") \
  X(FULL_WAIT_US, "GPUTRACE_FULL_WAIT_US", NUMBER, \
    50000, 0, 1000000, "us", (NULL), \
    "a thread whose ring is full yields to the collector while it reads; it drops after this long without (0: at once)") \
  X(CLOCK, "GPUTRACE_CLOCK", CHOICE, \
    0, 0, 0, NULL, ("auto", "monotonic"), \
    "the clock: monotonic never stamps with the TSC") \
  X(STACKS, "GPUTRACE_STACKS", CHOICE, \
    0, 0, 0, NULL, ("alloc", "all", "none", "alloc+free"), \
    "call stacks of allocations, call sites (frees among them) and sampled launches; of every call; none; or alloc's and each free's own (as record --stacks)") \
  X(GPU_TIMING, "GPUTRACE_GPU_TIMING", CHOICE, \
    0, 0, 0, NULL, ("auto", "events", "cupti", "off"), \
    "device timing: auto is CUDA events; CUPTI on request") \
  X(GPU_TIMING_SAMPLE, "GPUTRACE_GPU_TIMING_SAMPLE", AUTO_NUMBER, \
    0, 1, 1000000, "calls", (NULL), \
    "auto: launches sampled within GPUTRACE_GPU_TIMING_BUDGET; N: one call in N") \
  X(GPU_TIMING_EVENTS, "GPUTRACE_GPU_TIMING_EVENTS", NUMBER, \
    65536, 2, 4194304, "events", (NULL), \
    "the device timing event pool") \
  X(NVML_MS, "GPUTRACE_NVML_MS", NUMBER, \
    500, 10, 3600000, "ms", (NULL), \
    "the collector's NVML sampling period") \
  X(GPU_TIMING_BUDGET, "GPUTRACE_GPU_TIMING_BUDGET", NUMBER, \
    1, 1, 100, "percent", (NULL), \
    "the share of a thread's time timing its launches may cost it") \
  X(PPROF_EVERY, "GPUTRACE_PPROF_EVERY", DURATION, \
    60000000000ull, 1, 86400, NULL, (NULL), \
    "the time between live profiles (collector)") \
  X(PPROF_KEEP, "GPUTRACE_PPROF_KEEP", NUMBER, \
    60, 0, 1000000, "files", (NULL), \
    "live profiles kept per process and kind; 0: all") \
  X(LAUNCH_STACKS, "GPUTRACE_LAUNCH_STACKS", AUTO_NUMBER, \
    0, 1, 1000000000, "launches", (NULL), \
    "launch stacks: auto adapts to 1 % of a thread's time; N: one launch in N") \
  X(CAPTURE_RANGE, "GPUTRACE_CAPTURE_RANGE", CHOICE, \
    0, 0, 0, NULL, ("none", "cudaProfilerApi", "nvtx:NAME"), \
    "record only inside capture ranges (as record --capture-range)") \
  X(READ_WAIT, "GPUTRACE_READ_WAIT", DURATION, \
    60000000000ull, 0, 86400, NULL, (NULL), \
    "how long a command waits for a trace's collector to finish it") \
  X(STACK_CAP, "GPUTRACE_STACK_CAP", NUMBER, \
    GT_STACK_CAP_MAX, 1, GT_STACK_CAP_MAX, "stacks", (NULL), \
    "distinct call stacks kept per process; calls past it have none (counted)") \
  X(FLIGHT_RECORDER, "GPUTRACE_FLIGHT_RECORDER", WINDOW, \
    0, 4, 1048576, NULL, (NULL), \
    "keep the last SIZE (or DURATION, within " GT_WINDOW_TIME_CAP_TEXT ") of trace in memory, written when asked or at an out-of-memory (as record --flight-recorder; collector)") \
  X(UNWIND, "GPUTRACE_UNWIND", CHOICE, \
    0, 0, 0, NULL, ("cached", "backtrace"), \
    "native stacks from cached unwind rules, or all from glibc's " \
    "backtrace() (the same frames, about 25x the cost)")
/* clang-format on */

enum gt_knob_id {
#define GT_KNOB_ID(id, ...) GT_KNOB_##id,
  GT_KNOBS(GT_KNOB_ID)
#undef GT_KNOB_ID
      GT_KNOB_COUNT
};

/* The most distinct call stacks a process interns (its table: 32 MiB at
 * most); GPUTRACE_STACK_CAP may only lower it. */
#define GT_STACK_CAP_MAX 1048576u

/* Choice indices of the choice knobs. */
enum { GT_CLOCK_AUTO = 0, GT_CLOCK_FORCE_MONOTONIC = 1 };
enum {
  GT_STACKS_ALLOC = 0,
  GT_STACKS_ALL = 1,
  GT_STACKS_NONE = 2,
  GT_STACKS_ALLOC_FREE = 3
};
enum { GT_UNWIND_CACHED = 0, GT_UNWIND_BACKTRACE = 1 };
enum { GT_TIMING_AUTO = 0, GT_TIMING_EVENTS = 1, GT_TIMING_CUPTI = 2, GT_TIMING_OFF = 3 };
enum { GT_RANGE_NONE = 0, GT_RANGE_PROFILER = 1, GT_RANGE_NVTX = 2 };

uint64_t gt_knob(enum gt_knob_id id);
void gt_knobs_check_names(void);
/* Parse a value given some other way (a command-line option) by the knob's
 * rules: 0, or -1 with what is wanted ("a whole number of KiB from ...") in
 * want. */
int gt_knob_parse(enum gt_knob_id id, const char *value, uint64_t *out, char *want,
                  size_t wantlen);
/* For the man page, from the same table: the knob's variable name
 * ("GPUTRACE_RING_KB"), what it does (one line), and the values it takes as
 * its warning says them, then its default ("a whole number of KiB from 16
 * to 1048576; default 32768"). */
const char *gt_knob_name(enum gt_knob_id id);
const char *gt_knob_help(enum gt_knob_id id);
void gt_knob_values(enum gt_knob_id id, char *buf, size_t len);

#endif
