// capture_destroy.cu — captures that end, or go on, other than by a
// successful cudaStreamEndCapture on their thread (e2e/test_graphs.py,
// test_destroyed_capture). Run with capinfo_count.so preloaded (after the
// shim when traced): it counts the cudaStreamGetCaptureInfo calls that reach
// the runtime, which only the shim makes here (it asks whether a launch's
// stream captures while a capture is open: the launch hooks' general form).
//  1. A capture open on another stream: N launches on s, counted; then
//     ended: N more.
//  2. A capture ended by destroying its stream: N launches on s.
//  3. A stream made next (the stand-in hands out the destroyed one's
//     handle) captures `replayed`, replayed 3 times.
//  4. cudaStreamEndCapture from another thread of a global capture fails
//     (cudaErrorStreamCaptureWrongThread) and the capture goes on: `late`,
//     launched into it after, is a node; the capture ended by its own
//     thread is replayed twice.
//  5. A capturing stream destroyed where no hook sees it (the runtime's own
//     cudaStreamDestroy, called by capinfo_count.so past the shim): the
//     stream made next has its handle and captures `again`, replayed once;
//     N launches after.
//  6. A capture (relaxed: cudaDeviceReset is no unsafe call then) open at a
//     cudaDeviceReset, which ends every capture: N launches on a stream made
//     after.
// Prints the queries each loop made (0 untraced).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "check_call.h"

__global__ void busy(float *x) {
  x[threadIdx.x] += 1.0f;
}
__global__ void lost(float *x) {
  x[threadIdx.x] -= 1.0f;
}
__global__ void replayed(float *x) {
  x[threadIdx.x] *= 2.0f;
}
__global__ void late(float *x) {
  x[threadIdx.x] = 0.0f;
}
__global__ void again(float *x) {
  x[threadIdx.x] += 2.0f;
}

enum { N = 1000 };

static float *x;
static unsigned long (*queries)(void);

// The queries N launches on s made, or ~0ul when a launch failed.
static unsigned long loop(cudaStream_t s) {
  unsigned long before = queries();
  for (int i = 0; i < N; i++)
    busy<<<1, 32, 0, s>>>(x);
  return cudaGetLastError() == cudaSuccess ? queries() - before : ~0ul;
}

static cudaStream_t wrong_stream;
static cudaError_t wrong_result;

static void *end_elsewhere(void *) {
  cudaGraph_t g = nullptr;
  wrong_result = cudaStreamEndCapture(wrong_stream, &g);
  return nullptr;
}

static int replay(cudaGraph_t g, int times, cudaStream_t s) {
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  for (int i = 0; i < times; i++)
    CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  return 0;
}

int main() {
  *(void **)&queries = dlsym(RTLD_DEFAULT, "capinfo_queries");
  if (queries == nullptr) {
    printf("capinfo_count.so is not preloaded\n");
    return 2;
  }
  cudaStream_t s, c, d, r, w;
  cudaGraph_t g;
  CHECK(cudaMalloc(&x, 32 * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // 1
  CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(c, cudaStreamCaptureModeThreadLocal));
  unsigned long open = loop(s);
  CHECK(cudaStreamEndCapture(c, &g));
  CHECK(cudaGraphDestroy(g));
  unsigned long ended = loop(s);
  printf("a capture open on another stream: %d launches, %lu queries; ended: %lu\n", N,
         open, ended);

  // 2
  CHECK(cudaStreamCreateWithFlags(&d, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(d, cudaStreamCaptureModeGlobal));
  lost<<<1, 32, 0, d>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamDestroy(d));
  printf("a capture ended by cudaStreamDestroy: %d launches, %lu queries\n", N, loop(s));

  // 3
  CHECK(cudaStreamCreateWithFlags(&r, cudaStreamNonBlocking));
  printf("the next stream %s the destroyed one's handle\n", r == d ? "has" : "has not");
  CHECK(cudaStreamBeginCapture(r, cudaStreamCaptureModeGlobal));
  replayed<<<2, 32, 0, r>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(r, &g));
  if (replay(g, 3, s))
    return 1;

  // 4
  CHECK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(w, cudaStreamCaptureModeGlobal));
  wrong_stream = w;
  pthread_t t;
  if (pthread_create(&t, nullptr, end_elsewhere, nullptr) != 0 ||
      pthread_join(t, nullptr) != 0)
    return 1;
  printf("ended from another thread: %d (%s)\n", (int)wrong_result,
         cudaGetErrorName(wrong_result));
  late<<<3, 32, 0, w>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(w, &g));
  if (replay(g, 2, s))
    return 1;

  // 5
  cudaStream_t u, u2;
  cudaError_t (*destroy_unseen)(cudaStream_t) = nullptr;
  *(void **)&destroy_unseen = dlsym(RTLD_DEFAULT, "capinfo_destroy_unseen");
  if (destroy_unseen == nullptr) {
    printf("capinfo_count.so has no capinfo_destroy_unseen\n");
    return 1;
  }
  CHECK(cudaStreamCreateWithFlags(&u, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(u, cudaStreamCaptureModeGlobal));
  lost<<<1, 32, 0, u>>>(x);
  CHECK(cudaGetLastError());
  CHECK(destroy_unseen(u));
  CHECK(cudaStreamCreateWithFlags(&u2, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(u2, cudaStreamCaptureModeGlobal));
  again<<<4, 32, 0, u2>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamEndCapture(u2, &g));
  if (replay(g, 1, s))
    return 1;
  printf("a stream destroyed unseen, its handle %s: %d launches after, %lu queries\n",
         u2 == u ? "reused" : "not reused", N, loop(s));

  CHECK(cudaStreamDestroy(u2));
  CHECK(cudaStreamDestroy(w));
  CHECK(cudaStreamDestroy(r));
  CHECK(cudaStreamDestroy(c));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));

  // 6
  cudaStream_t v;
  CHECK(cudaStreamCreateWithFlags(&v, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(v, cudaStreamCaptureModeRelaxed));
  CHECK(cudaDeviceReset());
  CHECK(cudaMalloc(&x, 32 * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("a capture open at cudaDeviceReset: %d launches after, %lu queries\n", N, loop(s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  printf("done\n");
  return 0;
}
