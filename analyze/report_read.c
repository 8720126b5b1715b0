/* report_read.c — reading a trace for `gputrace report` and `diff`.
 *
 * Contract (report.h, rp_read_records): every record of the file, in file
 * order, whole (with its text slots) and writable, is passed to fn on the
 * calling thread. Reading and analysing overlap: a second thread runs the
 * reader (zstd decompression is about half the work) and hands records
 * over in batches of BATCH_BYTES, NBATCH at most in flight; memory is
 * bounded by those batches. Without a thread (resource limits) the records
 * are read and passed in turn.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_file.h"
#include "report.h"

#define BATCH_BYTES (1u << 20)
#define NBATCH 4

struct batch {
  unsigned char *buf;
  size_t len;
};

struct pipe {
  struct gt_reader *rd;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct batch b[NBATCH];
  size_t head, tail; /* batches filled: [tail, head) modulo NBATCH */
  int done;
};

static void hand_over(struct pipe *p, size_t len, int done) {
  pthread_mutex_lock(&p->mu);
  if (len) {
    p->b[p->head % NBATCH].len = len;
    p->head++;
  }
  p->done = done;
  pthread_cond_broadcast(&p->cv);
  while (!done && p->head - p->tail == NBATCH) /* wait for a free batch */
    pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

static void *produce(void *arg) {
  struct pipe *p = arg;
  const struct gt_record *rec;
  size_t len = 0;
  while (gt_reader_next(p->rd, &rec) == 1) {
    size_t n = (size_t)rec->nslots * GT_SLOT_SIZE;
    if (len + n > BATCH_BYTES) {
      hand_over(p, len, 0);
      len = 0;
    }
    memcpy(p->b[p->head % NBATCH].buf + len, rec, n); /* the head batch is ours */
    len += n;
  }
  hand_over(p, len, 1);
  return NULL;
}

/* Next filled batch (after releasing the previous one), or NULL at the end. */
static struct batch *consume(struct pipe *p, int release) {
  pthread_mutex_lock(&p->mu);
  if (release) {
    p->tail++;
    pthread_cond_broadcast(&p->cv);
  }
  while (p->head == p->tail && !p->done)
    pthread_cond_wait(&p->cv, &p->mu);
  struct batch *b = p->head == p->tail ? NULL : &p->b[p->tail % NBATCH];
  pthread_mutex_unlock(&p->mu);
  return b;
}

static void feed_batch(struct batch *b, void (*fn)(void *, struct gt_record *),
                       void *ctx) {
  for (size_t off = 0; off < b->len;) {
    /* gt_model_feed may rewrite a record (a free learns its bytes): the
     * batch is ours to write. Records are whole and aligned (96 bytes). */
    struct gt_record *rec = (struct gt_record *)(void *)(b->buf + off);
    off += (size_t)rec->nslots * GT_SLOT_SIZE;
    fn(ctx, rec);
  }
}

int rp_read_records(const char *path, const char *cmd,
                    void (*fn)(void *ctx, struct gt_record *rec), void *ctx,
                    int *damaged) {
  char err[512];
  struct pipe p = {.rd = gt_reader_open(path, err, sizeof err)};
  if (!p.rd) {
    fprintf(stderr, "gputrace %s: %s\n", cmd, err);
    return 2;
  }
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  for (int i = 0; i < NBATCH; i++)
    p.b[i].buf = gt_xcalloc(BATCH_BYTES, 1);
  pthread_t th;
  if (pthread_create(&th, NULL, produce, &p) == 0) {
    for (struct batch *b = consume(&p, 0); b; b = consume(&p, 1))
      feed_batch(b, fn, ctx);
    pthread_join(th, NULL);
  } else { /* no thread (resource limits): read and analyse in turn */
    const struct gt_record *rec;
    while (gt_reader_next(p.rd, &rec) == 1) {
      memcpy(p.b[0].buf, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
      fn(ctx, (struct gt_record *)(void *)p.b[0].buf);
    }
  }
  *damaged = gt_reader_warnings(p.rd) > 0;
  gt_reader_close(p.rd);
  for (int i = 0; i < NBATCH; i++)
    free(p.b[i].buf);
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
  return 0;
}
