/* order.c — see order.h.
 *
 * A k-way merge: one FIFO queue per stream, and a binary min-heap of the
 * streams that have records, keyed by their first record. A stream's queue
 * only ever gives its head, which is what keeps its file order. Streams are
 * few (threads and processes), so a pop costs a few comparisons.
 *
 * Taking records out as soon as nothing can come before them keeps the
 * buffer small when all threads are busy — records then leave while still
 * in the cache (docs/PERFORMANCE.md, One session for every command) — and
 * leaves the look-ahead to the caller's window
 * when a thread is waiting (inside a long call; device timing written in
 * bursts).
 */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "util.h"

#define CACHE 64      /* direct-mapped stream lookup before the map */
#define SWEEP 1024u   /* adds between looks for streams gone quiet */
#define SMALL 1024u   /* queue entries kept however little is buffered */
#define PREFETCH 16u  /* records ahead of a pop */
#define QPREFETCH 64u /* queue entries ahead of a pop */

struct entry {
  const struct gt_record *rec;
  uint64_t ts;
  uint64_t tag; /* DEVICE << 63 | add order << 16 | handle: ties go to the smaller */
};

struct stream {
  struct entry *q; /* ring buffer, cap a power of two */
  uint32_t head, len, cap;
  uint64_t last_add; /* add count when it last had a record added */
  int waiting;       /* empty while active: counted in `waiting` */
  int never_waits;   /* the collector's: stamped as written, later than what came */
};

struct node { /* a stream with records, keyed by its head (kept here: the
                 comparisons stay in the heap's own cache lines) */
  uint64_t ts, tag;
  uint32_t stream;
};

struct gt_order {
  struct stream *s;
  size_t ns, cap;
  struct gt_map index;  /* stream key -> index */
  uint64_t ckey[CACHE]; /* key + 1 */
  uint32_t cidx[CACHE]; /* its index */
  struct node *heap;    /* min-heap by (ts, tag) */
  size_t nheap, heap_cap;
  size_t waiting; /* active streams with nothing buffered */
  uint64_t added, buffered, late, max_out, max_in;
};

struct gt_order *gt_order_new(void) {
  return gt_xcalloc(1, sizeof(struct gt_order));
}

void gt_order_free(struct gt_order *o) {
  if (!o)
    return;

  for (size_t i = 0; i < o->ns; i++)
    free(o->s[i].q);
  free(o->s);
  free(o->heap);
  gt_map_free(&o->index);
  free(o);
}

/* Records the collector writes itself (process start/end, drops, losses,
 * frames, the machine's metrics and notes). */
static int from_collector(unsigned kind) {
  return kind == GT_KIND_PROCESS || kind == GT_KIND_DROP || kind == GT_KIND_LOST ||
         kind == GT_KIND_FRAME || kind == GT_KIND_METRIC || kind == GT_KIND_NOTE;
}

/* Which stream a record belongs to (see order.h). */
static uint64_t stream_key(const struct gt_record *r) {
  if (r->kind == GT_KIND_DEVICE)
    return gt_pid_key(r->pid, (uint64_t)r->tid | 1ull << 32);
  if (from_collector(r->kind))
    return gt_pid_key(r->pid, 2ull << 32);
  return gt_pid_key(r->pid, r->tid);
}

static uint32_t stream_of(struct gt_order *o, const struct gt_record *r) {
  uint64_t key = stream_key(r);
  size_t v;
  unsigned c = (unsigned)((key ^ key >> 29) % CACHE);
  if (o->ckey[c] == key + 1)
    return o->cidx[c];
  int added;
  o->s = gt_find_or_add(&o->index, key, o->s, &o->ns, &o->cap, sizeof *o->s, &v, &added);
  if (added) { /* room in the heap for every stream */
    o->heap = gt_grow(o->heap, &o->heap_cap, o->ns, sizeof *o->heap);
    o->s[v].never_waits = from_collector(r->kind);
  }
  o->ckey[c] = key + 1;
  o->cidx[c] = (uint32_t)v;
  return (uint32_t)v;
}

static int before(const struct node *a, const struct node *b) {
  return a->ts < b->ts || (a->ts == b->ts && a->tag < b->tag);
}

static void sift_up(struct gt_order *o, size_t i) {
  struct node n = o->heap[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!before(&n, &o->heap[p]))
      break;
    o->heap[i] = o->heap[p];
    i = p;
  }
  o->heap[i] = n;
}

static void sift_down(struct gt_order *o, size_t i) {
  struct node n = o->heap[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= o->nheap)
      break;
    if (c + 1 < o->nheap && before(&o->heap[c + 1], &o->heap[c]))
      c++;
    if (!before(&o->heap[c], &n))
      break;
    o->heap[i] = o->heap[c];
    i = c;
  }
  o->heap[i] = n;
}

