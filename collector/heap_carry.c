/* heap_carry.c — the live allocations of each traced process, kept for the
 * files of a rolling set (output.c) and written at the start of each new
 * file, so that a set whose older files were deleted still knows what was
 * live and how high memory went.
 *
 * Contract (collector.h has the API):
 *  - gt_heap_carry_put sees the records that go into the files (the ALLOC
 *    and FREE records among them count; not a graph's nodes: graph_cache.c
 *    keeps those), in file order. Readers take allocations and frees in
 *    time order (session.h), which file order is not across threads (each
 *    thread's ring is drained in turn): a free of one thread and another
 *    thread's allocation at the address it freed may come the other way
 *    round. So they are applied in time order too: held until a record
 *    HOLD_NS later has gone into the files (or a file is closed, which
 *    applies all), then applied by the analyzer's rule, with its own code
 *    (model/heap.c, the allocation layer every command reads with). The
 *    carry holds the blocks a reader of the files so far holds live, and
 *    their process's peaks (a record that comes more than HOLD_NS late, or
 *    the records just before a file is closed, can move a peak that two
 *    threads' allocations make together by the blocks in flight then).
 *  - gt_heap_carry_write appends, per process with live blocks or a peak,
 *    each live block's ALLOC record as it came (its stack, time and
 *    thread), then one HEAP record with the process's peaks and when they
 *    were reached, all flagged GT_F_REPLAYED | GT_F_CARRIED: a reader whose
 *    first file this is starts with them, a reader of the earlier files
 *    passes them over (trace_reader.c).
 *  - Held records wait in a queue while they come in time order (a storm
 *    of one thread's: no reordering, O(1) each), and one that comes earlier
 *    than the last queued waits in a binary heap; the earlier of the two
 *    fronts is applied first (docs/PERFORMANCE.md, Flight recorder: the
 *    heap alone was 44 % of the collector's CPU in an allocation storm).
 *  - gt_heap_carry_seed starts a carry from a file's own start (a flight
 *    recorder's snapshot cut inside a segment: flight.c): its carried
 *    blocks are held as the allocations they were, its HEAP record's peaks
 *    are the peaks so far.
 *  - A process that ended is forgotten (gt_heap_carry_forget).
 *  - Memory: one record (96 bytes) and one heap block per live
 *    allocation, and the records held (HOLD_NS of allocations and frees).
 */
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "gputrace/map.h"
#include "heap.h"
#include "util.h"

#define HOLD_NS 250000000ull /* 250 ms: later than a drain pass, or a long call */

struct held { /* an allocation or free waiting for time order */
  struct gt_record rec;
  uint64_t seq;
};

struct gt_heap_carry {
  struct held *held; /* a binary heap, earliest (ts_ns, seq) first */
  size_t nheld, cheld;
  struct held *run; /* records in time order: queued in [run_head, nrun) */
  size_t run_head, nrun, crun;
  uint64_t seq, newest;   /* records put; the latest ts_ns put */
  struct gt_heap *heap;   /* the analyzer's rules: what is live, the peaks */
  struct gt_map index;    /* (pid, ptr) -> position in recs */
  struct gt_record *recs; /* the live blocks' ALLOC records */
  size_t n, cap;
  uint32_t *pids; /* processes seen, for their HEAP records */
  size_t npids, cpids;
};

struct gt_heap_carry *gt_heap_carry_new(void) {
  struct gt_heap_carry *c = calloc(1, sizeof *c);
  if (c && !(c->heap = gt_heap_new())) {
    free(c);
    return NULL;
  }
  return c;
}

void gt_heap_carry_free(struct gt_heap_carry *c) {
  if (!c)
    return;
  gt_heap_free(c->heap);
  free(c->held);
  free(c->run);
  gt_map_free(&c->index);
  free(c->recs);
  free(c->pids);
  free(c);
}

static void drop_at(struct gt_heap_carry *c, uint64_t key, uint64_t pos) {
  gt_map_del(&c->index, key);
  if (pos != c->n - 1) { /* the last one fills the hole */
    c->recs[pos] = c->recs[c->n - 1];
    const struct gt_record *m = &c->recs[pos];
    gt_map_put(&c->index, gt_pid_key(m->pid, m->u.mem.ptr), pos);
  }
  c->n--;
}

