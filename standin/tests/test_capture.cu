// test_capture.cu — stream capture and graphs on the CPU stand-in for
// libcudart (docs/standin.md, "Stream capture" and "Host functions and
// graphs").
//
// Built by nvcc (-cudart shared) and run with LD_LIBRARY_PATH pointing at the
// stand-in and the GPUTRACE_STANDIN_* variables at their defaults. Checks
// exact return codes of the capture rules (the potentially unsafe calls of
// other threads, captured events, fork/join, the legacy stream), that
// captured work takes no time and moves no bytes, and that graph launches
// run their nodes: kernel time, bytes copied and set at launch, host nodes,
// child graphs, executable graph updates and graph memory. Prints every
// checked value; exits non-zero on any mismatch. Timings are taken with
// events on streams kept busy by a long kernel, so they are exact.
#include <cuda_profiler_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <time.h>

#include "check.h"

// Within 1% (the values are exact here; the margin is the test's promise).
#define CHECK_MS(got, want)                                                              \
  do {                                                                                   \
    double g_ = (got), w_ = (want);                                                      \
    CHECK(g_ > w_ * 0.99 && g_ < w_ * 1.01, "%s = %.6f ms, want %.6f", #got, g_, w_);    \
  } while (0)

#define CHECK_EQ(got, want)                                                              \
  do {                                                                                   \
    long long g_ = (long long)(got), w_ = (long long)(want);                             \
    CHECK(g_ == w_, "%s = %lld, want %lld", #got, g_, w_);                               \
  } while (0)

__global__ void work(int *p) {
  if (p != nullptr)
    p[threadIdx.x] = 1;
}

static const cudaStreamCaptureMode kGlobal = cudaStreamCaptureModeGlobal;
static const cudaStreamCaptureMode kThreadLocal = cudaStreamCaptureModeThreadLocal;
static const cudaStreamCaptureMode kRelaxed = cudaStreamCaptureModeRelaxed;

// Kernel duration by the stand-in's model: KERNEL_BASE_NS + threads *
// KERNEL_PS_PER_THREAD / 1000 ns (the knobs as set, defaults otherwise).
static double knob(const char *name, double dflt) {
  const char *v = getenv(name);
  return v != nullptr && *v != '\0' ? atof(v) : dflt;
}

static double kernel_ms(unsigned grid, unsigned block) {
  double base = knob("GPUTRACE_STANDIN_KERNEL_BASE_NS", 2000);
  double ps = knob("GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD", 100);
  return (base + (double)(unsigned long long)((double)grid * block * ps / 1000)) / 1e6;
}


static cudaStream_t new_stream(unsigned flags) {
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, flags);
  return s;
}

static cudaStreamCaptureStatus status_of(cudaStream_t s) {
  cudaStreamCaptureStatus st = (cudaStreamCaptureStatus)-1;
  cudaError_t e = cudaStreamIsCapturing(s, &st);
  return e == cudaSuccess ? st : (cudaStreamCaptureStatus)-1;
}

static size_t node_count(cudaGraph_t g) {
  size_t n = 0;
  cudaGraphGetNodes(g, nullptr, &n);
  return n;
}

// Run fn on another thread (default capture mode unless `mode` is given)
// and return its result.
template <class F> static cudaError_t on_thread(F fn, int mode = -1) {
  cudaError_t r = cudaErrorUnknown;
  std::thread t([&] {
    if (mode >= 0) {
      cudaStreamCaptureMode m = (cudaStreamCaptureMode)mode;
      cudaThreadExchangeStreamCaptureMode(&m);
    }
    r = fn();
  });
  t.join();
  return r;
}

// ---- capture sequences ---------------------------------------------------------------

static void test_sequences() {
  printf("-- capture sequences\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking),
               s2 = new_stream(cudaStreamNonBlocking);
  cudaGraph_t g = nullptr;
  CHECK_ERR(cudaStreamBeginCapture(0, kGlobal), cudaErrorStreamCaptureUnsupported);
  CHECK_ERR(cudaStreamBeginCapture(cudaStreamLegacy, kGlobal),
            cudaErrorStreamCaptureUnsupported);
  CHECK_ERR(cudaStreamBeginCapture(s, (cudaStreamCaptureMode)7), cudaErrorInvalidValue);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);

  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaErrorIllegalState);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusActive);
  cudaStreamCaptureStatus st;
  unsigned long long id1 = 0, id2 = 0;
  cudaGraph_t cg = nullptr;
  const cudaGraphNode_t *deps = nullptr;
  const cudaGraphEdgeData *edges = nullptr;
  size_t nd = 99;
  CHECK_ERR(cudaStreamGetCaptureInfo(s, &st, &id1, &cg, &deps, &edges, &nd), cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusActive && id1 != 0 && cg != nullptr && nd == 0,
        "capture info: status %d id %llu graph %p deps %zu", (int)st, id1, (void *)cg,
        nd);
  cudaGetLastError(); // reset the thread's last error
  work<<<1, 32, 0, s>>>(nullptr);
  CHECK_ERR(cudaGetLastError(), cudaSuccess);
  CHECK_ERR(cudaStreamGetCaptureInfo(s, &st, nullptr, nullptr, &deps, &edges, &nd),
            cudaSuccess);
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  if (nd == 1)
    cudaGraphNodeGetType(deps[0], &type);
  CHECK(nd == 1 && type == cudaGraphNodeTypeKernel && edges[0].type == 0,
        "after a launch: %zu dependency, a kernel node", nd);
  CHECK_ERR(cudaStreamGetCaptureInfo(s, &st, nullptr, nullptr, nullptr, &edges, &nd),
            cudaErrorInvalidValue);

  CHECK_ERR(cudaStreamBeginCapture(s2, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamGetCaptureInfo(s2, &st, &id2, nullptr, nullptr, nullptr, nullptr),
            cudaSuccess);
  CHECK(id2 == id1 + 1, "capture ids %llu then %llu", id1, id2);
  CHECK_ERR(cudaStreamEndCapture(s2, &g), cudaSuccess);
  CHECK_EQ(node_count(g), 0);
  cudaGraphDestroy(g);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  CHECK(g == cg && node_count(g) == 1, "the captured graph: %zu node", node_count(g));
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);
  CHECK_ERR(cudaGraphDestroy(g), cudaSuccess);

  // End from another thread: global and thread-local captures refuse it.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(on_thread([&] { return cudaStreamEndCapture(s, &g); }),
            cudaErrorStreamCaptureWrongThread);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  CHECK_ERR(cudaStreamBeginCapture(s, kRelaxed), cudaSuccess);
  CHECK_ERR(on_thread([&] { return cudaStreamEndCapture(s, &g); }), cudaSuccess);
  cudaGraphDestroy(g);

  // Capture into an existing graph, after one of its nodes.
  cudaGraph_t into;
  cudaGraphNode_t first;
  cudaGraphCreate(&into, 0);
  cudaGraphAddEmptyNode(&first, into, nullptr, 0);
  CHECK_ERR(cudaStreamBeginCaptureToGraph(s, into, &first, nullptr, 1, kGlobal),
            cudaSuccess);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  size_t roots = 0;
  cudaGraphGetRootNodes(into, nullptr, &roots);
  CHECK(g == into && node_count(g) == 2 && roots == 1, "captured into a graph: %zu nodes",
        node_count(g));
  cudaGraphDestroy(into);

  // The mode exchange.
  cudaStreamCaptureMode m = kRelaxed;
  CHECK_ERR(cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
  CHECK_EQ(m, kGlobal);
  CHECK_ERR(cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
  CHECK_EQ(m, kRelaxed);
  m = (cudaStreamCaptureMode)9;
  CHECK_ERR(cudaThreadExchangeStreamCaptureMode(&m), cudaErrorInvalidValue);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
}

// ---- potentially unsafe calls
// ------------------------------------------------------------

static void test_unsafe() {
  printf("-- potentially unsafe calls during capture\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking),
               other = new_stream(cudaStreamNonBlocking);
  cudaEvent_t ev; // unrelated to the capture, recorded before it
  cudaEventCreate(&ev);
  cudaEventRecord(ev, other);
  cudaEventSynchronize(ev);
  cudaGraph_t g = (cudaGraph_t)&g;
  auto query = [&] { return cudaEventQuery(ev); };

  // A global capture on this thread; another thread in (default) global
  // mode polls an unrelated event: prohibited, and the capture is lost.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(on_thread(query), cudaErrorStreamCaptureUnsupported);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusInvalidated);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(cudaGetLastError(), cudaErrorStreamCaptureInvalidated);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  CHECK(g == nullptr, "graph of an invalidated capture: %p", (void *)g);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusNone);

  // The same other thread in relaxed mode: nothing is prohibited.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(on_thread(query, kRelaxed), cudaSuccess);
  CHECK_ERR(on_thread([&] { return cudaStreamSynchronize(other); }, kRelaxed),
            cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  CHECK_EQ(node_count(g), 1);
  cudaGraphDestroy(g);

  // A thread-local capture: other threads are not affected.
  CHECK_ERR(cudaStreamBeginCapture(s, kThreadLocal), cudaSuccess);
  CHECK_ERR(on_thread(query), cudaSuccess);
  void *p = nullptr;
  CHECK_ERR(on_thread([&] { return cudaMalloc(&p, 256); }), cudaSuccess);
  CHECK_ERR(on_thread([&] { return cudaFree(p); }), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);

  // ... but the capturing thread is (thread-local mode for itself too).
  cudaStreamCaptureMode m = kThreadLocal;
  cudaThreadExchangeStreamCaptureMode(&m);
  CHECK_ERR(cudaStreamBeginCapture(s, kThreadLocal), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), cudaErrorStreamCaptureUnsupported);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  cudaThreadExchangeStreamCaptureMode(&m);

  // The capturing thread itself, global mode: its own unsafe calls fail.
  const cudaError_t unsupported = cudaErrorStreamCaptureUnsupported;
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), unsupported);
  CHECK_ERR(cudaEventSynchronize(ev), unsupported);
  CHECK_ERR(cudaStreamQuery(other), unsupported);
  CHECK_ERR(cudaStreamSynchronize(other), unsupported);
  CHECK_ERR(cudaDeviceSynchronize(), unsupported);
  CHECK_ERR(cudaMalloc(&p, 256), unsupported);
  CHECK_ERR(cudaMallocHost(&p, 256), unsupported);
  CHECK_ERR(cudaFree(nullptr), unsupported);
  int h = 0, *d = nullptr;
  CHECK_ERR(cudaMemcpy(&h, &h, sizeof h, cudaMemcpyHostToHost), unsupported);
  CHECK_ERR(cudaMemset(d, 0, 4), unsupported);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  CHECK_ERR(cudaEventQuery(ev), cudaSuccess); // no capture any more

  // A relaxed capture prohibits no one; a relaxed thread may not
  // synchronize or query the capturing stream itself (invalidates it).
  CHECK_ERR(cudaStreamBeginCapture(s, kRelaxed), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), cudaSuccess);
  CHECK_ERR(on_thread(query), cudaSuccess);
  CHECK_ERR(on_thread([&] { return cudaStreamQuery(s); }), unsupported);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusInvalidated);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  cudaEventDestroy(ev);
  cudaStreamDestroy(s);
  cudaStreamDestroy(other);
}

