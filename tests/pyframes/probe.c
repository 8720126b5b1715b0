/* probe.c — preload/pyframes.c loaded into a Python process with ctypes,
 * for test_pyframes.py: the reader runs on the interpreter's own frames,
 * code objects and strings, with the GIL released (ctypes.CDLL) or held
 * (ctypes.PyDLL), and its answers are compared with what Python says.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pyframes.h"

#define PROBE_MAX 256

static void *lookup(const char *name) {
  return dlsym(RTLD_DEFAULT, name);
}

/* PY_VERSION_HEX when pyframes.c can read this interpreter's frames, else 0. */
unsigned long probe_init(void) {
  return gt_pyframes_init(lookup);
}

/* This thread's frames, innermost first, at most `max`, written to `buf` as
 * "name\x1ffile\x1fline\n" lines. Returns the count, -1 when buf is short. */
int probe_stack(char *buf, size_t cap, int max) {
  struct gt_pyframe frames[PROBE_MAX];
  int n = gt_pyframes_read(frames, max < PROBE_MAX ? max : PROBE_MAX);
  size_t used = 0;
  for (int i = 0; i < n; i++) {
    char text[512];
    gt_pyframes_text(frames[i].code, text, sizeof text);
    int w = snprintf(buf + used, cap - used, "%s\x1f%d\n", text, frames[i].line);
    if (w < 0 || (size_t)w >= cap - used)
      return -1;
    used += (size_t)w;
  }
  if (cap)
    buf[used] = '\0';
  return n;
}

/* gt_pyframes_text of a code object (its id() in CPython). */
size_t probe_text(const void *code, char *buf, size_t cap) {
  return gt_pyframes_text(code, buf, cap);
}

/* The line of each of `units` code units of a location table. */
void probe_lines(const unsigned char *table, size_t len, int firstlineno, int *lines,
                 int units) {
  for (int i = 0; i < units; i++)
    lines[i] = gt_pyframes_line(table, len, firstlineno, i);
}

/* Nanoseconds per gt_pyframes_read + text-free walk of this thread, `iters`
 * times; with the line of every frame decoded. */
double probe_bench(int iters, int *depth) {
  struct gt_pyframe frames[PROBE_MAX];
  struct timespec a, b;
  int n = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < iters; i++)
    n = gt_pyframes_read(frames, PROBE_MAX);
  clock_gettime(CLOCK_MONOTONIC, &b);
  *depth = n;
  return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / iters;
}
