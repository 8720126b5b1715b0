/* test_unwind.c — preload/unwind.c's frames against glibc's backtrace(),
 * frame for frame, wherever a traced program may take a stack:
 *   1. C recursion 30 deep in this program;
 *   2. recursion across the boundary of helper libraries (unwind_lib.c)
 *      built without frame pointers (-O2) and with them (-O0), through the
 *      PLT both ways (10 levels each way);
 *   3. the same through a stripped helper library (.eh_frame kept);
 *   4. C++ with an exception in flight (unwind_cxx.cpp): inside a destructor
 *      run by the unwinding, and inside the catch block;
 *   5. signal handlers: SIGUSR1 raised from a deep chain, SIGALRM
 *      interrupting a busy loop: walked through the signal frame, whole;
 *   6. dlopen/dlclose: library A (unwind_dl.c) unloaded and library B loaded
 *      at A's address, with another frame at the same code address: B's
 *      rules are computed anew, no rule of A's is used;
 *   7. JIT code (a trampoline without unwind info, mmap'd): the stack ends
 *      there, as backtrace()'s does, marked cut, exactly once a capture;
 *   8. 4 threads, 2000 captures each at different depths, concurrently
 *      (also run under ThreadSanitizer);
 *   9. a frame whose rbp holds something else around its call
 *      (odd_rbp.S): a small integer, the first byte above the stack (a
 *      PROT_NONE page), a heap block whose words lead to an unmapped
 *      address — under both unwinders (cached, and GPUTRACE_UNWIND=
 *      backtrace, whose libgcc faults there): no fault, the stack ends at
 *      that frame's return address, marked cut;
 *  10. a frame GCC realigned through a DRAP register (unwind_odd.c): the
 *      CFA loaded from the frame, walked whole;
 *  11. the replay of a thread's last walk: the same stack again keeps its
 *      walk number; two callers at the same stack pointer (one return
 *      address differs), alternating, and the same chain entered from
 *      another caller one frame up, each get walks of their own, every
 *      one backtrace()'s frames.
 * Every capture of cases 1-8 and 10 compares gt_unwind's frames with
 * backtrace()'s taken in the same function: the counts must be equal, and
 * entries 1.. (entry 0 is each one's own call site). A mismatch prints both
 * lists with dladdr's names. Where no frame needs it, gt_unwind_counts()'s
 * cut count must not grow.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "unwind.h"

#define MAXF 200

/* The helper libraries (unwind_lib.c, unwind_cxx.cpp), linked. */
int uw_nofp_down(int n, int (*back)(int));
int uw_fp_down(int n, int (*back)(int));
int uw_strip_down(int n, int (*back)(int));
int uw_cxx_throw(int depth, void (*in_dtor)(void), void (*in_catch)(void));
int uw_realigned(int n, int (*back)(int));                     /* unwind_odd.c */
int uw_bad_rbp(int (*back)(int), int arg, uintptr_t fake_rbp); /* odd_rbp.S */
void uw_bad_rbp_ret(void); /* its call's return address */

static _Thread_local volatile int sink; /* stores after calls: no tail calls */
static void keep(int r) {
  sink = r;
  __asm__ volatile("" ::: "memory");
}

/* ---- the comparison ---- */

static void print_frames(const char *label, void **ips, int n) {
  fprintf(stderr, "  %s (%d frames):\n", label, n);
  for (int i = 0; i < n; i++) {
    Dl_info info;
    const char *sym = "?", *obj = "?";
    uintptr_t off = 0;
    if (dladdr(ips[i], &info)) {
      obj = info.dli_fname ? info.dli_fname : "?";
      sym = info.dli_sname ? info.dli_sname : "?";
      off = (uintptr_t)ips[i] -
            (uintptr_t)(info.dli_saddr ? info.dli_saddr : info.dli_fbase);
    }
    fprintf(stderr, "    #%-3d %p %s+0x%lx (%s)\n", i, ips[i], sym, (unsigned long)off,
            obj);
  }
}

