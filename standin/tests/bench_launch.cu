// bench_launch.cu — the stand-in with GPUTRACE_STANDIN_TIMELINE=0: every op
// is instant and nothing waits; measures the cost of a launch through each
// entry point (1,000,000 launches each) and fails if it is not small.
//
// Usage: bench_launch [max_ns_per_launch]   (default 250; the goal is well
// under 100 ns, the bound only catches regressions on a loaded machine).
#include <cstdio>
#include <cstdlib>
#include <time.h>

extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
                                          cudaStream_t);

__global__ void empty() {}

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int failures;

static void report(const char *what, double ns, double max_ns) {
  bool ok = ns < max_ns;
  printf("%s %-40s %7.1f ns/launch (bound %.0f)\n", ok ? "ok  " : "FAIL", what, ns, max_ns);
  failures += !ok;
}

int main(int argc, char **argv) {
  double max_ns = argc > 1 ? atof(argv[1]) : 250.0;
  const int N = 1000000;
  const char *tl = getenv("GPUTRACE_STANDIN_TIMELINE");
  if (!tl || atoi(tl) != 0) {
    printf("FAIL run with GPUTRACE_STANDIN_TIMELINE=0\n");
    return 1;
  }

  // Timeline off: a one-second kernel is instantly complete.
  empty<<<100000, 1000>>>();
  double t0 = now_ns();
  cudaError_t q = cudaStreamQuery(0);
  cudaDeviceSynchronize();
  double sync_ms = (now_ns() - t0) / 1e6;
  printf("%s query=%d, synchronize took %.3f ms\n",
         q == cudaSuccess && sync_ms < 5 ? "ok  " : "FAIL", (int)q, sync_ms);
  failures += !(q == cudaSuccess && sync_ms < 5);

  for (int i = 0; i < 10000; i++) // warm up caches and the per-thread state
    empty<<<1, 1>>>();
  t0 = now_ns();
  for (int i = 0; i < N; i++)
    empty<<<1000, 256>>>();
  report("<<<>>> (__cudaLaunchKernel)", (now_ns() - t0) / N, max_ns);

  cudaKernel_t k;
  cudaGetKernel(&k, (const void *)empty);
  t0 = now_ns();
  for (int i = 0; i < N; i++)
    __cudaLaunchKernel(k, dim3(1000), dim3(256), NULL, 0, 0);
  report("__cudaLaunchKernel(handle)", (now_ns() - t0) / N, max_ns);

  t0 = now_ns();
  for (int i = 0; i < N; i++)
    cudaLaunchKernel((const void *)empty, dim3(1000), dim3(256), NULL, 0, 0);
  report("cudaLaunchKernel(stub)", (now_ns() - t0) / N, max_ns);

  cudaError_t e = cudaGetLastError();
  printf("%s last error %d\n", e == cudaSuccess ? "ok  " : "FAIL", (int)e);
  failures += e != cudaSuccess;
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
