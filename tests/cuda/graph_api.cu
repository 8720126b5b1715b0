// graph_api.cu — every graph-building entry point the shim hooks
// (preload/hooks_graph.c) and the capture calls (preload/capture.c), once
// each with known arguments (e2e/test_graph_api.py). Prints each result and
// errno on stdout, so runs with and without the shim compare byte for byte;
// prints the handles and pointers it passed on stderr ("handle NAME 0x..."),
// for the test to compare with the records. Without a driver every call
// fails: a handle that could not be made is then a fixed stand-in value,
// passed on as is (the runtime fails before it looks at it). Exits with the
// number of calls that failed.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

__global__ void k(float *p) {
  if (p)
    p[threadIdx.x] = 1.0f;
}

static void CUDART_CB host_fn(void *) {}

static int failures;
static unsigned char host_buf[1 << 16];

static void show(const char *what, cudaError_t e) {
  printf("%s = %d (%s) errno=%d\n", what, (int)e, cudaGetErrorName(e), errno);
  if (e != cudaSuccess)
    failures++;
}

// The handle a call made, or `fake` when it made none.
template <typename T> static T made(cudaError_t e, T h, uintptr_t fake) {
  return e == cudaSuccess && h ? h : (T)fake;
}

static void handle(const char *name, const void *p) {
  fprintf(stderr, "handle %s %p\n", name, p);
}

