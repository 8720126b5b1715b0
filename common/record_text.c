/* record_text.c — the text a record carries: where each kind keeps its
 * text_len, attaching text (gt_record_attach_text) and reading the length
 * back (gt_record_text_len).
 *
 * Contract: text_len sits inside each kind's payload (the on-disk format,
 * version 1, has no room for it in the common header), so its offset per
 * kind is a fact of the schema, stated once, in text_len_at below: a kind
 * that gains text needs one line there and nothing else. Compiled into the
 * shim too: no allocation, no state. */
#include <stddef.h>
#include <string.h>

#include "gputrace/schema.h"

#define AT(member) (uint8_t) offsetof(struct gt_record, u.member.text_len)
/* Offset of text_len in the record, by kind; 0: the kind carries no text. */
static const uint8_t text_len_at[GT_KIND_COUNT] = {
    [GT_KIND_NVTX] = AT(nvtx),     [GT_KIND_KERNEL_NAME] = AT(kname),
    [GT_KIND_PROCESS] = AT(proc),  [GT_KIND_STACK] = AT(stack),
    [GT_KIND_MODULE] = AT(module), [GT_KIND_PYFRAME] = AT(pyframe),
    [GT_KIND_FRAME] = AT(frame),   [GT_KIND_NOTE] = AT(note),
};
#undef AT

static size_t text_len_offset(unsigned kind) {
  return gt_kind_in_table(kind) ? text_len_at[kind] : 0;
}

size_t gt_record_attach_text(struct gt_record *rec, const char *text, size_t len) {
  if (len > GT_TEXT_MAX) {
    len = GT_TEXT_MAX;
    rec->flags |= GT_F_TEXT_TRUNC;
  }
  uint32_t n = (uint32_t)len;
  unsigned nslots = gt_slots_for_text(n);
  rec->nslots = (uint8_t)nslots;
  size_t at = text_len_offset(rec->kind);
  if (at)
    memcpy((char *)rec + at, &n, sizeof n);
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
  size_t at = text_len_offset(rec->kind);
  uint32_t n = 0;
  if (at)
    memcpy(&n, (const char *)rec + at, sizeof n);
  return n;
}
