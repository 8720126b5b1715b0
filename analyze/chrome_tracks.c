/* chrome_tracks.c — which track each slice of a chrome export goes on, and
 * the adjustments that keep every track perfectly nested (see chrome.h).
 *
 * Why the rules below: Perfetto and chrome://tracing rebuild the slice tree
 * of a track from X events sorted by start time, breaking ties by file
 * order, and drop or misplace a slice that crosses another. A host thread's
 * calls are sequential, but (1) NVTX push/pop ranges are only complete at
 * the pop, so they are written after the calls inside them: a range must
 * start strictly before its first child or the tie-break nests them the
 * wrong way round; (2) stamps from different clocks or conversions can
 * cross by a few ns. So each thread keeps the open ranges and a `floor`
 * (the end of the last slice at the current level) and moves starts up and
 * range ends out as needed. Tracks that hold independent work (NVTX
 * start/end ranges, device streams) use lanes: a slice that overlaps the
 * last one of a lane goes to the next lane.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "util.h"

#define CH_FLOWS_MIN 1024u      /* per thread that queues device work */
#define CH_FLOWS_MAX (1u << 20) /* work in flight beyond this loses its arrow */

int ch_init(struct chrome *ch) {
  for (unsigned a = 0; a < GT_API_COUNT; a++) { /* identifiers: nothing to escape */
    int n = snprintf(ch->api_json[a], sizeof ch->api_json[a], "\"%s\"", gt_api_name(a));
    if (n < 0 || n >= (int)sizeof ch->api_json[a])
      return -1;
    ch->api_len[a] = (uint8_t)n;
  }
  ch->next_tid = CH_SYNTH_TID_BASE;
  ch->to = INT64_MAX;
  return 0;
}

static void free_map_values(struct gt_map *m, void (*fn)(void *)) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i] == 1)
      fn((void *)(uintptr_t)m->vals[i]);
  gt_map_free(m);
}

static void free_thread(void *p) {
  struct ch_thread *th = p;
  free(th->stack);
  free(th->flows);
  free(th);
}

static void free_proc(void *p) {
  struct ch_proc *pr = p;
  free(pr->nvtx.v);
  free(pr);
}

static void free_devtrack(void *p) {
  struct ch_devtrack *d = p;
  free(d->lanes.v);
  free(d);
}

void ch_free(struct chrome *ch) {
  free_map_values(&ch->threads, free_thread);
  free_map_values(&ch->procs, free_proc);
  free_map_values(&ch->devtracks, free_devtrack);
  free_map_values(&ch->names, free);
}

int64_t ch_rel(struct chrome *ch, uint64_t ts_ns) {
  const uint64_t limit = 1ull << 62; /* a damaged stamp: keep ts + dur in range */
  if (ts_ns < ch->base_ns || ts_ns - ch->base_ns > limit) {
    ch->clamped++;
    return ts_ns < ch->base_ns ? 0 : (int64_t)limit;
  }
  return (int64_t)(ts_ns - ch->base_ns);
}

struct ch_proc *ch_proc(struct chrome *ch, uint32_t pid) {
  uint64_t v;
  if (gt_map_get(&ch->procs, pid, &v))
    return (struct ch_proc *)(uintptr_t)v;
  struct ch_proc *p = gt_xcalloc(1, sizeof *p);
  p->pid = pid;
  p->sort = (uint32_t)ch->procs.count;
  gt_map_put(&ch->procs, pid, (uint64_t)(uintptr_t)p);
  return p;
}

