/* chrome_out.h — the buffered JSON writer behind `gputrace chrome`.
 *
 * Contract:
 *  - One output: a file (created 0600 by gputrace/outfile.h's rules: an
 *    existing one is overwritten only with force, and only a regular file
 *    of ours; a symbolic link is never followed), stdout ("-"), or a gzip
 *    stream when the name ends in ".gz". co_open fails, with a message
 *    naming the path, before any work is done.
 *  - Text is appended to a fixed buffer (co_put and the formatters below)
 *    and written out when it fills: memory is constant whatever the size of
 *    the export, and nothing is formatted through stdio (the hot path of an
 *    export runs at several million events per second).
 *  - Write errors are sticky: later output is discarded, co_close reports
 *    the first one. co_bytes counts the JSON bytes produced (before
 *    compression: the size a viewer has to load).
 *  - When co_bytes first passes warn_bytes, on_warn is called once (the
 *    caller prints the remedy).
 */
#ifndef GPUTRACE_ANALYZE_CHROME_OUT_H
#define GPUTRACE_ANALYZE_CHROME_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct co_zstate; /* zlib state, only for .gz output */

struct co_out {
  char *buf;
  size_t len, cap;
  int fd;
  int is_stdout;
  int is_regular; /* a plain file (the caller may remove it after an error) */
  struct co_zstate *z;
  uint64_t flushed;    /* JSON bytes already handed to write/deflate */
  uint64_t warn_bytes; /* 0 = never warn */
  void (*on_warn)(void *ctx, uint64_t bytes);
  void *warn_ctx;
  int warned;
  int error; /* errno of the first failed write, or -1 for a zlib error */
  char *path;
};

/* Open `path` ("-" = stdout). Returns 0, or -1 with a message in err. */
int co_open(struct co_out *o, const char *path, int force, int gzip_level, char *err,
            size_t errlen);
/* Write what is buffered, finish the gzip stream, close. Returns 0, or -1
 * when any write failed (o->error says why). Frees everything. */
int co_close(struct co_out *o);
/* Hand the buffer to the file (called when it fills). */
void co_drain(struct co_out *o);

static inline uint64_t co_bytes(const struct co_out *o) {
  return o->flushed + o->len;
}

void co_put_slow(struct co_out *o, const char *s, size_t n);

static inline void co_put(struct co_out *o, const char *s, size_t n) {
  if (o->len + n > o->cap) {
    co_put_slow(o, s, n);
    return;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

#define CO_LIT(o, s) co_put((o), (s), sizeof(s) - 1)

static inline void co_char(struct co_out *o, char c) {
  if (o->len + 1 > o->cap)
    co_drain(o);
  o->buf[o->len++] = c;
}

/* ---- the fast path: a cursor into reserved room ----
 * co_reserve makes room for n bytes and returns where they go; cw_*
 * write without checks and return the new cursor; co_commit ends it. For
 * the events written millions of times; n must be an upper bound. */
static inline char *co_reserve(struct co_out *o, size_t n) {
  if (o->cap - o->len < n)
    co_drain(o);
  return o->buf + o->len;
}

static inline void co_commit(struct co_out *o, char *p) {
  o->len = (size_t)(p - o->buf);
}

static inline char *cw_put(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}
#define CW_LIT(p, s) cw_put((p), (s), sizeof(s) - 1)

/* Decimal digits of v, at most 20. */
static inline char *cw_u64(char *p, uint64_t v) {
  static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                 "25262728293031323334353637383940414243444546474849"
                                 "50515253545556575859606162636465666768697071727374"
                                 "75767778798081828384858687888990919293949596979899";
  unsigned n = 1;
  for (uint64_t x = v; x >= 10; x /= 10)
    n++;
  char *end = p + n, *q = end;
  while (v >= 100) {
    unsigned i = (unsigned)(v % 100) * 2;
    v /= 100;
    *--q = pairs[i + 1];
    *--q = pairs[i];
  }
  if (v >= 10) {
    *--q = pairs[v * 2 + 1];
    *--q = pairs[v * 2];
  } else {
    *--q = (char)('0' + v);
  }
  return end;
}

/* ns as microseconds with three decimals (at most 24 bytes). */
static inline char *cw_us(char *p, uint64_t ns) {
  p = cw_u64(p, ns / 1000);
  unsigned f = (unsigned)(ns % 1000);
  p[0] = '.';
  p[1] = (char)('0' + f / 100);
  p[2] = (char)('0' + f / 10 % 10);
  p[3] = (char)('0' + f % 10);
  return p + 4;
}

/* "0x1f", quoted (at most 20 bytes). */
static inline char *cw_hex(char *p, uint64_t v) {
  unsigned n = 1;
  for (uint64_t x = v >> 4; x; x >>= 4)
    n++;
  p[0] = '"', p[1] = '0', p[2] = 'x';
  for (unsigned i = 0; i < n; i++)
    p[3 + n - 1 - i] = "0123456789abcdef"[(v >> (4 * i)) & 15];
  p[3 + n] = '"';
  return p + 4 + n;
}

void co_u64(struct co_out *o, uint64_t v);
void co_i64(struct co_out *o, int64_t v);
/* Nanoseconds as microseconds with three decimals: 1234567 -> 1234.567. */
void co_us(struct co_out *o, uint64_t ns);
/* "0x1f" (quoted), the form dump --json uses for handles and pointers. */
void co_hex(struct co_out *o, uint64_t v);
/* A JSON string literal for untrusted text: quotes and backslashes escaped,
 * control characters as \u00XX, invalid UTF-8 replaced by U+FFFD (the same
 * rules as gt_json_str). */
void co_str(struct co_out *o, const char *s);
/* The literal co_str would write, malloc'd (for names written often). */
char *co_quote_dup(const char *s);

#endif
