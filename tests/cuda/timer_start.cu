// timer_start.cu — a program whose interval timer (SIGALRM every 20 us,
// as a profiler's or a watchdog's) is running when its first CUDA call
// connects the shim to the collector: the handshake's wait is interrupted
// over and over, and must still complete (tests/e2e/test_signals.py).
// Prints "timer_start: N launches, alarms seen" once the timer is off.
// expect: launch=3
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <sys/time.h>

__global__ void tick() {}

static volatile sig_atomic_t alarms;

static void on_alarm(int) {
  alarms = alarms + 1;
}

int main() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: poll and sleeps return EINTR */
  sigaction(SIGALRM, &sa, nullptr);
  struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &every, nullptr);
  for (int i = 0; i < 3; i++) tick<<<1, 1>>>(); /* the first connects */
  cudaError_t e = cudaDeviceSynchronize();
  setitimer(ITIMER_REAL, &off, nullptr);
  printf("timer_start: 3 launches, %s, alarms %s\n", e == cudaSuccess ? "ok" : "failed",
         alarms > 0 ? "seen" : "none");
  return e == cudaSuccess ? 0 : 1;
}
