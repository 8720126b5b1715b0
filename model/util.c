/* util.c — see util.h. */
#include "util.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int gt_streq(const char *a, const char *b) {
  return strcmp(a, b) == 0;
}

int gt_utf8_len(const unsigned char *p) {
  unsigned char c = p[0];
  unsigned char lo = 0x80, hi = 0xBF;
  int len;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;
    hi = c == 0xED ? 0x9F : 0xBF;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  } else
    return 0;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (int i = 2; i < len; i++)
    if ((p[i] & 0xC0) != 0x80)
      return 0;
  return len;
}

const char *gt_text_utf8(const char *s, char **buf, size_t *cap) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) { /* the common case: valid, returned as it is */
    int n = *p < 0x80 ? 1 : gt_utf8_len(p);
    if (!n)
      break;
    p += n;
  }
  if (!*p)
    return s;
  size_t len = strlen(s);
  *buf = gt_grow(*buf, cap, 3 * len + 1, 1); /* each byte at most 3 */
  char *o = *buf;
  for (p = (const unsigned char *)s; *p;) {
    int n = *p < 0x80 ? 1 : gt_utf8_len(p);
    if (n) {
      memcpy(o, p, (size_t)n);
      o += n;
      p += n;
    } else { /* U+FFFD */
      memcpy(o, "\xEF\xBF\xBD", 3);
      o += 3;
      p++;
    }
  }
  *o = 0;
  return *buf;
}

void gt_json_str(FILE *out, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', out);
  while (*p) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
      p++;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
      p++;
    } else if (c < 0x80) {
      fputc(c, out);
      p++;
    } else {
      /* Text from a traced process: pass valid UTF-8, replace the rest. */
      int len = gt_utf8_len(p);
      if (len) {
        fwrite(p, 1, (size_t)len, out);
        p += len;
      } else {
        fputs("\\ufffd", out);
        p++;
      }
    }
  }
  fputc('"', out);
}

/* libstdc++'s demangler, the one c++filt's output matches for GCC/NVCC. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *gt_demangle(const char *name) {
  int status = -1;
  char *out = NULL;
  if (name[0] == '_' && name[1] == 'Z')
    out = __cxa_demangle(name, NULL, NULL, &status);
  return status == 0 && out ? out : strdup(name);
}

/* ---- text for terminals and text formats ---- */

char *gt_text_clean(char *dst, size_t len, const char *s) {
  size_t j = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p && len) {
    int n = *p < 0x80 ? 1 : gt_utf8_len(p);
    int c1 = *p == 0xC2 && p[1] < 0xA0; /* C1 controls: a terminal's CSI */
    if (n == 0 || c1 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
      if (j + 1 >= len)
        break;
      dst[j++] = '?';
      p += c1 ? 2 : 1;
      continue;
    }
    if (j + (size_t)n >= len)
      break;
    memcpy(dst + j, p, (size_t)n);
    j += (size_t)n;
    p += n;
  }
  if (len)
    dst[j] = '\0';
  return dst;
}

const char *gt_base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* ---- display columns ---- */

/* glibc's character widths (wcwidth) need a UTF-8 locale: C.UTF-8, loaded
 * once and made this thread's only around each call, so that the program's
 * own locale (the "C" of a CLI that never calls setlocale) is left alone. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_load(void) {
  utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The columns of the character at s; *bytes its length (an invalid byte
 * is one byte, one column: gt_text_clean makes it a '?'). */
static int char_cols(const char *s, int *bytes) {
  const unsigned char *p = (const unsigned char *)s;
  int n = *p < 0x80 ? 1 : gt_utf8_len(p);
  *bytes = n ? n : 1;
  if (n <= 1)
    return 1;
  uint32_t cp = p[0] & (0x7F >> n);
  for (int i = 1; i < n; i++)
    cp = cp << 6 | (p[i] & 0x3F);
  pthread_once(&utf8_once, utf8_load);
  if (utf8_locale == (locale_t)0)
    return 1;
  locale_t was = uselocale(utf8_locale);
  int w = wcwidth((wchar_t)cp);
  uselocale(was);
  return w < 0 ? 1 : w; /* unassigned, private use: as the terminal's box */
}

int gt_text_width(const char *s) {
  int w = 0, n;
  for (; *s; s += n)
    w += char_cols(s, &n);
  return w;
}

