/* cmd_dump.c — `gputrace dump FILE [--json] [--summary]`: every record.
 *
 * Text: one line per record, times relative to the first record. --json:
 * JSON Lines, one object per record (fields in docs/cli.md). --summary:
 * counts per kind and per API instead of the records. Frees are matched to
 * their allocation (per process, by pointer) to report bytes and memory;
 * launches carry the demangled kernel name. Exit 0, or 3 when the trace is
 * damaged (what could be read is printed, with warnings on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gputrace/trace_file.h"
#include "model.h"
#include "util.h"

struct dump {
  FILE *out;
  int json;
  int summary;
  uint64_t first_ts;
  struct gt_model *model;
  uint64_t per_kind[GT_KIND_COUNT];
  uint64_t per_api[GT_API_COUNT];
};

/* Stack, module, Python-frame and symbol records. Text fields are
 * "\x1f"-separated in the record; shown as named JSON fields. */
static void json_symbol_fields(struct dump *d, const struct gt_record *r) {
  FILE *o = d->out;
  const char *text = gt_model_text(d->model, r);
  char buf[GT_TEXT_MAX + 1], *fields[3] = {buf, (char *)"", (char *)""};
  snprintf(buf, sizeof buf, "%s", text);
  for (int i = 1; i < 3; i++) {
    char *sep = strchr(fields[i - 1], '\x1f');
    if (!sep)
      break;
    *sep = '\0';
    fields[i] = sep + 1;
  }
  switch (r->kind) {
  case GT_KIND_STACK: {
    fprintf(o, ",\"id\":%u,\"depth\":%u,\"python\":%u,\"entries\":[", r->u.stack.id,
            r->u.stack.depth, r->u.stack.python);
    const struct gt_text_slot *slots = (const void *)(r + 1);
    size_t have = (size_t)(r->nslots - 1) * GT_TEXT_PER_SLOT / 8;
    for (uint32_t i = 0; i < r->u.stack.depth && i < have; i++) {
      uint64_t e;
      memcpy(&e, slots[i * 8 / GT_TEXT_PER_SLOT].text + i * 8 % GT_TEXT_PER_SLOT, 8);
      fprintf(o, "%s\"%s0x%" PRIx64 "\"", i ? "," : "", e & GT_STACK_PYFRAME ? "py:" : "",
              (uint64_t)(e & ~GT_STACK_PYFRAME));
    }
    fputc(']', o);
    break;
  }
  case GT_KIND_MODULE:
    fprintf(o,
            ",\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"bias\":\"0x%" PRIx64
            "\",\"path\":",
            r->u.module.start, r->u.module.end, r->u.module.bias);
    gt_json_str(o, text);
    break;
  case GT_KIND_PYFRAME:
    fprintf(o, ",\"id\":%u,\"line\":%u,\"function\":", r->u.pyframe.id,
            r->u.pyframe.line);
    gt_json_str(o, fields[0]);
    fputs(",\"file\":", o);
    gt_json_str(o, fields[1]);
    break;
  case GT_KIND_FRAME:
    fprintf(o,
            ",\"ip\":\"0x%" PRIx64 "\",\"level\":%u,\"inline_count\":%u,\"line\":%u,"
            "\"function\":",
            r->u.frame.ip, r->u.frame.level, r->u.frame.inline_count, r->u.frame.line);
    gt_json_str(o, fields[0]);
    fputs(",\"file\":", o);
    gt_json_str(o, fields[1]);
    fputs(",\"module\":", o);
    gt_json_str(o, fields[2]);
    break;
  }
}

/* ---- DEVICE records: when a launch, copy or memset ran on the device ---- */

static const char *device_kernel(struct dump *d, const struct gt_record *r) {
  struct gt_record launch = *r; /* the model names launch-shaped records */
  memset(&launch.u, 0, sizeof launch.u);
  launch.u.launch.kernel = r->u.device.kernel;
  return gt_model_kernel(d->model, &launch);
}

static const char *devtime_source(unsigned source) {
  return source == GT_DEVTIME_EVENTS  ? "events"
         : source == GT_DEVTIME_CUPTI ? "cupti"
                                      : "?";
}

