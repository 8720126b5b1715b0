/* test_options.c — the one command-line parser (common/options.c): flags and
 * choices, every value type, `--opt=value`, `--`, a command line after the
 * first positional, positional counts, required options, the last of a
 * repeated option winning, options that conflict (choices of one setting,
 * `excludes`), and each error's exact message and status (2), the generated
 * usage and help compared byte for byte, --help and --version (status 0),
 * and the descriptions for the top-level help, man page and completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/knobs.h"
#include "gputrace/options.h"
#include "gputrace/units.h"

#define MAX_ARGS 32

/* What a parse printed on stdout and stderr, and its result. */
struct outcome {
  int status, nargs;
  char out[4096], err[4096];
  char *args[MAX_ARGS + 1];
};

static void read_back(FILE *f, char *buf, size_t len) {
  fflush(f);
  rewind(f);
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
}

/* Parse the NULL-terminated words (the command's name first), capturing
 * stdout and stderr. */
static void parse(const struct gt_command *c, struct outcome *r,
                  const char *const *words) {
  char *argv[MAX_ARGS + 1];
  int argc = 0;
  while (words[argc] && argc < MAX_ARGS) {
    argv[argc] = (char *)words[argc];
    argc++;
  }
  argv[argc] = NULL;
  FILE *out = tmpfile(), *err = tmpfile();
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  dup2(fileno(out), 1);
  dup2(fileno(err), 2);
  r->nargs = -1;
  r->status = gt_options_parse(c, argc, argv, &r->nargs);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  read_back(out, r->out, sizeof r->out);
  read_back(err, r->err, sizeof r->err);
  fclose(out);
  fclose(err);
  for (int i = 0; i < MAX_ARGS + 1; i++)
    r->args[i] = i <= r->nargs ? argv[i] : NULL;
}

#define PARSE(c, r, ...) parse(c, r, (const char *const[]){"demo", __VA_ARGS__, NULL})
#define CHECK_STR(a, b)                                                                  \
  CHECK_MSG(strcmp((a), (b)) == 0, "got:\n%s\nwanted:\n%s", (a), (b))

/* ---- one table, every type ---- */

struct values {
  int json, quiet, mode, count, count_seen;
  const char *output, *ring_text;
  uint32_t pid;
  uint64_t big, wait_ns, bytes, ring_kb;
  double pct;
  int pid_seen;
};

static int percent(const struct gt_option *o, const char *arg, char *want, size_t len) {
  char *end;
  double v = strtod(arg, &end);
  if (end == arg || *end || v < 0) {
    snprintf(want, len, "a percentage");
    return -1;
  }
  *(double *)o->value = v;
  return 0;
}

#define DEMO_OPTIONS(v)                                                                  \
  {                                                                                      \
    GT_OPT_FLAG(0, "json", &(v)->json, "JSON"),                                          \
        GT_OPT_FLAG('q', "quiet", &(v)->quiet, "quiet"),                                 \
        GT_OPT_SET(0, "fast", &(v)->mode, 1, "fast"),                                    \
        GT_OPT_SET(0, "slow", &(v)->mode, 2, "slow"),                                    \
        GT_OPT_STRING('o', "output", &(v)->output, "FILE", "the output"),                \
        {.name = "count",                                                                \
         .type = GT_OPTION_INT,                                                          \
         .arg = "N",                                                                     \
         .help = "how many",                                                             \
         .value = &(v)->count,                                                           \
         .seen = &(v)->count_seen,                                                       \
         .min = 1,                                                                       \
         .max = 9},                                                                      \
        {.name = "pid",                                                                  \
         .type = GT_OPTION_UINT32,                                                       \
         .arg = "P",                                                                     \
         .help = "process P",                                                            \
         .value = &(v)->pid,                                                             \
         .seen = &(v)->pid_seen},                                                        \
        GT_OPT_UINT64(0, "big", &(v)->big, "N", "a big number"),                         \
        GT_OPT_DURATION(0, "wait", &(v)->wait_ns, "T", "how long"),                      \
        {.name = "size",                                                                 \
         .type = GT_OPTION_SIZE,                                                         \
         .arg = "SIZE",                                                                  \
         .help = "how much",                                                             \
         .value = &(v)->bytes,                                                           \
         .min = 1},                                                                      \
        {.name = "ring-kb",                                                              \
         .type = GT_OPTION_KNOB,                                                         \
         .knob = GT_KNOB_RING_KB,                                                        \
         .arg = "N",                                                                     \
         .help = "ring",                                                                 \
         .value = &(v)->ring_kb,                                                         \
         .text = &(v)->ring_text},                                                       \
        GT_OPT_CALLBACK(0, "pct", &(v)->pct, percent, "PCT", "a share"), GT_OPT_END      \
  }

