/* test_html.c — the time series of `gputrace html` (html_collect.c), its
 * escaping (html_page.c) and its size bound (html.h): over a run long
 * enough to merge the buckets many times, a one-microsecond spike and a
 * dip survive as a bucket's max and min, every series stays within
 * HT_BUCKETS, the memory series' highest value is the allocation layer's
 * peak (report's), NVML readings are kept per reading and device; trace
 * text is escaped and made valid UTF-8, and cut where asked; a trace that
 * fills every part of the page with the longest names that escape the
 * most (1,000 kernels and range names of GT_TEXT_MAX quotes, 1,000
 * findings, 20 processes, 18 NVML series) gives a page under HT_PAGE_MAX
 * that says, with exact counts, what each part left out. */
#include "check.h"
#include "html.h"
#include "leaks.h"
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

static void check_cut(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  ht_text_cut(o, "a<b\xc3\xa9xyz", 4); /* cut inside the 2-byte character */
  fputc('|', o);
  ht_text_cut(o, "abcd", 4); /* fits */
  fclose(o);
  CHECK_MSG(!strcmp(buf, "a&lt;b\xe2\x80\xa6|abcd"), "got %s", buf);
  free(buf);
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

/* ---- the size bound ---- */

static void launch_timed(struct synth *w, uint64_t ts, uint64_t kernel, uint64_t dur) {
  synth_launch(w, ts, 10, kernel, 0x5, 0);
  struct gt_record r = synth_rec(GT_KIND_DEVICE, GT_API___cudaLaunchKernel, ts + 20, dur);
  r.u.device.of_kind = GT_KIND_LAUNCH;
  r.u.device.kernel = kernel;
  r.u.device.sample = 1;
  r.u.device.source = GT_DEVTIME_EVENTS;
  synth_put(w, &r);
}

#define WORST_PROCS (HT_MAX_SERIES + 4)
#define WORST_NAMES 1000 /* kernels, and NVTX range names */

/* A name of GT_TEXT_MAX bytes, unique by its first ones, the rest quotes:
 * the longest text a trace holds, each byte escaped to 6. */
static const char *worst_name(char *buf, char tag, int i) {
  memset(buf, '"', GT_TEXT_MAX);
  buf[GT_TEXT_MAX] = '\0';
  int n = snprintf(buf, GT_TEXT_MAX, "%c%04d", tag, i);
  buf[n] = '"';
  return buf;
}

static void write_worst(const char *path) {
  static const unsigned drawn[] = {
      GT_METRIC_GPU_UTIL,  GT_METRIC_MEM_UTIL, GT_METRIC_MEM_USED,
      GT_METRIC_TEMP,      GT_METRIC_POWER,    GT_METRIC_SM_CLOCK,
      GT_METRIC_MEM_CLOCK, GT_METRIC_PCIE_TX,  GT_METRIC_PCIE_RX};
  struct synth w;
  char name[GT_TEXT_MAX + 1];
  uint64_t ts = 1000;
  synth_open(&w, path);
  for (int p = 0; p < WORST_PROCS; p++) {
    w.pid = (uint32_t)(1000 + p);
    synth_process(&w, ts++, "./worst");
    synth_alloc(&w, ts++, 0x1000, (uint64_t)(p + 1) << 20, GT_MEM_DEVICE, 0);
    launch_timed(&w, ts, 0x10, 100); /* a kernel nobody named */
    ts += 200;
  }
  w.pid = 1000;
  for (int k = 0; k < WORST_NAMES; k++)
    synth_kernel_name(&w, ts++, 0x100000 + 16 * (uint64_t)k, worst_name(name, 'k', k));
  for (int k = 0; k < WORST_NAMES; k++) {
    launch_timed(&w, ts, 0x100000 + 16 * (uint64_t)k, 1000 + (uint64_t)(WORST_NAMES - k));
    ts += 3000;
  }
  synth_chunk(&w);
  for (int occ = 0; occ < 3; occ++) /* the first slow: a cold_start finding each */
    for (int i = 0; i < WORST_NAMES; i++) {
      synth_nvtx(&w, ts, GT_NVTX_PUSH, worst_name(name, 'r', i));
      ts += occ ? MS : 3 * MS;
      synth_nvtx(&w, ts++, GT_NVTX_POP, NULL);
    }
  for (int i = 0; i < 10; i++, ts += MS)
    for (unsigned m = 0; m < sizeof drawn / sizeof *drawn; m++)
      for (unsigned dev = 0; dev < 2; dev++)
        metric(&w, ts, drawn[m], dev, 10 + i);
  synth_close(&w);
}

/* The number in the page just before `what` (after the last '>' or ';'). */
static long count_before(const char *page, const char *what) {
  const char *at = strstr(page, what);
  if (!at)
    return -1;
  while (at > page && at[-1] == ' ')
    at--;
  const char *p = at;
  while (p > page && p[-1] >= '0' && p[-1] <= '9')
    p--;
  return p == at ? -1 : strtol(p, NULL, 10);
}

static long occurrences(const char *from, const char *to, const char *what) {
  long n = 0;
  for (const char *p = strstr(from, what); p && (!to || p < to); p = strstr(p + 1, what))
    n++;
  return n;
}

static void check_worst(const char *path) {
  struct report *r = gt_xcalloc(1, sizeof *r);
  struct ht_data *d = gt_xcalloc(1, sizeof *d);
  struct gt_leaks l = {0};
  struct rp_options o = {.to_ns = UINT64_MAX};
  char err[256], *page = NULL;
  size_t len = 0;
  rp_init(r, &o);
  ht_init(d, r);
  CHECK(rp_read(r, path, "test") == 0);
  rp_finish(r);
  const struct gt_leaks_opts lo = {0};
  CHECK_MSG(gt_leaks_run(path, &lo, &l, err, sizeof err) == 0, "%s", err);
  FILE *f = open_memstream(&page, &len);
  ht_page(f, d, &l, path);
  fclose(f);
  CHECK_MSG(len <= HT_PAGE_MAX, "a page of %zu bytes, over HT_PAGE_MAX", len);
  printf("worst-case page: %zu bytes\n", len);
  CHECK(r->nfindings >= WORST_NAMES);
  const char *kt = strstr(page, "id=\"kernels\""), *ke = kt ? strstr(kt, "</table>") : 0;
  CHECK(kt && ke);
  long shown = occurrences(kt, ke, "<tr><td>"), more = count_before(kt, " more kernels");
  CHECK_MSG(shown > 0 && shown < HT_ROWS && more == WORST_NAMES + 1 - shown,
            "kernels: %ld rows, %ld more", shown, more); /* and the one unnamed */
  const char *nt = strstr(page, "id=\"nvtx\""), *ne = nt ? strstr(nt, "</table>") : 0;
  CHECK(nt && ne);
  shown = occurrences(nt, ne, "<tr><td>");
  more = count_before(nt, " more range names");
  CHECK_MSG(shown > 0 && more == WORST_NAMES - shown, "ranges: %ld rows, %ld more", shown,
            more);
  shown = occurrences(page, NULL, "<div class=\"f ");
  more = count_before(page, " more findings");
  CHECK_MSG(shown > 0 && more == (long)r->nfindings - shown, "findings: %ld, %ld more",
            shown, more);
  CHECK_EQ_U64(count_before(page, " more processes with DEVICE records"), 4);
  CHECK_EQ_U64(count_before(page, " readings of more series"), 2 * 10);
  CHECK_EQ_U64(count_before(page, " changes of processes past"), 4);
  CHECK(strstr(page, "evenly thinned: ") && strstr(page, " of 3000)"));
  CHECK_MSG(strstr(page, " frames not drawn"), "the GPU flame graph's frames are cut");
  free(page);
  gt_leaks_free(&l);
  ht_free(d);
  rp_free(r);
  free(d);
  free(r);
}

int main(void) {
  char path[256];
  check_text();
  check_cut();
  write_worst(synth_path("html_worst.gtrace", path, sizeof path));
  check_worst(path);
  write_run(synth_path("html_series.gtrace", path, sizeof path));
  check_series(path);
  return check_finish("test_html");
}
