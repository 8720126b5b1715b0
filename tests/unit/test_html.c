/* test_html.c — the time series of `gputrace html` (html_collect.c) and its
 * escaping (html_page.c): over a run long enough to merge the buckets many
 * times, a one-microsecond spike and a dip survive as a bucket's max and
 * min, every series stays within HT_BUCKETS, the memory series' highest
 * value is the allocation layer's peak (report's), NVML readings are kept
 * per reading and device; trace text is escaped and made valid UTF-8. */
#include "check.h"
#include "html.h"
#include "synth.h"

#define MS 1000000ull
#define GIB (1ull << 30)

static void metric(struct synth *w, uint64_t ts, unsigned m, unsigned dev, double v) {
  struct gt_record r = synth_rec(GT_KIND_METRIC, GT_API_gputrace_metric, ts, 0);
  r.pid = 0;
  r.u.metric.metric = m;
  r.u.metric.device = dev;
  r.u.metric.value = v;
  synth_put(w, &r);
}

/* 10 s: 64 MiB held throughout, 16 MiB more but for 4 .. 4.01 s, 1 MiB
 * allocated and freed every ms, 1 GiB for 1 us at 7.3 s;
 * utilization readings every 10 ms on two devices, 99 % once. */
static void write_run(const char *path) {
  struct synth w;
  synth_open(&w, path);
  synth_process(&w, 1, "./series");
  synth_alloc(&w, 2, 0x1000, 64 << 20, GT_MEM_DEVICE, 0);
  for (uint64_t t = 1; t < 10000; t++) {
    uint64_t ts = t * MS;
    synth_alloc(&w, ts + 10, 0x2000, 1 << 20, GT_MEM_DEVICE, 0);
    synth_free(&w, ts + 500, 0x2000, GT_API_cudaFree, 0);
    if (t == 1 || t == 4010)
      synth_alloc(&w, ts + 700, 0x3000, 16 << 20, GT_MEM_DEVICE, 0);
    if (t == 4000)
      synth_free(&w, ts + 700, 0x3000, GT_API_cudaFree, 0);
    if (t == 7300) {
      synth_alloc(&w, ts + 600, 0x9000000, GIB, GT_MEM_DEVICE, 0);
      synth_free(&w, ts + 1600, 0x9000000, GT_API_cudaFree, 0);
    }
    if (t % 10 == 0) {
      metric(&w, ts, GT_METRIC_GPU_UTIL, 0, t == 5000 ? 99 : 40);
      metric(&w, ts, GT_METRIC_GPU_UTIL, 1, 10);
    }
    if (t % 1000 == 0)
      synth_chunk(&w);
  }
  synth_close(&w);
}

static double series_max(const struct ht_data *d, const struct ht_series *s, int *at) {
  double m = -1;
  for (int i = 0; i < d->nb; i++)
    if (s->has[i] && s->max[i] > m)
      m = s->max[i], *at = i;
  return m;
}

static void check_series(const char *path) {
  struct report *r = gt_xcalloc(1, sizeof *r);
  struct ht_data *d = gt_xcalloc(1, sizeof *d);
  struct rp_options o = {.to_ns = UINT64_MAX};
  rp_init(r, &o);
  ht_init(d, r);
  CHECK(rp_read(r, path, "test") == 0);
  rp_finish(r);
  CHECK(d->nb > HT_BUCKETS / 2 && d->nb <= HT_BUCKETS);
  CHECK_EQ_U64(d->nmem, 1);
  CHECK_EQ_U64(d->nmetric, 2);
  int at = -1;
  const struct ht_series *m = d->mem[0];
  CHECK_EQ_U64((uint64_t)series_max(d, m, &at), r->peak_device_bytes);
  CHECK_EQ_U64(r->peak_device_bytes, GIB + (80ull << 20));
  CHECK_MSG(ht_bucket_s(d, at) <= 7.3 && ht_bucket_s(d, at + 1) > 7.3,
            "the spike's bucket starts at %.3f s", ht_bucket_s(d, at));
  int dip = (int)(4.005e9 / (double)d->width), before = (int)(2e9 / (double)d->width);
  CHECK_EQ_U64((uint64_t)m->min[dip], 64ull << 20); /* held for 10 ms */
  CHECK_EQ_U64((uint64_t)m->min[before], 80ull << 20);
  CHECK_EQ_U64((uint64_t)d->mem[0]->peak_ts, 7300 * MS + 600);
  const struct ht_series *g0 = d->metric[0], *g1 = d->metric[1];
  CHECK_EQ_U64(g0->key, GT_METRIC_GPU_UTIL << 8 | 0);
  CHECK_EQ_U64(g1->key, GT_METRIC_GPU_UTIL << 8 | 1);
  CHECK(series_max(d, g0, &at) == 99 && series_max(d, g1, &at) == 10);
  ht_free(d);
  rp_free(r);
  free(d);
  free(r);
}

static void check_text(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  ht_text(o, "<b a=\"1\">&'x\xff\xe2\x80\xa8y\x01");
  fclose(o);
  CHECK_MSG(!strcmp(buf, "&lt;b a=&quot;1&quot;&gt;&amp;&#39;x?&#x2028;y?"), "got %s",
            buf);
  free(buf);
}

int main(void) {
  char path[256];
  check_text();
  write_run(synth_path("html_series.gtrace", path, sizeof path));
  check_series(path);
  return check_finish("test_html");
}