static void test_values(void) {
  struct values v = {0};
  const struct gt_option options[] = DEMO_OPTIONS(&v);
  const struct gt_command c = {
      .prog = "demo", .options = options, .args = "FILE", .min_args = 1, .max_args = 1};
  struct outcome r;
  PARSE(&c, &r, "--json", "-q", "--fast", "-o", "out.json", "--count", "7", "--pid",
        "4294967295", "--big", "18446744073709551615", "--wait", "250ms", "--size", "16G",
        "--ring-kb", "64", "--pct", "2.5", "trace.gtrace");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_STR(r.out, "");
  CHECK_STR(r.err, "");
  CHECK_EQ_U64(r.nargs, 1);
  CHECK_STR(r.args[0], "trace.gtrace");
  CHECK(r.args[1] == NULL);
  CHECK_EQ_U64(v.json, 1);
  CHECK_EQ_U64(v.quiet, 1);
  CHECK_EQ_U64(v.mode, 1);
  CHECK_STR(v.output, "out.json");
  CHECK_EQ_U64(v.count, 7);
  CHECK_EQ_U64(v.count_seen, 1);
  CHECK_EQ_U64(v.pid, 4294967295u);
  CHECK_EQ_U64(v.pid_seen, 1);
  CHECK_EQ_U64(v.big, UINT64_MAX);
  CHECK_EQ_U64(v.wait_ns, 250000000);
  CHECK_EQ_U64(v.bytes, 16ull << 30);
  CHECK_EQ_U64(v.ring_kb, 64);
  CHECK_STR(v.ring_text, "64");
  CHECK(v.pct == 2.5);
}

/* --opt=value, positionals anywhere, the last of a repeated option wins,
 * options not given keep their defaults. */
static void test_equals_order_and_repeats(void) {
  struct values v = {.count = 3};
  const struct gt_option options[] = DEMO_OPTIONS(&v);
  const struct gt_command c = {
      .prog = "demo", .options = options, .args = "A B", .min_args = 2, .max_args = 2};
  struct outcome r;
  PARSE(&c, &r, "a.gtrace", "--output=x", "--wait=1.5", "--slow", "--slow", "--output",
        "y", "b.gtrace", "--pid=12", "--pid", "13", "--size=1e9");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_EQ_U64(r.nargs, 2);
  CHECK_STR(r.args[0], "a.gtrace");
  CHECK_STR(r.args[1], "b.gtrace");
  CHECK(r.args[2] == NULL);
  CHECK_STR(v.output, "y");
  CHECK_EQ_U64(v.wait_ns, 1500000000);
  CHECK_EQ_U64(v.mode, 2);
  CHECK_EQ_U64(v.pid, 13);
  CHECK_EQ_U64(v.bytes, 1000000000);
  CHECK_EQ_U64(v.count, 3);
  CHECK_EQ_U64(v.count_seen, 0);
  CHECK_EQ_U64(v.json, 0);
  /* a value may begin with '-'; "-" alone is positional */
  PARSE(&c, &r, "--output", "-", "-", "--output=--x", "z");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_STR(v.output, "--x");
  CHECK_STR(r.args[0], "-");
  CHECK_STR(r.args[1], "z");
}

/* `--` ends the options; GT_CMD_STOP_AT_ARG: so does the first positional. */
static void test_end_of_options(void) {
  struct values v = {0};
  const struct gt_option options[] = DEMO_OPTIONS(&v);
  const struct gt_command c = {.prog = "demo",
                               .options = options,
                               .args = "FILE...",
                               .min_args = 0,
                               .max_args = -1};
  struct outcome r;
  PARSE(&c, &r, "-q", "--", "--json", "-o", "--");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_EQ_U64(r.nargs, 3);
  CHECK_STR(r.args[0], "--json");
  CHECK_STR(r.args[1], "-o");
  CHECK_STR(r.args[2], "--");
  CHECK_EQ_U64(v.json, 0);
  CHECK_EQ_U64(v.quiet, 1);

  const struct gt_command run = {.prog = "demo",
                                 .options = options,
                                 .args = "-- CMD [ARGS...]",
                                 .min_args = 1,
                                 .max_args = -1,
                                 .flags = GT_CMD_STOP_AT_ARG};
  PARSE(&run, &r, "-o", "t", "ls", "-q", "--json", "--", "x");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_EQ_U64(r.nargs, 5);
  CHECK_STR(r.args[0], "ls");
  CHECK_STR(r.args[1], "-q");
  CHECK_STR(r.args[4], "x");
  CHECK(r.args[5] == NULL);
  CHECK_EQ_U64(v.json, 0);
  PARSE(&run, &r, "-o", "t", "--");
  CHECK_EQ_U64(r.status, 2);
  /* the choices of one setting: one word */
  CHECK_STR(r.err, "demo: missing argument\nusage: demo [--json] [-q] [--fast | --slow] "
                   "[-o FILE] [--count N] [--pid P]\n            [--big N] [--wait T] "
                   "[--size SIZE] [--ring-kb N] [--pct PCT]\n            -- CMD "
                   "[ARGS...]\n");
}

