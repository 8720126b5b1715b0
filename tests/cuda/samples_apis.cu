// samples_apis.cu — the runtime entry points NVIDIA's cuda-samples need
// beyond the common ones (simpleZeroCopy, simpleOccupancy, simpleAWBarrier,
// simpleIPC): each with its success and error cases, one "label = value"
// line per result (tests/e2e/test_standin_samples_apis.py compares the
// output exactly, untraced and under gputrace record).
//
// `samples_apis child HANDLE` is the second process of the IPC event case
// (the exporting process cannot open its own handle): it opens the parent's
// event from the hex handle, sees the parent's record (not ready, then
// ready after synchronizing), records it itself after a one-second kernel
// and exits; the parent then sees that record.
#include <cuda_runtime.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__global__ void kern(float *p) {
  if (p)
    p[threadIdx.x] = 1.0f;
}

#define SHOW(label, call) printf("%s = %d\n", label, (int)(call))

// A kernel of about `ms` milliseconds at the stand-in's default 0.1 ns per
// thread (grid x 1024 threads).
static void long_kernel(unsigned ms, cudaStream_t s) {
  kern<<<ms * 9766u, 1024, 0, s>>>(NULL);
}

static void hex_of(const cudaIpcEventHandle_t *h, char *out) {
  const unsigned char *b = (const unsigned char *)h;
  for (size_t i = 0; i < sizeof *h; i++)
    sprintf(out + 2 * i, "%02x", b[i]);
}

static int handle_of(const char *hex, cudaIpcEventHandle_t *h) {
  unsigned char *b = (unsigned char *)h;
  if (strlen(hex) != 2 * sizeof *h)
    return -1;
  for (size_t i = 0; i < sizeof *h; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1)
      return -1;
    b[i] = (unsigned char)v;
  }
  return 0;
}

// `samples_apis late HANDLE`: opening the handle of a destroyed event.
static int late(const char *hex) {
  cudaIpcEventHandle_t h;
  cudaEvent_t ev = NULL;
  if (handle_of(hex, &h) != 0)
    return 2;
  SHOW("late child: cudaIpcOpenEventHandle(destroyed exporter)",
       cudaIpcOpenEventHandle(&ev, h));
  return 0;
}

/* A memory handle travels as an event handle's bytes: both are 64. */
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(cudaIpcEventHandle_t), "same size");

static int mem_handle_of(const char *hex, cudaIpcMemHandle_t *h) {
  cudaIpcEventHandle_t raw;
  if (handle_of(hex, &raw) != 0)
    return -1;
  memcpy(h, &raw, sizeof *h);
  return 0;
}

/* `samples_apis memchild HANDLE`: the parent's 1 MiB of 0x5a, mapped here
 * (simpleIPC's children do this), its first page set to 0xa5. */
