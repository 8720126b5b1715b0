/* top_parse.c — the bodies of a sample (top.h): the Prometheus text of
 * /metrics and the JSON Lines of /top.jsonl, parsed in place in one pass.
 *
 * Only the series `top` shows are read from /metrics (the names of
 * docs/monitoring/README.md); every other line is skipped, as are keys
 * /top.jsonl may add later. Each line costs time linear in its length and
 * no more: a string is unescaped where it lies, a process found by one map
 * probe, a kernel appended; what the caps leave out is counted, as is every
 * line of a series top reads that does not parse (top.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/schema.h"
#include "top.h"
#include "util.h"

void top_sample_free(struct top_sample *s) {
  for (size_t i = 0; i < s->nkernels; i++)
    free(s->kernels[i].name);
  for (size_t i = 0; i < s->nrequests; i++)
    free(s->requests[i].name);
  free(s->requests);
  for (int i = 0; i < s->nsites; i++)
    for (int k = 0; k < s->sites[i].nframes; k++) {
      free((char *)s->sites[i].frames[k].function);
      free((char *)s->sites[i].frames[k].file);
      free((char *)s->sites[i].frames[k].module);
    }
  free(s->procs);
  free(s->kernels);
  gt_map_free(&s->proc_index);
  memset(s, 0, sizeof *s);
}

static char *text_dup(const char *t) {
  size_t n = strlen(t) + 1;
  return memcpy(gt_xcalloc(n, 1), t, n);
}

/* pid's process, added when new; NULL (counted) past TOP_PROCS_MAX. */
static struct top_proc *proc_of(struct top_sample *s, uint32_t pid) {
  uint64_t at;
  if (gt_map_get(&s->proc_index, pid, &at))
    return &s->procs[at];
  if (s->nprocs == TOP_PROCS_MAX) {
    s->loss.over_caps++;
    return NULL;
  }
  if (gt_map_put(&s->proc_index, pid, s->nprocs) != 0)
    gt_oom();
  s->procs = gt_grow(s->procs, &s->cprocs, s->nprocs + 1, sizeof *s->procs);
  s->procs[s->nprocs] = (struct top_proc){.pid = pid};
  return &s->procs[s->nprocs++];
}

/* ---- figures: what a value may be ---- */

/* A count or a number of bytes: digits (exact up to 2^64 - 1), or a float
 * (Prometheus may write one) that is finite, >= 0 and below 2^64. */
static int to_u64(const char *t, uint64_t *v) {
  char *end;
  if (!*t)
    return 0;
  errno = 0;
  if (t[strspn(t, "0123456789")] == '\0') {
    *v = strtoull(t, &end, 10);
    return errno == 0;
  }
  double d = strtod(t, &end);
  if (*end || !isfinite(d) || d < 0 || d >= 18446744073709551616.0)
    return 0;
  *v = (uint64_t)d;
  return 1;
}

static int to_pid(const char *t, uint32_t *pid) {
  uint64_t v;
  if (t[strspn(t, "0123456789")] != '\0' || !to_u64(t, &v) || v > UINT32_MAX)
    return 0;
  *pid = (uint32_t)v;
  return 1;
}

/* A finite number in [0, max]: seconds, a percentage. */
static int to_real(const char *t, double max, double *v) {
  char *end;
  double d = *t ? strtod(t, &end) : NAN;
  if (!*t || *end || !isfinite(d) || d < 0 || d > max)
    return 0;
  *v = d;
  return 1;
}

/* ---- /metrics ---- */

enum series {
  S_LAUNCHES,
  S_DROPPED,
  S_COPY_BYTES,
  S_PROC_GPU,
  S_PROC_MEMORY,
  S_KERNEL_GPU,
  S_UTIL,
  S_REQ_COUNT,
  S_REQ_GPU,
  S_OTHER
};
static const char *const series_names[S_OTHER] = {
    "gputrace_kernel_launches_total",     "gputrace_events_dropped_total",
    "gputrace_memcpy_bytes_total",        "gputrace_process_gpu_seconds_total",
    "gputrace_device_memory_bytes",       "gputrace_kernel_gpu_seconds_total",
    "gputrace_gpu_utilization_percent",   "gputrace_request_seconds_count",
    "gputrace_request_gpu_seconds_total",
};

