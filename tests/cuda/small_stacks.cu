// small_stacks.cu — every hook family of the shim on small stacks, as
// coroutine libraries and signal handlers give them (tests/e2e/test_small_stacks.py).
//
//   small_stacks measure   on a 64 KiB makecontext stack painted with a
//                          pattern: the process's first CUDA call (memory,
//                          printed as "startup BYTES": the shim's start-up
//                          runs in it), then, after a warm-up on the main
//                          stack, each family once; prints "FAMILY BYTES"
//                          (the deepest use of the stack), then "measure: done"
//   small_stacks run       each family 50 times on an 8 KiB makecontext
//                          stack, then 50 times from a SIGUSR1 handler on a
//                          sigaltstack of 4 KiB beyond the kernel's signal
//                          frame (AT_MINSIGSTKSZ), whose pages around it are
//                          PROT_NONE (an overflow faults, never lands in the
//                          heap); prints "run: F failures" and exits F
//
// The families: memory (cudaMalloc/Free, cudaMallocHost/FreeHost), copy
// (cudaMemcpy, cudaMemcpyAsync, cudaMemset), launch (a kernel <<<>>>),
// sync (stream, device, event), objects (streams and events made and
// destroyed), graph (a stream capture, instantiated and launched), driver
// (cuMemAlloc_v2/cuMemFree_v2 found with dlsym), nvtx (push/pop).
// Warm-up: the first call of each family runs on the main stack (the
// process's start-up, and NVTX's injection load, happen there).
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void tick(int *p) {
  if (p)
    *p += 1;
}

static int failures;
static void check(cudaError_t e) {
  if (e != cudaSuccess)
    failures++;
}

typedef int (*cu_alloc_t)(unsigned long long *, size_t);
typedef int (*cu_free_t)(unsigned long long);
static cu_alloc_t cu_alloc;
static cu_free_t cu_free;
static cudaStream_t g_stream;
static char g_host[4096];