struct ch_thread *ch_thread(struct chrome *ch, uint32_t pid, uint32_t tid) {
  struct ch_thread *th = ch->last_thread;
  if (th && th->pid == pid && th->tid == tid)
    return th;
  uint64_t key = gt_pid_key(pid, tid), v;
  if (gt_map_get(&ch->threads, key, &v)) {
    th = (struct ch_thread *)(uintptr_t)v;
  } else {
    th = gt_xcalloc(1, sizeof *th);
    th->pid = pid;
    th->tid = tid;
    th->head_len = (uint8_t)snprintf(th->head, sizeof th->head,
                                     ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
    gt_map_put(&ch->threads, key, (uint64_t)(uintptr_t)th);
  }
  ch->last_thread = th;
  return th;
}

struct ch_devtrack *ch_devtrack(struct chrome *ch, uint32_t pid, int32_t device,
                                uint64_t stream) {
  uint64_t key = gt_pid_key(pid, stream ^ ((uint64_t)(uint32_t)device << 48)), v;
  if (gt_map_get(&ch->devtracks, key, &v))
    return (struct ch_devtrack *)(uintptr_t)v;
  struct ch_devtrack *d = gt_xcalloc(1, sizeof *d);
  d->pid = pid;
  d->device = device;
  d->stream = stream;
  gt_map_put(&ch->devtracks, key, (uint64_t)(uintptr_t)d);
  return d;
}

void ch_event(struct chrome *ch) {
  if (ch->events++)
    CO_LIT(&ch->out, ",\n");
}

/* {"ph":"M","name":"<what>","pid":P,"tid":T,"args":{"<key>": */
static void meta_head(struct chrome *ch, const char *what, uint32_t pid, uint32_t tid,
                      const char *key) {
  struct co_out *o = &ch->out;
  ch_event(ch);
  CO_LIT(o, "{\"ph\":\"M\",\"name\":\"");
  co_put(o, what, strlen(what));
  CO_LIT(o, "\",\"pid\":");
  co_u64(o, pid);
  CO_LIT(o, ",\"tid\":");
  co_u64(o, tid);
  CO_LIT(o, ",\"args\":{\"");
  co_put(o, key, strlen(key));
  CO_LIT(o, "\":");
}

static void meta_name(struct chrome *ch, const char *what, uint32_t pid, uint32_t tid,
                      const char *name) {
  meta_head(ch, what, pid, tid, "name");
  co_str(&ch->out, name);
  CO_LIT(&ch->out, "}}");
}

static void meta_sort(struct chrome *ch, const char *what, uint32_t pid, uint32_t tid,
                      uint32_t index) {
  meta_head(ch, what, pid, tid, "sort_index");
  co_u64(&ch->out, index);
  CO_LIT(&ch->out, "}}");
}

void ch_name_proc(struct chrome *ch, struct ch_proc *p) {
  if (p->named == 2)
    return;
  const char *cmd = gt_model_cmdline(ch->model, p->pid);
  if (!*cmd && p->named == 1)
    return;
  char fallback[32];
  if (!*cmd)
    snprintf(fallback, sizeof fallback, "pid %u", p->pid);
  meta_name(ch, "process_name", p->pid, p->pid, *cmd ? cmd : fallback);
  if (!p->named)
    meta_sort(ch, "process_sort_index", p->pid, p->pid, p->sort);
  p->named = *cmd ? 2 : 1;
}

void ch_name_thread(struct chrome *ch, struct ch_thread *th) {
  if (th->named)
    return;
  th->named = 1;
  ch_name_proc(ch, ch_proc(ch, th->pid));
  char name[32];
  if (th->tid == th->pid)
    snprintf(name, sizeof name, "main");
  else
    snprintf(name, sizeof name, "thread %u", th->tid);
  meta_name(ch, "thread_name", th->pid, th->tid, name);
  /* Host threads first (main on top), then NVTX lanes, then devices. */
  meta_sort(ch, "thread_sort_index", th->pid, th->tid, th->tid == th->pid ? 0 : 1);
}

void ch_name_lane(struct chrome *ch, uint32_t pid, struct ch_lane *lane, const char *name,
                  uint32_t sort) {
  if (lane->named)
    return;
  lane->named = 1;
  ch_name_proc(ch, ch_proc(ch, pid));
  meta_name(ch, "thread_name", pid, lane->tid, name);
  meta_sort(ch, "thread_sort_index", pid, lane->tid, sort);
}

static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* Earliest start allowed for a slice or range beginning on th now. */
static int64_t lowest_start(const struct ch_thread *th) {
  int64_t lo = th->floor;
  if (th->depth) /* strictly after the enclosing range, written later */
    lo = max64(lo, th->stack[th->depth - 1].start + 1);
  return lo;
}

void ch_call(struct chrome *ch, struct ch_thread *th, int64_t *s, int64_t *e) {
  int64_t s0 = *s, e0 = *e;
  *s = max64(s0, lowest_start(th));
  *e = max64(e0, *s);
  if (*s != s0 || *e != e0)
    ch->adjusted++;
  th->floor = *e;
  if (th->depth)
    th->stack[th->depth - 1].max_end = max64(th->stack[th->depth - 1].max_end, *e);
}

void ch_push(struct chrome *ch, struct ch_thread *th, uint64_t domain, int64_t t) {
  int64_t s = max64(t, lowest_start(th));
  if (s != t)
    ch->adjusted++;
  if (th->depth == th->cap) {
    th->cap = th->cap ? th->cap * 2 : 8;
    th->stack = gt_xrealloc(th->stack, th->cap * sizeof *th->stack);
  }
  th->stack[th->depth++] = (struct ch_open){domain, s, s};
}

int ch_pop(struct chrome *ch, struct ch_thread *th, uint64_t domain, int64_t t,
           int64_t *s, int64_t *e) {
  uint32_t i = th->depth;
  while (i > 0 && th->stack[i - 1].domain != domain)
    i--;
  if (i == 0)
    return -1;
  struct ch_open r = th->stack[i - 1];
  int on_thread = i == th->depth;
  /* Remove it; what was inside stays inside its parent. */
  memmove(&th->stack[i - 1], &th->stack[i], (th->depth - i) * sizeof r);
  th->depth--;
  int64_t end = max64(t, r.max_end);
  if (on_thread) {
    if (end != t)
      ch->adjusted++;
    *s = r.start;
    *e = end;
    th->floor = end;
  }
  if (i - 1 > 0) { /* the parent now holds everything r held */
    struct ch_open *parent = &th->stack[i - 2];
    parent->max_end = max64(parent->max_end, on_thread ? end : r.max_end);
  }
  return on_thread;
}

int64_t ch_instant(const struct ch_thread *th, int64_t t) {
  return max64(t, lowest_start(th));
}

uint32_t ch_lane_pick(struct chrome *ch, struct ch_lanes *l, int64_t s, int64_t e) {
  uint32_t i = 0;
  while (i < l->n && l->v[i].end > s)
    i++;
  if (i == l->n) {
    if (l->n == l->cap) {
      l->cap = l->cap ? l->cap * 2 : 4;
      l->v = gt_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (struct ch_lane){.end = 0, .tid = ch->next_tid++};
  }
  if (i > 0)
    ch->overflow++;
  l->v[i].end = max64(l->v[i].end, e);
  return i;
}

static struct ch_flowslot *flow_slot(struct ch_thread *th, uint32_t corr) {
  if (!th->flows) {
    th->flows = gt_xcalloc(1, CH_FLOWS_MIN * sizeof *th->flows);
    th->flow_mask = CH_FLOWS_MIN - 1;
  }
  return &th->flows[corr & th->flow_mask];
}

/* Device work reported later than the table reaches back: double it. */
static void flows_grow(struct ch_thread *th) {
  uint32_t n = (th->flow_mask + 1) * 2;
  if (n > CH_FLOWS_MAX)
    return;
  struct ch_flowslot *v = gt_xcalloc(1, n * sizeof *v);
  for (uint32_t i = 0; i <= th->flow_mask; i++)
    if (th->flows[i].side)
      v[th->flows[i].corr & (n - 1)] = th->flows[i];
  free(th->flows);
  th->flows = v;
  th->flow_mask = n - 1;
}

static void flow_event(struct chrome *ch, char ph, unsigned kind, uint32_t pid,
                       uint32_t tid, int64_t ts, uint64_t id) {
  const char *cat = gt_kind_name(kind);
  char *p = co_reserve(&ch->out, 192);
  if (ch->events++)
    p = CW_LIT(p, ",\n");
  p = CW_LIT(p, "{\"ph\":\"");
  *p++ = ph;
  p = ph == 'f' ? CW_LIT(p, "\",\"bp\":\"e\",\"cat\":\"") : CW_LIT(p, "\",\"cat\":\"");
  p = cw_put(p, cat, strlen(cat));
  p = CW_LIT(p, "\",\"name\":\"");
  p = cw_put(p, cat, strlen(cat));
  p = CW_LIT(p, "\",\"id\":");
  p = cw_u64(p, id);
  p = CW_LIT(p, ",\"pid\":");
  p = cw_u64(p, pid);
  p = CW_LIT(p, ",\"tid\":");
  p = cw_u64(p, tid);
  p = CW_LIT(p, ",\"ts\":");
  p = cw_us(p, (uint64_t)ts);
  *p++ = '}';
  co_commit(&ch->out, p);
}

/* Both ends are known. Each flow event sits at the start of its slice with
 * the slice's category: DevTools binds a flow event to the slice with the
 * same (ts, pid, tid, cat), Perfetto to the slice open at its ts (written
 * after the slice, so the tie goes to it) and matches the two ends on
 * (id, cat, name). Integer ids: Perfetto reads string ids as hex. */
static void flow_emit(struct chrome *ch, const struct ch_thread *th, unsigned kind,
                      int64_t host_ts, uint32_t dev_tid, int64_t dev_ts) {
  uint64_t id = ++ch->next_flow;
  flow_event(ch, 's', kind, th->pid, th->tid, host_ts, id);
  flow_event(ch, 'f', kind, th->pid, dev_tid, dev_ts, id);
  ch->flows_done++;
}

void ch_flow_host(struct chrome *ch, struct ch_thread *th, uint32_t corr, unsigned kind,
                  int64_t ts, int written) {
  struct ch_flowslot *f = flow_slot(th, corr);
  if (f->side == 2 && f->corr == corr) { /* the device side came first */
    if (written && f->written)
      flow_emit(ch, th, kind, ts, f->dev_tid, f->ts);
    f->side = 0;
    return;
  }
  *f = (struct ch_flowslot){corr, 1, (uint8_t)written, (uint8_t)kind, 0, ts};
}

int64_t ch_flow_host_ts(struct ch_thread *th, uint32_t corr) {
  struct ch_flowslot *f = flow_slot(th, corr);
  return f->side == 1 && f->corr == corr ? f->ts : INT64_MIN;
}

void ch_flow_device(struct chrome *ch, struct ch_thread *th, uint32_t corr, unsigned kind,
                    uint32_t dev_tid, int64_t ts, int written) {
  struct ch_flowslot *f = flow_slot(th, corr);
  if (f->side == 1 && f->corr == corr) {
    if (written && f->written)
      flow_emit(ch, th, f->kind, f->ts, dev_tid, ts);
    f->side = 0; /* corr stays: a later lookup can tell it came by */
    return;
  }
  if ((f->side || f->corr) && (int32_t)(f->corr - corr) > 0) {
    flows_grow(th); /* its host call was overwritten by a later one */
    return;
  }
  *f = (struct ch_flowslot){corr, 2, (uint8_t)written, (uint8_t)kind, dev_tid, ts};
}
