// coverage.cu — the less common runtime entry points the trace covers, once
// or twice each with known sizes (tests/e2e/test_coverage.py checks the
// records): CUDA arrays (plain, 3D, layered, mipmapped), cudaMalloc3D, copies
// to, from and between arrays (1D, 2D, 3D), 3D and 3D peer copies, 3D
// memsets, the batch copies of CUDA 12.8+, managed-memory prefetches (single
// and batched), IPC mappings, stream callbacks. Leaks on purpose one array
// (leak_array) and one IPC mapping (leak_ipc_mapping). Data that round-trips
// is compared; prints "coverage: F failures, M mismatches" (mismatches are
// only looked for when every call succeeded) and exits with F + M (at most
// 100). Built twice: legacy default stream and --default-stream per-thread.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

static int failures, mismatches;

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess)                                                               \
      failures++;                                                                        \
  } while (0)

static void same(const void *a, const void *b, size_t n) {
  if (failures == 0 && memcmp(a, b, n) != 0)
    mismatches++;
}

static int callbacks;
static void CUDART_CB on_done(cudaStream_t, cudaError_t status, void *data) {
  if (status == cudaSuccess)
    ++*(int *)data;
}

__attribute__((noinline)) static cudaArray_t leak_array(const cudaChannelFormatDesc *d) {
  cudaArray_t a = nullptr;
  CHECK(cudaMallocArray(&a, d, 256, 64)); // 4 x 256 x 64 = 65536 bytes, never freed
  return a;
}

__attribute__((noinline)) static void *leak_ipc_mapping(cudaIpcMemHandle_t h) {
  void *p = nullptr;
  CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess)); // never closed
  return p;
}