static void add_pid(struct gt_heap_carry *c, uint32_t pid) {
  for (size_t i = 0; i < c->npids; i++)
    if (c->pids[i] == pid)
      return;
  if (c->npids == c->cpids) {
    size_t cap = c->cpids ? 2 * c->cpids : 16;
    uint32_t *p = realloc(c->pids, cap * sizeof *p);
    if (!p)
      return;
    c->pids = p;
    c->cpids = cap;
  }
  c->pids[c->npids++] = pid;
}

static void keep_alloc(struct gt_heap_carry *c, const struct gt_record *r) {
  struct gt_block b, old;
  gt_heap_alloc(c->heap, r, 0, &old);
  if (!gt_heap_find(c->heap, r->pid, r->u.mem.ptr, &b) || b.ts_ns != r->ts_ns ||
      b.tid != r->tid)
    return; /* not a block (failed, NULL, a mapping) */
  add_pid(c, r->pid);
  uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), pos;
  if (!gt_map_get(&c->index, key, &pos)) {
    c->recs = gt_grow(c->recs, &c->cap, c->n + 1, sizeof *c->recs);
    pos = c->n++;
    gt_map_put(&c->index, key, pos);
  }
  c->recs[pos] = *r; /* allocation records carry no text: one slot */
  c->recs[pos].nslots = 1;
}

static void apply(struct gt_heap_carry *c, const struct gt_record *r) {
  if (r->kind == GT_KIND_ALLOC) {
    keep_alloc(c, r);
    return;
  }
  struct gt_block b;
  uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), pos;
  if (gt_heap_release(c->heap, r, &b) == GT_FREE_OK && gt_map_get(&c->index, key, &pos))
    drop_at(c, key, pos);
}

static int earlier(const struct held *a, const struct held *b) {
  return a->rec.ts_ns != b->rec.ts_ns ? a->rec.ts_ns < b->rec.ts_ns : a->seq < b->seq;
}

static void heap_push(struct gt_heap_carry *c, const struct held *h) {
  c->held = gt_grow(c->held, &c->cheld, c->nheld + 1, sizeof *c->held);
  size_t i = c->nheld++;
  for (; i > 0 && earlier(h, &c->held[(i - 1) / 2]); i = (i - 1) / 2)
    c->held[i] = c->held[(i - 1) / 2];
  c->held[i] = *h;
}

static void heap_pop(struct gt_heap_carry *c) {
  struct held last = c->held[--c->nheld];
  size_t i = 0;
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= c->nheld)
      break;
    if (k + 1 < c->nheld && earlier(&c->held[k + 1], &c->held[k]))
      k++;
    if (!earlier(&c->held[k], &last))
      break;
    c->held[i] = c->held[k];
    i = k;
  }
  if (c->nheld)
    c->held[i] = last;
}

static void run_push(struct gt_heap_carry *c, const struct held *h) {
  if (c->nrun == c->crun && c->run_head > 0) { /* room at the front: move down */
    memmove(c->run, c->run + c->run_head, (c->nrun - c->run_head) * sizeof *c->run);
    c->nrun -= c->run_head;
    c->run_head = 0;
  }
  c->run = gt_grow(c->run, &c->crun, c->nrun + 1, sizeof *c->run);
  c->run[c->nrun++] = *h;
}

/* Queued in time order, unless it is earlier than the last queued. */
static void hold(struct gt_heap_carry *c, const struct gt_record *r) {
  struct held h = {.rec = *r, .seq = c->seq++};
  if (c->run_head == c->nrun || !earlier(&h, &c->run[c->nrun - 1]))
    run_push(c, &h);
  else
    heap_push(c, &h);
}

/* The earliest held record, or NULL. */
static const struct held *earliest(const struct gt_heap_carry *c) {
  const struct held *q = c->run_head < c->nrun ? &c->run[c->run_head] : NULL;
  if (!c->nheld)
    return q;
  return q && !earlier(&c->held[0], q) ? q : &c->held[0];
}

/* Apply the earliest held record. */
static void apply_earliest(struct gt_heap_carry *c) {
  const struct held *e = earliest(c);
  apply(c, &e->rec);
  if (e != c->held) {
    if (++c->run_head == c->nrun)
      c->run_head = c->nrun = 0;
  } else {
    heap_pop(c);
  }
}

