// holders.cu — memory a caching allocator holds vs memory the program
// leaks (tests/e2e/test_leaks.py, model/holders.c), with PyTorch's own
// names (c10/cuda/CUDACachingAllocator.cpp, as symbolized on an H200):
// NativeCachingAllocator::allocate takes a 20 MiB segment for its cache
// through DeviceCachingAllocator::alloc_block, never freed (as PyTorch
// keeps its cache), and, as with PYTORCH_NO_CUDA_MEMORY_CACHING=1, a 2 MiB
// tensor of its own with cudaMalloc (the tensor's memory, not a cache); and
// 1 MiB the program itself leaks.
#include <cstdio>
#include <cuda_runtime.h>

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
namespace Native {
struct DeviceCachingAllocator {
  __attribute__((noinline)) void *alloc_block(size_t bytes) {
    void *p = nullptr;
    cudaMalloc(&p, bytes);
    return p;
  }
};
struct NativeCachingAllocator {
  DeviceCachingAllocator device;
  __attribute__((noinline)) void *allocate(size_t bytes, bool cached) {
    if (cached)
      return device.alloc_block(bytes);
    void *p = nullptr; // forceUncachedAllocator(): the tensor's own cudaMalloc
    cudaMalloc(&p, bytes);
    return p;
  }
};
} // namespace Native
} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10

__attribute__((noinline)) void *forgotten(size_t bytes) {
  void *p = nullptr;
  cudaMalloc(&p, bytes);
  return p;
}

int main() {
  c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator torch_alloc;
  void *segment = torch_alloc.allocate(20 << 20, true);
  void *tensor = torch_alloc.allocate(2 << 20, false);
  void *mine = forgotten(1 << 20);
  printf("holders: %s\n", segment && tensor && mine ? "ok" : "failed");
  return 0;
}
