/* shared_options.h — the options several gputrace commands take, each
 * defined here once (its name, its value's name, its help), as entries of
 * a command's option table (gputrace/options.h).
 *
 * Contract: a command that takes one of these spells it with this macro,
 * so the option means, parses and reads the same in every command. Times
 * are relative to the trace's first record (the session's origin). */
#ifndef GPUTRACE_SHARED_OPTIONS_H
#define GPUTRACE_SHARED_OPTIONS_H

#include "gputrace/options.h"

/* The description (struct gt_command) of a command that reads one trace:
 * `gputrace NAME [options] FILE`. */
#define GT_TRACE_COMMAND(name, opts, about_text)                                         \
  {                                                                                      \
    .prog = "gputrace " name, .options = (opts), .args = "FILE", .min_args = 1,          \
    .max_args = 1, .about = (about_text)                                                 \
  }

/* int *p: 1 for JSON output. */
#define GT_OPT_JSON(p) GT_OPT_FLAG(0, "json", p, "JSON instead of text")

/* int *p: 1 to print names whole in text tables (else gt_name_fit'd). */
#define GT_OPT_WIDE(p)                                                                   \
  GT_OPT_FLAG(0, "wide", p, "names whole, not shortened to their column")

/* uint32_t *p: the process; int *given: 1 when --pid was given. */
#define GT_OPT_PID(p, given)                                                             \
  {                                                                                      \
    .name = "pid", .type = GT_OPTION_UINT32, .arg = "P", .help = "only process P",       \
    .value = (p), .seen = (given)                                                        \
  }

/* uint64_t *p: ns after the first record. */
#define GT_OPT_FROM(p)                                                                   \
  GT_OPT_DURATION(0, "from", p, "T", "from T after the first record (1.5, 250ms, 10us)")
#define GT_OPT_TO(p) GT_OPT_DURATION(0, "to", p, "T", "up to T after the first record")

/* const char **p: where the output goes; its name and help are the
 * command's (what it writes, the default). */
#define GT_OPT_OUTPUT(p, arg, help) GT_OPT_STRING('o', "output", p, arg, help)

/* int *p: 1 to overwrite an existing output (gputrace/outfile.h's rules). */
#define GT_OPT_FORCE(p)                                                                  \
  GT_OPT_FLAG(0, "force", p, "overwrite the output if it exists (a file you own)")

/* Options `record` and `collect` hand the collector as given
 * (collector/main.c), checked here first: each is flag i of the command's
 * list, whose first GT_PASS_ROLLING are GT_PASS_ROLLING_FLAGS, its
 * argument kept in pass[i]; sizes and durations must not be 0. */
#define GT_PASS_ROLLING_FLAGS "--max-size", "--keep", "--roll-size"
enum { GT_PASS_MAX_SIZE, GT_PASS_KEEP, GT_PASS_ROLL_SIZE, GT_PASS_ROLLING };
#define GT_OPT_PASSED(flags, pass, i, t, a, h)                                           \
  .name = (flags)[i] + 2, .type = (t), .arg = (a), .help = (h), .text = &(pass)[i],      \
  .min = 1
/* Always-on recording (collector/output.c): the three entries. */
/* clang-format off */
#define GT_OPT_ROLLING(flags, pass)                                                      \
  {GT_OPT_PASSED(flags, pass, GT_PASS_MAX_SIZE, GT_OPTION_SIZE, "SIZE",                  \
                 "roll over files; delete the oldest past SIZE in all")},                \
  {GT_OPT_PASSED(flags, pass, GT_PASS_KEEP, GT_OPTION_DURATION, "DURATION",              \
                 "roll over files; delete those older than DURATION")},                  \
  {GT_OPT_PASSED(flags, pass, GT_PASS_ROLL_SIZE, GT_OPTION_SIZE, "SIZE",                 \
                 "roll over to a new file every SIZE")}
/* clang-format on */

/* const char **p: where the collector serves live metrics (collector/prom.c). */
#define GT_OPT_PROMETHEUS(p)                                                             \
  GT_OPT_CALLBACK(0, "prometheus", p, gt_option_host_port, "ADDR:PORT",                  \
                  "serve live metrics on http://ADDR:PORT/metrics")

/* int *p: gt_session_opts.no_wait (session.h). */
#define GT_OPT_NO_WAIT(p)                                                                \
  GT_OPT_FLAG(0, "no-wait", p, "read a trace still being written as it is")

#endif