/* glibc's own backtrace(), the reference: a sanitizer's interceptor of
 * backtrace adds its own frame. */
static int (*real_backtrace)(void **, int) = backtrace;

static void find_real_backtrace(void) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  void *bt = libc ? dlsym(libc, "backtrace") : NULL;
  CHECK_MSG(bt != NULL, "glibc's backtrace not found: %s", dlerror());
  if (bt)
    memcpy(&real_backtrace, &bt, sizeof bt);
  if (libc)
    dlclose(libc);
}

/* Differences printed in full: the first few (a thread case may make
 * thousands). */
static atomic_int g_printed;

/* gt_unwind's how and walk number at this thread's last compare. */
static _Thread_local unsigned t_fell_back;
static _Thread_local uint64_t t_walk;

/* Both stacks, taken here: the number of entries 1.. that differ, or -1 if
 * the counts differ; both lists printed on a difference. */
__attribute__((noinline)) static int compare_max(const char *what, int max) {
  void *mine[MAXF], *ref[MAXF];
  struct gt_unwind_info info;
  int n = gt_unwind(mine, max, &info);
  t_fell_back = info.how;
  t_walk = info.walk;
  int m = real_backtrace(ref, max);
  int bad = n == m ? 0 : -1;
  for (int i = 1; i < n && i < m; i++)
    bad += bad >= 0 && mine[i] != ref[i];
  if ((bad != 0 || n < (max < 2 ? max : 2)) && atomic_fetch_add(&g_printed, 1) < 8) {
    fprintf(stderr, "test_unwind: %s: gt_unwind and backtrace differ (%s)\n", what,
            bad < 0 ? "count" : "frames");
    print_frames("gt_unwind", mine, n);
    print_frames("backtrace", ref, m);
  }
  if (bad == 0 && n < (max < 2 ? max : 2))
    bad = -1;
  keep(n);
  return bad;
}

__attribute__((noinline)) static int compare(const char *what) {
  int r = compare_max(what, MAXF);
  keep(r);
  return r;
}

/* The stack's depth as backtrace() sees it from the caller. */
__attribute__((noinline)) static int depth_here(void) {
  void *ref[MAXF];
  int n = real_backtrace(ref, MAXF);
  keep(n);
  return n - 1;
}

static uint64_t fallbacks(void) { /* stacks cut, or from backtrace() */
  struct gt_unwind_counts c;
  gt_unwind_counts(&c);
  return c.cut + c.backtrace;
}
static uint64_t rules(void) {
  struct gt_unwind_counts c;
  gt_unwind_counts(&c);
  return c.rules;
}

/* ---- 1. C recursion ---- */

static int g_depth_at_bottom;

__attribute__((noinline)) static int rec(int n, int max) {
  int r;
  if (n == 0) {
    g_depth_at_bottom = depth_here();
    r = compare_max("recursion", max);
    r += t_fell_back != 0;
  } else {
    r = rec(n - 1, max);
  }
  keep(r);
  return r;
}

static void test_recursion(void) {
  uint64_t fb = fallbacks();
  int top = depth_here();
  CHECK_EQ_U64(rec(30, MAXF), 0);
  CHECK_MSG(g_depth_at_bottom >= top + 31, "30 deep: %d frames, %d at the top",
            g_depth_at_bottom, top);
  CHECK_EQ_U64(rec(30, MAXF), 0); /* the second time from the cache */
  CHECK_EQ_U64(rec(30, 5), 0);    /* cut short as backtrace cuts */
  CHECK_EQ_U64(rec(3, 1), 0);
  CHECK_EQ_U64(fallbacks(), fb);
}

/* ---- 2, 3. across helper libraries ---- */

static int g_lib_bad;

