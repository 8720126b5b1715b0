/* options.h — command-line options: one table per command, one parser, the
 * usage line and --help generated from the table (after Linux perf's
 * parse-options). The gputrace commands and gputrace-collector use it.
 *
 * Contract:
 *  - A command is described once: its options (a table of struct gt_option,
 *    built with the GT_OPT_* macros, GT_OPT_END last) and its positional
 *    arguments (struct gt_command: their name in the usage, how many).
 *    gt_options_parse reads argv by that description; the usage line and
 *    the help are printed from it, so they cannot disagree with the parser.
 *  - Syntax: `--name VALUE`, `--name=VALUE`, `-x VALUE` (the next argument
 *    is the value even when it begins with '-'); a flag takes no value.
 *    `--` ends the options: every argument after it is positional. A lone
 *    `-` is positional. Options and positional arguments mix in any order,
 *    except with GT_CMD_STOP_AT_ARG, where the first positional argument
 *    ends the options (a command line to run, with options of its own).
 *  - Values are checked as they are read, by the option's type (the GT_OPTION_*
 *    comments say what `value` points to), and stored; `seen` (if set) is set
 *    to 1 and `text` (if set) keeps the argument as given. A repeated option:
 *    the last one wins (a callback sees every one, so it can keep a list).
 *  - Options that cannot be given together: two GT_OPTION_SET options that
 *    share `value` (two choices of one setting) with different `set_to`,
 *    and an option with any option its `excludes` names (long names,
 *    space-separated, of the same table; checked both ways).
 *  - Errors, each one line on stderr beginning with the command's `prog`,
 *    then the usage on stderr; status 2. Parsing stops at the first one.
 *      unknown option          "PROG: unexpected argument '--x' (unknown option)"
 *      no value after it       "PROG: missing value for --x"
 *      a value given a flag    "PROG: --x takes no value"
 *      a bad value             "PROG: bad --x 'V' (want WHAT)"
 *      too few positionals     "PROG: missing argument"
 *      one too many            "PROG: unexpected argument 'A'"
 *      a required option       "PROG: missing option --x"
 *      two that conflict       "PROG: --x and --y cannot be used together"
 *                              (in the order given)
 *      a wrong table           "PROG: bad option table (WHY)" (a programming
 *                              error: an `excludes` naming no option, ...)
 *    A value a knob's rules refuse (GT_OPTION_KNOB) gets the bad-value line
 *    alone, the knob's own message (gputrace/knobs.h), without the usage.
 *  - `-h` / `--help`: the help (usage line, the command's `about`, one line
 *    per option) on stdout, status 0. `--version` where the command has a
 *    version: "PROG VERSION" on stdout, status 0. Both are the parser's own:
 *    no table uses those names. So is `--gt-describe=WHAT`, hidden from the
 *    help: the command's description on stdout, status 0, for the
 *    generators of the top-level help, the man page and the bash completion
 *    (gt_options_describe); no table uses names beginning "gt-".
 *  - On success the positional arguments are moved to argv[0..*nargs), and
 *    argv[*nargs] is NULL (argv[0], the command's name, is never one).
 *  - No allocation, no global state.
 */
#ifndef GPUTRACE_OPTIONS_H
#define GPUTRACE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum gt_option_type {
  GT_OPTION_END = 0,  /* ends a table */
  GT_OPTION_FLAG,     /* int: set to 1; takes no value */
  GT_OPTION_SET,      /* int: set to `set_to`; takes no value (one of several choices) */
  GT_OPTION_STRING,   /* const char *: the argument */
  GT_OPTION_INT,      /* int: decimal digits, from min to max (max 0: INT_MAX) */
  GT_OPTION_UINT32,   /* uint32_t: decimal digits, from min to max (0: UINT32_MAX) */
  GT_OPTION_UINT64,   /* uint64_t: decimal digits, from min to max (0: UINT64_MAX) */
  GT_OPTION_DURATION, /* uint64_t ns: gt_parse_duration (units.h), min to max (0: none) */
  GT_OPTION_SIZE,     /* uint64_t bytes: gt_parse_size (units.h), min to max (0: none) */
  GT_OPTION_KNOB,     /* uint64_t (or NULL): by the rules of knob `knob` (knobs.h) */
  GT_OPTION_CALLBACK, /* anything: `callback` checks and stores the argument */
};

