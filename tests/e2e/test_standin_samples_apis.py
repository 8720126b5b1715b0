"""The stand-in entry points six NVIDIA cuda-samples need (simpleZeroCopy,
simpleOccupancy, simpleAWBarrier, simpleIPC, vectorAddDrv, matrixMulDrv):
tests/cuda/samples_apis.cu (runtime) and drv_samples.c (driver, linked to
the stand-in libcuda) print one line per call result.
- untraced: the exact output (every success and error code, every value:
  mapped pinned device pointers, the occupancy model's block counts and
  cudaOccupancyMaxPotentialBlockSize over them, an interprocess event
  recorded and waited for across two processes both ways, limits and their
  reset, stream attributes; the driver's device queries, contexts and error
  strings, CUDA_ERROR_NOT_INITIALIZED before cuInit) and exit status 0;
- under gputrace record: the same output and status, the IPC child traced
  as a process of its own, the parent's and the child's event
  synchronizations recorded, no record dropped."""
from gtest import *

SAMPLES_APIS = """cudaHostAlloc(Mapped) = 0
cudaHostGetDevicePointer(mapped) = 0
device pointer is the host pointer = 1
cudaHostGetDevicePointer(mapped + 100) = 0
interior device pointer offset = 100
cudaHostGetDevicePointer(flags 1) = 1
cudaHostGetDevicePointer(NULL out) = 1
cudaHostAlloc(Default) = 0
cudaHostGetDevicePointer(unmapped cudaHostAlloc) = 1
cudaMallocHost = 0
cudaHostGetDevicePointer(cudaMallocHost) = 1
cudaHostGetDevicePointer(pageable) = 1
cudaMalloc = 0
cudaHostGetDevicePointer(device memory) = 1
cudaHostRegister(Mapped) = 0
cudaHostGetDevicePointer(registered mapped + 4096) = 0
registered device pointer offset = 4096
cudaHostRegister(Default) = 0
cudaHostGetDevicePointer(registered unmapped) = 1
cudaHostUnregister = 0
cudaHostGetDevicePointer(unregistered) = 1
cudaFreeHost(mapped) = 0
cudaHostGetDevicePointer(freed) = 1
occupancy(block 32, dynamic shared 0) = 0, blocks 32
occupancy(block 96, dynamic shared 0) = 0, blocks 21
occupancy(block 256, dynamic shared 0) = 0, blocks 8
occupancy(block 1024, dynamic shared 0) = 0, blocks 2
occupancy(block 128, dynamic shared 49152) = 0, blocks 4
occupancy(block 128, dynamic shared 49153) = 0, blocks 0
occupancy(block 1025, dynamic shared 0) = 0, blocks 0
occupancy(block 0, dynamic shared 0) = 1, blocks -1
cudaOccupancyMaxActiveBlocksPerMultiprocessor(256) = 0
blocks = 8
WithFlags(DisableCachingOverride) = 0
blocks = 4
WithFlags(flags 2) = 1
WithFlags(NULL numBlocks) = 1
WithFlags(not a kernel) = 98
cudaGetKernel = 0
WithFlags(cudaKernel_t) = 0
blocks = 32
cudaOccupancyMaxPotentialBlockSize = 0
min grid 264, block 1024
cudaEventCreate = 0
cudaIpcGetEventHandle(plain event) = 400
cudaEventCreateWithFlags(Interprocess) = 1
cudaEventCreateWithFlags(Interprocess|DisableTiming) = 0
cudaIpcGetEventHandle(NULL handle) = 1
cudaIpcGetEventHandle = 0
cudaIpcGetEventHandle(destroyed event) = 400
cudaIpcGetEventHandle(again) = 0
cudaIpcOpenEventHandle(NULL event) = 1
cudaIpcOpenEventHandle(zeroed handle) = 205
cudaIpcOpenEventHandle(same process) = 201
cudaEventRecord(exported) after a 0.3 s kernel = 0
exported: cudaEventQuery = 600
exported: cudaEventSynchronize = 0
exported: cudaEventElapsedTime = 400
cudaEventRecord(exported) after a 2 s kernel = 0
child: cudaIpcOpenEventHandle = 0
child: cudaEventQuery before the parent's kernel ends = 600
child: cudaEventSynchronize = 0
child: cudaEventQuery after = 0
child: cudaEventElapsedTime = 400
child: cudaEventElapsedTime(timed, opened) = 400
child: cudaIpcGetEventHandle(opened) = 0
child: cudaEventRecord after a 1 s kernel = 0
child: cudaEventDestroy = 0
child exit status = 0
exported: cudaEventQuery after the child's record = 600
exported: cudaEventSynchronize = 0
exported: cudaEventQuery after = 0
cudaEventDestroy(exported) = 0
late child: cudaIpcOpenEventHandle(destroyed exporter) = 205
late child exit status = 0
cudaMalloc(1 MiB) = 0
cudaMemset(0x5a) = 0
cudaIpcGetMemHandle = 0
cudaIpcGetMemHandle(interior pointer) = 1
cudaIpcGetMemHandle(again) = 0
memory child: cudaIpcOpenMemHandle = 0
memory child: cudaMemcpy(2 bytes) = 0
memory child: bytes 5a 5a
memory child: cudaMemset(first page, 0xa5) = 0
memory child: cudaDeviceSynchronize = 0
memory child: cudaIpcCloseMemHandle = 0
memory child exit status = 0
cudaMemcpy(around the first page's end) = 0
bytes a5 a5 5a 5a
cudaFree(exported) = 0
late memory child: cudaIpcOpenMemHandle(freed) = 205
late memory child exit status = 0
cudaDeviceGetLimit(StackSize) = 0, 1024
cudaDeviceGetLimit(PrintfFifoSize) = 0, 1048576
cudaDeviceGetLimit(MallocHeapSize) = 0, 8388608
cudaDeviceGetLimit(DevRuntimeSyncDepth) = 215, 12345
cudaDeviceGetLimit(DevRuntimePendingLaunchCount) = 0, 2048
cudaDeviceGetLimit(MaxL2FetchGranularity) = 0, 64
cudaDeviceGetLimit(PersistingL2CacheSize) = 0, 0
cudaDeviceGetLimit(7) = 215, 12345
cudaDeviceGetLimit(NULL) = 1
cudaDeviceSetLimit(StackSize, 4096) = 0
cudaDeviceGetLimit(StackSize) = 0, 4096
cudaDeviceSetLimit(MallocHeapSize, 64 MiB) = 0
cudaDeviceSetLimit(MaxL2FetchGranularity, 128) = 0
cudaDeviceSetLimit(MaxL2FetchGranularity, 129) = 1
cudaDeviceGetLimit(MaxL2FetchGranularity) = 0, 128
persistingL2CacheMaxSize = 33554432
cudaDeviceSetLimit(PersistingL2CacheSize, max) = 0
cudaDeviceSetLimit(PersistingL2CacheSize, max + 1) = 1
cudaDeviceGetLimit(PersistingL2CacheSize) = 0, 33554432
cudaDeviceSetLimit(DevRuntimeSyncDepth, 2) = 215
cudaDeviceSetLimit(7, 0) = 215
cudaCtxResetPersistingL2Cache = 0
cudaStreamCreate = 0
get AccessPolicyWindow = 0
window bytes 0, hitRatio 0.00, hitProp 0, missProp 0
set AccessPolicyWindow = 0
get AccessPolicyWindow = 0
window base 0x10000, bytes 1048576, hitRatio 0.60, hitProp 2, missProp 1
set AccessPolicyWindow(bytes max + 1) = 1
set AccessPolicyWindow(hitRatio 1.5) = 1
set AccessPolicyWindow(missProp Persisting) = 1
set AccessPolicyWindow(hitProp 3) = 1
get SynchronizationPolicy = 0
syncPolicy = 1
set SynchronizationPolicy(BlockingSync) = 0
syncPolicy = 4
set SynchronizationPolicy(0) = 1
set SynchronizationPolicy(5) = 1
set Priority(-3) = 0
cudaStreamGetPriority = -3
set Priority(-10) = 0
priority = -5
memSyncDomainMap = {0, 1}
set MemSyncDomainMap{1, 3} = 0
memSyncDomainMap = {1, 3}
set MemSyncDomainMap{4, 3} = 1
set MemSyncDomain(Remote) = 0
memSyncDomain = 1
set MemSyncDomain(2) = 1
set Cooperative (not a stream attribute) = 1
get Cooperative = 1
set attribute 99 = 1
set NULL value = 1
get NULL value = 1
set SynchronizationPolicy on the legacy stream = 0
set on a destroyed stream = 400
get on a destroyed stream = 400
cudaStreamDestroy = 0
cudaDeviceReset = 0
cudaDeviceGetLimit(StackSize after cudaDeviceReset) = 0, 1024
cudaGetLastError = 400
"""