static int mem_child(const char *hex) {
  cudaIpcMemHandle_t h;
  unsigned char *d = NULL, b[2] = {0, 0};
  if (mem_handle_of(hex, &h) != 0)
    return 2;
  SHOW("memory child: cudaIpcOpenMemHandle",
       cudaIpcOpenMemHandle((void **)&d, h, cudaIpcMemLazyEnablePeerAccess));
  SHOW("memory child: cudaMemcpy(2 bytes)", cudaMemcpy(b, d, 2, cudaMemcpyDeviceToHost));
  printf("memory child: bytes %02x %02x\n", b[0], b[1]);
  SHOW("memory child: cudaMemset(first page, 0xa5)", cudaMemset(d, 0xa5, 4096));
  SHOW("memory child: cudaDeviceSynchronize", cudaDeviceSynchronize());
  SHOW("memory child: cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(d));
  return 0;
}

/* `samples_apis memgone HANDLE`: the handle of an allocation freed since. */
static int mem_gone(const char *hex) {
  cudaIpcMemHandle_t h;
  void *d = NULL;
  if (mem_handle_of(hex, &h) != 0)
    return 2;
  SHOW("late memory child: cudaIpcOpenMemHandle(freed)", cudaIpcOpenMemHandle(&d, h, 0));
  return 0;
}

static int child(const char *hex) {
  cudaIpcEventHandle_t h;
  cudaEvent_t ev = NULL;
  if (handle_of(hex, &h) != 0)
    return 2;
  SHOW("child: cudaIpcOpenEventHandle", cudaIpcOpenEventHandle(&ev, h));
  SHOW("child: cudaEventQuery before the parent's kernel ends", cudaEventQuery(ev));
  SHOW("child: cudaEventSynchronize", cudaEventSynchronize(ev));
  SHOW("child: cudaEventQuery after", cudaEventQuery(ev));
  float ms;
  SHOW("child: cudaEventElapsedTime", cudaEventElapsedTime(&ms, ev, ev));
  cudaEvent_t timed;
  cudaEventCreate(&timed);
  cudaEventRecord(timed, 0);
  SHOW("child: cudaEventElapsedTime(timed, opened)",
       cudaEventElapsedTime(&ms, timed, ev));
  cudaIpcEventHandle_t again;
  SHOW("child: cudaIpcGetEventHandle(opened)", cudaIpcGetEventHandle(&again, ev));
  cudaEventDestroy(timed);
  long_kernel(1000, 0);
  SHOW("child: cudaEventRecord after a 1 s kernel", cudaEventRecord(ev, 0));
  SHOW("child: cudaEventDestroy", cudaEventDestroy(ev));
  return 0;
}

static int zero_copy(void) {
  void *h = NULL, *h2 = NULL, *h3 = NULL, *dev = NULL, *d = NULL;
  SHOW("cudaHostAlloc(Mapped)", cudaHostAlloc(&h, 4096, cudaHostAllocMapped));
  SHOW("cudaHostGetDevicePointer(mapped)", cudaHostGetDevicePointer(&d, h, 0));
  printf("device pointer is the host pointer = %d\n", d == h);
  SHOW("cudaHostGetDevicePointer(mapped + 100)",
       cudaHostGetDevicePointer(&d, (char *)h + 100, 0));
  printf("interior device pointer offset = %ld\n", (long)((char *)d - (char *)h));
  SHOW("cudaHostGetDevicePointer(flags 1)", cudaHostGetDevicePointer(&d, h, 1));
  SHOW("cudaHostGetDevicePointer(NULL out)", cudaHostGetDevicePointer(NULL, h, 0));
  SHOW("cudaHostAlloc(Default)", cudaHostAlloc(&h2, 4096, cudaHostAllocDefault));
  SHOW("cudaHostGetDevicePointer(unmapped cudaHostAlloc)",
       cudaHostGetDevicePointer(&d, h2, 0));
  SHOW("cudaMallocHost", cudaMallocHost(&h3, 4096));
  SHOW("cudaHostGetDevicePointer(cudaMallocHost)", cudaHostGetDevicePointer(&d, h3, 0));
  char pageable[64];
  SHOW("cudaHostGetDevicePointer(pageable)", cudaHostGetDevicePointer(&d, pageable, 0));
  SHOW("cudaMalloc", cudaMalloc(&dev, 4096));
  SHOW("cudaHostGetDevicePointer(device memory)", cudaHostGetDevicePointer(&d, dev, 0));
  void *reg = aligned_alloc(4096, 8192), *reg2 = aligned_alloc(4096, 4096);
  SHOW("cudaHostRegister(Mapped)", cudaHostRegister(reg, 8192, cudaHostRegisterMapped));
  SHOW("cudaHostGetDevicePointer(registered mapped + 4096)",
       cudaHostGetDevicePointer(&d, (char *)reg + 4096, 0));
  printf("registered device pointer offset = %ld\n", (long)((char *)d - (char *)reg));
  SHOW("cudaHostRegister(Default)",
       cudaHostRegister(reg2, 4096, cudaHostRegisterDefault));
  SHOW("cudaHostGetDevicePointer(registered unmapped)",
       cudaHostGetDevicePointer(&d, reg2, 0));
  SHOW("cudaHostUnregister", cudaHostUnregister(reg));
  SHOW("cudaHostGetDevicePointer(unregistered)", cudaHostGetDevicePointer(&d, reg, 0));
  SHOW("cudaFreeHost(mapped)", cudaFreeHost(h));
  SHOW("cudaHostGetDevicePointer(freed)", cudaHostGetDevicePointer(&d, h, 0));
  cudaHostUnregister(reg2);
  cudaFreeHost(h2);
  cudaFreeHost(h3);
  cudaFree(dev);
  free(reg);
  free(reg2);
  return 0;
}

static void occupancy_of(int block, size_t dyn) {
  int n = -1;
  cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      &n, (const void *)kern, block, dyn, cudaOccupancyDefault);
  printf("occupancy(block %d, dynamic shared %zu) = %d, blocks %d\n", block, dyn, (int)e,
         n);
}

