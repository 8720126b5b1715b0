/* unwind_odd.c — a helper library of test_unwind.c (-O2): a frame GCC
 * realigns through a DRAP register (an over-aligned local and an alloca:
 * its CFI is "DW_CFA_def_cfa_expression: DW_OP_breg6 off; DW_OP_deref" and
 * rbp's "DW_CFA_expression: DW_OP_breg6 0", as in thousands of cuBLAS's
 * functions), calling back(n) from its body. */
#include <alloca.h>
#include <string.h>

static volatile int uw_sink;

__attribute__((noinline)) int uw_realigned(int n, int (*back)(int)) {
  char aligned[64] __attribute__((aligned(64)));
  char *dynamic = alloca((size_t)n + 16);
  memset(aligned, n, sizeof aligned);
  memset(dynamic, n, (size_t)n + 16);
  int r = back(n);
  uw_sink = aligned[n % 64] + dynamic[n];
  return r + uw_sink;
}
