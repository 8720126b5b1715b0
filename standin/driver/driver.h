/* driver.h — what the stand-in libcuda's two files share: driver.c (the
 * API subset of the driver-interception tests, cuGetProcAddress) and
 * driver_mem.c (device memory, arrays, IPC, 2D/3D copies, prefetches, host
 * functions; compiled against the toolkit's cuda.h). Plain C types only, so
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

#endif