size_t gt_text_cut(const char *s, int width) {
  size_t i = 0;
  int n;
  for (int w = 0; s[i]; i += (size_t)n) {
    w += char_cols(s + i, &n);
    if (w > width)
      break;
  }
  return i;
}

#define ELLIPSIS "\xe2\x80\xa6" /* "…": one column, three bytes */

struct span {
  size_t open, close; /* indexes of the brackets */
  int depth;          /* brackets around it */
};

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

/* At s[i], "operator" and its symbol: their length (0 if not one), so that
 * the '<' of operator<< or the '(' of operator() are no brackets. */
static size_t operator_len(const char *s, size_t i) {
  if (strncmp(s + i, "operator", 8) != 0 || (i && ident_char(s[i - 1])) ||
      ident_char(s[i + 8]))
    return 0;
  size_t j = i + 8;
  if ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']'))
    return j + 2 - i;
  while (s[j] && strchr("<>=!+-*/%&|^~,", s[j]))
    j++;
  return j - i;
}

/* The matched <>, () and {} of s into sp (strlen(s) / 2 + 1 of them);
 * their number, or -1 when they do not match. */
static long brackets(const char *s, struct span *sp) {
  size_t stack[64], depth = 0;
  long n = 0;
  for (size_t i = 0; s[i]; i++) {
    size_t op = operator_len(s, i);
    if (op) {
      i += op - 1;
      continue;
    }
    const char *o = strchr("<({", s[i]), *c = strchr(">)}", s[i]); /* s[i] != 0 */
    if (o) {
      if (depth == sizeof stack / sizeof *stack)
        return -1;
      stack[depth++] = i;
    } else if (c) {
      if (!depth || s[stack[depth - 1]] != "<({"[c - ">)}"])
        return -1;
      depth--;
      sp[n++] = (struct span){stack[depth], i, (int)depth};
    }
  }
  return depth ? -1 : n;
}

/* Columns between a span's brackets. */
static int inner_width(const char *s, const struct span *x) {
  int w = 0, n;
  for (size_t i = x->open + 1; i < x->close; i += (size_t)n)
    w += char_cols(s + i, &n);
  return w;
}

/* The deepest template argument list at depth `min_depth` or more (the
 * longest of those), or NULL. */
static const struct span *deepest_template(const char *s, const struct span *sp, long n,
                                           int min_depth) {
  const struct span *best = NULL;
  for (long k = 0; k < n; k++) {
    const struct span *x = &sp[k];
    if (s[x->open] != '<' || x->depth < min_depth || inner_width(s, x) <= 1)
      continue; /* "<…>" gains nothing */
    if (!best || x->depth > best->depth ||
        (x->depth == best->depth && inner_width(s, x) > inner_width(s, best)))
      best = x;
  }
  return best;
}

/* What to empty next: the deepest nested template argument list (inside
 * another list: the longest of those), else the last parameter list outside
 * every bracket, else the outermost template argument lists (the longest
 * first) — a kernel's own template arguments are what tell two instances
 * apart, so they go last; NULL when nothing is left to empty. */
static const struct span *next_cut(const char *s, const struct span *sp, long n) {
  const struct span *best = deepest_template(s, sp, n, 1);
  if (best)
    return best;
  for (long k = n - 1; k >= 0; k--) /* spans are in order of closing */
    if (s[sp[k].open] == '(' && sp[k].depth == 0 && inner_width(s, &sp[k]) > 1)
      return &sp[k];
  return deepest_template(s, sp, n, 0);
}

/* '…' and the characters of s in its last `tail` columns, from a scope's
 * "::" in them if there is one: the end of a name (the function, its
 * emptied lists) tells it apart, its start is return type and namespaces. */
static char *cut_head(const char *s, int tail) {
  size_t len = strlen(s), b = len;
  for (int c = 0, n; b > 0;) {
    size_t start = b - 1; /* the character before b */
    while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80)
      start--;
    c += char_cols(s + start, &n);
    if (c > tail)
      break;
    b = start;
  }
  const char *scope = strstr(s + b, "::");
  if (scope && scope[2])
    b = (size_t)(scope - s);
  char *out = gt_xcalloc(3 + (len - b) + 1, 1);
  memcpy(out, ELLIPSIS, 3);
  memcpy(out + 3, s + b, len - b);
  return out;
}