#define LABELS_MAX 8 /* the collector's series have at most 2 */

struct line {
  int nlabels;
  char *key[LABELS_MAX], *val[LABELS_MAX]; /* NUL-terminated in place */
  char *value;
};

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == ':';
}

static char *skip_blanks(char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\r')
    p++;
  return p;
}

/* The label value at p (after its opening quote) unescaped in place (\\,
 * \", \n); the character after its closing quote, or NULL: unterminated. */
static char *label_value(char *p) {
  char *w = p;
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1])
      *w++ = *++p == 'n' ? '\n' : *p;
    else
      *w++ = *p;
  }
  if (*p != '"')
    return NULL;
  *w = '\0'; /* w <= p: the quote goes last */
  return p + 1;
}

/* `{k="v",...} value [timestamp]` at p, split in place into l; 0 when it
 * is not that. */
static int split_rest(char *p, struct line *l) {
  l->nlabels = 0;
  if (*p == '{') {
    for (p++;;) {
      p = skip_blanks(p);
      if (*p == '}')
        break;
      char *key = p;
      while (name_char(*p))
        p++;
      if (p == key || p[0] != '=' || p[1] != '"')
        return 0;
      *p = '\0';
      char *val = p + 2;
      if (!(p = label_value(val)))
        return 0;
      if (l->nlabels < LABELS_MAX)
        l->key[l->nlabels] = key, l->val[l->nlabels++] = val;
      p = skip_blanks(p);
      if (*p == ',')
        p++;
      else if (*p != '}')
        return 0;
    }
    p++;
  }
  if (*p != ' ' && *p != '\t')
    return 0;
  l->value = p = skip_blanks(p);
  while (*p && *p != ' ' && *p != '\t' && *p != '\r')
    p++;
  *p = '\0';
  return *l->value != '\0';
}

static const char *label(const struct line *l, const char *key) {
  for (int i = 0; i < l->nlabels; i++)
    if (!strcmp(l->key[i], key))
      return l->val[i];
  return NULL;
}

/* The range name's entry, added when new; NULL (counted) past the cap. A
 * linear search: at most TOP_REQUESTS_MAX names. */
static struct top_request *request_of(struct top_sample *s, const char *name) {
  for (size_t i = 0; i < s->nrequests; i++)
    if (!strcmp(s->requests[i].name, name))
      return &s->requests[i];
  if (s->nrequests == TOP_REQUESTS_MAX) {
    s->loss.over_caps++;
    return NULL;
  }
  s->requests =
      gt_grow(s->requests, &s->crequests, s->nrequests + 1, sizeof *s->requests);
  s->requests[s->nrequests] = (struct top_request){text_dup(name), 0, 0};
  return &s->requests[s->nrequests++];
}

/* Applies a series top reads; 0 when its labels or value are not right. */
static int apply_series(enum series k, const struct line *l, struct top_sample *s) {
  uint64_t n = 0;
  double v = 0;
  uint32_t pid = 0;
  const char *lab = k == S_COPY_BYTES                       ? label(l, "dir")
                    : k == S_KERNEL_GPU                     ? label(l, "kernel")
                    : k == S_PROC_GPU || k == S_PROC_MEMORY ? label(l, "pid")
                    : k == S_REQ_COUNT || k == S_REQ_GPU    ? label(l, "range")
                                                            : "";
  int is_count = k == S_LAUNCHES || k == S_DROPPED || k == S_COPY_BYTES ||
                 k == S_PROC_MEMORY || k == S_REQ_COUNT;
  int of_proc = k == S_PROC_GPU || k == S_PROC_MEMORY;
  if (!lab || (is_count ? !to_u64(l->value, &n)
                        : !to_real(l->value, k == S_UTIL ? 100 : TOP_SECONDS_MAX, &v)))
    return 0;
  if (of_proc && !to_pid(lab, &pid))
    return 0;
  struct top_proc *p = of_proc ? proc_of(s, pid) : NULL;
  if (k == S_LAUNCHES)
    s->launches = n;
  else if (k == S_DROPPED)
    s->dropped = n;
  else if (k == S_COPY_BYTES) {
    for (unsigned d = 0; d < TOP_DIRS; d++)
      if (!strcmp(lab, gt_dir_name(d)))
        s->copy_bytes[d] = n; /* a direction top does not know: skipped */
  } else if (k == S_PROC_GPU && p)
    p->gpu_s = v;
  else if (k == S_PROC_MEMORY && p && !p->has_view)
    p->live = n, p->has_live = 1;
  else if (k == S_KERNEL_GPU) {
    if (s->nkernels == TOP_KERNELS_MAX) {
      s->loss.over_caps++;
      return 1;
    }
    s->kernels = gt_grow(s->kernels, &s->ckernels, s->nkernels + 1, sizeof *s->kernels);
    s->kernels[s->nkernels++] = (struct top_kernel){text_dup(lab), v};
  } else if (k == S_REQ_COUNT || k == S_REQ_GPU) {
    struct top_request *q = request_of(s, lab);
    if (q && k == S_REQ_COUNT)
      q->count = n;
    else if (q)
      q->gpu_s = v;
  } else if (k == S_UTIL) {
    double sum = s->ngpus ? s->gpu_util * s->ngpus : 0; /* a mean over the devices */
    s->gpu_util = (sum + v) / ++s->ngpus;
  }
  return 1;
}

