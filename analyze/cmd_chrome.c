/* cmd_chrome.c — `gputrace chrome FILE [-o OUT] [--pid P] [--from T] [--to T]`:
 * the trace as Chrome Trace Event Format JSON, for ui.perfetto.dev and
 * chrome://tracing.
 *
 * Contract (docs/cli.md, `chrome`, is the user's version):
 *  - Output: {"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}
 *    (metadata begins with "schema_version", GT_JSON_SCHEMA_VERSION),
 *    timestamps in microseconds from the trace start with three decimals
 *    (nanoseconds survive), integer pids and tids. Default OUT: FILE with
 *    .gtrace replaced by .json; "-" is stdout; a name ending in .gz is
 *    written gzip-compressed.
 *  - One pass over the trace, constant memory (see chrome.h), events
 *    written as records are read; the event shapes are in chrome_events.c.
 *  - Exit 0; 2 for bad usage, an unreadable trace or an unwritable output
 *    (the message names the path; the output is checked before any work);
 *    3 when the trace is damaged (what could be read is exported, as valid
 *    JSON, with a warning per problem on stderr).
 *  - A warning on stderr, with the remedy, when the JSON will be (estimated
 *    from the record count up front) or has become larger than --warn-mb
 *    (default 800 MB): the Perfetto UI fails to load JSON from about 900 MB.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome.h"
#include "commands.h"
#include "notices.h"
#include "progress.h"
#include "session.h"
#include "shared_options.h"
#include "util.h"

#define CH_GZIP_LEVEL 1 /* enough for this JSON (docs/PERFORMANCE.md, Chrome export) */
/* JSON bytes per trace record, for the up-front size estimate: the
 * figure with device work (a DEVICE record adds a slice and a flow), on
 * bench/gen_trace.c's mix (docs/PERFORMANCE.md, Figures moved out of code
 * comments). The chunk headers count records, not kinds, so the estimate
 * takes the larger: too much on host-only traces, never much too little. */
#define CH_BYTES_PER_RECORD 290u

struct chrome_opts {
  const char *in, *out;
  char *out_owned;
  int force; /* overwrite an existing OUT of ours (gputrace/outfile.h) */
  int has_pid;
  uint32_t pid;
  uint64_t from, to; /* ns, at most INT64_MAX; to INT64_MAX: the end */
  uint64_t warn_mb;
  int no_wait;
};

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse_opts(int argc, char **argv, struct chrome_opts *op) {
  *op = (struct chrome_opts){.to = INT64_MAX, .warn_mb = 800};
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&op->out, "OUT",
                    "OUT.json, OUT.json.gz or - (default: FILE's .json)"),
      GT_OPT_FORCE(&op->force),
      GT_OPT_PID(&op->pid, &op->has_pid),
      GT_OPT_FROM(&op->from),
      GT_OPT_TO(&op->to),
      {.name = "warn-mb",
       .type = GT_OPTION_UINT64,
       .arg = "N",
       .help = "warn past N MB of JSON (default 800; 0: never)",
       .value = GT_OPT_VALUE_PTR(&op->warn_mb, uint64_t),
       .max = UINT64_MAX / 1000000},
      GT_OPT_NO_WAIT(&op->no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd =
      GT_TRACE_COMMAND("chrome", options, "the trace as JSON for ui.perfetto.dev");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  op->in = argv[0];
  op->from = op->from > INT64_MAX ? INT64_MAX : op->from; /* past 292 years: the end */
  op->to = op->to > INT64_MAX ? INT64_MAX : op->to;
  if (op->from > op->to) {
    fprintf(stderr, "gputrace chrome: --from is after --to\n");
    return 2;
  }
  if (!op->out) { /* run.gtrace -> run.json, anything else -> NAME.json */
    size_t n = strlen(op->in), keep = n;
    if (n > 7 && !strcmp(op->in + n - 7, ".gtrace"))
      keep = n - 7;
    if (!(op->out_owned = malloc(keep + 6)))
      return 2;
    memcpy(op->out_owned, op->in, keep);
    memcpy(op->out_owned + keep, ".json", 6);
    op->out = op->out_owned;
  }
  return GT_OPTIONS_RUN;
}

