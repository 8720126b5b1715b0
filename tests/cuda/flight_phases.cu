// flight_phases.cu — three phases of a known launch sequence, for gputrace
// start/stop (e2e/test_flight_start.py): one block allocated at start and
// never freed (EARLY_BYTES), then phases 1, 2, 3 of argv[1] rounds each
// (default 1000) of three launches (k_embed, k_attend, k_sample) with an
// allocation freed every round; phase 2 also allocates one block never
// freed (MID_BYTES). After each phase it prints "phase: P launches M
// first_corr C" (C: the phase's first launch, counting from 1) and
// "phase: paused", and waits for a line on stdin. Every phase runs from
// the same call site, so its stacks are the earlier phases'. With argv[2]
// = 1, a graph of one k_graph launch is captured before phase 1 and
// launched once at the end of every phase (then first_corr is not
// counted: the graph's launches take correlation ids too).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define EARLY_BYTES (3u << 20)
#define MID_BYTES (7u << 20)

__global__ void k_embed(int i) {}
__global__ void k_attend(int i) {}
__global__ void k_sample(int i) {}
__global__ void k_graph(int i) {}

static cudaGraphExec_t make_graph(cudaStream_t s) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); // GRAPH_LINE in the test
  k_graph<<<1, 32, 0, s>>>(0);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&exec, g, 0);
  return exec;
}

static int run_phase(int phase, int rounds) {
  int bad = 0;
  for (int i = 0; i < rounds; i++) {
    void *scratch = nullptr;
    bad += cudaMalloc(&scratch, 4096) != cudaSuccess;
    k_embed<<<1, 32>>>(i);
    k_attend<<<1, 32>>>(i);
    k_sample<<<1, 32>>>(i);
    bad += cudaFree(scratch) != cudaSuccess;
  }
  void *held = nullptr;
  if (phase == 2)
    bad += cudaMalloc(&held, MID_BYTES) != cudaSuccess; // the mid leak (MID_LINE)
  return bad + (cudaDeviceSynchronize() != cudaSuccess);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000, bad = 0;
  int graph = argc > 2 && atoi(argv[2]) == 1;
  void *early = nullptr;
  bad += cudaMalloc(&early, EARLY_BYTES) != cudaSuccess;
  cudaStream_t s = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    bad += cudaStreamCreate(&s) != cudaSuccess;
    bad += (exec = make_graph(s)) == nullptr;
  }
  for (int phase = 1; phase <= 3; phase++) {
    bad += run_phase(phase, rounds);
    if (graph)
      bad += cudaGraphLaunch(exec, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess;
    printf("phase: %d launches %d first_corr %d\n", phase, 3 * rounds,
           3 * rounds * (phase - 1) + 1);
    printf("phase: paused\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
      return 2;
  }
  return bad ? 1 : 0;
}
