/* range.c — see range.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "gputrace/knobs.h"
#include "range.h"

#define RANGE_NAME_MAX 128

int gt_range_mode;
static char g_name[RANGE_NAME_MAX];
static size_t g_name_len;
static _Atomic int g_open; /* ranges open: recording while > 0 */

void gt_range_configure(void) {
  gt_range_mode = (int)gt_knob(GT_KNOB_CAPTURE_RANGE);
  if (gt_range_mode == GT_RANGE_NVTX) {
    const char *v = getenv("GPUTRACE_CAPTURE_RANGE");
    const char *name = v ? strchr(v, ':') : NULL;
    g_name_len = name ? strlen(name + 1) : 0;
    if (g_name_len >= RANGE_NAME_MAX)
      g_name_len = RANGE_NAME_MAX - 1;
    if (name)
      memcpy(g_name, name + 1, g_name_len);
  }
  atomic_store(&g_open, 0);
  gt_mode_set(GT_MODE_PAUSED, gt_range_mode != GT_RANGE_NONE);
}

void gt_range_after_fork(void) {
  gt_mode_set(GT_MODE_PAUSED,
              gt_range_mode != GT_RANGE_NONE && atomic_load(&g_open) == 0);
}

void gt_range_open(void) {
  if (atomic_fetch_add(&g_open, 1) == 0)
    gt_mode_set(GT_MODE_PAUSED, 0);
}

void gt_range_close(void) {
  int was = atomic_load(&g_open);
  while (was > 0 && !atomic_compare_exchange_weak(&g_open, &was, was - 1))
    ;
  if (was == 1)
    gt_mode_set(GT_MODE_PAUSED, 1);
}

int gt_range_nvtx_matches(const char *text, size_t len) {
  return gt_range_mode == GT_RANGE_NVTX && len == g_name_len &&
         memcmp(text, g_name, len) == 0;
}

int gt_range_skips_launch(const void *stream, int ptsz) {
  if (!gt_range_paused())
    return 0;
  return !(gt_mode_now() & GT_MODE_CAPTURE) || gt_capture_of(stream, ptsz) == 0;
}

/* ---- cudaProfilerStart / Stop: GRAPH records, and the profiler range ---- */

static cudaError_t profiler_call(unsigned api, cudaError_t (*fn)(void)) {
  GT_TRACE_CALL(fn(), gt_capture_emit(api, t0, t1, r, 0, 0, 0, 0));
}

/* The range opens before the start is recorded and closes after the stop
 * is, so both are in it; whatever the call returns (the application meant
 * a range). */
GT_EXPORT cudaError_t cudaProfilerStart(void) {
  GT_REAL(cudaProfilerStart);
  if (gt_range_mode == GT_RANGE_PROFILER)
    gt_range_open();
  return profiler_call(GT_API_cudaProfilerStart, real_cudaProfilerStart);
}

GT_EXPORT cudaError_t cudaProfilerStop(void) {
  GT_REAL(cudaProfilerStop);
  cudaError_t r = profiler_call(GT_API_cudaProfilerStop, real_cudaProfilerStop);
  if (gt_range_mode == GT_RANGE_PROFILER)
    gt_range_close(); /* atomics only: errno stays the call's */
  return r;
}