char *gt_name_fit(const char *name, int width) {
  if (width < 1)
    return gt_xcalloc(1, 1);
  char *cur = strdup(name);
  struct span *sp = gt_xcalloc(strlen(name) / 2 + 1, sizeof *sp);
  while (cur && gt_text_width(cur) > width) {
    long n = brackets(cur, sp);
    const struct span *x = n > 0 ? next_cut(cur, sp, n) : NULL;
    if (!x)
      break;
    size_t tail = strlen(cur + x->close);
    char *next = gt_xcalloc(x->open + 1 + 3 + tail + 1, 1);
    memcpy(next, cur, x->open + 1);
    memcpy(next + x->open + 1, ELLIPSIS, 3);
    memcpy(next + x->open + 4, cur + x->close, tail);
    free(cur);
    cur = next;
  }
  free(sp);
  if (!cur)
    gt_oom();
  if (gt_text_width(cur) > width) {
    char *cut = cut_head(cur, width - 1);
    free(cur);
    cur = cut;
  }
  return cur;
}

const char *gt_cuda_error_name(int code) {
  static const struct {
    int code;
    const char *name;
  } names[] = {
      {0, "cudaSuccess"},
      {1, "cudaErrorInvalidValue"},
      {2, "cudaErrorMemoryAllocation"},
      {3, "cudaErrorInitializationError"},
      {4, "cudaErrorCudartUnloading"},
      {9, "cudaErrorInvalidConfiguration"},
      {17, "cudaErrorInvalidDevicePointer"},
      {21, "cudaErrorInvalidMemcpyDirection"},
      {35, "cudaErrorInsufficientDriver"},
      {98, "cudaErrorInvalidDeviceFunction"},
      {100, "cudaErrorNoDevice"},
      {101, "cudaErrorInvalidDevice"},
      {400, "cudaErrorInvalidResourceHandle"},
      {500, "cudaErrorSymbolNotFound"},
      {600, "cudaErrorNotReady"},
      {700, "cudaErrorIllegalAddress"},
      {719, "cudaErrorLaunchFailure"},
      {801, "cudaErrorNotSupported"},
      {999, "cudaErrorUnknown"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].code == code)
      return names[i].name;
  return "cudaError";
}

/* ---- memory ---- */

static gt_oom_handler g_oom_handler;

void gt_set_oom_handler(gt_oom_handler handler) {
  g_oom_handler = handler;
}

void gt_oom(void) {
  if (g_oom_handler)
    g_oom_handler();
  fputs("gputrace: out of memory\n", stderr);
  abort(); /* no front end's policy: a program that forgot to set one */
}

void *gt_grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return p;
  size_t n = *cap ? *cap * 2 : 16;
  while (n < need)
    n *= 2;
  void *q = realloc(p, n * elem);
  if (!q)
    gt_oom();
  *cap = n;
  return q;
}

void *gt_xrealloc(void *p, size_t bytes) {
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q)
    gt_oom();
  return q;
}

void *gt_xcalloc(size_t n, size_t elem) {
  void *p = calloc(n ? n : 1, elem);
  if (!p)
    gt_oom();
  return p;
}

void *gt_find_or_add(struct gt_map *index, uint64_t key, void *items, size_t *n,
                     size_t *cap, size_t elem, size_t *at, int *added) {
  uint64_t i;
  *added = !gt_map_get(index, key, &i);
  if (*added) {
    items = gt_grow(items, cap, *n + 1, elem);
    memset((char *)items + *n * elem, 0, elem);
    i = (*n)++;
    if (gt_map_put(index, key, i) != 0)
      gt_oom();
  }
  *at = (size_t)i;
  return items;
}

void gt_text_escape(FILE *out, const char *s, int quote) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    const unsigned char *run = p; /* plain text in one go */
    int n;
    while (*p >= 0x20 && *p != 0x7f && *p != '\\' && !(quote && *p == '"') &&
           (n = gt_utf8_len(p)) > 0 && !(*p == 0xC2 && p[1] < 0xA0))
      p += n;
    fwrite(run, 1, (size_t)(p - run), out);
    unsigned char c = *p;
    if (!c)
      break;
    if (c == 0xC2 && p[1] >= 0x80 && p[1] < 0xA0) { /* C1 controls (CSI...) */
      fprintf(out, "\\u%04x", p[1]);
      p += 2;
      continue;
    }
    if (c == '\\' || c == '"')
      fprintf(out, "\\%c", c);
    else if (c == '\n' || c == '\t' || c == '\r')
      fprintf(out, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
    else
      fprintf(out, "\\x%02x", c);
    p++;
  }
}
