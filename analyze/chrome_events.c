/* chrome_events.c — one record of the trace in, Chrome trace events out.
 *
 * Contract (the event shapes are listed in docs/cli.md, `chrome`):
 *  - host calls (alloc ... event) become X slices on their thread, named
 *    after the API or, for launches, the demangled kernel; failed calls get
 *    an "error: <name>" instant inside the slice;
 *  - NVTX push/pop ranges become X slices on their thread when they pop
 *    (chrome_tracks.c keeps them nested around the calls already written);
 *    start/end ranges, and push/pop ranges of two domains that cross, go to
 *    per-process "NVTX ranges" lanes; marks are thread instants;
 *  - DEVICE records become X slices on a per-stream track, with a flow
 *    arrow from the host call that queued the work;
 *  - alloc/free update per-process memory counters; drop/lost records are
 *    process instants and counters; process start/end are process instants.
 *  - An event is written when its time span overlaps the --from/--to window
 *    (instants and counters: when their time is inside it). Track placement
 *    is computed for every record, so a filtered export holds exactly the
 *    same events, with the same times, as the matching part of a full one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "fields.h"

/* Durations come from an untrusted file: keep end times far from overflow. */
static int64_t dur_of(uint64_t dur_ns) {
  return dur_ns > (1ull << 60) ? (int64_t)(1ull << 60) : (int64_t)dur_ns;
}

/* Quoted, escaped kernel name of a launch, cached per (pid, kernel): launches
 * repeat a handful of names millions of times. */
static const struct ch_name *kernel_json(struct chrome *ch, uint32_t pid, uint64_t kernel,
                                         uint32_t flags) {
  uint64_t kind = flags & (GT_F_HOST_FN | GT_F_GRAPH);
  uint64_t key = gt_pid_key(pid, kernel) ^ (kind << 58), v;
  if (gt_map_get(&ch->names, key, &v))
    return (const struct ch_name *)(uintptr_t)v;
  char *q = co_quote_dup(gt_model_kernel_of(ch->model, pid, kernel, flags));
  size_t len = q ? strlen(q) : 0;
  struct ch_name *n = q ? malloc(sizeof *n + len + 1) : NULL;
  if (!n) {
    fprintf(stderr, "gputrace chrome: out of memory\n");
    exit(2);
  }
  n->len = len;
  memcpy(n->s, q, len + 1);
  free(q);
  gt_map_put(&ch->names, key, (uint64_t)(uintptr_t)n);
  return n;
}

static void forget_kernel(struct chrome *ch, const struct gt_record *r) {
  uint64_t key = gt_pid_key(r->pid, r->u.kname.kernel), v;
  if (gt_map_get(&ch->names, key, &v)) {
    free((void *)(uintptr_t)v);
    gt_map_del(&ch->names, key);
  }
}

/* {"ph":"<ph>", ... "pid":P,"tid":T,"ts":S — the caller adds the rest. Every
 * event has its ts before any text from the trace: older Perfetto tokenizers
 * scan an event's keys in order up to "ts" and fail on \u escapes. */
static void head(struct chrome *ch, const char *ph_cat, size_t n, uint32_t pid,
                 uint32_t tid, int64_t ts) {
  struct co_out *o = &ch->out;
  ch_event(ch);
  co_put(o, ph_cat, n);
  CO_LIT(o, ",\"pid\":");
  co_u64(o, pid);
  CO_LIT(o, ",\"tid\":");
  co_u64(o, tid);
  CO_LIT(o, ",\"ts\":");
  co_us(o, (uint64_t)ts);
}
#define HEAD(ch, lit, pid, tid, ts) head((ch), (lit), sizeof(lit) - 1, (pid), (tid), (ts))

/* The same on a host thread's own track, pid and tid preformatted. */
static void thread_head(struct chrome *ch, const char *ph_cat, size_t n,
                        const struct ch_thread *th, int64_t ts) {
  ch_event(ch);
  co_put(&ch->out, ph_cat, n);
  co_put(&ch->out, th->head, th->head_len);
  co_us(&ch->out, (uint64_t)ts);
}
#define THREAD_HEAD(ch, lit, th, ts) thread_head((ch), (lit), sizeof(lit) - 1, (th), (ts))

