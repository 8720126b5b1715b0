/* knobs.c — see include/gputrace/knobs.h. */
#include "gputrace/knobs.h"

#include "gputrace/protocol.h"
#include "gputrace/units.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum type {
  BOOL,
  NUMBER,
  CHOICE,
  AUTO_NUMBER, /* "auto" (0) or a number */
  DURATION,    /* units.h's durations, in ns; lo and hi in whole seconds */
  SIZE,        /* units.h's sizes, in bytes; lo and hi in MiB; default 0: off */
  WINDOW       /* a SIZE, or a duration (knobs.h, GT_WINDOW_BY_TIME); default 0: off */
};

struct knob {
  const char *name;
  enum type type;
  uint64_t dflt, lo, hi;
  const char *unit;       /* numbers: what they count */
  const char *choices[5]; /* choices, in index order */
  const char *help;       /* what it does, one line (the man page's) */
};

#define UNPAREN(...) __VA_ARGS__
#define KNOB_ROW(id, name, type, dflt, lo, hi, unit, choices, help)                      \
  [GT_KNOB_##id] = {name, type, dflt, lo, hi, unit, {UNPAREN choices}, help},
static const struct knob knobs[GT_KNOB_COUNT] = {GT_KNOBS(KNOB_ROW)};
#undef KNOB_ROW

/* Variables that are no knob of this table but are ours all the same. */
static const char *const other_names[] = {
    GT_ENV_OUTPUT, GT_ENV_SOCKET,    GT_ENV_COLLECTOR, GT_ENV_LIB,
    GT_ENV_PICKED, GT_ENV_PPROF_DIR, GT_ENV_SOCKET_DIR};

static _Atomic uint32_t g_warned; /* one bit per knob; bit 31: unknown names */

static void say(const char *line) {
  size_t n = strlen(line);
  ssize_t ignored = write(2, line, n); /* no stdio: the program owns it */
  (void)ignored;
}

static int parse_bool(const char *v, uint64_t *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(v, yes[i]))
      return *out = 1, 0;
    if (!strcasecmp(v, no[i]))
      return *out = 0, 0;
  }
  return -1;
}

static int parse_number(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  uint64_t n;
  if (gt_parse_decimal(v, &n) != 0 || n < lo || n > hi)
    return -1;
  *out = n;
  return 0;
}

static int parse_choice(const struct knob *k, const char *v, uint64_t *out) {
  for (uint64_t i = 0; i < 5 && k->choices[i]; i++) {
    const char *arg = strstr(k->choices[i], ":NAME");
    size_t prefix = arg ? (size_t)(arg - k->choices[i]) + 1 : 0;
    if (arg ? !strncmp(v, k->choices[i], prefix) && v[prefix] : !strcmp(v, k->choices[i]))
      return *out = i, 0;
  }
  return -1;
}

/* "1 or 0 (...)", "a whole number of KiB from 16 to 1048576", "a, b or c" */
static void describe(const struct knob *k, char *buf, size_t len) {
  if (k->type == BOOL) {
    snprintf(buf, len, "1 or 0 (also true/false, yes/no, on/off)");
  } else if (k->type == DURATION) {
    snprintf(buf, len, "a duration such as 60s, 5m or 1h, from %llus to %llus",
             (unsigned long long)k->lo, (unsigned long long)k->hi);
  } else if (k->type == SIZE) {
    snprintf(buf, len, "a size such as 64MiB or 2GiB, from %lluMiB to %lluMiB",
             (unsigned long long)k->lo, (unsigned long long)k->hi);
  } else if (k->type == WINDOW) {
    snprintf(buf, len,
             "a size such as 64MiB, from %lluMiB to %lluMiB, or a duration such as 10s, "
             "from 1s to %llus",
             (unsigned long long)k->lo, (unsigned long long)k->hi,
             (unsigned long long)GT_WINDOW_DURATION_MAX_S);
  } else if (k->type == NUMBER || k->type == AUTO_NUMBER) {
    snprintf(buf, len, "%sa whole number of %s from %llu to %llu",
             k->type == AUTO_NUMBER ? "auto or " : "", k->unit, (unsigned long long)k->lo,
             (unsigned long long)k->hi);
  } else {
    int count = 0;
    while (count < 5 && k->choices[count])
      count++;
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && n < len; i++)
      n += (size_t)snprintf(buf + n, len - n, "%s%s",
                            i == 0           ? ""
                            : i == count - 1 ? " or "
                                             : ", ",
                            k->choices[i]);
  }
}

/* The default as a user would write it: "auto", "alloc", "60s", "32768". */
static void default_text(const struct knob *k, char *buf, size_t len) {
  if (k->type == CHOICE)
    snprintf(buf, len, "%s", k->choices[k->dflt]);
  else if (k->type == AUTO_NUMBER && k->dflt == 0)
    snprintf(buf, len, "auto");
  else if (k->type == DURATION)
    snprintf(buf, len, "%llus", (unsigned long long)(k->dflt / 1000000000ull));
  else if ((k->type == SIZE || k->type == WINDOW) && k->dflt == 0)
    snprintf(buf, len, "off");
  else
    snprintf(buf, len, "%llu", (unsigned long long)k->dflt);
}