static void metric_line(char *line, struct top_sample *s) {
  if (line[0] == '#')
    return;
  size_t n = 0;
  while (name_char(line[n]))
    n++;
  enum series k = 0;
  while (k < S_OTHER &&
         !(strlen(series_names[k]) == n && !memcmp(series_names[k], line, n)))
    k++;
  struct line l;
  if (k != S_OTHER && !(split_rest(line + n, &l) && apply_series(k, &l, s)))
    s->loss.bad_lines++;
}

/* Each line of text[0, len) (text[len] is '\0') made a string in place and
 * given to fn; a line holding a NUL byte is counted instead. */
static void each_line(char *text, size_t len, struct top_sample *s,
                      void (*fn)(char *line, struct top_sample *s)) {
  for (char *p = text, *end = text + len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
    if (memchr(p, '\0', (size_t)(e - p)))
      s->loss.bad_lines++;
    else if (e > p) {
      *e = '\0';
      fn(p, s);
    }
    p = e + 1;
  }
}

void top_parse_metrics(char *text, size_t len, struct top_sample *s) {
  s->gpu_util = s->ngpus ? s->gpu_util : -1;
  each_line(text, len, s, metric_line);
}

/* ---- /top.jsonl: flat objects, one a line ---- */

#define JL_KEYS 12

struct jline {
  int n;
  char *key[JL_KEYS], *val[JL_KEYS]; /* in place: strings unescaped, numbers as written */
};

static int hex4(const char *p, unsigned *u) {
  *u = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return 0;
    *u = *u << 4 | (unsigned)d;
  }
  return 1;
}

/* A \u escape at p (after its 'u', a pair's second half included) as UTF-8
 * at w (never longer than the escape); '?' for a lone surrogate or U+0000.
 * Returns the bytes written; *p after the escape. */
