/* test_cupti_abi.c — preload/cupti_abi.h against the toolkit's
 * cupti.h (built only when the header is found): every activity kind,
 * external-correlation kind, flag, result code and callback domain the
 * shim uses, and each device record field it reads at the toolkit's
 * offset (the layout table of cupti_abi.h). */
#include <cupti.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "cupti_abi.h"

#define SAME_OFFSET(ours, field, theirs, tfield)                                         \
  CHECK_MSG(offsetof(struct ours, field) == offsetof(theirs, tfield),                    \
            #ours "." #field " at %zu, " #theirs "." #tfield " at %zu",                  \
            offsetof(struct ours, field), offsetof(theirs, tfield))

/* The toolkit's offset of each field our layout table names. */
#define LAYOUT_OFFSETS(T, ours, copy_kind_field, bytes_field)                            \
  do {                                                                                   \
    CHECK_MSG(ours->size == sizeof(T), #T " size %u, toolkit %zu", ours->size,           \
              sizeof(T));                                                                \
    CHECK_MSG(ours->start == offsetof(T, start), #T ".start");                           \
    CHECK_MSG(ours->end == offsetof(T, end), #T ".end");                                 \
    CHECK_MSG(ours->device == offsetof(T, deviceId), #T ".deviceId");                    \
    CHECK_MSG(ours->stream == offsetof(T, streamId), #T ".streamId");                    \
    CHECK_MSG(ours->corr == offsetof(T, correlationId), #T ".correlationId");            \
    CHECK_MSG(ours->node == offsetof(T, graphNodeId), #T ".graphNodeId");                \
    CHECK_MSG(ours->graph == offsetof(T, graphId), #T ".graphId");                       \
    copy_kind_field;                                                                     \
    bytes_field;                                                                         \
  } while (0)

static const struct act_layout layouts[] = {
#define X(k, sz, st, en, dev, str, corr, by, ck, nd, gr)                                 \
  {k, sz, st, en, dev, str, corr, by, ck, nd, gr},
    ACT_LAYOUTS(X)
#undef X
};

static const struct act_layout *find(uint32_t kind) {
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
    if (layouts[i].kind == kind)
      return &layouts[i];
  return NULL;
}

int main(void) {
  CHECK((int)KIND_MEMCPY == (int)CUPTI_ACTIVITY_KIND_MEMCPY);
  CHECK((int)KIND_MEMSET == (int)CUPTI_ACTIVITY_KIND_MEMSET);
  CHECK((int)KIND_KERNEL == (int)CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK((int)KIND_RUNTIME == (int)CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK((int)KIND_DRIVER == (int)CUPTI_ACTIVITY_KIND_DRIVER);
  CHECK((int)KIND_CONCURRENT_KERNEL == (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK((int)KIND_MEMCPY2 == (int)CUPTI_ACTIVITY_KIND_MEMCPY2);
  CHECK((int)KIND_EXTERNAL_CORRELATION == (int)CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  CHECK((int)EXT_KIND_CUSTOM0 == (int)CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  CHECK((int)EXT_KIND_CUSTOM1 == (int)CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
  CHECK((int)EXT_KIND_CUSTOM2 == (int)CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
  CHECK((int)CUPTI_FLUSH_FORCED == (int)CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  CHECK((int)CB_DOMAIN_DRIVER_API == (int)CUPTI_CB_DOMAIN_DRIVER_API);
  CHECK((int)CB_DOMAIN_RUNTIME_API == (int)CUPTI_CB_DOMAIN_RUNTIME_API);
  CHECK((int)CUPTI_OK == (int)CUPTI_SUCCESS);
  CHECK((int)CUPTI_ERR_MULTIPLE_SUBSCRIBERS ==
        (int)CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(CUPTI_API_VERSION >= CUPTI_VERSION_MIN);
  CHECK((int)COPY_KIND_HTOD == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK((int)COPY_KIND_DTOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK((int)COPY_KIND_DTOD == (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
  CHECK((int)COPY_KIND_HTOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
  CHECK((int)COPY_KIND_PTOP == (int)CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);

  const struct act_layout *l = find(KIND_CONCURRENT_KERNEL);
  CHECK(l != NULL && find(KIND_KERNEL) != NULL);
  if (l) {
    LAYOUT_OFFSETS(CUpti_ActivityKernel10, l, CHECK(l->copy_kind == ACT_NONE),
                   CHECK(l->bytes == ACT_NONE));
    CHECK(memcmp(&find(KIND_KERNEL)->size, &l->size,
                 sizeof *l - offsetof(struct act_layout, size)) == 0);
  }
  l = find(KIND_MEMCPY);
  CHECK(l != NULL);
  if (l)
    LAYOUT_OFFSETS(CUpti_ActivityMemcpy6, l,
                   CHECK(l->copy_kind == offsetof(CUpti_ActivityMemcpy6, copyKind)),
                   CHECK(l->bytes == offsetof(CUpti_ActivityMemcpy6, bytes)));
  l = find(KIND_MEMCPY2);
  CHECK(l != NULL);
  if (l)
    LAYOUT_OFFSETS(CUpti_ActivityMemcpyPtoP4, l,
                   CHECK(l->copy_kind == offsetof(CUpti_ActivityMemcpyPtoP4, copyKind)),
                   CHECK(l->bytes == offsetof(CUpti_ActivityMemcpyPtoP4, bytes)));
  l = find(KIND_MEMSET);
  CHECK(l != NULL);
  if (l)
    LAYOUT_OFFSETS(CUpti_ActivityMemset4, l, CHECK(l->copy_kind == ACT_NONE),
                   CHECK(l->bytes == offsetof(CUpti_ActivityMemset4, bytes)));

  SAME_OFFSET(act_extcorr, external_kind, CUpti_ActivityExternalCorrelation,
              externalKind);
  SAME_OFFSET(act_extcorr, external_id, CUpti_ActivityExternalCorrelation, externalId);
  SAME_OFFSET(act_extcorr, correlation_id, CUpti_ActivityExternalCorrelation,
              correlationId);
  return check_finish("test_cupti_abi");
}