static void fam_memory() {
  void *d = nullptr, *h = nullptr;
  check(cudaMalloc(&d, 1 << 20));
  check(cudaFree(d));
  check(cudaMallocHost(&h, 4096));
  check(cudaFreeHost(h));
}
static void fam_copy() {
  void *d = nullptr;
  check(cudaMalloc(&d, sizeof g_host));
  check(cudaMemcpy(d, g_host, sizeof g_host, cudaMemcpyHostToDevice));
  check(cudaMemcpyAsync(g_host, d, sizeof g_host, cudaMemcpyDeviceToHost, g_stream));
  check(cudaMemset(d, 0, sizeof g_host));
  check(cudaStreamSynchronize(g_stream));
  check(cudaFree(d));
}
static void fam_launch() {
  tick<<<1, 1, 0, g_stream>>>(nullptr);
  check(cudaGetLastError());
}
static void fam_sync() {
  cudaEvent_t e;
  check(cudaEventCreate(&e));
  check(cudaEventRecord(e, g_stream));
  check(cudaEventSynchronize(e));
  check(cudaStreamSynchronize(g_stream));
  check(cudaDeviceSynchronize());
  check(cudaEventDestroy(e));
}
static void fam_objects() {
  cudaStream_t s;
  cudaEvent_t e;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  check(cudaEventDestroy(e));
  check(cudaStreamDestroy(s));
}
static void fam_graph() {
  cudaGraph_t g;
  cudaGraphExec_t x;
  check(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
  tick<<<1, 1, 0, g_stream>>>(nullptr);
  check(cudaStreamEndCapture(g_stream, &g));
  check(cudaGraphInstantiate(&x, g, 0));
  check(cudaGraphLaunch(x, g_stream));
  check(cudaStreamSynchronize(g_stream));
  check(cudaGraphExecDestroy(x));
  check(cudaGraphDestroy(g));
}
static void fam_driver() {
  unsigned long long d = 0;
  if (!cu_alloc || cu_alloc(&d, 1 << 16) != 0 || cu_free(d) != 0)
    failures++;
}
static void fam_nvtx() {
  nvtxRangePushA("small");
  nvtxRangePop();
}

struct family {
  const char *name;
  void (*fn)();
};
static const family k_families[] = {
    {"memory", fam_memory}, {"copy", fam_copy},       {"launch", fam_launch},
    {"sync", fam_sync},     {"objects", fam_objects}, {"graph", fam_graph},
    {"driver", fam_driver}, {"nvtx", fam_nvtx},
};
static const int k_nfamilies = sizeof k_families / sizeof k_families[0];

// ---- coroutines ----

static ucontext_t g_main_ctx, g_co_ctx;
static void (*g_co_fn)();
static int g_co_reps;

static void co_body() {
  for (int i = 0; i < g_co_reps; i++)
    g_co_fn();
}

// Runs fn reps times on the stack [stack, stack + size).
static void on_stack(void *stack, size_t size, void (*fn)(), int reps) {
  g_co_fn = fn;
  g_co_reps = reps;
  getcontext(&g_co_ctx);
  g_co_ctx.uc_stack.ss_sp = stack;
  g_co_ctx.uc_stack.ss_size = size;
  g_co_ctx.uc_link = &g_main_ctx;
  makecontext(&g_co_ctx, co_body, 0);
  swapcontext(&g_main_ctx, &g_co_ctx);
}

// size bytes of stack between two PROT_NONE pages: an overflow faults.
static char *guarded(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *m = (char *)mmap(nullptr, size + 2 * page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return nullptr;
  mprotect(m, page, PROT_NONE);
  mprotect(m + page + size, page, PROT_NONE);
  return m + page;
}

// ---- measure ----

static size_t deepest(const unsigned char *stack, size_t size) {
  size_t i = 0;
  while (i < size && stack[i] == 0xA5)
    i++;
  return size - i;
}

static void warm_up() {
  check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  for (int f = 0; f < k_nfamilies; f++) // on the main stack
    k_families[f].fn();
}

static int measure() {
  const size_t size = 64 << 10;
  unsigned char *stack = (unsigned char *)guarded(size);
  if (!stack)
    return 1;
  memset(stack, 0xA5, size);
  on_stack(stack, size, fam_memory, 1);
  printf("startup %zu\n", deepest(stack, size));
  warm_up();
  for (int f = 0; f < k_nfamilies; f++) {
    memset(stack, 0xA5, size);
    on_stack(stack, size, k_families[f].fn, 1);
    printf("%s %zu\n", k_families[f].name, deepest(stack, size));
  }
  printf("measure: done\n");
  return 0;
}

// ---- run ----

static void on_usr1(int) {
  for (int f = 0; f < k_nfamilies; f++)
    for (int i = 0; i < 50; i++)
      k_families[f].fn();
}

static int run() {
  warm_up();
  // the handler's 4 KiB come after the kernel's signal frame (its size,
  // AT_MINSIGSTKSZ, is 3.3 KiB with AVX-512's state)
  const size_t co_size = 8 << 10,
               alt_size = (getauxval(AT_MINSIGSTKSZ) + (4 << 10) + 4095) & ~4095ul;
  char *co = guarded(co_size), *alt = guarded(alt_size);
  if (!co || !alt)
    return 1;
  for (int f = 0; f < k_nfamilies; f++)
    on_stack(co, co_size, k_families[f].fn, 50);
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = alt;
  ss.ss_size = alt_size;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaltstack(&ss, nullptr) != 0 || sigaction(SIGUSR1, &sa, nullptr) != 0)
    return 1;
  raise(SIGUSR1);
  printf("run: %d failures\n", failures);
  return failures > 100 ? 100 : failures;
}

int main(int argc, char **argv) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda) {
    cu_alloc = (cu_alloc_t)dlsym(cuda, "cuMemAlloc_v2");
    cu_free = (cu_free_t)dlsym(cuda, "cuMemFree_v2");
  }
  if (argc > 1 && strcmp(argv[1], "measure") == 0)
    return measure();
  if (argc > 1 && strcmp(argv[1], "run") == 0)
    return run();
  fprintf(stderr, "usage: small_stacks measure|run\n");
  return 2;
}
