/* record_text.c — attach text to a record (see gt_record_attach_text). */
#include <string.h>

#include "gputrace/schema.h"

size_t gt_record_attach_text(struct gt_record *rec, const char *text, size_t len) {
  if (len > GT_TEXT_MAX) {
    len = GT_TEXT_MAX;
    rec->flags |= GT_F_TEXT_TRUNC;
  }
  uint32_t n = (uint32_t)len;
  unsigned nslots = gt_slots_for_text(n);
  rec->nslots = (uint8_t)nslots;
  switch (rec->kind) {
  case GT_KIND_NVTX:
    rec->u.nvtx.text_len = n;
    break;
  case GT_KIND_KERNEL_NAME:
    rec->u.kname.text_len = n;
    break;
  case GT_KIND_PROCESS:
    rec->u.proc.text_len = n;
    break;
  case GT_KIND_STACK:
    rec->u.stack.text_len = n;
    break;
  case GT_KIND_MODULE:
    rec->u.module.text_len = n;
    break;
  case GT_KIND_PYFRAME:
    rec->u.pyframe.text_len = n;
    break;
  case GT_KIND_FRAME:
    rec->u.frame.text_len = n;
    break;
  case GT_KIND_NOTE:
    rec->u.note.text_len = n;
    break;
  default:
    break;
  }
  struct gt_text_slot *slots = (struct gt_text_slot *)(rec + 1);
  for (unsigned i = 0; i + 1 < nslots; i++) {
    size_t off = (size_t)i * GT_TEXT_PER_SLOT;
    size_t take = len - off < GT_TEXT_PER_SLOT ? len - off : GT_TEXT_PER_SLOT;
    slots[i].magic = GT_TEXT_MAGIC;
    slots[i].index = i + 1;
    memset(slots[i].text, 0, GT_TEXT_PER_SLOT);
    memcpy(slots[i].text, text + off, take);
  }
  return len;
}

uint32_t gt_record_text_len(const struct gt_record *rec) {
  switch (rec->kind) {
  case GT_KIND_NVTX:
    return rec->u.nvtx.text_len;
  case GT_KIND_KERNEL_NAME:
    return rec->u.kname.text_len;
  case GT_KIND_PROCESS:
    return rec->u.proc.text_len;
  case GT_KIND_STACK:
    return rec->u.stack.text_len;
  case GT_KIND_MODULE:
    return rec->u.module.text_len;
  case GT_KIND_PYFRAME:
    return rec->u.pyframe.text_len;
  case GT_KIND_FRAME:
    return rec->u.frame.text_len;
  case GT_KIND_NOTE:
    return rec->u.note.text_len;
  default:
    return 0;
  }
}
