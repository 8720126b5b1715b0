/* test_alloc.c — the allocation layer (heap.c through the session): each
 * free matched once, with the bytes, memory kind and stack of its
 * allocation; an address freed and handed out again; double, unknown,
 * wrong-kind, failed and NULL frees; a live address allocated again (its
 * free dropped); cuMemMap/cuMemUnmap holding nothing; a forked child with
 * its own heap; a free and a reallocation on two threads in time order;
 * live and peak bytes; the NVTX range allocations are made in. */
#include "check.h"
#include "synth.h"

#define MAX_EVENTS 64

struct got {
  size_t n;
  struct {
    uint8_t kind;
    enum gt_free_status status;
    int has_block;
    struct gt_block block;
    uint64_t shown_bytes; /* what dump prints for it */
  } ev[MAX_EVENTS];
};

static void note(void *ctx, const struct gt_event *ev) {
  struct got *g = ctx;
  struct gt_record scratch;
  if (g->n >= MAX_EVENTS)
    return;
  g->ev[g->n].kind = ev->rec->kind;
  g->ev[g->n].status = ev->free_status;
  g->ev[g->n].has_block = ev->block != NULL;
  if (ev->block)
    g->ev[g->n].block = *ev->block;
  g->ev[g->n].shown_bytes = gt_event_record(ev, &scratch)->u.mem.bytes;
  g->n++;
}

static uint64_t outer_tag(void *ctx, const struct gt_record *open) {
  (void)ctx;
  return open->ts_ns; /* the range's start: what allocations inside carry */
}

static struct gt_session *run(const char *path, uint32_t ordered, struct got *g) {
  struct gt_session_opts o = {
      .path = path, .layers = GT_LAYER_HEAP | GT_LAYER_NVTX, .ordered = ordered};
  memset(g, 0, sizeof *g);
  struct gt_tool t = {.ctx = g, .range_open = outer_tag};
  t.on[GT_KIND_ALLOC] = t.on[GT_KIND_FREE] = note;
  return synth_session(&o, &t);
}

static void test_matching(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("frees.gtrace", path, sizeof path));
  synth_alloc(&w, 10, 0xa000, 1000, GT_MEM_DEVICE, 7);      /* 0 */
  synth_free(&w, 20, 0xa000, GT_API_cudaFree, 0);           /* 1 ok, 1000 */
  synth_alloc(&w, 30, 0xa000, 2000, GT_MEM_DEVICE, 8);      /* 2 same address */
  synth_free(&w, 40, 0xa000, GT_API_cudaFree, 0);           /* 3 ok, 2000 */
  synth_free(&w, 50, 0xa000, GT_API_cudaFree, 1);           /* 4 double */
  synth_free(&w, 60, 0xbeef, GT_API_cudaFree, 0);           /* 5 unknown */
  synth_alloc(&w, 70, 0xc000, 4096, GT_MEM_PINNED_HOST, 9); /* 6 */
  synth_free(&w, 80, 0xc000, GT_API_cudaFree, 0);           /* 7 wrong kind */
  synth_free(&w, 90, 0xc000, GT_API_cudaFreeHost, 700);     /* 8 failed */
  synth_free(&w, 100, 0, GT_API_cudaFree, 0);               /* 9 NULL */
  synth_alloc(&w, 110, 0xd000, 300, GT_MEM_DEVICE, 10);     /* 10 */
  synth_alloc(&w, 120, 0xd000, 500, GT_MEM_DEVICE, 11);     /* 11 free dropped */
  struct gt_record map = synth_rec(GT_KIND_ALLOC, GT_API_cuMemMap, 130, 1);
  map.u.mem.ptr = 0xe000;
  map.u.mem.bytes = 1 << 20;
  map.u.mem.memory = GT_MEM_DEVICE;
  map.flags = GT_F_VMM_MAP;
  synth_put(&w, &map); /* 12: holds nothing */
  map = synth_rec(GT_KIND_FREE, GT_API_cuMemUnmap, 140, 1);
  map.u.mem.ptr = 0xe000;
  map.flags = GT_F_VMM_MAP;
  synth_put(&w, &map); /* 13 */
  synth_close(&w);
  struct got g;
  struct gt_session *s = run(path, 0, &g);
  CHECK_EQ_U64(g.n, 14);
  CHECK(g.ev[1].status == GT_FREE_OK && g.ev[1].block.bytes == 1000);
  CHECK_EQ_U64(g.ev[1].block.stack_id, 7);
  CHECK_EQ_U64(g.ev[1].shown_bytes, 1000);
  CHECK(!g.ev[2].has_block); /* nothing live there: nothing replaced */
  CHECK(g.ev[3].status == GT_FREE_OK && g.ev[3].block.bytes == 2000);
  CHECK_EQ_U64(g.ev[3].block.stack_id, 8);
  CHECK(g.ev[4].status == GT_FREE_DOUBLE && !g.ev[4].has_block);
  CHECK(g.ev[5].status == GT_FREE_UNKNOWN && !g.ev[5].has_block);
  CHECK_EQ_U64(g.ev[5].shown_bytes, 0);
  CHECK(g.ev[7].status == GT_FREE_WRONG_KIND && g.ev[7].has_block);
  CHECK_EQ_U64(g.ev[7].block.memory, GT_MEM_PINNED_HOST);
  CHECK(g.ev[8].status == GT_FREE_FAILED && g.ev[8].has_block);
  CHECK(g.ev[9].status == GT_FREE_NULL);
  CHECK(g.ev[11].has_block && g.ev[11].block.bytes == 300); /* the block replaced */
  CHECK(g.ev[13].status == GT_FREE_UNTRACKED);
  struct gt_model *m = gt_session_model(s);
  CHECK_EQ_U64(gt_model_live_bytes(m, 100, GT_MEM_DEVICE), 500);
  CHECK_EQ_U64(gt_model_live_bytes(m, 100, GT_MEM_PINNED_HOST), 4096);
  CHECK_EQ_U64(gt_model_peak_bytes(m, 100, GT_MEM_DEVICE), 2000);
  CHECK_EQ_U64(gt_model_peak_device_total(m, 100), 2000);
  CHECK_EQ_U64(gt_model_alloc_memory(m, 100, 0xc000), GT_MEM_PINNED_HOST);
  CHECK_EQ_U64(gt_model_alloc_memory(m, 100, 0xe000), GT_MEM_UNKNOWN);
  gt_session_close(s);
}

