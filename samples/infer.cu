// infer.cu — the bundled sample: a toy inference server loop, the kind of
// program gputrace is for. Per request (an NVTX range "request"): copy the
// input from pageable host memory, run embed / attention / mlp kernels,
// copy the logits back, synchronize. Every 4th request leaks its scratch
// buffer, as a server with a bug would. Runs on the CPU stand-in runtime
// (or a real GPU).
//
// usage: infer [requests=20]  expect: alloc=24 free=19 memcpy=41 launch=180 sync=20 nvtx=42
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <vector>

__global__ void embed(const int *tokens, float *hidden, int n) {}
__global__ void attention(float *hidden, const float *weights, int n) {}
__global__ void mlp(float *hidden, const float *weights, float *logits, int n) {}

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "infer: %s failed: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

int main(int argc, char **argv) {
  int requests = argc > 1 ? atoi(argv[1]) : 20;
  const int tokens = 1 << 20, hidden_dim = 1 << 20;
  float *weights, *hidden, *logits;
  int *d_tokens;
  nvtxRangePushA("load_model");
  check(cudaMalloc(&weights, 64u << 20), "cudaMalloc weights");
  check(cudaMalloc(&hidden, hidden_dim * sizeof(float)), "cudaMalloc hidden");
  check(cudaMalloc(&logits, hidden_dim * sizeof(float)), "cudaMalloc logits");
  check(cudaMalloc(&d_tokens, tokens * sizeof(int)), "cudaMalloc tokens");
  std::vector<float> host_weights(16u << 20, 0.5f);
  check(cudaMemcpy(weights, host_weights.data(), host_weights.size() * sizeof(float),
                   cudaMemcpyHostToDevice), "load weights");
  nvtxRangePop();

  std::vector<int> input(tokens, 1);
  std::vector<float> output(hidden_dim);
  for (int r = 0; r < requests; r++) {
    nvtxRangePushA("request");
    float *scratch;
    check(cudaMalloc(&scratch, 1u << 20), "cudaMalloc scratch");
    check(cudaMemcpy(d_tokens, input.data(), tokens * sizeof(int), cudaMemcpyHostToDevice),
          "copy input");
    embed<<<tokens / 256, 256>>>(d_tokens, hidden, tokens);
    for (int layer = 0; layer < 4; layer++) {
      attention<<<hidden_dim / 256, 256>>>(hidden, weights, hidden_dim);
      mlp<<<hidden_dim / 256, 256>>>(hidden, weights, logits, hidden_dim);
    }
    check(cudaMemcpy(output.data(), logits, hidden_dim * sizeof(float), cudaMemcpyDeviceToHost),
          "copy output");
    check(cudaDeviceSynchronize(), "synchronize");
    if (r % 4 != 3)
      check(cudaFree(scratch), "cudaFree scratch");
    nvtxRangePop();
  }
  check(cudaFree(weights), "cudaFree weights");
  check(cudaFree(hidden), "cudaFree hidden");
  check(cudaFree(logits), "cudaFree logits");
  check(cudaFree(d_tokens), "cudaFree tokens");
  printf("infer: served %d requests\n", requests);
  return 0;
}
