/* test_range_gpu.c — model/range_gpu.c on synthetic records: nested ranges
 * (the outer includes the inner), another thread's work (not the range's),
 * a DEVICE record after the range closed and one before its call (a
 * synchronous copy's), a graph launch's node records before it, a graph
 * launch's several records and the shares of its span (not counted),
 * sample weights, failed and captured calls, an occurrence done only once
 * its calls are matched or left the ring, and the flush at the end. */
#include <string.h>

#include "check.h"
#include "range_gpu.h"

struct got {
  double add[8], done[8];
  int ndone;
};

static void add(void *ctx, uint64_t user, double ns) {
  ((struct got *)ctx)->add[user] += ns;
}
static void done(void *ctx, uint64_t user, double ns) {
  struct got *g = ctx;
  g->done[user] = ns;
  g->ndone++;
}

static struct gt_record work(unsigned kind, uint32_t tid, uint32_t corr, uint32_t flags) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.kind = (uint8_t)kind;
  r.pid = 5;
  r.tid = tid;
  r.flags = flags;
  if (kind == GT_KIND_LAUNCH)
    r.u.launch.corr = corr;
  else if (kind == GT_KIND_MEMCPY)
    r.u.copy.corr = corr;
  else
    r.u.set.corr = corr;
  return r;
}

static struct gt_record dev(uint32_t tid, uint32_t corr, uint64_t dur, uint32_t sample,
                            uint32_t flags) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.kind = GT_KIND_DEVICE;
  r.pid = 5;
  r.tid = tid;
  r.dur_ns = dur;
  r.flags = flags;
  r.u.device.corr = corr;
  r.u.device.sample = sample;
  return r;
}

static void test_nesting_and_order(void) {
  struct got g = {0};
  struct gt_rgpu_hooks h = {.ctx = &g, .add = add, .done = done};
  struct gt_rgpu *rg = gt_rgpu_new(16, &h);
  struct gt_record r;
  uint64_t outer = gt_rgpu_open(rg, 5, 1, 1);
  r = work(GT_KIND_MEMCPY, 1, 10, 0), gt_rgpu_call(rg, &r);
  uint64_t inner = gt_rgpu_open(rg, 5, 1, 2);
  r = work(GT_KIND_LAUNCH, 1, 11, 0), gt_rgpu_call(rg, &r);
  r = work(GT_KIND_LAUNCH, 2, 11, 0),
  gt_rgpu_call(rg, &r); /* another thread: not theirs */
  r = work(GT_KIND_LAUNCH, 1, 12, 0x1 << 0), r.result = 2,
  gt_rgpu_call(rg, &r); /* failed */
  r = work(GT_KIND_LAUNCH, 1, 13, GT_F_CAPTURED), gt_rgpu_call(rg, &r);
  r = dev(1, 14, 70, 1, 0), gt_rgpu_device(rg, &r); /* before its call (a sync copy) */
  r = work(GT_KIND_MEMCPY, 1, 14, 0), gt_rgpu_call(rg, &r);
  gt_rgpu_close(rg, inner);
  CHECK_MSG(g.ndone == 0, "inner done with its launch untimed");
  r = dev(1, 11, 100, 4, 0), gt_rgpu_device(rg, &r); /* sampled 1 in 4 */
  CHECK_MSG(g.ndone == 1 && g.done[2] == 470, "inner: %g (done %d)", g.done[2], g.ndone);
  r = dev(2, 11, 1000, 1, 0), gt_rgpu_device(rg, &r);
  r = dev(1, 12, 1000, 1, 0), gt_rgpu_device(rg, &r);
  r = dev(1, 13, 1000, 1, 0), gt_rgpu_device(rg, &r);
  gt_rgpu_close(rg, outer);
  CHECK_MSG(g.ndone == 1, "outer waits for its copy");
  r = dev(1, 10, 5, 1, 0), gt_rgpu_device(rg, &r); /* after the range closed */
  CHECK_MSG(g.ndone == 2 && g.done[1] == 475 && g.add[1] == 475,
            "outer includes inner: %g (added %g)", g.done[1], g.add[1]);
  gt_rgpu_free(rg);
}

