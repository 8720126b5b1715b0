/* chrome_out.c — see chrome_out.h. */
#include "chrome_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gputrace/outfile.h"
#include "util.h"

#define CO_BUF_BYTES (1u << 20)
#define CO_ZOUT_BYTES (256u << 10)

struct co_zstate {
  z_stream zs;
  unsigned char out[CO_ZOUT_BYTES];
};

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int co_open(struct co_out *o, const char *path, int force, int gzip_level, char *err,
            size_t errlen) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->is_stdout = strcmp(path, "-") == 0;
  if (o->is_stdout) {
    o->fd = STDOUT_FILENO;
  } else if ((o->fd = gt_out_open(path, force ? GT_OUT_FORCE : GT_OUT_NEW, err, errlen)) <
             0) {
    return -1;
  }
  struct stat st;
  o->is_regular = !o->is_stdout && fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
  o->path = strdup(path);
  o->buf = malloc(CO_BUF_BYTES);
  o->cap = CO_BUF_BYTES;
  if (!o->is_stdout && ends_with(path, ".gz")) {
    o->z = calloc(1, sizeof *o->z);
    /* windowBits 15 + 16: a gzip stream (header and CRC), as gzip(1) writes. */
    if (o->z && deflateInit2(&o->z->zs, gzip_level, Z_DEFLATED, 15 + 16, 8,
                             Z_DEFAULT_STRATEGY) != Z_OK) {
      free(o->z);
      o->z = NULL;
      o->error = -1;
    } else if (!o->z) {
      o->error = ENOMEM;
    }
  }
  if (!o->path || !o->buf || o->error) {
    snprintf(err, errlen, "%s: out of memory", path);
    if (!o->is_stdout)
      close(o->fd);
    free(o->path), free(o->buf), free(o->z);
    return -1;
  }
  return 0;
}

static void write_all(struct co_out *o, const unsigned char *p, size_t n) {
  while (n > 0 && !o->error) {
    ssize_t w = write(o->fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      o->error = w < 0 ? errno : EIO;
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Feed the buffer to deflate; with Z_FINISH, end the gzip stream. */
static void deflate_out(struct co_out *o, int flush) {
  z_stream *zs = &o->z->zs;
  zs->next_in = (unsigned char *)o->buf;
  zs->avail_in = (uInt)o->len;
  while (!o->error) {
    zs->next_out = o->z->out;
    zs->avail_out = CO_ZOUT_BYTES;
    int rc = deflate(zs, flush);
    if (rc == Z_STREAM_ERROR) {
      o->error = -1;
      return;
    }
    write_all(o, o->z->out, CO_ZOUT_BYTES - zs->avail_out);
    if (zs->avail_out != 0 && (flush != Z_FINISH || rc == Z_STREAM_END))
      return;
  }
}

void co_drain(struct co_out *o) {
  uint64_t before = o->flushed;
  if (!o->error) {
    if (o->z)
      deflate_out(o, Z_NO_FLUSH);
    else
      write_all(o, (const unsigned char *)o->buf, o->len);
  }
  o->flushed += o->len;
  o->len = 0;
  /* Checked per buffer (1 MiB), not per event: off the hot path. */
  if (o->warn_bytes && !o->warned && before < o->warn_bytes &&
      o->flushed >= o->warn_bytes) {
    o->warned = 1;
    if (o->on_warn)
      o->on_warn(o->warn_ctx, o->flushed);
  }
}

void co_put_slow(struct co_out *o, const char *s, size_t n) {
  while (n > 0) {
    if (o->len == o->cap)
      co_drain(o);
    size_t k = o->cap - o->len < n ? o->cap - o->len : n;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
}

int co_close(struct co_out *o) {
  co_drain(o);
  if (o->z) {
    if (!o->error)
      deflate_out(o, Z_FINISH);
    deflateEnd(&o->z->zs);
    free(o->z);
  }
  if (!o->is_stdout && close(o->fd) != 0 && !o->error)
    o->error = errno;
  free(o->buf);
  free(o->path);
  o->buf = o->path = NULL;
  o->z = NULL;
  return o->error ? -1 : 0;
}

void co_u64(struct co_out *o, uint64_t v) {
  co_commit(o, cw_u64(co_reserve(o, 24), v));
}

void co_i64(struct co_out *o, int64_t v) {
  if (v < 0) {
    co_char(o, '-');
    co_u64(o, (uint64_t)0 - (uint64_t)v);
  } else {
    co_u64(o, (uint64_t)v);
  }
}

void co_us(struct co_out *o, uint64_t ns) {
  co_commit(o, cw_us(co_reserve(o, 32), ns));
}

void co_hex(struct co_out *o, uint64_t v) {
  co_commit(o, cw_hex(co_reserve(o, 24), v));
}

void co_str(struct co_out *o, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  co_char(o, '"');
  for (;;) {
    const unsigned char *run = p; /* copy runs of plain ASCII in one go */
    while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
      p++;
    co_put(o, (const char *)run, (size_t)(p - run));
    unsigned char c = *p;
    if (c == 0)
      break;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      co_put(o, esc, 2);
      p++;
    } else if (c < 0x20) {
      char esc[7] = {
          '\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15], 0};
      co_put(o, esc, 6);
      p++;
    } else {
      int len = gt_utf8_len(p); /* the one check (model/util.h) */
      if (len) {
        co_put(o, (const char *)p, (size_t)len);
        p += len;
      } else {
        CO_LIT(o, "\\ufffd");
        p++;
      }
    }
  }
  co_char(o, '"');
}

char *co_quote_dup(const char *s) {
  /* Worst case: every byte becomes \ufffd (6 bytes), plus quotes and NUL. */
  size_t cap = strlen(s) * 6 + 3;
  struct co_out tmp = {.buf = malloc(cap), .cap = cap, .fd = -1};
  if (!tmp.buf)
    return NULL;
  co_str(&tmp, s);
  tmp.buf[tmp.len] = '\0';
  return tmp.buf;
}
