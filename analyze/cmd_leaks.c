/* cmd_leaks.c — `gputrace leaks FILE [--json] [--fail-on-leak]
 *                  [--suppressions FILE]`
 *
 * What is still allocated when each process ended (or the trace ended),
 * grouped by allocation stack and memory kind, largest first, per process;
 * invalid frees; each process's peak of device memory and the stacks
 * holding it; stacks whose live bytes grow steadily (suspected leaks), told
 * apart from memory held since start-up. Text reads like valgrind; --json
 * is documented in docs/leaks.md. A trace whose last allocation ran out of
 * memory opens with one line saying where, how much and who held it
 * (leaks_oom.c; --json: "out_of_memory"). Exit: 0; 1 with --fail-on-leak when
 * unsuppressed leaks remain; 2 bad usage or unreadable trace; 3 a damaged
 * trace (partial result). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "holders.h"
#include "leaks.h"
#include "notices.h"
#include "shared_options.h"
#include "stats.h"
#include "util.h"

#define MAX_FRAMES 256
#define SHOWN_FRAMES 24

struct leaks_opts {
  const char *path, *suppressions;
  int json, fail_on_leak, no_wait;
};

/* ---- text ---- */

static void print_stack(const struct gt_leaks *l, uint32_t pid, uint32_t stack,
                        const char *indent) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(l->symtab, pid, stack, f, MAX_FRAMES);
  if (n == 0)
    printf("%s(no stack: GPUTRACE_STACKS=none, or the stack was not recorded)\n", indent);
  for (int i = 0; i < n && i < SHOWN_FRAMES; i++) {
    printf("%s#%d %s", indent, i, f[i].function);
    if (f[i].file[0])
      printf(" at %s:%u", f[i].file, f[i].line);
    if (f[i].module[0])
      printf(" (%s)", f[i].module);
    putchar('\n');
  }
  if (n > SHOWN_FRAMES)
    printf("%s... %d more frames\n", indent, n - SHOWN_FRAMES);
}

/* "from stage_input at leaky.cu:17 in leaky" */
static void print_origin(const struct gt_leaks *l, uint32_t pid, uint32_t stack) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(l->symtab, pid, stack, f, MAX_FRAMES);
  const struct gt_frame *o = gt_leaks_origin(f, n);
  if (!o)
    return;
  printf(" from %s", o->function);
  if (o->file[0])
    printf(" at %s:%u", gt_base_name(o->file), o->line);
  if (o->module[0])
    printf(" in %s", o->module);
}

static void print_leak(const struct gt_leaks *l, const struct gt_group *g) {
  char b[32];
  printf("%s in %" PRIu64 " block%s leaked (%s)", gt_fmt_bytes(b, sizeof b, g->bytes),
         g->blocks, g->blocks == 1 ? "" : "s", gt_memory_name(g->memory));
  print_origin(l, g->pid, g->stack_id);
  putchar('\n');
  const struct gt_holder *h = gt_holder_of_stack(l->symtab, g->pid, g->stack_id);
  if (h) /* not the program's data: say whose, and what it means */
    printf("    held by %s: %s\n", h->name, h->meaning);
  print_stack(l, g->pid, g->stack_id, "    ");
  if (g->growing) {
    char span[32]; /* the rate is a fit over the run: say how long it was */
    gt_fmt_ns(span, sizeof span, l->last_ns > l->first_ns ? l->last_ns - l->first_ns : 0);
    if (g->rated)
      printf("    growing: %s/min over %s",
             gt_fmt_bytes(b, sizeof b, (uint64_t)(g->bytes_per_min + 0.5)), span);
    else /* too short to extrapolate to a minute (GT_GROWTH_MIN_NS) */
      printf("    growing: %s over %s (no rate: the run is under %u s)",
             gt_fmt_bytes(b, sizeof b,
                          g->bytes - (g->carried < g->bytes ? g->carried : g->bytes)),
             span, (unsigned)(GT_GROWTH_MIN_NS / 1000000000u));
    if (g->range_name && l->range_counts[g->range_name - 1])
      printf(
          "; %s per \"%s\" range (%" PRIu64 " ranges)",
          gt_fmt_bytes(b, sizeof b, g->range_bytes / l->range_counts[g->range_name - 1]),
          l->ranges.strs[g->range_name - 1], l->range_counts[g->range_name - 1]);
    putchar('\n');
  }
  putchar('\n');
}

