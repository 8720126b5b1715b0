// server.cu — an LLM inference server in miniature: worker
// threads that wait for requests, a compute and a copy stream per worker, a
// decode step captured per worker as a CUDA graph and replayed per request,
// NVTX request ranges, a leak and pageable copies. Keep the command line and
// the lines named below stable: tests check them.
// Usage: server [--workers N] [--requests N] [--hold MS] [--stagger 0|1]
//               [--warmup N] [--replays N] [--weights MIB] [--leak-every N]
//               [--legacy-every N] [--linger MS] [--gate 0|1]
//   --workers N      worker threads (default 3)
//   --requests N     requests each worker serves (default 35)
//   --hold MS        idle gap before each request: the worker waits for work
//                    blocked in pthread_cond_timedwait, outside CUDA (0)
//   --stagger 1      worker w first waits w * hold / workers (default 0)
//   --warmup N       N rounds of one request of each type per worker before
//                    serving, outside any range, keeping nothing (default 0)
//   --replays N      decode graph launches per req:chat (default 16)
//   --weights MIB    model weights allocated at start-up, freed at teardown
//                    in main (default 64; load_weights, line 68)
//   --leak-every N   request i of a worker (from 0) with i % N == N-1 is a
//                    req:embed (default 5)
//   --legacy-every N request i with i % N == N-1 is a req:legacy, which wins
//                    over req:embed (default 7); the rest are req:chat
//   --linger MS      sleep after printing, before exiting (a scrape's time)
//
// Request types (each an NVTX push range on the worker's thread):
//   req:chat    nested "prefill" (cudaMallocAsync of a 1 MiB KV block on
//               compute, 256 KiB pinned H2D copy on the copy stream, an
//               event wait, 2 `prefill` kernels on compute) and nested
//               "decode" (--replays graph launches on compute; the graph
//               holds 4 kernels: attn, mlp, norm, sample), then an event
//               wait, a 64 KiB pinned D2H copy on the copy stream,
//               cudaFreeAsync of the KV block and both streams synchronized.
//   req:embed   grows the embedding cache: a 2 MiB cudaMalloc never freed
//               (embed_cache_grow, line 73), synchronous pinned H2D copies
//               of 2 MiB into it and 8 MiB into the worker's input (no kernel).
//   req:legacy  an 8 MiB pageable synchronous cudaMemcpy H2D (serve_legacy,
//               line 146) and one D2H (line 147); nothing else.
// Streams are non-blocking, the graph captured in thread-local mode. Each
// type's time is one kind of work's whatever the other workers do: kernels
// (chat), blocking copies (embed, legacy). Prints, after every worker joined:
//   "server: workers W requests R chat C embed E legacy L leaked_bytes B"
// (B = E * 2 MiB) and exits 1 if a call failed.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_call.h"

__global__ void prefill(float *x) {}
__global__ void attn(float *x) {}
__global__ void mlp(float *x) {}
__global__ void norm(float *x) {}
__global__ void sample(float *x) {}

static int g_workers = 3, g_requests = 35, g_hold_ms = 0, g_replays = 16, g_weights_mib = 64;
static int g_leak_every = 5, g_legacy_every = 7, g_stagger = 0, g_linger_ms = 0, g_gate = 0;
void *g_cache[1 << 16]; // keeps the leaked blocks reachable (not static: kept)
static int g_cached, g_warmup = 0;
static __thread int tl_warming;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void *load_weights(size_t bytes) {
  void *w = NULL;
  return cudaMalloc(&w, bytes) == cudaSuccess ? w : NULL;
}

__attribute__((noinline)) static void *embed_cache_grow(size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes) != cudaSuccess)
    return NULL;
  pthread_mutex_lock(&g_mu);
  if (g_cached < (int)(sizeof(g_cache) / sizeof(g_cache[0])) && !tl_warming)
    g_cache[g_cached++] = p;
  pthread_mutex_unlock(&g_mu);
  return p;
}

// Ranges, except while warming up (--warmup: requests outside any range).
static void push(const char *name) {
  if (!tl_warming)
    nvtxRangePushA(name);
}
static void pop(void) {
  if (!tl_warming)
    nvtxRangePop();
}