static int occupancy(void) {
  occupancy_of(32, 0);
  occupancy_of(96, 0);
  occupancy_of(256, 0);
  occupancy_of(1024, 0);
  occupancy_of(128, 49152);
  occupancy_of(128, 49153);
  occupancy_of(1025, 0);
  occupancy_of(0, 0);
  int n = -1;
  SHOW("cudaOccupancyMaxActiveBlocksPerMultiprocessor(256)",
       cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void *)kern, 256, 0));
  printf("blocks = %d\n", n);
  SHOW("WithFlags(DisableCachingOverride)",
       cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
           &n, (const void *)kern, 512, 0, cudaOccupancyDisableCachingOverride));
  printf("blocks = %d\n", n);
  SHOW("WithFlags(flags 2)", cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                                 &n, (const void *)kern, 256, 0, 2));
  SHOW("WithFlags(NULL numBlocks)",
       cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(NULL, (const void *)kern,
                                                              256, 0, 0));
  SHOW("WithFlags(not a kernel)", cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                                      &n, (const void *)occupancy_of, 256, 0, 0));
  cudaKernel_t k;
  SHOW("cudaGetKernel", cudaGetKernel(&k, (const void *)kern));
  SHOW("WithFlags(cudaKernel_t)", cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                                      &n, (const void *)k, 64, 0, 0));
  printf("blocks = %d\n", n);
  int grid = -1, block = -1; // cuda_runtime.h's template over the calls above
  SHOW("cudaOccupancyMaxPotentialBlockSize",
       cudaOccupancyMaxPotentialBlockSize(&grid, &block, kern));
  printf("min grid %d, block %d\n", grid, block);
  return 0;
}

