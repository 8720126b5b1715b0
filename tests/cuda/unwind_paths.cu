// unwind_paths.cu — leaks at known lines reached through the paths the
// shim's cached unwinder must walk as backtrace() does, or hand to it
// (tests/e2e/test_unwind.py; keep the lines where they are):
//   deep_leak, line 17: 1 MiB from a 30-frame-deep recursion (deep)
//   handler_leak, line 22: 2 MiB inside a SIGUSR1 handler (a signal frame:
//     the unwinder falls back to backtrace())
//   ~Guard, line 27: 3 MiB in a destructor run while an exception unwinds
//   caught_leak, line 32: 4 MiB inside a catch block
// usage: unwind_paths   expect: alloc=4 free=0, exit 0
#include <csignal>
#include <cstdio>
#include <cuda_runtime.h>
#include <stdexcept>

void *keep[4];
__attribute__((noinline)) void deep_leak() {
  cudaMalloc(&keep[0], 1 << 20);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void handler_leak(int sig) {
  (void)sig;
  cudaMalloc(&keep[1], 2 << 20);
  asm volatile("" ::: "memory");
}
struct Guard {
  __attribute__((noinline)) ~Guard() {
    cudaMalloc(&keep[2], 3 << 20);
    asm volatile("" ::: "memory");
  }
};
__attribute__((noinline)) void caught_leak() {
  cudaMalloc(&keep[3], 4 << 20);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void deep(int depth) {
  if (depth > 1)
    deep(depth - 1);
  else
    deep_leak();
  asm volatile("" ::: "memory"); // keep the frame: no tail call
}

__attribute__((noinline)) void throws() {
  Guard g;
  throw std::runtime_error("unwinding");
}

int main() {
  deep(30);
  signal(SIGUSR1, handler_leak);
  raise(SIGUSR1);
  try {
    throws();
  } catch (const std::exception &) {
    caught_leak();
  }
  for (void *p : keep)
    if (!p)
      return 1;
  printf("unwind_paths: 4 leaks\n");
  return 0;
}
