/* fields.c — see fields.h. The table below is the one list of what each
 * kind of record carries, as the commands show it. */
#include "fields.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

static const char *phase_name(unsigned p) {
  return p == GT_PROC_START ? "start" : "end";
}

static const char *source_name(unsigned s) {
  return s == GT_DEVTIME_EVENTS ? "events" : s == GT_DEVTIME_CUPTI ? "cupti" : "?";
}

#define AT(m)                                                                            \
  .off = offsetof(struct gt_record, u.m), .size = sizeof(((struct gt_record *)0)->u.m)
#define CH .out = GT_FO_CHROME
#define K(k) .key = k, .key_len = sizeof(k) - 1
#define CORR(m)                                                                          \
  { K("corr"), .type = GT_FT_UINT, AT(m), .out = GT_FO_CHROME | GT_FO_CHROME_NZ }

// clang-format off
/* Work that ran nothing: queued into a capturing stream (corr, or a mem
 * record's capture, holds the capture's id), or a node added to a graph
 * (the stream field holds the graph). Shown only when set. */
#define GRAPH_FLAGS                                                                      \
  {K("captured"), .text = "captured", .type = GT_FT_BOOL, .bit = GT_F_CAPTURED,          \
   .when = GT_F_CAPTURED},                                                               \
  {K("node"), .text = "node", .type = GT_FT_BOOL, .bit = GT_F_NODE, .when = GT_F_NODE}

/* A GRAPH record's field: in JSON always, in the text and chrome's args
 * when not 0. */
#define GRAPH_FIELD(k, t, m)                                                             \
  {K(k), .type = t, AT(graph.m), .out = GT_FO_CHROME | GT_FO_CHROME_NZ},                 \
  {.text = k, .type = t, AT(graph.m), .out = GT_FO_NZ}

