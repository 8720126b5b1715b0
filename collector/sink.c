/* sink.c — records to chunks to the trace file (see collector.h).
 *
 * One thread does everything, in an order that favours the rings: the main
 * loop drains every ring, then compresses at most one queued chunk, then
 * drains again. No writer thread: on two cores the scheduler lets it run for
 * milliseconds at a time while rings overflow.
 *
 * Chunk buffers come from a pool faulted in at start: first-touch page
 * faults cost more than compressing the memory they fault in, and paying
 * them mid-burst slows draining until the rings overflow (docs/PERFORMANCE.md,
 * Earlier history). Beyond the pool, chunks are malloc'd and freed once
 * written. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "collector.h"
#include "gputrace/trace_file.h"

#define GT_SINK_MAX_QUEUED (256u << 20) /* bytes of chunks awaiting zstd */
#define GT_SINK_CHUNK_CAP (GT_CHUNK_TARGET + GT_MAX_SLOTS * GT_SLOT_SIZE)
#define GT_SINK_POOL 32 /* chunks faulted in at start: 32 MiB */

struct chunk {
  struct chunk *next;
  size_t len;
  uint32_t records;
  int pooled;
  unsigned char data[];
};

struct gt_sink {
  struct gt_output *out;
  struct chunk *head, *tail; /* full chunks, oldest first */
  size_t queued_bytes;
  struct chunk *spare; /* free pool chunks */
  void *pool;
  size_t pool_bytes;
  struct chunk *cur; /* being filled */
  uint64_t records;
  void (*observe)(void *ctx, const struct gt_record *rec);
  void *observe_ctx;
};

#define CHUNK_STRIDE ((sizeof(struct chunk) + GT_SINK_CHUNK_CAP + 63) & ~(size_t)63)

struct gt_sink *gt_sink_start(struct gt_output *w) {
  struct gt_sink *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->out = w;
  s->pool_bytes = CHUNK_STRIDE * GT_SINK_POOL;
  s->pool = mmap(NULL, s->pool_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (s->pool == MAP_FAILED) {
    s->pool = NULL; /* run without a pool: slower under bursts, still correct */
    return s;
  }
  for (unsigned i = 0; i < GT_SINK_POOL; i++) {
    struct chunk *c = (void *)((unsigned char *)s->pool + i * CHUNK_STRIDE);
    c->pooled = 1;
    c->next = s->spare;
    s->spare = c;
  }
  return s;
}

int gt_sink_has_room(struct gt_sink *s) {
  return s->queued_bytes < GT_SINK_MAX_QUEUED;
}

int gt_sink_pending(const struct gt_sink *s) {
  return s->head != NULL;
}

void gt_sink_cut(struct gt_sink *s) {
  struct chunk *c = s->cur;
  if (!c || c->len == 0)
    return;
  s->cur = NULL;
  c->next = NULL;
  s->queued_bytes += c->len;
  if (s->tail)
    s->tail->next = c;
  else
    s->head = c;
  s->tail = c;
}

int gt_sink_write_one(struct gt_sink *s) {
  struct chunk *c = s->head;
  if (!c)
    return 0;
  s->head = c->next;
  if (!s->head)
    s->tail = NULL;
  s->queued_bytes -= c->len;
  gt_output_write_chunk(s->out, c->data, c->len, c->records);
  if (c->pooled) {
    c->next = s->spare;
    s->spare = c;
  } else {
    free(c);
  }
  return 1;
}

struct gt_record *gt_sink_space(struct gt_sink *s) {
  if (!s->cur) {
    struct chunk *c = s->spare;
    if (c) {
      s->spare = c->next;
    } else if ((c = malloc(sizeof *c + GT_SINK_CHUNK_CAP)) != NULL) {
      c->pooled = 0;
    } else {
      abort(); /* the collector cannot go on without memory */
    }
    c->next = NULL;
    c->len = 0;
    c->records = 0;
    s->cur = c;
  }
  return (struct gt_record *)(void *)(s->cur->data + s->cur->len);
}

void gt_sink_commit(struct gt_sink *s) {
  const struct gt_record *rec = (const void *)(s->cur->data + s->cur->len);
  if (s->observe)
    s->observe(s->observe_ctx, rec);
  s->cur->len += (size_t)rec->nslots * GT_SLOT_SIZE;
  s->cur->records++;
  s->records++;
  if (s->cur->len >= GT_CHUNK_TARGET)
    gt_sink_cut(s);
}

void gt_sink_put(struct gt_sink *s, const struct gt_record *rec) {
  memcpy(gt_sink_space(s), rec, (size_t)rec->nslots * GT_SLOT_SIZE);
  gt_sink_commit(s);
}

void gt_sink_note(struct gt_sink *s, uint64_t ts_ns, uint32_t pid, uint32_t flags,
                  const char *text) {
  struct gt_record *rec = gt_sink_space(s);
  memset(rec, 0, sizeof *rec);
  rec->ts_ns = ts_ns;
  rec->pid = rec->tid = pid;
  rec->api = GT_API_gputrace_note;
  rec->kind = GT_KIND_NOTE;
  rec->flags = flags;
  gt_record_attach_text(rec, text, strlen(text));
  gt_sink_commit(s);
}

uint64_t gt_sink_records(const struct gt_sink *s) {
  return s->records;
}

void gt_sink_observe(struct gt_sink *s,
                     void (*fn)(void *ctx, const struct gt_record *rec), void *ctx) {
  s->observe = fn;
  s->observe_ctx = ctx;
}

void gt_sink_stop(struct gt_sink *s) {
  gt_sink_cut(s);
  while (gt_sink_write_one(s))
    ;
  if (s->cur && !s->cur->pooled)
    free(s->cur);
  if (s->pool)
    munmap(s->pool, s->pool_bytes);
  free(s);
}