#define BACK_FN(name, down, what)                                                        \
  __attribute__((noinline)) static int name(int n) {                                     \
    int r = n == 0 ? compare(what) : down(n - 1, name);                                  \
    if (n == 0 && (r != 0 || t_fell_back != 0))                                          \
      g_lib_bad++;                                                                       \
    keep(r);                                                                             \
    return r;                                                                            \
  }
BACK_FN(back_nofp, uw_nofp_down, "library without frame pointers")
BACK_FN(back_fp, uw_fp_down, "library with frame pointers")
BACK_FN(back_strip, uw_strip_down, "stripped library")

static void test_libraries(void) {
  uint64_t fb = fallbacks();
  int (*backs[])(int) = {back_nofp, back_fp, back_strip};
  for (int i = 0; i < 3; i++) {
    g_lib_bad = 0;
    backs[i](10);
    CHECK_MSG(g_lib_bad == 0, "library %d: frames differ", i);
  }
  CHECK_EQ_U64(fallbacks(), fb);
}

/* ---- 4. C++ exceptions ---- */

static int g_cxx_bad, g_cxx_calls;
static void capture_in_dtor(void) {
  g_cxx_calls++;
  g_cxx_bad += compare("C++ destructor during unwinding") != 0 || t_fell_back != 0;
}
static void capture_in_catch(void) {
  g_cxx_calls++;
  g_cxx_bad += compare("C++ catch block") != 0 || t_fell_back != 0;
}

static void test_cxx(void) {
  uint64_t fb = fallbacks();
  for (int i = 0; i < 2; i++) /* cold, then cached */
    CHECK_EQ_U64(uw_cxx_throw(8, capture_in_dtor, capture_in_catch), 1);
  CHECK_EQ_U64(g_cxx_calls, 4);
  CHECK_EQ_U64(g_cxx_bad, 0);
  CHECK_EQ_U64(fallbacks(), fb);
}

/* ---- 5. signal handlers ---- */

static volatile sig_atomic_t g_sig_bad, g_sig_calls;
static volatile sig_atomic_t g_alarm_done;

static void on_signal(int sig) {
  g_sig_bad += compare(sig == SIGUSR1 ? "SIGUSR1 handler" : "SIGALRM handler") != 0 ||
               t_fell_back != 0; /* through the signal frame, whole */
  g_sig_calls++;
  if (sig == SIGALRM)
    g_alarm_done = 1;
}

__attribute__((noinline)) static int raise_deep(int n) {
  int r = n == 0 ? raise(SIGUSR1) : raise_deep(n - 1);
  keep(r);
  return r;
}

__attribute__((noinline)) static int spin_deep(int n) {
  int r = 0;
  if (n > 0) {
    r = spin_deep(n - 1);
  } else {
    struct itimerval it = {{0, 0}, {0, 2000}}; /* 2 ms, once */
    setitimer(ITIMER_REAL, &it, NULL);
    for (unsigned long i = 0; !g_alarm_done; i++)
      sink = (int)(i * 2654435761u);
  }
  keep(r);
  return r;
}

/* ThreadSanitizer runs a handler of an asynchronous signal at its next
 * interceptor, never in the interrupted code: a busy loop is never
 * interrupted (and no signal frame would be on the stack). */
#ifdef __SANITIZE_THREAD__
#define ALARMS 0
#else
#define ALARMS 3
#endif

static void test_signals(void) {
  if (ALARMS == 0)
    printf("test_unwind: SIGALRM in a busy loop not run under ThreadSanitizer\n");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  for (int i = 0; i < 3; i++) {
    uint64_t fb = fallbacks();
    raise_deep(20);
    CHECK_MSG(fallbacks() == fb, "SIGUSR1 %d: %llu stacks cut", i,
              (unsigned long long)(fallbacks() - fb));
  }
  for (int i = 0; i < ALARMS; i++) {
    uint64_t fb = fallbacks();
    g_alarm_done = 0;
    spin_deep(15);
    CHECK_MSG(fallbacks() == fb, "SIGALRM %d: %llu stacks cut", i,
              (unsigned long long)(fallbacks() - fb));
  }
  CHECK_EQ_U64(g_sig_calls, 3 + ALARMS);
  CHECK_EQ_U64(g_sig_bad, 0);
  signal(SIGUSR1, SIG_DFL);
  signal(SIGALRM, SIG_DFL);
}

