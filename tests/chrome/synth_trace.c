/* synth_trace.c — chrome_synth_trace OUT.gtrace < SCRIPT: write a trace
 * record by record from a text script, for tests that need exact, unusual
 * or not-yet-produced records (DEVICE records, equal timestamps, crossing
 * clocks, failed calls, drops) — see tests/e2e/test_chrome.py.
 *
 * Script: one record per line, "KIND key=value ...", '#' starts a comment.
 * KIND is a kind name (alloc free memcpy memset launch sync stream event
 * nvtx process kernel_name drop lost device graph). Keys: ts dur pid tid
 * api result flags; ptr bytes stream memory dst src dir corr value kernel
 * grid block (x,y,z) shared_mem handle handle2; graph exec node capture
 * arg mode (graph: give its api); op (push pop mark start end)
 * range_id domain depth; ppid phase (start end); count of_kind; device
 * sample source; and text=... (the rest of the line). Numbers are decimal
 * or 0x hex; api, op, phase, of_kind also take names. Unset fields are 0;
 * pid and tid default to 100, api to the kind's usual entry point.
 * Exit 0, or 2 with the line number of a line it cannot parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_file.h"

static int lookup(const char *s, const char *(*name)(unsigned), unsigned n,
                  unsigned *out) {
  for (unsigned i = 0; i < n; i++)
    if (!strcmp(s, name(i))) {
      *out = i;
      return 0;
    }
  return -1;
}

static int number(const char *s, unsigned long long *v) {
  char *end;
  *v = strtoull(s, &end, 0);
  if (s[0] == '-')
    *v = (unsigned long long)strtoll(s, &end, 0);
  return end != s && *end == '\0' ? 0 : -1;
}

static int dims(const char *s, uint32_t d[3]) {
  return sscanf(s, "%u,%u,%u", &d[0], &d[1], &d[2]) == 3 ? 0 : -1;
}

static const char *op_name(unsigned op) {
  return gt_nvtx_op_name(op);
}
static const char *phase_name(unsigned p) {
  return p == 1 ? "start" : p == 2 ? "end" : "?";
}

static unsigned default_api(unsigned kind, unsigned op) {
  static const unsigned apis[] = {GT_API_none,
                                  GT_API_cudaMalloc,
                                  GT_API_cudaFree,
                                  GT_API_cudaMemcpy,
                                  GT_API_cudaMemset,
                                  GT_API___cudaLaunchKernel,
                                  GT_API_cudaDeviceSynchronize,
                                  GT_API_cudaStreamCreate,
                                  GT_API_cudaEventRecord};
  static const unsigned nvtx[] = {
      GT_API_none,      GT_API_nvtxRangePushA,  GT_API_nvtxRangePop,
      GT_API_nvtxMarkA, GT_API_nvtxRangeStartA, GT_API_nvtxRangeEnd};
  if (kind < sizeof apis / sizeof apis[0])
    return apis[kind];
  switch (kind) {
  case GT_KIND_NVTX:
    return op < 6 ? nvtx[op] : GT_API_none;
  case GT_KIND_PROCESS:
    return GT_API_gputrace_process;
  case GT_KIND_KERNEL_NAME:
    return GT_API_gputrace_kernel_name;
  case GT_KIND_DROP:
    return GT_API_gputrace_drop;
  case GT_KIND_LOST:
    return GT_API_gputrace_lost;
  default:
    return GT_API___cudaLaunchKernel; /* device */
  }
}

