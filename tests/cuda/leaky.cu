// leaky.cu — known leaks for `gputrace leaks` (tests/e2e/test_leaks.py), at
// known lines (keep them where they are):
//   stage_input, line 20: 1 MiB per request, leaked in every request
//   load_model, line 25: 48 MiB at start-up, never freed (held, not growing)
//   scratch, line 30: allocated and freed every request (not a leak)
//   pinned_staging, line 35: 64 KiB pinned, leaked once
//   bad_free, lines 39 and 43: cudaFree on a cudaMallocHost pointer (wrong
//     kind), and a double free of a device pointer
// usage: leaky [requests=25] [pause_us=2000]  expect: alloc=53 free=28 nvtx=50
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

void *keep_alive[64]; // keeps the leaked pointers reachable

__attribute__((noinline)) void *stage_input(int i) {
  void *p = nullptr;
  cudaMalloc(&p, 1 << 20);
  return keep_alive[i] = p;
}
__attribute__((noinline)) void *load_model() {
  void *w = nullptr;
  cudaMalloc(&w, 48 << 20);
  return w;
}
__attribute__((noinline)) void scratch() {
  void *s = nullptr;
  cudaMalloc(&s, 4096);
  cudaFree(s);
}
__attribute__((noinline)) void *pinned_staging() {
  void *h = nullptr;
  cudaMallocHost(&h, 65536);
  return h;
}
__attribute__((noinline)) void bad_free(void *pinned) {
  cudaFree(pinned);
  void *d = nullptr;
  cudaMalloc(&d, 512);
  cudaFree(d);
  cudaFree(d);
}

int main(int argc, char **argv) {
  int requests = argc > 1 ? atoi(argv[1]) : 25, pause_us = argc > 2 ? atoi(argv[2]) : 2000;
  void *model = load_model();
  void *staging = pinned_staging();
  for (int r = 0; r < requests && r < 64; r++) {
    nvtxRangePushA("request");
    stage_input(r);
    scratch();
    nvtxRangePop();
    usleep(pause_us);
  }
  bad_free(staging);
  printf("leaky: %d requests, model at %p\n", requests, model);
  fflush(stdout);
  return 0;
}
