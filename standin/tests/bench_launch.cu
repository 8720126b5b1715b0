// bench_launch.cu — the stand-in with GPUTRACE_STANDIN_TIMELINE=0: checks
// that every op is instant and nothing waits, and reports the cost of a
// launch through each entry point (1,000,000 launches each).
//
// Usage: bench_launch [max_ns_per_launch]
// As a ctest it runs without a bound (speed belongs to benchmarks, not to
// tests); pass one to make a slow launch an error.
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
  bool ok = max_ns <= 0 || ns < max_ns;
  printf("%s %-40s %7.1f ns/launch\n", ok ? "ok  " : "FAIL", what, ns);
  failures += !ok;
}

int main(int argc, char **argv) {
  double max_ns = argc > 1 ? atof(argv[1]) : 0;
  const int N = 1000000;
  const char *tl = getenv("GPUTRACE_STANDIN_TIMELINE");
  if (!tl || atoi(tl) != 0) {
    printf("FAIL run with GPUTRACE_STANDIN_TIMELINE=0\n");
    return 1;
  }

  // Timeline off: a kernel modelled at 200 s (2e12 threads) is instantly
  // complete; the 1 s bound only separates "waited" from "did not wait".
  empty<<<2000000000, 1000>>>();
  double t0 = now_ns();
  cudaError_t q = cudaStreamQuery(0);
  cudaDeviceSynchronize();
  double sync_ms = (now_ns() - t0) / 1e6;
  bool instant = q == cudaSuccess && sync_ms < 1000;
  printf("%s query=%d, synchronize took %.3f ms\n", instant ? "ok  " : "FAIL", (int)q,
         sync_ms);
  failures += !instant;

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
