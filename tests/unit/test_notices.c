/* test_notices.c — what `record` reads at its end to say whether the trace
 * holds any CUDA call (analyze/notices.c, gt_trace_has_cuda_call), on
 * synthetic traces: it stops at the first CUDA call instead of reading a
 * whole run (which every other record of a long run would cost), counts a
 * DROP of calls as calls and NVTX (records or dropped) as none, reads an
 * NVTX-only trace to its end, and cannot open what is not there. */
#include <stdint.h>

#include "check.h"
#include "notices.h"
#include "synth.h"

/* NVTX marks, then a launch in a chunk of its own, then 20,000 more. */
static void test_stops_at_the_first_call(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("first.gtrace", path, sizeof path));
  for (unsigned i = 0; i < 3; i++)
    synth_nvtx(&w, 10 + i, GT_NVTX_MARK, "mark");
  synth_chunk(&w);
  synth_launch(&w, 20, 1, 0x10, 0, 0);
  for (unsigned i = 0; i < 20000; i++) {
    if (i % 1000 == 0)
      synth_chunk(&w);
    synth_launch(&w, 30 + i, 1, 0x10, 0, 0);
  }
  synth_close(&w);
  uint64_t read = 0;
  CHECK(gt_trace_has_cuda_call(path, &read) == 1);
  CHECK_EQ_U64(read, 4); /* three marks and the launch */
}

/* Only NVTX: read to the end, no call. A DROP of NVTX records is none
 * either; a DROP of launches is calls (the shim had no room for them). */
static void test_nvtx_and_drops(void) {
  char path[256];
  struct synth w;
  synth_open(&w, synth_path("nvtx.gtrace", path, sizeof path));
  for (unsigned i = 0; i < 5000; i++)
    synth_nvtx(&w, 10 + i, GT_NVTX_MARK, "mark");
  struct gt_record drop = synth_rec(GT_KIND_DROP, GT_API_none, 6000, 0);
  drop.u.count.of_kind = GT_KIND_NVTX;
  drop.u.count.count = 7;
  synth_put(&w, &drop);
  synth_close(&w);
  uint64_t read = 0;
  CHECK(gt_trace_has_cuda_call(path, &read) == 0);
  CHECK_EQ_U64(read, 5001);

  synth_open(&w, synth_path("dropped.gtrace", path, sizeof path));
  synth_nvtx(&w, 10, GT_NVTX_MARK, "mark");
  drop.u.count.of_kind = GT_KIND_LAUNCH;
  synth_put(&w, &drop);
  synth_nvtx(&w, 7000, GT_NVTX_MARK, "mark");
  synth_close(&w);
  CHECK(gt_trace_has_cuda_call(path, &read) == 1);
  CHECK_EQ_U64(read, 2);
}

static void test_not_there(void) {
  char path[256];
  uint64_t read = 5;
  CHECK(gt_trace_has_cuda_call(synth_path("absent.gtrace", path, sizeof path), &read) ==
        -1);
  CHECK_EQ_U64(read, 0);
}

int main(void) {
  test_stops_at_the_first_call();
  test_nvtx_and_drops();
  test_not_there();
  return check_finish("test_notices");
}