struct gt_option;

/* A callback option's argument: 0 when taken, or -1 with what is wanted
 * written to want (the parser reports the bad value). */
typedef int (*gt_option_fn)(const struct gt_option *o, const char *arg, char *want,
                            size_t wantlen);

/* A callback for listening addresses (const char *value): HOST:PORT or
 * [V6]:PORT with a port from 0 to 65535 (gt_parse_host_port, units.h). */
int gt_option_host_port(const struct gt_option *o, const char *arg, char *want,
                        size_t wantlen);
/* A callback for --snapshot-webhook (const char *value): "local" or "any". */
int gt_option_webhook(const struct gt_option *o, const char *arg, char *want,
                      size_t wantlen);

#define GT_OPTION_REQUIRED 1u /* flags: the command does not run without it */

struct gt_option {
  const char *name; /* long name, without "--"; NULL ends the table */
  char short_name;  /* "-x"; 0: none */
  enum gt_option_type type;
  const char *arg;       /* the value's name in the usage ("FILE"); NULL for flags */
  const char *help;      /* one line for --help */
  void *value;           /* where the value goes; NULL: checked, not kept */
  int *seen;             /* set to 1 when given; may be NULL */
  const char **text;     /* the argument as given (valued options); may be NULL */
  uint64_t min, max;     /* bounds of numbers, durations and sizes */
  int set_to;            /* GT_OPTION_SET */
  int knob;              /* GT_OPTION_KNOB: an enum gt_knob_id */
  gt_option_fn callback; /* GT_OPTION_CALLBACK */
  unsigned flags;        /* GT_OPTION_REQUIRED */
  const char *excludes;  /* long names of options it cannot be given with; may be NULL */
};

/* The value pointer, checked against the type its option stores (as
 * perf's check_vtype; an entry written out as a struct uses it for its
 * .value too): a pointer to anything else fails to compile (GCC:
 * "'_Generic' selector ... not compatible with any association"); NULL (a
 * void *) is allowed: checked, not kept. The ctest options_vtype plants a
 * wrong one (tests/unit/options_vtype.c). */
#define GT_OPT_VALUE_PTR(p, T) _Generic((p), T * : (void *)(p), void * : (p))
#define GT_OPT_FLAG(s, l, p, h)                                                          \
  {                                                                                      \
    .name = (l), .short_name = (s), .type = GT_OPTION_FLAG, .help = (h),                 \
    .value = GT_OPT_VALUE_PTR(p, int)                                                    \
  }
#define GT_OPT_SET(s, l, p, v, h)                                                        \
  {                                                                                      \
    .name = (l), .short_name = (s), .type = GT_OPTION_SET, .help = (h),                  \
    .value = GT_OPT_VALUE_PTR(p, int), .set_to = (v)                                     \
  }
#define GT_OPT_VALUE_(t, T, s, l, p, a, h)                                               \
  {                                                                                      \
    .name = (l), .short_name = (s), .type = (t), .arg = (a), .help = (h),                \
    .value = GT_OPT_VALUE_PTR(p, T)                                                      \
  }
#define GT_OPT_STRING(s, l, p, a, h)                                                     \
  GT_OPT_VALUE_(GT_OPTION_STRING, const char *, s, l, p, a, h)
#define GT_OPT_INT(s, l, p, a, h) GT_OPT_VALUE_(GT_OPTION_INT, int, s, l, p, a, h)
#define GT_OPT_UINT32(s, l, p, a, h)                                                     \
  GT_OPT_VALUE_(GT_OPTION_UINT32, uint32_t, s, l, p, a, h)
