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
#include <stdint.h>
#include <stdio.h>

typedef int (*proc_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*init_fn)(unsigned);
typedef int (*load_fn)(void **, const void *);
typedef int (*getfn_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, void *, void **, void **);
typedef struct {
  unsigned x, y, z;
} dim3;

static launch_fn launch;
static void *function;
static unsigned launches, refused;

__attribute__((constructor)) static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  proc_fn proc = lib ? (proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  init_fn init = NULL;
  load_fn load = NULL;
  getfn_fn getfn = NULL;
  void *module = NULL;
  if (!proc || proc("cuInit", (void **)&init, 12000, 0, NULL) ||
      proc("cuModuleLoadData", (void **)&load, 12000, 0, NULL) ||
      proc("cuModuleGetFunction", (void **)&getfn, 12000, 0, NULL) || init(0) ||
      load(&module, "nested module") || getfn(&function, module, "nested_kernel"))
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