/* ---- errors: exact messages, status 2 ---- */

static const struct gt_option small_options[] = {
    GT_OPT_FLAG(0, "json", NULL, "JSON instead of text"),
    {.name = "pid", .type = GT_OPTION_UINT32, .arg = "P", .help = "only process P"},
    {.name = "size",
     .type = GT_OPTION_SIZE,
     .arg = "SIZE",
     .help = "at most SIZE",
     .min = 1},
    {.name = "ring-kb",
     .type = GT_OPTION_KNOB,
     .knob = GT_KNOB_RING_KB,
     .arg = "N",
     .help = "KiB per ring"},
    GT_OPT_STRING('o', "output", NULL, "FILE",
                  "where the output goes (a long help text)"),
    GT_OPT_END};
static const struct gt_command small = {.prog = "gputrace demo",
                                        .options = small_options,
                                        .args = "FILE",
                                        .min_args = 1,
                                        .max_args = 1,
                                        .about = "a demonstration"};
/* wrapped before column 80, under the first option */
#define SMALL_USAGE                                                                      \
  "usage: gputrace demo [--json] [--pid P] [--size SIZE] [--ring-kb N] [-o FILE]\n"      \
  "                     FILE\n"

static void expect_error(const char *const *words, const char *message, int usage) {
  struct outcome r;
  parse(&small, &r, words);
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.out, "");
  char want[1024];
  snprintf(want, sizeof want, "gputrace demo: %s\n%s", message, usage ? SMALL_USAGE : "");
  CHECK_STR(r.err, want);
}

#define ERROR(message, usage, ...)                                                       \
  expect_error((const char *const[]){"demo", __VA_ARGS__, NULL}, message, usage)

static void test_errors(void) {
  ERROR("unexpected argument '--bogus' (unknown option)", 1, "--bogus", "f");
  ERROR("unexpected argument '--bogus=1' (unknown option)", 1, "f", "--bogus=1");
  ERROR("unexpected argument '-x' (unknown option)", 1, "-x", "f");
  ERROR("unexpected argument '-oo' (unknown option)", 1, "-oo", "f");
  ERROR("missing value for --pid", 1, "f", "--pid");
  ERROR("missing value for --output", 1, "f", "-o");
  ERROR("--json takes no value", 1, "--json=yes", "f");
  ERROR("bad --pid 'x' (want a whole number from 0 to 4294967295)", 1, "--pid", "x", "f");
  ERROR("bad --pid '4294967296' (want a whole number from 0 to 4294967295)", 1, "--pid",
        "4294967296", "f");
  ERROR("bad --pid '-1' (want a whole number from 0 to 4294967295)", 1, "--pid=-1", "f");
  ERROR("bad --pid ' 1' (want a whole number from 0 to 4294967295)", 1, "--pid", " 1",
        "f");
  ERROR("bad --size '0' (want a size: 80GiB, 16G, 512MiB, 1e9; more than 0)", 1, "--size",
        "0", "f");
  ERROR("bad --size 'lots' (want a size: 80GiB, 16G, 512MiB, 1e9; more than 0)", 1,
        "--size", "lots", "f");
  /* a knob's value: the knob's one line, as for its GPUTRACE_* variable */
  ERROR("bad --ring-kb '8' (want a whole number of KiB from 16 to 1048576)", 0, "f",
        "--ring-kb", "8");
  ERROR("missing argument", 1, "--json");
  ERROR("unexpected argument 'g'", 1, "f", "g");
  /* the first problem is the one reported */
  ERROR("unexpected argument '--bogus' (unknown option)", 1, "--bogus", "--pid", "x");
}