#define GT_OPT_UINT64(s, l, p, a, h)                                                     \
  GT_OPT_VALUE_(GT_OPTION_UINT64, uint64_t, s, l, p, a, h)
#define GT_OPT_DURATION(s, l, p, a, h)                                                   \
  GT_OPT_VALUE_(GT_OPTION_DURATION, uint64_t, s, l, p, a, h)
#define GT_OPT_SIZE(s, l, p, a, h) GT_OPT_VALUE_(GT_OPTION_SIZE, uint64_t, s, l, p, a, h)
#define GT_OPT_KNOB(s, l, p, k, a, h)                                                    \
  {                                                                                      \
    .name = (l), .short_name = (s), .type = GT_OPTION_KNOB, .arg = (a), .help = (h),     \
    .value = GT_OPT_VALUE_PTR(p, uint64_t), .knob = (k)                                  \
  }
#define GT_OPT_CALLBACK(s, l, p, fn, a, h)                                               \
  {                                                                                      \
    .name = (l), .short_name = (s), .type = GT_OPTION_CALLBACK, .arg = (a), .help = (h), \
    .value = (p), .callback = (fn)                                                       \
  }
#define GT_OPT_END                                                                       \
  { .name = NULL }

/* flags: the first positional argument ends the options */
#define GT_CMD_STOP_AT_ARG 1u

struct gt_command {
  const char *prog; /* how messages and the usage begin: "gputrace report" */
  const struct gt_option *options;
  const char *args;    /* the positional arguments in the usage ("FILE"); NULL: none */
  int min_args;        /* positional arguments wanted */
  int max_args;        /* taken at most; -1: any number */
  unsigned flags;      /* GT_CMD_STOP_AT_ARG */
  const char *about;   /* --help: a line under the usage; may be NULL */
  const char *version; /* takes --version and prints "PROG VERSION"; NULL: not */
};

#define GT_OPTIONS_RUN (-1) /* gt_options_parse: parsed, the command runs */

/* GT_OPTIONS_RUN with the positional arguments in argv[0..*nargs), or the
 * status to exit with: 0 after --help or --version, 2 after an error. */
int gt_options_parse(const struct gt_command *c, int argc, char **argv, int *nargs);

/* The usage's word for the option at o, "[--x VALUE]" ("-x" when it has a
 * short name; no brackets when required), or "[--a | --b | --c]" for the
 * choices of one setting that follow each other in the table (GT_OPTION_SET
 * on one `value`); returns the option after those it took. */
const struct gt_option *gt_options_word(const struct gt_option *o, char *word,
                                        size_t len);
/* "usage: PROG [options...] ARGS", wrapped to fit 80 columns. */
void gt_options_usage(const struct gt_command *c, FILE *to);
/* The usage, the about line, then one line per option with its help. */
void gt_options_help(const struct gt_command *c, FILE *to);

/* The command described from its table, as `--gt-describe=WHAT` prints it:
 *   "summary"  "  NAME     ABOUT" and the usage under it, indented (the
 *              top-level help's entry; NAME: prog's last word)
 *   "man"      a roff (man(7)) section: .SS NAME, the synopsis, the about,
 *              one .TP paragraph per option with its help
 *   "bash"     one `case` arm of the completion function: NAME) then
 *              opts='...' (every option, -h/--help included), files='...'
 *              (options whose value is a file: FILE, OUT..., PATH),
 *              dirs='...' (DIR), args='...' (the others that take a value),
 *              nfiles=N (positional arguments that are files: 0 when the
 *              command's arguments are a command line)
 * 0, or -1 (nothing printed) when WHAT is none of these. */
int gt_options_describe(const struct gt_command *c, const char *what, FILE *to);
/* Text as roff (man(7)) prints it literally: '\\' and '-' escaped, a
 * leading '.' or '\'' kept from being a request. */
void gt_options_roff(FILE *to, const char *text);

#endif
