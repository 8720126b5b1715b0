// devtime.cu — device-timing scenarios for tests/e2e/test_devtime.py, one
// per argv[1]. Each prints one deterministic line (no times), so stdout is
// the same traced or not; the test checks the DEVICE records against the
// stand-in's simulated durations (docs/standin.md) set through its env knobs.
// A 200 ms kernel queued first keeps a stream busy, so that what follows
// starts exactly when the previous work ends, however slowly the host runs.
//   kernels  the busy kernel, 5 kernels of known sizes and one between two
//            events of the app's own
//   copies   4 MiB pinned async HtoD/DtoH and a memset on a busy stream;
//            blocking pageable and pinned copies; a round trip check
//   sample   2 threads x 40 launches, each on its own stream
//   exhaust  the busy kernel and 19 more launches on one stream
//   graph    3 graph launches on a busy stream
//   destroy  3 launches on a stream destroyed before they complete
//   streams  legacy, cudaStreamLegacy, cudaStreamPerThread, a blocking stream
//            followed by the legacy stream, a synchronous copy
//   capture  5 launches on a user stream, 3 on the legacy stream
//   reset    the busy kernel and 2 launches, cudaDeviceReset before they
//            complete, 2 more launches
//   fork     1 launch; the child 2 launches and exit(); the parent 1 more
//   errors   a failed launch left pending, a launch, the error read back
//   maps     whether libcupti is mapped in the process
//   idle     40 launches on a stream, each waited for: each is queued on an
//            idle stream
//   memsets  600 launches on a stream, each followed by 200 memsets of 4
//            bytes and a synchronization: timing the memsets costs the
//            thread far more than timing the launches
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void work(int *p) {
  if (p) p[threadIdx.x] = 1;
}
__global__ void busy(int *p) {
  if (p) p[0] = 2;
}

static int failures = 0;
#define CK(x) check(#x, (x))
static void check(const char *what, cudaError_t e) {
  if (e != cudaSuccess) {
    printf("%s -> %d\n", what, (int)e);
    failures++;
  }
}

static void keep_busy(cudaStream_t s) { busy<<<2000000, 1024, 0, s>>>(nullptr); } // 204.8 ms

static void kernels() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  keep_busy(s);
  const int grids[] = {1000, 2000, 4000, 8000, 16000};
  for (int g : grids) work<<<g, 256, 0, s>>>(nullptr);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a, s));
  work<<<3000, 256, 0, s>>>(nullptr);
  CK(cudaEventRecord(b, s));
  CK(cudaStreamSynchronize(s));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  printf("devtime kernels: app events %.4f ms\n", ms);
}

static void copies() {
  const size_t n = 4 << 20;
  char *pinned = nullptr, *dev = nullptr, *page = (char *)malloc(n);
  CK(cudaMallocHost(&pinned, n));
  CK(cudaMalloc(&dev, n));
  memset(pinned, 1, n);
  memset(page, 2, n);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  keep_busy(s);
  CK(cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, s));
  CK(cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s));
  CK(cudaMemsetAsync(dev, 0, n, s));
  CK(cudaStreamSynchronize(s));
  for (size_t i = 0; i < n; i++) page[i] = (char)(i * 7);
  CK(cudaMemcpy(dev, page, n, cudaMemcpyHostToDevice));
  memset(page, 0, n);
  CK(cudaMemcpy(page, dev, n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice));
  int bad = 0;
  for (size_t i = 0; i < n; i++) bad += page[i] != (char)(i * 7);
  printf("devtime copies: round trip %s\n", bad ? "BAD" : "ok");
}

static void *sample_thread(void *) {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (int i = 0; i < 40; i++) work<<<100, 64, 0, s>>>(nullptr);
  CK(cudaStreamSynchronize(s));
  return nullptr;
}

static void sample() {
  pthread_t t[2];
  for (auto &th : t) pthread_create(&th, nullptr, sample_thread, nullptr);
  for (auto &th : t) pthread_join(th, nullptr);
  printf("devtime sample: 2 x 40 launches\n");
}

static void exhaust() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  keep_busy(s);
  for (int i = 0; i < 19; i++) work<<<1, 32, 0, s>>>(nullptr);
  CK(cudaStreamSynchronize(s));
  printf("devtime exhaust: 20 launches\n");
}

static void graph() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaGraph_t g;
  cudaGraphExec_t exec;
  CK(cudaGraphCreate(&g, 0));
  CK(cudaGraphInstantiate(&exec, g, 0));
  keep_busy(s);
  for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(g));
  printf("devtime graph: 3 launches\n");
}

