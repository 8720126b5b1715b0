/* util.c — see util.h. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

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
