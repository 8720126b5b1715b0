/* options.c — see include/gputrace/options.h. */
#include "gputrace/options.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/knobs.h"
#include "gputrace/units.h"

#define USAGE_WIDTH 80 /* the usage line wraps before this column */
#define HELP_COLUMN 28 /* where --help's texts begin */
#define MAX_OPTIONS 64 /* per table: which were given is a 64-bit mask */
#define DURATION_WANT "a duration: 1.5 or 1.5s, 250ms, 10us, 800ns, 5m, 2h"
#define SIZE_WANT "a size: 80GiB, 16G, 512MiB, 1e9"

static int takes_value(const struct gt_option *o) {
  return o->type != GT_OPTION_FLAG && o->type != GT_OPTION_SET;
}

/* ---- the usage and the help ---- */

/* One word of the usage line, a space before it, wrapped under the first. */
static void usage_word(FILE *to, const char *word, int indent, int *col) {
  int n = (int)strlen(word);
  if (*col > indent && *col + 1 + n > USAGE_WIDTH) {
    fprintf(to, "\n%*s", indent, "");
    *col = indent;
  }
  fprintf(to, " %s", word);
  *col += 1 + n;
}

/* Two choices of one setting (GT_OPTION_SET on one variable). */
static int same_setting(const struct gt_option *a, const struct gt_option *b) {
  return a->type == GT_OPTION_SET && b->type == GT_OPTION_SET && a->value &&
         a->value == b->value;
}