DRV_SAMPLES = """cuGetErrorString(3) = 0, initialization error
cuDeviceGetCount before cuInit = 3
cuDeviceGetName before cuInit = 3
cuDeviceGetAttribute before cuInit = 3
cuDeviceTotalMem before cuInit = 3
cuCtxCreate before cuInit = 3
cuInit = 0
cuDeviceGetCount = 0
count = 1
cuDeviceGetCount(NULL) = 1
cuDeviceGetName = 0
name = "gputrace CPU stand-in"
cuDeviceGetName(len 9) = 0
name = "gputrace"
cuDeviceGetName(len 0) = 1
cuDeviceGetName(NULL) = 1
cuDeviceGetName(device 1) = 101
cuDeviceTotalMem = 0
total = 85899345920
cuDeviceTotalMem(NULL) = 1
cuDeviceTotalMem(device 1) = 101
cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) = 0, 9
cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR) = 0, 0
cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) = 0, 132
cuDeviceGetAttribute(CLOCK_RATE) = 0, 1980000
cuDeviceGetAttribute(COMPUTE_MODE) = 0, 0
cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK) = 0, 1024
cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK) = 0, 49152
cuDeviceGetAttribute(WARP_SIZE) = 0, 32
cuDeviceGetAttribute(INTEGRATED (not modelled)) = 0, 0
cuDeviceGetAttribute(0) = 1, -1
cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MAX) = 1, -1
cuDeviceGetAttribute(NULL) = 1
cuDeviceGetAttribute(device 1) = 101
cuCtxCreate(NULL) = 1
cuCtxCreate(flags 0x100) = 1
cuCtxCreate(SCHED_SPIN|SCHED_YIELD) = 1
cuCtxCreate(device 1) = 101
cuCtxCreate(exec affinity) = 224
cuCtxCreate(SCHED_BLOCKING_SYNC) = 0
cuCtxGetCurrent = 0
created context is current = 1
cuCtxDestroy = 0
destroyed context is current = 0
cuCtxDestroy(again) = 201
cuCtxDestroy(NULL) = 1
cuModuleLoadData = 0
cuModuleGetFunction = 0
cuOccupancyMaxPotentialBlockSize(no dynamic shared memory) = 0, block 1024, min grid 264
cuOccupancyMaxPotentialBlockSize(8 KiB dynamic) = 0, block 1024, min grid 264
cuOccupancyMaxPotentialBlockSize(limit 200) = 0, block 128, min grid 2112
cuOccupancyMaxPotentialBlockSize(64 bytes a thread) = 0, block 512, min grid 528
cuOccupancyMaxPotentialBlockSize(not a function) = 400, block -1, min grid -1
cuOccupancyMaxPotentialBlockSize(NULL) = 1
cuGetErrorString(0) = 0, no error
cuGetErrorString(1) = 0, invalid argument
cuGetErrorString(101) = 0, invalid device ordinal
cuGetErrorString(201) = 0, invalid device context
cuGetErrorString(999) = 0, unknown error
cuGetErrorString(12345) = 1, (null)
cuGetErrorString(NULL) = 1
cuGetProcAddress(cuCtxCreate, 13000) = 0
is cuCtxCreate_v4 = 1
cuGetProcAddress(cuDeviceGetName, 13000) = 0
is cuDeviceGetName = 1
"""


