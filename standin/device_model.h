/* device_model.h — the simulated device's numbers that both stand-ins report:
 * the runtime's (device.c: cudaDeviceProp, cudaDeviceGetAttribute; the
 * occupancy model of registry.c) and the driver's (driver/driver_device.c:
 * cuDeviceGetName, cuDeviceGetAttribute). An H100's, except the name.
 * Plain macros, so that files including either toolkit header can use it. */
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

#endif
