// inline_leak.cu — allocations inside inlined helpers, built -O2 -g, for
// inlined frames (tests/e2e/test_inline_frames.py): a cudaMalloc in an
// always-inline helper called from a thread's lambda, leaked (its stack:
// the helper, the lambda, std::thread's _M_run, each a frame with its line
// as addr2line -i gives it); a cudaMallocHost in an always-inline helper
// called from main, leaked (its user frame kept). Lines end in "// L:name".
// usage: inline_leak   expect: 2 leaks (1 MiB device, 64 KiB pinned)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <thread>

static inline __attribute__((always_inline)) void *grab(size_t n) {
  void *p = nullptr;
  if (cudaMalloc(&p, n) != cudaSuccess) // L:grab
    exit(1);
  return p;
}

static inline __attribute__((always_inline)) void *pin(size_t n) {
  void *p = nullptr;
  if (cudaMallocHost(&p, n) != cudaSuccess) // L:pin
    exit(1);
  return p;
}

int main() {
  void *kept = nullptr;
  std::thread worker([&kept] {
    kept = grab(1u << 20); // L:lambda
  });
  worker.join();
  auto pin_for = [](size_t n) { return pin(n); }; // L:pin_lambda
  void *h = pin_for(64u << 10);                   // L:main_pin
  printf("inline_leak: %p %p\n", kept, h);
  return 0;
}