/* ---- 6. dlopen, dlclose, another library at the same address ---- */

static int (*g_dl_chain)(int, int (*)(int));
static int g_dl_bad;

__attribute__((noinline)) static int back_dl(int n) {
  int r = n == 0 ? compare("dlopen'd library") : g_dl_chain(n - 1, back_dl);
  if (n == 0 && (r != 0 || t_fell_back != 0))
    g_dl_bad++;
  keep(r);
  return r;
}

/* Opens path; *base its load address, *step uw_dl_step's. */
static void *open_dl(const char *path, uintptr_t *base, void **step) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(h != NULL, "dlopen %s: %s", path, dlerror());
  if (!h)
    return NULL;
  struct link_map *lm = NULL;
  CHECK(dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0);
  *base = lm ? (uintptr_t)lm->l_addr : 0;
  *step = dlsym(h, "uw_dl_step");
  *(void **)&g_dl_chain = dlsym(h, "uw_dl_chain");
  CHECK(*step != NULL && g_dl_chain != NULL);
  return h;
}

static void test_dlopen(void) {
  uintptr_t base_a, base_b;
  void *step_a, *step_b;
  uint64_t fb = fallbacks();
  void *a = open_dl(UW_DL_A, &base_a, &step_a);
  if (!a)
    return;
  for (int i = 0; i < 2; i++)
    back_dl(6);
  CHECK_EQ_U64(g_dl_bad, 0);
  CHECK(dlclose(a) == 0);
  CHECK_MSG(dlopen(UW_DL_A, RTLD_NOW | RTLD_NOLOAD) == NULL,
            "A still loaded after dlclose");
  uint64_t ru = rules();
  void *b = open_dl(UW_DL_B, &base_b, &step_b);
  if (!b)
    return;
  /* Not a skip: without B at A's address the case tests nothing. */
  CHECK_MSG(base_a == base_b && step_a == step_b,
            "B not loaded at A's address (A %#lx step %p, B %#lx step %p): "
            "the stale-rule case cannot be tested",
            (unsigned long)base_a, step_a, (unsigned long)base_b, step_b);
  CHECK_MSG(memcmp(step_b, "\x48\x83\xec\x28", 4) == 0, /* sub $40, %rsp */
            "B's uw_dl_step is not B's code");
  back_dl(6);
  CHECK_EQ_U64(g_dl_bad, 0);
  CHECK_MSG(rules() > ru, "no rule computed for B: %llu before, %llu after",
            (unsigned long long)ru, (unsigned long long)rules());
  back_dl(6);
  CHECK_EQ_U64(g_dl_bad, 0);
  CHECK(dlclose(b) == 0);
  CHECK_EQ_U64(fallbacks(), fb);
}

/* ---- 7. JIT code ---- */

static int g_jit_bad;
__attribute__((noinline)) static int in_jit_callee(void) {
  int r = compare("called from JIT code");
  g_jit_bad += r != 0 || t_fell_back != GT_UNWIND_CUT;
  keep(r);
  return r;
}

static void test_jit(void) {
  /* push rbp; mov rbp,rsp; call *rdi; pop rbp; ret (rsp 16-aligned at the call) */
  static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
  long page = sysconf(_SC_PAGESIZE);
  void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  CHECK(p != MAP_FAILED);
  if (p == MAP_FAILED)
    return;
  memcpy(p, code, sizeof code);
  CHECK(mprotect(p, (size_t)page, PROT_READ | PROT_EXEC) == 0);
  int (*jit)(int (*)(void));
  memcpy(&jit, &p, sizeof p);
  for (int i = 0; i < 2; i++) {
    uint64_t fb = fallbacks();
    keep(jit(in_jit_callee));
    CHECK_MSG(fallbacks() == fb + 1, "JIT %d: %llu stacks cut, not 1", i,
              (unsigned long long)(fallbacks() - fb));
  }
  CHECK_EQ_U64(g_jit_bad, 0);
  munmap(p, (size_t)page);
}

