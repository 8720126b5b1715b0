/* report_base.c — what every report_*.c file may use (see report.h): the
 * process table, the blocking-call rule, a kernel row's shown name and
 * the finding builders. It calls no other report_*.c file, so the others
 * depend on it and never on each other through it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

int rp_is_sync_api(unsigned api) {
  return (gt_api_flags(api) & GT_AF_BLOCKING) != 0;
}

/* The CPU-side split of a blocking call (docs/report.md, "Attribution"). */
void rp_cpu_split(uint64_t blocked, uint64_t copy_est, unsigned flags, uint64_t *kernel,
                  uint64_t *copy, uint64_t *sync) {
  uint64_t c = copy_est < blocked ? copy_est : blocked, rest = blocked - c;
  *kernel = *sync = 0;
  if (flags & RP_BL_PEND_KERNELS)
    *kernel = rest;
  else if (flags & (RP_BL_COPYCALL | RP_BL_PEND_COPIES))
    c += rest;
  else
    *sync = rest;
  *copy = c;
}

struct rp_proc *rp_proc_of(struct report *r, uint32_t pid) {
  size_t i;
  int added;
  r->procs = gt_find_or_add(&r->proc_idx, pid, r->procs, &r->nprocs, &r->cprocs,
                            sizeof *r->procs, &i, &added);
  r->procs[i].pid = pid;
  return &r->procs[i];
}

const char *rp_kernel_name(const struct report *r, size_t idx) {
  static char buf[300];
  const struct rp_kernel *k = &r->kern[idx];
  const char *fn =
      k->fn_addr ? gt_symtab_function(r->symtab, k->fn_pid, k->fn_addr + 1) : NULL;
  if (!fn)
    return r->knames.strs[idx];
  snprintf(buf, sizeof buf, "host function %s", fn); /* frames are demangled */
  return buf;
}

/* ---- building findings ---- */

struct rp_finding *rp_add_finding(struct report *r, const char *rule, const char *sev,
                                  const char *advice, const char *fmt, ...) {
  r->findings =
      gt_grow(r->findings, &r->cfindings, r->nfindings + 1, sizeof *r->findings);
  struct rp_finding *f = &r->findings[r->nfindings++];
  memset(f, 0, sizeof *f);
  f->rule = rule;
  f->severity = sev;
  f->advice = advice;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&f->message, fmt, ap) < 0)
    gt_oom();
  va_end(ap);
  return f;
}

static struct rp_ev *ev(struct rp_finding *f, const char *key, enum rp_ev_type type) {
  if (f->nev >= RP_MAX_EV)
    return &f->ev[RP_MAX_EV - 1]; /* never: each rule has fewer */
  struct rp_ev *e = &f->ev[f->nev++];
  e->key = key;
  e->type = type;
  return e;
}
void rp_ev_u(struct rp_finding *f, const char *k, enum rp_ev_type t, uint64_t v) {
  ev(f, k, t)->u = v;
}
void rp_ev_frac(struct rp_finding *f, const char *k, double v) {
  ev(f, k, RP_EV_FRAC)->d = v;
}
void rp_ev_json(struct rp_finding *f, const char *k, const char *json) {
  rp_ev_str(f, k, json);
  f->ev[f->nev - 1].type = RP_EV_JSON;
}
void rp_ev_str(struct rp_finding *f, const char *k, const char *v) {
  struct rp_ev *e = ev(f, k, RP_EV_STR);
  free(e->s); /* (the last slot, reused: never) */
  if (!(e->s = strdup(v)))
    gt_oom();
}

double rp_frac(uint64_t part, uint64_t whole) {
  return whole ? (double)part / (double)whole : 0;
}
