// cupti_server.cu — a small inference server for the CUPTI tests
// (tests/e2e/test_cupti.py): W worker threads (3), each with two streams
// of its own and a captured graph (kernel, memset, kernel); each request
// runs two kernels, a host-to-device and a device-to-host copy of pinned
// memory, a memset and a graph launch across the two streams, then waits
// for both. Usage: cupti_server [REQUESTS per worker, 40]. Prints one line
// that does not depend on timing.
//   cupti_server branches N: one explicit graph whose kernel nodes were
//   created in the opposite order they run (mlp, then layer_norm, with an edge
//   layer_norm -> mlp), launched N times.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#define WORKERS 3

__global__ void attention(float *x) {
  if (x)
    x[threadIdx.x] += 1.0f;
}
__global__ void mlp(float *x) {
  if (x)
    x[threadIdx.x] *= 2.0f;
}
__global__ void layer_norm(float *x) {
  if (x)
    x[threadIdx.x] -= 1.0f;
}

static int requests = 40;
static int failures;

#define OK(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                        \
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                                \
    }                                                                                    \
  } while (0)

static void *worker(void *) {
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++)
    OK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  float *dev, *dev2, *host;
  OK(cudaMalloc(&dev, 1 << 20));
  OK(cudaMalloc(&dev2, 1 << 20));
  OK(cudaMallocHost(&host, 1 << 18));
  cudaGraph_t g;
  cudaGraphExec_t x;
  OK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeThreadLocal));
  layer_norm<<<8, 128, 0, s[0]>>>(NULL);
  OK(cudaMemsetAsync(dev2, 0, 1 << 16, s[0]));
  layer_norm<<<16, 64, 0, s[0]>>>(NULL);
  OK(cudaStreamEndCapture(s[0], &g));
  OK(cudaGraphInstantiate(&x, g, 0));
  for (int r = 0; r < requests; r++) {
    attention<<<32, 256, 0, s[0]>>>(NULL);
    OK(cudaMemcpyAsync(dev, host, 1 << 18, cudaMemcpyHostToDevice, s[1]));
    mlp<<<4, 64, 0, s[1]>>>(NULL);
    OK(cudaMemsetAsync(dev2, 0, 1 << 17, s[0]));
    OK(cudaGraphLaunch(x, s[0]));
    OK(cudaMemcpyAsync(host, dev, 1 << 12, cudaMemcpyDeviceToHost, s[1]));
    OK(cudaStreamSynchronize(s[0]));
    OK(cudaStreamSynchronize(s[1]));
  }
  OK(cudaGraphExecDestroy(x));
  OK(cudaGraphDestroy(g));
  OK(cudaFreeHost(host));
  OK(cudaFree(dev2));
  OK(cudaFree(dev));
  for (int i = 0; i < 2; i++)
    OK(cudaStreamDestroy(s[i]));
  return NULL;
}

static int branches(int n) {
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  float *none = NULL;
  void *args[] = {&none};
  cudaKernelNodeParams big = {(void *)mlp, dim3(64), dim3(256), 0, args, NULL};
  cudaKernelNodeParams small = {(void *)layer_norm, dim3(1), dim3(32), 0, args, NULL};
  cudaGraphNode_t b, a;
  OK(cudaGraphAddKernelNode(&b, g, NULL, 0, &big));
  OK(cudaGraphAddKernelNode(&a, g, NULL, 0, &small));
  OK(cudaGraphAddDependencies(g, &a, &b, NULL, 1));
  cudaGraphExec_t x;
  OK(cudaGraphInstantiate(&x, g, 0));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  for (int i = 0; i < n; i++)
    OK(cudaGraphLaunch(x, s));
  OK(cudaStreamSynchronize(s));
  printf("cupti_server branches: %d launches, %d failures\n", n, failures);
  return failures != 0;
}

static int overlap(int n) {
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++)
    OK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  for (int i = 0; i < n; i++) {
    attention<<<100000, 1000, 0, s[0]>>>(NULL); /* 10 ms at 0.1 ns a thread */
    mlp<<<4, 64, 0, s[1]>>>(NULL);
    OK(cudaDeviceSynchronize());
  }
  printf("cupti_server overlap: %d rounds, %d failures\n", n, failures);
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "overlap") == 0)
    return overlap(atoi(argv[2]));
  if (argc > 2 && strcmp(argv[1], "branches") == 0)
    return branches(atoi(argv[2]));
  if (argc > 1)
    requests = atoi(argv[1]);
  pthread_t t[WORKERS];
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(t[i], NULL);
  printf("cupti_server: %d workers x %d requests, %d failures\n", WORKERS, requests,
         failures);
  return failures != 0;
}