static void dur_field(struct chrome *ch, int64_t s, int64_t e) {
  CO_LIT(&ch->out, ",\"dur\":");
  co_us(&ch->out, (uint64_t)(e - s));
}

static void u64_arg(struct co_out *o, const char *key_lit, size_t n, uint64_t v) {
  co_put(o, key_lit, n);
  co_u64(o, v);
}
#define U64_ARG(o, lit, v) u64_arg((o), (lit), sizeof(lit) - 1, (v))

static void api_field(struct chrome *ch, unsigned api) {
  co_put(&ch->out, ch->api_json[api], ch->api_len[api]);
}

/* ---- the hot path: host calls and device work, written through a cursor
 * into room reserved up front (every field below has a bounded length). */

#define CW_ROOM 640 /* bytes an event needs besides its name */

static char *cw_api(const struct chrome *ch, char *p, unsigned api) {
  memcpy(p, ch->api_json[api], sizeof ch->api_json[api]);
  return p + ch->api_len[api];
}

static char *cw_dims(char *p, const uint32_t d[3]) {
  *p++ = '[';
  p = cw_u64(p, d[0]);
  *p++ = ',';
  p = cw_u64(p, d[1]);
  *p++ = ',';
  p = cw_u64(p, d[2]);
  *p++ = ']';
  return p;
}

static char *cw_ascii(char *p, const char *s) { /* short, known-clean text */
  size_t n = strlen(s);
  return cw_put(p, s, n < 48 ? n : 48);
}

static char *cw_i64(char *p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return cw_u64(p, (uint64_t)0 - (uint64_t)v);
  }
  return cw_u64(p, (uint64_t)v);
}

/* ,"key":value for each field of the record that chrome shows (fields.c). */
static char *cw_fields(char *p, const struct gt_record *r) {
  size_t n;
  const struct gt_field *fs = gt_fields(r, &n);
  for (size_t i = 0; i < n; i++) {
    const struct gt_field *f = &fs[i];
    if (!(f->out & GT_FO_CHROME) || !gt_field_shown(f, r) ||
        ((f->out & GT_FO_CHROME_NZ) && !gt_field_uint(f, r)))
      continue;
    p = CW_LIT(p, ",\"");
    p = cw_put(p, f->key, f->key_len);
    p = CW_LIT(p, "\":");
    switch (f->type) {
    case GT_FT_HEX:
      p = cw_hex(p, gt_field_uint(f, r));
      break;
    case GT_FT_INT:
      p = cw_i64(p, gt_field_int(f, r));
      break;
    case GT_FT_DIMS:
      p = cw_dims(p, (const uint32_t *)(const void *)((const char *)r + f->off));
      break;
    case GT_FT_BOOL:
      p = gt_field_bool(f, r) ? CW_LIT(p, "true") : CW_LIT(p, "false");
      break;
    case GT_FT_NAME:
      *p++ = '"';
      p = cw_ascii(p, f->name((unsigned)gt_field_uint(f, r)));
      *p++ = '"';
      break;
    default:
      p = cw_u64(p, gt_field_uint(f, r));
    }
  }
  return p;
}

static void counter(struct chrome *ch, uint32_t pid, const char *name_lit, size_t n,
                    const char *key_lit, size_t k, uint64_t value, int64_t ts) {
  struct co_out *o = &ch->out;
  HEAD(ch, "{\"ph\":\"C\"", pid, pid, ts);
  CO_LIT(o, ",\"name\":");
  co_put(o, name_lit, n);
  CO_LIT(o, ",\"args\":{");
  co_put(o, key_lit, k);
  co_u64(o, value);
  CO_LIT(o, "}}");
}

static const char *const mem_counter[4] = {
    NULL, "\"device memory\"", "\"pinned host memory\"", "\"managed memory\""};

