/* drv_graph.c — the driver's graph and capture entry points the shim hooks
 * (preload/hooks_graph.c), once each with known arguments
 * (e2e/test_graph_api.py), against NVIDIA's stub libcuda (every call fails
 * with CUDA_ERROR_STUB_LIBRARY). Two builds: DRV_LINK calls the functions
 * it was linked with; otherwise they are found with dlsym on the library
 * named by argv[1], as Triton finds libcuda's. Prints each result; exits
 * with the number of calls that failed. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

/* The per-thread-stream twins (cuda.h declares them only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM). */
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *, CUgraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *);
CUresult cuGraphUpload_ptsz(CUgraphExec, CUstream);
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream, CUgraph, const CUgraphNode *,
                                          const CUgraphEdgeData *, size_t,
                                          CUstreamCaptureMode);

static int failures;

static void show(const char *what, CUresult r) {
  printf("%s = %d errno=%d\n", what, (int)r, errno);
  if (r != CUDA_SUCCESS)
    failures++;
}

#ifdef DRV_LINK
#define GET(name) ((void *)name)
#else
static void *lib;
#define GET(name) dlsym(lib, #name)
#endif

/* Call `name` through a pointer of its own type. */
#define CALL(name, ...)                                                                  \
  do {                                                                                   \
    __typeof__(&name) fn_ = (__typeof__(&name))GET(name);                                \
    if (fn_ == NULL) {                                                                   \
      printf("%s: not found\n", #name);                                                  \
      failures++;                                                                        \
    } else                                                                               \
      show(#name, fn_(__VA_ARGS__));                                                     \
  } while (0)

int main(int argc, char **argv) {
#ifndef DRV_LINK
  lib = dlopen(argc > 1 ? argv[1] : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("dlopen: %s\n", dlerror());
    return 100;
  }
#else
  (void)argc, (void)argv;
#endif
  errno = 0;
  CUstream s = (CUstream)(uintptr_t)0x5100;
  CUgraph g = (CUgraph)(uintptr_t)0x6000, out = NULL;
  CUgraphExec e = (CUgraphExec)(uintptr_t)0x8001, e_out = NULL;
  CUgraphNode n = NULL;

  CALL(cuStreamBeginCapture_v2, s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  CALL(cuStreamBeginCapture_v2_ptsz, NULL, CU_STREAM_CAPTURE_MODE_RELAXED);
  CALL(cuStreamEndCapture, s, &out);
  CALL(cuStreamEndCapture_ptsz, NULL, &out);
  CALL(cuGraphInstantiateWithFlags, &e_out, g,
       CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
  CUDA_GRAPH_INSTANTIATE_PARAMS ip = {0};
  ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  ip.hUploadStream = s;
  ip.hErrNode_out = (CUgraphNode)(uintptr_t)0x7777;
  ip.result_out = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
  CALL(cuGraphInstantiateWithParams, &e_out, g, &ip);
  ip.hUploadStream = NULL;
  CALL(cuGraphInstantiateWithParams_ptsz, &e_out, g, &ip);
  CUDA_KERNEL_NODE_PARAMS kp = {0};
  kp.func = (CUfunction)(uintptr_t)0xf00d;
  kp.gridDimX = 7, kp.gridDimY = 6, kp.gridDimZ = 5;
  kp.blockDimX = 32, kp.blockDimY = 4, kp.blockDimZ = 2;
  kp.sharedMemBytes = 1024;
  CALL(cuGraphAddKernelNode_v2, &n, g, NULL, 0, &kp);
  kp.func = NULL;
  kp.kern = (CUkernel)(uintptr_t)0xbeef;
  CALL(cuGraphAddKernelNode_v2, &n, g, NULL, 0, &kp);
  CALL(cuGraphKernelNodeSetParams_v2, (CUgraphNode)(uintptr_t)0x7001, &kp);
  kp.func = (CUfunction)(uintptr_t)0xf00d;
  CALL(cuGraphExecKernelNodeSetParams_v2, e, (CUgraphNode)(uintptr_t)0x7002, &kp);
  CUgraphExecUpdateResultInfo ui = {0};
  CALL(cuGraphExecUpdate_v2, e, g, &ui);
  CALL(cuStreamBeginCaptureToGraph, s, g, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
  CALL(cuStreamBeginCaptureToGraph_ptsz, NULL, g, NULL, NULL, 0,
       CU_STREAM_CAPTURE_MODE_RELAXED);
  CALL(cuGraphUpload, e, s);
  CALL(cuGraphUpload_ptsz, e, NULL);
  CALL(cuGraphExecDestroy, e);
  CALL(cuGraphDestroy, g);
  return failures;
}