struct worker {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  cudaStream_t compute, copy;
  cudaEvent_t ev;
  cudaGraphExec_t decode_step;
  float *d_in, *d_out, *h_pinned, *h_pageable;
  int index, chat, embed, legacy, bad;
};

// Waits for the next request: blocked outside CUDA, as a server's worker
// waits on its queue; nobody signals, the request "arrives" after hold ms.
static void wait_for_request(struct worker *w, long us) {
  if (us <= 0)
    return;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_nsec += (us % 1000000) * 1000L;
  t.tv_sec += us / 1000000 + t.tv_nsec / 1000000000L;
  t.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&w->mu);
  while (pthread_cond_timedwait(&w->cv, &w->mu, &t) == 0) {
  }
  pthread_mutex_unlock(&w->mu);
}

static int serve_chat(struct worker *w) {
  void *kv = NULL;
  push("req:chat");
  push("prefill");
  CHECK(cudaMallocAsync(&kv, 1 << 20, w->compute));
  CHECK(cudaMemcpyAsync(w->d_in, w->h_pinned, 256 << 10, cudaMemcpyHostToDevice, w->copy));
  CHECK(cudaEventRecord(w->ev, w->copy));
  CHECK(cudaStreamWaitEvent(w->compute, w->ev, 0));
  for (int k = 0; k < 2; k++)
    prefill<<<4096, 256, 0, w->compute>>>(w->d_in);
  pop();
  push("decode");
  for (int r = 0; r < g_replays; r++)
    CHECK(cudaGraphLaunch(w->decode_step, w->compute));
  pop();
  CHECK(cudaEventRecord(w->ev, w->compute));
  CHECK(cudaStreamWaitEvent(w->copy, w->ev, 0));
  CHECK(cudaMemcpyAsync(w->h_pinned, w->d_out, 64 << 10, cudaMemcpyDeviceToHost, w->copy));
  CHECK(cudaFreeAsync(kv, w->compute));
  CHECK(cudaStreamSynchronize(w->copy));
  CHECK(cudaStreamSynchronize(w->compute));
  pop();
  return 0;
}