static void memory_counter(struct chrome *ch, uint32_t pid, unsigned mem, int64_t ts) {
  if (mem == 0 || mem > 3)
    return;
  ch_name_proc(ch, ch_proc(ch, pid));
  uint64_t live = gt_model_live_bytes(ch->model, pid, mem);
  counter(ch, pid, mem_counter[mem], strlen(mem_counter[mem]), "\"bytes\":", 8, live, ts);
}

/* Memory in use when the window opens, so the counters start at the right
 * level. Called before the model sees the process's first record in it. */
void ch_prime(struct chrome *ch, const struct gt_record *r) {
  struct ch_proc *p = ch_proc(ch, r->pid);
  if (p->primed)
    return;
  p->primed = 1;
  for (unsigned mem = 1; mem <= 3; mem++)
    if (gt_model_live_bytes(ch->model, r->pid, mem))
      memory_counter(ch, r->pid, mem, ch->from);
}

static void error_instant(struct chrome *ch, const struct ch_thread *th,
                          const struct gt_record *r, int64_t ts) {
  struct co_out *o = &ch->out;
  THREAD_HEAD(ch, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"error\"", th, ts);
  CO_LIT(o, ",\"name\":\"error: ");
  const char *err = gt_cuda_error_name(r->result);
  co_put(o, err, strlen(err));
  CO_LIT(o, "\",\"args\":{\"api\":");
  api_field(ch, r->api);
  CO_LIT(o, ",\"result\":");
  co_i64(o, r->result);
  CO_LIT(o, "}}");
}

/* The X slice of a host call, at its placed [s, e). */
static void call_slice(struct chrome *ch, const struct ch_thread *th,
                       const struct gt_record *r, int64_t s, int64_t e) {
  struct fixed {
    char s[32];
    size_t n;
  };
#define CAT(k)                                                                           \
  { "{\"ph\":\"X\",\"cat\":\"" k "\"", sizeof("{\"ph\":\"X\",\"cat\":\"" k "\"") - 1 }
  /* every kind's name from the kind table (schema.h); only calls come here */
#define GT_X_CAT(name, value, class, text) [value] = CAT(text),
  static const struct fixed cats[GT_KIND_COUNT] = {GT_KIND_LIST(GT_X_CAT)};
#undef GT_X_CAT
#undef CAT
  const struct ch_name *kernel =
      r->kind == GT_KIND_LAUNCH ? kernel_json(ch, r->pid, r->u.launch.kernel, r->flags)
                                : NULL;
  char *p = co_reserve(&ch->out, CW_ROOM + (kernel ? kernel->len : 0));
  if (ch->events++)
    p = CW_LIT(p, ",\n");
  memcpy(p, cats[r->kind].s, sizeof cats[r->kind].s);
  p += cats[r->kind].n;
  memcpy(p, th->head, sizeof th->head);
  p += th->head_len;
  p = cw_us(p, (uint64_t)s);
  p = CW_LIT(p, ",\"dur\":");
  p = cw_us(p, (uint64_t)(e - s));
  p = CW_LIT(p, ",\"name\":");
  p = kernel ? cw_put(p, kernel->s, kernel->len) : cw_api(ch, p, r->api);
  p = CW_LIT(p, ",\"args\":{\"api\":");
  p = cw_api(ch, p, r->api);
  p = CW_LIT(p, ",\"result\":");
  p = cw_i64(p, r->result);
  if (r->result) {
    p = CW_LIT(p, ",\"error\":\"");
    p = cw_ascii(p, gt_cuda_error_name(r->result));
    *p++ = '"';
  }
  p = cw_fields(p, r);
  p = CW_LIT(p, "}}");
  co_commit(&ch->out, p);
}

