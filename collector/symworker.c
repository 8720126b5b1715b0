/* symworker.c — symbolization off the drain loop (see collector.h).
 *
 * The drain loop hands copies of STACK and MODULE records, and the end of
 * each process, to one worker thread through a queue; the worker runs
 * symbols.c and queues FRAME records back; the drain loop moves them into
 * the sink. So reading a symbol file — large, slow, on a hung network file
 * system, or a FIFO a hostile process named — can delay names, never the
 * draining of rings.
 *
 * Both queues are byte buffers under one mutex, held only to append or to
 * swap a buffer out: the worker never symbolizes with it held. The drain
 * loop never waits for that mutex: the worker runs at nice 19, so on a busy
 * machine it can be preempted while holding it and not run again for
 * hundreds of ms (CFS gives nice 19 1/68th of a nice-0 share, and lends no
 * priority to a lock's holder), and a drain loop blocked behind it lets the
 * rings overflow. So the drain loop only ever try-locks: items wait in its
 * own staging buffer until a try succeeds (a later push, take or pace),
 * frames wait in the worker's. Items are numbered; `taken` is the number of
 * the last item whose frames are in the sink, so a client can wait for its
 * own stacks before its end record.
 * The input queue (staged and handed over) is bounded: past
 * GT_SYMQ_MAX_BYTES, stacks are counted and left unsymbolized (modules and
 * ends are always taken: they are few and later stacks need them). Stopping waits for the
 * backlog while the worker makes progress, and gives up after a stall; what is left is
 * reported in a NOTE record, never waited for forever. The worker runs at the lowest
 * priority (nice 19), below the drain loop, and is held while the drain
 * loop is busy (gt_symq_pace: a pass that moved GT_SYMQ_BUSY_RECORDS or
 * more), for at most GT_SYMQ_HOLD_NS a storm: even at nice 19, reading
 * DWARF during a launch storm slows the traced program (docs/PERFORMANCE.md,
 * Launch overhead: the symbolizer held during storms). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"

#define GT_SYMQ_MAX_BYTES (64u << 20)
#define GT_SYMQ_BUSY_RECORDS 4096u    /* in one drain pass: a storm */
#define GT_SYMQ_HOLD_NS 1000000000ull /* the longest a storm holds names back */

enum { ITEM_MODULE = 1, ITEM_STACK = 2, ITEM_END = 3 };

struct item {
  uint32_t type;
  uint32_t pid;
  uint64_t seq;
  uint32_t nslots; /* record slots that follow (MODULE, STACK) */
  uint32_t pad;
};

struct buf {
  unsigned char *p;
  size_t len, cap;
};

struct gt_symq {
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  struct buf in, out;        /* under mu */
  struct buf stage;          /* drain loop only: items not yet handed over to `in` */
  struct buf got;            /* drain loop only: FRAME records swapped out of `out` */
  size_t in_seen;            /* drain loop only: in.len when it last held mu */
  int stop;                  /* under mu */
  int held;                  /* under mu: gt_symq_pace holds the worker */
  uint64_t busy_since;       /* drain loop only: the storm's first pass, 0: none */
  uint64_t pushed;           /* drain loop only */
  uint64_t taken;            /* drain loop only: items whose frames are in the sink */
  _Atomic uint64_t done;     /* the worker's: items whose frames are in `out` */
  uint64_t skipped;          /* drain loop only: stacks left unsymbolized */
  struct gt_symbolizer *sym; /* worker only */
};

static int buf_append(struct buf *b, const void *data, size_t len) {
  if (len == 0)
    return 0; /* data may be NULL then (an empty buffer) */
  if (b->len + len > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 65536;
    while (cap < b->len + len)
      cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p)
      return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, data, len);
  b->len += len;
  return 0;
}

static void swap_buf(struct buf *a, struct buf *b) {
  struct buf t = *a;
  *a = *b;
  *b = t;
}