static const struct gt_field mem[] = {
    {K("memory"), .text = "", .type = GT_FT_NAME, AT(mem.memory), .name = gt_memory_name, CH},
    {K("ptr"), .text = "ptr", .type = GT_FT_HEX, AT(mem.ptr), CH},
    {K("bytes"), .text = "bytes", .type = GT_FT_UINT, AT(mem.bytes), CH},
    {K("stream"), .type = GT_FT_HEX, AT(mem.stream), .when = GT_F_ASYNC, CH},
    {K("stream"), .text = "graph", .type = GT_FT_HEX, AT(mem.stream), .when = GT_F_NODE, CH},
    {K("capture"), .text = "capture", .type = GT_FT_UINT, AT(mem.capture), .when = GT_F_CAPTURED, CH},
    GRAPH_FLAGS,
    {K("carried"), .text = "carried", .type = GT_FT_BOOL, .bit = GT_F_CARRIED, .when = GT_F_CARRIED},
};
static const struct gt_field copy[] = {
    {K("dir"), .text = "", .type = GT_FT_NAME, AT(copy.dir), .name = gt_dir_name, CH},
    {K("bytes"), .text = "bytes", .type = GT_FT_UINT, AT(copy.bytes), CH},
    {K("pinned"), .text = "pinned", .type = GT_FT_BOOL, .bit = GT_F_PINNED, CH},
    {.text = "pageable", .type = GT_FT_BOOL, .bit = GT_F_PAGEABLE, .unless = GT_F_PINNED},
    {K("stream"), .text = "stream", .type = GT_FT_HEX, AT(copy.stream), CH},
    {K("dst"), .type = GT_FT_HEX, AT(copy.dst)},
    {K("src"), .type = GT_FT_HEX, AT(copy.src)},
    CORR(copy.corr),
    GRAPH_FLAGS,
};
static const struct gt_field set[] = {
    {K("ptr"), .text = "ptr", .type = GT_FT_HEX, AT(set.ptr), CH},
    {K("bytes"), .text = "bytes", .type = GT_FT_UINT, AT(set.bytes), CH},
    {K("value"), .text = "value", .type = GT_FT_INT, AT(set.value)},
    {K("stream"), .type = GT_FT_HEX, AT(set.stream), CH},
    CORR(set.corr),
    GRAPH_FLAGS,
};
static const struct gt_field launch[] = {
    {K("kernel"), .text = "", .type = GT_FT_KERNEL, AT(launch.kernel)},
    {K("grid"), .text = "grid", .type = GT_FT_DIMS, AT(launch.grid), CH},
    {K("block"), .text = "block", .type = GT_FT_DIMS, AT(launch.block), CH},
    {K("shared_mem"), .text = "shmem", .type = GT_FT_UINT, AT(launch.shared_mem), .out = GT_FO_CHROME | GT_FO_CHROME_NZ},
    {K("stream"), .text = "stream", .type = GT_FT_HEX, AT(launch.stream), CH},
    CORR(launch.corr),
    {K("stack_sampled"), .text = "stack_sampled", .type = GT_FT_BOOL, .bit = GT_F_STACK_SAMPLED,
     .when = GT_F_STACK_SAMPLED},
    /* a kernel node's handle, its low 32 bits (added, or its parameters set) */
    {K("node_id"), .text = "node_id", .type = GT_FT_HEX, AT(launch.node), .when = GT_F_NODE, .out = GT_FO_NZ},
    GRAPH_FLAGS,
};
static const struct gt_field graph[] = {
    GRAPH_FIELD("graph", GT_FT_HEX, graph),
    GRAPH_FIELD("exec", GT_FT_HEX, exec),
    GRAPH_FIELD("node", GT_FT_HEX, node),
    GRAPH_FIELD("stream", GT_FT_HEX, stream),
    GRAPH_FIELD("capture", GT_FT_UINT, capture),
    GRAPH_FIELD("arg", GT_FT_HEX, arg),
    GRAPH_FIELD("mode", GT_FT_UINT, mode),
};
static const struct gt_field handle[] = {
    {K("handle"), .text = "handle", .type = GT_FT_HEX, AT(handle.handle), CH},
    {K("handle2"), .type = GT_FT_HEX, AT(handle.handle2), .out = GT_FO_CHROME | GT_FO_NZ},
};
static const struct gt_field nvtx[] = {
    {K("op"), .text = "", .type = GT_FT_NAME, AT(nvtx.op), .name = gt_nvtx_op_name},
    {K("message"), .text = "", .type = GT_FT_TEXT, .out = GT_FO_QUOTE},
    {K("range_id"), .type = GT_FT_UINT, AT(nvtx.range_id)},
    {K("depth"), .text = "depth", .type = GT_FT_INT, AT(nvtx.depth)},
    {K("domain"), .type = GT_FT_HEX, AT(nvtx.domain)},
};
static const struct gt_field proc_start[] = {
    {K("phase"), .text = "", .type = GT_FT_NAME, AT(proc.phase), .name = phase_name},
    {K("ppid"), .text = "ppid", .type = GT_FT_UINT, AT(proc.ppid)},
    {K("cmdline"), .text = "", .type = GT_FT_TEXT, .out = GT_FO_QUOTE},
};
static const struct gt_field proc_end[] = {
    {K("phase"), .text = "", .type = GT_FT_NAME, AT(proc.phase), .name = phase_name},
    {K("ppid"), .type = GT_FT_UINT, AT(proc.ppid)},
    {K("records"), .text = "records", .type = GT_FT_UINT, AT(proc.records)},
    {K("dropped"), .text = "dropped", .type = GT_FT_UINT, AT(proc.dropped)},
    {K("lost"), .text = "lost", .type = GT_FT_UINT, AT(proc.lost)},
    {K("exited"), .type = GT_FT_BOOL, AT(proc.exited)},
};
static const struct gt_field kname[] = {
    {K("id"), .text = "", .type = GT_FT_HEX, AT(kname.kernel)},
    {K("mangled"), .text = "", .type = GT_FT_TEXT},
};
static const struct gt_field count[] = {
    {K("count"), .text = "count", .type = GT_FT_UINT, AT(count.count)},
    {K("of_kind"), .text = "of", .type = GT_FT_NAME, AT(count.of_kind), .name = gt_kind_name},
};
#define DEVICE_TAIL                                                                      \
  {K("stream"), .text = "stream", .type = GT_FT_HEX, AT(device.stream), CH},        \
  {K("corr"), .text = "corr", .type = GT_FT_UINT, AT(device.corr), CH},             \
  {K("sample"), .text = "sample", .type = GT_FT_UINT, AT(device.sample), CH},       \
  {K("source"), .text = "source", .type = GT_FT_NAME, AT(device.source), .name = source_name}, \
  {K("of_kind"), .type = GT_FT_NAME, AT(device.of_kind), .name = gt_kind_name},      \
  {K("device"), .type = GT_FT_INT, AT(device.device), CH},                         \
  {K("node"), .text = "node", .type = GT_FT_UINT, AT(device.node), .out = GT_FO_NZ},     \
  {K("upper_bound"), .text = "upper_bound", .type = GT_FT_BOOL, .bit = GT_F_UPPER_BOUND,   \
   .out = GT_FO_NZ}
