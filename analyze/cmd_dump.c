/* cmd_dump.c — `gputrace dump FILE [--json | --summary] [--time-order]`:
 * every record.
 *
 * Text: one line per record, times relative to the session's origin (the
 * first record in the file); the traced process's text escaped
 * (gt_text_escape: no control byte, no forged line). --json: JSON Lines, one object per
 * record (fields in docs/cli.md, from fields.c). --summary: counts per kind and per API
 * instead of the records. Records come in file order (what the collector wrote, as it
 * wrote it), or in time order with --time-order. Frees show the bytes and memory of the
 * allocation they matched; launches the demangled kernel name. Exit 0, or 3 when the
 * trace is damaged (what could be read is printed, with warnings on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fields.h"
#include "notices.h"
#include "progress.h"
#include "session.h"
#include "shared_options.h"
#include "util.h"

struct dump {
  FILE *out;
  int json, summary;
  struct gt_session *session;
  struct gt_model *model;
  uint64_t per_kind[GT_KIND_COUNT];
  uint64_t per_api[GT_API_COUNT];
};

static void print_json(struct dump *d, const struct gt_record *r) {
  fprintf(d->out,
          "{\"schema_version\":%d,\"pid\":%u,\"tid\":%u,\"ts_ns\":%" PRIu64
          ",\"dur_ns\":%" PRIu64 ",\"kind\":\"%s\",\"api\":\"%s\",\"result\":%d",
          GT_JSON_SCHEMA_VERSION, r->pid, r->tid, r->ts_ns, r->dur_ns,
          gt_kind_name(r->kind), gt_api_name(r->api), r->result);
  if (r->result != 0 && gt_kind_is_call(r->kind))
    fprintf(d->out, ",\"error\":\"%s\"", gt_cuda_error_name(r->result));
  gt_fields_json(d->out, r, d->model);
  if (r->stack_id)
    fprintf(d->out, ",\"stack_id\":%u", r->stack_id);
  if (r->flags &
      GT_F_REPLAYED) /* repeated from before the file (a set's, a snapshot's) */
    fputs(",\"replayed\":true", d->out);
  fputs("}\n", d->out);
}

static void print_text(struct dump *d, const struct gt_record *r) {
  int64_t rel = (int64_t)(r->ts_ns - gt_session_origin(d->session));
  fprintf(d->out, "%+.9f pid=%u tid=%u %-7s %s dur=%.3fus", (double)rel / 1e9, r->pid,
          r->tid, gt_kind_name(r->kind), gt_api_name(r->api), (double)r->dur_ns / 1e3);
  if (r->result != 0 && gt_kind_is_call(r->kind))
    fprintf(d->out, " result=%d(%s)", r->result, gt_cuda_error_name(r->result));
  gt_fields_text(d->out, r, d->model);
  if (r->stack_id)
    fprintf(d->out, " stack=%u", r->stack_id);
  fputc('\n', d->out);
}

static void on_record(void *ctx, const struct gt_event *ev) {
  struct dump *d = ctx;
  struct gt_record scratch;
  const struct gt_record *r = gt_event_record(ev, &scratch);
  d->per_kind[r->kind]++;
  if (r->kind != GT_KIND_DEVICE) /* it carries its host call's api */
    d->per_api[r->api]++;
  if (d->summary)
    return;
  if (d->json)
    print_json(d, r);
  else
    print_text(d, r);
}

static void print_summary(struct dump *d) {
  const struct gt_model_totals *t = gt_model_totals(d->model);
  fprintf(d->out,
          "records: %" PRIu64 "  processes: %" PRIu64 "  dropped: %" PRIu64
          "  lost: %" PRIu64 "\n",
          t->records, t->processes, t->dropped, t->lost);
  fprintf(d->out, "by kind:\n");
  for (unsigned k = 1; k < GT_KIND_COUNT; k++)
    if (d->per_kind[k])
      fprintf(d->out, "  %-12s %10" PRIu64 "\n", gt_kind_name(k), d->per_kind[k]);
  fprintf(d->out, "by api:\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++)
    if (d->per_api[a])
      fprintf(d->out, "  %-34s %10" PRIu64 "\n", gt_api_name(a), d->per_api[a]);
  /* One line: dropped DEVICE records are device work that went untimed
   * (docs/devtime.md) or found the ring full. */
  const char *sep = "dropped by kind: ";
  for (unsigned k = 0; k < GT_KIND_COUNT; k++)
    if (t->dropped_by_kind[k]) {
      fprintf(d->out, "%s%s %" PRIu64, sep, gt_kind_name(k), t->dropped_by_kind[k]);
      sep = ", ";
    }
  if (sep[0] == ',')
    fputc('\n', d->out);
}

int cmd_dump(int argc, char **argv) {
  struct dump d = {.out = stdout};
  struct gt_session_opts o = {.layers = GT_LAYER_HEAP, .threads = -1};
  int time_order = 0, nargs;
  const struct gt_option options[] = {
      GT_OPT_JSON(&d.json),
      {.name = "summary",
       .type = GT_OPTION_FLAG,
       .help = "counts per kind and per API instead of the records",
       .value = GT_OPT_VALUE_PTR(&d.summary, int),
       .excludes = "json"},
      GT_OPT_FLAG(0, "time-order", &time_order, "records in time order, not file order"),
      GT_OPT_NO_WAIT(&o.no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd =
      GT_TRACE_COMMAND("dump", options, "every record of the trace, one a line");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  o.path = argv[0];
  o.ordered = time_order ? GT_ORDER_ALL : 0;
  char err[512];
  struct gt_progress pg;
  gt_progress_watch(&pg, "gputrace dump", 1, &o);
  if (!(d.session = gt_session_open(&o, err, sizeof err))) {
    fprintf(stderr, "gputrace dump: %s\n", err);
    return 2;
  }
  d.model = gt_session_model(d.session);
  struct gt_tool tool = {.ctx = &d};
  gt_tool_all(&tool, on_record);
  gt_session_run(d.session, &tool);
  gt_progress_done(&pg);
  gt_notice_no_cuda("gputrace dump", o.path, d.session); /* stderr: records stay clean */
  if (d.summary)
    print_summary(&d);
  int damaged = gt_session_damaged(d.session);
  gt_session_close(d.session);
  return gt_exit_status("gputrace dump", damaged, 0);
}
