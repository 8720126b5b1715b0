/* report_leaks.c — memory growth as report findings (report.h; the rule
 * and its threshold are in docs/report.md, "Findings": memory_leak,
 * pool_growth).
 *
 * Contract:
 *  - What leaks and grows is what `gputrace leaks` computes (leaks.h: one
 *    implementation): rp_leak_findings runs it over the trace the report
 *    read (the whole trace: a leak is judged at the end; --pid keeps one
 *    process's) and keeps the totals in r->leak for the outputs and diff.
 *  - A group (process, allocation stack, memory kind) still live at the end
 *    that is growing (docs/leaks.md "Growth") and holds at least
 *    RP_LEAK_MIN_BYTES is a `memory_leak` finding, [high], one per group,
 *    largest first; the site is the stack's user frame (gt_leaks_origin),
 *    with bytes, blocks, the rate (runs of GT_GROWTH_MIN_NS or more) and
 *    bytes per occurrence of the outermost NVTX range the blocks were made
 *    in. A growing group that a caching allocator or library pool holds
 *    (holders.h) is `pool_growth`, [medium], named by its holder: the pool
 *    grew, the program did not necessarily leak.
 *  - A trace whose last allocation ran out of memory (leaks.h: struct
 *    gt_oom) is an `out_of_memory` finding, [high], added before the leaks:
 *    the failing call's site, the requested and held bytes, and the
 *    GT_OOM_HOLDERS largest holders by site (`holders`, a list of {site,
 *    bytes}); text output opens with its message (report_out.c).
 *  - Findings are added before every other rule's, so with the severity
 *    sort (stable) an out-of-memory, then a leak, is the first finding.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holders.h"
#include "leaks.h"
#include "report.h"
#include "util.h"

#define MAX_LEAK_FINDINGS 3 /* the largest groups; the rest are in `leaks` */

static void add_group(struct report *r, struct gt_leaks *l, const struct gt_group *g) {
  char site[200], b[32], rate[64] = "", per[200] = "";
  gt_leaks_site(l->symtab, g->pid, g->stack_id, site, sizeof site);
  const struct gt_holder *h = gt_holder_of_stack(l->symtab, g->pid, g->stack_id);
  uint64_t occ = g->range_name ? l->range_counts[g->range_name - 1] : 0;
  uint64_t per_range = occ ? g->range_bytes / occ : 0;
  if (g->rated)
    snprintf(rate, sizeof rate, ", growing %s/min",
             gt_fmt_bytes(b, sizeof b, (uint64_t)(g->bytes_per_min + 0.5)));
  if (occ)
    snprintf(per, sizeof per, "; %s per \"%.60s\" range (%" PRIu64 " ranges)",
             gt_fmt_bytes(b, sizeof b, per_range), l->ranges.strs[g->range_name - 1],
             occ);
  char total[32];
  gt_fmt_bytes(total, sizeof total, g->bytes);
  struct rp_finding *f;
  if (h)
    f = rp_add_finding(r, "pool_growth", "medium", h->meaning,
                       "%s's memory grew to %s in %" PRIu64 " blocks (%s) from %s%s%s",
                       h->name, total, g->blocks, gt_memory_name(g->memory), site, rate,
                       per);
  else
    f = rp_add_finding(
        r, "memory_leak", "high",
        "Free what each request allocates (or bound the cache that keeps it): memory "
        "growing with every request ends in out-of-memory on a long-running server. "
        "`gputrace leaks` shows the whole stack.",
        "%s in %" PRIu64
        " blocks (%s) still allocated at the end and growing, from %s%s%s",
        total, g->blocks, gt_memory_name(g->memory), site, rate, per);
  rp_ev_u(f, "bytes", RP_EV_BYTES, g->bytes);
  rp_ev_u(f, "blocks", RP_EV_U64, g->blocks);
  rp_ev_str(f, "site", site);
  rp_ev_str(f, "memory", gt_memory_name(g->memory));
  rp_ev_u(f, "pid", RP_EV_U64, g->pid);
  if (g->rated)
    rp_ev_u(f, "bytes_per_min", RP_EV_BYTES, (uint64_t)(g->bytes_per_min + 0.5));
  if (occ) {
    rp_ev_str(f, "range", l->ranges.strs[g->range_name - 1]);
    rp_ev_u(f, "ranges", RP_EV_U64, occ);
    rp_ev_u(f, "bytes_per_range", RP_EV_BYTES, per_range);
  }
  if (h)
    rp_ev_str(f, "holder", h->id);
}

/* The trace's last allocation ran out of memory: where, how much, who held
 * the memory (leaks_oom.c). */
static void add_oom(struct report *r, const struct gt_oom *oom) {
  struct rp_finding *f = rp_add_finding(
      r, "out_of_memory", "high",
      "Free or shrink what the holders keep (or cap the caching allocator) before the "
      "allocation that failed: the program asked for more device memory than was left.",
      "%s", gt_oom_line(oom));
  rp_ev_str(f, "site", oom->site);
  rp_ev_u(f, "requested_bytes", RP_EV_U64, oom->requested);
  rp_ev_u(f, "held_bytes", RP_EV_U64, oom->held);
  rp_ev_u(f, "pid", RP_EV_U64, oom->pid);
  char *json = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&json, &len);
  if (!m)
    return;
  fputc('[', m);
  for (size_t i = 0; i < oom->nholders; i++) {
    fputs(i ? ",{\"site\":" : "{\"site\":", m);
    gt_json_str(m, oom->holders[i].site);
    fprintf(m, ",\"bytes\":%" PRIu64 "}", oom->holders[i].bytes);
  }
  fputc(']', m);
  fclose(m);
  rp_ev_json(f, "holders", json);
  free(json);
}

void rp_leak_findings(struct report *r) {
  struct gt_leaks l;
  char err[256];
  struct gt_leaks_opts o = {.no_wait = r->opt.no_wait};
  if (!r->path || gt_leaks_run(r->path, &o, &l, err, sizeof err) != 0)
    return; /* rp_read opened it: only a file changed meanwhile fails */
  if (l.oom.present && (!r->opt.has_pid || l.oom.pid == r->opt.pid))
    add_oom(r, &l.oom); /* before the leaks: the first finding */
  int shown = 0;
  for (size_t i = 0; i < l.nleaks; i++) { /* largest first */
    const struct gt_group *g = &l.leaks[i];
    if (g->suppressed || (r->opt.has_pid && g->pid != r->opt.pid))
      continue;
    r->leak.bytes += g->bytes;
    r->leak.blocks += g->blocks;
    if (!g->growing)
      continue;
    r->leak.growing_bytes += g->bytes;
    r->leak.bytes_per_min += g->rated ? g->bytes_per_min : 0;
    r->leak.rated |= g->rated;
    if (g->bytes >= RP_LEAK_MIN_BYTES && shown++ < MAX_LEAK_FINDINGS)
      add_group(r, &l, g);
  }
  r->leak.measured = 1;
  gt_leaks_free(&l);
}
