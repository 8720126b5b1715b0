// threads.cu — N threads (argv[2], default 8) launch concurrently, each on
// its own stream: 1000 launches of `work` per thread (argv[1] overrides),
// then one cudaStreamSynchronize each.  expect: launch=8000 sync=8 stream=16
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <pthread.h>

__global__ void work(int *p) {
  if (p) p[threadIdx.x] += 1;
}

static int per_thread = 1000;

static void *run(void *) {
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess) return (void *)1;
  for (int i = 0; i < per_thread; i++) work<<<1, 32, 0, s>>>(nullptr);
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return nullptr;
}

int main(int argc, char **argv) {
  if (argc > 1) per_thread = atoi(argv[1]);
  int nthreads = argc > 2 ? atoi(argv[2]) : 8;
  if (nthreads < 1 || nthreads > 256) return 2;
  pthread_t th[256];
  for (int i = 0; i < nthreads; i++) pthread_create(&th[i], nullptr, run, nullptr);
  long bad = 0;
  for (int i = 0; i < nthreads; i++) {
    void *r;
    pthread_join(th[i], &r);
    bad += (long)r;
  }
  printf("threads: %d x %d launches, %ld failed threads\n", nthreads, per_thread, bad);
  return bad ? 1 : 0;
}