int main() {
  errno = 0;
  cudaError_t e;
  cudaStream_t s = nullptr;
  e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  show("cudaStreamCreateWithFlags", e);
  s = made(e, s, 0x5100);
  float *d = nullptr;
  e = cudaMalloc(&d, 1 << 20);
  show("cudaMalloc", e);
  d = made(e, d, 0xd0000000);

  // graphs (cudaGraphCreate is not traced)
  cudaGraph_t g = nullptr, child = nullptr, mg = nullptr;
  e = cudaGraphCreate(&g, 0);
  show("cudaGraphCreate", e);
  g = made(e, g, 0x6000);
  e = cudaGraphCreate(&child, 0);
  show("cudaGraphCreate child", e);
  child = made(e, child, 0x6100);
  e = cudaGraphCreate(&mg, 0);
  show("cudaGraphCreate mem", e);
  mg = made(e, mg, 0x6200);

  // nodes
  cudaKernelNodeParams kp = {};
  void *args[] = {&d};
  kp.func = (void *)k;
  kp.gridDim = dim3(3, 2, 1);
  kp.blockDim = dim3(64, 2, 1);
  kp.sharedMemBytes = 256;
  kp.kernelParams = args;
  cudaGraphNode_t kn = nullptr;
  e = cudaGraphAddKernelNode(&kn, g, nullptr, 0, &kp);
  show("cudaGraphAddKernelNode", e);
  kn = made(e, kn, 0x7001);
  kp.gridDim = dim3(4, 1, 1);
  e = cudaGraphKernelNodeSetParams(kn, &kp);
  show("cudaGraphKernelNodeSetParams", e);

  cudaHostNodeParams hp = {host_fn, nullptr};
  cudaGraphNode_t hn = nullptr;
  e = cudaGraphAddHostNode(&hn, g, nullptr, 0, &hp);
  show("cudaGraphAddHostNode", e);

  cudaMemcpy3DParms cp = {};
  cp.srcPtr = make_cudaPitchedPtr(host_buf, 512, 256, 4);
  cp.dstPtr = make_cudaPitchedPtr(d, 512, 256, 4);
  cp.extent = make_cudaExtent(256, 4, 2);
  cp.kind = cudaMemcpyHostToDevice;
  cudaGraphNode_t cn = nullptr;
  e = cudaGraphAddMemcpyNode(&cn, g, nullptr, 0, &cp);
  show("cudaGraphAddMemcpyNode", e);

  cudaGraphNode_t c1 = nullptr;
  e = cudaGraphAddMemcpyNode1D(&c1, g, nullptr, 0, host_buf + 8192, d, 3000,
                               cudaMemcpyDeviceToHost);
  show("cudaGraphAddMemcpyNode1D", e);

  cudaMemsetParams mp = {};
  mp.dst = d;
  mp.pitch = 512;
  mp.value = 7;
  mp.elementSize = 4;
  mp.width = 100;
  mp.height = 3;
  cudaGraphNode_t sn = nullptr;
  e = cudaGraphAddMemsetNode(&sn, g, nullptr, 0, &mp);
  show("cudaGraphAddMemsetNode", e);

  cudaGraphNode_t chn = nullptr, en = nullptr;
  e = cudaGraphAddChildGraphNode(&chn, g, nullptr, 0, child);
  show("cudaGraphAddChildGraphNode", e);
  e = cudaGraphAddEmptyNode(&en, g, nullptr, 0);
  show("cudaGraphAddEmptyNode", e);

  // memory nodes, in a graph of their own (a graph with them cannot be
  // cloned or instantiated twice)
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = 1 << 16;
  cudaGraphNode_t an = nullptr, fn = nullptr;
  e = cudaGraphAddMemAllocNode(&an, mg, nullptr, 0, &ap);
  show("cudaGraphAddMemAllocNode", e);
  void *gmem = made(e, ap.dptr, 0xe0000000);
  e = cudaGraphAddMemFreeNode(&fn, mg, e == cudaSuccess ? &an : nullptr,
                              e == cudaSuccess ? 1 : 0, gmem);
  show("cudaGraphAddMemFreeNode", e);

  // executables
  cudaGraphExec_t e1 = nullptr, e2 = nullptr, e3 = nullptr;
  e = cudaGraphInstantiate(&e1, g, 0);
  show("cudaGraphInstantiate", e);
  e1 = made(e, e1, 0x8001);
  e = cudaGraphInstantiateWithFlags(&e2, g, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  show("cudaGraphInstantiateWithFlags", e);
  e2 = made(e, e2, 0x8002);
  cudaGraphInstantiateParams ip = {};
  ip.flags = cudaGraphInstantiateFlagUpload;
  ip.uploadStream = s;
  e = cudaGraphInstantiateWithParams(&e3, g, &ip);
  show("cudaGraphInstantiateWithParams", e);
  printf("result_out = %d\n", (int)ip.result_out);
  e3 = made(e, e3, 0x8003);

  cudaGraphExecUpdateResultInfo ri = {};
  e = cudaGraphExecUpdate(e1, g, &ri);
  show("cudaGraphExecUpdate", e);
  cudaGraph_t cl = nullptr;
  e = cudaGraphClone(&cl, g);
  show("cudaGraphClone", e);
  cl = made(e, cl, 0x6300);
  kp.gridDim = dim3(5, 1, 1);
  e = cudaGraphExecKernelNodeSetParams(e1, kn, &kp);
  show("cudaGraphExecKernelNodeSetParams", e);
  e = cudaGraphUpload(e1, s);
  show("cudaGraphUpload", e);

  // stream capture (capture.c), into a new graph and into an existing one
  cudaGraph_t cg = nullptr, tg = nullptr;
  e = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  show("cudaStreamBeginCapture", e);
  k<<<1, 32, 0, s>>>(d);
  show("launch", cudaGetLastError());
  e = cudaStreamEndCapture(s, &cg);
  show("cudaStreamEndCapture", e);
  cg = made(e, cg, 0x6400);
  e = cudaGraphCreate(&tg, 0);
  show("cudaGraphCreate to", e);
  tg = made(e, tg, 0x6500);
  e = cudaStreamBeginCaptureToGraph(s, tg, nullptr, nullptr, 0,
                                    cudaStreamCaptureModeThreadLocal);
  show("cudaStreamBeginCaptureToGraph", e);
  k<<<2, 32, 0, s>>>(d);
  show("launch", cudaGetLastError());
  cudaGraph_t tg_out = nullptr;
  e = cudaStreamEndCapture(s, &tg_out);
  show("cudaStreamEndCapture to", e);
  show("cudaProfilerStart", cudaProfilerStart());
  show("cudaProfilerStop", cudaProfilerStop());

  // teardown
  show("cudaGraphExecDestroy e1", cudaGraphExecDestroy(e1));
  show("cudaGraphExecDestroy e2", cudaGraphExecDestroy(e2));
  show("cudaGraphExecDestroy e3", cudaGraphExecDestroy(e3));
  show("cudaGraphDestroy cl", cudaGraphDestroy(cl));
  show("cudaGraphDestroy cg", cudaGraphDestroy(cg));
  show("cudaGraphDestroy tg", cudaGraphDestroy(tg));
  show("cudaGraphDestroy mg", cudaGraphDestroy(mg));
  show("cudaGraphDestroy child", cudaGraphDestroy(child));
  show("cudaGraphDestroy g", cudaGraphDestroy(g));
  show("cudaStreamSynchronize", cudaStreamSynchronize(s));
  show("cudaFree", cudaFree(d));
  show("cudaStreamDestroy", cudaStreamDestroy(s));

  handle("s", s);
  handle("d", d);
  handle("g", g);
  handle("child", child);
  handle("mg", mg);
  handle("kn", kn);
  handle("host_fn", (const void *)host_fn);
  handle("host_buf", host_buf);
  handle("gmem", gmem);
  handle("e1", e1);
  handle("e2", e2);
  handle("e3", e3);
  handle("cl", cl);
  handle("cg", cg);
  handle("tg", tg);
  handle("k", (const void *)k);
  return failures > 100 ? 100 : failures;
}
