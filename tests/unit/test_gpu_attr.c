/* test_gpu_attr.c — model/gpu_attr.c on a synthetic trace: launches go
 * to their kernel's group by name, also after the handle is registered
 * again under another name (a module unloaded and another loaded at the
 * same address); copies and memsets to theirs by direction; GPU time is
 * each group's mean timed duration times its calls; each launch counts
 * once at the stack it carries (its site's or its own sample), and the
 * stackless ones at stack 0 — never spread over the sampled stacks. */
#include "check.h"
#include "gpu_attr.h"
#include "synth.h"

static void feed(void *ctx, const struct gt_event *ev) {
  void **a = ctx;
  gt_gpu_attr_feed(a[0], gt_session_model(a[1]), ev->rec);
}

static void device(struct synth *w, uint64_t ts, uint64_t dur, uint64_t kernel) {
  struct gt_record r = synth_rec(GT_KIND_DEVICE, GT_API___cudaLaunchKernel, ts, dur);
  r.u.device.of_kind = GT_KIND_LAUNCH;
  r.u.device.kernel = kernel;
  r.u.device.sample = 1;
  r.u.device.source = GT_DEVTIME_EVENTS;
  synth_put(w, &r);
}

static void launch(struct synth *w, uint64_t ts, uint64_t kernel, uint32_t stack,
                   int sampled) {
  struct gt_record r = synth_rec(GT_KIND_LAUNCH, GT_API___cudaLaunchKernel, ts, 100);
  r.u.launch.kernel = kernel;
  r.stack_id = stack;
  r.flags = sampled ? GT_F_STACK_SAMPLED : 0;
  synth_put(w, &r);
}

static const char *trace(void) {
  static char path[256];
  struct synth w;
  synth_open(&w, synth_path("gpu_attr.gtrace", path, sizeof path));
  synth_process(&w, 1, "./attr");
  synth_kernel_name(&w, 2, 0x10, "_Z3oldv");
  for (int i = 0; i < 3; i++) { /* old(): 3 launches of 1000 ns, no stack */
    launch(&w, 10 + 10 * i, 0x10, 0, 0);
    device(&w, 11 + 10 * i, 1000, 0x10);
  }
  synth_kernel_name(&w, 50, 0x10, "_Z3newv");
  /* new(): 10 launches of 500 ns; stack 1 its first launch, stack 2 one
   * more, then 4 sampled launches: 3 from stack 2 and 1 from stack 3. */
  static const struct {
    uint32_t stack;
    int sampled;
  } news[10] = {{1, 0}, {2, 0}, {0, 0}, {2, 1}, {0, 0},
                {2, 1}, {0, 0}, {3, 1}, {2, 1}, {0, 0}};
  for (int i = 0; i < 10; i++) {
    launch(&w, 100 + 10 * i, 0x10, news[i].stack, news[i].sampled);
    device(&w, 101 + 10 * i, 500, 0x10);
  }
  synth_copy(&w, 300, 10, 4096, GT_DIR_HTOD, 0);
  synth_copy(&w, 310, 10, 1024, GT_DIR_HTOD, 0);
  synth_copy(&w, 320, 10, 512, GT_DIR_DTOH, 0);
  synth_close(&w);
  return path;
}

/* The site of (group name, stack), or NULL. */
static const struct gt_gpu_site *site(const struct gt_gpu_attr *g, const char *name,
                                      uint32_t stack) {
  for (size_t i = 0; i < g->nsites; i++)
    if (g->sites[i].stack_id == stack &&
        strcmp(g->names.strs[g->sites[i].name], name) == 0)
      return &g->sites[i];
  return NULL;
}

static int near(double a, double b) {
  return a > b - 1e-6 && a < b + 1e-6;
}

int main(void) {
  struct gt_session_opts o = {.path = trace(), .threads = 0};
  struct gt_gpu_attr g;
  gt_gpu_attr_init(&g);
  struct gt_tool tool = {0};
  void *ctx[2] = {&g, NULL};
  tool.ctx = ctx;
  gt_tool_kinds(&tool, GT_GPU_ATTR_KINDS, feed);
  char err[512];
  struct gt_session *s = gt_session_open(&o, err, sizeof err);
  CHECK(s != NULL);
  if (!s)
    return check_finish("test_gpu_attr");
  ctx[1] = s;
  gt_session_run(s, &tool);
  gt_gpu_attr_finish(&g);

  const struct gt_gpu_site *old = site(&g, "old()", 0);
  CHECK(old && near(old->calls, 3) && near(old->gpu_ns, 3000));
  /* new(): 10 launches: stack 1 once, stack 2 once and 3 samples, stack 3
   * 1 sample, 4 without a stack. */
  const struct gt_gpu_site *n1 = site(&g, "new()", 1), *n2 = site(&g, "new()", 2),
                           *n3 = site(&g, "new()", 3), *n0 = site(&g, "new()", 0);
  CHECK(n1 && near(n1->calls, 1) && near(n1->gpu_ns, 500));
  CHECK(n2 && near(n2->calls, 4) && near(n2->gpu_ns, 500 * 4));
  CHECK(n3 && near(n3->calls, 1) && near(n3->gpu_ns, 500));
  CHECK(n0 && near(n0->calls, 4) && near(n0->gpu_ns, 500 * 4));
  const struct gt_gpu_site *h2d = site(&g, "memcpy HtoD", 0),
                           *d2h = site(&g, "memcpy DtoH", 0);
  CHECK(h2d && near(h2d->calls, 2) && near(h2d->bytes, 5120));
  CHECK(d2h && near(d2h->calls, 1) && near(d2h->bytes, 512));
  CHECK_EQ_U64(g.nsites, 7);
  CHECK(near(gt_gpu_attr_total_ns(&g, GT_KIND_LAUNCH), 3000 + 5000));
  gt_gpu_attr_free(&g);
  gt_session_close(s);
  return check_finish("test_gpu_attr");
}