static void test_required_and_bounds(void) {
  int fd = -1;
  const char *socket = NULL;
  const struct gt_option options[] = {{.name = "socket",
                                       .type = GT_OPTION_STRING,
                                       .arg = "PATH",
                                       .help = "the socket",
                                       .value = &socket,
                                       .flags = GT_OPTION_REQUIRED},
                                      {.name = "fd",
                                       .type = GT_OPTION_INT,
                                       .arg = "N",
                                       .help = "a descriptor",
                                       .value = &fd},
                                      {.name = "wait",
                                       .type = GT_OPTION_DURATION,
                                       .arg = "T",
                                       .help = "a while",
                                       .min = 1000,
                                       .max = 2000000000},
                                      GT_OPT_END};
  const struct gt_command c = {.prog = "daemon", .options = options, .version = "1.2.3"};
  struct outcome r;
  PARSE(&c, &r, "--fd", "7");
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.err, "daemon: missing option --socket\n"
                   "usage: daemon --socket PATH [--fd N] [--wait T]\n");
  PARSE(&c, &r, "--socket", "s", "--fd", "2147483648");
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.err, "daemon: bad --fd '2147483648' (want a whole number from 0 to "
                   "2147483647)\nusage: daemon --socket PATH [--fd N] [--wait T]\n");
  PARSE(&c, &r, "--socket", "s", "--wait", "3s");
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.err, "daemon: bad --wait '3s' (want a duration: 1.5 or 1.5s, 250ms, 10us, "
                   "800ns, 5m, 2h; from 1000ns to 2000000000ns)\n"
                   "usage: daemon --socket PATH [--fd N] [--wait T]\n");
  PARSE(&c, &r, "--socket=s", "--fd", "2147483647");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_EQ_U64(r.nargs, 0);
  CHECK_EQ_U64(fd, 2147483647);
  CHECK_STR(socket, "s");
  PARSE(&c, &r, "positional", "--socket=s");
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.err, "daemon: unexpected argument 'positional'\n"
                   "usage: daemon --socket PATH [--fd N] [--wait T]\n");
  /* --version and --help need no required option */
  PARSE(&c, &r, "--version");
  CHECK_EQ_U64(r.status, 0);
  CHECK_STR(r.out, "daemon 1.2.3\n");
  CHECK_STR(r.err, "");
  PARSE(&c, &r, "-h");
  CHECK_EQ_U64(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK_STR(r.out, "usage: daemon --socket PATH [--fd N] [--wait T]\n\n"
                   "      --socket PATH         the socket\n"
                   "      --fd N                a descriptor\n"
                   "      --wait T              a while\n"
                   "  -h, --help                print this help\n"
                   "      --version             print the version\n");
}

/* ---- the generated usage and help ---- */

static const char small_help[] =
    SMALL_USAGE "a demonstration\n"
                "\n"
                "      --json                JSON instead of text\n"
                "      --pid P               only process P\n"
                "      --size SIZE           at most SIZE\n"
                "      --ring-kb N           KiB per ring\n"
                "  -o, --output FILE         where the output goes (a long help text)\n"
                "  -h, --help                print this help\n";

static void test_help(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  gt_options_help(&small, f);
  fclose(f);
  CHECK_STR(buf, small_help);
  free(buf);
  struct outcome r;
  PARSE(&small, &r, "--pid", "1", "--help", "--bogus");
  CHECK_EQ_U64(r.status, 0);
  CHECK_STR(r.out, small_help);
  CHECK_STR(r.err, "");
  PARSE(&small, &r, "-h");
  CHECK_EQ_U64(r.status, 0);
  CHECK_STR(r.out, small_help);
  /* no version: --version is an unknown option; after `--`, -h is a FILE */
  PARSE(&small, &r, "--version");
  CHECK_EQ_U64(r.status, 2);
  PARSE(&small, &r, "--", "-h");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_STR(r.args[0], "-h");
  /* a long option name: its help on the next line */
  const struct gt_option wide[] = {
      GT_OPT_STRING(0, "capture-range", NULL, "cudaProfilerApi|nvtx:NAME", "ranges only"),
      GT_OPT_END};
  const struct gt_command c = {.prog = "w", .options = wide, .max_args = 0};
  f = open_memstream(&buf, &len);
  gt_options_help(&c, f);
  fclose(f);
  CHECK_STR(buf, "usage: w [--capture-range cudaProfilerApi|nvtx:NAME]\n\n"
                 "      --capture-range cudaProfilerApi|nvtx:NAME\n"
                 "                            ranges only\n"
                 "  -h, --help                print this help\n");
  free(buf);
}

