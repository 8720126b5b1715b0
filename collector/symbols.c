/* symbols.c — turning a traced process's return addresses into functions,
 * files, lines and modules with elfutils' libdwfl, so a trace opens on
 * another machine with full names.
 *
 * Contract:
 *  - One symbolizer per traced process. MODULE records tell it which file is
 *    loaded where (reported offline to a Dwfl: the process may be gone by
 *    the time its stacks are read). For each STACK record, every native
 *    address not seen before in that process becomes FRAME records: one per
 *    inline level (innermost first), function names demangled.
 *  - Addresses are return addresses: they are looked up at ip - 1, the call
 *    instruction.
 *  - Unknown addresses still get a FRAME ("??", the module's file name if
 *    any), so every stack entry resolves to something.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "gputrace/map.h"

#define MAX_INLINE 16

struct gt_symbolizer {
  Dwfl *dwfl;
  struct gt_map seen; /* ip -> 1 */
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct gt_symbolizer *gt_sym_new(void) {
  struct gt_symbolizer *s = calloc(1, sizeof *s);
  if (s)
    s->dwfl = dwfl_begin(&offline_callbacks);
  return s;
}

void gt_sym_free(struct gt_symbolizer *s) {
  if (!s)
    return;
  if (s->dwfl)
    dwfl_end(s->dwfl);
  gt_map_free(&s->seen);
  free(s);
}

void gt_sym_add_module(struct gt_symbolizer *s, const char *path, uint64_t bias) {
  if (!s || !s->dwfl || !path[0] || path[0] != '/')
    return; /* the vdso and anonymous objects have no file to read */
  const char *base = strrchr(path, '/');
  dwfl_report_begin_add(s->dwfl);
  dwfl_report_elf(s->dwfl, base ? base + 1 : path, path, -1, bias, false);
  dwfl_report_end(s->dwfl, NULL, NULL);
}

struct frame_text {
  char function[512];
  const char *file;
  int line;
};

static void set_function(struct frame_text *f, const char *name) {
  int status = -1;
  char *plain = name && name[0] == '_' && name[1] == 'Z'
                    ? __cxa_demangle(name, NULL, NULL, &status)
                    : NULL;
  snprintf(f->function, sizeof f->function, "%s", plain ? plain : name ? name : "??");
  free(plain);
}

static const char *die_name(Dwarf_Die *die) {
  Dwarf_Attribute attr;
  const char *name = NULL;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
    name = dwarf_formstring(&attr);
  return name ? name : dwarf_diename(die);
}

/* The source file of a DW_AT_call_file index in the CU of `cudie`. */
static const char *call_file(Dwarf_Die *cudie, Dwarf_Die *inl) {
  Dwarf_Attribute attr;
  Dwarf_Word index;
  Dwarf_Files *files;
  size_t nfiles;
  if (!dwarf_attr(inl, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &index) != 0 ||
      dwarf_getsrcfiles(cudie, &files, &nfiles) != 0 || index >= nfiles)
    return NULL;
  return dwarf_filesrc(files, index, NULL, NULL);
}

/* Fill levels innermost first; returns how many. */
static int resolve(Dwfl_Module *mod, Dwarf_Addr pc, struct frame_text *out) {
  int n = 0;
  Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
  const char *file = NULL;
  int lineno = 0;
  if (line)
    file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
  Dwarf_Addr bias;
  Dwarf_Die *cudie = dwfl_module_addrdie(mod, pc, &bias);
  Dwarf_Die *scopes = NULL;
  int nscopes = cudie ? dwarf_getscopes(cudie, pc - bias, &scopes) : 0;
  for (int i = 0; i < nscopes && n < MAX_INLINE - 1; i++) {
    if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
      continue;
    /* An inlined call: its body is at (file, lineno); the caller continues
     * at the call site. */
    set_function(&out[n], die_name(&scopes[i]));
    out[n].file = file;
    out[n].line = lineno;
    n++;
    Dwarf_Attribute attr;
    Dwarf_Word cl = 0;
    if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr))
      dwarf_formudata(&attr, &cl);
    file = call_file(cudie, &scopes[i]);
    lineno = (int)cl;
  }
  free(scopes);
  set_function(&out[n], dwfl_module_addrname(mod, pc));
  out[n].file = file;
  out[n].line = lineno;
  return n + 1;
}

static void put_frame(struct gt_sink *sink, uint32_t pid, uint64_t ip, int level,
                      int count, const struct frame_text *f, const char *module) {
  struct gt_record buf[GT_MAX_SLOTS];
  memset(buf, 0, sizeof buf[0]);
  buf[0].ts_ns = gt_now_ns();
  buf[0].pid = buf[0].tid = pid;
  buf[0].api = GT_API_gputrace_frame;
  buf[0].kind = GT_KIND_FRAME;
  buf[0].u.frame.ip = ip;
  buf[0].u.frame.line = f->line > 0 ? (uint32_t)f->line : 0;
  buf[0].u.frame.level = (uint16_t)level;
  buf[0].u.frame.inline_count = (uint16_t)count;
  char text[GT_TEXT_MAX];
  int len = snprintf(text, sizeof text, "%s\x1f%s\x1f%s", f->function,
                     f->file ? f->file : "", module ? module : "");
  gt_record_attach_text(&buf[0], text,
                        len < (int)sizeof text ? (size_t)len : sizeof text - 1);
  gt_sink_put(sink, &buf[0]);
}

static void symbolize(struct gt_symbolizer *s, uint64_t ip, uint32_t pid,
                      struct gt_sink *sink) {
  Dwarf_Addr pc = ip - 1;
  Dwfl_Module *mod = s->dwfl ? dwfl_addrmodule(s->dwfl, pc) : NULL;
  struct frame_text levels[MAX_INLINE];
  const char *module = NULL;
  int n = 1;
  if (mod) {
    module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    n = resolve(mod, pc, levels);
  } else {
    snprintf(levels[0].function, sizeof levels[0].function, "??");
    levels[0].file = NULL;
    levels[0].line = 0;
  }
  for (int i = 0; i < n; i++)
    put_frame(sink, pid, ip, i, n, &levels[i], module);
}

void gt_sym_stack(struct gt_symbolizer *s, const struct gt_record *stack, uint32_t pid,
                  struct gt_sink *sink) {
  if (!s)
    return;
  uint32_t depth = stack->u.stack.depth;
  size_t have = (size_t)(stack->nslots - 1) * GT_TEXT_PER_SLOT / sizeof(uint64_t);
  if (depth > have)
    depth = (uint32_t)have; /* never trust the ring */
  const struct gt_text_slot *slots = (const void *)(stack + 1);
  for (uint32_t i = 0; i < depth; i++) {
    uint64_t ip;
    size_t off = (size_t)i * sizeof ip;
    memcpy(&ip, slots[off / GT_TEXT_PER_SLOT].text + off % GT_TEXT_PER_SLOT, sizeof ip);
    if ((ip & GT_STACK_PYFRAME) || gt_map_get(&s->seen, ip, NULL))
      continue;
    gt_map_put(&s->seen, ip, 1);
    symbolize(s, ip, pid, sink);
  }
}