static const char remedy[] =
    "the Perfetto UI (ui.perfetto.dev) runs out of memory on JSON traces from about "
    "900 MB, chrome://tracing sooner; export a time window (--from 10s --to 12s) or one "
    "process (--pid P), or both";

static void warn_output(void *ctx, uint64_t bytes) {
  const struct chrome_opts *op = ctx;
  fprintf(stderr, "gputrace chrome: warning: %s has passed %" PRIu64 " MB of JSON: %s\n",
          op->out, bytes / 1000000, remedy);
}

static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

static void footer(struct chrome *ch, const struct chrome_opts *op,
                   struct gt_session *s) {
  struct co_out *o = &ch->out;
  const struct gt_model_totals *t = gt_model_totals(ch->model);
  const struct gt_file_header *h = gt_session_header(s);
  CO_LIT(o, "\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":{\"schema_version\":");
  co_u64(o, GT_JSON_SCHEMA_VERSION);
  CO_LIT(o, ",\"tool\":\"gputrace chrome\"");
  CO_LIT(o, ",\"trace\":");
  co_str(o, op->in);
  CO_LIT(o, ",\"trace_start_ns\":");
  co_u64(o, ch->base_ns);
  CO_LIT(o, ",\"trace_start_realtime_ns\":");
  co_i64(o, (int64_t)h->realtime_ns + ((int64_t)ch->base_ns - (int64_t)h->monotonic_ns));
  uint64_t values[] = {t->records,     t->processes, t->dropped,  t->lost,     ch->events,
                       ch->flows_done, ch->adjusted, ch->clamped, ch->overflow};
  static const char *const keys[] = {
      "records", "processes",       "dropped", "lost",           "events",
      "flows",   "adjusted_slices", "clamped", "overflow_slices"};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    CO_LIT(o, ",\"");
    co_put(o, keys[i], strlen(keys[i]));
    CO_LIT(o, "\":");
    co_u64(o, values[i]);
  }
  if (op->has_pid) {
    CO_LIT(o, ",\"pid\":");
    co_u64(o, op->pid);
  }
  CO_LIT(o, ",\"from_us\":");
  co_us(o, (uint64_t)op->from);
  if (op->to != INT64_MAX) {
    CO_LIT(o, ",\"to_us\":");
    co_us(o, (uint64_t)op->to);
  }
  if (gt_session_damaged(s))
    CO_LIT(o, ",\"damaged\":true");
  CO_LIT(o, "}}\n");
}

/* Before the layers see a record: a process's first record in the window
 * primes its memory counters at the level they had before it. */
static void before(void *ctx, const struct gt_event *ev) {
  struct chrome *ch = ctx;
  const struct gt_record *r = ev->rec;
  ch->base_ns = gt_session_origin(ch->session);
  if (ch->from > 0 && (!ch->has_pid || r->pid == ch->pid) && gt_kind_is_call(r->kind) &&
      r->ts_ns >= ch->base_ns &&
      (int64_t)(r->ts_ns - ch->base_ns + r->dur_ns) >= ch->from)
    ch_prime(ch, r);
}

/* Every record the export holds (all, or the --pid process's). */
static void on_record(void *ctx, const struct gt_event *ev) {
  struct chrome *ch = ctx;
  struct gt_record scratch;
  if (ch->has_pid && ev->rec->pid != ch->pid)
    return;
  ch->base_ns = gt_session_origin(ch->session);
  ch_record(ch, gt_event_record(ev, &scratch), ev->range);
  ch->exported++;
}

static int finish(struct chrome_opts *op, int rc) {
  free(op->out_owned);
  return rc;
}

