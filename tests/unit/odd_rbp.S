/* odd_rbp.S — uw_bad_rbp(back, arg, fake_rbp): back(arg) called from a
 * function whose unwind information is the ordinary frame-pointer kind
 * (CFA = rbp + 16) but which loads fake_rbp into rbp around the call, as
 * hand-written assembly, coroutine switches and JIT code do. It runs fine
 * (nothing reads rbp meanwhile, and it is restored before the return); an
 * unwinder that trusts the CFI reads through fake_rbp. uw_bad_rbp_ret is
 * the return address of the call. Used by tests/unit/test_unwind.c and
 * tests/cuda/odd_frames.c. */
	.text
	.globl uw_bad_rbp
	.globl uw_bad_rbp_ret
	.type uw_bad_rbp, @function
	.type uw_bad_rbp_ret, @function /* a code address, as a function's is */
uw_bad_rbp:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq %rbx
	pushq %r12
	movq %rbp, %rbx /* the real frame pointer, kept */
	movq %rdi, %r12 /* back */
	movq %rsi, %rdi /* arg */
	movq %rdx, %rbp /* rbp elsewhere: the CFI no longer holds */
	call *%r12
uw_bad_rbp_ret:
	movq %rbx, %rbp
	popq %r12
	popq %rbx
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size uw_bad_rbp, .-uw_bad_rbp
	.section .note.GNU-stack,"",@progbits
