// test_cupti.cu — the stand-in libcupti.so.13 (standin/cupti/) on the
// stand-in runtime's timeline: what a CUPTI client sees, checked exactly.
// Linked against the toolkit's libcupti (its symbol versions); at run time
// LD_LIBRARY_PATH selects the stand-ins.
//   test_cupti            the activity API on the default timeline model
//   test_cupti notimeline GPUTRACE_STANDIN_TIMELINE=0: as without a driver
#include <cupti.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "check.h"

__global__ void k_small() {}

struct rec {
  uint32_t kind, corr, ext_kind, graph_id;
  uint64_t start, end, ext_id, node_id, bytes;
  int buffer, cbid;
};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static std::vector<rec> recs;
static std::vector<pid_t> requesters;
static int nbuffers, refuse_next;

static void CUPTIAPI requested(uint8_t **b, size_t *size, size_t *max) {
  pthread_mutex_lock(&mu);
  requesters.push_back(gettid());
  int refuse = refuse_next;
  refuse_next = 0;
  pthread_mutex_unlock(&mu);
  *b = refuse ? NULL : (uint8_t *)aligned_alloc(8, 1 << 16);
  *size = refuse ? 0 : 1 << 16;
  *max = 0;
}

static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid) {
  pthread_mutex_lock(&mu);
  int id = ++nbuffers;
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
    rec x = {};
    x.kind = r->kind;
    x.buffer = id;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
      x.corr = k->correlationId, x.start = k->start, x.end = k->end;
      x.graph_id = k->graphId, x.node_id = k->graphNodeId;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)r;
      x.corr = m->correlationId, x.start = m->start, x.end = m->end, x.bytes = m->bytes;
      x.graph_id = m->graphId, x.node_id = m->graphNodeId;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
      x.corr = m->correlationId, x.start = m->start, x.end = m->end, x.bytes = m->bytes;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
      x.corr = a->correlationId, x.start = a->start, x.end = a->end, x.cbid = (int)a->cbid;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      CUpti_ActivityExternalCorrelation *e = (CUpti_ActivityExternalCorrelation *)r;
      x.corr = e->correlationId, x.ext_kind = e->externalKind, x.ext_id = e->externalId;
    }
    recs.push_back(x);
  }
  pthread_mutex_unlock(&mu);
  free(b);
}

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

static uint64_t realtime_ns() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static std::vector<rec> take(uint32_t kind) {
  pthread_mutex_lock(&mu);
  std::vector<rec> out;
  for (size_t i = 0; i < recs.size(); i++)
    if (recs[i].kind == kind)
      out.push_back(recs[i]);
  pthread_mutex_unlock(&mu);
  return out;
}

static void clear() {
  pthread_mutex_lock(&mu);
  recs.clear();
  requesters.clear();
  pthread_mutex_unlock(&mu);
}

#define CU(expr, want)                                                                   \
  do {                                                                                   \
    CUptiResult r_ = (expr);                                                             \
    CHECK(r_ == (want), "%s -> %d, want %d", #expr, (int)r_, (int)(want));               \
  } while (0)

static int no_timeline() {
  uint32_t v = 0;
  CU(cuptiGetVersion(&v), CUPTI_SUCCESS);
  CHECK(v == CUPTI_API_VERSION, "version %u", v);
  uint64_t ts = 0, before = realtime_ns();
  CU(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  CHECK(ts >= before && ts <= realtime_ns(), "CLOCK_REALTIME without a device");
  CUpti_SubscriberHandle h;
  CU(cuptiSubscribe(&h, on_cb, NULL), CUPTI_ERROR_UNKNOWN);
  CU(cuptiActivityRegisterCallbacks(requested, completed), CUPTI_SUCCESS);
  CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_UNKNOWN);
  CU(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 1),
     CUPTI_ERROR_UNKNOWN);
  CU(cuptiActivityFlushAll(0), CUPTI_ERROR_UNKNOWN);
  size_t dropped = 9;
  CU(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
  CHECK(dropped == 0, "dropped %zu", dropped);
  return failures != 0;
}

static cudaStream_t s1;
static void *worker_thread(void *) { // its own API records' buffer
  CU(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 700),
     CUPTI_SUCCESS);
  k_small<<<4, 256, 0, s1>>>();
  uint64_t last = 0;
  CU(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
     CUPTI_SUCCESS);
  CHECK(last == 700, "popped %llu", (unsigned long long)last);
  return NULL;
}

