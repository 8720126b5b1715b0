/* symbols.c — turning traced processes' return addresses into functions,
 * files, lines and modules with elfutils' libdwfl, so a trace opens on
 * another machine with full names.
 *
 * Contract:
 *  - Single-threaded: only the symbolizer worker (symworker.c) calls it, so
 *    no file it opens can stall the drain loop.
 *  - MODULE records tell it which file a process has loaded where, read
 *    through the process's root (/proc/PID/root: another container's files
 *    are its own), else at the path as we see it. A file is
 *    opened O_RDONLY|O_NONBLOCK and used only if it is a regular file (a
 *    FIFO, device or socket named by a hostile process is never read), and
 *    the descriptor is handed to libdwfl. Each file is parsed once for every
 *    process: files are cached by identity (device, inode, size, mtime) and
 *    by build ID, at file addresses (bias 0); a process's modules map its
 *    addresses to them with the load bias. Files no live process uses are
 *    freed once more than GT_SYM_CACHE_FILES are cached.
 *  - For each STACK record, every native entry not seen before in that
 *    process becomes FRAME records: one per inline level (innermost first,
 *    the concrete chain addr2line -i gives: concrete_scopes),
 *    function names demangled, keyed by the entry — an address and its
 *    address epoch (schema.h): after a dlclose, another library's code at
 *    the same address is another entry, found in the modules of its epoch. Addresses are
 * return addresses: they are looked up at ip - 1, the call instruction; but where nothing
 * is named at ip - 1 and a symbol starts at ip, at ip (a signal handler's return address
 * is its trampoline's first byte: glibc's __restore_rt). Unknown addresses still get a
 * FRAME ("??", the module's file name if any).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/map.h"
#include "gputrace/trace_file.h"

#define MAX_INLINE 16
#define GT_SYM_CACHE_FILES 64
#define MAX_BUILD_ID 64

struct symfile {
  Dwfl *dwfl; /* NULL: not an ELF file libdwfl could read */
  Dwfl_Module *mod;
  uint64_t identity; /* hash of device, inode, size, mtime */
  unsigned char build_id[MAX_BUILD_ID];
  int build_id_len;
  unsigned refs; /* modules of live processes using it */
  char name[256];
};

struct module {
  uint64_t start, end, bias;
  uint32_t epoch;       /* the address epoch it was loaded in (schema.h) */
  struct symfile *file; /* NULL: no readable file */
};

struct proc {
  struct module *mods;
  size_t nmods, cap;
  struct gt_map seen; /* ip -> 1 */
};

struct gt_symbolizer {
  struct gt_map procs; /* pid -> struct proc * */
  struct symfile **files;
  size_t nfiles, cap_files;
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Room for `need` elements; NULL (the old block kept) when out of memory. */
static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return p;
  size_t n = *cap ? *cap * 2 : 16;
  void *q = realloc(p, n * elem);
  if (q)
    *cap = n;
  return q;
}

struct gt_symbolizer *gt_sym_new(void) {
  return calloc(1, sizeof(struct gt_symbolizer));
}

static void free_file(struct symfile *f) {
  if (f->dwfl)
    dwfl_end(f->dwfl);
  free(f);
}

static void free_proc(struct proc *p) {
  for (size_t i = 0; i < p->nmods; i++)
    if (p->mods[i].file)
      p->mods[i].file->refs--;
  free(p->mods);
  gt_map_free(&p->seen);
  free(p);
}

void gt_sym_free(struct gt_symbolizer *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->procs.cap; i++)
    if (s->procs.used[i] == 1)
      free_proc((struct proc *)(uintptr_t)s->procs.vals[i]);
  gt_map_free(&s->procs);
  for (size_t i = 0; i < s->nfiles; i++)
    free_file(s->files[i]);
  free(s->files);
  free(s);
}

static struct proc *proc_of(struct gt_symbolizer *s, uint32_t pid, int create) {
  uint64_t v;
  if (gt_map_get(&s->procs, pid, &v))
    return (struct proc *)(uintptr_t)v;
  struct proc *p = create ? calloc(1, sizeof *p) : NULL;
  if (p && gt_map_put(&s->procs, pid, (uint64_t)(uintptr_t)p) != 0) {
    free(p);
    p = NULL;
  }
  return p;
}

void gt_sym_forget(struct gt_symbolizer *s, uint32_t pid) {
  struct proc *p = proc_of(s, pid, 0);
  if (!p)
    return;
  gt_map_del(&s->procs, pid);
  free_proc(p);
  /* Keep recently used files for the next process, within the bound. */
  for (size_t i = 0; i < s->nfiles && s->nfiles > GT_SYM_CACHE_FILES;) {
    if (s->files[i]->refs == 0) {
      free_file(s->files[i]);
      s->files[i] = s->files[--s->nfiles];
    } else {
      i++;
    }
  }
}

