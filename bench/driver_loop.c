/* driver_loop.c — driver launch cost: cuLaunchKernel obtained the way
 * cuBLAS/NCCL get it (dlopen libcuda.so.1, dlsym cuGetProcAddress_v2, then
 * cuGetProcAddress), N launches (argv[1], default 1,000,000) after 10,000
 * warm-up launches on the stand-in driver. Prints "ns_per_launch X". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*proc_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*init_fn)(unsigned);
typedef int (*load_fn)(void **, const void *);
typedef int (*getfn_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, unsigned, void *, void **, void **);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  proc_fn proc = lib ? (proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  init_fn init = NULL;
  load_fn load = NULL;
  getfn_fn getfn = NULL;
  launch_fn launch = NULL;
  if (!proc || proc("cuInit", (void **)&init, 12000, 0, NULL) ||
      proc("cuModuleLoadData", (void **)&load, 12000, 0, NULL) ||
      proc("cuModuleGetFunction", (void **)&getfn, 12000, 0, NULL) ||
      proc("cuLaunchKernel", (void **)&launch, 12000, 0, NULL) || init(0)) {
    fprintf(stderr, "driver_loop: no stand-in driver (LD_LIBRARY_PATH?)\n");
    return 2;
  }
  void *mod = NULL, *fn = NULL;
  if (load(&mod, "bench module") || getfn(&fn, mod, "bench_kernel"))
    return 2;
  for (int i = 0; i < 10000; i++)
    launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  double t0 = now_ns();
  for (long i = 0; i < n; i++)
    launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  printf("ns_per_launch %.2f\n", (now_ns() - t0) / n);
  return 0;
}
