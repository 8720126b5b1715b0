/* report_hw.c — the hardware section of `gputrace report`: METRIC records
 * (NVML readings the collector sampled) per device, time above thresholds,
 * and the findings gpu_underutilized, vram_pressure and thermal.
 * docs/report.md ("Hardware") defines every figure.
 *
 * Time above a threshold: each reading of a series (utilization, VRAM use,
 * temperature) counts for the time until the next reading of the same series
 * on the same device; the last reading counts for nothing. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

#define RP_HW_MAX_DEV 64

struct rp_hw_stat {
  uint64_t n;
  double sum, max;
};

struct rp_hw_series { /* time above thresholds of one series */
  uint64_t prev_ts, span_ns, above_ns[2];
  int have_prev, prev_above[2];
};

struct rp_hw_dev {
  int seen;
  struct rp_hw_stat m[GT_METRIC_COUNT];
  double mem_total, slowdown; /* latest readings; 0 = none */
  struct rp_hw_series util, vram, temp;
};

struct rp_hw {
  int unavailable; /* a NOTE said so */
  uint64_t readings;
  struct rp_hw_dev dev[RP_HW_MAX_DEV];
};

static void series(struct rp_hw_series *s, uint64_t ts, int above0, int above1) {
  if (s->have_prev && ts >= s->prev_ts) {
    uint64_t d = ts - s->prev_ts;
    s->span_ns += d;
    s->above_ns[0] += s->prev_above[0] ? d : 0;
    s->above_ns[1] += s->prev_above[1] ? d : 0;
  }
  s->have_prev = 1;
  s->prev_ts = ts;
  s->prev_above[0] = above0;
  s->prev_above[1] = above1;
}

static double hot_threshold(const struct rp_hw_dev *d) {
  return d->slowdown > 0 ? d->slowdown - RP_HW_HOT_MARGIN_C : RP_HW_HOT_C;
}

void rp_hw_feed(struct report *r, const struct gt_record *rec) {
  if (!r->hw && !(r->hw = calloc(1, sizeof *r->hw)))
    return;
  struct rp_hw *hw = r->hw;
  if (rec->kind == GT_KIND_NOTE) {
    if (!strcmp(gt_model_text(r->model, rec), "nvml unavailable"))
      hw->unavailable = 1;
    return;
  }
  unsigned id = rec->u.metric.metric;
  if (rec->u.metric.device >= RP_HW_MAX_DEV || id == 0 || id >= GT_METRIC_COUNT)
    return;
  struct rp_hw_dev *d = &hw->dev[rec->u.metric.device];
  double v = rec->u.metric.value;
  hw->readings++;
  d->seen = 1;
  struct rp_hw_stat *st = &d->m[id];
  if (!st->n || v > st->max)
    st->max = v;
  st->n++;
  st->sum += v;
  switch (id) {
  case GT_METRIC_GPU_UTIL:
    series(&d->util, rec->ts_ns, v < RP_HW_UTIL_LOW_PCT, 0);
    break;
  case GT_METRIC_MEM_TOTAL:
    d->mem_total = v;
    break;
  case GT_METRIC_MEM_USED:
    if (d->mem_total > 0) {
      double pct = 100.0 * v / d->mem_total;
      series(&d->vram, rec->ts_ns, pct > RP_HW_VRAM_PCT, pct > RP_HW_VRAM_HIGH_PCT);
    }
    break;
  case GT_METRIC_TEMP_SLOWDOWN:
    d->slowdown = v;
    break;
  case GT_METRIC_TEMP:
    series(&d->temp, rec->ts_ns, v >= hot_threshold(d), 0);
    break;
  }
}

static double mean(const struct rp_hw_stat *s) {
  return s->n ? s->sum / (double)s->n : 0;
}

/* ---- findings ---- */

void rp_hw_findings(struct report *r) {
  if (!r->hw)
    return;
  for (unsigned g = 0; g < RP_HW_MAX_DEV; g++) {
    const struct rp_hw_dev *d = &r->hw->dev[g];
    if (!d->seen)
      continue;
    double low = rp_frac(d->util.above_ns[0], d->util.span_ns);
    if (d->util.span_ns && low >= RP_HW_UTIL_LOW_SHARE) {
      struct rp_finding *f = rp_add_finding(
          r, "gpu_underutilized", low >= RP_HW_UTIL_HIGH_SHARE ? "high" : "medium",
          "The GPU sat mostly idle: batch more work per launch, overlap input "
          "preparation with compute, or share the device between more workers.",
          "GPU %u utilization was under %d %% for %.1f %% of the sampled time (mean %.1f "
          "%%)",
          g, RP_HW_UTIL_LOW_PCT, 100 * low, mean(&d->m[GT_METRIC_GPU_UTIL]));
      rp_ev_u(f, "gpu", RP_EV_U64, g);
      rp_ev_frac(f, "fraction", low);
      rp_ev_u(f, "low_ns", RP_EV_NS, d->util.above_ns[0]);
      rp_ev_u(f, "sampled_ns", RP_EV_NS, d->util.span_ns);
    }
    if (d->vram.above_ns[0]) {
      double f85 = rp_frac(d->vram.above_ns[0], d->vram.span_ns);
      double f90 = rp_frac(d->vram.above_ns[1], d->vram.span_ns);
      struct rp_finding *f = rp_add_finding(
          r, "vram_pressure", d->vram.above_ns[1] ? "high" : "medium",
          "Device memory was nearly full: reduce the batch size or the caching "
          "allocator's reserve, or free buffers not needed any more.",
          "GPU %u memory use was above %d %% for %.1f %% of the sampled time (above %d "
          "%%: "
          "%.1f %%)",
          g, RP_HW_VRAM_PCT, 100 * f85, RP_HW_VRAM_HIGH_PCT, 100 * f90);
      rp_ev_u(f, "gpu", RP_EV_U64, g);
      rp_ev_frac(f, "fraction_85", f85);
      rp_ev_frac(f, "fraction_90", f90);
      rp_ev_u(f, "max_used_bytes", RP_EV_BYTES, (uint64_t)d->m[GT_METRIC_MEM_USED].max);
    }
    if (d->temp.above_ns[0]) {
      double hot = rp_frac(d->temp.above_ns[0], d->temp.span_ns);
      struct rp_finding *f = rp_add_finding(
          r, "thermal", hot >= RP_HW_HOT_HIGH_SHARE ? "high" : "medium",
          "The GPU ran near its thermal slowdown point, where clocks are cut: check "
          "cooling and airflow, or cap the power limit.",
          "GPU %u temperature was at or above %.0f C for %.1f %% of the sampled time "
          "(max %.0f C)",
          g, hot_threshold(d), 100 * hot, d->m[GT_METRIC_TEMP].max);
      rp_ev_u(f, "gpu", RP_EV_U64, g);
      rp_ev_frac(f, "fraction", hot);
      rp_ev_u(f, "threshold_c", RP_EV_U64, (uint64_t)hot_threshold(d));
      rp_ev_u(f, "max_c", RP_EV_U64, (uint64_t)d->m[GT_METRIC_TEMP].max);
    }
  }
}

