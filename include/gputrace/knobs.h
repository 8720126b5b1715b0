/* knobs.h — the GPUTRACE_* environment variables, parsed in one place.
 *
 * Contract:
 *  - Every knob has a type, a documented default and bounds (the table in
 *    common/knobs.c; docs/cli.md lists them). gt_knob returns its value:
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

/* The knobs, by what they set; their names, types, defaults, bounds and
 * help are knobs.c's table (one entry per id: test_knobs checks each has
 * one), which the warnings and the man page are made from. */
enum gt_knob_id {
  GT_KNOB_DISABLE,           /* forward calls untraced */
  GT_KNOB_QUIET,             /* no warnings on stderr */
  GT_KNOB_FORCE,             /* overwrite an existing GPUTRACE_OUTPUT */
  GT_KNOB_NVTX,              /* set NVTX_INJECTION64_PATH */
  GT_KNOB_RING_KB,           /* the ring per process */
  GT_KNOB_CLOCK,             /* the clock of host stamps */
  GT_KNOB_STACKS,            /* which calls get stacks */
  GT_KNOB_GPU_TIMING,        /* device timing's source */
  GT_KNOB_GPU_TIMING_SAMPLE, /* launches timed: adaptive, or 1 in N */
  GT_KNOB_GPU_TIMING_EVENTS, /* the event pool */
  GT_KNOB_NVML_MS,           /* NVML's sampling period (collector) */
  GT_KNOB_GPU_TIMING_BUDGET, /* adaptive timing's share of a thread's time */
  GT_KNOB_PPROF_EVERY,       /* time between live profiles (collector) */
  GT_KNOB_PPROF_KEEP,        /* live profiles kept per process and kind */
  GT_KNOB_LAUNCH_STACKS,     /* launch stacks: adaptive, or 1 in N */
  GT_KNOB_CAPTURE_RANGE,     /* record only in capture ranges (the name: getenv) */
  GT_KNOB_READ_WAIT,         /* how long a reader waits for a live collector */
  GT_KNOB_STACK_CAP,         /* distinct stacks per process */
  GT_KNOB_UNWIND,            /* how native stacks are unwound */
  GT_KNOB_COUNT
};

/* The most distinct call stacks a process interns (its table: 32 MiB at
 * most); GPUTRACE_STACK_CAP may only lower it. */
#define GT_STACK_CAP_MAX 1048576u

/* Choice indices of the choice knobs. */
enum { GT_CLOCK_AUTO = 0, GT_CLOCK_FORCE_MONOTONIC = 1 };
enum { GT_STACKS_ALLOC = 0, GT_STACKS_ALL = 1, GT_STACKS_NONE = 2 };
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
