/* test_cuda_abi.c — the shim's own declarations of CUDA types
 * (preload/cuda_abi.h, so that it builds without the toolkit) have the
 * toolkit's layout: every size and member offset of cuda_abi_list.h equals
 * the one cuda_abi_toolkit.c computed from cuda.h and cuda_runtime_api.h. */
#include <stdio.h>

#include "cuda_abi.h"
#include "cuda_abi_list.h"

extern const size_t gt_abi_toolkit[];
extern const size_t gt_abi_toolkit_n;

#define GT_ABI_SIZE_NAME(t) "sizeof(" #t ")",
#define GT_ABI_OFFSET_NAME(t, m) "offsetof(" #t ", " #m ")",

static const size_t ours[] = {GT_ABI_LIST(GT_ABI_SIZE, GT_ABI_OFFSET)};
static const char *const names[] = {GT_ABI_LIST(GT_ABI_SIZE_NAME, GT_ABI_OFFSET_NAME)};

int main(void) {
  size_t n = sizeof ours / sizeof ours[0];
  int fail = 0;
  if (n != gt_abi_toolkit_n) {
    fprintf(stderr, "FAIL: %zu entries here, %zu in the toolkit table\n", n,
            gt_abi_toolkit_n);
    return 1;
  }
  for (size_t i = 0; i < n; i++)
    if (ours[i] != gt_abi_toolkit[i]) {
      fprintf(stderr, "FAIL: %s is %zu in cuda_abi.h, %zu in the toolkit\n", names[i],
              ours[i], gt_abi_toolkit[i]);
      fail = 1;
    }
  if (!fail)
    printf("%zu sizes and offsets agree with the toolkit\n", n);
  return fail;
}