static void print_invalid(const struct gt_leaks *l) {
  if (!l->invalid_total)
    return;
  printf("Invalid frees: %" PRIu64 "\n", l->invalid_total);
  for (size_t i = 0; i < l->ninvalid; i++) {
    const struct gt_invalid_free *v = &l->invalid[i];
    printf("  %s(0x%" PRIx64 ") in pid %u: %s", gt_api_name(v->api), v->ptr, v->pid,
           gt_free_status_name(v->status));
    if (v->alloc_memory != GT_MEM_UNKNOWN)
      printf(" (a %s allocation)", gt_memory_name(v->alloc_memory));
    if (v->result)
      printf(", returned %d (%s)", v->result, gt_cuda_error_name(v->result));
    putchar('\n');
    print_stack(l, v->pid, v->stack_id, "      ");
    if (v->alloc_stack) {
      printf("    allocated at:\n");
      print_stack(l, v->pid, v->alloc_stack, "      ");
    }
  }
  putchar('\n');
}

static void print_peak(const struct gt_leaks *l, const struct gt_proc_summary *p) {
  char b[32];
  if (!p->peak_device)
    return;
  /* a rolling set's carried peak may be from before its first kept call */
  printf("Peak device memory of pid %u: %s at %+.6f s, held by:\n", p->pid,
         gt_fmt_bytes(b, sizeof b, p->peak_device),
         ((double)p->peak_ts - (double)l->first_ns) / 1e9);
  if (!p->nat_peak)
    printf("  (stacks not known: the peak was in a deleted file of the set)\n");
  for (size_t i = 0; i < p->nat_peak && i < 5; i++) {
    const struct gt_group *g = &p->at_peak[i];
    printf("  %s in %" PRIu64 " block%s", gt_fmt_bytes(b, sizeof b, g->bytes), g->blocks,
           g->blocks == 1 ? "" : "s");
    print_origin(l, g->pid, g->stack_id);
    putchar('\n');
  }
  putchar('\n');
}

/* A process's leaks (suppressed ones aside), by memory kind: what its LEAK
 * SUMMARY line and its JSON totals say. */
struct leak_totals {
  uint64_t bytes[4], blocks[4];
};

static struct leak_totals proc_leak_totals(const struct gt_leaks *l, uint32_t pid) {
  struct leak_totals t = {{0}, {0}};
  for (size_t i = 0; i < l->nleaks; i++) {
    const struct gt_group *g = &l->leaks[i];
    if (g->pid == pid && !g->suppressed) {
      t.bytes[g->memory & 3] += g->bytes;
      t.blocks[g->memory & 3] += g->blocks;
    }
  }
  return t;
}

static void print_text(const struct gt_leaks *l, const char *path) {
  char b[32];
  if (l->oom.present) /* the first thing to know, first */
    printf("%s\n", gt_oom_line(&l->oom));
  for (size_t p = 0; p < l->nprocs; p++) {
    const struct gt_proc_summary *ps = &l->procs[p];
    printf("== pid %u: %s ==\n", ps->pid,
           ps->exited  ? "exited"
           : ps->ended ? "ended without exit() or _exit(): killed, crashed or exec"
                       : "still running when the trace ended");
    for (size_t i = 0; i < l->nleaks; i++) {
      const struct gt_group *g = &l->leaks[i];
      if (g->pid != ps->pid || g->suppressed)
        continue;
      print_leak(l, g);
    }
    print_peak(l, ps);
    struct leak_totals t = proc_leak_totals(l, ps->pid);
    printf("LEAK SUMMARY (pid %u):", ps->pid);
    for (unsigned m = GT_MEM_DEVICE; m <= GT_MEM_MANAGED; m++)
      printf("%s %s %s in %" PRIu64 " block%s", m == GT_MEM_DEVICE ? "" : ",",
             gt_memory_name(m), gt_fmt_bytes(b, sizeof b, t.bytes[m]), t.blocks[m],
             t.blocks[m] == 1 ? "" : "s");
    printf("\n\n");
  }
  print_invalid(l);
  if (l->suppressed_blocks)
    printf("suppressed: %s in %" PRIu64 " blocks\n",
           gt_fmt_bytes(b, sizeof b, l->suppressed_bytes), l->suppressed_blocks);
  if (l->nprocs == 0)
    printf("%s: no traced process made allocations\n", path);
}

/* ---- json ---- */

