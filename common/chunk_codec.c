/* chunk_codec.c — a chunk's payload: its records as they are (GT_CHUNK_MAGIC)
 * or dense (GT_CHUNK_MAGIC_DENSE, file version 3), the one place either is
 * made or read back (the trace reader and the flight recorder inflate
 * through gt_chunk_inflate).
 *
 * Contract (docs/trace-format.md, "Dense chunks", has the byte layout):
 *  - Dense is lossless: decoding gives back the chunk's records byte for
 *    byte, in their order, so everything above the reader is unchanged.
 *  - An allocation or free (one slot) becomes a reference to a template (the
 *    record with its start, duration and pointer zeroed: who, which API,
 *    stack, size, stream, flags and result) and three varints, each in a
 *    stream of its own so that zstd codes each field's bytes by their own
 *    statistics: the start as a signed delta from the record before it (of
 *    any kind), the duration, and the pointer (a hit in the last
 *    MRU_PTRS pointers seen, most recent first: a free's allocation, or a
 *    block the allocator gives back; else a signed delta from the last
 *    one). Every other record is kept whole in a stream of its own.
 *  - A chunk is decoded on its own: templates and pointers start afresh in
 *    each, so a damaged chunk costs only its own records.
 *  - The decoder trusts nothing: every length, tag, varint and template is
 *    bounded and checked, and a payload that does not decode to exactly the
 *    header's slots is corrupt (the reader skips the chunk and says so).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "gputrace/trace_file.h"

#define DENSE_MAGIC 0x31445447u /* "GTD1": the payload's own first word */
#define MAX_TEMPLATES 255u      /* tags 1..255; 0: a record kept whole */
#define TABLE_SLOTS 1024u       /* open addressing over the templates */
#define MRU_PTRS 16u
#define VARINT_MAX 10u

enum { S_TAG, S_TS, S_DUR, S_PTR, S_RAW, STREAMS };

struct dense_head {
  uint32_t magic;
  uint32_t entries;   /* logical records */
  uint32_t templates; /* 96-byte records after the head */
  uint32_t len[STREAMS];
  uint32_t pad;
};
_Static_assert(sizeof(struct dense_head) == 36, "dense head is 36 bytes");

#define PTR_OFFSET offsetof(struct gt_record, u.mem.ptr)

struct gt_chunk_codec {
  unsigned char *stream[STREAMS];
  size_t cap;         /* of each stream: room for the chunk being encoded */
  unsigned char *out; /* the payload: head, templates, streams */
  size_t out_cap;
  struct gt_record templates[MAX_TEMPLATES];
  uint8_t table[TABLE_SLOTS]; /* template index + 1; 0: empty */
};

/* What the pointer MRU and the deltas start from, per chunk. */
struct ptr_state {
  uint64_t last;
  uint64_t mru[MRU_PTRS];
};

static int dense_kind(const struct gt_record *rec) {
  return rec->nslots == 1 && (rec->kind == GT_KIND_ALLOC || rec->kind == GT_KIND_FREE);
}

