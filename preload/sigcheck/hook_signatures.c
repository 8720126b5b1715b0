/* hook_signatures.c — a build check: every hooked runtime and driver entry
 * point has the toolkit's signature.
 *
 * Contract: compiled (never linked, never loaded) against the CUDA
 * toolkit's cuda_runtime_api.h, cuda_profiler_api.h and cuda.h, twice:
 * without GT_SIGCHECK_PT for apis.h's L entries (their plain or _v2 names),
 * with it and CUDA_API_PER_THREAD_DEFAULT_STREAM for the PT entries (the
 * headers declare the _ptsz/_ptds names only then: an apis.h twin the
 * toolkit does not declare fails too). For each RT and DRV entry it
 * asserts that the header's type of &name is the shim's (hook_sigs.h, the
 * types the shim declares its hooks and real functions with, read here in
 * the toolkit's types), so a hook whose hand-written signature drifts from
 * the header fails the build with the entry's name. The entries listed
 * below as GT_SIGCHECK_SKIP_* are not checked, each for its reason; the
 * last assertion makes sure that every entry of apis.h is checked, skipped
 * or of a family that exports no hook (NVTX, META).
 */
#ifdef GT_SIGCHECK_PT
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#endif
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "gputrace/apis.h"
#include "hook_sigs.h"

/* A dim3 in hook_sigs.h: the shim takes it as two integer registers
 * (cuda_abi.h GT_DIM3_PARAM), the calling convention's way of passing the
 * toolkit's dim3. */
#define GT_SIG_DIM3 dim3
_Static_assert(sizeof(dim3) == 12, "dim3 is three 32-bit words (cuda_abi.h)");

/* Not checkable, with the reason (names as apis.h spells them):
 *  - __cudaLaunchKernel(_ptsz): declared only for C++, inside nvcc's
 *    launch stubs (crt/device_functions.h).
 *  - cudaMemPrefetchAsync, cudaMemcpyBatchAsync, cudaMemcpy3DBatchAsync
 *    (and _ptsz): CUDA 12 and 13 export different signatures under one
 *    name; the hook takes the longer list and reads it by the library's ABI
 *    (hooks_copy3d.c), so it is neither header's type. */
#define GT_SIGCHECK_SKIP___cudaLaunchKernel ~, 1
#define GT_SIGCHECK_SKIP___cudaLaunchKernel_ptsz ~, 1
#define GT_SIGCHECK_SKIP_cudaMemPrefetchAsync ~, 1
#define GT_SIGCHECK_SKIP_cudaMemPrefetchAsync_ptsz ~, 1
#define GT_SIGCHECK_SKIP_cudaMemcpyBatchAsync ~, 1
#define GT_SIGCHECK_SKIP_cudaMemcpyBatchAsync_ptsz ~, 1
#define GT_SIGCHECK_SKIP_cudaMemcpy3DBatchAsync ~, 1
#define GT_SIGCHECK_SKIP_cudaMemcpy3DBatchAsync_ptsz ~, 1
#define GT_SIGCHECK_SKIPPED 8

/* The shim's type of each base (hook_sigs.h), in the toolkit's types. */
#define GT_X_SIG_TYPE(base, ret, params) typedef ret gt_sig_##base params;
GT_SIG_LIST(GT_X_SIG_TYPE)

/* 1 when GT_SIGCHECK_SKIP_<name> is defined above, else 0 (it expands to
 * two arguments, pushing 1 into the second's place). */
#define GT_SECOND(a, b, ...) b
#define GT_PROBE(...) GT_SECOND(__VA_ARGS__, 0, ~)
#define GT_CAT(a, b) GT_CAT_(a, b)
#define GT_CAT_(a, b) a##b

/* The assertion for one entry: `name` has the type of `sig`. */
#define GT_SIGCHECK_0(name, sig)                                                         \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), sig *),                 \
                 #name ": its type in preload/hook_sigs.h differs from the toolkit "     \
                       "header");
#define GT_SIGCHECK_1(name, sig)
#define GT_SIGCHECK(name, sig)                                                           \
  GT_CAT(GT_SIGCHECK_, GT_PROBE(GT_SIGCHECK_SKIP_##name))(name, sig)

/* The entries this compilation checks: L ones, or with GT_SIGCHECK_PT the
 * PT ones (the other half is checked by the other compilation). The
 * shim's type is named by pasting here, where `base` is not yet expanded:
 * the headers define some base names as macros (cuMemAlloc ->
 * cuMemAlloc_v2; cudaMemcpy -> cudaMemcpy_ptds with PT). */
#ifdef GT_SIGCHECK_PT
#define GT_SIGCHECK_RT_L(name, sig)
#define GT_SIGCHECK_RT_PT GT_SIGCHECK
#else
#define GT_SIGCHECK_RT_L GT_SIGCHECK
#define GT_SIGCHECK_RT_PT(name, sig)
#endif
#define GT_SIGCHECK_DRV_L GT_SIGCHECK_RT_L
#define GT_SIGCHECK_DRV_PT GT_SIGCHECK_RT_PT
#define GT_SIGCHECK_NVTX_L(name, sig) /* hooked through NVTX's callback tables */
#define GT_SIGCHECK_META_L(name, sig) /* records about the trace: no function */
#define GT_X_CHECK(name, kind, family, base, variant, ...)                               \
  GT_SIGCHECK_##family##_##variant(name, gt_sig_##base)
GT_API_LIST(GT_X_CHECK)

/* Every entry accounted for: the RT and DRV ones checked (here or by the
 * other compilation) or skipped above, the rest exporting no hook. */
#define GT_X_COUNT_RT(name) +1
#define GT_X_COUNT_DRV(name) +1
#define GT_X_COUNT_NVTX(name)
#define GT_X_COUNT_META(name)
#define GT_X_COUNT(name, kind, family, ...) GT_X_COUNT_##family(name)
#define GT_X_COUNT_SKIP(name, kind, family, ...) +GT_PROBE(GT_SIGCHECK_SKIP_##name)
enum {
  GT_SIGCHECK_HOOKED = 0 GT_API_LIST(GT_X_COUNT),
  GT_SIGCHECK_SKIPS_FOUND = 0 GT_API_LIST(GT_X_COUNT_SKIP),
  GT_SIGCHECK_CHECKED = GT_SIGCHECK_HOOKED - GT_SIGCHECK_SKIPS_FOUND
};
_Static_assert(GT_SIGCHECK_SKIPS_FOUND == GT_SIGCHECK_SKIPPED,
               "every GT_SIGCHECK_SKIP_ name is an entry of apis.h");
/* With GT_SIGCHECK_MAIN, a program saying how many entries are checked
 * (tests/unit/hook_signatures_planted.py prints it; nothing here needs a
 * CUDA library to link: &name is never evaluated). */
#ifdef GT_SIGCHECK_MAIN
#include <stdio.h>
int main(void) {
  printf("%d of the %d hooked entries of apis.h checked against the toolkit's headers, "
         "%d skipped\n",
         GT_SIGCHECK_CHECKED, GT_SIGCHECK_HOOKED, GT_SIGCHECK_SKIPPED);
  return 0;
}
#endif