static void host_call(struct chrome *ch, const struct gt_record *r) {
  struct ch_thread *th = ch_thread(ch, r->pid, r->tid);
  int64_t s0 = ch_rel(ch, r->ts_ns), e0 = s0 + dur_of(r->dur_ns), s = s0, e = e0;
  ch_call(ch, th, &s, &e);
  int in = ch_in_window(ch, s0, e0);
  int64_t mid = s + (e - s) / 2; /* strictly inside when dur >= 2 ns */
  uint32_t corr = gt_record_corr(r);
  if (in) {
    ch_name_thread(ch, th);
    call_slice(ch, th, r, s, e);
    if (r->result)
      error_instant(ch, th, r, mid);
  }
  if (corr)
    ch_flow_host(ch, th, corr, r->kind, s, in);
  /* The level after the call returned; failed calls change nothing. */
  if ((r->kind == GT_KIND_ALLOC || r->kind == GT_KIND_FREE) && r->result == 0 &&
      r->u.mem.ptr && ch_in_window(ch, e0, e0))
    memory_counter(ch, r->pid, r->u.mem.memory, e0);
}

static void range_args(struct chrome *ch, const struct gt_range *rng, int unfinished) {
  struct co_out *o = &ch->out;
  CO_LIT(o, ",\"args\":{\"domain\":");
  co_hex(o, rng->domain);
  if (rng->depth >= 0)
    U64_ARG(o, ",\"depth\":", (uint64_t)rng->depth);
  else
    U64_ARG(o, ",\"tid\":", rng->tid);
  if (unfinished)
    CO_LIT(o, ",\"unfinished\":true");
  CO_LIT(o, "}}");
}

static void range_slice(struct chrome *ch, const struct gt_range *rng, uint32_t tid,
                        int64_t s, int64_t e, int unfinished) {
  HEAD(ch, "{\"ph\":\"X\",\"cat\":\"nvtx\"", rng->pid, tid, s);
  dur_field(ch, s, e);
  CO_LIT(&ch->out, ",\"name\":");
  co_str(&ch->out, rng->name);
  range_args(ch, rng, unfinished);
}

/* A range that cannot sit on its thread: the process's NVTX lanes. */
static void lane_range(struct chrome *ch, const struct gt_range *rng, int64_t end,
                       int unfinished) {
  struct ch_proc *p = ch_proc(ch, rng->pid);
  int64_t s = ch_rel(ch, rng->start_ns), e = end > s ? end : s;
  uint32_t i = ch_lane_pick(ch, &p->nvtx, s, e);
  if (!ch_in_window(ch, s, e))
    return;
  char name[48];
  if (i == 0)
    snprintf(name, sizeof name, "NVTX ranges");
  else
    snprintf(name, sizeof name, "NVTX ranges (%u)", i + 1);
  ch_name_lane(ch, rng->pid, &p->nvtx.v[i], name, 1000 + i);
  range_slice(ch, rng, p->nvtx.v[i].tid, s, e, unfinished);
}

static void nvtx_mark(struct chrome *ch, const struct gt_record *r,
                      struct ch_thread *th) {
  int64_t t0 = ch_rel(ch, r->ts_ns), t = ch_instant(th, t0);
  if (!ch_in_window(ch, t0, t0))
    return;
  ch_name_thread(ch, th);
  THREAD_HEAD(ch, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\"", th, t);
  CO_LIT(&ch->out, ",\"name\":");
  co_str(&ch->out, gt_model_text(ch->model, r));
  CO_LIT(&ch->out, ",\"args\":{\"domain\":");
  co_hex(&ch->out, r->u.nvtx.domain);
  CO_LIT(&ch->out, "}}");
}

