/* abi12.c — a CUDA 12 program calling the three entry points whose ABI
 * changed in CUDA 13 (tests/e2e/test_coverage.py): cudaMemPrefetchAsync
 * with a device ordinal, CUDA 12.8's cudaMemcpyBatchAsync and
 * cudaMemcpy3DBatchAsync with a failIdx. Linked with the stand-in's
 * libcudart.so.12; the toolkit's headers are CUDA 13's, so the calls go
 * through function pointers of the CUDA 12 types to the same symbols.
 * Prints "abi12: F failures". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

typedef cudaError_t (*prefetch12_t)(const void *, size_t, int, cudaStream_t);
typedef cudaError_t (*batch12_t)(void **, void **, size_t *, size_t,
                                 struct cudaMemcpyAttributes *, size_t *, size_t,
                                 size_t *, cudaStream_t);
typedef cudaError_t (*batch3d12_t)(size_t, struct cudaMemcpy3DBatchOp *, size_t *,
                                   unsigned long long, cudaStream_t);

static int failures;
#define EXPECT(cond)                                                                     \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                         \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

int main(void) {
  prefetch12_t prefetch = (prefetch12_t)(void (*)(void))cudaMemPrefetchAsync;
  batch12_t batch = (batch12_t)(void (*)(void))cudaMemcpyBatchAsync;
  batch3d12_t batch3d = (batch3d12_t)(void (*)(void))cudaMemcpy3DBatchAsync;
  cudaStream_t s = NULL;
  void *m = NULL, *d = NULL;
  EXPECT(cudaStreamCreate(&s) == cudaSuccess);
  EXPECT(cudaMallocManaged(&m, 1 << 20, cudaMemAttachGlobal) == cudaSuccess);
  EXPECT(cudaMalloc(&d, 16384) == cudaSuccess);
  EXPECT(prefetch(m, 1 << 20, 0, s) == cudaSuccess);
  EXPECT(prefetch(m, 65536, cudaCpuDeviceId, s) == cudaSuccess);

  unsigned char *h = malloc(8192), *back = calloc(1, 8192);
  for (int i = 0; i < 8192; i++)
    h[i] = (unsigned char)(i * 5 + 1);
  void *dsts[2] = {d, (char *)d + 4096}, *srcs[2] = {h, h + 4096};
  size_t sizes[2] = {4096, 4096}, idx = 0, fail = 0;
  struct cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  EXPECT(batch(dsts, srcs, sizes, 2, &attr, &idx, 1, &fail, s) == cudaSuccess);
  EXPECT(fail == SIZE_MAX);
  struct cudaMemcpy3DBatchOp op;
  memset(&op, 0, sizeof op);
  op.src.type = op.dst.type = cudaMemcpyOperandTypePointer;
  op.src.op.ptr.ptr = d;
  op.dst.op.ptr.ptr = (char *)d + 8192;
  op.extent.width = 1024, op.extent.height = op.extent.depth = 1;
  op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  EXPECT(batch3d(1, &op, &fail, 0, s) == cudaSuccess);
  fail = 0;
  /* the legacy NULL stream is refused; the failure is not one copy's */
  EXPECT(batch(dsts, srcs, sizes, 2, &attr, &idx, 1, &fail, NULL) ==
         cudaErrorInvalidValue);
  EXPECT(fail == SIZE_MAX);
  EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
  EXPECT(cudaMemcpy(back, d, 8192, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(memcmp(back, h, 8192) == 0);
  EXPECT(cudaMemcpy(back, (char *)d + 8192, 1024, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(memcmp(back, h, 1024) == 0);
  cudaFree(d);
  cudaFree(m);
  cudaStreamDestroy(s);
  free(h);
  free(back);
  printf("abi12: %d failures\n", failures);
  return failures != 0;
}
