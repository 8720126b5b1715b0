/* fakecap.c — a test double for tests/e2e/test_devtime.py: preloaded after
 * libgputrace.so, it answers the shim's cudaStreamIsCapturing (which the
 * stand-in runtime lacks: it has no stream capture) with "capturing" for
 * every user stream and "not capturing" for the legacy and per-thread
 * default streams. */
#include <stdint.h>

static int capture_status(void *stream) {
  uintptr_t s = (uintptr_t)stream;
  return s != 0 && s != 1 && s != 2; /* cudaStreamCaptureStatusActive = 1 */
}

int cudaStreamIsCapturing(void *stream, int *status) {
  *status = capture_status(stream);
  return 0;
}

int cudaStreamIsCapturing_ptsz(void *stream, int *status) {
  *status = capture_status(stream);
  return 0;
}