/* rng: the range r completed, or NULL. */
static void nvtx(struct chrome *ch, const struct gt_record *r,
                 const struct gt_range *rng) {
  struct ch_thread *th = ch_thread(ch, r->pid, r->tid);
  switch (r->u.nvtx.op) {
  case GT_NVTX_PUSH:
    ch_push(ch, th, r->u.nvtx.domain, ch_rel(ch, r->ts_ns));
    break;
  case GT_NVTX_POP: {
    if (!rng)
      break;
    int64_t s, e, t = ch_rel(ch, rng->end_ns);
    int placed = ch_pop(ch, th, rng->domain, t, &s, &e);
    if (placed != 1) {
      lane_range(ch, rng, t, 0);
    } else if (ch_in_window(ch, ch_rel(ch, rng->start_ns), t)) {
      ch_name_thread(ch, th);
      range_slice(ch, rng, th->tid, s, e, 0);
    }
    break;
  }
  case GT_NVTX_MARK:
    nvtx_mark(ch, r, th);
    break;
  case GT_NVTX_END:
    if (rng)
      lane_range(ch, rng, ch_rel(ch, rng->end_ns), 0);
    break;
  }
}

static void device_slice(struct chrome *ch, const struct gt_record *r, uint32_t tid,
                         int64_t s, int64_t e) {
  const struct gt_device_args *d = &r->u.device;
  const struct ch_name *kernel = NULL;
  if (d->of_kind == GT_KIND_LAUNCH)
    kernel = kernel_json(ch, r->pid, d->kernel, r->flags);
  char *p = co_reserve(&ch->out, CW_ROOM + (kernel ? kernel->len : 0));
  if (ch->events++)
    p = CW_LIT(p, ",\n");
  /* The category of the host call that queued it (the flow arrow joins
   * slices of one category). */
  p = CW_LIT(p, "{\"ph\":\"X\",\"cat\":\"");
  p = cw_ascii(p, gt_kind_name(d->of_kind));
  p = CW_LIT(p, "\",\"pid\":");
  p = cw_u64(p, r->pid);
  p = CW_LIT(p, ",\"tid\":");
  p = cw_u64(p, tid);
  p = CW_LIT(p, ",\"ts\":");
  p = cw_us(p, (uint64_t)s);
  p = CW_LIT(p, ",\"dur\":");
  p = cw_us(p, (uint64_t)(e - s));
  if (kernel) {
    p = CW_LIT(p, ",\"name\":");
    p = cw_put(p, kernel->s, kernel->len);
  } else if (d->of_kind == GT_KIND_MEMCPY) {
    p = CW_LIT(p, ",\"name\":\"memcpy ");
    p = cw_ascii(p, gt_dir_name(d->dir));
    *p++ = '"';
  } else {
    p = CW_LIT(p, ",\"name\":\"memset\"");
  }
  p = CW_LIT(p, ",\"args\":{\"api\":");
  p = cw_api(ch, p, r->api);
  p = cw_fields(p, r);
  p = CW_LIT(p, ",\"host_tid\":");
  p = cw_u64(p, r->tid);
  p = CW_LIT(p, "}}");
  co_commit(&ch->out, p);
}

static void device_work(struct chrome *ch, const struct gt_record *r) {
  const struct gt_device_args *d = &r->u.device;
  struct ch_devtrack *dt = ch_devtrack(ch, r->pid, d->device, d->stream);
  int64_t s = ch_rel(ch, r->ts_ns), e = s + dur_of(r->dur_ns);
  /* DevTools keys a flow's ends by timestamp: work that starts the very ns
   * its host call does (the device clamp) would merge the two ends and lose
   * the arrow. 1 ns later, as it really is — only when it lasts longer than
   * that, so that its end, and so its lane, never moves. */
  int node = (r->flags & GT_F_GRAPH_RUN) != 0; /* a graph node's share (graphs.h) */
  if (d->corr && !node && e > s + 1 &&
      ch_flow_host_ts(ch_thread(ch, r->pid, r->tid), d->corr) == s)
    s++;
  /* A graph's span moved so: its first node, which starts with it, too (it
   * fell out of the span, onto a lane of its own). */
  if (node && s + 1 == dt->graph_s && e <= dt->graph_e) {
    s++;
    if (e < s)
      e = s;
  }
  uint32_t i = node && s >= dt->graph_s && e <= dt->graph_e
                   ? dt->graph_lane /* nested in its graph's span */
                   : ch_lane_pick(ch, &dt->lanes, s, e);
  if (r->flags & GT_F_EXPANDED) {
    dt->graph_lane = i;
    dt->graph_s = s;
    dt->graph_e = e;
  }
  struct ch_lane *lane = &dt->lanes.v[i];
  int in = ch_in_window(ch, s, e);
  if (in) {
    char name[96];
    int n = snprintf(name, sizeof name, "GPU %d stream 0x%" PRIx64, d->device, d->stream);
    if (i > 0)
      snprintf(name + n, sizeof name - (size_t)n, " (overlap %u)", i);
    ch_name_lane(ch, r->pid, lane, name, 2000 + (lane->tid - CH_SYNTH_TID_BASE));
    device_slice(ch, r, lane->tid, s, e);
  }
  if (d->corr && !node) /* the arrow goes to the graph's span */
    ch_flow_device(ch, ch_thread(ch, r->pid, r->tid), d->corr, d->of_kind, lane->tid, s,
                   in);
}

