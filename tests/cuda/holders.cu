// holders.cu — memory a caching allocator holds vs memory the program
// leaks (tests/e2e/test_leaks.py, model/holders.c): a 20 MiB "segment"
// allocated inside a function named as PyTorch's caching allocator's, never
// freed (as PyTorch keeps its cache), and 1 MiB the program itself leaks.
#include <cstdio>
#include <cuda_runtime.h>

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
__attribute__((noinline)) void *alloc_block(size_t bytes) {
  void *p = nullptr;
  cudaMalloc(&p, bytes);
  return p;
}
} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10

__attribute__((noinline)) void *forgotten(size_t bytes) {
  void *p = nullptr;
  cudaMalloc(&p, bytes);
  return p;
}

int main() {
  void *segment = c10::cuda::CUDACachingAllocator::alloc_block(20 << 20);
  void *mine = forgotten(1 << 20);
  printf("holders: %s\n", segment && mine ? "ok" : "failed");
  return 0;
}