/* Worker: FRAME records go to a private buffer first, then out in one go. */
static void put_local(void *ctx, const struct gt_record *rec) {
  buf_append(ctx, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
}

static void run_item(struct gt_symq *q, const struct item *it,
                     const struct gt_record *rec, struct buf *frames) {
  if (it->type == ITEM_MODULE)
    gt_sym_add_module(q->sym, it->pid, rec);
  else if (it->type == ITEM_STACK)
    gt_sym_stack(q->sym, it->pid, rec, put_local, frames);
  else
    gt_sym_forget(q->sym, it->pid);
  pthread_mutex_lock(&q->mu);
  buf_append(&q->out, frames->p, frames->len);
  pthread_mutex_unlock(&q->mu);
  frames->len = 0;
  atomic_store_explicit(&q->done, it->seq, memory_order_release);
}

static void *worker(void *arg) {
  struct gt_symq *q = arg;
  struct buf work = {0}, frames = {0};
  /* Names can wait; draining cannot: on a busy machine (a launch storm on
   * two cores) reading a library's DWARF must not take the drain loop's or
   * the traced program's CPU. Lowest priority for this thread alone. */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
  for (;;) {
    pthread_mutex_lock(&q->mu);
    while ((q->in.len == 0 || q->held) && !q->stop)
      pthread_cond_wait(&q->wake, &q->mu);
    int stop = q->stop && q->in.len == 0;
    swap_buf(&q->in, &work);
    pthread_mutex_unlock(&q->mu);
    if (stop)
      break;
    for (size_t off = 0; off < work.len;) {
      struct item it;
      memcpy(&it, work.p + off, sizeof it);
      off += sizeof it;
      run_item(q, &it, (const void *)(work.p + off), &frames);
      off += (size_t)it.nslots * GT_SLOT_SIZE;
    }
    work.len = 0;
  }
  free(work.p);
  free(frames.p);
  return NULL;
}

struct gt_symq *gt_symq_start(void) {
  struct gt_symq *q = calloc(1, sizeof *q);
  if (!q || !(q->sym = gt_sym_new())) {
    free(q);
    return NULL;
  }
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->wake, NULL);
  q->started = pthread_create(&q->thread, NULL, worker, q) == 0;
  return q;
}

/* Drain loop, mu held: hand the staged items to the worker. An append
 * that fails (out of memory) leaves them staged for the next try. */
static void hand_over(struct gt_symq *q) {
  if (q->stage.len > 0) {
    if (q->in.len == 0)
      swap_buf(&q->in, &q->stage);
    else if (buf_append(&q->in, q->stage.p, q->stage.len) == 0)
      q->stage.len = 0;
    pthread_cond_signal(&q->wake);
  }
  q->in_seen = q->in.len;
}

/* Drain loop: staged items to the worker, unless it holds mu right now. */
static void try_hand_over(struct gt_symq *q) {
  if (q->stage.len == 0 || pthread_mutex_trylock(&q->mu) != 0)
    return;
  hand_over(q);
  pthread_mutex_unlock(&q->mu);
}

static uint64_t push(struct gt_symq *q, uint32_t type, uint32_t pid,
                     const struct gt_record *rec) {
  struct item it = {.type = type, .pid = pid, .nslots = rec ? rec->nslots : 0};
  size_t len = (size_t)it.nslots * GT_SLOT_SIZE, start = q->stage.len;
  int ok =
      q->started && (type != ITEM_STACK || q->stage.len + q->in_seen < GT_SYMQ_MAX_BYTES);
  if (ok) {
    it.seq = q->pushed + 1;
    ok = buf_append(&q->stage, &it, sizeof it) == 0 &&
         (!rec || buf_append(&q->stage, rec, len) == 0);
    if (ok)
      q->pushed++;
    else
      q->stage.len = start; /* out of memory: no half-written item */
  }
  try_hand_over(q);
  if (!ok && type == ITEM_STACK)
    q->skipped++;
  return ok ? it.seq : 0;
}

uint64_t gt_symq_push(struct gt_symq *q, uint32_t pid, const struct gt_record *rec) {
  if (!q)
    return 0;
  return push(q, rec->kind == GT_KIND_STACK ? ITEM_STACK : ITEM_MODULE, pid, rec);
}