static int json_u(char **p, char *w) {
  unsigned u, lo;
  if (!hex4(*p, &u))
    return *w = '?', 1;
  *p += 4;
  if (u >= 0xD800 && u < 0xDC00 && (*p)[0] == '\\' && (*p)[1] == 'u' &&
      hex4(*p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
    *p += 6;
    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
  } else if (u == 0 || (u >= 0xD800 && u < 0xE000))
    return *w = '?', 1;
  if (u < 0x80)
    return *w = (char)u, 1;
  static const unsigned lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  int n = u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
  for (int i = n - 1; i > 0; i--, u >>= 6)
    w[i] = (char)(0x80 | (u & 0x3F));
  w[0] = (char)(lead[n] | u);
  return n;
}

/* The JSON string at p (after its opening quote) unescaped in place; the
 * character after its closing quote, or NULL: unterminated. */
static char *json_string(char *p) {
  char *w = p;
  while (*p && *p != '"') {
    if (*p != '\\' || !p[1]) {
      *w++ = *p++;
      continue;
    }
    char c = p[1];
    p += 2;
    if (c == 'u') {
      w += json_u(&p, w);
      continue;
    }
    *w++ = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
  }
  if (*p != '"')
    return NULL;
  *w = '\0';
  return p + 1;
}

/* The keys of the object on line into j; 0 when the line is not one
 * (what was read before that is kept). */
static int jparse(char *line, struct jline *j) {
  j->n = 0;
  char *p = skip_blanks(line);
  if (*p++ != '{')
    return 0;
  while (j->n < JL_KEYS) {
    p = skip_blanks(p);
    if (*p == '}')
      return 1;
    char *key = p + 1;
    if (*p != '"' || !(p = json_string(key)))
      return 0;
    p = skip_blanks(p);
    if (*p++ != ':')
      return 0;
    char *val = p = skip_blanks(p);
    if (*p == '"') {
      if (!(p = json_string(++val)))
        return 0;
    } else {
      p += strcspn(p, ",} \t\r");
      if (p == val)
        return 0;
    }
    char *token_end = p; /* a number's end; a string's is its quote's place */
    char next = *(p = skip_blanks(p));
    *token_end = '\0';
    j->key[j->n] = key, j->val[j->n++] = val;
    if (next == '}')
      return 1;
    if (next != ',')
      return 0;
    p++;
  }
  return 1; /* more keys than top reads */
}

static const char *jget(const struct jline *j, const char *key) {
  for (int i = 0; i < j->n; i++)
    if (!strcmp(j->key[i], key))
      return j->val[i];
  return NULL;
}

/* The count at key (0 when absent); 0 when present and not a count. */
static int jnum(const struct jline *j, const char *key, uint64_t *v) {
  const char *t = jget(j, key);
  *v = 0;
  return !t || to_u64(t, v);
}

static int jprocess(const struct jline *j, struct top_sample *s) {
  uint32_t pid;
  uint64_t live, peak, launches;
  if (!to_pid(jget(j, "process"), &pid) || !jnum(j, "live_bytes", &live) ||
      !jnum(j, "peak_bytes", &peak) || !jnum(j, "launches", &launches))
    return 0;
  struct top_proc *p = proc_of(s, pid);
  if (p)
    p->live = live, p->peak = peak, p->launches = launches, p->has_view = p->has_live = 1;
  return 1;
}

static int jsite(const struct jline *j, struct top_sample *s) {
  uint64_t pid, live, blocks;
  if (!jnum(j, "pid", &pid) || pid > UINT32_MAX || !jnum(j, "live_bytes", &live) ||
      !jnum(j, "blocks", &blocks))
    return 0;
  s->skip_frames = s->nsites == TOP_SITES;
  if (s->skip_frames) {
    s->loss.over_caps++; /* its frames go with it */
    return 1;
  }
  s->sites[s->nsites++] =
      (struct top_site){.pid = (uint32_t)pid, .live = live, .blocks = blocks};
  return 1;
}

static int jframe(const struct jline *j, struct top_sample *s) {
  uint64_t site, line, python;
  if (!jnum(j, "frame", &site) || !jnum(j, "line", &line) || line > UINT32_MAX ||
      !jnum(j, "python", &python) || python > 1)
    return 0;
  if (s->skip_frames)
    return 1;
  if (!s->nsites || site != (uint64_t)s->nsites)
    return 0; /* not of the site before it */
  struct top_site *t = &s->sites[s->nsites - 1];
  if (t->nframes == TOP_FRAMES) {
    s->loss.over_caps++;
    return 1;
  }
  const char *fn = jget(j, "function"), *file = jget(j, "file"), *mod = jget(j, "module");
  t->frames[t->nframes++] = (struct gt_frame){
      .function = text_dup(fn ? fn : "??"),
      .file = text_dup(file ? file : ""),
      .module = text_dup(mod ? mod : ""),
      .line = (uint32_t)line,
      .python = (int)python,
  };
  return 1;
}

static void jsonl_line(char *line, struct top_sample *s) {
  struct jline j;
  int whole = jparse(line, &j);
  int (*kind)(const struct jline *, struct top_sample *) = jget(&j, "process") ? jprocess
                                                           : jget(&j, "site")  ? jsite
                                                           : jget(&j, "frame") ? jframe
                                                                               : NULL;
  if (kind && !(whole && kind(&j, s)))
    s->loss.bad_lines++;
}

void top_parse_jsonl(char *text, size_t len, struct top_sample *s) {
  each_line(text, len, s, jsonl_line);
}