/* Append to word[*n..len), never past its end. */
static void append(char *word, size_t len, size_t *n, const char *s) {
  int w = snprintf(word + *n, len - *n, "%s", s);
  if (w > 0)
    *n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

const struct gt_option *gt_options_word(const struct gt_option *o, char *word,
                                        size_t len) {
  int required = (o->flags & GT_OPTION_REQUIRED) != 0;
  size_t n = 0;
  word[0] = '\0';
  append(word, len, &n, required ? "" : "[");
  const struct gt_option *q = o;
  do {
    char name[96];
    if (q->short_name)
      snprintf(name, sizeof name, "%s-%c", q == o ? "" : " | ", q->short_name);
    else
      snprintf(name, sizeof name, "%s--%s", q == o ? "" : " | ", q->name);
    append(word, len, &n, name);
    if (takes_value(q)) {
      append(word, len, &n, " ");
      append(word, len, &n, q->arg ? q->arg : "VALUE");
    }
    q++;
  } while (q->name && same_setting(o, q));
  append(word, len, &n, required ? "" : "]");
  return q;
}

void gt_options_usage(const struct gt_command *c, FILE *to) {
  int indent = fprintf(to, "usage: %s", c->prog), col = indent;
  char word[256];
  for (const struct gt_option *o = c->options; o->name;) {
    o = gt_options_word(o, word, sizeof word);
    usage_word(to, word, indent, &col);
  }
  if (c->args)
    usage_word(to, c->args, indent, &col);
  fputc('\n', to);
}

/* "  -o, --output FILE         help", or the help on a line of its own. */
static void help_line(FILE *to, char short_name, const char *name, const char *arg,
                      const char *help) {
  char left[160];
  snprintf(left, sizeof left, "  %c%c%s--%s%s%s", short_name ? '-' : ' ',
           short_name ? short_name : ' ', short_name ? ", " : "  ", name, arg ? " " : "",
           arg ? arg : "");
  if (strlen(left) >= HELP_COLUMN)
    fprintf(to, "%s\n%*s%s\n", left, HELP_COLUMN, "", help ? help : "");
  else
    fprintf(to, "%-*s%s\n", HELP_COLUMN, left, help ? help : "");
}

void gt_options_help(const struct gt_command *c, FILE *to) {
  gt_options_usage(c, to);
  if (c->about)
    fprintf(to, "%s\n", c->about);
  fputc('\n', to);
  for (const struct gt_option *o = c->options; o->name; o++)
    help_line(to, o->short_name, o->name,
              takes_value(o) ? (o->arg ? o->arg : "VALUE") : NULL, o->help);
  help_line(to, 'h', "help", NULL, "print this help");
  if (c->version)
    help_line(to, 0, "version", NULL, "print the version");
}

/* ---- values ---- */

/* What a value of the option must be: its kind, then its bounds. */
static void describe(const struct gt_option *o, uint64_t hi, char *want, size_t len) {
  const char *unit = o->type == GT_OPTION_DURATION ? "ns"
                     : o->type == GT_OPTION_SIZE   ? " bytes"
                                                   : NULL;
  int n = snprintf(want, len, "%s",
                   o->type == GT_OPTION_DURATION ? DURATION_WANT
                   : o->type == GT_OPTION_SIZE   ? SIZE_WANT
                                                 : "a whole number");
  if (n < 0 || (size_t)n >= len)
    return;
  if (unit && o->min == 1 && !o->max)
    snprintf(want + n, len - (size_t)n, "; more than 0");
  else if (unit && (o->min || o->max))
    snprintf(want + n, len - (size_t)n, "; from %llu%s to %llu%s",
             (unsigned long long)o->min, unit, (unsigned long long)hi, unit);
  else if (!unit)
    snprintf(want + n, len - (size_t)n, " from %llu to %llu", (unsigned long long)o->min,
             (unsigned long long)hi);
}

/* A number, duration or size within the option's bounds: 0, or -1. */
static int bounded(const struct gt_option *o, const char *arg, uint64_t type_max,
                   uint64_t *v, char *want, size_t len) {
  uint64_t hi = o->max ? o->max : type_max;
  int ok = o->type == GT_OPTION_DURATION ? gt_parse_duration(arg, v) == 0
           : o->type == GT_OPTION_SIZE   ? gt_parse_size(arg, v) == 0
                                         : gt_parse_decimal(arg, v) == 0;
  if (ok && *v >= o->min && *v <= hi)
    return 0;
  describe(o, hi, want, len);
  return -1;
}

/* Check the argument by the option's type and store it (unless value is
 * NULL: checked only): 0, or -1 with what is wanted in want. */
static int store(const struct gt_option *o, const char *arg, char *want, size_t len) {
  uint64_t v;
  switch (o->type) {
  case GT_OPTION_STRING:
    if (o->value)
      *(const char **)o->value = arg;
    return 0;
  case GT_OPTION_INT:
    if (bounded(o, arg, INT_MAX, &v, want, len) != 0)
      return -1;
    if (o->value)
      *(int *)o->value = (int)v;
    return 0;
  case GT_OPTION_UINT32:
    if (bounded(o, arg, UINT32_MAX, &v, want, len) != 0)
      return -1;
    if (o->value)
      *(uint32_t *)o->value = (uint32_t)v;
    return 0;
  case GT_OPTION_UINT64:
  case GT_OPTION_DURATION:
  case GT_OPTION_SIZE:
    if (bounded(o, arg, UINT64_MAX, &v, want, len) != 0)
      return -1;
    if (o->value)
      *(uint64_t *)o->value = v;
    return 0;
  case GT_OPTION_KNOB:
    if (gt_knob_parse((enum gt_knob_id)o->knob, arg, &v, want, len) != 0)
      return -1;
    if (o->value)
      *(uint64_t *)o->value = v;
    return 0;
  case GT_OPTION_CALLBACK:
    return o->callback(o, arg, want, len);
  default:
    snprintf(want, len, "nothing: the option's table is wrong");
    return -1;
  }
}

/* ---- the parser ---- */

__attribute__((format(printf, 2, 3))) static int fail(const struct gt_command *c,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", c->prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  gt_options_usage(c, stderr);
  return 2;
}

static const struct gt_option *find_long(const struct gt_option *t, const char *name,
                                         size_t len) {
  for (; t->name; t++)
    if (strlen(t->name) == len && !memcmp(t->name, name, len))
      return t;
  return NULL;
}

static const struct gt_option *find_short(const struct gt_option *t, char c) {
  for (; t->name; t++)
    if (t->short_name && t->short_name == c)
      return t;
  return NULL;
}

/* Whether the space-separated list names (an excludes) holds name. */
static int names_it(const char *names, const char *name) {
  size_t len = strlen(name);
  for (const char *p = names; p && *p;) {
    size_t n = strcspn(p, " ");
    if (n == len && !memcmp(p, name, len))
      return 1;
    p += n;
    p += strspn(p, " ");
  }
  return 0;
}

/* Two different options that cannot be given together: two choices of one
 * setting, or one names the other in its excludes. */
static int conflict(const struct gt_option *a, const struct gt_option *b) {
  if (a == b)
    return 0;
  if (same_setting(a, b) && a->set_to != b->set_to)
    return 1;
  return names_it(a->excludes, b->name) || names_it(b->excludes, a->name);
}

/* The table's own mistakes, found before any argument is read: NULL, or
 * what is wrong. */
static const char *table_error(const struct gt_command *c, char *why, size_t len) {
  size_t count = 0;
  for (const struct gt_option *o = c->options; o->name; o++, count++)
    for (const char *p = o->excludes; p && *p;) {
      size_t n = strcspn(p, " ");
      if (!find_long(c->options, p, n)) {
        snprintf(why, len, "--%s excludes --%.*s, which it lacks", o->name, (int)n, p);
        return why;
      }
      p += n;
      p += strspn(p, " ");
    }
  if (count > MAX_OPTIONS) {
    snprintf(why, len, "%zu options: the parser takes %d", count, MAX_OPTIONS);
    return why;
  }
  return NULL;
}

/* --help, --version and --gt-describe=WHAT: the status, or GT_OPTIONS_RUN
 * when a is none of them. */
static int builtin(const struct gt_command *c, const char *a) {
  if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
    gt_options_help(c, stdout);
    return 0;
  }
  if (!strncmp(a, "--gt-describe=", 14)) {
    if (gt_options_describe(c, a + 14, stdout) == 0)
      return 0;
    fprintf(stderr, "%s: bad --gt-describe '%s' (want summary, man or bash)\n", c->prog,
            a + 14);
    return 2;
  }
  if (c->version && !strcmp(a, "--version")) {
    printf("%s %s\n", c->prog, c->version);
    return 0;
  }
  return GT_OPTIONS_RUN;
}

