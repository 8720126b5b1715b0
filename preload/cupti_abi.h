/* cupti_abi.h — what the shim uses of CUPTI's ABI (cupti_activity.h of
 * CUDA 12 and 13), declared here because the shim never needs the toolkit:
 * activity kinds, the external-correlation kind, the flush flag, and the
 * leading fields of the activity records it parses.
 *
 * Contract: every value and offset here equals the toolkit header's;
 * tests/unit/test_cupti_abi.c compiles against cupti_activity.h and checks
 * each one (a wrong DRIVER kind, 6 for 4, once made every CUPTI session
 * fail to start on a GPU, silently falling back to events). */
#ifndef GPUTRACE_CUPTI_ABI_H
#define GPUTRACE_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

enum {
  KIND_MEMCPY = 1,
  KIND_MEMSET = 2,
  KIND_KERNEL = 3,
  KIND_RUNTIME = 5,
  KIND_DRIVER = 4,
  KIND_CONCURRENT_KERNEL = 10,
  KIND_EXTERNAL_CORRELATION = 39,
  EXT_KIND_CUSTOM0 = 3,
  CUPTI_FLUSH_FORCED = 1,
};

struct act_kernel { /* CUpti_ActivityKernel4..10, leading fields */
  uint32_t kind;
  uint8_t cache_config, shared_config;
  uint16_t registers;
  uint32_t pgc_requested, pgc_executed;
  uint64_t start, end, completed;
  uint32_t device_id, context_id, stream_id;
  int32_t grid[3], block[3];
  int32_t static_smem, dynamic_smem;
  uint32_t local_per_thread, local_total;
  uint32_t correlation_id;
};
struct act_copy { /* CUpti_ActivityMemcpy5/6 and Memset3/4, leading fields */
  uint32_t kind;
  uint32_t kinds_or_value;
  uint64_t bytes, start, end;
  uint32_t device_id, context_id, stream_id, correlation_id;
};
struct act_extcorr { /* CUpti_ActivityExternalCorrelation */
  uint32_t kind, external_kind;
  uint64_t external_id;
  uint32_t correlation_id, reserved;
};
_Static_assert(offsetof(struct act_kernel, correlation_id) == 92, "CUpti_ActivityKernel");
_Static_assert(offsetof(struct act_copy, correlation_id) == 44, "CUpti_ActivityMemcpy");
_Static_assert(offsetof(struct act_extcorr, correlation_id) == 16, "ExternalCorrelation");

#endif
