// raw_clone.cu — child processes that fork()'s atfork handlers never saw.
// The parent traces (an allocation and a launch), then makes a child one of
// these ways (argv[1]) and allocates and frees 1,000 times while the child
// runs; every allocation is 1000 + i bytes (parent) or 5000 + i (child).
//   syscall     syscall(SYS_clone, SIGCHLD, ...): the child returns into
//               main on the parent's stack, makes 10 allocations and 5
//               launches, and exits
//   clone       glibc's clone(fn, stack, SIGCHLD): the same, on its own stack
//   thread      a raw clone whose first CUDA calls come from a thread it
//               creates (3 allocations), then 10 of its own
//   grandchild  a raw clone that makes a raw clone of its own: each makes
//               10 allocations (the grandchild's 7000 + i)
//   vfork       vfork, the child allocates once (bytes 9999) and _exits
//               (undefined by POSIX: the child runs in the parent's memory)
// Prints "parent P child C" (grandchild: "... grandchild G" too).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void parent_kernel() {}
__global__ void child_kernel() {}

static void allocs(int n, size_t base) {
  for (int i = 0; i < n; i++) {
    void *p = nullptr;
    if (cudaMalloc(&p, base + (size_t)i) != cudaSuccess)
      _exit(3);
    cudaFree(p);
  }
}

static pid_t raw_clone() {
  return (pid_t)syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
}

// The grandchild's pid, from the child to the parent (the child's exit
// status carries only 8 bits).
static int g_pipe[2];

static int child_work(int grand) {
  allocs(10, 5000);
  for (int i = 0; i < 5; i++) child_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  if (grand) {
    pid_t g = raw_clone();
    if (g == 0) {
      allocs(10, 7000);
      _exit(0);
    }
    if (write(g_pipe[1], &g, sizeof g) != (ssize_t)sizeof g)
      return 4;
    int status = 0;
    if (waitpid(g, &status, 0) != g || !WIFEXITED(status) || WEXITSTATUS(status))
      return 5;
  }
  return 0;
}

static void *thread_first(void *) {
  allocs(3, 4000);
  return nullptr;
}

static int thread_child() {
  pthread_t t;
  if (pthread_create(&t, nullptr, thread_first, nullptr) != 0 ||
      pthread_join(t, nullptr) != 0)
    return 6;
  allocs(10, 5000);
  return 0;
}

static int clone_fn(void *) {
  _exit(child_work(0));
}

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "syscall";
  void *p = nullptr;
  cudaMalloc(&p, 999);
  parent_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  fflush(stdout);
  if (pipe(g_pipe) != 0)
    return 2;
  pid_t pid;
  if (!strcmp(how, "clone")) {
    static char stack[256 * 1024] __attribute__((aligned(16)));
    pid = clone(clone_fn, stack + sizeof stack, SIGCHLD, nullptr);
  } else if (!strcmp(how, "vfork")) {
    pid = vfork();
    if (pid == 0) {
      void *q = nullptr;
      cudaMalloc(&q, 9999);
      _exit(0);
    }
  } else {
    pid = raw_clone();
    if (pid == 0)
      _exit(!strcmp(how, "thread") ? thread_child() : child_work(!strcmp(how, "grandchild")));
  }
  if (pid < 0)
    return 2;
  allocs(1000, 1000);
  for (int i = 0; i < 3; i++) parent_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  pid_t grand = 0;
  if (!strcmp(how, "grandchild") && read(g_pipe[0], &grand, sizeof grand) != sizeof grand)
    return 2;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid)
    return 2;
  cudaFree(p);
  if (grand)
    printf("parent %d child %d grandchild %d\n", (int)getpid(), (int)pid, (int)grand);
  else
    printf("parent %d child %d\n", (int)getpid(), (int)pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
