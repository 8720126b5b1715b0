// steady.cu — a steady serving loop for fault tests: argv[1] iterations
// (default 300) of one kernel launch, a synchronize and a 2 ms sleep, then
// "steady: N iterations"; exits 0 if every call succeeded. With argv[2] =
// K, it says "steady: paused" after K iterations and waits for a line on
// stdin before the rest (a test acts on the run at a known point).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

__global__ void tick(int i) {}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 300, bad = 0;
  int pause_at = argc > 2 ? atoi(argv[2]) : -1;
  for (int i = 0; i < n; i++) {
    if (i == pause_at) {
      printf("steady: paused\n");
      fflush(stdout);
      char line[16];
      if (!fgets(line, sizeof line, stdin))
        return 2;
    }
    tick<<<1, 32>>>(i);
    bad += cudaDeviceSynchronize() != cudaSuccess;
    usleep(2000);
  }
  printf("steady: %d iterations\n", n);
  return bad ? 1 : 0;
}