static uint64_t times3() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 3 * (t.tv_sec * 1000000000ull + t.tv_nsec);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "notimeline") == 0)
    return no_timeline();
  CUpti_SubscriberHandle h, h2;
  CU(cuptiSubscribe(&h, on_cb, NULL), CUPTI_SUCCESS);
  CU(cuptiSubscribe(&h2, on_cb, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CU(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION); // no callbacks yet
  CU(cuptiActivityRegisterCallbacks(requested, completed), CUPTI_SUCCESS);
  CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
  CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING), CUPTI_ERROR_NOT_SUPPORTED);
  // API records for the launch entry point only (cbid from its name).
  const char *name = NULL;
  CU(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                          CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &name),
     CUPTI_SUCCESS);
  CHECK(name && strcmp(name, "__cudaLaunchKernel_v13000") == 0, "name %s", name);
  CU(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 1),
     CUPTI_SUCCESS);
  CU(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 1),
     CUPTI_SUCCESS);
  cudaStreamCreate(&s1);

  // 1. A kernel: exact duration, CLOCK_REALTIME placement, external
  // correlation from another thread's stack, in that thread's buffer.
  uint64_t t0 = realtime_ns();
  pthread_t t;
  pthread_create(&t, NULL, worker_thread, NULL);
  pthread_join(t, NULL);
  cudaStreamSynchronize(s1);
  uint64_t t1 = realtime_ns();
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  std::vector<rec> k = take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<rec> e = take(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  std::vector<rec> a = take(CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK(k.size() == 1 && k[0].end - k[0].start == 2102, "one kernel of 2102 ns (%zu)",
        k.size());
  CHECK(k.size() == 1 && k[0].start >= t0 && k[0].end <= t1, "kernel within the call, realtime");
  CHECK(e.size() == 1 && e[0].ext_kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 &&
            e[0].ext_id == 700,
        "one CUSTOM2 record, id 700");
  CHECK(a.size() == 1 && a[0].cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
        "one API record, the launch's cbid");
  CHECK(k.size() == 1 && e.size() == 1 && a.size() == 1 && k[0].corr == e[0].corr &&
            a[0].corr == k[0].corr && k[0].corr != 0,
        "kernel, API and external records share the correlation id");
  CHECK(k.size() == 1 && e.size() == 1 && k[0].buffer != e[0].buffer,
        "per-thread buffers: the external record and the kernel in different buffers");

  // 2. A memset without API collection: a record, no external correlation.
  clear();
  void *p;
  cudaMalloc(&p, 1 << 20);
  CU(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 5),
     CUPTI_SUCCESS);
  cudaMemsetAsync(p, 0, 1 << 20, s1);
  uint64_t last = 0;
  CU(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
     CUPTI_SUCCESS);
  CU(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
     CUPTI_ERROR_QUEUE_EMPTY);
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  std::vector<rec> m = take(CUPTI_ACTIVITY_KIND_MEMSET);
  CHECK(m.size() == 1 && m[0].bytes == (1 << 20) && m[0].end - m[0].start == 2000 + 1048,
        "memset of 1 MiB: 3048 ns");
  CHECK(take(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION).empty(),
        "no external record for an API not collected");

  // 3. A graph: one record per node, with the graph's and node's ids.
  clear();
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  k_small<<<1, 32, 0, s1>>>();
  cudaMemsetAsync(p, 1, 4096, s1);
  k_small<<<2, 32, 0, s1>>>();
  cudaStreamEndCapture(s1, &g);
  cudaGraphInstantiate(&x, g, 0);
  size_t nn = 0;
  cudaGraphGetNodes(g, NULL, &nn);
  cudaGraphNode_t nodes[3];
  cudaGraphGetNodes(g, nodes, &nn);
  uint64_t nid = 0;
  CU(cuptiGetGraphNodeId(nodes[0], &nid), CUPTI_SUCCESS);
  CHECK(nid != 0, "a node id");
  cudaGraphLaunch(x, s1);
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  k = take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  m = take(CUPTI_ACTIVITY_KIND_MEMSET);
  a.clear(); // the captured launches were API calls too: the graph launch's
  std::vector<rec> all = take(CUPTI_ACTIVITY_KIND_RUNTIME);
  for (size_t i = 0; i < all.size(); i++)
    if (all[i].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000)
      a.push_back(all[i]);
  CHECK(k.size() == 2 && m.size() == 1 && a.size() == 1 && all.size() == 3,
        "two kernels, a memset, one graph launch of 3 API records (%zu, %zu, %zu)", k.size(),
        m.size(), a.size());
  if (k.size() == 2 && m.size() == 1 && a.size() == 1) {
    CHECK(k[0].end - k[0].start == 2003 && k[1].end - k[1].start == 2006,
          "node durations 2003, 2006");
    CHECK(k[0].graph_id != 0 && k[0].graph_id == k[1].graph_id &&
              m[0].graph_id == k[0].graph_id,
          "one graphId");
    CHECK(k[0].node_id != 0 && k[0].node_id != k[1].node_id && m[0].node_id != k[0].node_id &&
              m[0].node_id != k[1].node_id,
          "distinct graphNodeIds");
    CHECK(k[0].corr == a[0].corr && k[1].corr == a[0].corr && m[0].corr == a[0].corr &&
              a[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
          "every node has the graph launch's correlation");
  }

  // 4. FlushAll(0) leaves a running kernel's record; forced gives it as 0/0.
  clear();
  k_small<<<100000, 1000, 0, s1>>>(); // 10 ms
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  CHECK(take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty(), "running: not delivered");
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  k = take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(k.size() == 1 && k[0].end - k[0].start == 10002000, "ended: 10002000 ns");
  clear();
  k_small<<<100000, 1000, 0, s1>>>();
  CU(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  k = take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(k.size() == 1 && k[0].start == 0 && k[0].end == 0, "forced: incomplete as 0/0");
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  CHECK(take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size() == 1, "and never again");

  // 5. The worker thread requests the device buffer when no one flushes.
  clear();
  k_small<<<1, 1, 0, s1>>>();
  cudaStreamSynchronize(s1);
  usleep(60000);
  pthread_mutex_lock(&mu);
  int other = 0;
  for (size_t i = 0; i < requesters.size(); i++)
    other += requesters[i] != gettid();
  pthread_mutex_unlock(&mu);
  CHECK(other == 1, "one buffer requested by CUPTI's own thread (%d)", other);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);

  // 6. A refused buffer: the record is dropped and counted.
  clear();
  refuse_next = 1;
  k_small<<<1, 1, 0, s1>>>();
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  size_t dropped = 0;
  CU(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
  // The launching thread's API record asked first: it is the one lost.
  CHECK(dropped == 1 && take(CUPTI_ACTIVITY_KIND_RUNTIME).empty() &&
            take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size() == 1,
        "the API record dropped and counted (%zu), the kernel delivered", dropped);

  // 7. A timestamp callback in another unit (3 per ns) scales device times.
  clear();
  CU(cuptiActivityRegisterTimestampCallback(times3), CUPTI_SUCCESS);
  usleep(5000);
  k_small<<<4, 256, 0, s1>>>();
  cudaStreamSynchronize(s1);
  CU(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  k = take(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(k.size() == 1 && k[0].end - k[0].start + 2 >= 3 * 2102 &&
            k[0].end - k[0].start <= 3 * 2102 + 2,
        "duration in the callback's unit: 6306 (%llu)",
        k.size() ? (unsigned long long)(k[0].end - k[0].start) : 0ull);
  uint64_t ts = 0;
  CU(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  CHECK(ts > times3() - 3000000000ull && ts <= times3(), "cuptiGetTimestamp is the callback's");

  CU(cuptiUnsubscribe(h), CUPTI_SUCCESS);
  CU(cuptiSubscribe(&h2, on_cb, NULL), CUPTI_SUCCESS);
  CU(cuptiFinalize(), CUPTI_SUCCESS);
  printf("%s\n", failures ? "FAILED" : "all ok");
  return failures != 0;
}
