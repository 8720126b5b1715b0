/* fields.h — the payload fields of each record kind, once: name, place in
 * the record, type and how each output shows them. Drives `dump` (text and
 * --json) and the args of `chrome`'s slices.
 *
 * Contract:
 *  - gt_fields gives the fields of a record, in the order every output uses
 *    (process records: per phase; DEVICE records: per kind of work). A new
 *    kind, or a new field, is a row here and nothing else in the printers.
 *  - A field shows in JSON under `key` (NULL: not in JSON), in dump's text
 *    as `text=value`, or the value alone for "" (NULL: not in the text),
 *    and in chrome's args when GT_FO_CHROME is set. `when`/`unless` flags
 *    (rec.flags) make it conditional everywhere.
 *  - The printers take the record as shown (gt_event_record: a matched free
 *    has its allocation's bytes); names come from the model.
 */
#ifndef GPUTRACE_MODEL_FIELDS_H
#define GPUTRACE_MODEL_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gputrace/schema.h"
#include "model.h"

enum gt_ftype {
  GT_FT_UINT,   /* unsigned, `size` bytes */
  GT_FT_INT,    /* signed 32-bit */
  GT_FT_HEX,    /* u64 shown as 0x... (a string in JSON) */
  GT_FT_DIMS,   /* u32[3]: [x,y,z] */
  GT_FT_BOOL,   /* rec.flags & bit, or the field nonzero (bit 0); text: the word */
  GT_FT_NAME,   /* an enum (`size` bytes) named by `name` */
  GT_FT_TEXT,   /* the record's text */
  GT_FT_PART,   /* part `part` of the record's "\x1f"-separated text */
  GT_FT_KERNEL, /* a kernel stub, shown by its demangled name */
  GT_FT_STACK,  /* a STACK record's entries (JSON only) */
  GT_FT_METRIC, /* a METRIC value, %.17g; text: "<metric name>=value" */
};

#define GT_FO_CHROME 1u    /* in chrome's args */
#define GT_FO_CHROME_NZ 2u /* ...except when 0 */
#define GT_FO_NZ 4u        /* left out everywhere when 0 */
#define GT_FO_QUOTE 8u     /* text: in double quotes */

struct gt_field {
  const char *key; /* JSON */
  uint8_t key_len;
  const char *text; /* dump text */
  uint8_t type;     /* enum gt_ftype */
  uint8_t size;     /* bytes, for UINT and NAME */
  uint8_t out;      /* GT_FO_* */
  char sep;         /* text: what goes before it (0: a space) */
  uint16_t off;     /* in struct gt_record */
  uint8_t part;     /* GT_FT_PART */
  uint32_t bit;     /* GT_FT_BOOL */
  uint32_t when, unless;
  const char *(*name)(unsigned);
};

const struct gt_field *gt_fields(const struct gt_record *r, size_t *n);
/* The value of an integer field (inline: chrome reads millions a second). */
static inline uint64_t gt_field_uint(const struct gt_field *f,
                                     const struct gt_record *r) {
  const unsigned char *p = (const unsigned char *)r + f->off;
  switch (f->size) {
  case 1:
    return *p;
  case 2: {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  default: {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

static inline int gt_field_bool(const struct gt_field *f, const struct gt_record *r) {
  return f->bit ? (r->flags & f->bit) != 0 : gt_field_uint(f, r) != 0;
}

/* Shown for this record (its flags, and GT_FO_NZ)? */
static inline int gt_field_shown(const struct gt_field *f, const struct gt_record *r) {
  if ((r->flags & f->when) != f->when || (r->flags & f->unless))
    return 0;
  return !(f->out & GT_FO_NZ) || gt_field_uint(f, r) != 0;
}

static inline int32_t gt_field_int(const struct gt_field *f, const struct gt_record *r) {
  int32_t v;
  memcpy(&v, (const char *)r + f->off, sizeof v);
  return v;
}

/* dump: ` text=value` for each field; `,"key":value` for each field. */
void gt_fields_text(FILE *o, const struct gt_record *r, struct gt_model *m);
void gt_fields_json(FILE *o, const struct gt_record *r, struct gt_model *m);

#endif