static void json_stack(const struct gt_leaks *l, uint32_t pid, uint32_t stack) {
  struct gt_frame f[MAX_FRAMES];
  int n = gt_symtab_stack(l->symtab, pid, stack, f, MAX_FRAMES);
  putchar('[');
  for (int i = 0; i < n; i++) {
    printf("%s{\"function\":", i ? "," : "");
    gt_json_str(stdout, f[i].function);
    printf(",\"file\":");
    gt_json_str(stdout, f[i].file);
    printf(",\"line\":%u,\"module\":", f[i].line);
    gt_json_str(stdout, f[i].module);
    printf(",\"python\":%s}", f[i].python ? "true" : "false");
  }
  putchar(']');
}

static void json_group(const struct gt_leaks *l, const struct gt_group *g) {
  printf("{\"pid\":%u,\"memory\":\"%s\",\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64
         ",\"growing\":%s,\"bytes_per_min\":",
         g->pid, gt_memory_name(g->memory), g->bytes, g->blocks,
         g->growing ? "true" : "false");
  if (g->rated)
    printf("%.1f", g->bytes_per_min);
  else
    fputs("null", stdout);
  if (g->range_name && l->range_counts[g->range_name - 1]) {
    printf(",\"per_range\":{\"name\":");
    gt_json_str(stdout, l->ranges.strs[g->range_name - 1]);
    printf(",\"occurrences\":%" PRIu64 ",\"bytes_per_occurrence\":%" PRIu64 "}",
           l->range_counts[g->range_name - 1],
           g->range_bytes / l->range_counts[g->range_name - 1]);
  }
  const struct gt_holder *h = gt_holder_of_stack(l->symtab, g->pid, g->stack_id);
  if (h)
    printf(",\"holder\":\"%s\"", h->id);
  if (g->carried) /* a rolling set's first file read carried them in */
    printf(",\"carried_bytes\":%" PRIu64, g->carried);
  printf(",\"stack\":");
  json_stack(l, g->pid, g->stack_id);
  putchar('}');
}

static void json_leaks(const struct gt_leaks *l, int growth_only) {
  int first = 1;
  for (size_t i = 0; i < l->nleaks; i++) {
    if (l->leaks[i].suppressed || (growth_only && !l->leaks[i].growing))
      continue;
    printf("%s", first ? "" : ",");
    json_group(l, &l->leaks[i]);
    first = 0;
  }
}

static void json_peak(const struct gt_leaks *l, const struct gt_proc_summary *p) {
  printf("{\"pid\":%u,\"device_bytes\":%" PRIu64 ",\"ts_ns\":%" PRIu64 ",\"stacks\":[",
         p->pid, p->peak_device, p->peak_ts);
  for (size_t i = 0; i < p->nat_peak; i++) {
    printf("%s{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"stack\":", i ? "," : "",
           p->at_peak[i].bytes, p->at_peak[i].blocks);
    json_stack(l, p->pid, p->at_peak[i].stack_id);
    putchar('}');
  }
  printf("]}");
}

static void json_totals(const struct gt_leaks *l) {
  for (size_t p = 0; p < l->nprocs; p++) {
    struct leak_totals t = proc_leak_totals(l, l->procs[p].pid);
    printf("%s{\"pid\":%u,\"ended\":%s,\"exited\":%s", p ? "," : "", l->procs[p].pid,
           l->procs[p].ended ? "true" : "false", l->procs[p].exited ? "true" : "false");
    for (unsigned m = GT_MEM_DEVICE; m <= GT_MEM_MANAGED; m++)
      printf(",\"%s\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 "}", gt_memory_name(m),
             t.bytes[m], t.blocks[m]);
    putchar('}');
  }
}

static void json_invalid(const struct gt_leaks *l) {
  for (size_t i = 0; i < l->ninvalid; i++) {
    const struct gt_invalid_free *v = &l->invalid[i];
    printf("%s{\"pid\":%u,\"tid\":%u,\"api\":\"%s\",\"ptr\":\"0x%" PRIx64
           "\",\"status\":\"%s\",\"result\":%d,\"allocation_memory\":\"%s\",\"stack\":",
           i ? "," : "", v->pid, v->tid, gt_api_name(v->api), v->ptr,
           gt_free_status_name(v->status), v->result, gt_memory_name(v->alloc_memory));
    json_stack(l, v->pid, v->stack_id);
    printf(",\"allocation_stack\":");
    json_stack(l, v->pid, v->alloc_stack);
    putchar('}');
  }
}