static int open_output(struct chrome *ch, const struct chrome_opts *op) {
  char err[512];
  if (strcmp(op->out, "-") && same_file(op->in, op->out)) {
    fprintf(stderr, "gputrace chrome: %s: the output would overwrite the trace\n",
            op->out);
    return -1;
  }
  if (co_open(&ch->out, op->out, op->force, CH_GZIP_LEVEL, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace chrome: %s\n", err);
    return -1;
  }
  return 0;
}

/* The closing line: what was written, and where to look at it. */
static void say_written(const char *path, uint64_t events) {
  struct stat st;
  if (stat(path, &st) == 0)
    fprintf(stderr,
            "gputrace chrome: wrote %s (%.1f MB, %" PRIu64
            " events): open it in https://ui.perfetto.dev\n",
            path, (double)st.st_size / 1e6, events);
}

/* The size warning: up front from the chunk headers, else while writing. */
static void size_warning(struct chrome *ch, struct chrome_opts *op) {
  uint64_t warn = op->warn_mb * 1000000,
           estimate = gt_session_records_hint(ch->session) * CH_BYTES_PER_RECORD;
  int filtered = op->has_pid || op->from > 0 || op->to != INT64_MAX;
  if (warn && estimate > warn && !filtered)
    fprintf(stderr,
            "gputrace chrome: warning: %s holds %" PRIu64 " records: up to about %" PRIu64
            " MB of JSON: %s\n",
            op->in, estimate / CH_BYTES_PER_RECORD, estimate / 1000000, remedy);
  else /* told once is enough */
    ch->out.warn_bytes = warn, ch->out.on_warn = warn_output, ch->out.warn_ctx = op;
}

int cmd_chrome(int argc, char **argv) {
  struct chrome_opts op;
  int rc = parse_opts(argc, argv, &op);
  if (rc != GT_OPTIONS_RUN)
    return finish(&op, rc);
  char err[512];
  struct gt_session_opts so = {.path = op.in,
                               .layers = GT_LAYER_HEAP | GT_LAYER_NVTX | GT_LAYER_GRAPHS,
                               .ordered = GT_ORDER_ALL,
                               .threads = -1,
                               .no_wait = op.no_wait};
  struct gt_progress pg;
  gt_progress_watch(&pg, "gputrace chrome", strcmp(op.out, "-") == 0, &so);
  struct gt_session *s = gt_session_open(&so, err, sizeof err);
  if (!s) {
    fprintf(stderr, "gputrace chrome: %s\n", err);
    return finish(&op, 2);
  }
  struct chrome ch = {.has_pid = op.has_pid, .pid = op.pid, .session = s};
  if (open_output(&ch, &op) != 0) {
    gt_session_close(s);
    return finish(&op, 2);
  }
  ch_init(&ch);
  ch.from = (int64_t)op.from, ch.to = (int64_t)op.to;
  ch.model = gt_session_model(s);
  size_warning(&ch, &op);
  CO_LIT(&ch.out, "{\"traceEvents\":[\n");
  struct gt_tool tool = {.ctx = &ch, .before = before};
  gt_tool_all(&tool, on_record);
  gt_session_run(s, &tool);
  gt_progress_done(&pg);
  ch_finish(&ch);
  gt_notice_no_cuda("gputrace chrome", op.in, s);
  const struct gt_filter f = {op.has_pid, op.pid, op.from,
                              op.to == INT64_MAX ? UINT64_MAX : op.to};
  if (gt_notice_filter("gputrace chrome", op.in, s, &f)) {
    gt_session_close(s);
    ch_free(&ch);
    int regular = ch.out.is_regular;
    co_close(&ch.out);
    if (regular) /* nothing was asked for that it could hold */
      unlink(op.out);
    return finish(&op, 2);
  }
  footer(&ch, &op, s);
  int damaged = gt_session_damaged(s);
  uint64_t events = ch.events;
  gt_session_close(s);
  ch_free(&ch);
  int regular = ch.out.is_regular;
  if (co_close(&ch.out) != 0) {
    fprintf(stderr, "gputrace chrome: writing %s: %s\n", op.out,
            ch.out.error == -1 ? "compression failed" : strerror(ch.out.error));
    if (regular) /* a cut JSON file only fails later, in the viewer */
      unlink(op.out);
    return finish(&op, 2);
  }
  if (regular)
    say_written(op.out, events);
  return finish(&op, damaged ? 3 : 0);
}