static void warn_bad(enum gt_knob_id id, const char *v) {
  const struct knob *k = &knobs[id];
  uint32_t bit = 1u << id;
  if (atomic_fetch_or(&g_warned, bit) & bit)
    return;
  if (id != GT_KNOB_QUIET && gt_knob(GT_KNOB_QUIET))
    return;
  char want[160], dflt[32], line[512];
  describe(k, want, sizeof want);
  default_text(k, dflt, sizeof dflt);
  snprintf(line, sizeof line, "gputrace: ignoring %s=%.64s (want %s); using %s\n",
           k->name, v, want, dflt);
  say(line);
}

static int parse_duration(const struct knob *k, const char *v, uint64_t *out) {
  uint64_t ns;
  if (gt_parse_duration(v, &ns) != 0 || ns < k->lo * 1000000000ull ||
      ns > k->hi * 1000000000ull)
    return -1;
  return *out = ns, 0;
}

static int parse_size(const struct knob *k, const char *v, uint64_t *out) {
  uint64_t bytes;
  if (gt_parse_size(v, &bytes) != 0 || bytes < (k->lo << 20) || bytes > (k->hi << 20))
    return -1;
  return *out = bytes, 0;
}

/* A size, else a duration (flagged GT_WINDOW_BY_TIME). */
static int parse_window(const struct knob *k, const char *v, uint64_t *out) {
  uint64_t ns;
  if (parse_size(k, v, out) == 0)
    return 0;
  if (gt_parse_duration(v, &ns) != 0 || ns < 1000000000ull ||
      ns > GT_WINDOW_DURATION_MAX_S * 1000000000ull)
    return -1;
  return *out = ns | GT_WINDOW_BY_TIME, 0;
}

static int parse(const struct knob *k, const char *v, uint64_t *out) {
  if (k->type == WINDOW)
    return parse_window(k, v, out);
  if (k->type == AUTO_NUMBER && !strcmp(v, "auto"))
    return *out = 0, 0;
  if (k->type == DURATION)
    return parse_duration(k, v, out);
  if (k->type == SIZE)
    return parse_size(k, v, out);
  return k->type == BOOL ? parse_bool(v, out)
         : k->type == NUMBER || k->type == AUTO_NUMBER
             ? parse_number(v, k->lo, k->hi, out)
             : parse_choice(k, v, out);
}

uint64_t gt_knob(enum gt_knob_id id) {
  if ((unsigned)id >= GT_KNOB_COUNT)
    return 0;
  const struct knob *k = &knobs[id];
  const char *v = getenv(k->name);
  uint64_t out = k->dflt;
  if (!v || !*v)
    return out;
  if (parse(k, v, &out) != 0) {
    warn_bad(id, v);
    return k->dflt;
  }
  return out;
}

const char *gt_knob_name(enum gt_knob_id id) {
  return id < GT_KNOB_COUNT ? knobs[id].name : NULL;
}

const char *gt_knob_help(enum gt_knob_id id) {
  return id < GT_KNOB_COUNT ? knobs[id].help : NULL;
}

void gt_knob_values(enum gt_knob_id id, char *buf, size_t len) {
  if (id >= GT_KNOB_COUNT) {
    snprintf(buf, len, "nothing: no such knob");
    return;
  }
  char dflt[64];
  describe(&knobs[id], buf, len);
  default_text(&knobs[id], dflt, sizeof dflt);
  size_t n = strlen(buf);
  snprintf(buf + n, len - n, "; default %s", dflt);
}

int gt_knob_parse(enum gt_knob_id id, const char *value, uint64_t *out, char *want,
                  size_t wantlen) {
  if ((unsigned)id >= GT_KNOB_COUNT || parse(&knobs[id], value, out) != 0) {
    if ((unsigned)id < GT_KNOB_COUNT)
      describe(&knobs[id], want, wantlen);
    return -1;
  }
  return 0;
}

static int known(const char *name, size_t len) {
  for (int i = 0; i < GT_KNOB_COUNT; i++)
    if (strlen(knobs[i].name) == len && !strncmp(name, knobs[i].name, len))
      return 1;
  for (size_t i = 0; i < sizeof other_names / sizeof other_names[0]; i++)
    if (strlen(other_names[i]) == len && !strncmp(name, other_names[i], len))
      return 1;
  /* The CPU stand-in runtime's own settings (docs/standin.md). */
  return len > 18 && !strncmp(name, "GPUTRACE_STANDIN_", 17);
}

void gt_knobs_check_names(void) {
  extern char **environ;
  if (gt_knob(GT_KNOB_QUIET) || (atomic_fetch_or(&g_warned, 1u << 31) & (1u << 31)))
    return;
  for (char **e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (strncmp(*e, "GPUTRACE_", 9) != 0 || !eq || known(*e, (size_t)(eq - *e)))
      continue;
    char line[256];
    snprintf(line, sizeof line,
             "gputrace: ignoring unknown variable %.*s (docs/cli.md)\n",
             (int)(eq - *e > 100 ? 100 : eq - *e), *e);
    say(line);
  }
}
