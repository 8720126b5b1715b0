/* test_cupti_abi.c — preload/cupti_abi.h against the toolkit's
 * cupti_activity.h (built only when the header is found): every activity
 * kind the shim enables or parses, the external-correlation kind, the
 * flush flag, and each record field it reads at the toolkit's offset. */
#include <cupti_activity.h>
#include <stddef.h>

#include "check.h"
#include "cupti_abi.h"

#define SAME_OFFSET(ours, field, theirs, tfield)                                         \
  CHECK_MSG(offsetof(struct ours, field) == offsetof(theirs, tfield),                    \
            #ours "." #field " at %zu, " #theirs "." #tfield " at %zu",                  \
            offsetof(struct ours, field), offsetof(theirs, tfield))

int main(void) {
  CHECK((int)KIND_MEMCPY == (int)CUPTI_ACTIVITY_KIND_MEMCPY);
  CHECK((int)KIND_MEMSET == (int)CUPTI_ACTIVITY_KIND_MEMSET);
  CHECK((int)KIND_KERNEL == (int)CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK((int)KIND_RUNTIME == (int)CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK((int)KIND_DRIVER == (int)CUPTI_ACTIVITY_KIND_DRIVER);
  CHECK((int)KIND_CONCURRENT_KERNEL == (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK((int)KIND_EXTERNAL_CORRELATION == (int)CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  CHECK((int)EXT_KIND_CUSTOM0 == (int)CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  CHECK((int)CUPTI_FLUSH_FORCED == (int)CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

  SAME_OFFSET(act_kernel, kind, CUpti_ActivityKernel10, kind);
  SAME_OFFSET(act_kernel, start, CUpti_ActivityKernel10, start);
  SAME_OFFSET(act_kernel, end, CUpti_ActivityKernel10, end);
  SAME_OFFSET(act_kernel, device_id, CUpti_ActivityKernel10, deviceId);
  SAME_OFFSET(act_kernel, stream_id, CUpti_ActivityKernel10, streamId);
  SAME_OFFSET(act_kernel, grid, CUpti_ActivityKernel10, gridX);
  SAME_OFFSET(act_kernel, block, CUpti_ActivityKernel10, blockX);
  SAME_OFFSET(act_kernel, correlation_id, CUpti_ActivityKernel10, correlationId);

  SAME_OFFSET(act_copy, kind, CUpti_ActivityMemcpy6, kind);
  SAME_OFFSET(act_copy, kinds_or_value, CUpti_ActivityMemcpy6, copyKind);
  SAME_OFFSET(act_copy, bytes, CUpti_ActivityMemcpy6, bytes);
  SAME_OFFSET(act_copy, start, CUpti_ActivityMemcpy6, start);
  SAME_OFFSET(act_copy, end, CUpti_ActivityMemcpy6, end);
  SAME_OFFSET(act_copy, device_id, CUpti_ActivityMemcpy6, deviceId);
  SAME_OFFSET(act_copy, correlation_id, CUpti_ActivityMemcpy6, correlationId);
  SAME_OFFSET(act_copy, kinds_or_value, CUpti_ActivityMemset4, value);
  SAME_OFFSET(act_copy, bytes, CUpti_ActivityMemset4, bytes);
  SAME_OFFSET(act_copy, start, CUpti_ActivityMemset4, start);
  SAME_OFFSET(act_copy, end, CUpti_ActivityMemset4, end);
  SAME_OFFSET(act_copy, device_id, CUpti_ActivityMemset4, deviceId);
  SAME_OFFSET(act_copy, correlation_id, CUpti_ActivityMemset4, correlationId);

  SAME_OFFSET(act_extcorr, external_kind, CUpti_ActivityExternalCorrelation,
              externalKind);
  SAME_OFFSET(act_extcorr, external_id, CUpti_ActivityExternalCorrelation, externalId);
  SAME_OFFSET(act_extcorr, correlation_id, CUpti_ActivityExternalCorrelation,
              correlationId);
  return check_finish("test_cupti_abi");
}
