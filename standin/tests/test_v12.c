/* test_v12.c — the libcudart.so.12 build: links with cudaMalloc@libcudart.so.12
 * etc., reports runtime 12080, and fills the CUDA 12 cudaDeviceProp layout
 * through cudaGetDeviceProperties_v2 without writing past its named fields. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

cudaError_t cudaGetDeviceProperties_v2(void *prop, int device);
cudaError_t cudaEventElapsedTime_v2(float *ms, cudaEvent_t a, cudaEvent_t b);

static int failures;
#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    int ok_ = (cond);                                                                    \
    printf("%s ", ok_ ? "ok  " : "FAIL");                                                \
    printf(__VA_ARGS__);                                                                 \
    printf("\n");                                                                        \
    failures += !ok_;                                                                    \
  } while (0)

int main(void) {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  CHECK(v == 12080, "runtime version %d", v);
  /* The CUDA 12 struct is 784 bytes up to unifiedFunctionPointers (x86-64);
   * everything after (reserved words) must stay untouched. */
  static unsigned char buf[2048];
  memset(buf, 0xee, sizeof buf);
  CHECK(cudaGetDeviceProperties_v2(buf, 0) == cudaSuccess, "cudaGetDeviceProperties_v2");
  CHECK(strcmp((const char *)buf, "gputrace CPU stand-in") == 0, "name \"%s\"", buf);
  size_t written = sizeof buf;
  while (written > 0 && buf[written - 1] == 0xee)
    written--;
  CHECK(written <= 784, "bytes written %zu (<= 784)", written);
  void *d = NULL;
  CHECK(cudaMalloc(&d, 4096) == cudaSuccess && d != NULL, "cudaMalloc %p", d);
  CHECK(cudaFree(d) == cudaSuccess, "cudaFree");
  cudaEvent_t a, b;
  float ms = -1;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, 0);
  cudaEventRecord(b, 0);
  cudaEventSynchronize(b);
  CHECK(cudaEventElapsedTime_v2(&ms, a, b) == cudaSuccess && ms >= 0, "elapsed_v2 %f",
        ms);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures != 0;
}