static void destroy() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (int i = 0; i < 3; i++) work<<<40000, 256, 0, s>>>(nullptr); // 1 ms each
  CK(cudaStreamDestroy(s));
  CK(cudaDeviceSynchronize());
  printf("devtime destroy: 3 launches\n");
}

static void streams() {
  work<<<1000, 256>>>(nullptr);
  work<<<1000, 256, 0, cudaStreamLegacy>>>(nullptr);
  work<<<1000, 256, 0, cudaStreamPerThread>>>(nullptr);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  work<<<40000, 256, 0, s>>>(nullptr);                // 1 ms on a blocking stream
  work<<<2000, 256, 0, cudaStreamLegacy>>>(nullptr);  // waits for it
  char *d = nullptr, h[4096] = {0};
  CK(cudaMalloc(&d, sizeof h));
  CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  printf("devtime streams: ok\n");
}

static void capture() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (int i = 0; i < 5; i++) work<<<10, 32, 0, s>>>(nullptr);
  for (int i = 0; i < 3; i++) work<<<10, 32, 0, cudaStreamLegacy>>>(nullptr);
  CK(cudaDeviceSynchronize());
  printf("devtime capture: 8 launches\n");
}

static void reset() {
  keep_busy(0);
  for (int i = 0; i < 2; i++) work<<<1000, 256>>>(nullptr);
  CK(cudaDeviceReset()); // waits for the work, then destroys every event
  for (int i = 0; i < 2; i++) work<<<1000, 256>>>(nullptr);
  CK(cudaDeviceSynchronize());
  printf("devtime reset: 5 launches\n");
}

static void forked() {
  work<<<1000, 256>>>(nullptr);
  CK(cudaDeviceSynchronize());
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 2; i++) work<<<2000, 256>>>(nullptr);
    CK(cudaDeviceSynchronize());
    exit(failures ? 1 : 0); // exit(), not _exit(): the child's exit handlers run
  }
  int status = 0;
  waitpid(pid, &status, 0);
  work<<<1000, 256>>>(nullptr);
  CK(cudaDeviceSynchronize());
  printf("devtime fork: child status %d\n", status);
}

static void errors() {
  work<<<0, 1>>>(nullptr); // invalid configuration: error 9, left pending
  errno = 0;
  work<<<1, 1>>>(nullptr); // runs; the pending error must survive it
  int err_errno = errno;
  int e1 = (int)cudaGetLastError();
  int e2 = (int)cudaGetLastError();
  work<<<1, 1>>>(nullptr);
  CK(cudaDeviceSynchronize());
  printf("devtime errors: %d %d errno %d\n", e1, e2, err_errno);
}

static void idle() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  for (int i = 0; i < 40; i++) {
    work<<<2000, 256, 0, s>>>(nullptr);
    CK(cudaStreamSynchronize(s));
  }
  printf("devtime idle: 40 launches\n");
}

static void memsets() {
  cudaStream_t s;
  int *dev = nullptr;
  CK(cudaStreamCreate(&s));
  CK(cudaMalloc(&dev, 4));
  for (int i = 0; i < 600; i++) {
    work<<<1, 1, 0, s>>>(nullptr);
    for (int j = 0; j < 200; j++) CK(cudaMemsetAsync(dev, j, 4, s));
    CK(cudaStreamSynchronize(s));
  }
  printf("devtime memsets: 600 launches, 120000 memsets\n");
}

static void maps() {
  work<<<1, 1>>>(nullptr);
  CK(cudaDeviceSynchronize());
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024];
  int cupti = 0;
  while (f && fgets(line, sizeof line, f)) cupti |= strstr(line, "libcupti") != nullptr;
  if (f) fclose(f);
  printf("devtime maps: libcupti %s\n", cupti ? "loaded" : "not loaded");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "kernels";
  static const struct {
    const char *name;
    void (*fn)();
  } modes[] = {{"kernels", kernels}, {"copies", copies},   {"sample", sample},
               {"exhaust", exhaust}, {"graph", graph},     {"destroy", destroy},
               {"streams", streams}, {"capture", capture}, {"reset", reset},
               {"fork", forked},     {"errors", errors},   {"maps", maps},
               {"idle", idle},       {"memsets", memsets}};
  for (auto &m : modes)
    if (strcmp(m.name, mode) == 0) {
      m.fn();
      return failures ? 1 : 0;
    }
  fprintf(stderr, "devtime: unknown mode %s\n", mode);
  return 2;
}