/* A forked child (pid 101) has its own heap: the parent's pointer is
 * unknown to it, and the same address in both is two allocations. */
static void test_fork_child(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("fork.gtrace", path, sizeof path));
  synth_alloc(&w, 10, 0xa000, 1000, GT_MEM_DEVICE, 1);
  w.pid = w.tid = 101;
  synth_free(&w, 20, 0xa000, GT_API_cudaFree, 0);    /* 1 unknown */
  synth_alloc(&w, 30, 0xa000, 64, GT_MEM_DEVICE, 2); /* 2 its own */
  synth_free(&w, 40, 0xa000, GT_API_cudaFree, 0);    /* 3 ok: 64 */
  w.pid = w.tid = 100;
  synth_free(&w, 50, 0xa000, GT_API_cudaFree, 0); /* 4 ok: 1000 */
  synth_close(&w);
  struct got g;
  struct gt_session *s = run(path, 0, &g);
  CHECK(g.ev[1].status == GT_FREE_UNKNOWN);
  CHECK(g.ev[3].status == GT_FREE_OK && g.ev[3].block.bytes == 64);
  CHECK(g.ev[4].status == GT_FREE_OK && g.ev[4].block.bytes == 1000);
  CHECK_EQ_U64(gt_model_peak_bytes(gt_session_model(s), 101, GT_MEM_DEVICE), 64);
  gt_session_close(s);
}

/* Thread 1 frees an address in a long call (entered at 20, its record
 * written at its end); thread 2 gets the address back at 30. In file order
 * the allocation comes first and the free takes it; in time order each
 * matches its own. */
static void test_two_threads(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("realloc.gtrace", path, sizeof path));
  w.tid = 1;
  synth_alloc(&w, 10, 0xa000, 1000, GT_MEM_DEVICE, 1);
  w.tid = 2;
  synth_alloc(&w, 30, 0xa000, 64, GT_MEM_DEVICE, 2);
  w.tid = 1;
  synth_free(&w, 20, 0xa000, GT_API_cudaFree, 0);
  synth_close(&w);
  struct got g;
  struct gt_session *s = run(path, 0, &g);
  CHECK(g.ev[1].has_block && g.ev[2].block.bytes == 64); /* file order: wrong */
  CHECK_EQ_U64(gt_model_live_bytes(gt_session_model(s), 100, GT_MEM_DEVICE), 0);
  gt_session_close(s);
  s = run(path, GT_ORDER_KIND(GT_KIND_ALLOC) | GT_ORDER_KIND(GT_KIND_FREE), &g);
  CHECK(g.ev[1].kind == GT_KIND_FREE && g.ev[1].status == GT_FREE_OK);
  CHECK_EQ_U64(g.ev[1].block.bytes, 1000);
  CHECK(!g.ev[2].has_block);
  CHECK_EQ_U64(gt_model_live_bytes(gt_session_model(s), 100, GT_MEM_DEVICE), 64);
  gt_session_close(s);
}

/* Allocations carry the tag of the outermost push range open on their
 * thread (any domain), none outside; another thread's ranges do not count. */
static void test_ranges(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("ranges.gtrace", path, sizeof path));
  synth_nvtx(&w, 5, GT_NVTX_PUSH, "request");
  synth_nvtx(&w, 6, GT_NVTX_PUSH, "decode");
  synth_alloc(&w, 10, 0xa000, 1, GT_MEM_DEVICE, 1);
  synth_nvtx(&w, 11, GT_NVTX_POP, NULL);
  synth_nvtx(&w, 12, GT_NVTX_POP, NULL);
  synth_alloc(&w, 20, 0xb000, 1, GT_MEM_DEVICE, 1);
  w.tid = 2;
  synth_nvtx(&w, 25, GT_NVTX_PUSH, "other");
  w.tid = 100;
  synth_alloc(&w, 30, 0xc000, 1, GT_MEM_DEVICE, 1);
  synth_close(&w);
  struct got g;
  struct gt_session *s = run(path, GT_ORDER_ALL, &g);
  struct gt_block b;
  struct gt_heap *h = gt_model_heap(gt_session_model(s));
  CHECK(gt_heap_find(h, 100, 0xa000, &b) && b.range == 5);
  CHECK(gt_heap_find(h, 100, 0xb000, &b) && b.range == 0);
  CHECK(gt_heap_find(h, 100, 0xc000, &b) && b.range == 0);
  gt_session_close(s);
}

int main(void) {
  test_matching();
  test_fork_child();
  test_two_threads();
  test_ranges();
  return check_finish("test_alloc");
}
