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
#include "util.h"

struct dump {
  FILE *out;
  int json;
  int summary;
  uint64_t first_ts;
  struct gt_map kernels; /* (pid, stub) -> char* demangled name */
  struct gt_map allocs;  /* (pid, ptr) -> bytes << 8 | memory */
  uint64_t per_kind[GT_KIND_COUNT];
  uint64_t per_api[GT_API_COUNT];
  uint64_t dropped, lost, processes;
  char text[GT_TEXT_MAX + 1];
};

static const char *kernel_name(struct dump *d, const struct gt_record *r, char *buf,
                               size_t len) {
  uint64_t v;
  if (gt_map_get(&d->kernels, gt_pid_key(r->pid, r->u.launch.kernel), &v))
    return (const char *)(uintptr_t)v;
  snprintf(buf, len, "%s0x%" PRIx64,
           r->flags & GT_F_HOST_FN ? "host function " : r->flags & GT_F_GRAPH ? "graph " : "",
           r->u.launch.kernel);
  return buf;
}

/* Bookkeeping before printing: names, allocation matching. */
static void track(struct dump *d, struct gt_record *r) {
  if (r->kind == GT_KIND_KERNEL_NAME) {
    gt_record_text(r, r->u.kname.text_len, d->text, sizeof d->text);
    uint64_t key = gt_pid_key(r->pid, r->u.kname.kernel), old;
    if (gt_map_get(&d->kernels, key, &old))
      free((void *)(uintptr_t)old);
    gt_map_put(&d->kernels, key, (uint64_t)(uintptr_t)gt_demangle(d->text));
  } else if (r->kind == GT_KIND_ALLOC && r->result == 0 && r->u.mem.ptr) {
    gt_map_put(&d->allocs, gt_pid_key(r->pid, r->u.mem.ptr),
               r->u.mem.bytes << 8 | r->u.mem.memory);
  } else if (r->kind == GT_KIND_FREE && r->result == 0 && r->u.mem.ptr) {
    uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), v;
    if (gt_map_get(&d->allocs, key, &v)) {
      r->u.mem.bytes = v >> 8;
      r->u.mem.memory = (uint8_t)(v & 0xff);
      gt_map_del(&d->allocs, key);
    }
  } else if (r->kind == GT_KIND_DROP) {
    d->dropped += r->u.count.count;
  } else if (r->kind == GT_KIND_LOST) {
    d->lost += r->u.count.count;
  } else if (r->kind == GT_KIND_PROCESS && r->u.proc.phase == GT_PROC_START) {
    d->processes++;
  }
}

static void json_fields(struct dump *d, const struct gt_record *r) {
  FILE *o = d->out;
  char buf[64];
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    fprintf(o, ",\"ptr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ",\"memory\":\"%s\"",
            r->u.mem.ptr, r->u.mem.bytes, gt_memory_name(r->u.mem.memory));
    if (r->flags & GT_F_ASYNC)
      fprintf(o, ",\"stream\":\"0x%" PRIx64 "\"", r->u.mem.stream);
    break;
  case GT_KIND_MEMCPY:
    fprintf(o, ",\"bytes\":%" PRIu64 ",\"dir\":\"%s\",\"pinned\":%s,\"stream\":\"0x%" PRIx64
               "\",\"dst\":\"0x%" PRIx64 "\",\"src\":\"0x%" PRIx64 "\"",
            r->u.copy.bytes, gt_dir_name(r->u.copy.dir),
            r->flags & GT_F_PINNED ? "true" : "false", r->u.copy.stream, r->u.copy.dst,
            r->u.copy.src);
    break;
  case GT_KIND_MEMSET:
    fprintf(o, ",\"ptr\":\"0x%" PRIx64 "\",\"bytes\":%" PRIu64 ",\"value\":%d,\"stream\":\"0x%" PRIx64 "\"",
            r->u.set.ptr, r->u.set.bytes, r->u.set.value, r->u.set.stream);
    break;
  case GT_KIND_LAUNCH:
    fputs(",\"kernel\":", o);
    gt_json_str(o, kernel_name(d, r, buf, sizeof buf));
    fprintf(o, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_mem\":%" PRIu64
               ",\"stream\":\"0x%" PRIx64 "\"",
            r->u.launch.grid[0], r->u.launch.grid[1], r->u.launch.grid[2],
            r->u.launch.block[0], r->u.launch.block[1], r->u.launch.block[2],
            r->u.launch.shared_mem, r->u.launch.stream);
    break;
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
    fprintf(o, ",\"handle\":\"0x%" PRIx64 "\"", r->u.handle.handle);
    if (r->u.handle.handle2)
      fprintf(o, ",\"handle2\":\"0x%" PRIx64 "\"", r->u.handle.handle2);
    break;
  case GT_KIND_NVTX:
    gt_record_text(r, r->u.nvtx.text_len, d->text, sizeof d->text);
    fprintf(o, ",\"op\":\"%s\",\"message\":", gt_nvtx_op_name(r->u.nvtx.op));
    gt_json_str(o, d->text);
    fprintf(o, ",\"range_id\":%" PRIu64 ",\"depth\":%d,\"domain\":\"0x%" PRIx64 "\"",
            r->u.nvtx.range_id, r->u.nvtx.depth, r->u.nvtx.domain);
    break;
  case GT_KIND_PROCESS:
    gt_record_text(r, r->u.proc.text_len, d->text, sizeof d->text);
    fprintf(o, ",\"phase\":\"%s\",\"ppid\":%u",
            r->u.proc.phase == GT_PROC_START ? "start" : "end", r->u.proc.ppid);
    if (r->u.proc.phase == GT_PROC_START) {
      fputs(",\"cmdline\":", o);
      gt_json_str(o, d->text);
    } else {
      fprintf(o, ",\"records\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"lost\":%" PRIu64,
              r->u.proc.records, r->u.proc.dropped, r->u.proc.lost);
    }
    break;
  case GT_KIND_KERNEL_NAME:
    gt_record_text(r, r->u.kname.text_len, d->text, sizeof d->text);
    fprintf(o, ",\"id\":\"0x%" PRIx64 "\",\"mangled\":", r->u.kname.kernel);
    gt_json_str(o, d->text);
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    fprintf(o, ",\"count\":%" PRIu64 ",\"of_kind\":\"%s\"", r->u.count.count,
            gt_kind_name(r->u.count.of_kind));
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
  fputs("}\n", d->out);
}

