/* unwind_lib.c — a helper library of test_unwind.c, built three ways
 * (tests/CMakeLists.txt): -O2 -fomit-frame-pointer, -O0
 * -fno-omit-frame-pointer, and stripped of its symbols. UW_PREFIX names the
 * build's functions so that the test links all three. The test calls
 * PREFIX_down through the PLT; it calls PREFIX_hop through the PLT too (a
 * default-visibility function of a -fPIC library) and then the test's
 * callback: a recursion that crosses the module boundary at every level.
 */
#define UW_CAT2(a, b) a##b
#define UW_CAT(a, b) UW_CAT2(a, b)
#define UW_FN(name) UW_CAT(UW_PREFIX, name)

int UW_FN(_hop)(int n, int (*back)(int));

/* Keeps calls from becoming tail calls (each level keeps its frame). */
static volatile int uw_sink;

int UW_FN(_hop)(int n, int (*back)(int)) {
  int r = back(n);
  uw_sink = r;
  return r + 1;
}

int UW_FN(_down)(int n, int (*back)(int)) {
  int r = UW_FN(_hop)(n, back);
  uw_sink = r;
  return r + 1;
}
