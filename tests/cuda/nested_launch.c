/* nested_launch.c — preloaded after libgputrace.so: its __cudaLaunchKernel,
 * the one the shim's runtime hook forwards to, launches through the global
 * cuLaunchKernel, i.e. the shim's driver hook, nested inside the runtime
 * hook's call. This is what libcudart does on a real GPU, whose calls reach
 * the driver through entry points the shim hands out. Every third launch
 * (the 1st, 4th, ...) passes a NULL function, which the driver refuses
 * (CUDA_ERROR_INVALID_HANDLE, 400): that result must come back through both
 * hooks. At exit it prints "nested: N launches, M refused"
 * (tests/e2e/test_interception.py). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
  unsigned x, y, z;
} dim3;
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, void *, void **, void **);

static launch_fn launch;
static void *function;
static unsigned launches, refused;

/* The stand-in driver's entry point `name`, or NULL. */
static void *driver_entry(void *driver, const char *name) {
  int (*proc)(const char *, void **, int, unsigned long long, int *);
  void *entry = NULL;
  *(void **)&proc = driver ? dlsym(driver, "cuGetProcAddress_v2") : NULL;
  return proc && proc(name, &entry, 12000, 0, NULL) == 0 ? entry : NULL;
}

__attribute__((constructor)) static void load_driver(void) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  int (*init)(unsigned) = driver_entry(driver, "cuInit");
  int (*load)(void **, const void *) = driver_entry(driver, "cuModuleLoadData");
  int (*get)(void **, void *, const char *) = driver_entry(driver, "cuModuleGetFunction");
  void *module = NULL;
  if (!init || !load || !get || init(0) || load(&module, "nested module") ||
      get(&function, module, "nested_kernel"))
    fprintf(stderr, "nested_launch: no stand-in driver\n");
  /* the global scope's: with the shim preloaded first, its hook */
  launch = (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
}

__attribute__((destructor)) static void report(void) {
  printf("nested: %u launches, %u refused\n", launches, refused);
}

int __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args,
                       size_t shared_mem, void *stream) {
  (void)kernel;
  void *f = launches++ % 3 == 0 ? NULL : function;
  int r = launch ? launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                          (unsigned)shared_mem, stream, args, NULL)
                 : -1;
  refused += r != 0;
  return r;
}