static void json_device_fields(struct dump *d, const struct gt_record *r) {
  const struct gt_device_args *a = &r->u.device;
  fprintf(d->out,
          ",\"of_kind\":\"%s\",\"corr\":%u,\"stream\":\"0x%" PRIx64
          "\",\"sample\":%u,\"source\":\"%s\",\"device\":%d",
          gt_kind_name(a->of_kind), a->corr, a->stream, a->sample,
          devtime_source(a->source), a->device);
  if (a->of_kind == GT_KIND_LAUNCH) {
    fputs(",\"kernel\":", d->out);
    gt_json_str(d->out, device_kernel(d, r));
  } else {
    fprintf(d->out, ",\"bytes\":%" PRIu64, a->bytes);
  }
  if (a->of_kind == GT_KIND_MEMCPY)
    fprintf(d->out, ",\"dir\":\"%s\",\"pinned\":%s", gt_dir_name(a->dir),
            r->flags & GT_F_PINNED ? "true" : "false");
}

static void text_device_fields(struct dump *d, const struct gt_record *r) {
  const struct gt_device_args *a = &r->u.device;
  if (a->of_kind == GT_KIND_LAUNCH)
    fprintf(d->out, " %s", device_kernel(d, r));
  else if (a->of_kind == GT_KIND_MEMCPY)
    fprintf(d->out, " %s bytes=%" PRIu64, gt_dir_name(a->dir), a->bytes);
  else
    fprintf(d->out, " bytes=%" PRIu64, a->bytes);
  fprintf(d->out, " stream=0x%" PRIx64 " corr=%u sample=%u source=%s", a->stream, a->corr,
          a->sample, devtime_source(a->source));
}

static void json_fields(struct dump *d, const struct gt_record *r) {
  FILE *o = d->out;
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    fprintf(o, ",\"ptr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ",\"memory\":\"%s\"",
            r->u.mem.ptr, r->u.mem.bytes, gt_memory_name(r->u.mem.memory));
    if (r->flags & GT_F_ASYNC)
      fprintf(o, ",\"stream\":\"0x%" PRIx64 "\"", r->u.mem.stream);
    break;
  case GT_KIND_MEMCPY:
    fprintf(o,
            ",\"bytes\":%" PRIu64 ",\"dir\":\"%s\",\"pinned\":%s,\"stream\":\"0x%" PRIx64
            "\",\"dst\":\"0x%" PRIx64 "\",\"src\":\"0x%" PRIx64 "\"",
            r->u.copy.bytes, gt_dir_name(r->u.copy.dir),
            r->flags & GT_F_PINNED ? "true" : "false", r->u.copy.stream, r->u.copy.dst,
            r->u.copy.src);
    fprintf(o, ",\"corr\":%u", r->u.copy.corr);
    break;
  case GT_KIND_MEMSET:
    fprintf(o,
            ",\"ptr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64
            ",\"value\":%d,\"stream\":\"0x%" PRIx64 "\"",
            r->u.set.ptr, r->u.set.bytes, r->u.set.value, r->u.set.stream);
    fprintf(o, ",\"corr\":%u", r->u.set.corr);
    break;
  case GT_KIND_LAUNCH:
    fputs(",\"kernel\":", o);
    gt_json_str(o, gt_model_kernel(d->model, r));
    fprintf(o,
            ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_mem\":%" PRIu64
            ",\"stream\":\"0x%" PRIx64 "\"",
            r->u.launch.grid[0], r->u.launch.grid[1], r->u.launch.grid[2],
            r->u.launch.block[0], r->u.launch.block[1], r->u.launch.block[2],
            r->u.launch.shared_mem, r->u.launch.stream);
    fprintf(o, ",\"corr\":%u", r->u.launch.corr);
    break;
  case GT_KIND_DEVICE:
    json_device_fields(d, r);
    break;
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
    fprintf(o, ",\"handle\":\"0x%" PRIx64 "\"", r->u.handle.handle);
    if (r->u.handle.handle2)
      fprintf(o, ",\"handle2\":\"0x%" PRIx64 "\"", r->u.handle.handle2);
    break;
  case GT_KIND_NVTX:
    fprintf(o, ",\"op\":\"%s\",\"message\":", gt_nvtx_op_name(r->u.nvtx.op));
    gt_json_str(o, gt_model_text(d->model, r));
    fprintf(o, ",\"range_id\":%" PRIu64 ",\"depth\":%d,\"domain\":\"0x%" PRIx64 "\"",
            r->u.nvtx.range_id, r->u.nvtx.depth, r->u.nvtx.domain);
    break;
  case GT_KIND_PROCESS:
    fprintf(o, ",\"phase\":\"%s\",\"ppid\":%u",
            r->u.proc.phase == GT_PROC_START ? "start" : "end", r->u.proc.ppid);
    if (r->u.proc.phase == GT_PROC_START) {
      fputs(",\"cmdline\":", o);
      gt_json_str(o, gt_model_text(d->model, r));
    } else {
      fprintf(o,
              ",\"records\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"lost\":%" PRIu64
              ",\"exited\":%s",
              r->u.proc.records, r->u.proc.dropped, r->u.proc.lost,
              r->u.proc.exited ? "true" : "false");
    }
    break;
  case GT_KIND_KERNEL_NAME:
    fprintf(o, ",\"id\":\"0x%" PRIx64 "\",\"mangled\":", r->u.kname.kernel);
    gt_json_str(o, gt_model_text(d->model, r));
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    fprintf(o, ",\"count\":%" PRIu64 ",\"of_kind\":\"%s\"", r->u.count.count,
            gt_kind_name(r->u.count.of_kind));
    break;
  case GT_KIND_METRIC:
    fprintf(o, ",\"device\":%u,\"metric\":\"%s\",\"value\":%.17g,\"unit\":\"%s\"",
            r->u.metric.device, gt_metric_name(r->u.metric.metric), r->u.metric.value,
            gt_metric_unit(r->u.metric.metric));
    break;
  case GT_KIND_NOTE:
    fputs(",\"note\":", o);
    gt_json_str(o, gt_model_text(d->model, r));
    break;
  default:
    json_symbol_fields(d, r);
    break;
  }
}

