/* test_dt_sampling.c — preload/devtime.h's sampling countdowns: at 1 in N
 * each copy and memset entry point times its first call and every Nth after
 * it whatever kernels the thread launches, even a kernel whose key (its
 * stub's address, which moves with where the program was loaded) hashes to
 * the slot the entry point's id would take in the launches' table. */
#include <stdint.h>

#include "check.h"
#include "devtime.h"

__thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));
int gt_dt_adaptive;
void gt_dt_adapt(void) {
  gt_tls_dt_calls = 0;
}

/* A stub address that shares the launches' slot of `api`'s id. */
static const void *colliding_stub(unsigned api) {
  uint32_t *slot = gt_dt_skip_of((const void *)(uintptr_t)api);
  for (uintptr_t a = 0x555555554000u;; a += 16)
    if (gt_dt_skip_of((const void *)a) == slot)
      return (const void *)a;
}

int main(void) {
  gt_tls_dt_n = 4;
  const void *memset_key = (const void *)(uintptr_t)GT_API_cudaMemsetAsync;
  const void *copy_key = (const void *)(uintptr_t)GT_API_cudaMemcpyAsync;
  const void *stub = colliding_stub(GT_API_cudaMemsetAsync);
  CHECK(gt_dt_sampled(GT_DT_LAUNCH, stub) == 1);    /* the kernel's first: timed */
  CHECK(gt_dt_sampled(GT_DT_SET, memset_key) == 1); /* the memset's first: timed too */
  CHECK(gt_dt_sampled(GT_DT_COPY, copy_key) == 1);  /* the copy's first */
  for (int i = 0; i < 3; i++) {                     /* then 1 in 4, each its own */
    CHECK(gt_dt_sampled(GT_DT_SET, memset_key) == 0);
    CHECK(gt_dt_sampled(GT_DT_LAUNCH, stub) == 0);
  }
  CHECK(gt_dt_sampled(GT_DT_SET, memset_key) == 1);
  CHECK(gt_dt_sampled(GT_DT_LAUNCH, stub) == 1);
  CHECK(gt_dt_sampled(GT_DT_COPY, copy_key) == 0);
  return check_finish("test_dt_sampling");
}
