/* cupti_abi.h — what the shim uses of CUPTI's ABI (cupti.h of CUDA 13,
 * whose activity records CUDA 12.x shares for the fields read here),
 * declared here because the shim never needs the toolkit: activity kinds,
 * the external-correlation kind, flags, result codes, callback domains,
 * and where each field the shim reads sits in each device record.
 *
 * Contract: every value and offset here equals the toolkit header's;
 * tests/unit/test_cupti_abi.c compiles against cupti.h and checks each one
 * (a wrong DRIVER kind, 6 for 4, once made every CUPTI session fail to
 * start on a GPU, silently falling back to events).
 */
#ifndef GPUTRACE_CUPTI_ABI_H
#define GPUTRACE_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

enum {
  KIND_MEMCPY = 1,
  KIND_MEMSET = 2,
  KIND_KERNEL = 3,
  KIND_DRIVER = 4,
  KIND_RUNTIME = 5,
  KIND_CONCURRENT_KERNEL = 10,
  KIND_MEMCPY2 = 22,
  KIND_EXTERNAL_CORRELATION = 39,
  EXT_KIND_CUSTOM0 = 3, /* Kineto's operator ids */
  EXT_KIND_CUSTOM1 = 4, /* Kineto's user annotations */
  EXT_KIND_CUSTOM2 = 5, /* gputrace's */
  CUPTI_FLUSH_FORCED = 1,
  CB_DOMAIN_DRIVER_API = 1,
  CB_DOMAIN_RUNTIME_API = 2,
  CUPTI_OK = 0,
  CUPTI_ERR_MULTIPLE_SUBSCRIBERS = 39,
  CUPTI_VERSION_MIN = 18, /* CUDA 12.0's CUPTI_API_VERSION */
  /* cupti_activity.h CUpti_ActivityMemcpyKind */
  COPY_KIND_HTOD = 1,
  COPY_KIND_DTOH = 2,
  COPY_KIND_DTOD = 8,
  COPY_KIND_HTOH = 9,
  COPY_KIND_PTOP = 10,
};

/* Where a device record keeps what the shim reads (byte offsets; 0xffff:
 * the record has no such field). Kernel: CUpti_ActivityKernel10 (CUDA 13;
 * its prefix up to correlationId is Kernel4's), Memcpy6, MemcpyPtoP4,
 * Memset4. The graph fields are read only from CUDA 13's records. */
struct act_layout {
  uint32_t kind;
  uint16_t size; /* the record's size (CUDA 13) */
  uint16_t start, end, device, stream, corr, bytes, copy_kind, node, graph;
};
#define ACT_NONE 0xffffu
#define ACT_LAYOUTS(X)                                                                   \
  X(KIND_CONCURRENT_KERNEL, 216, 16, 24, 40, 48, 92, ACT_NONE, ACT_NONE, 144, 156)       \
  X(KIND_KERNEL, 216, 16, 24, 40, 48, 92, ACT_NONE, ACT_NONE, 144, 156)                  \
  X(KIND_MEMCPY, 96, 16, 24, 32, 40, 44, 8, 4, 64, 72)                                   \
  X(KIND_MEMCPY2, 96, 16, 24, 32, 40, 60, 8, 4, 72, 80)                                  \
  X(KIND_MEMSET, 88, 16, 24, 32, 40, 44, 8, ACT_NONE, 64, 72)

struct act_extcorr { /* CUpti_ActivityExternalCorrelation */
  uint32_t kind, external_kind;
  uint64_t external_id;
  uint32_t correlation_id, reserved;
};
_Static_assert(offsetof(struct act_extcorr, correlation_id) == 16, "ExternalCorrelation");

#endif
