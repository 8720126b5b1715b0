// drv_samples.c — the driver entry points NVIDIA's vectorAddDrv and
// matrixMulDrv (and their helper_cuda_drvapi.h) call beyond the common
// ones, on the stand-in libcuda (linked): each before cuInit, then with its
// success and error cases, one "label = value" line per result
// (tests/e2e/test_standin_samples_apis.py compares the output exactly).
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define SHOW(label, call) printf("%s = %d\n", label, (int)(call))

/* matrixMulDrv asks cuOccupancyMaxPotentialBlockSize for a block size. */
static void occupancy(const char *what, CUfunction f, CUoccupancyB2DSize smem, size_t dyn,
                      int limit) {
  int grid = -1, block = -1;
  CUresult e = cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smem, dyn, limit);
  printf("cuOccupancyMaxPotentialBlockSize(%s) = %d, block %d, min grid %d\n", what,
         (int)e, block, grid);
}

static size_t smem_64_per_thread(int block_size) {
  return (size_t)block_size * 64;
}

static void error_string(CUresult code) {
  const char *s = "unset";
  CUresult e = cuGetErrorString(code, &s);
  printf("cuGetErrorString(%d) = %d, %s\n", (int)code, (int)e, s ? s : "(null)");
}

static void attribute(const char *name, CUdevice_attribute a) {
  int v = -1;
  CUresult e = cuDeviceGetAttribute(&v, a, 0);
  printf("cuDeviceGetAttribute(%s) = %d, %d\n", name, (int)e, v);
}

