// late_name.cu — a kernel named far back in another thread's sub-ring
// (tests/e2e/test_late_name.py). The test stops the collector after
// "ready", so that everything below waits in the ring:
//   thread A: N launches of `filler` (argv[1]), then the first launch of
//     `named_late` (CUDA 13's stub makes its cudaKernel_t there: its
//     KERNEL_NAME record follows A's N launches in A's sub-ring);
//   thread B, started after A ends: one launch of `named_late` (the cached
//     handle; B's sub-ring holds no name for it).
// When the collector reads B's launch, the name sits N records deep in A's
// sub-ring; it must still precede the launch in the file.
// Prints "ready" after a first traced call, waits for a line on stdin,
// runs the threads, prints "done", waits for stdin to close.
// usage: late_name N   expect: launch=N+3 (1 warm-up), sync=1
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <pthread.h>

#include "stopped_run.h"

__global__ void warm_up() {}
__global__ void filler() {}
__global__ void named_late() {}

static long n_filler;

static void *thread_a(void *) {
  for (long i = 0; i < n_filler; i++)
    filler<<<1, 1>>>();
  named_late<<<1, 1>>>();
  return nullptr;
}

static void *thread_b(void *) {
  named_late<<<1, 1>>>();
  return nullptr;
}

int main(int argc, char **argv) {
  n_filler = argc > 1 ? atol(argv[1]) : 100000;
  warm_up<<<1, 1>>>(); /* connects to the collector */
  if (!ready_then_wait_go())
    return 2;
  pthread_t t;
  pthread_create(&t, nullptr, thread_a, nullptr);
  pthread_join(t, nullptr);
  pthread_create(&t, nullptr, thread_b, nullptr);
  pthread_join(t, nullptr);
  cudaDeviceSynchronize();
  done_then_wait_close();
  return 0;
}