/* A descriptor for `path` only if it is a regular file: stat first, so a
 * FIFO or device is never opened, then check what was opened (the path may
 * have changed in between). O_NONBLOCK: an open never waits. */
static int open_regular(const char *path, struct stat *st) {
  if (stat(path, st) != 0 || !S_ISREG(st->st_mode))
    return -1;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

static uint64_t identity_of(const struct stat *st) {
  uint64_t parts[5] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                       (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec};
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 5; i++)
    h = (h ^ parts[i]) * 1099511628211ull + (h >> 29);
  return h;
}

static struct symfile *cached(struct gt_symbolizer *s, uint64_t identity,
                              const unsigned char *id, int id_len) {
  for (size_t i = 0; i < s->nfiles; i++) {
    struct symfile *f = s->files[i];
    if ((identity && f->identity == identity) ||
        (id_len > 0 && f->build_id_len == id_len &&
         !memcmp(f->build_id, id, (size_t)id_len)))
      return f;
  }
  return NULL;
}

/* Parse the file at `fd` (consumed) into a new cache entry, or return the
 * entry of a file with the same build ID. */
static struct symfile *load_file(struct gt_symbolizer *s, const char *path, int fd,
                                 uint64_t identity) {
  struct symfile *f = calloc(1, sizeof *f);
  void *files = grow(s->files, &s->cap_files, s->nfiles + 1, sizeof *s->files);
  if (!f || !files) {
    free(f);
    close(fd);
    return NULL;
  }
  s->files = files;
  const char *base = strrchr(path, '/');
  snprintf(f->name, sizeof f->name, "%.*s", (int)sizeof f->name - 1,
           base ? base + 1 : path);
  f->identity = identity;
  f->dwfl = dwfl_begin(&offline_callbacks);
  if (f->dwfl) {
    dwfl_report_begin(f->dwfl);
    f->mod = dwfl_report_elf(f->dwfl, f->name, path, fd, 0, false);
    dwfl_report_end(f->dwfl, NULL, NULL);
  }
  if (!f->mod) {
    close(fd); /* not consumed on failure */
    if (f->dwfl)
      dwfl_end(f->dwfl);
    f->dwfl = NULL;
  } else {
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(f->mod, &bits, &vaddr);
    struct symfile *same = n > 0 && n <= MAX_BUILD_ID ? cached(s, 0, bits, n) : NULL;
    if (same) { /* one copy of each build, e.g. a library in two paths */
      free_file(f);
      return same;
    }
    if (n > 0 && n <= MAX_BUILD_ID) {
      memcpy(f->build_id, bits, (size_t)n);
      f->build_id_len = n;
    }
  }
  s->files[s->nfiles++] = f;
  return f;
}

void gt_sym_add_module(struct gt_symbolizer *s, uint32_t pid,
                       const struct gt_record *rec) {
  char path[GT_TEXT_MAX + 1];
  gt_record_text(rec, rec->u.module.text_len, path, sizeof path);
  struct proc *p = proc_of(s, pid, 1);
  void *mods = p ? grow(p->mods, &p->cap, p->nmods + 1, sizeof *p->mods) : NULL;
  if (!mods)
    return;
  p->mods = mods;
  struct module *m = &p->mods[p->nmods++];
  *m = (struct module){rec->u.module.start, rec->u.module.end, rec->u.module.bias,
                       rec->u.module.epoch, NULL};
  if (path[0] != '/')
    return; /* the vdso and anonymous objects have no file to read */
  /* The file as the process sees it, through its root: a process of
   * another container (a pod's: docs/kubernetes.md) has files we do not;
   * the path as we see it once that is gone (the process ended). */
  char own[GT_TEXT_MAX + 64];
  struct stat st;
  snprintf(own, sizeof own, "/proc/%u/root%s", pid, path);
  /* A file cached already needs no descriptor (the collector may have none
   * to spare: fds.c). The second try also covers a process that ended
   * between the first's stat and open. */
  const char *const tries[2] = {own, path};
  struct symfile *f = NULL;
  int fd = -1;
  for (int i = 0; i < 2 && !f && fd < 0; i++) {
    if (stat(tries[i], &st) != 0)
      continue;
    if (S_ISREG(st.st_mode))
      f = cached(s, identity_of(&st), NULL, 0);
    fd = f ? -1 : open_regular(tries[i], &st);
  }
  if (!f && fd < 0)
    return;
  if (!f)
    f = load_file(s, path, fd, identity_of(&st));
  if (f) {
    m->file = f;
    f->refs++;
  }
}

/* ---- resolution ---- */

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

/* The DIEs holding `pc` below `die`, outermost first, into chain[*n...]
 * (at most max): only children holding pc are entered (a function, its
 * blocks and inlined calls), and namespaces (which hold C++ definitions
 * without ranges of their own; GCC puts member functions' definitions at
 * their namespace's level, not in their class). */
