// signals.cu — a program that uses signals itself.
//   signals group      handles SIGUSR1, SIGUSR2 and SIGHUP, makes one
//                      allocation, sends each signal to its own process
//                      group (kill(0, ...)), then launches 200 kernels.
//   signals wait SECS  handles SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2;
//                      after its first allocation prints "ready", then
//                      launches a kernel every 2 ms for SECS seconds.
// Both print how many of each signal arrived ("int=0 term=1 hup=0 usr1=0
// usr2=0") and the launches made, and exit 0 when every call succeeded.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got[NSIG];
static void on_signal(int sig) {
  got[sig]++;
}

__global__ void tick(int i) {}

static double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int wait = !strcmp(argv[1], "wait");
  int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
  for (int s : sigs)
    if (wait || (s != SIGINT && s != SIGTERM))
      signal(s, on_signal);
  void *p = nullptr;
  int bad = cudaMalloc(&p, 4096) != cudaSuccess, launches = 0;
  if (wait) {
    printf("ready\n");
    fflush(stdout);
    double until = now_s() + (argc > 2 ? atof(argv[2]) : 1.0);
    while (now_s() < until) {
      tick<<<1, 32>>>(launches++);
      usleep(2000);
    }
  } else {
    kill(0, SIGUSR1);
    kill(0, SIGUSR2);
    kill(0, SIGHUP);
    for (; launches < 200; launches++)
      tick<<<1, 32>>>(launches);
  }
  bad |= cudaDeviceSynchronize() != cudaSuccess;
  printf("int=%d term=%d hup=%d usr1=%d usr2=%d launches=%d\n", (int)got[SIGINT],
         (int)got[SIGTERM], (int)got[SIGHUP], (int)got[SIGUSR1], (int)got[SIGUSR2],
         launches);
  return bad;
}