int main(void) {
  int n = -1, v = -1;
  char name[256];
  CUcontext ctx = NULL, cur = NULL;
  error_string(CUDA_ERROR_NOT_INITIALIZED); // needs no cuInit
  SHOW("cuDeviceGetCount before cuInit", cuDeviceGetCount(&n));
  SHOW("cuDeviceGetName before cuInit", cuDeviceGetName(name, sizeof name, 0));
  SHOW("cuDeviceGetAttribute before cuInit",
       cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  size_t mem = 0;
  SHOW("cuDeviceTotalMem before cuInit", cuDeviceTotalMem(&mem, 0));
  SHOW("cuCtxCreate before cuInit", cuCtxCreate(&ctx, NULL, 0, 0));
  SHOW("cuInit", cuInit(0));

  SHOW("cuDeviceGetCount", cuDeviceGetCount(&n));
  printf("count = %d\n", n);
  SHOW("cuDeviceGetCount(NULL)", cuDeviceGetCount(NULL));
  SHOW("cuDeviceGetName", cuDeviceGetName(name, sizeof name, 0));
  printf("name = \"%s\"\n", name);
  SHOW("cuDeviceGetName(len 9)", cuDeviceGetName(name, 9, 0));
  printf("name = \"%s\"\n", name);
  SHOW("cuDeviceGetName(len 0)", cuDeviceGetName(name, 0, 0));
  SHOW("cuDeviceGetName(NULL)", cuDeviceGetName(NULL, 16, 0));
  SHOW("cuDeviceGetName(device 1)", cuDeviceGetName(name, sizeof name, 1));
  SHOW("cuDeviceTotalMem", cuDeviceTotalMem(&mem, 0)); // matrixMulDrv
  printf("total = %zu\n", mem);
  SHOW("cuDeviceTotalMem(NULL)", cuDeviceTotalMem(NULL, 0));
  SHOW("cuDeviceTotalMem(device 1)", cuDeviceTotalMem(&mem, 1));

  attribute("COMPUTE_CAPABILITY_MAJOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  attribute("COMPUTE_CAPABILITY_MINOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  attribute("MULTIPROCESSOR_COUNT", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  attribute("CLOCK_RATE", CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  attribute("COMPUTE_MODE", CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
  attribute("MAX_THREADS_PER_BLOCK", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  attribute("MAX_SHARED_MEMORY_PER_BLOCK",
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  attribute("WARP_SIZE", CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  attribute("INTEGRATED (not modelled)", CU_DEVICE_ATTRIBUTE_INTEGRATED);
  attribute("0", (CUdevice_attribute)0);
  attribute("CU_DEVICE_ATTRIBUTE_MAX", CU_DEVICE_ATTRIBUTE_MAX);
  SHOW("cuDeviceGetAttribute(NULL)",
       cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  SHOW("cuDeviceGetAttribute(device 1)",
       cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1));

  SHOW("cuCtxCreate(NULL)", cuCtxCreate(NULL, NULL, 0, 0));
  SHOW("cuCtxCreate(flags 0x100)", cuCtxCreate(&ctx, NULL, 0x100, 0));
  SHOW("cuCtxCreate(SCHED_SPIN|SCHED_YIELD)",
       cuCtxCreate(&ctx, NULL, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, 0));
  SHOW("cuCtxCreate(device 1)", cuCtxCreate(&ctx, NULL, 0, 1));
  CUexecAffinityParam aff;
  memset(&aff, 0, sizeof aff);
  CUctxCreateParams params = {&aff, 1, NULL};
  SHOW("cuCtxCreate(exec affinity)", cuCtxCreate(&ctx, &params, 0, 0));
  SHOW("cuCtxCreate(SCHED_BLOCKING_SYNC)",
       cuCtxCreate(&ctx, NULL, CU_CTX_SCHED_BLOCKING_SYNC, 0));
  SHOW("cuCtxGetCurrent", cuCtxGetCurrent(&cur));
  printf("created context is current = %d\n", cur == ctx);
  SHOW("cuCtxDestroy", cuCtxDestroy(ctx));
  cuCtxGetCurrent(&cur);
  printf("destroyed context is current = %d\n", cur == ctx);
  SHOW("cuCtxDestroy(again)", cuCtxDestroy(ctx));
  SHOW("cuCtxDestroy(NULL)", cuCtxDestroy(NULL));

  CUmodule mod = NULL;
  CUfunction f = NULL;
  static const char image[] = "an image the stand-in does not parse";
  SHOW("cuModuleLoadData", cuModuleLoadData(&mod, image));
  SHOW("cuModuleGetFunction", cuModuleGetFunction(&f, mod, "matrixMul_bs32_64bit"));
  occupancy("no dynamic shared memory", f, NULL, 0, 0);
  occupancy("8 KiB dynamic", f, NULL, 8192, 0);
  occupancy("limit 200", f, NULL, 0, 200);
  occupancy("64 bytes a thread", f, smem_64_per_thread, 0, 0);
  occupancy("not a function", (CUfunction)&mod, NULL, 0, 0);
  SHOW("cuOccupancyMaxPotentialBlockSize(NULL)",
       cuOccupancyMaxPotentialBlockSize(NULL, &v, f, NULL, 0, 0));

  error_string(CUDA_SUCCESS);
  error_string(CUDA_ERROR_INVALID_VALUE);
  error_string(CUDA_ERROR_INVALID_DEVICE);
  error_string(CUDA_ERROR_INVALID_CONTEXT);
  error_string(CUDA_ERROR_UNKNOWN);
  error_string((CUresult)12345);
  SHOW("cuGetErrorString(NULL)", cuGetErrorString(CUDA_SUCCESS, NULL));
  void *fn = NULL;
  SHOW("cuGetProcAddress(cuCtxCreate, 13000)",
       cuGetProcAddress("cuCtxCreate", &fn, 13000, 0, NULL));
  printf("is cuCtxCreate_v4 = %d\n", fn == (void *)cuCtxCreate_v4);
  SHOW("cuGetProcAddress(cuDeviceGetName, 13000)",
       cuGetProcAddress("cuDeviceGetName", &fn, 13000, 0, NULL));
  printf("is cuDeviceGetName = %d\n", fn == (void *)cuDeviceGetName);
  return 0;
}
