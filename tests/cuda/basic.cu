// basic.cu — one of every common runtime call, with exact counts that
// tests/e2e/test_basic.py checks in the trace:
//   alloc 5 (cudaMalloc x3, cudaMallocHost (which cuda_runtime.h's C++
//   template turns into cudaHostAlloc), cudaMallocManaged)
//   free 5, memcpy 6 (HtoD pageable, HtoD pinned, DtoH, DtoD, async pinned,
//   Default resolved to HtoD), memset 2, launch 15 (infer x10, scale<float> x5),
//   stream create/destroy 1+1, event create x2, record x2, sync: device x2,
//   stream x1, event x1.
// expect: alloc=5 free=5 memcpy=6 memset=2 launch=15 sync=4 stream=2 event=4
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void infer(float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

template <typename T> __global__ void scale(T *data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

#define CK(x) report(#x, (x))
static int failures = 0;
static void report(const char *what, cudaError_t e) {
  if (e != cudaSuccess) {
    printf("%s -> %d %s\n", what, (int)e, cudaGetErrorString(e));
    failures++;
  }
}

int main() {
  const int n = 1 << 18; // 1 MiB of floats
  const size_t bytes = n * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr, *d_tmp = nullptr, *h_pinned = nullptr,
        *managed = nullptr;
  float *h_pageable = new float[n];
  for (int i = 0; i < n; i++) h_pageable[i] = (float)i;
  CK(cudaMalloc(&d_in, bytes));
  CK(cudaMalloc(&d_out, bytes));
  CK(cudaMalloc(&d_tmp, 4096));
  CK(cudaMallocHost(&h_pinned, bytes));
  CK(cudaMallocManaged(&managed, 65536));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));

  CK(cudaMemcpy(d_in, h_pageable, bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_in, h_pinned, bytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(d_out, 0, bytes));
  CK(cudaMemsetAsync(d_tmp, 1, 4096, stream));
  CK(cudaEventRecord(start, stream));
  for (int i = 0; i < 10; i++) infer<<<n / 256, 256, 0, stream>>>(d_in, d_out, n);
  for (int i = 0; i < 5; i++) scale<float><<<dim3(64, 2, 1), dim3(128, 1, 1)>>>(d_out, 0.5f, n);
  CK(cudaEventRecord(stop, stream));
  CK(cudaMemcpyAsync(h_pinned, d_out, bytes, cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  CK(cudaEventSynchronize(stop));
  CK(cudaMemcpy(h_pageable, d_out, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(d_tmp, d_out, 4096, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(d_in, h_pageable, 1024, cudaMemcpyDefault));
  CK(cudaDeviceSynchronize());
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, start, stop));

  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(d_tmp));
  CK(cudaFreeHost(h_pinned));
  CK(cudaFree(managed));
  CK(cudaStreamDestroy(stream));
  CK(cudaDeviceSynchronize());
  delete[] h_pageable;
  printf("basic: %d failures\n", failures);
  return failures ? 1 : 0;
}