static void text_fields(struct dump *d, const struct gt_record *r) {
  FILE *o = d->out;
  char buf[64];
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    fprintf(o, " %s ptr=0x%" PRIx64 " bytes=%" PRIu64, gt_memory_name(r->u.mem.memory),
            r->u.mem.ptr, r->u.mem.bytes);
    break;
  case GT_KIND_MEMCPY:
    fprintf(o, " %s bytes=%" PRIu64 "%s stream=0x%" PRIx64, gt_dir_name(r->u.copy.dir),
            r->u.copy.bytes,
            r->flags & GT_F_PINNED ? " pinned" : r->flags & GT_F_PAGEABLE ? " pageable" : "",
            r->u.copy.stream);
    break;
  case GT_KIND_MEMSET:
    fprintf(o, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " value=%d", r->u.set.ptr,
            r->u.set.bytes, r->u.set.value);
    break;
  case GT_KIND_LAUNCH:
    fprintf(o, " %s grid=[%u,%u,%u] block=[%u,%u,%u] shmem=%" PRIu64 " stream=0x%" PRIx64,
            kernel_name(d, r, buf, sizeof buf), r->u.launch.grid[0], r->u.launch.grid[1],
            r->u.launch.grid[2], r->u.launch.block[0], r->u.launch.block[1],
            r->u.launch.block[2], r->u.launch.shared_mem, r->u.launch.stream);
    break;
  case GT_KIND_SYNC:
  case GT_KIND_STREAM:
  case GT_KIND_EVENT:
    fprintf(o, " handle=0x%" PRIx64, r->u.handle.handle);
    break;
  case GT_KIND_NVTX:
    gt_record_text(r, r->u.nvtx.text_len, d->text, sizeof d->text);
    fprintf(o, " %s \"%s\" depth=%d", gt_nvtx_op_name(r->u.nvtx.op), d->text, r->u.nvtx.depth);
    break;
  case GT_KIND_PROCESS:
    gt_record_text(r, r->u.proc.text_len, d->text, sizeof d->text);
    if (r->u.proc.phase == GT_PROC_START)
      fprintf(o, " start ppid=%u \"%s\"", r->u.proc.ppid, d->text);
    else
      fprintf(o, " end records=%" PRIu64 " dropped=%" PRIu64 " lost=%" PRIu64,
              r->u.proc.records, r->u.proc.dropped, r->u.proc.lost);
    break;
  case GT_KIND_KERNEL_NAME:
    gt_record_text(r, r->u.kname.text_len, d->text, sizeof d->text);
    fprintf(o, " 0x%" PRIx64 " %s", r->u.kname.kernel, d->text);
    break;
  case GT_KIND_DROP:
  case GT_KIND_LOST:
    fprintf(o, " count=%" PRIu64 " of=%s", r->u.count.count, gt_kind_name(r->u.count.of_kind));
    break;
  }
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
  uint64_t total = 0;
  for (unsigned k = 0; k < GT_KIND_COUNT; k++)
    total += d->per_kind[k];
  fprintf(d->out, "records: %" PRIu64 "  processes: %" PRIu64 "  dropped: %" PRIu64
                  "  lost: %" PRIu64 "\n",
          total, d->processes, d->dropped, d->lost);
  fprintf(d->out, "by kind:\n");
  for (unsigned k = 1; k < GT_KIND_COUNT; k++)
    if (d->per_kind[k])
      fprintf(d->out, "  %-12s %10" PRIu64 "\n", gt_kind_name(k), d->per_kind[k]);
  fprintf(d->out, "by api:\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++)
    if (d->per_api[a])
      fprintf(d->out, "  %-34s %10" PRIu64 "\n", gt_api_name(a), d->per_api[a]);
}

static void free_dump(struct dump *d) {
  for (size_t i = 0; i < d->kernels.cap; i++)
    if (d->kernels.used[i] == 1)
      free((void *)(uintptr_t)d->kernels.vals[i]);
  gt_map_free(&d->kernels);
  gt_map_free(&d->allocs);
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
  const struct gt_record *rec;
  struct gt_record buf[GT_MAX_SLOTS];
  while (gt_reader_next(rd, &rec) == 1) {
    memcpy(buf, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
    if (!d.first_ts)
      d.first_ts = buf[0].ts_ns;
    track(&d, &buf[0]);
    d.per_kind[buf[0].kind]++;
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
  free_dump(&d);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("gputrace dump: writing output");
    return 2;
  }
  return damaged ? 3 : 0;
}