static void print_json(struct dump *d, const struct gt_record *r) {
  fprintf(d->out,
          "{\"pid\":%u,\"tid\":%u,\"ts_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64
          ",\"kind\":\"%s\",\"api\":\"%s\",\"result\":%d",
          r->pid, r->tid, r->ts_ns, r->dur_ns, gt_kind_name(r->kind), gt_api_name(r->api),
          r->result);
  if (r->result != 0 && r->kind < GT_KIND_PROCESS)
    fprintf(d->out, ",\"error\":\"%s\"", gt_cuda_error_name(r->result));
  json_fields(d, r);
  if (r->stack_id)
    fprintf(d->out, ",\"stack_id\":%u", r->stack_id);
  fputs("}\n", d->out);
}

static void text_fields(struct dump *d, const struct gt_record *r) {
  FILE *o = d->out;
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    fprintf(o, " %s ptr=0x%" PRIx64 " bytes=%" PRIu64, gt_memory_name(r->u.mem.memory),
            r->u.mem.ptr, r->u.mem.bytes);
    break;
  case GT_KIND_MEMCPY:
    fprintf(o, " %s bytes=%" PRIu64 "%s stream=0x%" PRIx64, gt_dir_name(r->u.copy.dir),
            r->u.copy.bytes,
            r->flags & GT_F_PINNED     ? " pinned"
            : r->flags & GT_F_PAGEABLE ? " pageable"
                                       : "",
            r->u.copy.stream);
    break;
  case GT_KIND_MEMSET:
    fprintf(o, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " value=%d", r->u.set.ptr,
            r->u.set.bytes, r->u.set.value);
    break;
  case GT_KIND_LAUNCH:
    fprintf(o, " %s grid=[%u,%u,%u] block=[%u,%u,%u] shmem=%" PRIu64 " stream=0x%" PRIx64,
            gt_model_kernel(d->model, r), r->u.launch.grid[0], r->u.launch.grid[1],
            r->u.launch.grid[2], r->u.launch.block[0], r->u.launch.block[1],
            r->u.launch.block[2], r->u.launch.shared_mem, r->u.launch.stream);
    break;
  case GT_KIND_DEVICE:
    text_device_fields(d, r);
    break;
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
    fprintf(o, " handle=0x%" PRIx64, r->u.handle.handle);
    break;
  case GT_KIND_NVTX:
    fprintf(o, " %s \"%s\" depth=%d", gt_nvtx_op_name(r->u.nvtx.op),
            gt_model_text(d->model, r), r->u.nvtx.depth);
    break;
  case GT_KIND_PROCESS:
    if (r->u.proc.phase == GT_PROC_START)
      fprintf(o, " start ppid=%u \"%s\"", r->u.proc.ppid, gt_model_text(d->model, r));
    else
      fprintf(o, " end records=%" PRIu64 " dropped=%" PRIu64 " lost=%" PRIu64,
              r->u.proc.records, r->u.proc.dropped, r->u.proc.lost);
    break;
  case GT_KIND_KERNEL_NAME:
    fprintf(o, " 0x%" PRIx64 " %s", r->u.kname.kernel, gt_model_text(d->model, r));
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    fprintf(o, " count=%" PRIu64 " of=%s", r->u.count.count,
            gt_kind_name(r->u.count.of_kind));
    break;
  case GT_KIND_METRIC:
    fprintf(o, " gpu=%u %s=%.17g %s", r->u.metric.device,
            gt_metric_name(r->u.metric.metric), r->u.metric.value,
            gt_metric_unit(r->u.metric.metric));
    break;
  case GT_KIND_NOTE:
    fprintf(o, " %s", gt_model_text(d->model, r));
    break;
  case GT_KIND_STACK:
    fprintf(o, " id=%u depth=%u python=%u", r->u.stack.id, r->u.stack.depth,
            r->u.stack.python);
    break;
  case GT_KIND_MODULE:
    fprintf(o, " 0x%" PRIx64 "-0x%" PRIx64 " %s", r->u.module.start, r->u.module.end,
            gt_model_text(d->model, r));
    break;
  case GT_KIND_PYFRAME:
  case GT_KIND_FRAME: {
    char buf[GT_TEXT_MAX + 1];
    snprintf(buf, sizeof buf, "%s", gt_model_text(d->model, r));
    for (char *p = buf; *p; p++)
      *p = *p == '\x1f' ? ' ' : *p;
    if (r->kind == GT_KIND_FRAME)
      fprintf(o, " 0x%" PRIx64 " level=%u/%u line=%u %s", r->u.frame.ip, r->u.frame.level,
              r->u.frame.inline_count, r->u.frame.line, buf);
    else
      fprintf(o, " id=%u line=%u %s", r->u.pyframe.id, r->u.pyframe.line, buf);
    break;
  }
  }
  if (r->stack_id)
    fprintf(o, " stack=%u", r->stack_id);
}

