/* sink.c — records to chunks to a writer thread (see collector.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "gputrace/trace_file.h"

#define GT_SINK_MAX_QUEUED (256u << 20) /* bytes of chunks awaiting zstd */
#define GT_SINK_CHUNK_CAP (GT_CHUNK_TARGET + GT_MAX_SLOTS * GT_SLOT_SIZE)

struct chunk {
  struct chunk *next;
  size_t len;
  uint32_t records;
  unsigned char data[];
};

struct gt_sink {
  struct gt_writer *writer;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct chunk *head, *tail; /* queue, under lock */
  _Atomic size_t queued_bytes;
  int stopping;
  struct chunk *cur; /* being filled by the drainer */
  uint64_t records;
};

static void *writer_main(void *arg) {
  struct gt_sink *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head && !s->stopping)
      pthread_cond_wait(&s->wake, &s->lock);
    struct chunk *c = s->head;
    if (!c)
      break; /* stopping and empty */
    s->head = c->next;
    if (!s->head)
      s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    gt_writer_write_chunk(s->writer, c->data, c->len, c->records);
    atomic_fetch_sub(&s->queued_bytes, c->len);
    free(c);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

struct gt_sink *gt_sink_start(struct gt_writer *w) {
  struct gt_sink *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->writer = w;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  if (pthread_create(&s->thread, NULL, writer_main, s) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

int gt_sink_has_room(struct gt_sink *s) {
  return atomic_load(&s->queued_bytes) < GT_SINK_MAX_QUEUED;
}

void gt_sink_cut(struct gt_sink *s) {
  struct chunk *c = s->cur;
  if (!c || c->len == 0)
    return;
  s->cur = NULL;
  atomic_fetch_add(&s->queued_bytes, c->len);
  pthread_mutex_lock(&s->lock);
  if (s->tail)
    s->tail->next = c;
  else
    s->head = c;
  s->tail = c;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
}

void gt_sink_put(struct gt_sink *s, const struct gt_record *rec) {
  if (!s->cur) {
    s->cur = malloc(sizeof *s->cur + GT_SINK_CHUNK_CAP);
    if (!s->cur)
      abort(); /* the collector cannot go on without memory */
    s->cur->next = NULL;
    s->cur->len = 0;
    s->cur->records = 0;
  }
  size_t len = (size_t)rec->nslots * GT_SLOT_SIZE;
  memcpy(s->cur->data + s->cur->len, rec, len);
  s->cur->len += len;
  s->cur->records++;
  s->records++;
  if (s->cur->len >= GT_CHUNK_TARGET)
    gt_sink_cut(s);
}

uint64_t gt_sink_records(const struct gt_sink *s) { return s->records; }

void gt_sink_stop(struct gt_sink *s) {
  gt_sink_cut(s);
  pthread_mutex_lock(&s->lock);
  s->stopping = 1;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->wake);
  free(s);
}
