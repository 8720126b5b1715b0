/* leaks_oom.c — the trace's last allocation, when it ran out of memory
 * (leaks.h: struct gt_oom).
 *
 * Contract:
 *  - An allocation record that failed for want of memory (schema.h's
 *    gt_record_out_of_memory, the collector's trigger's test too) makes it
 *    the trace's out-of-memory failure: its process, stack, API, requested
 *    bytes, and the process's live device and managed bytes at that
 *    instant (IPC mappings aside: another process's memory) by stack.
 *    Any later allocation of the trace's own (not carried, not a VMM
 *    mapping) that did not fail so clears it: only a trace whose last
 *    allocation failed has one.
 *  - A storm (the same failure retried) takes the live stacks once: they
 *    are taken again only when live bytes changed since (`changes`).
 *  - Finish names the sites once the symbols are in (gt_leaks_site: as
 *    leaks names them), adds stacks of one site together, and keeps the
 *    GT_OOM_HOLDERS largest (ties by name: a stable line).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"
#include "model.h"
#include "util.h"

#define MAX_FRAMES 64

struct take {
  struct gt_oom *o;
  size_t cap;
};

static void take_block(void *ctx, const struct gt_block *b) {
  struct take *t = ctx;
  struct gt_oom *o = t->o;
  if (b->pid != o->pid || (b->memory != GT_MEM_DEVICE && b->memory != GT_MEM_MANAGED) ||
      (gt_api_flags(b->api) & GT_AF_IPC))
    return;
  o->held += b->bytes;
  for (size_t i = 0; i < o->nstacks; i++) /* few stacks hold memory: a scan */
    if (o->stacks[i].stack_id == b->stack_id) {
      o->stacks[i].bytes += b->bytes;
      return;
    }
  o->stacks = gt_grow(o->stacks, &t->cap, o->nstacks + 1, sizeof *o->stacks);
  o->stacks[o->nstacks++] =
      (struct gt_group){.pid = b->pid, .stack_id = b->stack_id, .bytes = b->bytes};
}

void gt_oom_see(struct gt_oom *o, struct gt_model *m, const struct gt_record *rec,
                uint64_t changes) {
  if ((rec->flags & (GT_F_CARRIED | GT_F_VMM_MAP)) ||
      (gt_api_flags(rec->api) & GT_AF_MAP))
    return; /* allocated before the trace; a mapping allocates nothing */
  if (!gt_record_out_of_memory(rec)) {
    o->present = 0;
    return;
  }
  int again = o->present && o->pid == rec->pid && o->stacks_at == changes;
  o->present = 1;
  o->stack_id = rec->stack_id;
  o->api = rec->api;
  o->ts_ns = rec->ts_ns;
  o->requested = rec->u.mem.bytes;
  if (again)
    return;
  o->pid = rec->pid;
  o->stacks_at = changes;
  o->held = 0;
  o->nstacks = 0;
  struct take t = {o, 0};
  free(o->stacks);
  o->stacks = NULL;
  gt_heap_foreach(gt_model_heap(m), take_block, &t);
}

static void where_text(struct gt_symtab *t, const struct gt_oom *o, char *buf,
                       size_t len) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(t, o->pid, o->stack_id, f, MAX_FRAMES);
  const struct gt_frame *at = gt_leaks_origin(f, n);
  if (!at)
    snprintf(buf, len, "an unknown line (pid %u stack %u)", o->pid, o->stack_id);
  else if (at->file[0])
    snprintf(buf, len, "%s:%u in %s", gt_base_name(at->file), at->line, at->function);
  else
    snprintf(buf, len, "%s", at->function);
}

static int by_bytes_then_site(const void *a, const void *b) {
  const struct gt_oom_site *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return strcmp(x->site, y->site);
}

void gt_oom_finish(struct gt_oom *o, struct gt_symtab *t) {
  if (!o->present)
    return;
  gt_leaks_site(t, o->pid, o->stack_id, o->site, sizeof o->site);
  where_text(t, o, o->where, sizeof o->where);
  struct gt_oom_site *sites = gt_xcalloc(o->nstacks + 1, sizeof *sites);
  size_t n = 0;
  for (size_t i = 0; i < o->nstacks; i++) {
    char name[sizeof sites->site];
    gt_leaks_site(t, o->pid, o->stacks[i].stack_id, name, sizeof name);
    size_t k = 0;
    while (k < n && strcmp(sites[k].site, name) != 0)
      k++;
    if (k == n)
      snprintf(sites[n++].site, sizeof sites->site, "%s", name);
    sites[k].bytes += o->stacks[i].bytes;
  }
  if (n)
    qsort(sites, n, sizeof *sites, by_bytes_then_site);
  o->nsites = n;
  o->nholders = n < GT_OOM_HOLDERS ? n : GT_OOM_HOLDERS;
  memcpy(o->holders, sites, o->nholders * sizeof *sites);
  free(sites);
  free(o->stacks);
  o->stacks = NULL;
  o->nstacks = 0;
}

const char *gt_oom_line(const struct gt_oom *o) {
  static char line[1400];
  int len = snprintf(line, sizeof line,
                     "out of memory at %s: asked %" PRIu64 " bytes while %" PRIu64
                     " were held by ",
                     o->where, o->requested, o->held);
  uint64_t named = 0;
  for (size_t i = 0; i < o->nholders && len < (int)sizeof line; i++) {
    len += snprintf(line + len, sizeof line - (size_t)len, "%s%s (%" PRIu64 " bytes)",
                    i ? ", " : "", o->holders[i].site, o->holders[i].bytes);
    named += o->holders[i].bytes;
  }
  if (!o->nholders && len < (int)sizeof line)
    snprintf(line + len, sizeof line - (size_t)len, "nothing traced");
  else if (o->nsites > o->nholders && len < (int)sizeof line)
    snprintf(line + len, sizeof line - (size_t)len,
             " and %zu more sites (%" PRIu64 " bytes)", o->nsites - o->nholders,
             o->held - named);
  return line;
}