static void print_text(struct dump *d, const struct gt_record *r) {
  int64_t rel = (int64_t)(r->ts_ns - d->first_ts);
  fprintf(d->out, "%+.9f pid=%u tid=%u %-7s %s dur=%.3fus", (double)rel / 1e9, r->pid,
          r->tid, gt_kind_name(r->kind), gt_api_name(r->api), (double)r->dur_ns / 1e3);
  if (r->result != 0 && r->kind < GT_KIND_PROCESS)
    fprintf(d->out, " result=%d(%s)", r->result, gt_cuda_error_name(r->result));
  text_fields(d, r);
  fputc('\n', d->out);
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
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (gt_streq(argv[i], "--json"))
      d.json = 1;
    else if (gt_streq(argv[i], "--summary"))
      d.summary = 1;
    else if (gt_streq(argv[i], "-h") || gt_streq(argv[i], "--help"))
      return gt_usage_ok("dump FILE [--json | --summary]");
    else if (argv[i][0] == '-' || path)
      return gt_usage_error("dump", argv[i], "dump FILE [--json | --summary]");
    else
      path = argv[i];
  }
  if (!path)
    return gt_usage_error("dump", NULL, "dump FILE [--json | --summary]");
  char err[512];
  struct gt_reader *rd = gt_reader_open(path, err, sizeof err);
  if (!rd) {
    fprintf(stderr, "gputrace dump: %s\n", err);
    return 2;
  }
  d.model = gt_model_new();
  const struct gt_record *rec;
  struct gt_record buf[GT_MAX_SLOTS];
  struct gt_range range;
  while (gt_reader_next(rd, &rec) == 1) {
    memcpy(buf, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
    if (!d.first_ts)
      d.first_ts = buf[0].ts_ns;
    gt_model_feed(d.model, &buf[0], &range);
    d.per_kind[buf[0].kind]++;
    if (buf[0].kind != GT_KIND_DEVICE) /* it carries its host call's api */
      d.per_api[buf[0].api]++;
    if (d.summary)
      continue;
    if (d.json)
      print_json(&d, &buf[0]);
    else
      print_text(&d, &buf[0]);
  }
  if (d.summary)
    print_summary(&d);
  int damaged = gt_reader_warnings(rd) > 0;
  gt_reader_close(rd);
  gt_model_free(d.model);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("gputrace dump: writing output");
    return 2;
  }
  return damaged ? 3 : 0;
}
