/* unwind_dl.c — test_unwind.c's dlopen/dlclose pair, built twice
 * (UW_DL_B: the second): the same size and layout, so that B, loaded where
 * A was, has its code at A's addresses, but uw_dl_step (hand-written, the
 * first code of the library) keeps a different frame at the same address:
 * a rule cached for A would read B's frame wrongly.
 *
 * uw_dl_chain(n, back) calls uw_dl_step(n, back), which calls back(n).
 */
int uw_dl_step(int n, int (*back)(int));

#ifndef UW_DL_B
/* A: push rbx, 16 bytes more; CFA = rsp + 32 at the call. */
__asm__(".text\n"
        ".globl uw_dl_step\n"
        ".type uw_dl_step,@function\n"
        "uw_dl_step:\n"
        ".cfi_startproc\n"
        "  push %rbx\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbx, -16\n"
        "  sub $16, %rsp\n"
        ".cfi_def_cfa_offset 32\n"
        "  call *%rsi\n"
        "  add $16, %rsp\n"
        ".cfi_def_cfa_offset 16\n"
        "  pop %rbx\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size uw_dl_step, .-uw_dl_step\n");
#else
/* B: 40 bytes; CFA = rsp + 48 at the call (same code size as A's). */
__asm__(".text\n"
        ".globl uw_dl_step\n"
        ".type uw_dl_step,@function\n"
        "uw_dl_step:\n"
        ".cfi_startproc\n"
        "  sub $40, %rsp\n"
        ".cfi_def_cfa_offset 48\n"
        "  nop\n"
        "  call *%rsi\n"
        "  add $40, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "  nop\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size uw_dl_step, .-uw_dl_step\n");
#endif

static volatile int uw_dl_sink;

int uw_dl_chain(int n, int (*back)(int)) {
  int r = uw_dl_step(n, back);
  uw_dl_sink = r;
  return r + 1;
}
