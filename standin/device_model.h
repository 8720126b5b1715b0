/* device_model.h — the simulated device's numbers that both stand-ins report:
 * the runtime's (device.c: cudaDeviceProp, cudaDeviceGetAttribute; the
 * occupancy model of registry.c) and the driver's (driver/driver_device.c:
 * cuDeviceGetName, cuDeviceGetAttribute, cuDeviceTotalMem,
 * cuOccupancyMaxPotentialBlockSize). An H100's, except the name. Macros and
 * one static inline function of ints, so that files including either
 * toolkit header can use it. */
#ifndef GPUTRACE_STANDIN_DEVICE_MODEL_H
#define GPUTRACE_STANDIN_DEVICE_MODEL_H

#define SI_DEVICE_NAME "gputrace CPU stand-in"
#define SI_CC_MAJOR 9
#define SI_CC_MINOR 0
#define SI_SM_COUNT 132
#define SI_MAX_BLOCKS_PER_SM 32
#define SI_MAX_THREADS_PER_SM 2048
#define SI_MAX_THREADS_PER_BLOCK 1024
#define SI_SHMEM_PER_BLOCK (48 * 1024) /* sharedMemPerBlock */
#define SI_SHMEM_OPTIN 232448          /* sharedMemPerBlockOptin */
#define SI_SHMEM_PER_SM 233472         /* sharedMemPerMultiprocessor */
#define SI_SHMEM_RESERVED 1024         /* reservedSharedMemPerBlock */
#define SI_REGS_PER_SM 65536           /* regsPerMultiprocessor (and per block) */
#define SI_CLOCK_KHZ 1980000
#define SI_MEM_CLOCK_KHZ 2619000
#define SI_MEM_BUS_BITS 5120
#define SI_L2_BYTES (50 * 1024 * 1024)
#define SI_ACCESS_POLICY_MAX_WINDOW 134213632 /* accessPolicyMaxWindowSize */
#define SI_MEM_SYNC_DOMAINS 4                 /* cudaDevAttrMemSyncDomainCount */

/* Every function the stand-ins load: what cudaFuncGetAttributes says. */
#define SI_FUNC_MAX_THREADS 1024
#define SI_FUNC_REGS 32
#define SI_FUNC_MAX_DYN_SHMEM (48 * 1024)

/* The blocks of block_size threads one SM holds at once: the least of the
 * limits of warps (SI_MAX_THREADS_PER_SM / 32 warp slots), blocks
 * (SI_MAX_BLOCKS_PER_SM), registers (SI_FUNC_REGS per thread, allocated
 * per warp in units of 256, from SI_REGS_PER_SM) and shared memory
 * (dynamic plus the reserved SI_SHMEM_RESERVED per block, in units of 128
 * bytes, from SI_SHMEM_PER_SM) — cuda_occupancy.h's model without
 * partitioned caching. A block larger than the function allows, or dynamic
 * shared memory past its maximum, gives 0. */
static inline int si_occupancy(int block_size, unsigned long dyn_shmem) {
  if (block_size > SI_FUNC_MAX_THREADS || dyn_shmem > SI_FUNC_MAX_DYN_SHMEM)
    return 0;
  int warps = (block_size + 31) / 32;
  int by_warps = SI_MAX_THREADS_PER_SM / 32 / warps;
  int regs_per_warp = (SI_FUNC_REGS * 32 + 255) / 256 * 256;
  int by_regs = SI_REGS_PER_SM / regs_per_warp / warps;
  unsigned long shmem = (dyn_shmem + SI_SHMEM_RESERVED + 127) / 128 * 128;
  int by_shmem = (int)(SI_SHMEM_PER_SM / shmem);
  int n = SI_MAX_BLOCKS_PER_SM;
  n = by_warps < n ? by_warps : n;
  n = by_regs < n ? by_regs : n;
  return by_shmem < n ? by_shmem : n;
}

#endif