void gt_heap_carry_put(struct gt_heap_carry *c, const struct gt_record *r) {
  if (r->flags & GT_F_REPLAYED)
    return;
  if (r->ts_ns > c->newest && gt_kind_is_call(r->kind))
    c->newest = r->ts_ns;
  if (r->kind == GT_KIND_ALLOC || r->kind == GT_KIND_FREE)
    hold(c, r);
  for (const struct held *e; (e = earliest(c)) && e->rec.ts_ns + HOLD_NS <= c->newest;)
    apply_earliest(c);
}

void gt_heap_carry_seed(struct gt_heap_carry *c, const struct gt_record *rec) {
  if (!(rec->flags & GT_F_CARRIED))
    return;
  if (rec->kind == GT_KIND_HEAP) {
    add_pid(c, rec->pid);
    gt_heap_carry(c->heap, rec);
  } else if (rec->kind == GT_KIND_ALLOC) {
    struct gt_record r = *rec; /* the block as it was allocated */
    r.flags &= ~(GT_F_REPLAYED | GT_F_CARRIED);
    hold(c, &r);
  }
}

void gt_heap_carry_forget(struct gt_heap_carry *c, uint32_t pid) {
  size_t kept = 0; /* its queued records go too, the rest stay in order */
  for (size_t i = c->run_head; i < c->nrun; i++)
    if (c->run[i].rec.pid != pid)
      c->run[kept++] = c->run[i];
  c->run_head = 0;
  c->nrun = kept;
  size_t w = 0; /* its held records go too; the rest are heaped again */
  for (size_t i = 0; i < c->nheld; i++)
    if (c->held[i].rec.pid != pid)
      c->held[w++] = c->held[i];
  size_t n = w;
  c->nheld = 0;
  for (size_t i = 0; i < n; i++) {
    struct held h = c->held[i];
    size_t j = c->nheld++;
    for (; j > 0 && earlier(&h, &c->held[(j - 1) / 2]); j = (j - 1) / 2)
      c->held[j] = c->held[(j - 1) / 2];
    c->held[j] = h;
  }
  gt_heap_forget(c->heap, pid);
  for (size_t i = c->n; i-- > 0;)
    if (c->recs[i].pid == pid)
      drop_at(c, gt_pid_key(pid, c->recs[i].u.mem.ptr), i);
  for (size_t i = 0; i < c->npids; i++)
    if (c->pids[i] == pid) {
      c->pids[i] = c->pids[--c->npids];
      break;
    }
}

static void append(struct gt_replay_buf *out, const struct gt_record *r) {
  if (out->len + GT_SLOT_SIZE > out->cap) {
    size_t cap = out->cap ? 2 * out->cap : 65536;
    while (cap < out->len + GT_SLOT_SIZE)
      cap *= 2;
    unsigned char *p = realloc(out->data, cap);
    if (!p)
      return; /* this file misses them; the set as a whole still has them */
    out->data = p;
    out->cap = cap;
  }
  struct gt_record *w = (void *)(out->data + out->len);
  *w = *r;
  w->flags |= GT_F_REPLAYED | GT_F_CARRIED;
  out->len += GT_SLOT_SIZE;
  out->records++;
}

void gt_heap_carry_write(struct gt_heap_carry *c, uint64_t now_ns,
                         struct gt_replay_buf *out) {
  while (earliest(c)) /* what the files before hold, all of it */
    apply_earliest(c);
  for (size_t p = 0; p < c->npids; p++) {
    uint32_t pid = c->pids[p];
    for (size_t i = 0; i < c->n; i++)
      if (c->recs[i].pid == pid)
        append(out, &c->recs[i]);
    struct gt_record h;
    memset(&h, 0, sizeof h);
    h.ts_ns = now_ns;
    h.pid = h.tid = pid;
    h.api = GT_API_gputrace_note;
    h.kind = GT_KIND_HEAP;
    h.nslots = 1;
    gt_heap_record_peaks(c->heap, pid, &h.u.heap);
    append(out, &h);
  }
}

uint64_t gt_heap_carry_blocks(const struct gt_heap_carry *c) {
  return c->n;
}
