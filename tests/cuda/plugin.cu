// plugin.cu — a shared library that links libcudart (as PyTorch's extension
// modules do); dlopen_host loads it with RTLD_LOCAL at run time, so the
// runtime is not in the global scope where RTLD_NEXT looks.
#include <cuda_runtime.h>

__global__ void plugin_kernel(float *p) {}

extern "C" int plugin_run(int launches) {
  float *d = nullptr;
  if (cudaMalloc(&d, 1 << 20) != cudaSuccess) return 1;
  for (int i = 0; i < launches; i++) plugin_kernel<<<4, 64>>>(d);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  return cudaFree(d) == cudaSuccess ? 0 : 3;
}
