// stack_reuse.cu — allocations whose stacks repeat, change at the same
// stack pointer, and differ in depth, on three threads and in a forked
// child: what the shim's replay of a thread's last walk (preload/unwind.c)
// and its reuse of the last stack's id (preload/stacks.c) must tell apart
// (tests/e2e/test_stack_reuse.py):
//   take(), line 24: every cudaMalloc (256 B, freed at once);
//   site_a() line 28, site_b() line 32: take's two callers, alike;
//   pattern(), lines 38/40: a a a b, n times (site_b called at the same
//     stack pointer as site_a); from main (line 57) and 2 threads (line 52);
//   deeper(), lines 45/47: site_a 0, 1 and 2 frames further down (line 58),
//     n times each;
//   main, line 64: site_a in a loop whose second turn is a forked child's.
//   expect: 15N+1 allocations in the parent, 1 in the child
// usage: stack_reuse [N=100]
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>
static volatile int sink;
__attribute__((noinline)) void take(void) {
  void *p = nullptr;
  if (cudaMalloc(&p, 256) == cudaSuccess) cudaFree(p);
  sink = 0;
}
__attribute__((noinline)) void site_a(void) {
  take();
  sink = 1;
}
__attribute__((noinline)) void site_b(void) {
  take();
  sink = 2;
}
__attribute__((noinline)) void pattern(int n) {
  for (int i = 0; i < 4 * n; i++) {
    if (i % 4 != 3)
      site_a();
    else
      site_b();
  }
}
__attribute__((noinline)) void deeper(int d) {
  if (d == 0)
    site_a();
  else
    deeper(d - 1);
  sink = 3;
}
static int g_n;
static void *worker(void *) {
  pattern(g_n);
  return nullptr;
}
int main(int argc, char **argv) {
  g_n = argc > 1 ? atoi(argv[1]) : 100;
  pattern(g_n);
  for (int i = 0; i < 3 * g_n; i++) deeper(i % 3);
  pthread_t t[2];
  for (auto &th : t) pthread_create(&th, nullptr, worker, nullptr);
  for (auto &th : t) pthread_join(th, nullptr);
  pid_t child = -1;
  for (int k = 0; k < 2; k++) {
    site_a(); // the child's first call: the parent's last stack, in its own table
    if (k == 0 && (child = fork()) < 0) return 1;
    if (k == 0 && child > 0) break;
  }
  if (child == 0) { fflush(stdout); _exit(0); }
  int status = 0;
  waitpid(child, &status, 0);
  printf("stack_reuse: %d allocations, child %d\n", 15 * g_n + 1, WEXITSTATUS(status));
  return 0;
}