/* ---- conflicts ---- */

struct excl {
  int json, summary, mode, other;
};

#define EXCL_OPTIONS(v, excl)                                                            \
  {                                                                                      \
    GT_OPT_FLAG(0, "json", &(v)->json, "JSON"),                                          \
        {.name = "summary",                                                              \
         .type = GT_OPTION_FLAG,                                                         \
         .help = "counts",                                                               \
         .value = &(v)->summary,                                                         \
         .excludes = (excl)},                                                            \
        GT_OPT_SET(0, "fast", &(v)->mode, 1, "fast"),                                    \
        GT_OPT_SET(0, "slow", &(v)->mode, 2, "slow"),                                    \
        GT_OPT_SET(0, "other", &(v)->other, 2, "another setting"), GT_OPT_END            \
  }
#define EXCL_USAGE "usage: ex [--json] [--summary] [--fast | --slow] [--other] FILE\n"

static void expect_conflict(const struct gt_command *c, const char *const *words,
                            const char *message) {
  struct outcome r;
  parse(c, &r, words);
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.out, "");
  char want[512];
  snprintf(want, sizeof want, "ex: %s\n" EXCL_USAGE, message);
  CHECK_STR(r.err, want);
}

#define CONFLICT(c, message, ...)                                                        \
  expect_conflict(c, (const char *const[]){"ex", __VA_ARGS__, NULL}, message)

/* Two choices of one setting, or an option and one it excludes (either
 * way round): an error naming both in the order given; the same option
 * twice, or choices of different settings, are fine. */
static void test_conflicts(void) {
  struct excl v = {0};
  const struct gt_option options[] = EXCL_OPTIONS(&v, "json");
  const struct gt_command c = {
      .prog = "ex", .options = options, .args = "FILE", .min_args = 1, .max_args = 1};
  CONFLICT(&c, "--fast and --slow cannot be used together", "--fast", "f", "--slow");
  CONFLICT(&c, "--slow and --fast cannot be used together", "--slow", "--fast", "f");
  CONFLICT(&c, "--json and --summary cannot be used together", "--json", "--summary",
           "f");
  CONFLICT(&c, "--summary and --json cannot be used together", "f", "--summary",
           "--json");
  struct outcome r;
  v = (struct excl){0};
  PARSE(&c, &r, "--fast", "--other", "--fast", "--summary", "--summary", "f");
  CHECK_EQ_U64(r.status, GT_OPTIONS_RUN);
  CHECK_EQ_U64(v.mode, 1);
  CHECK_EQ_U64(v.other, 2);
  CHECK_EQ_U64(v.summary, 1);
  CHECK_EQ_U64(v.json, 0);
  /* several names; a name the table lacks is the table's mistake */
  const struct gt_option two[] = EXCL_OPTIONS(&v, "fast  json");
  const struct gt_command c2 = {
      .prog = "ex", .options = two, .args = "FILE", .max_args = 1};
  CONFLICT(&c2, "--summary and --fast cannot be used together", "--summary", "--fast");
  const struct gt_option bad[] = EXCL_OPTIONS(&v, "json jsn");
  const struct gt_command c3 = {.prog = "ex", .options = bad, .args = "FILE"};
  CONFLICT(&c3, "bad option table (--summary excludes --jsn, which it lacks)", "f");
}

/* ---- descriptions ---- */

static void expect_description(const struct gt_command *c, const char *what,
                               const char *want) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ_U64(gt_options_describe(c, what, f), 0);
  fclose(f);
  CHECK_STR(buf, want);
  free(buf);
  struct outcome r;
  char arg[64];
  snprintf(arg, sizeof arg, "--gt-describe=%s", what);
  PARSE(c, &r, arg);
  CHECK_EQ_U64(r.status, 0);
  CHECK_STR(r.out, want);
  CHECK_STR(r.err, "");
}

/* The same table as a top-level help entry, a man page section (roff
 * escapes: '-' and '\\', a leading '.'), and a completion arm. */
