/* dlopen_host.c — loads argv[1] (the plugin library) with dlopen(RTLD_NOW |
 * RTLD_LOCAL) after start and runs plugin_run(25): the CUDA runtime arrives
 * late and outside the global scope, and calls must still be traced. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen: %s\n", dlerror());
    return 2;
  }
  int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
  int rc = run ? run(25) : 2;
  printf("plugin_run: %d\n", rc);
  return rc;
}
