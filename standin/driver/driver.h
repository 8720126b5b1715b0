/* driver.h — what the stand-in libcuda's files share: driver.c (the
 * API subset of the driver-interception tests, cuGetProcAddress),
 * driver_mem.c (device memory, arrays, IPC, 2D/3D copies, prefetches, host
 * functions) and driver_device.c (device queries, created contexts, error
 * strings), the last two compiled against the toolkit's cuda.h. Plain C types only, so
 * that both can include it whatever else they include. */
#ifndef GPUTRACE_STANDIN_DRIVER_H
#define GPUTRACE_STANDIN_DRIVER_H

#include <stddef.h>

#define API __attribute__((visibility("default")))

/* Device memory (driver_mem.c): a CUresult. */
int drv_alloc(unsigned long long *p, size_t n);
int drv_release(unsigned long long p);

/* Entry points driver_mem.c defines, for driver.c's cuGetProcAddress. */
struct drv_entry {
  const char *name;
  void *fn;
};
extern const struct drv_entry drv_mem_table[];
extern const size_t drv_mem_table_n;
/* ... and driver_device.c (devices, created contexts, error strings). */
extern const struct drv_entry drv_device_table[];
extern const size_t drv_device_table_n;

/* cuInit has succeeded (driver.c). */
int drv_initialized(void);
/* 1 when f is a CUfunction cuModuleGetFunction (or a library) handed out. */
int drv_is_function(const void *f);
/* The calling thread's created context (driver_device.c), NULL for the
 * primary one; set_current makes ctx current if it is a live created
 * context, else the primary. */
void *drv_ctx_current(void);
void drv_ctx_set_current(void *ctx);

#endif