/* Process-wide instants: start, end, drops, losses. */
static void proc_instant(struct chrome *ch, const struct gt_record *r,
                         const char *name_lit, size_t n) {
  ch_name_proc(ch, ch_proc(ch, r->pid));
  HEAD(ch, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"gputrace\"", r->pid, r->pid,
       ch_rel(ch, r->ts_ns));
  CO_LIT(&ch->out, ",\"name\":");
  co_put(&ch->out, name_lit, n);
  CO_LIT(&ch->out, ",\"args\":{");
}

static void process(struct chrome *ch, const struct gt_record *r) {
  struct co_out *o = &ch->out;
  int64_t t = ch_rel(ch, r->ts_ns);
  if (r->u.proc.phase == GT_PROC_START) {
    struct ch_proc *p = ch_proc(ch, r->pid);
    if (p->named == 2)
      p->named = 1; /* an exec: the next event writes the new command line */
    if (!ch_in_window(ch, t, t))
      return;
    proc_instant(ch, r, "\"process start\"", 15);
    CO_LIT(o, "\"cmdline\":");
    co_str(o, gt_model_cmdline(ch->model, r->pid));
    U64_ARG(o, ",\"ppid\":", r->u.proc.ppid);
  } else {
    if (!ch_in_window(ch, t, t))
      return;
    proc_instant(ch, r, "\"process end\"", 13);
    U64_ARG(o, "\"records\":", r->u.proc.records);
    U64_ARG(o, ",\"dropped\":", r->u.proc.dropped);
    U64_ARG(o, ",\"lost\":", r->u.proc.lost);
  }
  CO_LIT(o, "}}");
}

static void drop_or_loss(struct chrome *ch, const struct gt_record *r) {
  struct ch_proc *p = ch_proc(ch, r->pid);
  int drop = r->kind == GT_KIND_DROP;
  uint64_t total =
      drop ? (p->dropped += r->u.count.count) : (p->lost += r->u.count.count);
  int64_t t = ch_rel(ch, r->ts_ns);
  if (!ch_in_window(ch, t, t))
    return;
  if (drop)
    proc_instant(ch, r, "\"dropped records\"", 17);
  else
    proc_instant(ch, r, "\"lost records\"", 14);
  U64_ARG(&ch->out, "\"count\":", r->u.count.count);
  if (drop) {
    CO_LIT(&ch->out, ",\"of_kind\":");
    co_str(&ch->out, gt_kind_name(r->u.count.of_kind));
  }
  CO_LIT(&ch->out, "}}");
  if (drop)
    counter(ch, r->pid, "\"dropped records\"", 17, "\"count\":", 8, total, t);
  else
    counter(ch, r->pid, "\"lost records\"", 14, "\"count\":", 8, total, t);
}

/* NVML readings (METRIC records): counter tracks per device on pid 0,
 * "GPU hardware (NVML)", e.g. "GPU 0 utilization %". */