/* ---- 9. rbp elsewhere ---- */

static _Thread_local void *t_odd[MAXF];
static _Thread_local int t_odd_n;
static _Thread_local unsigned t_odd_how;

__attribute__((noinline)) static int capture_under_bad_rbp(int arg) {
  struct gt_unwind_info info;
  t_odd_n = gt_unwind(t_odd, MAXF, &info);
  t_odd_how = info.how;
  keep(t_odd_n);
  return arg;
}

/* gt_unwind under uw_bad_rbp with rbp = fake, both unwinders: 0 when the
 * stack is exactly [capture_under_bad_rbp, uw_bad_rbp's return], cut. */
static int odd_case(const char *what, uintptr_t fake) {
  int bad = 0;
  for (int cached = 1; cached >= 0; cached--) {
    gt_unwind_init(cached, dlsym);
    uint64_t cut0 = fallbacks();
    keep(uw_bad_rbp(capture_under_bad_rbp, 7, fake));
    int ok = t_odd_n == 2 && t_odd[1] == (void *)(uintptr_t)uw_bad_rbp_ret &&
             t_odd_how == GT_UNWIND_CUT && fallbacks() == cut0 + 1;
    if (!ok) {
      fprintf(stderr, "test_unwind: rbp %s (%s): %d frames, how %u\n", what,
              cached ? "cached" : "backtrace", t_odd_n, t_odd_how);
      print_frames("gt_unwind", t_odd, t_odd_n);
      bad++;
    }
  }
  gt_unwind_init(1, dlsym);
  return bad;
}

struct odd_thread {
  uintptr_t top; /* the first byte above the thread's stack: PROT_NONE */
  int bad;
};
static void *odd_thread_main(void *arg) {
  struct odd_thread *t = arg;
  t->bad = odd_case("above the stack", t->top);
  return NULL;
}

static void test_bad_rbp(void) {
  CHECK_EQ_U64(odd_case("a small integer", 0x1000), 0);
  /* a heap block like a saved frame: rbp 0x10, a return address into
   * uw_bad_rbp (whose CFI libgcc then follows through rbp = 0x10) */
  uintptr_t *heap = malloc(4 * sizeof *heap);
  CHECK(heap != NULL);
  if (heap) {
    heap[0] = 0x10;
    heap[1] = (uintptr_t)uw_bad_rbp_ret;
    CHECK_EQ_U64(odd_case("on the heap", (uintptr_t)heap), 0);
    free(heap);
  }
  /* a thread on a stack of ours, a PROT_NONE page above it */
  size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 2 << 20; /* TSan wants 0.9 MiB */
  char *m =
      mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(m != MAP_FAILED);
  if (m == MAP_FAILED)
    return;
  CHECK(mprotect(m + size, page, PROT_NONE) == 0);
  struct odd_thread t = {(uintptr_t)(m + size), -1};
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, m, size);
  int made = pthread_create(&th, &attr, odd_thread_main, &t) == 0;
  CHECK(made);
  if (made)
    pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  CHECK_EQ_U64(t.bad, 0);
  munmap(m, size + page);
}

/* ---- 10. a realigned (DRAP) frame ---- */

static int g_drap_bad;
__attribute__((noinline)) static int back_realigned(int n) {
  int r = compare("a frame realigned through a DRAP register");
  g_drap_bad += r != 0 || t_fell_back != 0;
  keep(r);
  return n;
}

static void test_realigned(void) {
  uint64_t fb = fallbacks();
  for (int i = 0; i < 2; i++) /* cold, then cached */
    keep(uw_realigned(40 + i, back_realigned));
  CHECK_EQ_U64(g_drap_bad, 0);
  CHECK_EQ_U64(fallbacks(), fb);
}