static uint64_t zigzag(int64_t v) {
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static int64_t unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* A varint of two bytes or more from [*p, end), or -1 when it runs past end
 * or 10 bytes. */
static int get_varint_long(const unsigned char **p, const unsigned char *end,
                           uint64_t *v) {
  uint64_t x = 0;
  for (unsigned i = 0, shift = 0; i < VARINT_MAX; i++, shift += 7) {
    if (*p >= end)
      return -1;
    unsigned char b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

/* A varint from [*p, end), or -1; one or two bytes (an MRU hit, most
 * durations and time steps) inline. */
static inline int get_varint(const unsigned char **p, const unsigned char *end,
                             uint64_t *v) {
  const unsigned char *q = *p;
  if (q < end && !(q[0] & 0x80)) {
    *v = q[0];
    *p = q + 1;
    return 0;
  }
  if (end - q >= 2 && !(q[1] & 0x80)) {
    *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
    *p = q + 2;
    return 0;
  }
  return get_varint_long(p, end, v);
}

/* ptr to the MRU's front, entry j out (a loop: j is 0, 1 or 2 in the usual
 * case, where a call of memmove cost a tenth of a reader's time). */
static void to_front(struct ptr_state *s, unsigned j, uint64_t ptr) {
  for (; j > 0; j--)
    s->mru[j] = s->mru[j - 1];
  s->mru[0] = ptr;
  s->last = ptr;
}

/* The pointer's code: 2j+1 for the MRU's entry j, else the delta's zigzag
 * times 2; the MRU moves the pointer to its front either way. */
static uint64_t ptr_code(struct ptr_state *s, uint64_t ptr) {
  unsigned j = 0;
  while (j < MRU_PTRS && s->mru[j] != ptr)
    j++;
  uint64_t code = j < MRU_PTRS ? 2u * j + 1u : zigzag((int64_t)(ptr - s->last)) << 1;
  to_front(s, j == MRU_PTRS ? MRU_PTRS - 1 : j, ptr);
  return code;
}

static uint64_t ptr_decode(struct ptr_state *s, uint64_t code) {
  unsigned j = MRU_PTRS - 1;
  uint64_t ptr;
  if (code & 1) {
    j = (unsigned)(code >> 1); /* checked below MRU_PTRS by the caller */
    ptr = s->mru[j];
  } else {
    ptr = s->last + (uint64_t)unzigzag(code >> 1);
  }
  to_front(s, j, ptr);
  return ptr;
}

/* ---- encoding ---- */

struct gt_chunk_codec *gt_codec_new(void) {
  return calloc(1, sizeof(struct gt_chunk_codec));
}

void gt_codec_free(struct gt_chunk_codec *c) {
  if (!c)
    return;
  for (int i = 0; i < STREAMS; i++)
    free(c->stream[i]);
  free(c->out);
  free(c);
}

static int reserve(struct gt_chunk_codec *c, size_t len) {
  size_t records = len / GT_SLOT_SIZE, need = records * VARINT_MAX + len;
  if (c->cap < need) {
    for (int i = 0; i < STREAMS; i++) {
      unsigned char *p = realloc(c->stream[i], need);
      if (!p)
        return -1;
      c->stream[i] = p;
    }
    c->cap = need;
  }
  size_t out = sizeof(struct dense_head) + MAX_TEMPLATES * GT_SLOT_SIZE + 5 * need;
  if (c->out_cap < out) {
    unsigned char *p = realloc(c->out, out);
    if (!p)
      return -1;
    c->out = p;
    c->out_cap = out;
  }
  return 0;
}

static uint32_t key_hash(const struct gt_record *key) {
  uint64_t w[GT_SLOT_SIZE / 8], h = 0x9e3779b97f4a7c15ull;
  memcpy(w, key, sizeof w);
  for (size_t i = 2; i < GT_SLOT_SIZE / 8; i++) /* words 0, 1: start, duration */
    h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
  return (uint32_t)(h >> 40);
}

/* The template of rec (1-based), added when new; 0 when the table is full. */
static unsigned template_of(struct gt_chunk_codec *c, const struct gt_record *rec,
                            uint32_t *ntemplates) {
  struct gt_record key = *rec;
  key.ts_ns = key.dur_ns = 0;
  memset((unsigned char *)&key + PTR_OFFSET, 0, sizeof(uint64_t));
  for (uint32_t i = key_hash(&key) % TABLE_SLOTS;; i = (i + 1) % TABLE_SLOTS) {
    unsigned t = c->table[i];
    if (t == 0) {
      if (*ntemplates == MAX_TEMPLATES)
        return 0;
      c->templates[*ntemplates] = key;
      c->table[i] = (uint8_t)++ * ntemplates;
      return *ntemplates;
    }
    if (memcmp(&c->templates[t - 1], &key, sizeof key) == 0)
      return t;
  }
}

size_t gt_chunk_dense_encode(struct gt_chunk_codec *c, const unsigned char *slots,
                             size_t len, const unsigned char **out) {
  if (reserve(c, len) != 0)
    return 0;
  memset(c->table, 0, sizeof c->table);
  unsigned char *p[STREAMS];
  for (int i = 0; i < STREAMS; i++)
    p[i] = c->stream[i];
  struct ptr_state ps = {0};
  uint64_t prev_ts = 0;
  uint32_t entries = 0, ntemplates = 0, dense = 0;
  for (size_t off = 0; off < len; entries++) {
    const struct gt_record *rec = (const void *)(slots + off);
    size_t rlen = (size_t)rec->nslots * GT_SLOT_SIZE;
    if (off + GT_SLOT_SIZE > len || rlen == 0 || rlen > len - off)
      return 0; /* not whole records: written as they are */
    unsigned t = dense_kind(rec) ? template_of(c, rec, &ntemplates) : 0;
    *p[S_TAG]++ = (unsigned char)t;
    if (t) {
      uint64_t ptr;
      memcpy(&ptr, (const unsigned char *)rec + PTR_OFFSET, sizeof ptr);
      p[S_TS] = put_varint(p[S_TS], zigzag((int64_t)(rec->ts_ns - prev_ts)));
      p[S_DUR] = put_varint(p[S_DUR], rec->dur_ns);
      p[S_PTR] = put_varint(p[S_PTR], ptr_code(&ps, ptr));
      dense++;
    } else {
      memcpy(p[S_RAW], rec, rlen);
      p[S_RAW] += rlen;
    }
    prev_ts = rec->ts_ns;
    off += rlen;
  }
  struct dense_head h = {
      .magic = DENSE_MAGIC, .entries = entries, .templates = ntemplates};
  size_t total = sizeof h + (size_t)ntemplates * GT_SLOT_SIZE;
  for (int i = 0; i < STREAMS; i++) {
    h.len[i] = (uint32_t)(p[i] - c->stream[i]);
    total += h.len[i];
  }
  if (dense == 0 || total >= len)
    return 0; /* nothing to gain */
  unsigned char *o = c->out;
  memcpy(o, &h, sizeof h);
  o += sizeof h;
  memcpy(o, c->templates, (size_t)ntemplates * GT_SLOT_SIZE);
  o += (size_t)ntemplates * GT_SLOT_SIZE;
  for (int i = 0; i < STREAMS; i++) {
    memcpy(o, c->stream[i], h.len[i]);
    o += h.len[i];
  }
  *out = c->out;
  return total;
}

/* ---- decoding ---- */

const char *gt_chunk_dense_decode(const unsigned char *in, size_t len, unsigned char *out,
                                  size_t out_len) {
  struct dense_head h;
  if (len < sizeof h)
    return "dense payload shorter than its head";
  memcpy(&h, in, sizeof h);
  if (h.magic != DENSE_MAGIC || h.templates > MAX_TEMPLATES)
    return "bad dense head";
  size_t want = sizeof h + (size_t)h.templates * GT_SLOT_SIZE;
  for (int i = 0; i < STREAMS; i++)
    want += h.len[i];
  if (want != len || h.len[S_TAG] != h.entries)
    return "dense streams do not add up to the payload";
  /* the streams have no alignment: records are copied out, never read in place */
  const unsigned char *templates = in + sizeof h;
  for (uint32_t t = 0; t < h.templates; t++) {
    struct gt_record tpl;
    memcpy(&tpl, templates + (size_t)t * GT_SLOT_SIZE, sizeof tpl);
    if (!dense_kind(&tpl))
      return "bad dense template";
  }
  const unsigned char *s[STREAMS], *end[STREAMS];
  s[0] = in + sizeof h + (size_t)h.templates * GT_SLOT_SIZE;
  for (int i = 0; i < STREAMS; i++) {
    end[i] = s[i] + h.len[i];
    if (i + 1 < STREAMS)
      s[i + 1] = end[i];
  }
  struct ptr_state ps = {0};
  uint64_t prev_ts = 0;
  size_t o = 0;
  for (uint32_t e = 0; e < h.entries; e++) {
    unsigned t = *s[S_TAG]++;
    struct gt_record *rec = (void *)(out + o);
    if (t == 0) {
      size_t room = (size_t)(end[S_RAW] - s[S_RAW]);
      unsigned nslots =
          room >= GT_SLOT_SIZE ? s[S_RAW][offsetof(struct gt_record, nslots)] : 0;
      size_t rlen = (size_t)nslots * GT_SLOT_SIZE;
      if (nslots < 1 || nslots > GT_MAX_SLOTS || rlen > room || rlen > out_len - o)
        return "a whole record in a dense chunk is cut short";
      memcpy(rec, s[S_RAW], rlen);
      s[S_RAW] += rlen;
      o += rlen;
    } else {
      uint64_t dts, dur, code;
      if (t > h.templates || out_len - o < GT_SLOT_SIZE)
        return "bad dense tag";
      if (get_varint(&s[S_TS], end[S_TS], &dts) ||
          get_varint(&s[S_DUR], end[S_DUR], &dur) ||
          get_varint(&s[S_PTR], end[S_PTR], &code) ||
          ((code & 1) && (code >> 1) >= MRU_PTRS))
        return "bad dense field";
      memcpy(rec, templates + (size_t)(t - 1) * GT_SLOT_SIZE, GT_SLOT_SIZE);
      rec->ts_ns = prev_ts + (uint64_t)unzigzag(dts);
      rec->dur_ns = dur;
      uint64_t ptr = ptr_decode(&ps, code);
      memcpy((unsigned char *)rec + PTR_OFFSET, &ptr, sizeof ptr);
      o += GT_SLOT_SIZE;
    }
    prev_ts = rec->ts_ns;
  }
  for (int i = 0; i < STREAMS; i++)
    if (s[i] != end[i])
      return "dense streams longer than their records";
  return o == out_len ? NULL : "dense chunk holds other than its header's slots";
}

/* ---- chunks ---- */

int gt_chunk_header_valid(const struct gt_chunk_header *h) {
  return (h->magic == GT_CHUNK_MAGIC || h->magic == GT_CHUNK_MAGIC_DENSE) &&
         h->header_bytes == sizeof *h && h->check == gt_chunk_check(h) && h->slots > 0 &&
         h->slots <= GT_CHUNK_MAX_BYTES / GT_SLOT_SIZE &&
         h->compressed_bytes <= ZSTD_compressBound((size_t)h->slots * GT_SLOT_SIZE);
}

const char *gt_chunk_inflate(void *dctx, const struct gt_chunk_header *h,
                             const void *frame, unsigned char *out,
                             unsigned char **scratch, size_t *scratch_cap) {
  size_t raw = (size_t)h->slots * GT_SLOT_SIZE;
  if (h->magic == GT_CHUNK_MAGIC) {
    size_t got = ZSTD_decompressDCtx(dctx, out, raw, frame, h->compressed_bytes);
    return ZSTD_isError(got) ? ZSTD_getErrorName(got) : got != raw ? "wrong size" : NULL;
  }
  /* Dense: the payload is at most the records' size (the writer keeps a
   * payload only when it is smaller). */
  unsigned long long size = ZSTD_getFrameContentSize(frame, h->compressed_bytes);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > raw)
    return "bad dense frame";
  if (*scratch_cap < size || !*scratch) {
    unsigned char *p = realloc(*scratch, size ? size : 1);
    if (!p)
      return "out of memory";
    *scratch = p;
    *scratch_cap = size ? size : 1;
  }
  size_t got = ZSTD_decompressDCtx(dctx, *scratch, size, frame, h->compressed_bytes);
  if (ZSTD_isError(got))
    return ZSTD_getErrorName(got);
  if (got != size)
    return "wrong size";
  return gt_chunk_dense_decode(*scratch, size, out, raw);
}
