// no_driver.cu — run against the real libcudart.so.13 on a machine without
// a driver: every call fails. Prints each result so the output with and
// without the shim can be compared byte for byte; exits with the number of
// calls that returned cudaErrorInsufficientDriver (35), errno unchanged.
#include <cerrno>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void k(float *p) {}

int main() {
  int n35 = 0;
  auto show = [&](const char *what, cudaError_t e) {
    printf("%s = %d (%s) errno=%d\n", what, (int)e, cudaGetErrorName(e), errno);
    if (e == cudaErrorInsufficientDriver) n35++;
  };
  float *d = nullptr;
  errno = 0;
  show("cudaMalloc", cudaMalloc(&d, 1024));
  printf("pointer after failed cudaMalloc: %p\n", (void *)d);
  float h[16] = {0};
  show("cudaMemcpy", cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  show("cudaMemset", cudaMemset(d, 0, 64));
  k<<<1, 1>>>(d);
  show("launch", cudaGetLastError());
  cudaStream_t s = nullptr;
  show("cudaStreamCreate", cudaStreamCreate(&s));
  show("cudaDeviceSynchronize", cudaDeviceSynchronize());
  show("cudaFree", cudaFree(d));
  return n35;
}