// ---- events recorded in a capture
// ---------------------------------------------------------

static void test_captured_events() {
  printf("-- events recorded in a capture\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking),
               t = new_stream(cudaStreamNonBlocking);
  cudaEvent_t ev, ok;
  cudaEventCreate(&ev);
  cudaEventCreate(&ok);
  cudaEventRecord(ok, t);
  cudaGraph_t g;
  // Relaxed: the query is not prohibited, yet the event never ran.
  cudaStreamCaptureMode m = kRelaxed;
  cudaThreadExchangeStreamCaptureMode(&m);
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaEventRecord(ev, s), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), cudaErrorCapturedEvent);
  CHECK_ERR(cudaStreamWaitEvent(t, ev, 0), cudaSuccess); // t joins the capture
  CHECK_EQ(status_of(t), cudaStreamCaptureStatusActive);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaThreadExchangeStreamCaptureMode(&m);
  CHECK_EQ(node_count(g), 0); // an event record is not a node
  CHECK_EQ(status_of(t), cudaStreamCaptureStatusNone);
  CHECK_ERR(cudaEventQuery(ev), cudaErrorCapturedEvent);
  CHECK_ERR(cudaEventSynchronize(ev), cudaErrorCapturedEvent);
  float ms;
  CHECK_ERR(cudaEventElapsedTime(&ms, ok, ev), cudaErrorCapturedEvent);
  CHECK_ERR(cudaStreamWaitEvent(t, ev, 0), cudaErrorCapturedEvent);
  CHECK_ERR(cudaEventRecord(ev, t), cudaSuccess); // recorded for real: usable
  CHECK_ERR(cudaEventSynchronize(ev), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), cudaSuccess);
  cudaGraphDestroy(g);

  // A wait on an event recorded outside the capture crosses its boundary.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamWaitEvent(s, ok, 0), cudaErrorStreamCaptureIsolation);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  // ... unless it is external: a wait node (and a record node).
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamWaitEvent(s, ok, cudaEventWaitExternal), cudaSuccess);
  CHECK_ERR(cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  CHECK_EQ(node_count(g), 2);
  cudaGraphExec_t ge;
  CHECK_ERR(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
  CHECK_ERR(cudaEventQuery(ev), cudaErrorCapturedEvent);
  CHECK_ERR(cudaGraphLaunch(ge, s), cudaSuccess); // its record node records ev
  CHECK_ERR(cudaEventSynchronize(ev), cudaSuccess);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaEventDestroy(ev);
  cudaEventDestroy(ok);
  cudaStreamDestroy(s);
  cudaStreamDestroy(t);
}

// ---- fork and join
// ----------------------------------------------------------------------

static void test_fork_join() {
  printf("-- fork / join\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking),
               side = new_stream(cudaStreamNonBlocking);
  cudaEvent_t fork, join;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&join, cudaEventDisableTiming);
  cudaGraph_t g = (cudaGraph_t)&g;
  unsigned long long id = 0, side_id = 0;
  cudaStreamCaptureStatus st;

  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaEventRecord(fork, s), cudaSuccess);
  CHECK_ERR(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
  cudaStreamGetCaptureInfo(s, &st, &id);
  cudaStreamGetCaptureInfo(side, &st, &side_id);
  CHECK(st == cudaStreamCaptureStatusActive && id == side_id && id != 0,
        "the side stream joined capture %llu (%llu)", id, side_id);
  work<<<1, 1, 0, s>>>(nullptr);
  work<<<1, 1, 0, side>>>(nullptr);
  CHECK_ERR(cudaEventRecord(join, side), cudaSuccess);
  CHECK_ERR(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(cudaStreamEndCapture(side, &g), cudaErrorStreamCaptureUnmatched);
  CHECK_EQ(status_of(s), cudaStreamCaptureStatusInvalidated);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  CHECK_EQ(status_of(side), cudaStreamCaptureStatusNone);

  // Joined back: success, two roots and a join node.
  cudaGetLastError();
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  work<<<1, 1, 0, s>>>(nullptr);
  work<<<1, 1, 0, side>>>(nullptr);
  cudaEventRecord(join, side);
  cudaStreamWaitEvent(s, join, 0);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(cudaGetLastError(), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  size_t roots = 0;
  cudaGraphGetRootNodes(g, nullptr, &roots);
  CHECK(node_count(g) == 3 && roots == 2, "fork/join graph: %zu nodes, %zu roots",
        node_count(g), roots);
  CHECK_EQ(status_of(side), cudaStreamCaptureStatusNone);
  cudaGraphDestroy(g);

  // Not joined back: unjoined work, the capture ends without a graph.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  work<<<1, 1, 0, s>>>(nullptr);
  work<<<1, 1, 0, side>>>(nullptr);
  g = (cudaGraph_t)&g;
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined);
  CHECK(g == nullptr, "graph of an unjoined capture: %p", (void *)g);
  CHECK_EQ(status_of(side), cudaStreamCaptureStatusNone);

  // A fork that captured nothing needs no join.
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  cudaEventRecord(fork, s);
  cudaStreamWaitEvent(side, fork, 0);
  work<<<1, 1, 0, s>>>(nullptr);
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(s);
  cudaStreamDestroy(side);
}

// ---- the legacy stream
// --------------------------------------------------------------------

static void test_legacy() {
  printf("-- the legacy stream during capture\n");
  cudaStream_t blocking = new_stream(cudaStreamDefault);
  cudaStream_t nb = new_stream(cudaStreamNonBlocking);
  cudaGraph_t g;
  cudaStreamCaptureStatus st;
  CHECK_ERR(cudaStreamBeginCapture(blocking, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamIsCapturing(0, &st), cudaErrorStreamCaptureImplicit);
  CHECK_ERR(cudaStreamIsCapturing(cudaStreamLegacy, &st), cudaErrorStreamCaptureImplicit);
  CHECK_EQ(status_of(blocking), cudaStreamCaptureStatusActive); // a query does not hurt
  CHECK_ERR(cudaStreamIsCapturing(cudaStreamPerThread, &st), cudaSuccess);
  CHECK_EQ(st, cudaStreamCaptureStatusNone);
  work<<<1, 1>>>(nullptr); // legacy stream: an implicit dependency
  CHECK_ERR(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
  CHECK_EQ(status_of(blocking), cudaStreamCaptureStatusInvalidated);
  CHECK_ERR(cudaStreamEndCapture(blocking, &g), cudaErrorStreamCaptureInvalidated);
  CHECK_ERR(cudaStreamIsCapturing(0, &st), cudaSuccess);
  CHECK_EQ(st, cudaStreamCaptureStatusNone);

  // A non-blocking stream's capture leaves the legacy stream alone.
  CHECK_ERR(cudaStreamBeginCapture(nb, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamIsCapturing(0, &st), cudaSuccess);
  CHECK_EQ(st, cudaStreamCaptureStatusNone);
  cudaGetLastError();
  work<<<1, 1>>>(nullptr);
  CHECK_ERR(cudaGetLastError(), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(nb, &g), cudaSuccess);
  CHECK_EQ(node_count(g), 0);
  cudaGraphDestroy(g);
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(nb);
}

// ---- captured work takes no time; graph launches do
// ----------------------------------------

static void test_timing() {
  printf("-- captured work takes no time, graph launches do\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  int *d, h[64], back[64];
  cudaMalloc(&d, sizeof h);
  cudaMemset(d, 0, sizeof h);
  for (int i = 0; i < 64; i++)
    h[i] = i + 1;
  cudaGraph_t g;
  cudaGraphExec_t ge;

  // A 300 ms kernel and a copy, captured: nothing runs, no bytes move.
  double t0 = now_ms();
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  busy<<<3000000, 1000, 0, s>>>();
  CHECK_ERR(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s), cudaSuccess);
  CHECK_ERR(cudaMemcpyAsync(d, h, sizeof h, (cudaMemcpyKind)42, s),
            cudaErrorInvalidMemcpyDirection); // checked as an eager copy
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  CHECK_ERR(cudaStreamQuery(s), cudaSuccess);
  CHECK(now_ms() - t0 < 100, "capture took %.3f ms of host time", now_ms() - t0);
  cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
  CHECK_EQ(back[5], 0);
  cudaGraphDestroy(g);

  // A graph of four kernels occupies its stream for the sum of theirs.
  const unsigned grid[4] = {1000, 100, 5000, 1}, block[4] = {256, 128, 1024, 1};
  double sum = 0;
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  for (int i = 0; i < 4; i++) {
    work<<<grid[i], block[i], 0, s>>>(nullptr);
    sum += kernel_ms(grid[i], block[i]);
  }
  CHECK_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
  CHECK_ERR(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
  CHECK_ERR(cudaStreamQuery(s), cudaSuccess);
  keep_busy(s, 20);
  cudaEventRecord(a, s);
  CHECK_ERR(cudaGraphLaunch(ge, s), cudaSuccess);
  cudaEventRecord(b, s);
  CHECK_ERR(cudaStreamQuery(s), cudaErrorNotReady);
  cudaEventSynchronize(b);
  CHECK_MS(elapsed(a, b), sum); // 27.6 + 3.28 + 514 + 2 us
  CHECK_ERR(cudaGraphExecDestroy(ge), cudaSuccess);
  CHECK_ERR(cudaGraphDestroy(g), cudaSuccess);

  // A graph launch into a capturing stream is a child graph node.
  cudaGraph_t inner, outer;
  cudaGraphExec_t inner_x, outer_x;
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  work<<<1000, 256, 0, s>>>(nullptr);
  cudaStreamEndCapture(s, &inner);
  cudaGraphInstantiate(&inner_x, inner, 0);
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(inner_x, s), cudaSuccess);
  work<<<100, 128, 0, s>>>(nullptr);
  CHECK_ERR(cudaStreamEndCapture(s, &outer), cudaSuccess);
  cudaGraphNode_t nodes[2];
  size_t n = 2;
  cudaGraphNodeType t0type = cudaGraphNodeTypeEmpty;
  cudaGraphGetNodes(outer, nodes, &n);
  cudaGraphNodeGetType(nodes[0], &t0type);
  CHECK(n == 2 && t0type == cudaGraphNodeTypeGraph,
        "captured graph launch: %zu nodes, "
        "first of type %d",
        n, (int)t0type);
  cudaGraphInstantiate(&outer_x, outer, 0);
  keep_busy(s, 20);
  cudaEventRecord(a, s);
  CHECK_ERR(cudaGraphLaunch(outer_x, s), cudaSuccess);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  CHECK_MS(elapsed(a, b), kernel_ms(1000, 256) + kernel_ms(100, 128));
  cudaGraphExecDestroy(inner_x);
  cudaGraphExecDestroy(outer_x);
  cudaGraphDestroy(inner);
  cudaGraphDestroy(outer);
  cudaFree(d);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

// ---- explicit graphs
// ------------------------------------------------------------------------

static int host_calls;
static double host_called_at;
static void CUDART_CB host_fn(void *arg) {
  host_calls++;
  host_called_at = now_ms();
  *(int *)arg = host_calls;
}
static void CUDART_CB stream_cb(cudaStream_t, cudaError_t, void *) {}

static void test_explicit() {
  printf("-- explicit graphs\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  unsigned *d;
  char *d2;
  cudaMalloc(&d, 4096);
  cudaMalloc(&d2, 512);
  cudaMemset(d, 0, 4096);
  cudaMemset(d2, 0, 512);
  static char src[1024], back[4096];
  memset(src, 'a', sizeof src);
  int host_arg = 0;

  cudaGraph_t g, child;
  CHECK_ERR(cudaGraphCreate(&g, 0), cudaSuccess);
  CHECK_ERR(cudaGraphCreate(&g, 1), cudaErrorInvalidValue);
  cudaGraphNode_t ms, k, cp, host, ch, bad;
  cudaMemsetParams mp = {};
  mp.dst = d;
  mp.value = 0x11223344;
  mp.elementSize = 4;
  mp.width = 256; // elements: 1024 bytes
  mp.height = 1;
  CHECK_ERR(cudaGraphAddMemsetNode(&ms, g, nullptr, 0, &mp), cudaSuccess);
  mp.elementSize = 3;
  CHECK_ERR(cudaGraphAddMemsetNode(&bad, g, nullptr, 0, &mp), cudaErrorInvalidValue);
  mp.elementSize = 4;
  mp.dst = src; // pageable host memory
  CHECK_ERR(cudaGraphAddMemsetNode(&bad, g, nullptr, 0, &mp), cudaErrorInvalidValue);
  cudaKernelNodeParams kp = {};
  kp.func = (void *)work;
  kp.gridDim = dim3(1000);
  kp.blockDim = dim3(256);
  CHECK_ERR(cudaGraphAddKernelNode(&k, g, &ms, 1, &kp), cudaSuccess);
  kp.blockDim = dim3(2048);
  CHECK_ERR(cudaGraphAddKernelNode(&bad, g, &ms, 1, &kp), cudaErrorInvalidConfiguration);
  kp.blockDim = dim3(256);
  kp.func = (void *)&host_calls;
  CHECK_ERR(cudaGraphAddKernelNode(&bad, g, &ms, 1, &kp), cudaErrorInvalidDeviceFunction);
  kp.func = (void *)work;
  cudaGraphNode_t twice[2] = {ms, ms};
  CHECK_ERR(cudaGraphAddKernelNode(&bad, g, twice, 2, &kp), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphAddMemcpyNode1D(&cp, g, &k, 1, (char *)d + 1024, src, sizeof src,
                                     cudaMemcpyHostToDevice),
            cudaSuccess);
  CHECK_ERR(cudaGraphAddMemcpyNode1D(&bad, g, &k, 1, (char *)d + 4000, src, sizeof src,
                                     cudaMemcpyHostToDevice),
            cudaErrorInvalidValue); // past the allocation
  cudaHostNodeParams hp = {host_fn, &host_arg};
  CHECK_ERR(cudaGraphAddHostNode(&host, g, &cp, 1, &hp), cudaSuccess);
  // A child graph: a kernel and a 2D memset, after the memset node.
  cudaGraphCreate(&child, 0);
  cudaGraphNode_t ck, cm;
  kp.gridDim = dim3(10);
  kp.blockDim = dim3(100);
  cudaGraphAddKernelNode(&ck, child, nullptr, 0, &kp);
  cudaMemsetParams mp2 = {};
  mp2.dst = d2;
  mp2.pitch = 128;
  mp2.value = 0xab;
  mp2.elementSize = 1;
  mp2.width = 100;
  mp2.height = 4;
  CHECK_ERR(cudaGraphAddMemsetNode(&cm, child, &ck, 1, &mp2), cudaSuccess);
  CHECK_ERR(cudaGraphAddChildGraphNode(&ch, g, &ms, 1, child), cudaSuccess);
  CHECK_ERR(cudaGraphAddChildGraphNode(&bad, g, nullptr, 0, g), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphAddDependencies(g, &ch, &host, nullptr, 1), cudaSuccess);
  CHECK_ERR(cudaGraphAddDependencies(g, &ch, &host, nullptr, 1), cudaErrorInvalidValue);

  size_t n = 0, roots = 0;
  CHECK_ERR(cudaGraphGetNodes(g, nullptr, &n), cudaSuccess);
  cudaGraphGetRootNodes(g, nullptr, &roots);
  CHECK(n == 5 && roots == 1, "graph: %zu nodes, %zu root", n, roots);
  cudaGraphNode_t list[7];
  n = 7;
  cudaGraphGetNodes(g, list, &n);
  CHECK(n == 5 && list[0] == ms && list[4] == ch && list[5] == nullptr,
        "cudaGraphGetNodes fills 5 of 7 and NULLs the rest");
  cudaGraphNodeType type;
  cudaGraphNodeGetType(ch, &type);
  CHECK_EQ(type, cudaGraphNodeTypeGraph);
  cudaKernelNodeParams got = {};
  CHECK_ERR(cudaGraphKernelNodeGetParams(k, &got), cudaSuccess);
  CHECK(got.func == (void *)work && got.gridDim.x == 1000 && got.blockDim.x == 256,
        "kernel node params: grid %u block %u", got.gridDim.x, got.blockDim.x);
  CHECK_ERR(cudaGraphKernelNodeGetParams(ms, &got), cudaErrorInvalidValue);

  cudaGraphExec_t ge;
  CHECK_ERR(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
  // Instantiation copied the graph: a later node is not in the executable.
  cudaGraphNode_t later;
  cudaGraphAddEmptyNode(&later, g, nullptr, 0);
  memset(src, 'b', sizeof src); // what the launch copies: the bytes at launch
  cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
  CHECK(back[0] == 0 && back[1024] == 0, "nothing set or copied before the launch");

  keep_busy(s, 20);
  double t0 = now_ms();
  CHECK_ERR(cudaGraphLaunch(ge, s), cudaSuccess);
  double returned = now_ms() - t0;
  CHECK(host_calls == 1 && host_arg == 1, "host node called once (%d)", host_calls);
  CHECK(host_called_at - t0 >= 19.9 && returned >= 19.9,
        "host node ran after the stream's earlier work: %.3f ms after the launch call",
        host_called_at - t0);
  cudaStreamSynchronize(s);
  cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
  unsigned word;
  memcpy(&word, back + 1020, 4);
  CHECK(word == 0x11223344 && back[1024] == 'b' && back[2047] == 'b' && back[2048] == 0,
        "memset (32-bit 0x%08x) and copy ('%c') done at launch", word, back[1024]);
  static char back2[512];
  cudaMemcpy(back2, d2, sizeof back2, cudaMemcpyDeviceToHost);
  CHECK((unsigned char)back2[0] == 0xab && (unsigned char)back2[99] == 0xab &&
            back2[100] == 0 && (unsigned char)back2[3 * 128 + 99] == 0xab &&
            back2[3 * 128 + 100] == 0,
        "child graph's 2D memset done");
  CHECK_ERR(cudaGraphLaunch(ge, s), cudaSuccess);
  cudaStreamSynchronize(s);
  CHECK_EQ(host_calls, 2);

  // Timing without the host node: memset 1024 B (2.001 us), kernel
  // (27.6 us), copy 1024 B from pageable memory (2.170 us on the H2D
  // engine), child: kernel (2.1 us) + memset 400 B (2 us).
  cudaGraph_t timed;
  CHECK_ERR(cudaGraphClone(&timed, g), cudaSuccess);
  CHECK_EQ(node_count(timed), 6);
  cudaGraphExec_t te;
  cudaGraph_t no_host;
  cudaGraphCreate(&no_host, 0);
  cudaGraphNode_t a1, a2, a3, a4;
  mp.dst = d;
  cudaGraphAddMemsetNode(&a1, no_host, nullptr, 0, &mp);
  kp.gridDim = dim3(1000);
  kp.blockDim = dim3(256);
  cudaGraphAddKernelNode(&a2, no_host, &a1, 1, &kp);
  cudaGraphAddMemcpyNode1D(&a3, no_host, &a2, 1, (char *)d + 1024, src, sizeof src,
                           cudaMemcpyHostToDevice);
  cudaGraphAddChildGraphNode(&a4, no_host, &a3, 1, child);
  CHECK_ERR(cudaGraphInstantiate(&te, no_host, 0), cudaSuccess);
  keep_busy(s, 20);
  cudaEventRecord(a, s);
  cudaGraphLaunch(te, s);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  CHECK_MS(elapsed(a, b), (2001 + 27600 + 2170 + 2100 + 2000) / 1e6);

  // Stream callbacks cannot be captured; host functions become host nodes.
  cudaGraph_t cg;
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaStreamAddCallback(s, stream_cb, nullptr, 0), cudaErrorNotSupported);
  CHECK_ERR(cudaStreamEndCapture(s, &cg), cudaErrorStreamCaptureInvalidated);
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaLaunchHostFunc(s, host_fn, &host_arg), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &cg), cudaSuccess);
  CHECK_EQ(host_calls, 2);
  cudaGraphExec_t cge;
  cudaGraphInstantiate(&cge, cg, 0);
  cudaGraphLaunch(cge, s);
  cudaGraphLaunch(cge, s);
  CHECK_EQ(host_calls, 4);

  // A dependency cycle is found at instantiation.
  cudaGraph_t cyc;
  cudaGraphNode_t e1, e2;
  cudaGraphCreate(&cyc, 0);
  cudaGraphAddEmptyNode(&e1, cyc, nullptr, 0);
  cudaGraphAddEmptyNode(&e2, cyc, &e1, 1);
  CHECK_ERR(cudaGraphAddDependencies(cyc, &e2, &e1, nullptr, 1), cudaSuccess);
  cudaGraphExec_t cx;
  cudaGraphInstantiateParams ip = {};
  CHECK_ERR(cudaGraphInstantiateWithParams(&cx, cyc, &ip), cudaErrorInvalidValue);
  CHECK_EQ(ip.result_out, cudaGraphInstantiateInvalidStructure);

  // An executable whose memory was freed is not launched.
  cudaFree(d2);
  CHECK_ERR(cudaGraphLaunch(te, s), cudaErrorInvalidValue);

  cudaGraphExecDestroy(ge);
  cudaGraphExecDestroy(te);
  cudaGraphExecDestroy(cge);
  CHECK_ERR(cudaGraphExecDestroy(ge), cudaErrorInvalidValue);
  cudaGraphDestroy(g);
  cudaGraphDestroy(timed);
  cudaGraphDestroy(no_host);
  cudaGraphDestroy(child);
  cudaGraphDestroy(cg);
  cudaGraphDestroy(cyc);
  CHECK_ERR(cudaGraphDestroy(g), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphNodeGetType(ms, &type), cudaErrorInvalidValue); // destroyed with g
  cudaFree(d);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

// ---- updates of executable graphs
// -------------------------------------------------------------

static void test_update() {
  printf("-- executable graph updates\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto launch_ms = [&](cudaGraphExec_t x) {
    keep_busy(s, 20);
    cudaEventRecord(a, s);
    cudaError_t e = cudaGraphLaunch(x, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    return e == cudaSuccess ? elapsed(a, b) : -1.0f;
  };
  cudaKernelNodeParams kp = {};
  kp.func = (void *)work;
  kp.gridDim = dim3(1000);
  kp.blockDim = dim3(256);
  cudaGraph_t g;
  cudaGraphNode_t k;
  cudaGraphCreate(&g, 0);
  cudaGraphAddKernelNode(&k, g, nullptr, 0, &kp);
  cudaGraphExec_t x;
  CHECK_ERR(cudaGraphInstantiateWithFlags(&x, g, 0), cudaSuccess);
  CHECK_MS(launch_ms(x), kernel_ms(1000, 256));

  kp.gridDim = dim3(5000);
  kp.blockDim = dim3(1024);
  CHECK_ERR(cudaGraphExecKernelNodeSetParams(x, k, &kp), cudaSuccess);
  CHECK_MS(launch_ms(x), kernel_ms(5000, 1024));
  cudaKernelNodeParams got = {};
  cudaGraphKernelNodeGetParams(k, &got);
  CHECK_EQ(got.gridDim.x, 1000); // the graph is unchanged
  kp.blockDim = dim3(2048);
  CHECK_ERR(cudaGraphExecKernelNodeSetParams(x, k, &kp), cudaErrorInvalidConfiguration);

  // The same topology with other parameters: updated.
  cudaGraph_t g2;
  cudaGraphNode_t k2;
  kp.gridDim = dim3(100);
  kp.blockDim = dim3(128);
  cudaGraphCreate(&g2, 0);
  cudaGraphAddKernelNode(&k2, g2, nullptr, 0, &kp);
  cudaGraphExecUpdateResultInfo info;
  CHECK_ERR(cudaGraphExecUpdate(x, g2, &info), cudaSuccess);
  CHECK_EQ(info.result, cudaGraphExecUpdateSuccess);
  CHECK_MS(launch_ms(x), kernel_ms(100, 128));
  kp.gridDim = dim3(10);
  kp.blockDim = dim3(10);
  CHECK_ERR(cudaGraphExecKernelNodeSetParams(x, k2, &kp), cudaSuccess); // by the new node
  CHECK_MS(launch_ms(x), kernel_ms(10, 10));

  // Another node count, another node type: refused.
  cudaGraph_t g3, g4;
  cudaGraphNode_t n3[2], n4;
  cudaGraphCreate(&g3, 0);
  cudaGraphAddKernelNode(&n3[0], g3, nullptr, 0, &kp);
  cudaGraphAddKernelNode(&n3[1], g3, nullptr, 0, &kp);
  CHECK_ERR(cudaGraphExecUpdate(x, g3, &info), cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged &&
            info.errorNode == nullptr,
        "node count changed: result %d", (int)info.result);
  cudaGraphCreate(&g4, 0);
  cudaGraphAddEmptyNode(&n4, g4, nullptr, 0);
  CHECK_ERR(cudaGraphExecUpdate(x, g4, &info), cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorNodeTypeChanged && info.errorNode == n4,
        "node type changed: result %d", (int)info.result);
  CHECK_MS(launch_ms(x), kernel_ms(10, 10)); // unchanged by the failed updates

  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaGraphDestroy(g2);
  cudaGraphDestroy(g3);
  cudaGraphDestroy(g4);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

// ---- graph memory
// ----------------------------------------------------------------------------

static void test_graph_memory() {
  printf("-- graph memory (alloc / free nodes)\n");
  cudaStream_t s = new_stream(cudaStreamNonBlocking);
  const size_t kBytes = 1 << 20;
  void *plain; // ordinary device memory
  cudaMalloc(&plain, 64);
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = kBytes;
  cudaGraph_t g;
  cudaGraphNode_t alloc, set, copy, bad;
  cudaGraphCreate(&g, 0);
  CHECK_ERR(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap), cudaSuccess);
  char *p = (char *)ap.dptr;
  CHECK(p != nullptr, "alloc node address %p", (void *)p);
  cudaPointerAttributes attr = {};
  cudaPointerGetAttributes(&attr, p);
  CHECK_EQ(attr.type, cudaMemoryTypeDevice);
  CHECK_ERR(cudaFree(p), cudaErrorInvalidValue); // not allocated until it runs
  cudaMemsetParams mp = {};
  mp.dst = p;
  mp.value = 7;
  mp.elementSize = 1;
  mp.width = kBytes;
  mp.height = 1;
  CHECK_ERR(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &mp), cudaSuccess);
  static char h[4096];
  CHECK_ERR(
      cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, h, p, sizeof h, cudaMemcpyDeviceToHost),
      cudaSuccess);
  cudaGraph_t other;
  cudaGraphCreate(&other, 0);
  CHECK_ERR(cudaGraphClone(&other, g), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphAddChildGraphNode(&bad, other, nullptr, 0, g),
            cudaErrorInvalidValue);
  ap.poolProps.location.id = 3;
  CHECK_ERR(cudaGraphAddMemAllocNode(&bad, other, nullptr, 0, &ap),
            cudaErrorInvalidDevice);
  ap.poolProps.location.id = 0;

  cudaGraphExec_t x, x2;
  CHECK_ERR(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  CHECK_ERR(cudaGraphInstantiate(&x2, g, 0), cudaErrorInvalidValue); // one at a time
  size_t free0, free1, total;
  cudaMemGetInfo(&free0, &total);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaSuccess);
  cudaStreamSynchronize(s);
  cudaMemGetInfo(&free1, &total);
  CHECK(free0 - free1 == kBytes && h[0] == 7 && h[4095] == 7,
        "allocated at launch: %zu bytes, contents %d", free0 - free1, h[0]);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaErrorInvalidValue); // still allocated
  CHECK_ERR(cudaFree(p), cudaSuccess);
  CHECK_ERR(cudaFree(p), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaSuccess);
  CHECK_ERR(cudaFreeAsync(p, s), cudaSuccess);

  // Freed by another graph's free node.
  cudaGraph_t gf;
  cudaGraphNode_t fnode;
  cudaGraphCreate(&gf, 0);
  CHECK_ERR(cudaGraphAddMemFreeNode(&fnode, gf, nullptr, 0, p), cudaSuccess);
  CHECK_ERR(cudaGraphAddMemFreeNode(&bad, gf, nullptr, 0, p), cudaErrorInvalidValue);
  CHECK_ERR(cudaGraphAddMemFreeNode(&bad, g, &copy, 1, p),
            cudaErrorInvalidValue); // freed by another graph: not by its owner too
  CHECK_ERR(cudaGraphAddMemFreeNode(&bad, gf, nullptr, 0, plain), cudaErrorInvalidValue);
  cudaGraphExec_t xf;
  cudaGraphInstantiate(&xf, gf, 0);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(xf, s), cudaSuccess);
  cudaStreamSynchronize(s);
  cudaMemGetInfo(&free1, &total);
  CHECK(free1 == free0, "freed by a free node: %zu bytes in use", free0 - free1);

  // cudaGraphInstantiateFlagAutoFreeOnLaunch frees the previous launch's.
  CHECK_ERR(cudaGraphExecDestroy(x), cudaSuccess);
  CHECK_ERR(cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch),
            cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(x, s), cudaSuccess);
  CHECK_ERR(cudaFree(p), cudaSuccess);

  // Captured stream-ordered allocation: alloc and free nodes.
  char *q = nullptr, *q2 = nullptr;
  cudaGraph_t cg;
  CHECK_ERR(cudaStreamBeginCapture(s, kGlobal), cudaSuccess);
  CHECK_ERR(cudaMallocAsync((void **)&q, 4096, s), cudaSuccess);
  CHECK_ERR(cudaMallocAsync((void **)&q2, 4096, s), cudaSuccess);
  CHECK(q != nullptr && q2 != nullptr && q != q2 && q != p,
        "captured allocations have unique addresses");
  CHECK_ERR(cudaMemsetAsync(q, 1, 4096, s), cudaSuccess);
  CHECK_ERR(cudaFreeAsync(plain, s), cudaErrorInvalidValue); // not a graph allocation
  CHECK_ERR(cudaFreeAsync(q, s), cudaSuccess);
  CHECK_ERR(cudaFreeAsync(q, s), cudaErrorInvalidValue); // twice in one graph
  CHECK_ERR(cudaFreeAsync(q2, s), cudaSuccess);
  CHECK_ERR(cudaStreamEndCapture(s, &cg), cudaSuccess);
  cudaGraphNode_t nodes[5];
  size_t n = 5;
  cudaGraphGetNodes(cg, nodes, &n);
  cudaGraphNodeType t[5] = {};
  for (size_t i = 0; i < n; i++)
    cudaGraphNodeGetType(nodes[i], &t[i]);
  CHECK(n == 5 && t[0] == cudaGraphNodeTypeMemAlloc && t[2] == cudaGraphNodeTypeMemset &&
            t[3] == cudaGraphNodeTypeMemFree,
        "captured: %zu nodes (alloc, alloc, memset, free, free)", n);
  CHECK_ERR(cudaFree(q), cudaErrorInvalidValue);
  cudaGraphExec_t cx;
  CHECK_ERR(cudaGraphInstantiate(&cx, cg, 0), cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(cx, s), cudaSuccess);
  CHECK_ERR(cudaGraphLaunch(cx, s), cudaSuccess); // it frees what it allocates
  cudaStreamSynchronize(s);
  cudaMemGetInfo(&free1, &total);
  CHECK(free1 == free0, "after the captured graph: %zu bytes in use", free0 - free1);
  CHECK_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
  CHECK_ERR(cudaDeviceGraphMemTrim(1), cudaErrorInvalidDevice);

  cudaGraphExecDestroy(x);
  cudaGraphExecDestroy(xf);
  cudaGraphExecDestroy(cx);
  cudaGraphDestroy(g);
  cudaGraphDestroy(gf);
  cudaGraphDestroy(cg);
  cudaGraphDestroy(other);
  cudaFree(plain);
  cudaStreamDestroy(s);
}

int main() {
  CHECK_ERR(cudaProfilerStart(), cudaSuccess);
  test_sequences();
  test_unsafe();
  test_captured_events();
  test_fork_join();
  test_legacy();
  test_timing();
  test_explicit();
  test_update();
  test_graph_memory();
  CHECK_ERR(cudaProfilerStop(), cudaSuccess);
  CHECK_ERR(cudaDeviceSynchronize(), cudaSuccess);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
