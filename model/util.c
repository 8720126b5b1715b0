/* util.c — see util.h. */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gt_streq(const char *a, const char *b) {
  return strcmp(a, b) == 0;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p) {
  unsigned char c = p[0];
  unsigned char lo = 0x80, hi = 0xBF;
  int len;
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
      int len = utf8_len(p);
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

void gt_oom(void) {
  fprintf(stderr, "gputrace: out of memory\n");
  exit(2);
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