/* Set one field; the union member depends on the kind. */
static int field(struct gt_record *r, const char *k, const char *v) {
  unsigned long long n = 0;
  unsigned u;
  int is_num = number(v, &n) == 0;
  int kind = r->kind;
  if (!strcmp(k, "api"))
    return lookup(v, gt_api_name, GT_API_COUNT, &u) ? -1 : (r->api = (uint16_t)u, 0);
  if (!strcmp(k, "op"))
    return lookup(v, op_name, 6, &u) ? -1 : (r->u.nvtx.op = u, 0);
  if (!strcmp(k, "phase"))
    return lookup(v, phase_name, 3, &u) ? -1 : (r->u.proc.phase = u, 0);
  if (!strcmp(k, "of_kind")) {
    if (lookup(v, gt_kind_name, GT_KIND_COUNT, &u))
      return -1;
    if (kind == GT_KIND_DEVICE)
      r->u.device.of_kind = (uint8_t)u;
    else
      r->u.count.of_kind = u;
    return 0;
  }
  if (!strcmp(k, "grid") || !strcmp(k, "block"))
    return dims(v, k[0] == 'g' ? r->u.launch.grid : r->u.launch.block);
  if (!is_num)
    return -1;
#define F(name, lvalue)                                                                  \
  if (!strcmp(k, name)) {                                                                \
    lvalue = (__typeof__(lvalue))n;                                                      \
    return 0;                                                                            \
  }
  F("ts", r->ts_ns) F("dur", r->dur_ns) F("pid", r->pid) F("tid", r->tid);
  F("result", r->result) F("flags", r->flags);
  switch (kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    F("ptr", r->u.mem.ptr) F("bytes", r->u.mem.bytes) F("stream", r->u.mem.stream);
    F("memory", r->u.mem.memory);
    break;
  case GT_KIND_MEMCPY:
    F("dst", r->u.copy.dst) F("src", r->u.copy.src) F("bytes", r->u.copy.bytes);
    F("stream", r->u.copy.stream) F("dir", r->u.copy.dir) F("corr", r->u.copy.corr);
    break;
  case GT_KIND_MEMSET:
    F("ptr", r->u.set.ptr) F("bytes", r->u.set.bytes) F("stream", r->u.set.stream);
    F("value", r->u.set.value) F("corr", r->u.set.corr);
    break;
  case GT_KIND_LAUNCH:
    F("kernel", r->u.launch.kernel) F("stream", r->u.launch.stream);
    F("corr", r->u.launch.corr) F("shared_mem", r->u.launch.shared_mem);
    break;
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
    F("handle", r->u.handle.handle) F("handle2", r->u.handle.handle2);
    break;
  case GT_KIND_NVTX:
    F("range_id", r->u.nvtx.range_id) F("domain", r->u.nvtx.domain);
    F("depth", r->u.nvtx.depth);
    break;
  case GT_KIND_PROCESS:
    F("ppid", r->u.proc.ppid) F("records", r->u.proc.records);
    F("dropped", r->u.proc.dropped) F("lost", r->u.proc.lost);
    break;
  case GT_KIND_KERNEL_NAME:
    F("kernel", r->u.kname.kernel);
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    F("count", r->u.count.count);
    break;
  case GT_KIND_GRAPH:
    F("graph", r->u.graph.graph) F("exec", r->u.graph.exec) F("node", r->u.graph.node);
    F("stream", r->u.graph.stream) F("capture", r->u.graph.capture);
    F("arg", r->u.graph.arg) F("mode", r->u.graph.mode);
    break;
  case GT_KIND_DEVICE:
    F("stream", r->u.device.stream) F("kernel", r->u.device.kernel);
    F("bytes", r->u.device.bytes) F("corr", r->u.device.corr);
    F("sample", r->u.device.sample) F("dir", r->u.device.dir);
    F("source", r->u.device.source) F("device", r->u.device.device);
    break;
  }
#undef F
  return -1;
}

/* Parse one script line into buf (room for GT_MAX_SLOTS slots). */
static int parse_line(char *line, struct gt_record *buf) {
  memset(buf, 0, sizeof *buf);
  buf->pid = buf->tid = 100;
  buf->nslots = 1;
  char *text = strstr(line, " text=");
  if (text) {
    *text = '\0';
    text += 6;
    text[strcspn(text, "\n")] = '\0';
  }
  char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
  unsigned kind;
  if (!tok || lookup(tok, gt_kind_name, GT_KIND_COUNT, &kind) || kind == 0)
    return -1;
  buf->kind = (uint8_t)kind;
  buf->api = 0xffff;
  while ((tok = strtok_r(NULL, " \t\n", &save))) {
    char *eq = strchr(tok, '=');
    if (!eq)
      return -1;
    *eq = '\0';
    if (field(buf, tok, eq + 1))
      return -1;
  }
  if (buf->api == 0xffff)
    buf->api = (uint16_t)default_api(kind, buf->u.nvtx.op);
  if (text)
    gt_record_attach_text(buf, text, strlen(text));
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: chrome_synth_trace OUT.gtrace < SCRIPT\n");
    return 2;
  }
  char err[256], line[4096];
  struct gt_writer *w = gt_writer_open(argv[1], GT_WRITER_FORCE, err, sizeof err);
  if (!w) {
    fprintf(stderr, "chrome_synth_trace: %s\n", err);
    return 2;
  }
  static struct gt_record buf[GT_MAX_SLOTS];
  int lineno = 0, rc = 0;
  while (fgets(line, sizeof line, stdin)) {
    lineno++;
    char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\n' || *p == '\0')
      continue;
    if (parse_line(p, buf)) {
      fprintf(stderr, "chrome_synth_trace: line %d: cannot parse\n", lineno);
      rc = 2;
      break;
    }
    gt_writer_append(w, buf);
  }
  if (gt_writer_close(w) != 0 && !rc) {
    fprintf(stderr, "chrome_synth_trace: writing %s failed\n", argv[1]);
    rc = 2;
  }
  return rc;
}
