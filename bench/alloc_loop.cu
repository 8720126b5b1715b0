// alloc_loop.cu — stack-capture cost: N cudaMalloc/cudaFree pairs (argv[1],
// default 200,000) made from a call chain argv[2] frames deep (default 30),
// so every traced allocation unwinds that many frames. Prints
// "ns_per_call X" (one malloc or one free).
//
// argv[3] "mixed": what a server's allocator does rather than a pair loop:
// four call sites in turn (mixed_site<0..3>), seven sizes from 256 B to
// 4 MiB, and eight blocks live at a time (each free is of the block
// allocated eight calls before), so allocations, frees and pointers
// interleave; N allocations and N frees as before.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static bool mixed;
static const size_t sizes[7] = {256, 4096, 65536, 1 << 20, 512, 4 << 20, 8192};

// One function per site (its own stack), N = 0..3.
template <int N> __attribute__((noinline)) void *mixed_site(size_t n) {
  void *p = nullptr;
  cudaMalloc(&p, n);
  asm volatile("" ::: "memory"); // four functions, not one folded
  return p;
}

static void mixed_loop(long n) {
  void *live[8] = {};
  for (long i = 0; i < n; i++) {
    size_t bytes = sizes[(i * 5 + i / 4) % 7];
    void *&slot = live[i % 8];
    if (slot)
      cudaFree(slot);
    switch (i & 3) {
    case 0: slot = mixed_site<0>(bytes); break;
    case 1: slot = mixed_site<1>(bytes); break;
    case 2: slot = mixed_site<2>(bytes); break;
    default: slot = mixed_site<3>(bytes); break;
    }
  }
  for (void *p : live)
    if (p)
      cudaFree(p);
}

__attribute__((noinline)) double deep(int depth, long n) {
  if (depth > 1) {
    double r = deep(depth - 1, n);
    asm volatile("" ::: "memory"); // keep the frame: no tail call
    return r;
  }
  double t0 = now_ns();
  if (mixed) {
    mixed_loop(n);
  } else {
    void *p = nullptr;
    for (long i = 0; i < n; i++) {
      cudaMalloc(&p, 256);
      cudaFree(p);
    }
  }
  return (now_ns() - t0) / (2.0 * n);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  int depth = argc > 2 ? atoi(argv[2]) : 30;
  mixed = argc > 3 && strcmp(argv[3], "mixed") == 0;
  deep(depth, 1000); // warm-up
  printf("ns_per_call %.1f\n", deep(depth, n));
  return 0;
}