static const char *const metric_track[] = {
    NULL,
    "utilization %",
    "memory utilization %",
    "memory used bytes",
    "memory total bytes",
    "temperature C",
    "power W",
    "power limit W",
    "SM clock MHz",
    "memory clock MHz",
    "PCIe tx B/s",
    "PCIe rx B/s",
    "slowdown temperature C",
    "clock event reasons",
    "ECC corrected",
    "ECC uncorrected",
    "XID",
    "compute processes",
    NULL, /* per process: in no device track */
};

_Static_assert(sizeof metric_track / sizeof metric_track[0] == GT_METRIC_COUNT,
               "a track (or NULL) per metric");

static void hw_metric(struct chrome *ch, const struct gt_record *r) {
  unsigned m = r->u.metric.metric;
  int64_t t = ch_rel(ch, r->ts_ns);
  if (m == 0 || m >= GT_METRIC_COUNT || !metric_track[m] || !ch_in_window(ch, t, t))
    return;
  struct co_out *o = &ch->out;
  if (!ch->hw_named) {
    ch->hw_named = 1;
    ch_event(ch);
    CO_LIT(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
              "\"args\":{\"name\":\"GPU hardware (NVML)\"}}");
  }
  char buf[96];
  HEAD(ch, "{\"ph\":\"C\"", r->pid, r->pid, t);
  int n = snprintf(buf, sizeof buf, ",\"name\":\"GPU %u %s\",\"args\":{\"value\":%.17g}}",
                   r->u.metric.device, metric_track[m], r->u.metric.value);
  co_put(o, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : 0);
}

void ch_record(struct chrome *ch, const struct gt_record *r, const struct gt_range *rng) {
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
  case GT_KIND_MEMCPY:
  case GT_KIND_MEMSET:
  case GT_KIND_LAUNCH:
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
  case GT_KIND_GRAPH:
    /* a graph's node: drawn on the device only; a graph's making replayed
     * at a rolling file's start: from before the file */
    if (!(r->flags & (GT_F_GRAPH_RUN | GT_F_REPLAYED)))
      host_call(ch, r);
    break;
  case GT_KIND_NVTX:
    nvtx(ch, r, rng);
    break;
  case GT_KIND_PROCESS:
    process(ch, r);
    break;
  case GT_KIND_KERNEL_NAME:
    forget_kernel(ch, r);
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    drop_or_loss(ch, r);
    break;
  case GT_KIND_DEVICE:
    device_work(ch, r);
    break;
  case GT_KIND_METRIC:
    hw_metric(ch, r);
    break;
  default: /* stacks, modules, frames: nothing to draw */
    break;
  }
}

/* Ranges open when the trace ends: shown up to the last thing their thread
 * did (push/pop) or to the end of the trace (start/end), marked unfinished. */
static void open_range(void *ctx, const struct gt_range *rng) {
  struct chrome *ch = ctx;
  if (ch->has_pid && rng->pid != ch->pid)
    return;
  int64_t last = ch_rel(ch, gt_model_totals(ch->model)->last_ns);
  if (rng->depth < 0) {
    lane_range(ch, rng, last, 1);
    return;
  }
  struct ch_thread *th = ch_thread(ch, rng->pid, rng->tid);
  int64_t end = th->floor;
  int k = -1;
  uint32_t at = th->depth;
  for (uint32_t i = 0; i < th->depth; i++) {
    end = end > th->stack[i].max_end ? end : th->stack[i].max_end;
    if (th->stack[i].domain == rng->domain && ++k == rng->depth)
      at = i;
  }
  if (at == th->depth) { /* not on the thread (domains crossed) */
    lane_range(ch, rng, last, 1);
    return;
  }
  /* All of them end together, so they nest: their starts are distinct. */
  if (ch_in_window(ch, ch_rel(ch, rng->start_ns), end)) {
    ch_name_thread(ch, th);
    range_slice(ch, rng, th->tid, th->stack[at].start, end, 1);
  }
}

void ch_finish(struct chrome *ch) {
  gt_model_open_ranges(ch->model, open_range, ch);
}
