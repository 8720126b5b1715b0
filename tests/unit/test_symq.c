/* test_symq.c — the collector's symbolizer queue (collector/symworker.c)
 * and its pacing: a drain pass that moved GT_SYMQ_BUSY_RECORDS (4096) or
 * more holds the worker, a quieter pass lets it go, one storm holds it for
 * 1 s at most, and stopping never waits for a hold. Items are empty STACK
 * records (nothing to symbolize, so an item is done as soon as the worker
 * takes it). Times given to gt_symq_pace are the test's own: only the
 * worker's progress is waited for, by polling with a generous limit.
 *
 * And the drain loop never waits for the worker: with the queue's lock held
 * (as by a nice-19 worker preempted inside it on a busy machine), push,
 * take and pace return at once, and what they could not hand over goes
 * once the lock is free. The test includes symworker.c to hold that lock;
 * before, the drain loop blocked on it and a traced program's ring
 * overflowed (e2e_test_hostile, mutating ring, under load: 53 of 400
 * launches dropped). */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../collector/symworker.c"
#include "check.h"

/* What symworker.c links against in the collector besides the clock
 * (tsc.c): the sink (sink.c). */
void gt_sink_put(struct gt_sink *s, const struct gt_record *rec) {
  (void)s;
  (void)rec;
  fprintf(stderr, "test_symq: nothing here should reach the sink\n");
  abort();
}
void gt_sink_note(struct gt_sink *s, uint64_t ts_ns, uint32_t pid, uint32_t flags,
                  const char *text) {
  (void)s, (void)ts_ns, (void)pid, (void)flags;
  fprintf(stderr, "test_symq: nothing here should reach the sink (%s)\n", text);
  abort();
}

static uint64_t push_stack(struct gt_symq *q) {
  struct gt_record rec;
  memset(&rec, 0, sizeof rec);
  rec.kind = GT_KIND_STACK;
  rec.api = GT_API_gputrace_stack;
  rec.nslots = 1; /* depth 0 */
  return gt_symq_push(q, 4242, &rec);
}

/* 1 once item seq is done, polling up to 10 s (the worker runs at nice 19). */
static int done_soon(struct gt_symq *q, uint64_t seq) {
  for (int i = 0; i < 10000 && !gt_symq_done(q, seq); i++) {
    usleep(1000);
    gt_symq_take(q, NULL); /* as each drain pass does: empty stacks have no frames */
  }
  return gt_symq_done(q, seq);
}

/* 1 when item seq is still not done after 50 ms: held. */
static int still_held(struct gt_symq *q, uint64_t seq) {
  usleep(50000);
  return !gt_symq_done(q, seq);
}

/* The lock held by "the worker": nothing the drain loop calls waits for it
 * (a blocked call hangs; the alarm ends the test then), and items pushed
 * meanwhile reach the worker once the lock is free. */
static void never_waits_for_the_worker(struct gt_symq *q) {
  alarm(20);
  pthread_mutex_lock(&q->mu);
  uint64_t f = push_stack(q), g = push_stack(q);
  CHECK_EQ_U64(g, f + 1);
  gt_symq_pace(q, 0, 1);
  gt_symq_take(q, NULL);
  CHECK(still_held(q, g)); /* staged, not handed over */
  CHECK_EQ_U64(q->in.len, 0);
  pthread_mutex_unlock(&q->mu);
  CHECK(done_soon(q, g)); /* handed over by the next take */
  alarm(0);
}

int main(void) {
  const uint64_t s = 1000000000ull, t = 5 * s;
  struct gt_symq *q = gt_symq_start();
  CHECK(q != NULL);
  if (!q)
    return check_finish("test_symq");

  /* Not paced yet: the worker takes items at once. */
  uint64_t a = push_stack(q);
  CHECK_EQ_U64(a, 1);
  CHECK(done_soon(q, a));

  /* A storm starts: held, also well into it, until it has lasted 1 s. */
  gt_symq_pace(q, 4096, t);
  uint64_t b = push_stack(q);
  CHECK(still_held(q, b));
  gt_symq_pace(q, 65536, t + s - 1);
  CHECK(still_held(q, b));
  gt_symq_pace(q, 65536, t + s);
  CHECK(done_soon(q, b));
  /* The same storm goes on: no second hold. */
  gt_symq_pace(q, 65536, t + 2 * s);
  uint64_t c = push_stack(q);
  CHECK(done_soon(q, c));

  /* A quiet pass (4095 records) ends the storm and lets the worker go. */
  gt_symq_pace(q, 4095, t + 3 * s);
  gt_symq_pace(q, 4096, t + 4 * s); /* a new storm: held again */
  uint64_t d = push_stack(q);
  CHECK(still_held(q, d));
  gt_symq_pace(q, 0, t + 4 * s + 1000);
  CHECK(done_soon(q, d));

  gt_symq_pace(q, 0, t + 4 * s + 2000);
  never_waits_for_the_worker(q);

  /* Stopping during a hold: the backlog is symbolized, not waited on for
   * the stall limit (that would end in a NOTE, and the sink's stubs abort). */
  gt_symq_pace(q, 4096, t + 5 * s);
  uint64_t e = push_stack(q);
  CHECK(still_held(q, e));
  uint64_t before = gt_now_ns();
  gt_symq_stop(q, NULL, 60 * s);
  CHECK(gt_now_ns() - before < 10 * s);
  return check_finish("test_symq");
}
