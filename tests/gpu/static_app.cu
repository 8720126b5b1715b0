// static_app.cu — built with plain `nvcc` defaults (the CUDA runtime linked
// statically), so it imports no cuda* symbol: a runtime hook sees nothing and
// every call reaches the driver through the entry points the static runtime
// looks up (cuGetProcAddress). scripts/gpu-check.sh (check static_cudart)
// expects in the trace, through the driver hooks:
//   allocations 2 (1 MiB, 4 KiB), frees 2, copies 3 (HtoD 1 MiB, HtoD 4 KiB, DtoH 1 MiB),
//   launches 5: add(float*, float const*, int) x2, void scale<float>(float*, float, int) x3
// Prints "static_app: 0 failures" when every call succeeded.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__global__ void add(float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i % 1024];
}

template <typename T> __global__ void scale(T *a, T f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= f;
}

static int failures = 0;
static void ck(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    printf("%s: %s\n", what, cudaGetErrorString(e));
    failures++;
  }
}

int main() {
  const int n = 1 << 18; // 1 MiB of floats
  std::vector<float> host(n, 1.0f), back(n, 0.0f);
  float *a = nullptr, *b = nullptr;
  ck(cudaMalloc(&a, n * sizeof(float)), "cudaMalloc a");
  ck(cudaMalloc(&b, 1024 * sizeof(float)), "cudaMalloc b");
  ck(cudaMemcpy(a, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy a");
  ck(cudaMemcpy(b, host.data(), 1024 * sizeof(float), cudaMemcpyHostToDevice), "copy b");
  for (int i = 0; i < 2; i++) add<<<n / 256, 256>>>(a, b, n);
  for (int i = 0; i < 3; i++) scale<float><<<n / 256, 256>>>(a, 0.5f, n);
  ck(cudaGetLastError(), "launch");
  ck(cudaMemcpy(back.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost), "copy back");
  // 1 + 1 + 1 (two adds), halved three times
  ck(back[0] == 0.375f && back[n - 1] == 0.375f ? cudaSuccess : cudaErrorUnknown, "result");
  ck(cudaFree(a), "cudaFree a");
  ck(cudaFree(b), "cudaFree b");
  printf("static_app: %d failures\n", failures);
  return failures != 0;
}