static void test_graphs_ring_flush(void) {
  struct got g = {0};
  struct gt_rgpu_hooks h = {.ctx = &g, .add = add, .done = done};
  struct gt_rgpu *rg = gt_rgpu_new(4, &h);
  struct gt_record r;
  uint64_t a = gt_rgpu_open(rg, 5, 1, 1);
  r = work(GT_KIND_LAUNCH, 1, 20, GT_F_GRAPH), gt_rgpu_call(rg, &r);
  r = dev(1, 20, 300, 1, GT_F_EXPANDED), gt_rgpu_device(rg, &r); /* the span */
  r = dev(1, 20, 100, 1, GT_F_GRAPH_RUN | GT_F_ESTIMATED), gt_rgpu_device(rg, &r);
  r = dev(1, 20, 7, 1, GT_F_GRAPH_RUN), gt_rgpu_device(rg, &r); /* a node's own (CUPTI) */
  r = work(GT_KIND_LAUNCH, 1, 21, 0), gt_rgpu_call(rg, &r);     /* never timed */
  gt_rgpu_close(rg, a);
  CHECK_MSG(g.ndone == 0, "a graph launch keeps its range until the ring comes round");
  uint64_t b = gt_rgpu_open(rg, 5, 1, 2);
  for (uint32_t c = 30; c < 34; c++) /* four calls: the ring of 4 comes round */
    r = work(GT_KIND_MEMSET, 1, c, 0), gt_rgpu_call(rg, &r);
  CHECK_MSG(g.ndone == 1 && g.done[1] == 307 && gt_rgpu_late(rg) == 1,
            "graph: span + node record, not the shares: %g; late %llu", g.done[1],
            (unsigned long long)gt_rgpu_late(rg));
  r = dev(1, 33, 9, 1, 0), gt_rgpu_device(rg, &r);
  gt_rgpu_flush(rg); /* b still open: done with what it has */
  CHECK_MSG(g.ndone == 2 && g.done[2] == 9, "flush: open range %g", g.done[2]);
  (void)b;
  gt_rgpu_free(rg);
}

/* A thread preempted between its graph launch and the launch's record: the
 * graph's node records (CUPTI), each with the launch's correlation id, come
 * first in the file; all of them count, once, and later ones still do. */
static void test_graph_records_before_launch(void) {
  struct got g = {0};
  struct gt_rgpu_hooks h = {.ctx = &g, .add = add, .done = done};
  struct gt_rgpu *rg = gt_rgpu_new(4, &h);
  struct gt_record r;
  uint64_t a = gt_rgpu_open(rg, 5, 1, 1);
  const uint64_t node_ns[4] = {211715, 211715, 28214, 2409};
  for (int i = 0; i < 3; i++)
    r = dev(1, 40, node_ns[i], 1, GT_F_GRAPH_RUN), gt_rgpu_device(rg, &r);
  r = dev(2, 40, 1000, 1, GT_F_GRAPH_RUN), gt_rgpu_device(rg, &r); /* another thread's */
  r = work(GT_KIND_LAUNCH, 1, 40, GT_F_GRAPH), gt_rgpu_call(rg, &r);
  CHECK_MSG(g.add[1] == 451644, "the three early node records: %g", g.add[1]);
  r = dev(1, 40, node_ns[3], 1, GT_F_GRAPH_RUN), gt_rgpu_device(rg, &r); /* after it */
  gt_rgpu_close(rg, a);
  gt_rgpu_flush(rg);
  CHECK_MSG(g.ndone == 1 && g.done[1] == 454053, "the graph's four nodes: %g", g.done[1]);
  gt_rgpu_free(rg);
}

int main(void) {
  test_graph_records_before_launch();
  test_nesting_and_order();
  test_graphs_ring_flush();
  return check_finish("test_range_gpu");
}
