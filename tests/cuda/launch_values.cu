// launch_values.cu — launches the compact launch frame cannot hold, and a
// kernel registered inside a launch's call (tests/e2e/test_launch_values.py):
//   - hello<<<dim3(1, 70000, 1), 1>>>: grid y over 16 bits (invalid config);
//   - hello<<<1, dim3(70000, 1, 1)>>>: block x over 16 bits (invalid config);
//   - 3 x cudaLaunchKernel(hello, (2,3,4), (5,6,7), shared 1024): compact;
//   - hello<<<1, 1, 5 GiB>>>: shared memory over 32 bits (invalid value);
//   - 5 x cudaLaunchHostFunc from one line, the third one's function
//     dlopening argv[1] (tests/cuda/plugin.cu): on the stand-in a host
//     function runs inside the call, so the library's kernels are registered
//     while that launch's frame waits in the thread's sub-ring; the fourth
//     one's sleeping 4.5 s, longer than the frame's 32-bit duration holds
//     (2^32 ticks or ns); the fifth one's forking: the child returns through
//     the hook (its sub-ring is gone, the waiting slot is the parent's) and
//     exits with 7; then plugin_run(3).
// Prints each launch's result code on one line, "plugin_run: N", then
// "child: S" (the child's exit status, 7, or -signal).
#include <cstdio>
#include <dlfcn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

__global__ void hello(int x) {}

static const char *plugin_path;
static void *plugin;

static pid_t child = -1;

static void CUDART_CB host_fn(void *data) {
  if (*(int *)data == 4) {
    fflush(stdout);
    child = fork();
  }
  if (*(int *)data == 2)
    plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (*(int *)data == 3) {
    struct timespec pause = {4, 500000000};
    nanosleep(&pause, nullptr);
  }
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  plugin_path = argv[1];
  int codes[12], n = 0;
  hello<<<dim3(1, 70000, 1), 1>>>(1);
  codes[n++] = cudaGetLastError();
  hello<<<1, dim3(70000, 1, 1)>>>(2);
  codes[n++] = cudaGetLastError();
  int arg = 3;
  void *args[] = {&arg};
  for (int i = 0; i < 3; i++)
    codes[n++] = cudaLaunchKernel((const void *)hello, dim3(2, 3, 4), dim3(5, 6, 7), args,
                                  1024, 0);
  hello<<<1, 1, (size_t)5 << 30>>>(4);
  codes[n++] = cudaGetLastError();
  int ids[5] = {0, 1, 2, 3, 4};
  for (int i = 0; i < 5; i++)
    codes[n++] = cudaLaunchHostFunc(0, host_fn, &ids[i]);
  if (child == 0)
    _exit(codes[n - 1] == 0 ? 7 : 8);
  for (int i = 0; i < n; i++)
    printf("%d%s", codes[i], i + 1 < n ? " " : "\n");
  int (*run)(int) = plugin ? (int (*)(int))dlsym(plugin, "plugin_run") : nullptr;
  int rc = run ? run(3) : 99;
  printf("plugin_run: %d\n", rc);
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child)
    return 98;
  printf("child: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
  return rc;
}