void gt_symq_end(struct gt_symq *q, uint32_t pid) {
  if (q)
    push(q, ITEM_END, pid, NULL);
}

void gt_symq_pace(struct gt_symq *q, unsigned moved, uint64_t now_ns) {
  if (!q)
    return;
  int busy = moved >= GT_SYMQ_BUSY_RECORDS;
  if (!busy)
    q->busy_since = 0;
  else if (!q->busy_since)
    q->busy_since = now_ns;
  int hold = busy && now_ns - q->busy_since < GT_SYMQ_HOLD_NS;
  if (pthread_mutex_trylock(&q->mu) != 0)
    return; /* the worker is at work: the next pass holds or frees it */
  if (q->held && !hold)
    pthread_cond_signal(&q->wake);
  q->held = hold;
  hand_over(q);
  pthread_mutex_unlock(&q->mu);
}

int gt_symq_done(const struct gt_symq *q, uint64_t seq) {
  return !q || q->taken >= seq;
}

uint64_t gt_symq_pushed(const struct gt_symq *q) {
  return q ? q->pushed : 0;
}

/* Drain loop: the frames of `got` into the sink. */
static void put_got(struct gt_symq *q, struct gt_sink *sink) {
  for (size_t off = 0; off < q->got.len;) {
    const struct gt_record *rec = (const void *)(q->got.p + off);
    gt_sink_put(sink, rec);
    off += (size_t)rec->nslots * GT_SLOT_SIZE;
  }
  q->got.len = 0;
}

/* Drain loop, mu held: swap the finished frames out. Every item numbered
 * up to `done` as read here has its frames in `out` (the worker appends
 * them, then, after unlocking, moves `done`). */
static void swap_out(struct gt_symq *q) {
  swap_buf(&q->out, &q->got);
  q->taken = atomic_load_explicit(&q->done, memory_order_acquire);
}

void gt_symq_take(struct gt_symq *q, struct gt_sink *sink) {
  if (!q || pthread_mutex_trylock(&q->mu) != 0)
    return; /* the worker holds it: take them next pass */
  swap_out(q);
  hand_over(q);
  pthread_mutex_unlock(&q->mu);
  put_got(q, sink);
}

static void put_note(struct gt_sink *sink, const char *text) {
  gt_sink_note(sink, gt_now_ns(), 0, 0, text);
}

void gt_symq_stop(struct gt_symq *q, struct gt_sink *sink, uint64_t stall_ns) {
  if (!q)
    return;
  /* Draining is over: waiting for the lock is fine now. */
  pthread_mutex_lock(&q->mu);
  hand_over(q);
  q->stop = 1;
  pthread_cond_signal(&q->wake);
  uint64_t pushed = q->pushed;
  pthread_mutex_unlock(&q->mu);
  /* A large symbol file takes long but moves on; a stuck read does not. */
  uint64_t last = atomic_load(&q->done), since = gt_now_ns();
  while (last < pushed && gt_now_ns() - since < stall_ns) {
    struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL);
    uint64_t now_done = atomic_load(&q->done);
    if (now_done != last)
      last = now_done, since = gt_now_ns();
  }
  pthread_mutex_lock(&q->mu);
  swap_out(q);
  pthread_mutex_unlock(&q->mu);
  put_got(q, sink);
  int finished = gt_symq_done(q, pushed);
  char text[200];
  if (!finished) {
    snprintf(text, sizeof text,
             "symbolization did not finish: %llu queued items left (a symbol file "
             "stalled); their stacks have no names",
             (unsigned long long)(pushed - atomic_load(&q->done)));
    put_note(sink, text);
  }
  if (q->skipped) {
    snprintf(text, sizeof text, "%llu stacks not symbolized (the symbolizer fell behind)",
             (unsigned long long)q->skipped);
    put_note(sink, text);
  }
  if (!finished) /* the worker is stuck in a read: leave it to process exit */
    return;
  if (q->started)
    pthread_join(q->thread, NULL);
  gt_sym_free(q->sym);
  free(q->in.p);
  free(q->stage.p);
  free(q->out.p);
  free(q->got.p);
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->wake);
  free(q);
}
