// name_order.cu — a kernel's name behind a third thread's launches of it
// (tests/e2e/test_late_name.py). The test stops the collector after
// "ready", so that everything below waits in the ring. Three threads claim
// sub-rings in the order X, Y, N (each with a first launch of `warm_up`);
// then N makes `shared`'s cudaKernel_t (its KERNEL_NAME record lands in N's
// sub-ring) and launches it once, and X and Y launch it M times each
// (argv[1]) through the handle nvcc's stub cached. When the collector
// reads X's first launch of `shared`, its name lies in N's sub-ring, after
// Y's, whose launches of `shared` the look-ahead meets first.
// Prints "ready" after a first traced call, waits for a line on stdin,
// runs the threads, prints "done", waits for stdin to close.
// usage: name_order M   expect: launch=2M+5 (warm-ups 4), sync=1
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <pthread.h>
#include <semaphore.h>

#include "stopped_run.h"

__global__ void warm_up() {}
__global__ void shared_kernel() {}

enum { X, Y, N, THREADS };
static sem_t go[THREADS], done;
static long per_thread;

static void *run(void *arg) {
  long me = (long)arg;
  sem_wait(&go[me]);
  warm_up<<<1, 1>>>(); /* claims this thread's sub-ring */
  sem_post(&done);
  sem_wait(&go[me]);
  for (long i = 0; i < (me == N ? 1 : per_thread); i++)
    shared_kernel<<<1, 1>>>();
  sem_post(&done);
  return nullptr;
}

/* Let thread `who` take its next step, and wait for it. */
static void step(int who) {
  sem_post(&go[who]);
  sem_wait(&done);
}

int main(int argc, char **argv) {
  per_thread = argc > 1 ? atol(argv[1]) : 10;
  warm_up<<<1, 1>>>(); /* connects to the collector */
  if (!ready_then_wait_go())
    return 2;
  sem_init(&done, 0, 0);
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) {
    sem_init(&go[i], 0, 0);
    pthread_create(&t[i], nullptr, run, (void *)i);
  }
  for (int who : {X, Y, N, N, X, Y})
    step(who);
  for (pthread_t th : t)
    pthread_join(th, nullptr);
  cudaDeviceSynchronize();
  done_then_wait_close();
  return 0;
}