int main() {
  const size_t MiB = 1 << 20;
  unsigned char *h = (unsigned char *)malloc(MiB), *h2 = (unsigned char *)calloc(1, MiB);
  for (size_t i = 0; i < MiB; i++)
    h[i] = (unsigned char)(i * 7 + 3);
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreate(&s));
  void *pinned_ = nullptr;
  CHECK(cudaMallocHost(&pinned_, MiB));
  unsigned char *pinned = pinned_ ? (unsigned char *)pinned_ : h2; // no driver: NULL

  // ---- arrays: 65536 + 65536 + 65536 + 12288 + 21760 bytes ----
  cudaChannelFormatDesc f1 =
      cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaChannelFormatDesc f4 =
      cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
  cudaChannelFormatDesc u8 =
      cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
  cudaArray_t a1 = nullptr, a3 = nullptr, layered = nullptr;
  cudaMipmappedArray_t mip = nullptr;
  CHECK(cudaMallocArray(&a1, &f1, 256, 64));
  cudaArray_t a2 = leak_array(&f1);
  CHECK(cudaMalloc3DArray(&a3, &f4, make_cudaExtent(32, 16, 8), 0));
  CHECK(cudaMalloc3DArray(&layered, &u8, make_cudaExtent(64, 64, 3), cudaArrayLayered));
  CHECK(cudaMallocMipmappedArray(&mip, &f1, make_cudaExtent(64, 64, 0), 4, 0));
  cudaPitchedPtr pp = {};
  CHECK(cudaMalloc3D(&pp, make_cudaExtent(100, 20, 5))); // pitch 512: 51200 bytes
  void *lin = nullptr;
  CHECK(cudaMalloc(&lin, 16384));

  // ---- 2D copies to, from and between arrays ----
  CHECK(cudaMemcpy2DToArray(a1, 0, 0, h, 1024, 1024, 64, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy2DFromArray(h2, 1024, a1, 0, 0, 1024, 64, cudaMemcpyDeviceToHost));
  same(h, h2, 65536);
  CHECK(cudaMemcpy2DToArrayAsync(a1, 0, 0, pinned, 512, 512, 32, cudaMemcpyHostToDevice,
                                 s));
  CHECK(cudaMemcpy2DFromArrayAsync(pinned, 512, a1, 0, 0, 512, 32, cudaMemcpyDeviceToHost,
                                   s));
  CHECK(cudaMemcpy2DArrayToArray(a2, 0, 0, a1, 0, 0, 1024, 64, cudaMemcpyDeviceToDevice));

  // ---- 1D copies to, from and between arrays (deprecated, still exported) ----
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CHECK(cudaMemcpyToArray(a2, 0, 0, h, 4096, cudaMemcpyHostToDevice));
  memset(h2, 0, 4096);
  CHECK(cudaMemcpyFromArray(h2, a2, 0, 0, 4096, cudaMemcpyDeviceToHost));
  same(h, h2, 4096);
  CHECK(cudaMemcpyToArrayAsync(a2, 0, 1, pinned, 2048, cudaMemcpyHostToDevice, s));
  CHECK(cudaMemcpyFromArrayAsync(pinned, a2, 0, 1, 2048, cudaMemcpyDeviceToHost, s));
  CHECK(cudaMemcpyArrayToArray(a1, 0, 0, a2, 0, 0, 8192, cudaMemcpyDeviceToDevice));
#pragma GCC diagnostic pop

  // ---- 3D copies: into a float4 array and back (65536 bytes each way) ----
  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(h, 32 * 16, 32, 16);
  in.dstArray = a3;
  in.extent = make_cudaExtent(32, 16, 8);
  in.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&in));
  cudaMemcpy3DParms out = {};
  out.srcArray = a3;
  memset(h2, 0, 65536);
  out.dstPtr = make_cudaPitchedPtr(h2, 32 * 16, 32, 16);
  out.extent = make_cudaExtent(32, 16, 8);
  out.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&out));
  same(h, h2, 65536);
  // pitched linear memory: 100 x 20 x 5 = 10000 bytes
  cudaMemcpy3DParms lp = {};
  lp.srcPtr = make_cudaPitchedPtr(pinned, 100, 100, 20);
  lp.dstPtr = pp;
  lp.extent = make_cudaExtent(100, 20, 5);
  lp.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3DAsync(&lp, s));
  cudaMemcpy3DPeerParms peer = {};
  peer.srcPtr = pp;
  peer.dstPtr = make_cudaPitchedPtr(lin, 100, 100, 20);
  peer.extent = make_cudaExtent(100, 20, 5);
  CHECK(cudaMemcpy3DPeer(&peer));
  CHECK(cudaMemcpy3DPeerAsync(&peer, s));

  // ---- 3D memsets: 10000 and 1000 bytes ----
  CHECK(cudaMemset3D(pp, 7, make_cudaExtent(100, 20, 5)));
  CHECK(cudaMemset3DAsync(pp, 0, make_cudaExtent(50, 10, 2), s));

  // ---- batches: 4096 + 8192 + 12288 bytes; 1024 + 1024 bytes ----
  void *dsts[3] = {lin, (char *)lin + 4096, pinned};
  const void *srcs[3] = {pinned + 4096, pinned + 8192, (char *)lin + 4096};
  size_t sizes[3] = {4096, 8192, 12288};
  cudaMemcpyAttributes attr = {};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t attr_idx = 0;
  CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &attr_idx, 1, s));
  cudaMemcpy3DBatchOp ops[2] = {};
  ops[0].src.type = cudaMemcpyOperandTypePointer;
  ops[0].src.op.ptr.ptr = pinned;
  ops[0].dst.type = cudaMemcpyOperandTypeArray;
  ops[0].dst.op.array.array = a3;
  ops[0].extent = make_cudaExtent(8, 4, 2); // float4: 1024 bytes
  ops[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  ops[1].src.type = cudaMemcpyOperandTypePointer;
  ops[1].src.op.ptr.ptr = lin;
  ops[1].dst.type = cudaMemcpyOperandTypePointer;
  ops[1].dst.op.ptr.ptr = (char *)lin + 8192;
  ops[1].extent = make_cudaExtent(256, 4, 1); // bytes: 1024
  ops[1].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  CHECK(cudaMemcpy3DBatchAsync(2, ops, 0, s));

  // ---- managed memory: prefetch 1 MiB to the device, 64 KiB back, a batch of 2 x 4 KiB
  // --
  void *m = nullptr;
  CHECK(cudaMallocManaged(&m, MiB));
  cudaMemLocation dev = {cudaMemLocationTypeDevice, 0},
                  host = {cudaMemLocationTypeHost, 0};
  CHECK(cudaMemPrefetchAsync(m, MiB, dev, 0, s));
  CHECK(cudaMemPrefetchAsync(m, 65536, host, 0, s));
  void *pf[2] = {m, (void *)((uintptr_t)m + 65536)};
  size_t pf_sizes[2] = {4096, 4096}, loc_idx = 0;
  CHECK(cudaMemPrefetchBatchAsync(pf, pf_sizes, 2, &dev, &loc_idx, 1, 0, s));

  // ---- IPC: two mappings of one allocation; one closed, one leaked ----
  void *exported = nullptr, *mapped = nullptr;
  CHECK(cudaMalloc(&exported, 262144));
  cudaIpcMemHandle_t handle;
  memset(&handle, 0, sizeof handle);
  CHECK(cudaIpcGetMemHandle(&handle, exported));
  CHECK(cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess));
  CHECK(cudaMemcpy(mapped, h, 4096, cudaMemcpyHostToDevice)); // seen through `exported`
  memset(h2, 0, 4096);
  CHECK(cudaMemcpy(h2, exported, 4096, cudaMemcpyDeviceToHost));
  same(h, h2, 4096);
  CHECK(cudaIpcCloseMemHandle(mapped));
  void *kept = leak_ipc_mapping(handle);
  (void)kept;

  // ---- stream callbacks ----
  CHECK(cudaStreamAddCallback(s, on_done, &callbacks, 0));
  CHECK(cudaStreamAddCallback(s, on_done, &callbacks, 0));
  CHECK(cudaStreamSynchronize(s));
  if (failures == 0 && callbacks != 2)
    mismatches++;

  // ---- frees (a2 and the second mapping are leaked) ----
  CHECK(cudaFreeArray(a1));
  CHECK(cudaFreeArray(a3));
  CHECK(cudaFreeArray(layered));
  CHECK(cudaFreeMipmappedArray(mip));
  CHECK(cudaFree(pp.ptr));
  CHECK(cudaFree(lin));
  CHECK(cudaFree(m));
  CHECK(cudaFree(exported));
  CHECK(cudaFreeHost(pinned_));
  CHECK(cudaStreamDestroy(s));
  (void)a2;
  printf("coverage: %d failures, %d mismatches\n", failures, mismatches);
  free(h);
  free(h2);
  int bad = failures + mismatches;
  return bad > 100 ? 100 : bad;
}
