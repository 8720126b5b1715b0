/* slowanchor.c — a test double for tests/e2e/test_devtime.py: preloaded
 * after libgputrace.so, its cudaEventRecord stalls 40 us (spinning, so the
 * stall is exact) before it records an event on the device timing's
 * private stream for the first time since that stream was made: the first
 * try of the first measurement of each clock anchor, as if the resolver
 * thread were preempted between reading the clock and recording the event.
 * The try's window is then ~40 us (under the 50 us the resolver trusts)
 * and its midpoint ~20 us early against the event. The private stream is
 * the one made non-blocking (the devtime program makes none); cudaDeviceReset
 * makes the shim make a new one, and the runtime may hand out the same
 * event handles again, so the record of events seen starts over with it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

#define STALL_NS 40000ull
#define MAX_SEEN 16

static void *private_stream;
static void *seen[MAX_SEEN];
static unsigned nseen;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cudaStreamCreateWithFlags(void **stream, unsigned flags) {
  static int (*real)(void **, unsigned);
  if (real == NULL)
    real = (int (*)(void **, unsigned))dlsym(RTLD_NEXT, "cudaStreamCreateWithFlags");
  int r = real(stream, flags);
  if (r == 0 && (flags & 1u)) { /* cudaStreamNonBlocking */
    private_stream = *stream;
    nseen = 0;
  }
  return r;
}

int cudaEventRecord(void *event, void *stream) {
  static int (*real)(void *, void *);
  if (real == NULL)
    real = (int (*)(void *, void *))dlsym(RTLD_NEXT, "cudaEventRecord");
  if (stream != NULL && stream == private_stream) {
    unsigned i = 0;
    while (i < nseen && seen[i] != event)
      i++;
    if (i == nseen && nseen < MAX_SEEN) {
      seen[nseen++] = event;
      uint64_t t = now_ns();
      while (now_ns() - t < STALL_NS) {
      }
    }
  }
  return real(event, stream);
}