/* ---- 8. threads ---- */

#define THREADS 4
#define CAPTURES 2000

__attribute__((noinline)) static int thread_rec(int n) {
  int r = n == 0 ? compare("thread") + (t_fell_back != 0) : thread_rec(n - 1);
  keep(r);
  return r;
}

static void *thread_main(void *arg) {
  int id = (int)(intptr_t)arg, bad = 0;
  for (int i = 0; i < CAPTURES; i++)
    bad += thread_rec((i * 7 + id * 3) % 40) != 0;
  return (void *)(intptr_t)bad;
}

/* ---- 11. replay ---- */

__attribute__((noinline)) static int replay_a(void) {
  int r = compare("replay a");
  keep(r);
  return r;
}
__attribute__((noinline)) static int replay_b(void) {
  int r = compare("replay b");
  keep(r + 1);
  return r;
}
__attribute__((noinline)) static int replay_outer(int (*fn)(void)) {
  int r = fn();
  keep(r);
  return r;
}
__attribute__((noinline)) static int replay_outer2(int (*fn)(void)) {
  int r = fn();
  keep(r + 2);
  return r;
}

static void test_replay(void) {
  uint64_t cuts = fallbacks();
  /* Each step at one call site (the loop's), so only what a step names
   * differs: a a b a, then a a from the other caller. */
  int (*const fns[2])(void) = {replay_a, replay_b};
  int (*const outers[2])(int (*)(void)) = {replay_outer, replay_outer2};
  static const int steps[6][2] = {{0, 0}, {0, 0}, {0, 1}, {0, 0}, {1, 0}, {1, 0}};
  uint64_t walk[6];
  int bad = 0;
  for (int i = 0; i < 6; i++) {
    bad += outers[steps[i][0]](fns[steps[i][1]]) != 0;
    walk[i] = t_walk;
  }
  CHECK_MSG(walk[0] != 0 && walk[1] == walk[0],
            "the same stack again: walk %llu, then %llu", (unsigned long long)walk[0],
            (unsigned long long)walk[1]);
  CHECK(walk[2] != 0 && walk[2] != walk[0]); /* the same sp: one return address differs */
  CHECK(walk[3] != walk[0] && walk[3] != walk[2]); /* the kept walk was b's: anew */
  CHECK(walk[4] != walk[3] && walk[5] == walk[4]); /* from the other caller, then again */
  for (int i = 0; i < 2000; i++) /* a a a b, from either caller, in turn */
    bad += outers[(i / 4) & 1](fns[(i & 3) == 3]) != 0;
  CHECK_MSG(bad == 0, "replayed walks differing from backtrace(): %d", bad);
  CHECK(fallbacks() == cuts);
}

static void test_threads(void) {
  uint64_t fb = fallbacks();
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    CHECK(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < THREADS; i++) {
    void *bad = NULL;
    pthread_join(t[i], &bad);
    CHECK_MSG(bad == NULL, "thread %d: %ld captures differ", i, (long)(intptr_t)bad);
  }
  CHECK_EQ_U64(fallbacks(), fb);
}

int main(int argc, char **argv) {
  gt_unwind_init(1, dlsym);
  find_real_backtrace();
  CHECK(dlsym(RTLD_DEFAULT, "_dl_find_object") != NULL); /* glibc 2.35+ here */
  /* argv[1]: the cases to run ("threads" under ThreadSanitizer), else all */
  const char *only = argc > 1 ? argv[1] : NULL;
#define CASE(name)                                                                       \
  if (!only || strstr(only, #name))                                                      \
  test_##name()
  CASE(recursion);
  CASE(libraries);
  CASE(cxx);
  CASE(signals);
  CASE(dlopen);
  CASE(jit);
  CASE(bad_rbp);
  CASE(realigned);
  CASE(replay);
  CASE(threads);
  return check_finish("test_unwind");
}
