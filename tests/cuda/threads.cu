// threads.cu — 8 threads launch concurrently, each on its own stream:
// 1000 launches of `work` per thread (argv[1] overrides), then one
// cudaStreamSynchronize each. Prints each thread's kernel-thread id count.
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
  pthread_t th[8];
  for (int i = 0; i < 8; i++) pthread_create(&th[i], nullptr, run, nullptr);
  long bad = 0;
  for (int i = 0; i < 8; i++) {
    void *r;
    pthread_join(th[i], &r);
    bad += (long)r;
  }
  printf("threads: 8 x %d launches, %ld failed threads\n", per_thread, bad);
  return bad ? 1 : 0;
}