static const struct gt_field dev_launch[] = {
    {K("kernel"), .text = "", .type = GT_FT_KERNEL, AT(device.kernel)},
    DEVICE_TAIL,
    {K("wait_ns"), .text = "wait_ns", .type = GT_FT_UINT, AT(device.wait_ns), CH},
};
static const struct gt_field dev_copy[] = {
    {K("dir"), .text = "", .type = GT_FT_NAME, AT(device.dir), .name = gt_dir_name},
    {K("bytes"), .text = "bytes", .type = GT_FT_UINT, AT(device.bytes), CH},
    DEVICE_TAIL,
    {K("pinned"), .type = GT_FT_BOOL, .bit = GT_F_PINNED},
};
static const struct gt_field dev_set[] = {
    {K("bytes"), .text = "bytes", .type = GT_FT_UINT, AT(device.bytes), CH},
    DEVICE_TAIL,
};
static const struct gt_field metric[] = {
    {K("device"), .text = "gpu", .type = GT_FT_UINT, AT(metric.device)},
    {K("metric"), .type = GT_FT_NAME, AT(metric.metric), .name = gt_metric_name},
    {K("value"), .text = "", .type = GT_FT_METRIC, AT(metric.value)},
    {K("unit"), .text = "", .type = GT_FT_NAME, AT(metric.metric), .name = gt_metric_unit},
    {K("of_pid"), .text = "of_pid", .type = GT_FT_UINT, AT(metric.pid), .out = GT_FO_NZ},
};
#define HEAP_AT(m) .off = offsetof(struct gt_record, u.heap.m), .size = 8
static const struct gt_field heap[] = {
    {K("peak_device"), .text = "peak_device", .type = GT_FT_UINT, HEAP_AT(peak[GT_MEM_DEVICE])},
    {K("peak_pinned"), .text = "peak_pinned", .type = GT_FT_UINT, HEAP_AT(peak[GT_MEM_PINNED_HOST]), .out = GT_FO_NZ},
    {K("peak_managed"), .text = "peak_managed", .type = GT_FT_UINT, HEAP_AT(peak[GT_MEM_MANAGED]), .out = GT_FO_NZ},
    {K("peak_resident"), .text = "peak_resident", .type = GT_FT_UINT, HEAP_AT(peak[4])},
    {K("peak_device_ts"), .type = GT_FT_UINT, HEAP_AT(peak_ts_ns[0])},
    {K("peak_resident_ts"), .type = GT_FT_UINT, HEAP_AT(peak_ts_ns[1])},
    {K("carried"), .text = "carried", .type = GT_FT_BOOL, .bit = GT_F_CARRIED, .when = GT_F_CARRIED},
};
#undef HEAP_AT
static const struct gt_field note[] = {
    {K("note"), .text = "", .type = GT_FT_TEXT},
};
static const struct gt_field stack[] = {
    {K("id"), .text = "id", .type = GT_FT_UINT, AT(stack.id)},
    {K("depth"), .text = "depth", .type = GT_FT_UINT, AT(stack.depth)},
    {K("python"), .text = "python", .type = GT_FT_UINT, AT(stack.python)},
    {K("backtrace"), .text = "backtrace", .type = GT_FT_BOOL, .bit = GT_F_UNWIND_FALLBACK,
     .when = GT_F_UNWIND_FALLBACK},
    {K("cut"), .text = "cut", .type = GT_FT_BOOL, .bit = GT_F_STACK_CUT,
     .when = GT_F_STACK_CUT},
    {K("entries"), .type = GT_FT_STACK},
};
static const struct gt_field module[] = {
    {K("start"), .text = "", .type = GT_FT_HEX, AT(module.start)},
    {K("end"), .text = "", .type = GT_FT_HEX, AT(module.end), .sep = '-'},
    {K("bias"), .type = GT_FT_HEX, AT(module.bias)},
    {K("epoch"), .text = "epoch", .type = GT_FT_UINT, AT(module.epoch), .out = GT_FO_NZ},
    {K("path"), .text = "", .type = GT_FT_TEXT},
};
static const struct gt_field pyframe[] = {
    {K("id"), .text = "id", .type = GT_FT_UINT, AT(pyframe.id)},
    {K("line"), .text = "line", .type = GT_FT_UINT, AT(pyframe.line)},
    {K("function"), .text = "", .type = GT_FT_PART, .part = 0},
    {K("file"), .text = "", .type = GT_FT_PART, .part = 1},
};
static const struct gt_field frame[] = {
    {K("ip"), .text = "", .type = GT_FT_HEX, AT(frame.ip)},
    {K("level"), .text = "level", .type = GT_FT_UINT, AT(frame.level)},
    {K("inline_count"), .text = "", .type = GT_FT_UINT, AT(frame.inline_count), .sep = '/'},
    {K("line"), .text = "line", .type = GT_FT_UINT, AT(frame.line)},
    {K("function"), .text = "", .type = GT_FT_PART, .part = 0},
    {K("file"), .text = "", .type = GT_FT_PART, .part = 1},
    {K("module"), .text = "", .type = GT_FT_PART, .part = 2},
};
// clang-format on

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define LIST(a)                                                                          \
  { a, N(a) }

