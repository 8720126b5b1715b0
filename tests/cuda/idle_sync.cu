// idle_sync.cu — the stand-in's waits (tests/e2e/test_standin.py): a wait
// on work still queued sleeps until it ends; a wait on an idle device,
// stream or a completed event returns at once, as on hardware, without
// even entering the kernel's sleep (an absolute clock_nanosleep that has
// already expired still sleeps until the next timer tick within the
// task's timer slack). The program counts the stand-in's clock_nanosleep
// calls by defining the symbol itself (the executable comes first in the
// lookup) and prints the counts: one line, no times.
// A kernel of GPUTRACE_STANDIN_KERNEL_BASE_NS (the test sets 300 ms) keeps
// the device busy when a wait must sleep.
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>
#include <dlfcn.h>

static int sleeps;

extern "C" int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                               struct timespec *rem) {
  typedef int (*fn)(clockid_t, int, const struct timespec *, struct timespec *);
  static fn real = (fn)dlsym(RTLD_NEXT, "clock_nanosleep");
  sleeps++;
  return real(clock, flags, req, rem);
}

__global__ void busy(int *p) {
  if (p) p[0] = 1;
}

static int failures;
#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                 \
      failures++;                                                              \
    }                                                                          \
  } while (0)

int main() {
  int *d, h = 0;
  cudaEvent_t ev;
  CK(cudaMalloc(&d, sizeof *d));
  CK(cudaEventCreate(&ev));
  busy<<<1, 1>>>(d);
  sleeps = 0;
  CK(cudaDeviceSynchronize());
  int busy_sync = sleeps;
  sleeps = 0;
  for (int i = 0; i < 100; i++)
    CK(cudaDeviceSynchronize());
  int idle_syncs = sleeps;
  busy<<<1, 1>>>(d);
  sleeps = 0;
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  int blocking_copy = sleeps;
  sleeps = 0;
  CK(cudaDeviceSynchronize());
  int after_copy = sleeps;
  CK(cudaEventRecord(ev, 0));
  sleeps = 0;
  CK(cudaStreamSynchronize(0));
  CK(cudaEventSynchronize(ev));
  int idle_waits = sleeps;
  printf("busy sync %d, idle syncs %d, blocking copy %d, sync after it %d, idle waits %d\n",
         busy_sync, idle_syncs, blocking_copy, after_copy, idle_waits);
  CK(cudaEventDestroy(ev));
  CK(cudaFree(d));
  return failures != 0;
}
