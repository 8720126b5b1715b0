/* unwind_probe.c — preload/unwind.c loaded into a Python process with
 * ctypes, for test_unwind_py.py: gt_unwind's frames against backtrace()'s
 * taken in the same function, on the interpreter's own native stack
 * (its eval loop, ctypes' libffi calls and callbacks, threads).
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>

#include "unwind.h"

#define PROBE_MAX 256

static atomic_int g_ready;

static void print_frames(const char *label, void **ips, int n) {
  fprintf(stderr, "  %s (%d frames):\n", label, n);
  for (int i = 0; i < n; i++) {
    Dl_info info;
    int ok = dladdr(ips[i], &info);
    fprintf(stderr, "    #%-3d %p %s (%s)\n", i, ips[i],
            ok && info.dli_sname ? info.dli_sname : "?",
            ok && info.dli_fname ? info.dli_fname : "?");
  }
}

/* Once, before any capture (ctypes may call from several threads). */
void unwind_probe_init(void) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&g_ready, &expected, 1)) {
    gt_unwind_init(1, dlsym);
    atomic_store(&g_ready, 2);
  }
  while (atomic_load(&g_ready) != 2) {
  }
}

/* Both stacks taken here: the number of frames 1.. that differ, -1 when the
 * counts differ (both printed on a difference). *fell_back: gt_unwind's. */
__attribute__((noinline)) int unwind_compare_fb(int *fell_back) {
  void *mine[PROBE_MAX], *ref[PROBE_MAX];
  struct gt_unwind_info info;
  int n = gt_unwind(mine, PROBE_MAX, &info);
  int fell = info.how != 0;
  int m = backtrace(ref, PROBE_MAX);
  int bad = n == m ? 0 : -1;
  for (int i = 1; i < n && i < m; i++)
    bad += bad >= 0 && mine[i] != ref[i];
  if (bad != 0 || n < 2) {
    fprintf(stderr, "unwind_compare: gt_unwind and backtrace differ (%s)\n",
            bad < 0 ? "count" : "frames");
    print_frames("gt_unwind", mine, n);
    print_frames("backtrace", ref, m);
    bad = bad ? bad : -1;
  }
  if (fell_back)
    *fell_back = fell;
  return bad;
}

__attribute__((noinline)) int unwind_compare(void) {
  int r = unwind_compare_fb(NULL);
  __asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays */
  return r;
}

/* Calls back(arg) from C: Python -> C -> Python. */
__attribute__((noinline)) int unwind_call(int (*back)(int), int arg) {
  int r = back(arg);
  __asm__ volatile("" ::: "memory");
  return r;
}

/* gt_unwind_counts' stacks not walked whole (cut, or from backtrace()) and
 * rules. */
void unwind_counts(unsigned long long *fallback, unsigned long long *rules) {
  struct gt_unwind_counts c;
  gt_unwind_counts(&c);
  *fallback = c.cut + c.backtrace;
  *rules = c.rules;
}