def check_both_ways(name, expected):
    env = base_env()
    plain = run([prog(name)], env, check_rc=0)
    eq(plain.stdout, expected, "%s output, untraced" % name)
    traced, out = record([prog(name)])
    eq(traced.returncode, plain.returncode, "%s exit status, traced" % name)
    eq(traced.stdout, plain.stdout, "%s output, traced" % name)
    return dump(out)


def test_runtime_apis():
    ev = check_both_ways("samples_apis", SAMPLES_APIS)
    starts = select(ev, kind="process", phase="start")
    # the late event child calls nothing the shim traces, so it has no process
    # record; the late memory child calls cudaIpcOpenMemHandle, which it traces
    eq(sorted(e["cmdline"].split()[1:2] for e in starts),
       [[], ["child"], ["memchild"], ["memgone"]], "the parent and the IPC children traced")
    eq(count(calls(ev), api="cudaEventSynchronize"), 3, "event synchronizations traced")
    eq(count(calls(ev), api="cudaHostAlloc"), 2, "cudaHostAlloc calls traced")
    eq(ring_drops(ev), 0, "records dropped")


def test_driver_apis():
    ev = check_both_ways("drv_samples", DRV_SAMPLES)
    eq(ring_drops(ev), 0, "records dropped")


if __name__ == "__main__":
    main([test_runtime_apis, test_driver_apis])