/* A new ring of `cap` entries, the buffered ones first. */
static void resize(struct stream *st, uint32_t cap) {
  struct entry *q = gt_xcalloc(cap, sizeof *q);
  for (uint32_t i = 0; i < st->len; i++)
    q[i] = st->q[(st->head + i) & (st->cap - 1)];
  free(st->q);
  st->q = q;
  st->cap = cap;
  st->head = 0;
}

static inline void push(struct stream *st, const struct gt_record *rec, uint64_t ts,
                        uint64_t tag) {
  if (st->len == st->cap)
    resize(st, st->cap ? st->cap * 2 : 64);
  struct entry *e = &st->q[(st->head + st->len++) & (st->cap - 1)];
  e->rec = rec;
  e->ts = ts;
  e->tag = tag;
}

/* Streams empty and quiet for GT_ORDER_ACTIVE adds hold nothing up. */
static void sweep(struct gt_order *o) {
  for (size_t i = 0; i < o->ns && o->waiting; i++)
    if (o->s[i].waiting && o->added - o->s[i].last_add >= GT_ORDER_ACTIVE) {
      o->s[i].waiting = 0;
      o->waiting--;
    }
}

void gt_order_add(struct gt_order *o, const struct gt_record *rec, unsigned handle) {
  uint32_t s = stream_of(o, rec);
  struct stream *st = &o->s[s];
  /* Device work after the host records of its time and a little later
   * (order.h): it cannot start before the call that queued it, but the two
   * are stamped on different clocks, and its stream may be read first. */
  int device = rec->kind == GT_KIND_DEVICE;
  uint64_t ts = rec->ts_ns + (device ? GT_ORDER_DEVICE_SLACK_NS : 0),
           tag = (uint64_t)device << 63 | (o->added & (UINT64_MAX >> 17)) << 16 |
                 (handle & 0xffffu);
  if (ts < o->max_out)
    o->late++;
  if (ts > o->max_in)
    o->max_in = ts;
  push(st, rec, ts, tag);
  st->last_add = o->added++;
  o->buffered++;
  if (st->len == 1) {
    struct node *n = &o->heap[o->nheap++];
    n->ts = ts;
    n->tag = tag;
    n->stream = s;
    sift_up(o, o->nheap - 1);
    if (st->waiting) {
      st->waiting = 0;
      o->waiting--;
    }
  }
  if (o->waiting && o->added % SWEEP == 0)
    sweep(o);
}

int gt_order_ready(const struct gt_order *o) {
  return o->nheap && !o->waiting && o->max_in >= o->heap[0].ts &&
         o->max_in - o->heap[0].ts >= GT_ORDER_HORIZON_NS;
}

int gt_order_pop(struct gt_order *o, const struct gt_record **rec, unsigned *handle) {
  if (!o->nheap)
    return 0;
  uint32_t s = o->heap[0].stream;
  struct stream *st = &o->s[s];
  const struct entry *e = &st->q[st->head];
  *rec = e->rec;
  *handle = (unsigned)(e->tag & 0xffffu);
  if (e->ts > o->max_out)
    o->max_out = e->ts;
  st->head = (st->head + 1) & (st->cap - 1);
  if (--st->len) { /* its next record is the stream's new key */
    if (st->cap > SMALL && st->len < st->cap / 16) /* back to a ring that stays cached */
      resize(st, st->cap / 8);
    e = &st->q[st->head];
    /* Buffered for 10 ms, a record and its entry are out of the cache: the
     * entry QPREFETCH pops ahead is fetched (its address is known), and the
     * record PREFETCH ahead, whose entry came in that way. */
    if (st->len > QPREFETCH)
      __builtin_prefetch(&st->q[(st->head + QPREFETCH) & (st->cap - 1)]);
    if (st->len > PREFETCH) {
      const char *ahead = (const char *)st->q[(st->head + PREFETCH) & (st->cap - 1)].rec;
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + 64);
    }
    o->heap[0].ts = e->ts;
    o->heap[0].tag = e->tag;
  } else {
    o->heap[0] = o->heap[--o->nheap];
    st->head = 0; /* refill from the start: the same cache lines */
    if (!st->never_waits &&
        o->added - st->last_add < GT_ORDER_ACTIVE) { /* more to come */
      st->waiting = 1;
      o->waiting++;
    }
  }
  if (o->nheap > 1)
    sift_down(o, 0);
  o->buffered--;
  return 1;
}

size_t gt_order_buffered(const struct gt_order *o) {
  return o->buffered;
}

uint64_t gt_order_late(const struct gt_order *o) {
  return o->late;
}
