/* cuda_abi_toolkit.c — cuda_abi_list.h's table as the CUDA toolkit's own
 * headers lay the structs out (compiled only when the toolkit is found). */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "cuda_abi_list.h"

const size_t gt_abi_toolkit[] = {GT_ABI_LIST(GT_ABI_SIZE, GT_ABI_OFFSET)};
const size_t gt_abi_toolkit_n = sizeof gt_abi_toolkit / sizeof gt_abi_toolkit[0];