static int spawn_child(const char *self, const char *mode,
                       const cudaIpcEventHandle_t *h) {
  char hex[2 * sizeof *h + 1];
  hex_of(h, hex);
  char *args[] = {(char *)self, (char *)mode, hex, NULL};
  pid_t pid;
  fflush(stdout);
  if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0)
    return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int ipc_events(const char *self) {
  cudaEvent_t plain, timed_ipc = NULL, ipc, opened = NULL, gone;
  cudaIpcEventHandle_t h, zero;
  memset(&zero, 0, sizeof zero);
  SHOW("cudaEventCreate", cudaEventCreate(&plain));
  SHOW("cudaIpcGetEventHandle(plain event)", cudaIpcGetEventHandle(&h, plain));
  SHOW("cudaEventCreateWithFlags(Interprocess)",
       cudaEventCreateWithFlags(&timed_ipc, cudaEventInterprocess));
  SHOW("cudaEventCreateWithFlags(Interprocess|DisableTiming)",
       cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming));
  SHOW("cudaIpcGetEventHandle(NULL handle)", cudaIpcGetEventHandle(NULL, ipc));
  SHOW("cudaIpcGetEventHandle", cudaIpcGetEventHandle(&h, ipc));
  cudaEventCreateWithFlags(&gone, cudaEventInterprocess | cudaEventDisableTiming);
  cudaEventDestroy(gone);
  SHOW("cudaIpcGetEventHandle(destroyed event)", cudaIpcGetEventHandle(&h, gone));
  SHOW("cudaIpcGetEventHandle(again)", cudaIpcGetEventHandle(&h, ipc));
  SHOW("cudaIpcOpenEventHandle(NULL event)", cudaIpcOpenEventHandle(NULL, h));
  SHOW("cudaIpcOpenEventHandle(zeroed handle)", cudaIpcOpenEventHandle(&opened, zero));
  SHOW("cudaIpcOpenEventHandle(same process)", cudaIpcOpenEventHandle(&opened, h));
  long_kernel(300, 0);
  SHOW("cudaEventRecord(exported) after a 0.3 s kernel", cudaEventRecord(ipc, 0));
  SHOW("exported: cudaEventQuery", cudaEventQuery(ipc));
  SHOW("exported: cudaEventSynchronize", cudaEventSynchronize(ipc));
  float ms;
  SHOW("exported: cudaEventElapsedTime", cudaEventElapsedTime(&ms, ipc, ipc));

  long_kernel(2000, 0);
  SHOW("cudaEventRecord(exported) after a 2 s kernel", cudaEventRecord(ipc, 0));
  printf("child exit status = %d\n", spawn_child(self, "child", &h));
  SHOW("exported: cudaEventQuery after the child's record", cudaEventQuery(ipc));
  SHOW("exported: cudaEventSynchronize", cudaEventSynchronize(ipc));
  SHOW("exported: cudaEventQuery after", cudaEventQuery(ipc));
  SHOW("cudaEventDestroy(exported)", cudaEventDestroy(ipc));
  printf("late child exit status = %d\n", spawn_child(self, "late", &h));
  cudaEventDestroy(plain);
  return 0;
}

static int spawn_mem_child(const char *self, const char *mode,
                           const cudaIpcMemHandle_t *h) {
  cudaIpcEventHandle_t raw;
  memcpy(&raw, h, sizeof raw);
  return spawn_child(self, mode, &raw);
}

/* Device memory shared with another process (simpleIPC): what one side
 * writes the other reads. */
static int ipc_memory(const char *self) {
  unsigned char *d = NULL, b[4];
  cudaIpcMemHandle_t h;
  SHOW("cudaMalloc(1 MiB)", cudaMalloc((void **)&d, 1 << 20));
  SHOW("cudaMemset(0x5a)", cudaMemset(d, 0x5a, 1 << 20));
  SHOW("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&h, d));
  SHOW("cudaIpcGetMemHandle(interior pointer)", cudaIpcGetMemHandle(&h, d + 16));
  SHOW("cudaIpcGetMemHandle(again)", cudaIpcGetMemHandle(&h, d));
  printf("memory child exit status = %d\n", spawn_mem_child(self, "memchild", &h));
  SHOW("cudaMemcpy(around the first page's end)",
       cudaMemcpy(b, d + 4094, 4, cudaMemcpyDeviceToHost));
  printf("bytes %02x %02x %02x %02x\n", b[0], b[1], b[2], b[3]);
  SHOW("cudaFree(exported)", cudaFree(d));
  printf("late memory child exit status = %d\n", spawn_mem_child(self, "memgone", &h));
  return 0;
}

static void limit_of(const char *name, cudaLimit l) {
  size_t v = 12345;
  cudaError_t e = cudaDeviceGetLimit(&v, l);
  printf("cudaDeviceGetLimit(%s) = %d, %zu\n", name, (int)e, v);
}

static int limits(void) {
  limit_of("StackSize", cudaLimitStackSize);
  limit_of("PrintfFifoSize", cudaLimitPrintfFifoSize);
  limit_of("MallocHeapSize", cudaLimitMallocHeapSize);
  limit_of("DevRuntimeSyncDepth", cudaLimitDevRuntimeSyncDepth);
  limit_of("DevRuntimePendingLaunchCount", cudaLimitDevRuntimePendingLaunchCount);
  limit_of("MaxL2FetchGranularity", cudaLimitMaxL2FetchGranularity);
  limit_of("PersistingL2CacheSize", cudaLimitPersistingL2CacheSize);
  limit_of("7", (cudaLimit)7);
  SHOW("cudaDeviceGetLimit(NULL)", cudaDeviceGetLimit(NULL, cudaLimitStackSize));
  SHOW("cudaDeviceSetLimit(StackSize, 4096)",
       cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  limit_of("StackSize", cudaLimitStackSize);
  SHOW("cudaDeviceSetLimit(MallocHeapSize, 64 MiB)",
       cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
  SHOW("cudaDeviceSetLimit(MaxL2FetchGranularity, 128)",
       cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 128));
  SHOW("cudaDeviceSetLimit(MaxL2FetchGranularity, 129)",
       cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 129));
  limit_of("MaxL2FetchGranularity", cudaLimitMaxL2FetchGranularity);
  int l2max = 0;
  cudaDeviceGetAttribute(&l2max, cudaDevAttrMaxPersistingL2CacheSize, 0);
  printf("persistingL2CacheMaxSize = %d\n", l2max);
  SHOW("cudaDeviceSetLimit(PersistingL2CacheSize, max)",
       cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)l2max));
  SHOW("cudaDeviceSetLimit(PersistingL2CacheSize, max + 1)",
       cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)l2max + 1));
  limit_of("PersistingL2CacheSize", cudaLimitPersistingL2CacheSize);
  SHOW("cudaDeviceSetLimit(DevRuntimeSyncDepth, 2)",
       cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 2));
  SHOW("cudaDeviceSetLimit(7, 0)", cudaDeviceSetLimit((cudaLimit)7, 0));
  SHOW("cudaCtxResetPersistingL2Cache", cudaCtxResetPersistingL2Cache());
  return 0;
}