static int serve_legacy(struct worker *w) {
  push("req:legacy");
  CHECK(cudaMemcpy(w->d_in, w->h_pageable, 8 << 20, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(w->h_pageable, w->d_out, 8 << 20, cudaMemcpyDeviceToHost));
  pop();
  return 0;
}

static int serve_embed(struct worker *w) {
  push("req:embed");
  float *cache = (float *)embed_cache_grow(2 << 20);
  if (cache == NULL)
    return 1;
  CHECK(cudaMemcpy(cache, w->h_pinned, 2 << 20, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(w->d_in, w->h_pinned, 8 << 20, cudaMemcpyHostToDevice));
  if (tl_warming) /* a warm-up request keeps nothing */
    CHECK(cudaFree(cache));
  pop();
  return 0;
}

static int capture_decode(struct worker *w) {
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(w->compute, cudaStreamCaptureModeThreadLocal));
  attn<<<8192, 256, 0, w->compute>>>(w->d_in); // ~0.2 ms each on the stand-in
  mlp<<<8192, 256, 0, w->compute>>>(w->d_in);
  norm<<<1024, 256, 0, w->compute>>>(w->d_in);
  sample<<<16, 256, 0, w->compute>>>(w->d_out);
  CHECK(cudaStreamEndCapture(w->compute, &g));
  CHECK(cudaGraphInstantiate(&w->decode_step, g, 0));
  CHECK(cudaGraphDestroy(g));
  return 0;
}

static int worker_setup(struct worker *w) {
  CHECK(cudaStreamCreateWithFlags(&w->compute, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&w->copy, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&w->ev, cudaEventDisableTiming));
  CHECK(cudaMalloc(&w->d_in, 8 << 20));
  CHECK(cudaMalloc(&w->d_out, 8 << 20));
  CHECK(cudaMallocHost(&w->h_pinned, 8 << 20));
  w->h_pageable = (float *)calloc(1, 8 << 20);
  if (w->h_pageable == NULL)
    return 1;
  return capture_decode(w);
}

static int worker_teardown(struct worker *w) {
  CHECK(cudaGraphExecDestroy(w->decode_step));
  CHECK(cudaFree(w->d_in));
  CHECK(cudaFree(w->d_out));
  CHECK(cudaFreeHost(w->h_pinned));
  CHECK(cudaEventDestroy(w->ev));
  CHECK(cudaStreamDestroy(w->compute));
  CHECK(cudaStreamDestroy(w->copy));
  free(w->h_pageable);
  return 0;
}

static void *worker_main(void *arg) {
  struct worker *w = (struct worker *)arg;
  w->bad = worker_setup(w);
  tl_warming = 1; /* each type once per round, outside any range: call sites warm */
  for (int i = 0; i < g_warmup && !w->bad; i++)
    w->bad = serve_chat(w) || serve_embed(w) || serve_legacy(w);
  tl_warming = 0;
  if (g_stagger) /* so that the workers' requests interleave */
    wait_for_request(w, 1000L * g_hold_ms * w->index / g_workers);
  for (int i = 0; i < g_requests && !w->bad; i++) {
    wait_for_request(w, 1000L * g_hold_ms);
    if (i % g_legacy_every == g_legacy_every - 1)
      w->bad = serve_legacy(w), w->legacy++;
    else if (i % g_leak_every == g_leak_every - 1)
      w->bad = serve_embed(w), w->embed++;
    else
      w->bad = serve_chat(w), w->chat++;
  }
  if (!w->bad)
    w->bad = worker_teardown(w);
  return NULL;
}

// --gate 1 (documented here, not above: tests name the lines above by number):
// after printing and --linger, wait for a line on stdin before exiting, so a
// test scrapes the leaked memory while every process still holds it.
static int parse_args(int argc, char **argv) {
  struct {
    const char *name;
    int *val;
  } opts[] = {{"--workers", &g_workers},       {"--requests", &g_requests},
              {"--hold", &g_hold_ms},          {"--stagger", &g_stagger},
              {"--warmup", &g_warmup},
              {"--replays", &g_replays},
              {"--weights", &g_weights_mib},   {"--leak-every", &g_leak_every},
              {"--legacy-every", &g_legacy_every}, {"--linger", &g_linger_ms},
              {"--gate", &g_gate}};
  for (int a = 1; a < argc; a++) {
    size_t k = 0;
    while (k < sizeof(opts) / sizeof(opts[0]) && strcmp(argv[a], opts[k].name) != 0)
      k++;
    char *end = NULL;
    long v = k < sizeof(opts) / sizeof(opts[0]) && a + 1 < argc ? strtol(argv[a + 1], &end, 10) : -1;
    if (end == NULL || *end != '\0' || v < 0 || v > 100000) {
      fprintf(stderr, "server: bad argument '%s'\n", argv[a]);
      return 1;
    }
    *opts[k].val = (int)v;
    a++;
  }
  if (g_workers < 1 || g_workers > 64 || g_leak_every < 1 || g_legacy_every < 1) {
    fprintf(stderr, "server: --workers 1..64, --leak-every and --legacy-every >= 1\n");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (parse_args(argc, argv))
    return 2;
  void *weights = load_weights((size_t)g_weights_mib << 20);
  if (weights == NULL && g_weights_mib > 0)
    return 1;
  struct worker *w = (struct worker *)calloc(g_workers, sizeof(*w));
  for (int i = 0; i < g_workers; i++) {
    pthread_mutex_init(&w[i].mu, NULL);
    pthread_cond_init(&w[i].cv, NULL);
    w[i].index = i;
    pthread_create(&w[i].th, NULL, worker_main, &w[i]);
  }
  int bad = 0, chat = 0, embed = 0, legacy = 0;
  for (int i = 0; i < g_workers; i++) {
    pthread_join(w[i].th, NULL);
    bad += w[i].bad, chat += w[i].chat, embed += w[i].embed, legacy += w[i].legacy;
  }
  CHECK(cudaFree(weights));
  printf("server: workers %d requests %d chat %d embed %d legacy %d leaked_bytes %lld\n",
         g_workers, g_workers * g_requests, chat, embed, legacy, (long long)embed * (2 << 20));
  fflush(stdout);
  free(w);
  struct timespec linger = {g_linger_ms / 1000, (long)(g_linger_ms % 1000) * 1000000L};
  nanosleep(&linger, NULL);
  char line[16];
  if (g_gate && !fgets(line, sizeof line, stdin))
    return 2;
  return bad ? 1 : 0;
}
