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
 *  - Findings are added before every other rule's, so with the severity
 *    sort (stable) a leak is the first finding.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "holders.h"
#include "leaks.h"
#include "report.h"
#include "util.h"

#define MAX_FRAMES 64
#define MAX_LEAK_FINDINGS 3 /* the largest groups; the rest are in `leaks` */

static void origin_text(struct gt_leaks *l, const struct gt_group *g, char *buf,
                        size_t len) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(l->symtab, g->pid, g->stack_id, f, MAX_FRAMES);
  const struct gt_frame *o = gt_leaks_origin(f, n);
  if (!o)
    snprintf(buf, len, "pid %u stack %u", g->pid, g->stack_id);
  else if (o->file[0])
    snprintf(buf, len, "%s at %s:%u", o->function, gt_base_name(o->file), o->line);
  else
    snprintf(buf, len, "%s", o->function);
}

static void add_group(struct report *r, struct gt_leaks *l, const struct gt_group *g) {
  char site[200], b[32], rate[64] = "", per[200] = "";
  origin_text(l, g, site, sizeof site);
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

void rp_leak_findings(struct report *r) {
  struct gt_leaks l;
  char err[256];
  struct gt_leaks_opts o = {.no_wait = r->opt.no_wait};
  if (!r->path || gt_leaks_run(r->path, &o, &l, err, sizeof err) != 0)
    return; /* rp_read opened it: only a file changed meanwhile fails */
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