struct list {
  const struct gt_field *f;
  size_t n;
};

const struct gt_field *gt_fields(const struct gt_record *r, size_t *n) {
  static const struct list by_kind[GT_KIND_COUNT] = {
      [GT_KIND_ALLOC] = LIST(mem),         [GT_KIND_FREE] = LIST(mem),
      [GT_KIND_MEMCPY] = LIST(copy),       [GT_KIND_MEMSET] = LIST(set),
      [GT_KIND_LAUNCH] = LIST(launch),     [GT_KIND_SYNC] = LIST(handle),
      [GT_KIND_STREAM] = LIST(handle),     [GT_KIND_EVENT] = LIST(handle),
      [GT_KIND_NVTX] = LIST(nvtx),         [GT_KIND_PROCESS] = LIST(proc_start),
      [GT_KIND_KERNEL_NAME] = LIST(kname), [GT_KIND_DROP] = LIST(count),
      [GT_KIND_LOST] = LIST(count),        [GT_KIND_DEVICE] = LIST(dev_set),
      [GT_KIND_STACK] = LIST(stack),       [GT_KIND_MODULE] = LIST(module),
      [GT_KIND_PYFRAME] = LIST(pyframe),   [GT_KIND_FRAME] = LIST(frame),
      [GT_KIND_METRIC] = LIST(metric),     [GT_KIND_NOTE] = LIST(note),
      [GT_KIND_GRAPH] = LIST(graph),       [GT_KIND_HEAP] = LIST(heap),
  };
  struct list l = gt_kind_in_table(r->kind) ? by_kind[r->kind] : (struct list){NULL, 0};
  if (r->kind == GT_KIND_PROCESS && r->u.proc.phase != GT_PROC_START)
    l = (struct list)LIST(proc_end);
  else if (r->kind == GT_KIND_DEVICE && r->u.device.of_kind == GT_KIND_LAUNCH)
    l = (struct list)LIST(dev_launch);
  else if (r->kind == GT_KIND_DEVICE && r->u.device.of_kind == GT_KIND_MEMCPY)
    l = (struct list)LIST(dev_copy);
  *n = l.n;
  return l.f;
}

/* Part i of "a\x1fb\x1fc" into buf; 0 when the text has no such part. */
static int text_part(const char *text, unsigned i, char *buf, size_t len) {
  const char *s = text;
  for (; i > 0; i--) {
    s = strchr(s, '\x1f');
    if (!s)
      return 0;
    s++;
  }
  size_t n = strcspn(s, "\x1f");
  snprintf(buf, len, "%.*s", (int)n, s);
  return 1;
}

static double field_f64(const struct gt_field *f, const struct gt_record *r) {
  double v;
  memcpy(&v, (const char *)r + f->off, sizeof v);
  return v;
}

static const char *kernel_of(const struct gt_field *f, const struct gt_record *r,
                             struct gt_model *m) {
  return gt_model_kernel_of(m, r->pid, gt_field_uint(f, r), r->flags);
}

/* The value of a text-like field (NULL: not a string, or no such part). */
static const char *string_of(const struct gt_field *f, const struct gt_record *r,
                             struct gt_model *m, char *buf, size_t len) {
  switch (f->type) {
  case GT_FT_NAME:
    return f->name((unsigned)gt_field_uint(f, r));
  case GT_FT_TEXT:
    return gt_model_text(m, r);
  case GT_FT_PART:
    return text_part(gt_model_text(m, r), f->part, buf, len) ? buf : NULL;
  case GT_FT_KERNEL:
    return kernel_of(f, r, m);
  default:
    return NULL;
  }
}

