/* util.c — see util.h. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

void gt_map_init(struct gt_map *m) { memset(m, 0, sizeof *m); }

void gt_map_free(struct gt_map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}

static int rehash(struct gt_map *m, size_t cap) {
  struct gt_map n = {.cap = cap};
  n.keys = malloc(cap * sizeof *n.keys);
  n.vals = malloc(cap * sizeof *n.vals);
  n.used = calloc(cap, 1);
  if (!n.keys || !n.vals || !n.used) {
    gt_map_free(&n);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i] == 1)
      gt_map_put(&n, m->keys[i], m->vals[i]);
  gt_map_free(m);
  *m = n;
  return 0;
}

int gt_map_put(struct gt_map *m, uint64_t key, uint64_t val) {
  if ((m->count + m->tombstones + 1) * 4 >= m->cap * 3 &&
      rehash(m, m->cap ? (m->count * 4 >= m->cap ? m->cap * 2 : m->cap) : 64) != 0)
    return -1;
  size_t mask = m->cap - 1, i = mix(key) & mask, slot = SIZE_MAX;
  for (;; i = (i + 1) & mask) {
    if (m->used[i] == 1 && m->keys[i] == key) {
      m->vals[i] = val;
      return 0;
    }
    if (m->used[i] == 2 && slot == SIZE_MAX)
      slot = i;
    if (m->used[i] == 0)
      break;
  }
  if (slot == SIZE_MAX)
    slot = i;
  else
    m->tombstones--;
  m->used[slot] = 1;
  m->keys[slot] = key;
  m->vals[slot] = val;
  m->count++;
  return 0;
}

static size_t find(const struct gt_map *m, uint64_t key) {
  if (!m->cap)
    return SIZE_MAX;
  size_t mask = m->cap - 1;
  for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    if (m->used[i] == 0)
      return SIZE_MAX;
    if (m->used[i] == 1 && m->keys[i] == key)
      return i;
  }
}

int gt_map_get(const struct gt_map *m, uint64_t key, uint64_t *val) {
  size_t i = find(m, key);
  if (i == SIZE_MAX)
    return 0;
  if (val)
    *val = m->vals[i];
  return 1;
}

int gt_map_del(struct gt_map *m, uint64_t key) {
  size_t i = find(m, key);
  if (i == SIZE_MAX)
    return 0;
  m->used[i] = 2;
  m->count--;
  m->tombstones++;
  return 1;
}

int gt_streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

void gt_json_str(FILE *out, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', out);
  while (*p) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
      p++;
    } else if (c < 0x20) {
      fprintf(out, "\\u%04x", c);
      p++;
    } else if (c < 0x80) {
      fputc(c, out);
      p++;
    } else {
      /* Pass valid UTF-8 sequences through; replace anything else. */
      int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      int ok = len > 0;
      for (int i = 1; ok && i < len; i++)
        ok = (p[i] & 0xC0) == 0x80;
      if (ok) {
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
