// oom.cu — a program that runs out of device memory, for the flight
// recorder's trigger and the report's out_of_memory (e2e/test_oom.py).
// Blocks of three kinds from three functions (weights WEIGHTS_BYTES,
// kv KV_BYTES, scratch SCRATCH_BYTES, in that order) are allocated in
// rounds, never freed, until a cudaMalloc fails; argv[1] = R retries the
// failing request R more times (a storm), argv[2] = G milliseconds apart
// (default 0). It prints "oom: held SITE BYTES"
// for each site, "oom: failed SITE asked BYTES" and "oom: paused", then
// waits for a line on stdin (the collector catches up) before it exits.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <time.h>

#define WEIGHTS_BYTES (3u << 20)
#define KV_BYTES (2u << 20)
#define SCRATCH_BYTES (1u << 20)

static cudaError_t alloc_weights(void **p) {
  return cudaMalloc(p, WEIGHTS_BYTES); // WEIGHTS_LINE
}

static cudaError_t alloc_kv(void **p) {
  return cudaMalloc(p, KV_BYTES); // KV_LINE
}

static cudaError_t alloc_scratch(void **p) {
  return cudaMalloc(p, SCRATCH_BYTES); // SCRATCH_LINE
}

int main(int argc, char **argv) {
  int retries = argc > 1 ? atoi(argv[1]) : 0, gap_ms = argc > 2 ? atoi(argv[2]) : 0;
  const struct timespec gap = {gap_ms / 1000, (long)(gap_ms % 1000) * 1000000};
  cudaError_t (*const sites[3])(void **) = {alloc_weights, alloc_kv, alloc_scratch};
  const char *names[3] = {"weights", "kv", "scratch"};
  const unsigned long long sizes[3] = {WEIGHTS_BYTES, KV_BYTES, SCRATCH_BYTES};
  unsigned long long held[3] = {0, 0, 0};
  int failed = -1;
  cudaError_t err = cudaSuccess;
  for (int i = 0; failed < 0 && i < 100000; i++) {
    void *p = nullptr;
    if ((err = sites[i % 3](&p)) == cudaSuccess)
      held[i % 3] += sizes[i % 3];
    else
      failed = i % 3;
  }
  if (failed < 0 || err != cudaErrorMemoryAllocation)
    return 1;
  for (int r = 0; r < retries; r++) {
    void *p = nullptr;
    if (gap_ms > 0)
      nanosleep(&gap, nullptr);
    if (sites[failed](&p) != cudaErrorMemoryAllocation)
      return 1;
  }
  for (int s = 0; s < 3; s++)
    printf("oom: held %s %llu\n", names[s], held[s]);
  printf("oom: failed %s asked %llu\n", names[failed], sizes[failed]);
  printf("oom: paused\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin))
    return 2;
  return 0;
}