/* ,"out_of_memory":{...} when the last allocation ran out of memory */
static void json_oom(const struct gt_oom *o) {
  if (!o->present)
    return;
  printf(",\"out_of_memory\":{\"pid\":%u,\"site\":", o->pid);
  gt_json_str(stdout, o->site);
  printf(",\"requested_bytes\":%" PRIu64 ",\"held_bytes\":%" PRIu64 ",\"holders\":[",
         o->requested, o->held);
  for (size_t i = 0; i < o->nholders; i++) {
    printf("%s{\"site\":", i ? "," : "");
    gt_json_str(stdout, o->holders[i].site);
    printf(",\"bytes\":%" PRIu64 "}", o->holders[i].bytes);
  }
  printf("]}");
}

static void print_json(const struct gt_leaks *l, uint64_t stacks_lost) {
  printf("{\"schema_version\":%d,\"stacks_lost\":%" PRIu64 ",\"leaks\":[",
         GT_JSON_SCHEMA_VERSION, stacks_lost);
  json_leaks(l, 0);
  printf("],\"totals\":[");
  json_totals(l);
  const struct gt_proc_summary *top = NULL;
  for (size_t p = 0; p < l->nprocs; p++)
    if (!top || l->procs[p].peak_device > top->peak_device)
      top = &l->procs[p];
  printf("],\"peak\":");
  if (top)
    json_peak(l, top);
  else
    printf("null");
  printf(",\"peaks\":[");
  for (size_t p = 0; p < l->nprocs; p++) {
    printf("%s", p ? "," : "");
    json_peak(l, &l->procs[p]);
  }
  printf("],\"invalid_frees\":[");
  json_invalid(l);
  printf("],\"invalid_free_count\":%" PRIu64 ",\"growth\":[", l->invalid_total);
  json_leaks(l, 1);
  printf("],\"suppressed\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 "}",
         l->suppressed_bytes, l->suppressed_blocks);
  json_oom(&l->oom);
  printf("}\n");
}

/* ---- command ---- */

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse(int argc, char **argv, struct leaks_opts *o) {
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_JSON(&o->json),
      GT_OPT_FLAG(0, "fail-on-leak", &o->fail_on_leak,
                  "exit 1 when unsuppressed leaks remain"),
      GT_OPT_STRING(0, "suppressions", &o->suppressions, "FILE",
                    "skip the leaks FILE's rules match (docs/leaks.md)"),
      GT_OPT_NO_WAIT(&o->no_wait),
      GT_OPT_END,
  };
  const struct gt_command cmd =
      GT_TRACE_COMMAND("leaks", options, "memory still allocated, by allocation stack");
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st == GT_OPTIONS_RUN)
    o->path = argv[0];
  return st;
}

int cmd_leaks(int argc, char **argv) {
  struct leaks_opts o = {0};
  int rc = parse(argc, argv, &o);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  char err[512];
  struct gt_suppressions sup = {0};
  if (o.suppressions &&
      gt_suppressions_load(o.suppressions, &sup, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace leaks: %s\n", err);
    return 2;
  }
  struct gt_leaks l;
  struct gt_leaks_opts lo = {.sup = &sup, .no_wait = o.no_wait, .cmd = "gputrace leaks"};
  if (gt_leaks_run(o.path, &lo, &l, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace leaks: %s\n", err);
    gt_leaks_free(&l);
    gt_suppressions_free(&sup);
    return 2;
  }
  gt_notice_no_cuda("gputrace leaks", o.path, l.session);
  uint64_t stacks_lost =
      gt_model_totals(gt_session_model(l.session))->dropped_by_kind[GT_KIND_STACK];
  if (o.json)
    print_json(&l, stacks_lost);
  else
    print_text(&l, o.path);
  char lost[256];
  if (gt_notice_stacks_lost(stacks_lost, lost, sizeof lost))
    fprintf(o.json ? stderr : stdout, "%s%s\n",
            o.json ? "gputrace leaks: warning: " : "!! ", lost);
  int leaked = 0;
  for (size_t i = 0; i < l.nleaks; i++)
    leaked |= !l.leaks[i].suppressed;
  int damaged = l.damaged;
  gt_leaks_free(&l);
  gt_suppressions_free(&sup);
  int status = gt_exit_status("gputrace leaks", damaged, 0);
  return status == 0 && o.fail_on_leak && leaked ? 1 : status;
}