static int stream_attributes(void) {
  cudaStream_t s, gone;
  cudaStreamAttrValue v, w;
  SHOW("cudaStreamCreate", cudaStreamCreate(&s));
  SHOW("get AccessPolicyWindow",
       cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  printf("window bytes %zu, hitRatio %.2f, hitProp %d, missProp %d\n",
         w.accessPolicyWindow.num_bytes, w.accessPolicyWindow.hitRatio,
         (int)w.accessPolicyWindow.hitProp, (int)w.accessPolicyWindow.missProp);
  memset(&v, 0, sizeof v);
  v.accessPolicyWindow.base_ptr = (void *)0x10000;
  v.accessPolicyWindow.num_bytes = 1 << 20;
  v.accessPolicyWindow.hitRatio = 0.6f;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  SHOW("set AccessPolicyWindow",
       cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  SHOW("get AccessPolicyWindow",
       cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  printf("window base %p, bytes %zu, hitRatio %.2f, hitProp %d, missProp %d\n",
         w.accessPolicyWindow.base_ptr, w.accessPolicyWindow.num_bytes,
         w.accessPolicyWindow.hitRatio, (int)w.accessPolicyWindow.hitProp,
         (int)w.accessPolicyWindow.missProp);
  int maxwin = 0;
  cudaDeviceGetAttribute(&maxwin, cudaDevAttrMaxAccessPolicyWindowSize, 0);
  w = v;
  w.accessPolicyWindow.num_bytes = (size_t)maxwin + 1;
  SHOW("set AccessPolicyWindow(bytes max + 1)",
       cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  w = v;
  w.accessPolicyWindow.hitRatio = 1.5f;
  SHOW("set AccessPolicyWindow(hitRatio 1.5)",
       cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  w = v;
  w.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
  SHOW("set AccessPolicyWindow(missProp Persisting)",
       cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  w = v;
  w.accessPolicyWindow.hitProp = (cudaAccessProperty)3;
  SHOW("set AccessPolicyWindow(hitProp 3)",
       cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));

  SHOW("get SynchronizationPolicy",
       cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &w));
  printf("syncPolicy = %d\n", (int)w.syncPolicy);
  v.syncPolicy = cudaSyncPolicyBlockingSync;
  SHOW("set SynchronizationPolicy(BlockingSync)",
       cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
  cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &w);
  printf("syncPolicy = %d\n", (int)w.syncPolicy);
  v.syncPolicy = (cudaSynchronizationPolicy)0;
  SHOW("set SynchronizationPolicy(0)",
       cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
  v.syncPolicy = (cudaSynchronizationPolicy)5;
  SHOW("set SynchronizationPolicy(5)",
       cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));

  v.priority = -3;
  SHOW("set Priority(-3)", cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v));
  int prio = 1;
  cudaStreamGetPriority(s, &prio);
  printf("cudaStreamGetPriority = %d\n", prio);
  v.priority = -10;
  SHOW("set Priority(-10)", cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v));
  cudaStreamGetAttribute(s, cudaStreamAttributePriority, &w);
  printf("priority = %d\n", w.priority);

  cudaStreamGetAttribute(s, cudaStreamAttributeMemSyncDomainMap, &w);
  printf("memSyncDomainMap = {%d, %d}\n", w.memSyncDomainMap.default_,
         w.memSyncDomainMap.remote);
  v.memSyncDomainMap.default_ = 1;
  v.memSyncDomainMap.remote = 3;
  SHOW("set MemSyncDomainMap{1, 3}",
       cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomainMap, &v));
  cudaStreamGetAttribute(s, cudaStreamAttributeMemSyncDomainMap, &w);
  printf("memSyncDomainMap = {%d, %d}\n", w.memSyncDomainMap.default_,
         w.memSyncDomainMap.remote);
  v.memSyncDomainMap.default_ = 4;
  SHOW("set MemSyncDomainMap{4, 3}",
       cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomainMap, &v));
  v.memSyncDomain = cudaLaunchMemSyncDomainRemote;
  SHOW("set MemSyncDomain(Remote)",
       cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &v));
  cudaStreamGetAttribute(s, cudaStreamAttributeMemSyncDomain, &w);
  printf("memSyncDomain = %d\n", (int)w.memSyncDomain);
  v.memSyncDomain = (cudaLaunchMemSyncDomain)2;
  SHOW("set MemSyncDomain(2)",
       cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &v));

  v.cooperative = 1;
  SHOW("set Cooperative (not a stream attribute)",
       cudaStreamSetAttribute(s, cudaLaunchAttributeCooperative, &v));
  SHOW("get Cooperative", cudaStreamGetAttribute(s, cudaLaunchAttributeCooperative, &w));
  SHOW("set attribute 99", cudaStreamSetAttribute(s, (cudaStreamAttrID)99, &v));
  SHOW("set NULL value", cudaStreamSetAttribute(s, cudaStreamAttributePriority, NULL));
  SHOW("get NULL value", cudaStreamGetAttribute(s, cudaStreamAttributePriority, NULL));
  v.syncPolicy = cudaSyncPolicySpin;
  SHOW("set SynchronizationPolicy on the legacy stream",
       cudaStreamSetAttribute(0, cudaStreamAttributeSynchronizationPolicy, &v));
  cudaStreamCreate(&gone);
  cudaStreamDestroy(gone);
  SHOW("set on a destroyed stream",
       cudaStreamSetAttribute(gone, cudaStreamAttributePriority, &v));
  SHOW("get on a destroyed stream",
       cudaStreamGetAttribute(gone, cudaStreamAttributePriority, &w));
  SHOW("cudaStreamDestroy", cudaStreamDestroy(s));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "child") == 0)
    return child(argv[2]);
  if (argc == 3 && strcmp(argv[1], "late") == 0)
    return late(argv[2]);
  if (argc == 3 && strcmp(argv[1], "memchild") == 0)
    return mem_child(argv[2]);
  if (argc == 3 && strcmp(argv[1], "memgone") == 0)
    return mem_gone(argv[2]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (zero_copy() || occupancy() || ipc_events(argv[0]) || ipc_memory(argv[0]) ||
      limits() || stream_attributes())
    return 1;
  SHOW("cudaDeviceReset", cudaDeviceReset());
  limit_of("StackSize after cudaDeviceReset", cudaLimitStackSize);
  SHOW("cudaGetLastError", cudaGetLastError());
  return 0;
}