static int find_scopes(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *chain, int *n, int max) {
  Dwarf_Die child;
  if (*n >= max || dwarf_child(die, &child) != 0)
    return 0;
  do {
    int tag = dwarf_tag(&child);
    /* the abbreviation says whether it has code (cheap); only then its ranges */
    if ((dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges)) &&
        dwarf_haspc(&child, pc) == 1) {
      chain[(*n)++] = child;
      find_scopes(&chain[*n - 1], pc, chain, n, max);
      return 1;
    }
    if (tag == DW_TAG_namespace && find_scopes(&child, pc, chain, n, max))
      return 1;
  } while (dwarf_siblingof(&child, &child) == 0);
  return 0;
}

/* The scopes holding `pc`, innermost first, along the concrete inline
 * chain (as addr2line -i gives it): walked down from the CU. Not
 * dwarf_getscopes, which goes on past an inlined subroutine through its
 * abstract definition's parents (a lambda's, a template's) and, like
 * dwarf_getscopes_die, reads the whole unit for each address. */
#define MAX_SCOPES 64
static int concrete_scopes(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **scopes) {
  Dwarf_Die chain[MAX_SCOPES];
  int n = 0;
  find_scopes(cudie, pc, chain, &n, MAX_SCOPES);
  *scopes = n ? malloc((size_t)n * sizeof **scopes) : NULL;
  if (!*scopes)
    return 0;
  for (int i = 0; i < n; i++)
    (*scopes)[i] = chain[n - 1 - i];
  return n;
}

/* Fill levels innermost first; returns how many. `pc` is a file address. */
static int resolve(Dwfl_Module *mod, Dwarf_Addr pc, struct frame_text *out) {
  int n = 0;
  Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
  const char *file = NULL;
  int lineno = 0;
  if (line)
    file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
  Dwarf_Addr bias;
  Dwarf_Die *cudie = dwfl_module_addrdie(mod, pc, &bias);
  if (!cudie || dwarf_haspc(cudie, pc - bias) != 1) {
    /* no unit holds pc (crt1.o's _start): a line found is another unit's */
    cudie = NULL;
    file = NULL;
    lineno = 0;
  }
  Dwarf_Die *scopes = NULL;
  int nscopes = cudie ? concrete_scopes(cudie, pc - bias, &scopes) : 0;
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

static void put_frame(gt_sym_put_fn put, void *ctx, uint32_t pid, uint64_t ip, int level,
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
  put(ctx, &buf[0]);
}

/* The newest module of the process holding `pc` found in address epoch
 * `epoch` or before (schema.h: a later load at the same address replaces
 * an earlier one). */
static const struct module *module_at(const struct proc *p, uint64_t pc, uint32_t epoch) {
  for (size_t i = p ? p->nmods : 0; i-- > 0;)
    if (p->mods[i].epoch <= epoch && pc >= p->mods[i].start && pc < p->mods[i].end)
      return &p->mods[i];
  return NULL;
}

/* 1 when a symbol of mod starts exactly at file address addr. */
static int symbol_starts_at(Dwfl_Module *mod, Dwarf_Addr addr) {
  GElf_Off offset = 1;
  GElf_Sym sym;
  return dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL) && offset == 0;
}

/* FRAME records for a stack entry (ip: the address with its epoch). */
static void symbolize(const struct proc *p, uint64_t entry, uint32_t pid,
                      gt_sym_put_fn put, void *ctx) {
  uint64_t ip = gt_stack_addr(entry), pc = ip - 1;
  const struct module *m = module_at(p, pc, gt_stack_epoch(entry));
  struct frame_text levels[MAX_INLINE];
  const char *module = m && m->file ? m->file->name : NULL;
  int n = 1;
  if (m && m->file && m->file->mod) {
    Dwfl_Module *mod = m->file->mod;
    if (!dwfl_module_addrname(mod, pc - m->bias) && symbol_starts_at(mod, ip - m->bias))
      pc = ip; /* a signal frame: the trampoline itself */
    n = resolve(mod, pc - m->bias, levels);
  } else {
    snprintf(levels[0].function, sizeof levels[0].function, "??");
    levels[0].file = NULL;
    levels[0].line = 0;
  }
  for (int i = 0; i < n; i++)
    put_frame(put, ctx, pid, entry, i, n, &levels[i], module);
}

void gt_sym_stack(struct gt_symbolizer *s, uint32_t pid, const struct gt_record *stack,
                  gt_sym_put_fn put, void *ctx) {
  struct proc *p = proc_of(s, pid, 1);
  if (!p)
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
    if ((ip & GT_STACK_PYFRAME) || gt_map_get(&p->seen, ip, NULL))
      continue;
    gt_map_put(&p->seen, ip, 1);
    symbolize(p, ip, pid, put, ctx);
  }
}