static void dims(FILE *o, const struct gt_field *f, const struct gt_record *r) {
  uint32_t d[3];
  memcpy(d, (const char *)r + f->off, sizeof d);
  fprintf(o, "[%u,%u,%u]", d[0], d[1], d[2]);
}

static void text_value(FILE *o, const struct gt_field *f, const struct gt_record *r,
                       const char *s) {
  if (s) { /* traced text: escaped, so it cannot forge a line (util.h) */
    int quote = (f->out & GT_FO_QUOTE) != 0;
    if (quote)
      fputc('"', o);
    gt_text_escape(o, s, quote);
    if (quote)
      fputc('"', o);
    return;
  }
  switch (f->type) {
  case GT_FT_INT:
    fprintf(o, "%d", gt_field_int(f, r));
    break;
  case GT_FT_HEX:
    fprintf(o, "0x%" PRIx64, gt_field_uint(f, r));
    break;
  case GT_FT_DIMS:
    dims(o, f, r);
    break;
  case GT_FT_METRIC:
    fprintf(o, "%s=%.17g", gt_metric_name(r->u.metric.metric), field_f64(f, r));
    break;
  default:
    fprintf(o, "%" PRIu64, gt_field_uint(f, r));
  }
}

void gt_fields_text(FILE *o, const struct gt_record *r, struct gt_model *m) {
  size_t n;
  const struct gt_field *fs = gt_fields(r, &n);
  for (size_t i = 0; i < n; i++) {
    const struct gt_field *f = &fs[i];
    char buf[GT_TEXT_MAX + 1];
    if (!f->text || !gt_field_shown(f, r))
      continue;
    if (f->type == GT_FT_BOOL) { /* a word when set */
      if (gt_field_bool(f, r))
        fprintf(o, " %s", f->text);
      continue;
    }
    const char *s = string_of(f, r, m, buf, sizeof buf);
    if (f->type == GT_FT_PART && !s)
      continue;
    fputc(f->sep ? f->sep : ' ', o);
    if (f->text[0])
      fprintf(o, "%s=", f->text);
    text_value(o, f, r, s);
  }
}

static void json_stack(FILE *o, const struct gt_record *r) {
  const struct gt_text_slot *slots = (const void *)(r + 1);
  size_t have = (size_t)(r->nslots - 1) * GT_TEXT_PER_SLOT / 8;
  fputc('[', o);
  for (uint32_t i = 0; i < r->u.stack.depth && i < have; i++) {
    uint64_t e;
    memcpy(&e, slots[i * 8 / GT_TEXT_PER_SLOT].text + i * 8 % GT_TEXT_PER_SLOT, 8);
    fprintf(o, "%s\"%s0x%" PRIx64 "\"", i ? "," : "", e & GT_STACK_PYFRAME ? "py:" : "",
            (uint64_t)(e & ~GT_STACK_PYFRAME));
  }
  fputc(']', o);
}

static void json_value(FILE *o, const struct gt_field *f, const struct gt_record *r,
                       struct gt_model *m) {
  char buf[GT_TEXT_MAX + 1];
  const char *s;
  switch (f->type) {
  case GT_FT_HEX:
    fprintf(o, "\"0x%" PRIx64 "\"", gt_field_uint(f, r));
    break;
  case GT_FT_INT:
    fprintf(o, "%d", gt_field_int(f, r));
    break;
  case GT_FT_DIMS:
    dims(o, f, r);
    break;
  case GT_FT_BOOL:
    fputs(gt_field_bool(f, r) ? "true" : "false", o);
    break;
  case GT_FT_METRIC:
    fprintf(o, "%.17g", field_f64(f, r));
    break;
  case GT_FT_STACK:
    json_stack(o, r);
    break;
  case GT_FT_UINT:
    fprintf(o, "%" PRIu64, gt_field_uint(f, r));
    break;
  default:
    s = string_of(f, r, m, buf, sizeof buf);
    gt_json_str(o, s ? s : "");
  }
}

void gt_fields_json(FILE *o, const struct gt_record *r, struct gt_model *m) {
  size_t n;
  const struct gt_field *fs = gt_fields(r, &n);
  for (size_t i = 0; i < n; i++) {
    if (!fs[i].key || !gt_field_shown(&fs[i], r))
      continue;
    fprintf(o, ",\"%s\":", fs[i].key);
    json_value(o, &fs[i], r, m);
  }
}