/* The option at argv[*i] (and its value, which *i moves past): GT_OPTIONS_RUN,
 * or the status to exit with. */
static int take_option(const struct gt_command *c, int argc, char **argv, int *i,
                       uint64_t *given) {
  const char *a = argv[*i], *eq = NULL;
  const struct gt_option *o = NULL;
  int st = builtin(c, a);
  if (st != GT_OPTIONS_RUN)
    return st;
  if (a[1] == '-') {
    eq = strchr(a + 2, '=');
    o = find_long(c->options, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
  } else if (a[2] == '\0') {
    o = find_short(c->options, a[1]);
  }
  if (!o)
    return fail(c, "unexpected argument '%s' (unknown option)", a);
  const char *arg = eq ? eq + 1 : NULL;
  if (!takes_value(o) && eq)
    return fail(c, "--%s takes no value", o->name);
  if (takes_value(o) && !eq) {
    if (*i + 1 >= argc)
      return fail(c, "missing value for --%s", o->name);
    arg = argv[++*i];
  }
  for (const struct gt_option *q = c->options; q->name; q++)
    if ((*given >> (q - c->options) & 1) && conflict(q, o))
      return fail(c, "--%s and --%s cannot be used together", q->name, o->name);
  char want[256] = "";
  if (!takes_value(o)) {
    if (o->value)
      *(int *)o->value = o->type == GT_OPTION_SET ? o->set_to : 1;
  } else if (store(o, arg, want, sizeof want) != 0) {
    fprintf(stderr, "%s: bad --%s '%s' (want %s)\n", c->prog, o->name, arg, want);
    if (o->type != GT_OPTION_KNOB)
      gt_options_usage(c, stderr);
    return 2;
  } else if (o->text) {
    *o->text = arg;
  }
  if (o->seen)
    *o->seen = 1;
  *given |= 1ull << (o - c->options);
  return GT_OPTIONS_RUN;
}

/* After the arguments: enough positionals, every required option. */
static int complete(const struct gt_command *c, int nargs, uint64_t given) {
  if (nargs < c->min_args)
    return fail(c, "missing argument");
  for (const struct gt_option *o = c->options; o->name; o++)
    if ((o->flags & GT_OPTION_REQUIRED) && !(given >> (o - c->options) & 1))
      return fail(c, "missing option --%s", o->name);
  return GT_OPTIONS_RUN;
}

int gt_options_parse(const struct gt_command *c, int argc, char **argv, int *nargs) {
  char why[160];
  if (table_error(c, why, sizeof why))
    return fail(c, "bad option table (%s)", why);
  uint64_t given = 0;
  int n = 0, options_ended = 0;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (options_ended || a[0] != '-' || a[1] == '\0') {
      if (c->max_args >= 0 && n >= c->max_args)
        return fail(c, "unexpected argument '%s'", a);
      argv[n++] = a; /* n < i: a slot already read */
      options_ended |= (c->flags & GT_CMD_STOP_AT_ARG) != 0;
    } else if (!strcmp(a, "--")) {
      options_ended = 1;
    } else {
      int st = take_option(c, argc, argv, &i, &given);
      if (st != GT_OPTIONS_RUN)
        return st;
    }
  }
  int st = complete(c, n, given);
  if (st != GT_OPTIONS_RUN)
    return st;
  argv[n] = NULL;
  *nargs = n;
  return GT_OPTIONS_RUN;
}

int gt_option_host_port(const struct gt_option *o, const char *arg, char *want,
                        size_t wantlen) {
  char host[256];
  unsigned port;
  if (gt_parse_host_port(arg, host, sizeof host, &port) != 0) {
    snprintf(want, wantlen, "ADDR:PORT, a port from 0 to 65535");
    return -1;
  }
  if (o->value)
    *(const char **)o->value = arg;
  return 0;
}

int gt_option_webhook(const struct gt_option *o, const char *arg, char *want,
                      size_t wantlen) {
  if (strcmp(arg, "local") && strcmp(arg, "any")) {
    snprintf(want, wantlen, "local (POST from this host only) or any");
    return -1;
  }
  if (o->value)
    *(const char **)o->value = arg;
  return 0;
}