/* ---- output ---- */

void rp_hw_text(FILE *o, const struct report *r) {
  const struct rp_hw *hw = r->hw;
  if (!hw)
    return;
  if (!hw->readings) {
    if (hw->unavailable)
      fprintf(o, "\nHardware: nvml unavailable (no GPU metrics were sampled)\n");
    return;
  }
  fprintf(o, "\nHardware (NVML, %" PRIu64 " readings)\n", hw->readings);
  for (unsigned g = 0; g < RP_HW_MAX_DEV; g++) {
    const struct rp_hw_dev *d = &hw->dev[g];
    if (!d->seen)
      continue;
    fprintf(o, "  GPU %u\n    %-15s %-6s %14s %14s %8s\n", g, "metric", "unit", "mean",
            "max", "samples");
    for (unsigned m = 1; m < GT_METRIC_COUNT; m++)
      if (d->m[m].n)
        fprintf(o, "    %-15s %-6s %14.2f %14.2f %8" PRIu64 "\n", gt_metric_name(m),
                gt_metric_unit(m), mean(&d->m[m]), d->m[m].max, d->m[m].n);
    if (d->util.span_ns)
      fprintf(o, "    utilization < %d %%: %.1f %% of the time\n", RP_HW_UTIL_LOW_PCT,
              100 * rp_frac(d->util.above_ns[0], d->util.span_ns));
    if (d->vram.span_ns)
      fprintf(o, "    VRAM > %d %%: %.1f %% of the time; > %d %%: %.1f %%\n",
              RP_HW_VRAM_PCT, 100 * rp_frac(d->vram.above_ns[0], d->vram.span_ns),
              RP_HW_VRAM_HIGH_PCT, 100 * rp_frac(d->vram.above_ns[1], d->vram.span_ns));
    if (d->temp.span_ns)
      fprintf(o, "    temperature >= %.0f C: %.1f %% of the time\n", hot_threshold(d),
              100 * rp_frac(d->temp.above_ns[0], d->temp.span_ns));
  }
}

static void json_series(FILE *o, const char *key, const struct rp_hw_series *s,
                        int which) {
  fprintf(o, ",\"%s_ns\":%" PRIu64 ",\"%s_fraction\":%.17g", key, s->above_ns[which], key,
          rp_frac(s->above_ns[which], s->span_ns));
}

void rp_hw_json(FILE *o, const struct report *r) {
  const struct rp_hw *hw = r->hw;
  fprintf(o, ",\"hardware\":{\"nvml\":\"%s\",\"devices\":[",
          !hw               ? "absent"
          : hw->readings    ? "available"
          : hw->unavailable ? "unavailable"
                            : "absent");
  const char *sep = "";
  for (unsigned g = 0; hw && g < RP_HW_MAX_DEV; g++) {
    const struct rp_hw_dev *d = &hw->dev[g];
    if (!d->seen)
      continue;
    fprintf(o, "%s{\"gpu\":%u,\"metrics\":{", sep, g);
    sep = ",";
    const char *msep = "";
    for (unsigned m = 1; m < GT_METRIC_COUNT; m++)
      if (d->m[m].n) {
        fprintf(o,
                "%s\"%s\":{\"unit\":\"%s\",\"samples\":%" PRIu64
                ",\"mean\":%.17g,\"max\":%.17g}",
                msep, gt_metric_name(m), gt_metric_unit(m), d->m[m].n, mean(&d->m[m]),
                d->m[m].max);
        msep = ",";
      }
    fprintf(o, "},\"util_sampled_ns\":%" PRIu64, d->util.span_ns);
    json_series(o, "util_low", &d->util, 0);
    fprintf(o, ",\"vram_sampled_ns\":%" PRIu64, d->vram.span_ns);
    json_series(o, "vram_85", &d->vram, 0);
    json_series(o, "vram_90", &d->vram, 1);
    fprintf(o, ",\"temp_sampled_ns\":%" PRIu64 ",\"hot_threshold_c\":%.17g",
            d->temp.span_ns, hot_threshold(d));
    json_series(o, "hot", &d->temp, 0);
    fputs("}", o);
  }
  fputs("]}", o);
}

void rp_hw_free(struct report *r) {
  free(r->hw);
  r->hw = NULL;
}
