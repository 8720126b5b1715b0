/* holders.c — see holders.h. */
#include "holders.h"

#include <string.h>

#define MAX_FRAMES 128

/* clang-format off */
static const struct gt_holder holders[] = {
    {"pytorch_caching_allocator", "PyTorch's caching allocator",
     "segments it reserves for tensors and reuses, not tensors themselves: cached "
     "memory is kept until torch.cuda.empty_cache(); PYTORCH_NO_CUDA_MEMORY_CACHING=1 "
     "makes every tensor its own allocation, so leaks name the tensor's line",
     /* its segments only: with caching off NativeCachingAllocator::allocate
        gives each tensor its own cudaMalloc, which is no cache (H200 run) */
     "DeviceCachingAllocator", NULL},
    {"pytorch_expandable_segments", "PyTorch's expandable segments",
     "physical memory PyTorch maps into its reserved ranges (cuMemCreate): as cached "
     "segments, not tensors", "ExpandableSegment", NULL},
    {"xla_bfc_allocator", "XLA's BFC allocator (JAX)",
     "one arena JAX/XLA allocates up front (XLA_PYTHON_CLIENT_PREALLOCATE) and "
     "carves tensors from", "BFCAllocator", NULL},
    {"cupy_memory_pool", "CuPy's memory pool",
     "blocks CuPy's pool keeps for reuse (cupy.get_default_memory_pool().free_all_blocks())",
     "MemoryPool", NULL},
    {"cublas", "cuBLAS", "its workspace, held by a handle until cublasDestroy",
     NULL, "libcublas"},
    {"cudnn", "cuDNN", "its workspace and plans, held until cudnnDestroy", NULL, "libcudnn"},
    {"nccl", "NCCL", "communication buffers of its communicators, held until "
     "ncclCommDestroy", NULL, "libnccl"},
};
/* clang-format on */

static int matches(const struct gt_holder *h, const struct gt_frame *f) {
  return (h->function_has && f->function && strstr(f->function, h->function_has)) ||
         (h->module_prefix && f->module &&
          strncmp(f->module, h->module_prefix, strlen(h->module_prefix)) == 0);
}

const struct gt_holder *gt_holder_of(const struct gt_frame *frames, int n) {
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < sizeof holders / sizeof holders[0]; k++)
      if (!frames[i].python && matches(&holders[k], &frames[i]))
        return &holders[k];
  return NULL;
}

const struct gt_holder *gt_holder_of_stack(struct gt_symtab *t, uint32_t pid,
                                           uint32_t stack_id) {
  if (t == NULL || stack_id == 0)
    return NULL;
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(t, pid, stack_id, f, MAX_FRAMES);
  return gt_holder_of(f, n);
}