static void test_describe(void) {
  const struct gt_option options[] = {
      GT_OPT_FLAG('q', "quiet", NULL, ".quiet\\ly"),
      GT_OPT_STRING('o', "output", NULL, "FILE", "the output (default: -)"),
      GT_OPT_STRING(0, "pprof-dir", NULL, "DIR", "profiles"),
      GT_OPT_UINT32(0, "pid", NULL, "P", "process P"),
      GT_OPT_END,
  };
  const struct gt_command c = {.prog = "gputrace demo",
                               .options = options,
                               .args = "FILE",
                               .min_args = 1,
                               .max_args = 1,
                               .about = "a demonstration of the describing of a command "
                                        "whose about line is long"};
  expect_description(
      &c, "summary",
      "  demo     a demonstration of the describing of a command whose about line is\n"
      "           long\n"
      "           gputrace demo [-q] [-o FILE] [--pprof-dir DIR] [--pid P] FILE\n");
  expect_description(&c, "man",
                     ".SS demo\n\\fBgputrace demo\\fR\n[\\-q]\n[\\-o\\ FILE]\n"
                     "[\\-\\-pprof\\-dir\\ DIR]\n[\\-\\-pid\\ P]\nFILE\n"
                     ".PP\na demonstration of the describing of a command whose about "
                     "line is long.\n"
                     ".TP\n\\fB\\-q\\fR, \\fB\\-\\-quiet\\fR\n\\&.quiet\\ely\n"
                     ".TP\n\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIFILE\\fR\n"
                     "the output (default: \\-)\n"
                     ".TP\n\\fB\\-\\-pprof\\-dir\\fR \\fIDIR\\fR\nprofiles\n"
                     ".TP\n\\fB\\-\\-pid\\fR \\fIP\\fR\nprocess P\n"
                     ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nprint the command's help\n");
  expect_description(&c, "bash",
                     "  demo)\n"
                     "    opts='-q --quiet -o --output --pprof-dir --pid -h --help'\n"
                     "    files='-o --output' dirs='--pprof-dir' args='--pid'\n"
                     "    positional=files ;;\n");
  struct outcome r;
  PARSE(&c, &r, "--gt-describe=html");
  CHECK_EQ_U64(r.status, 2);
  CHECK_STR(r.out, "");
  CHECK_STR(r.err,
            "gputrace demo: bad --gt-describe 'html' (want summary, man or bash)\n");
}

/* The one decimal parser, which options and knobs share: digits only, not
 * empty, up to UINT64_MAX exactly. */
static void test_decimal(void) {
  uint64_t n = 99;
  CHECK(gt_parse_decimal("007", &n) == 0 && n == 7);
  CHECK(gt_parse_decimal("18446744073709551615", &n) == 0 && n == UINT64_MAX);
  n = 99;
  CHECK(gt_parse_decimal("18446744073709551616", &n) == -1 && n == 99);
  CHECK(gt_parse_decimal("", &n) == -1 && n == 99);
  CHECK(gt_parse_decimal("+5", &n) == -1 && gt_parse_decimal(" 5", &n) == -1);
  CHECK(gt_parse_decimal("5 ", &n) == -1 && gt_parse_decimal("5k", &n) == -1);
  char want[160];
  /* a knob of numbers from 0: an empty value is not 0 */
  CHECK(gt_knob_parse(GT_KNOB_PPROF_KEEP, "", &n, want, sizeof want) == -1 && n == 99);
  CHECK(gt_knob_parse(GT_KNOB_PPROF_KEEP, "0", &n, want, sizeof want) == 0 && n == 0);
}

/* Listening addresses: HOST:PORT and [V6]:PORT, ports 0..65535 only. */
static void test_host_port(void) {
  char host[16];
  unsigned port = 7;
  CHECK(gt_parse_host_port("127.0.0.1:9400", host, sizeof host, &port) == 0 &&
        port == 9400);
  CHECK_STR(host, "127.0.0.1");
  CHECK(gt_parse_host_port("[::1]:0", host, sizeof host, &port) == 0 && port == 0);
  CHECK_STR(host, "::1");
  CHECK(gt_parse_host_port("h:65535", host, sizeof host, &port) == 0 && port == 65535);
  port = 7;
  const char *bad[] = {"h:65536", "h:99999",
                       "h:-1",    "h:http",
                       "h:",      ":80",
                       "h",       "[]:80",
                       "[::1:80", "a-name-too-long-for-16:80"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK_MSG(gt_parse_host_port(bad[i], host, sizeof host, &port) == -1 && port == 7,
              "%s accepted", bad[i]);
}

int main(void) {
  test_decimal();
  test_host_port();
  test_values();
  test_equals_order_and_repeats();
  test_end_of_options();
  test_errors();
  test_required_and_bounds();
  test_help();
  test_conflicts();
  test_describe();
  return check_finish("test_options");
}
