// exit_thread.cu — 4 threads launch in a loop while the main thread calls
// exit(3) after the first 1000 launches: no deadlock at exit, exit status 3,
// and the trace stays readable.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

__global__ void spin_kernel() {}
static std::atomic<long> launched{0};

static void *run(void *) {
  for (;;) {
    spin_kernel<<<1, 1>>>();
    launched++;
  }
  return nullptr;
}

int main() {
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], nullptr, run, nullptr);
  while (launched.load() < 1000) usleep(100);
  printf("exiting with threads still launching\n");
  fflush(stdout);
  exit(3);
}
