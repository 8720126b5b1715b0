// flight.cu — a server-shaped loop with a known sequence, for the flight
// recorder (e2e/test_flight_recorder.py): one block allocated at start and
// never freed (EARLY_BYTES, long before the window), argv[1] rounds
// (default 200000) of three launches (k_embed, k_attend, k_sample, in that
// order) with an allocation freed every round, one more block never freed
// (LATE_BYTES) in the last round, then "flight: rounds N launches M
// leaked_bytes B" and "flight: paused": it waits for a line on stdin (the
// test takes its snapshot) before it exits: a line "_exit" ends it through
// _exit(), "abort" through abort() (SIGABRT). With argv[2] = G > 0, a graph
// of one k_graph launch is captured at start and launched after every G
// rounds (its making long before the window: a snapshot must repeat it).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <cuda_runtime.h>

#define EARLY_BYTES (3u << 20)
#define LATE_BYTES (5u << 20)

__global__ void k_embed(int i) {}
__global__ void k_attend(int i) {}
__global__ void k_sample(int i) {}
__global__ void k_graph(int i) {}

static cudaGraphExec_t make_graph(cudaStream_t s) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  k_graph<<<1, 32, 0, s>>>(0);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&exec, g, 0);
  return exec;
}

static void *hold_early(void) {
  void *p = nullptr;
  cudaMalloc(&p, EARLY_BYTES); // the early leak (EARLY_LINE in the test)
  return p;
}

static void *hold_late(void) {
  void *p = nullptr;
  cudaMalloc(&p, LATE_BYTES); // the late leak (LATE_LINE in the test)
  return p;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200000, bad = 0, graph_launches = 0;
  int graph_every = argc > 2 ? atoi(argv[2]) : 0;
  bad += hold_early() == nullptr;
  cudaStream_t s = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (graph_every > 0) {
    bad += cudaStreamCreate(&s) != cudaSuccess;
    bad += (exec = make_graph(s)) == nullptr;
  }
  for (int i = 0; i < rounds; i++) {
    void *scratch = nullptr;
    bad += cudaMalloc(&scratch, 4096) != cudaSuccess;
    k_embed<<<1, 32>>>(i);
    k_attend<<<1, 32>>>(i);
    k_sample<<<1, 32>>>(i);
    bad += cudaFree(scratch) != cudaSuccess;
    if (graph_every > 0 && (i + 1) % graph_every == 0) {
      bad += cudaGraphLaunch(exec, s) != cudaSuccess;
      graph_launches++;
    }
    if (i == rounds - 1)
      bad += hold_late() == nullptr;
  }
  bad += cudaDeviceSynchronize() != cudaSuccess;
  printf("flight: rounds %d launches %d graph_launches %d leaked_bytes %u\n", rounds,
         3 * rounds, graph_launches, EARLY_BYTES + LATE_BYTES);
  printf("flight: paused\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin))
    return 2;
  if (!strncmp(line, "_exit", 5))
    _exit(bad ? 1 : 0);
  if (!strncmp(line, "abort", 5))
    abort();
  return bad ? 1 : 0;
}
