/* unwind.c — native stacks at a cached rule's cost (x86-64), never
 * faulting on a bad stack.
 *
 * Contract (unwind.h has the API):
 *  - gt_unwind gives the frames glibc's backtrace() gives at the same place
 *    wherever the program's frames are sound. It walks the stack itself
 *    with one rule per return address: the CFA (canonical frame address) is
 *    rsp or rbp plus an offset (or loaded from there: GCC's realigned
 *    frames, "DW_OP_bregN off; DW_OP_deref", as in cuBLAS), the return
 *    address and the saved rbp sit at fixed offsets from it (or rbp's from
 *    rbp itself, in a realigned frame). Rules come from each module's
 *    .eh_frame_hdr and .eh_frame (the memory the loader mapped: no file, no
 *    allocation), found with _dl_find_object (lock-free, glibc 2.35+;
 *    dl_iterate_phdr before), by interpreting the FDE's call-frame
 *    instructions up to the address, as libgcc does — then cached.
 *  - Signal frames are walked through: the sigreturn trampoline (an 'S'
 *    CIE whose code is the rt_sigreturn call) gives the interrupted
 *    registers from the kernel's ucontext, and the walk goes on at the
 *    interrupted pc (its exact address), on whichever stack it was.
 *  - Every read of the stack is checked against the readable mapping that
 *    holds it (its span: /proc/self/maps, read once per thread and stack,
 *    kept in TLS), and every step must move the CFA up by less than
 *    GT_MAX_FRAME, 8-aligned. A frame that breaks this (an rbp loaded with
 *    something else around a call: hand-written assembly, coroutines, JIT
 *    code), or whose rule the walk does not take (a CFA in another
 *    register or by another expression, no FDE: JIT code), ends the stack
 *    there: the frames below it are given, the stack is marked cut
 *    (GT_UNWIND_CUT) and counted. There is no fallback walker: libgcc's
 *    reads through a bad rbp and faults.
 *  - GPUTRACE_UNWIND=backtrace (cached = 0) takes glibc's own backtrace()
 *    (found in libc.so.6 at init, not an interposer's such as a sanitizer's,
 *    which adds a frame of its own), after the same walk: where that walk
 *    met a frame that would read outside the stack, backtrace() is not
 *    called (it would fault) and the walk's frames are given, cut.
 *  - The cache is a static table of GT_RULE_SLOTS slots, direct-mapped by
 *    address (a collision replaces), each a seqlock: readers never wait
 *    and never see a torn rule; a writer that finds a slot being written
 *    skips caching. Entries carry the loader's unload count (dlpi_subs,
 *    read once a stack): a dlclose makes every cached rule stale, so a
 *    library loaded later at the same address gets its own rules. In
 *    front of it, each thread keeps its last walk's rules by frame (TLS,
 *    GT_MEMO_FRAMES). A walk interrupting another on its thread (a signal
 *    handler's: never the shim's, whose hooks do not nest) uses the table
 *    and the spans already known alone, and ends at a rule not cached.
 *  - Replay: each thread also keeps its last walk as the stack words it
 *    read (the return addresses, and the saved rbps and realigned CFAs a
 *    rule took) with its first sp and, if a rule took it, its first rbp. A
 *    walk that starts there under the same unload count and finds every
 *    one of those words unchanged is that walk (a walk is a function of
 *    them): checked with independent loads instead of the walk's chain of
 *    dependent ones (docs/PERFORMANCE.md), its frames are copied, and it
 *    keeps that walk's number
 *    (gt_unwind_info.walk, which stacks.c keys its last stack on). Not
 *    kept: walks through a signal frame, of more than GT_REPLAY_FRAMES
 *    frames, cut by a bad read, or under GPUTRACE_UNWIND=backtrace.
 *  - Ending as backtrace() ends: a frame whose return address is undefined
 *    (_start, a thread's start) is the last; a return address of 0 is not
 *    given. Frame 0's rule is looked up at its exact address, callers' at
 *    the return address less 1 (the call, which may end a function).
 *  - Small on the program's stack (docs/stack-budget.md): no buffer on it;
 *    the maps are read through a TLS buffer. No sanitizer instruments the
 *    stack reads (they read other frames' slots by design).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _dl_find_object's types */
#endif
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef DLFO_STRUCT_HAS_EH_DBASE
/* Headers of glibc before 2.35 (the bundle's Debian 11 build): its layout
 * on x86-64 (no dlfo_eh_dbase, no dlfo_eh_count), as 2.35's dlfcn.h has it;
 * the function itself is looked up at run time either way. */
struct dl_find_object {
  unsigned long long dlfo_flags;
  void *dlfo_map_start, *dlfo_map_end;
  struct link_map *dlfo_link_map;
  void *dlfo_eh_frame;
  unsigned long long reserved[7];
};
#endif

#define GT_RULE_SLOTS 32768u    /* 1 MiB: 32 B a slot */
#define GT_MAX_FRAME (1u << 20) /* a larger frame falls back (exact, slower) */
#define GT_CFI_STATES 8         /* DW_CFA_remember_state nesting */
#define GT_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

/* DWARF register numbers (x86-64 psABI) */
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

/* ---- rules ---- */

/* One frame's step, packed in 64 bits for the seqlock'd cache. */
enum {
  RULE_CFA_RBP = 1u << 0,    /* CFA = rbp + cfa_off, else rsp + cfa_off */
  RULE_RBP_SAVED = 1u << 1,  /* caller's rbp at CFA + rbp_off, else unchanged */
  RULE_END = 1u << 2,        /* return address undefined: the outermost frame */
  RULE_STOP = 1u << 3,       /* not expressible: the stack is cut here */
  RULE_CFA_DEREF = 1u << 4,  /* CFA = *(rbp or rsp + cfa_off): a realigned frame */
  RULE_RBP_AT_RBP = 1u << 5, /* caller's rbp at rbp + rbp_off (a realigned frame) */
  RULE_SIGNAL = 1u << 6,     /* the kernel's signal frame: registers in the ucontext */
};
struct rule {
  int32_t cfa_off;
  int16_t rbp_off;
  int8_t ra_off;
  uint8_t flags;
};

static uint64_t rule_pack(struct rule r) {
  return (uint64_t)(uint32_t)r.cfa_off | (uint64_t)(uint16_t)r.rbp_off << 32 |
         (uint64_t)(uint8_t)r.ra_off << 48 | (uint64_t)r.flags << 56;
}
static struct rule rule_unpack(uint64_t v) {
  struct rule r = {(int32_t)(uint32_t)v, (int16_t)(uint16_t)(v >> 32),
                   (int8_t)(uint8_t)(v >> 48), (uint8_t)(v >> 56)};
  return r;
}
static const struct rule k_stop = {0, 0, 0, RULE_STOP};

/* ---- the cache ---- */

struct rule_slot {
  _Atomic uint32_t seq; /* odd while written */
  _Atomic uint32_t gen; /* the unload count the rule was computed under */
  _Atomic uint64_t addr;
  _Atomic uint64_t rule;
  uint64_t pad;
};
static struct rule_slot g_rules[GT_RULE_SLOTS];
static _Atomic uint64_t g_backtraces, g_cuts, g_computed;
static int g_cached = 1;
static int (*g_find_object)(void *, struct dl_find_object *);
/* glibc's own backtrace(), not an interposer's: a sanitizer's adds its own
 * frame, which would stay at the top of a fallen-back stack. */
static int (*g_backtrace)(void **, int) = backtrace;

static struct rule_slot *slot_of(uintptr_t addr) {
  /* Return addresses' low bits are well spread; folding in the next ones
   * keeps two libraries' same offsets apart. No multiply: this is on the
   * walk's chain of dependent loads, once a frame. */
  return &g_rules[(addr ^ (addr >> 15)) & (GT_RULE_SLOTS - 1u)];
}

static int cache_get(uintptr_t addr, uint32_t gen, struct rule *out) {
  struct rule_slot *s = slot_of(addr);
  /* Seqlock read: the acquire load orders the field loads after it, the
   * acquire fence orders them before the second load of seq. */
  uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
  if (seq & 1u)
    return 0;
  uint64_t a = atomic_load_explicit(&s->addr, memory_order_relaxed);
  uint64_t v = atomic_load_explicit(&s->rule, memory_order_relaxed);
  uint32_t g = atomic_load_explicit(&s->gen, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq || a != addr ||
      g != gen || seq == 0)
    return 0;
  *out = rule_unpack(v);
  return 1;
}

static void cache_put(uintptr_t addr, uint32_t gen, struct rule r) {
  struct rule_slot *s = slot_of(addr);
  uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
  if ((seq & 1u) || !atomic_compare_exchange_strong_explicit(&s->seq, &seq, seq + 1,
                                                             memory_order_acquire,
                                                             memory_order_relaxed))
    return; /* another thread writes it: never wait */
  /* The odd seq is visible before any field changes (the release fence
   * orders the field stores after the CAS). */
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&s->addr, addr, memory_order_relaxed);
  atomic_store_explicit(&s->rule, rule_pack(r), memory_order_relaxed);
  atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
  atomic_store_explicit(&s->seq, seq + 2, memory_order_release); /* even: done */
}

/* ---- reading .eh_frame ---- */

/* A cursor over one module's mapped bytes: every read is bounds-checked
 * against the module, so a damaged table falls back rather than faults. */
struct cur {
  const uint8_t *p, *lo, *hi;
  int bad;
};

static int need(struct cur *c, size_t n) {
  if (c->bad || c->p < c->lo || (size_t)(c->hi - c->p) < n) {
    c->bad = 1;
    return 0;
  }
  return 1;
}
static uint64_t rd_u(struct cur *c, size_t n) {
  uint64_t v = 0;
  if (!need(c, n))
    return 0;
  memcpy(&v, c->p, n); /* little-endian */
  c->p += n;
  return v;
}
static void skip(struct cur *c, uint64_t n) {
  if (need(c, n))
    c->p += n;
}
static uint64_t rd_uleb(struct cur *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; need(c, 1); shift += 7) {
    uint8_t b = *c->p++;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7fu) << shift;
    if (!(b & 0x80u))
      return v;
  }
  return 0;
}
static int64_t rd_sleb(struct cur *c) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t b = 0x80;
  while ((b & 0x80u) && need(c, 1)) {
    b = *c->p++;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7fu) << shift;
    shift += 7;
  }
  if (shift < 64 && (b & 0x40u))
    v |= ~0ull << shift;
  return (int64_t)v;
}

/* A DW_EH_PE-encoded value; pcrel and datarel (base) only: text-, func-
 * relative, aligned and indirect values do not occur where we read. */
static uint64_t rd_enc(struct cur *c, uint8_t enc, uintptr_t datarel) {
  uintptr_t at = (uintptr_t)c->p;
  uint64_t v;
  /* decoding tables, one case a line */
  // clang-format off
  switch (enc & 0x0fu) {
  case 0x00: v = rd_u(c, 8); break;
  case 0x01: v = rd_uleb(c); break;
  case 0x02: v = rd_u(c, 2); break;
  case 0x03: v = rd_u(c, 4); break;
  case 0x04: v = rd_u(c, 8); break;
  case 0x09: v = (uint64_t)rd_sleb(c); break;
  case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(c, 2); break;
  case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(c, 4); break;
  case 0x0c: v = rd_u(c, 8); break;
  default: c->bad = 1; return 0;
  }
  switch (enc & 0x70u) {
  case 0x00: return v;
  case 0x10: return v + at;
  case 0x30: return v + datarel;
  default: c->bad = 1; return 0;
  }
  // clang-format on
}

/* The module holding addr: its bounds and .eh_frame_hdr. */
struct module {
  const uint8_t *lo, *hi, *hdr;
};

struct phdr_find {
  uintptr_t addr;
  struct module *m;
  int found;
};
static int phdr_find_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct phdr_find *f = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0, hdr = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t s = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) {
      lo = s < lo ? s : lo;
      hi = s + ph->p_memsz > hi ? s + ph->p_memsz : hi;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      hdr = s;
    }
  }
  if (f->addr < lo || f->addr >= hi)
    return 0;
  *f->m = (struct module){(const void *)lo, (const void *)hi, (const void *)hdr};
  f->found = hdr != 0;
  return 1;
}

/* (o: room for _dl_find_object's answer, off the program's stack) */
static int find_module(uintptr_t addr, struct module *m, struct dl_find_object *o) {
  if (g_find_object) {
    if (g_find_object((void *)addr, o) != 0 || !o->dlfo_eh_frame)
      return 0;
    *m = (struct module){o->dlfo_map_start, o->dlfo_map_end, o->dlfo_eh_frame};
    return 1;
  }
  struct phdr_find f = {addr, m, 0};
  dl_iterate_phdr(phdr_find_cb, &f);
  return f.found;
}

/* The FDE covering addr, from .eh_frame_hdr's sorted table; NULL if none
 * (or a table encoding other than the linker's datarel sdata4). */
static const uint8_t *find_fde(const struct module *m, uintptr_t addr) {
  struct cur c = {m->hdr, m->lo, m->hi, 0};
  uint64_t head = rd_u(&c, 4);
  uint8_t ver = (uint8_t)head, ptr_enc = (uint8_t)(head >> 8),
          cnt_enc = (uint8_t)(head >> 16), tab_enc = (uint8_t)(head >> 24);
  if (c.bad || ver != 1 || tab_enc != 0x3b || ptr_enc == 0xff || cnt_enc == 0xff)
    return NULL;
  rd_enc(&c, ptr_enc, (uintptr_t)m->hdr);
  uint64_t count = rd_enc(&c, cnt_enc, (uintptr_t)m->hdr);
  if (c.bad || count == 0 || count > (uint64_t)(m->hi - m->lo) / 8 ||
      !need(&c, count * 8))
    return NULL;
  const int32_t *tab = (const void *)c.p;
  uintptr_t base = (uintptr_t)m->hdr;
  uint64_t lo = 0, hi = count; /* the last entry starting at or below addr */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    int32_t start;
    memcpy(&start, &tab[mid * 2], 4);
    if (base + (uintptr_t)(intptr_t)start <= addr)
      lo = mid;
    else
      hi = mid;
  }
  int32_t start, fde;
  memcpy(&start, &tab[lo * 2], 4);
  memcpy(&fde, &tab[lo * 2 + 1], 4);
  if (base + (uintptr_t)(intptr_t)start > addr)
    return NULL;
  return (const uint8_t *)(base + (uintptr_t)(intptr_t)fde);
}

/* ---- call-frame instructions ---- */

struct cfi_row {
  uint8_t cfa_reg; /* DW_RSP or DW_RBP; other: not followed */
  uint8_t cfa_how; /* CFA_REG, CFA_DEREF (DW_CFA_def_cfa_expression), CFA_OTHER */
  uint8_t rbp_how, ra_how;
  int32_t cfa_off, rbp_off, ra_off; /* wider offsets are not followed (row_rule) */
  uint8_t wide;                     /* an offset did not fit in 32 bits */
};
enum { HOW_SAME, HOW_OFFSET, HOW_UNDEFINED, HOW_OTHER, HOW_AT_RBP };
enum { CFA_REG, CFA_DEREF, CFA_OTHER };

struct cie {
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_enc;
  uint8_t has_z;  /* FDEs have augmentation data */
  uint8_t signal; /* 'S': the frame of a signal handler's return (sigreturn) */
  const uint8_t *insns, *end;
};

static int32_t off32(struct cfi_row *r, int64_t off) {
  if (off != (int32_t)off)
    r->wide = 1;
  return (int32_t)off;
}

/* Set register reg's rule; only rbp and the return address matter. */
static void set_reg(struct cfi_row *r, uint64_t reg, int how, int64_t off) {
  if (reg == DW_RBP)
    r->rbp_how = (uint8_t)how, r->rbp_off = off32(r, off);
  else if (reg == DW_RA)
    r->ra_how = (uint8_t)how, r->ra_off = off32(r, off);
}

/* 1 when the DWARF expression block is exactly "DW_OP_bregN off" (then
 * DW_OP_deref when deref), with N in *reg: what GCC writes for a frame
 * realigned through a DRAP register (cuBLAS has thousands). */
static int breg_block(struct cur *c, uint64_t len, int deref, uint8_t *reg,
                      int64_t *off) {
  *reg = 0xff, *off = 0; /* no register: what a caller reads when it failed */
  if (!need(c, len))
    return 0;
  struct cur b = {c->p, c->p, c->p + len, 0};
  c->p += len;
  uint8_t op = (uint8_t)rd_u(&b, 1);
  *off = rd_sleb(&b);
  *reg = (uint8_t)(op - 0x70u);
  if (deref && rd_u(&b, 1) != 0x06u) /* DW_OP_deref */
    return 0;
  return !b.bad && b.p == b.hi && op >= 0x70u && op <= 0x8fu;
}

/* DW_CFA_def_cfa_expression and DW_CFA_expression (for rbp and the return
 * address): the realigned-frame forms are followed, the rest is not. */
static void cfa_expression(struct cur *c, struct cfi_row *row) {
  uint8_t reg;
  int64_t off;
  int ok = breg_block(c, rd_uleb(c), 1, &reg, &off);
  row->cfa_how = ok && (reg == DW_RBP || reg == DW_RSP) ? CFA_DEREF : CFA_OTHER;
  row->cfa_reg = reg;
  row->cfa_off = off32(row, off);
}
static void reg_expression(struct cur *c, struct cfi_row *row) {
  uint64_t reg = rd_uleb(c);
  uint8_t base;
  int64_t off;
  int ok = breg_block(c, rd_uleb(c), 0, &base, &off);
  set_reg(row, reg, ok && base == DW_RBP && reg == DW_RBP ? HOW_AT_RBP : HOW_OTHER, off);
}

/* Run instructions [c.p, end) while their location is at or below addr,
 * starting at `loc`; `init` is the CIE's row (DW_CFA_restore). Returns 0
 * on an instruction this unwinder does not take. */
static int run_cfi(struct cur *c, const uint8_t *end, const struct cie *cie,
                   uintptr_t loc, uintptr_t addr, struct cfi_row *row,
                   const struct cfi_row *init, struct cfi_row *saved) {
  int depth = 0;
  /* the DW_CFA opcodes, one case a line */
  // clang-format off
  while (c->p < end && !c->bad) {
    uint8_t op = (uint8_t)rd_u(c, 1);
    uint64_t delta = 0, reg;
    switch (op >> 6) {
    case 1: delta = op & 0x3fu; goto advance;
    case 2: set_reg(row, op & 0x3fu, HOW_OFFSET, (int64_t)rd_uleb(c) * cie->data_align); continue;
    case 3:
      reg = op & 0x3fu;
      set_reg(row, reg, reg == DW_RBP ? init->rbp_how : init->ra_how,
              reg == DW_RBP ? init->rbp_off : init->ra_off);
      continue;
    }
    switch (op) {
    case 0x00: continue; /* nop */
    case 0x02: delta = rd_u(c, 1); goto advance;
    case 0x03: delta = rd_u(c, 2); goto advance;
    case 0x04: delta = rd_u(c, 4); goto advance;
    case 0x05: reg = rd_uleb(c); set_reg(row, reg, HOW_OFFSET, (int64_t)rd_uleb(c) * cie->data_align); continue;
    case 0x06:
      reg = rd_uleb(c);
      set_reg(row, reg, reg == DW_RBP ? init->rbp_how : init->ra_how,
              reg == DW_RBP ? init->rbp_off : init->ra_off);
      continue;
    case 0x07: set_reg(row, rd_uleb(c), HOW_UNDEFINED, 0); continue;
    case 0x08: set_reg(row, rd_uleb(c), HOW_SAME, 0); continue;
    case 0x09: reg = rd_uleb(c); rd_uleb(c); set_reg(row, reg, HOW_OTHER, 0); continue;
    case 0x0a:
      if (depth == GT_CFI_STATES)
        return 0;
      saved[depth++] = *row;
      continue;
    case 0x0b:
      if (depth == 0)
        return 0;
      *row = saved[--depth]; /* every rule, the CFA's included */
      continue;
    case 0x0c: row->cfa_reg = (uint8_t)rd_uleb(c); row->cfa_off = off32(row, (int64_t)rd_uleb(c)); row->cfa_how = CFA_REG; continue;
    case 0x0d: row->cfa_reg = (uint8_t)rd_uleb(c); continue;
    case 0x0e: row->cfa_off = off32(row, (int64_t)rd_uleb(c)); continue;
    case 0x0f: cfa_expression(c, row); continue;
    case 0x10: reg_expression(c, row); continue;
    case 0x16: /* val_expression: reg, block */
      reg = rd_uleb(c);
      skip(c, rd_uleb(c));
      set_reg(row, reg, HOW_OTHER, 0);
      continue;
    case 0x11: reg = rd_uleb(c); set_reg(row, reg, HOW_OFFSET, rd_sleb(c) * cie->data_align); continue;
    case 0x12:
      row->cfa_reg = (uint8_t)rd_uleb(c);
      row->cfa_off = off32(row, rd_sleb(c) * cie->data_align);
      row->cfa_how = CFA_REG;
      continue;
    case 0x13: row->cfa_off = off32(row, rd_sleb(c) * cie->data_align); continue;
    case 0x14: reg = rd_uleb(c); rd_uleb(c); set_reg(row, reg, HOW_OTHER, 0); continue;
    case 0x15: reg = rd_uleb(c); rd_sleb(c); set_reg(row, reg, HOW_OTHER, 0); continue;
    case 0x2e: rd_uleb(c); continue; /* GNU_args_size: nothing for the CFA */
    case 0x2f:
      reg = rd_uleb(c);
      set_reg(row, reg, HOW_OFFSET, -(int64_t)rd_uleb(c) * cie->data_align);
      continue;
    default: return 0; /* set_loc and the rest: not taken */
    }
  advance:
    if (loc + delta * cie->code_align > addr)
      return 1; /* the rows from here on are past addr */
    loc += delta * cie->code_align;
  }
  // clang-format on
  return !c->bad;
}

/* Parse the CIE at p (cie.insns .. cie.end are its instructions). */
static int read_cie(struct cur c, struct cie *cie) {
  uint64_t len = rd_u(&c, 4);
  if (c.bad || len == 0 || len == 0xffffffffu || !need(&c, len))
    return 0;
  cie->end = c.p + len;
  if (rd_u(&c, 4) != 0)
    return 0; /* not a CIE */
  uint8_t version = (uint8_t)rd_u(&c, 1);
  const char *aug = (const char *)c.p;
  size_t alen = strnlen(aug, (size_t)(cie->end - c.p));
  c.p += alen + 1;
  if (aug[0] != '\0' && aug[0] != 'z')
    return 0; /* "eh" and such: pre-'z' formats */
  cie->code_align = rd_uleb(&c);
  cie->data_align = rd_sleb(&c);
  uint64_t ra = version == 1 ? rd_u(&c, 1) : rd_uleb(&c);
  if (ra != DW_RA)
    return 0;
  cie->fde_enc = 0; /* absptr */
  cie->has_z = aug[0] == 'z';
  cie->signal = 0;
  if (cie->has_z) {
    uint64_t n = rd_uleb(&c);
    if (!need(&c, n))
      return 0;
    const uint8_t *after = c.p + n;
    for (size_t i = 1; i < alen && !c.bad; i++) {
      if (aug[i] == 'R')
        cie->fde_enc = (uint8_t)rd_u(&c, 1);
      else if (aug[i] == 'P')
        rd_enc(&c, (uint8_t)rd_u(&c, 1) & 0x7fu, 0); /* personality: skipped */
      else if (aug[i] == 'L')
        rd_u(&c, 1);
      else if (aug[i] == 'S')
        cie->signal = 1;
      else
        return 0; /* 'B', ...: not followed */
    }
    if (c.bad || c.p > after || after > cie->end)
      return 0;
    c.p = after;
  }
  cie->insns = c.p;
  return !c.bad;
}

static struct rule signal_rule(const struct module *m, uintptr_t start, uintptr_t range);
static struct rule row_rule(const struct cfi_row *row);

/* A rule's computation's state, off the program's stack (a thread's, in
 * its walk_tls). */
struct rule_work {
  struct cfi_row saved[GT_CFI_STATES]; /* DW_CFA_remember_state's */
  struct cfi_row init, row;
  struct cie cie;
  struct dl_find_object found;
};

/* The rule for the frame whose (looked-up) address is addr. */
__attribute__((noinline)) static struct rule compute_rule(uintptr_t addr,
                                                          struct rule_work *w) {
  struct module m;
  const uint8_t *fde;
  if (!find_module(addr, &m, &w->found) || !(fde = find_fde(&m, addr)))
    return k_stop;
  struct cur c = {fde, m.lo, m.hi, 0};
  uint64_t len = rd_u(&c, 4);
  if (c.bad || len == 0 || len == 0xffffffffu || !need(&c, len))
    return k_stop;
  const uint8_t *end = c.p + len;
  const uint8_t *id_at = c.p;
  uint32_t cie_off = (uint32_t)rd_u(&c, 4);
  struct cie *cie = &w->cie;
  struct cur cc = {id_at - cie_off, m.lo, m.hi, 0};
  if (cie_off == 0 || !read_cie(cc, cie))
    return k_stop;
  uintptr_t start = (uintptr_t)rd_enc(&c, cie->fde_enc, 0);
  uintptr_t range = (uintptr_t)rd_enc(&c, cie->fde_enc & 0x0fu, 0);
  if (c.bad || addr < start || addr - start >= range)
    return k_stop;
  if (cie->has_z)
    skip(&c, rd_uleb(&c)); /* augmentation data (the LSDA) */
  if (cie->signal)
    return signal_rule(&m, start, range);
  w->init = (struct cfi_row){DW_RSP, CFA_REG, HOW_SAME, HOW_UNDEFINED, 0, 0, 0, 0};
  struct cur ci = {cie->insns, m.lo, m.hi, 0};
  if (!run_cfi(&ci, cie->end, cie, start, UINTPTR_MAX, &w->init, &w->init, w->saved))
    return k_stop;
  w->row = w->init;
  if (!run_cfi(&c, end, cie, start, addr, &w->row, &w->init, w->saved))
    return k_stop;
  return row_rule(&w->row);
}

/* A frame whose CIE says 'S': the sigreturn trampoline's (glibc's
 * __restore_rt, its FDE starting at the nop before it), whose caller's
 * registers are in the ucontext the kernel left at the CFA — checked by
 * its code, the rt_sigreturn system call: an 'S' frame of another kind is
 * not followed. */
static struct rule signal_rule(const struct module *m, uintptr_t start, uintptr_t range) {
  static const uint8_t sigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                      0x00, 0x00, 0x0f, 0x05};
  if (range < 1 + sizeof sigreturn || start < (uintptr_t)m->lo ||
      (uintptr_t)m->hi - start < 1 + sizeof sigreturn ||
      memcmp((const void *)(start + 1), sigreturn, sizeof sigreturn) != 0)
    return k_stop;
  struct rule r = {0, 0, 0, RULE_SIGNAL};
  return r;
}

/* The rule a row of the CFI table gives, when the walk can follow it: the
 * CFA from rsp or rbp (or loaded from there: a realigned frame), the return
 * address at an offset from it, rbp kept, at an offset from the CFA or (a
 * realigned frame) from rbp itself. */
static struct rule row_rule(const struct cfi_row *row) {
  struct rule r = {row->cfa_off, (int16_t)row->rbp_off, (int8_t)row->ra_off, 0};
  if (row->ra_how == HOW_UNDEFINED) {
    r.flags = RULE_END;
    return r;
  }
  if (row->wide || row->cfa_how == CFA_OTHER ||
      (row->cfa_reg != DW_RSP && row->cfa_reg != DW_RBP) || row->ra_how != HOW_OFFSET ||
      row->ra_off != r.ra_off || row->rbp_off != r.rbp_off ||
      (row->rbp_how != HOW_SAME && row->rbp_how != HOW_OFFSET &&
       row->rbp_how != HOW_AT_RBP))
    return k_stop;
  r.flags = (uint8_t)((row->cfa_reg == DW_RBP ? RULE_CFA_RBP : 0) |
                      (row->cfa_how == CFA_DEREF ? RULE_CFA_DEREF : 0) |
                      (row->rbp_how == HOW_OFFSET ? RULE_RBP_SAVED : 0) |
                      (row->rbp_how == HOW_AT_RBP ? RULE_RBP_AT_RBP : 0));
  return r;
}

/* ---- rules by address ---- */

static int read_subs_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(unsigned long long *)data = info->dlpi_subs;
  return 1; /* the first module is enough: the count is global */
}

static uint32_t unload_count(void) {
  unsigned long long subs = 0;
  dl_iterate_phdr(read_subs_cb, &subs);
  return (uint32_t)subs;
}

/* The cached rule, else computed with w and cached; a walk interrupting
 * another has no w: a rule not cached stops it (uncached). */
static struct rule rule_for(uintptr_t addr, uint32_t gen, struct rule_work *w) {
  struct rule r;
  if (cache_get(addr, gen, &r))
    return r;
  if (!w)
    return k_stop;
  r = compute_rule(addr, w);
  atomic_fetch_add_explicit(&g_computed, 1, memory_order_relaxed);
  cache_put(addr, gen, r);
  return r;
}

/* ---- the stack's bounds ----
 *
 * Every read of the program's stack is of memory known to be readable: the
 * mapping that holds the stack pointer, found in /proc/self/maps (raw
 * system calls: no stdio, no allocation, one descriptor closed at once;
 * async-signal-safe) the first time a thread walks on that stack, then kept
 * in the thread's GT_SPANS last spans. A frame whose CFA or saved registers
 * would lie outside it (rbp loaded with something else, a corrupt stack)
 * ends the walk there: the stack is cut, never faulted on. */
#define GT_SPANS 4
struct span {
  uintptr_t lo, hi; /* [lo, hi) readable */
};

/* This thread's walking state: its last walk's rules by frame (a stack
 * taken again — the same call site: most of them — finds its rules here in
 * order, off the walk's chain of dependent loads: return address, then its
 * slot in the table, then the next return address; worth ~40 % of a warm
 * walk, docs/PERFORMANCE.md), the spans of the stacks it walked, and the
 * buffer /proc/self/maps is read through (off the program's stack, whose
 * room may be small: docs/stack-budget.md). A walk that interrupts another
 * (a signal handler's) leaves the memo and the buffer alone: it reads the
 * rule table and the spans already known only. */
#define GT_MEMO_FRAMES 32

/* This thread's last walk, as the words of the stack it read: a walk is a
 * function of its first registers, its rules (the same for the same unload
 * count) and those words, so a walk from the same registers that finds each
 * of them unchanged gives the same frames. That check is independent loads
 * (the walk is a chain of them: each frame's rule and reads wait for the
 * last frame's return address), the frames are copied from here, and the
 * walk keeps its number (gt_unwind_info.walk). Offsets from the first sp
 * keep it small (TLS is taken from every thread's stack:
 * docs/stack-budget.md): a walk of more than GT_REPLAY_FRAMES frames, one
 * through a signal frame (onto another stack) or one reading farther than
 * 4 GiB up is not kept. */
#define GT_REPLAY_FRAMES 64
#define GT_REPLAY_OTHER (GT_REPLAY_FRAMES + 16) /* saved rbps, realigned CFAs */
struct replay {
  uint64_t walk;     /* its number; 0: nothing kept */
  uint32_t gen;      /* the unload count it was walked under */
  int n, end, max;   /* frames, its enum walk_end, the caller's max */
  int with_sps;      /* sps kept */
  int ok;            /* the words are being logged and fit */
  int rbp_used;      /* a rule took the first rbp (else it may differ) */
  uintptr_t sp, rbp; /* the first registers (pc is gt_unwind_sp's label) */
  uint32_t read_hi;  /* the highest word read */
  uint32_t nra, nother;
  uint32_t ra_at[GT_REPLAY_FRAMES + 1]; /* return addresses: ips, then the last */
  uintptr_t ra[GT_REPLAY_FRAMES + 1];
  uint32_t other_at[GT_REPLAY_OTHER];
  uintptr_t other[GT_REPLAY_OTHER];
  uint32_t sps[GT_REPLAY_FRAMES];
};

struct walk_tls {
  uint32_t gen;  /* the unload count the memo's rules are for */
  uint32_t busy; /* a walk of this thread uses the memo and the buffer */
  uintptr_t addr[GT_MEMO_FRAMES];
  uint64_t rule[GT_MEMO_FRAMES];
  struct replay last;
  struct span spans[GT_SPANS];
  uint32_t next_span;
  char maps[512];
  struct rule_work work;
};
static __thread struct walk_tls tls_walk __attribute__((tls_model("initial-exec")));

static unsigned hex_digit(char ch) {
  return ch >= 'a' ? (unsigned)(ch - 'a' + 10) : (unsigned)(ch - '0');
}

/* /proc/self/maps' lines "lo-hi perms ...", parsed as they come. */
struct maps_parse {
  uintptr_t lo, hi;
  int field; /* 0: lo, 1: hi, 2: the first permission, 3: the rest of the line */
};

static int maps_feed(struct maps_parse *mp, const char *p, size_t n, uintptr_t addr,
                     struct span *out) {
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (ch == '\n') {
      *mp = (struct maps_parse){0, 0, 0};
    } else if (mp->field == 0) {
      mp->field = ch == '-';
      mp->lo = ch == '-' ? mp->lo : mp->lo << 4 | hex_digit(ch);
    } else if (mp->field == 1) {
      mp->field = ch == ' ' ? 2 : 1;
      mp->hi = ch == ' ' ? mp->hi : mp->hi << 4 | hex_digit(ch);
    } else if (mp->field == 2) {
      mp->field = 3;
      if (ch == 'r' && mp->lo <= addr && addr < mp->hi) {
        *out = (struct span){mp->lo, mp->hi};
        return 1;
      }
    }
  }
  return 0;
}

/* The readable mapping holding addr; 0 when none or maps cannot be read. */
static int mapping_of(uintptr_t addr, char *buf, size_t cap, struct span *out) {
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  struct maps_parse mp = {0, 0, 0};
  int found = 0;
  for (;;) {
    long n = syscall(SYS_read, fd, buf, cap);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0 || (found = maps_feed(&mp, buf, (size_t)n, addr, out)))
      break;
  }
  syscall(SYS_close, fd);
  return found;
}

/* The span holding sp: a known one, else (not for a walk interrupting
 * another) looked up and kept. A span is written hi = 0 first, so that a
 * signal handler's walk reading it meanwhile matches nothing. */
static int span_of(struct walk_tls *t, int owner, uintptr_t sp, struct span *out) {
  for (int i = 0; i < GT_SPANS; i++) {
    struct span s = {t->spans[i].lo, t->spans[i].hi};
    if (s.lo <= sp && sp < s.hi) {
      *out = s;
      return 1;
    }
  }
  int saved_errno = errno;
  int found = owner && mapping_of(sp, t->maps, sizeof t->maps, out);
  errno = saved_errno;
  if (!found)
    return 0;
  struct span *slot = &t->spans[t->next_span++ % GT_SPANS];
  slot->hi = 0;
  atomic_signal_fence(memory_order_seq_cst);
  slot->lo = out->lo;
  atomic_signal_fence(memory_order_seq_cst);
  slot->hi = out->hi;
  return 1;
}

/* 8 bytes at `at` lie in the span, at or above the frame's sp. */
static int readable(const struct span *s, uintptr_t sp, uintptr_t at) {
  return at >= sp && at >= s->lo && s->hi >= 8 && at <= s->hi - 8;
}

/* ---- the walk ---- */

/* A word the walk read, logged for the replay (r NULL: a walk not kept):
 * a return address (ra) or another (a saved rbp, a realigned CFA). */
static inline void log_read(struct replay *r, int ra, uintptr_t at, uintptr_t val) {
  if (!r || !r->ok)
    return;
  uint32_t *count = ra ? &r->nra : &r->nother;
  uint32_t cap = ra ? GT_REPLAY_FRAMES + 1 : GT_REPLAY_OTHER;
  uintptr_t off = at - r->sp;
  if (*count >= cap || off > UINT32_MAX) {
    r->ok = 0;
    return;
  }
  (ra ? r->ra_at : r->other_at)[*count] = (uint32_t)off;
  (ra ? r->ra : r->other)[*count] = val;
  (*count)++;
  r->read_hi = (uint32_t)off > r->read_hi ? (uint32_t)off : r->read_hi;
}

static struct walk_tls *memo_take(uint32_t gen) {
  struct walk_tls *t = &tls_walk;
  if (t->busy)
    return NULL;
  t->busy = 1;
  atomic_signal_fence(memory_order_seq_cst); /* busy before any use */
  if (t->gen != gen) {
    memset(t->addr, 0, sizeof t->addr);
    t->gen = gen;
  }
  return t;
}

static void memo_give(struct walk_tls *m) {
  if (!m)
    return;
  atomic_signal_fence(memory_order_seq_cst); /* every use before busy = 0 */
  m->busy = 0;
}

static struct rule frame_rule(struct walk_tls *m, int frame, uintptr_t look,
                              uint32_t gen) {
  if (!m)
    return rule_for(look, gen, NULL);
  if (frame >= GT_MEMO_FRAMES)
    return rule_for(look, gen, &m->work);
  if (m->addr[frame] == look)
    return rule_unpack(m->rule[frame]);
  struct rule r = rule_for(look, gen, &m->work);
  m->addr[frame] = look;
  m->rule[frame] = rule_pack(r);
  return r;
}

struct regs {
  uintptr_t pc, sp, rbp;
};

/* One frame up by a CFI rule whose CFA is loaded from the frame or whose
 * rbp is kept relative to rbp (a realigned frame); 0 when a read would
 * leave the span or the step does not go up the stack. The common rules
 * take walk_frames' inline step. */
GT_NO_SANITIZE static int realigned_step(const struct span *s, struct rule r,
                                         struct regs *g, struct replay *log,
                                         uintptr_t *rbp_from) {
  uintptr_t cfa =
      ((r.flags & RULE_CFA_RBP) ? g->rbp : g->sp) + (uintptr_t)(intptr_t)r.cfa_off;
  if (r.flags & RULE_CFA_DEREF) {
    if (!readable(s, g->sp, cfa))
      return 0;
    uintptr_t at = cfa;
    cfa = *(const uintptr_t *)at;
    log_read(log, 0, at, cfa);
  }
  if (cfa <= g->sp || cfa - g->sp > GT_MAX_FRAME || (cfa & 7u) || cfa > s->hi)
    return 0;
  uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)r.ra_off;
  if (ra_at < g->sp || ra_at > cfa - 8)
    return 0; /* saved outside the frame: not a rule we trust */
  uintptr_t rbp = g->rbp;
  if (r.flags & (RULE_RBP_SAVED | RULE_RBP_AT_RBP)) {
    uintptr_t at =
        ((r.flags & RULE_RBP_SAVED) ? cfa : g->rbp) + (uintptr_t)(intptr_t)r.rbp_off;
    if (!readable(s, g->sp, at) || ((r.flags & RULE_RBP_SAVED) && at > cfa - 8))
      return 0;
    rbp = *(const uintptr_t *)at;
    *rbp_from = at;
  }
  *g = (struct regs){*(const uintptr_t *)ra_at, cfa, rbp};
  log_read(log, 1, ra_at, g->pc);
  return 1;
}

/* Through the kernel's signal frame: the interrupted registers, from the
 * ucontext_t at sp (the handler's CFA: glibc's layout is the kernel's),
 * and the span of the stack they are on (the thread's own, under a
 * sigaltstack). */
GT_NO_SANITIZE static int signal_step(struct walk_tls *t, int owner, struct span *s,
                                      struct regs *g) {
  enum { GREGS = offsetof(ucontext_t, uc_mcontext.gregs) };
  uintptr_t at[3] = {g->sp + GREGS + REG_RIP * 8u, g->sp + GREGS + REG_RSP * 8u,
                     g->sp + GREGS + REG_RBP * 8u};
  for (int i = 0; i < 3; i++)
    if (!readable(s, g->sp, at[i]))
      return 0;
  struct regs next = {*(const uintptr_t *)at[0], *(const uintptr_t *)at[1],
                      *(const uintptr_t *)at[2]};
  if (!span_of(t, owner, next.sp, s))
    return 0;
  *g = next;
  return 1;
}

/* How a walk ended: at the outermost frame (or max), at a frame whose rule
 * it does not follow, or at a step that would read outside the stack. */
enum walk_end { WALK_DONE, WALK_STOP, WALK_BAD };

#define RULE_UNCOMMON                                                                    \
  (RULE_STOP | RULE_END | RULE_SIGNAL | RULE_CFA_DEREF | RULE_RBP_AT_RBP)

/* Walk from frame 0 (gt_unwind's own registers, at its label). The common
 * step — CFA from rsp or rbp, the return address and rbp saved in the
 * frame — is inline: the frame's reads lie in [sp, cfa), cfa in the span,
 * sp never below it (it only grows on a stack), so two compares a read. */
GT_NO_SANITIZE static enum walk_end walk_frames(struct walk_tls *m, struct replay *log,
                                                uint32_t gen, struct regs g, void **ips,
                                                uintptr_t *sps, int max, int *n) {
  struct walk_tls *t = &tls_walk;
  struct span s;
  *n = 0;
  if (!span_of(t, m != NULL, g.sp, &s))
    return WALK_BAD;
  int exact = 1; /* frame 0 and an interrupted frame: at their pc, not pc - 1 */
  /* Where g.rbp was read (0: the first register), and whether a rule took
   * it since: the replay depends on an rbp only if one did (a frame's saved
   * rbp that no rule takes may be a loop's counter). */
  uintptr_t rbp_from = 0;
  int rbp_taken = 0;
  for (int frame = 0; *n < max; frame++) {
    struct rule r = frame_rule(m, frame, exact ? g.pc : g.pc - 1, gen);
    if ((r.flags & (RULE_CFA_RBP | RULE_RBP_AT_RBP)) && !rbp_taken && log) {
      if (rbp_from)
        log_read(log, 0, rbp_from, g.rbp);
      else
        log->rbp_used = 1;
      rbp_taken = 1;
    }
    if (__builtin_expect(r.flags & RULE_UNCOMMON, 0)) {
      if (r.flags & RULE_STOP)
        return WALK_STOP;
      if (r.flags & RULE_END)
        return WALK_DONE;
      exact = (r.flags & RULE_SIGNAL) != 0;
      if (exact && log)
        log->ok = 0; /* onto another stack: not kept */
      uintptr_t from = rbp_from;
      if (!(exact ? signal_step(t, m != NULL, &s, &g)
                  : realigned_step(&s, r, &g, log, &rbp_from)))
        return WALK_BAD;
      rbp_taken &= from == rbp_from; /* a new rbp: not taken yet */
    } else {
      uintptr_t cfa =
          ((r.flags & RULE_CFA_RBP) ? g.rbp : g.sp) + (uintptr_t)(intptr_t)r.cfa_off;
      if (cfa <= g.sp || cfa - g.sp > GT_MAX_FRAME || (cfa & 7u) || cfa > s.hi)
        return WALK_BAD; /* not up the stack, or off it: rbp holds something else */
      uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)r.ra_off;
      uintptr_t rbp_at = cfa + (uintptr_t)(intptr_t)r.rbp_off;
      if (ra_at < g.sp || ra_at > cfa - 8 ||
          ((r.flags & RULE_RBP_SAVED) && (rbp_at < g.sp || rbp_at > cfa - 8)))
        return WALK_BAD; /* saved outside the frame: not a rule we trust */
      if (r.flags & RULE_RBP_SAVED) {
        g.rbp = *(const uintptr_t *)rbp_at;
        rbp_from = rbp_at;
        rbp_taken = 0;
      }
      g.pc = *(const uintptr_t *)ra_at;
      log_read(log, 1, ra_at, g.pc);
      g.sp = cfa;
      exact = 0;
    }
    if (g.pc == 0)
      return WALK_DONE;
    if (sps)
      sps[*n] = g.sp;
    ips[(*n)++] = (void *)g.pc;
  }
  return WALK_DONE;
}

/* The last walk's frames into ips (and sps), when a walk from g would
 * read the same words: every one still holds what it held. */
GT_NO_SANITIZE static int replayed(const struct replay *r, uint32_t gen, struct regs g,
                                   void **ips, uintptr_t *sps, int max, int *n) {
  if (!r->walk || r->gen != gen || r->sp != g.sp || (r->rbp_used && r->rbp != g.rbp) ||
      r->max != max || (sps && !r->with_sps))
    return 0;
  struct span s; /* the words lie in its first span, as when they were read */
  if (!span_of(&tls_walk, 1, g.sp, &s) || !readable(&s, g.sp, g.sp + r->read_hi))
    return 0;
  uintptr_t changed = 0; /* no early exit: the loads go in parallel */
  for (uint32_t i = 0; i < r->nra; i++)
    changed |= *(const uintptr_t *)(g.sp + r->ra_at[i]) ^ r->ra[i];
  for (uint32_t i = 0; i < r->nother; i++)
    changed |= *(const uintptr_t *)(g.sp + r->other_at[i]) ^ r->other[i];
  if (changed)
    return 0;
  memcpy(ips, r->ra, (size_t)r->n * sizeof *ips);
  for (int i = 0; sps && i < r->n; i++)
    sps[i] = g.sp + r->sps[i];
  *n = r->n;
  return 1;
}

/* Before a walk: its words are logged afresh. */
static void log_walk(struct replay *r, struct regs g) {
  r->walk = 0;
  r->ok = 1;
  r->rbp_used = 0;
  r->sp = g.sp;
  r->rbp = g.rbp;
  r->nra = r->nother = r->read_hi = 0;
}

/* After it: kept for replayed when it ended well and its words fit. */
static void keep_walk(struct replay *r, uint32_t gen, const uintptr_t *sps, int max,
                      int n, enum walk_end end) {
  if (!r->ok || n > GT_REPLAY_FRAMES || end == WALK_BAD)
    return;
  for (int i = 0; sps && i < n; i++) {
    if (sps[i] - r->sp > UINT32_MAX)
      return;
    r->sps[i] = (uint32_t)(sps[i] - r->sp);
  }
  static _Atomic uint64_t walks; /* numbers unique in the process */
  r->walk = atomic_fetch_add_explicit(&walks, 1, memory_order_relaxed) + 1;
  r->gen = gen;
  r->max = max;
  r->end = (int)end;
  r->n = n;
  r->with_sps = sps != NULL;
}

__attribute__((noinline)) int gt_unwind_sp(void **ips, uintptr_t *sps, int max,
                                           struct gt_unwind_info *info) {
  struct gt_unwind_info none;
  info = info ? info : &none;
  *info = (struct gt_unwind_info){0, 0, 0};
  max = max > GT_UNWIND_MAX ? GT_UNWIND_MAX : max;
  if (max <= 0)
    return 0;
  struct regs g;
  /* This frame's registers at label 0, whose rule says where they go. */
  __asm__ volatile("lea 0f(%%rip), %0\n\t"
                   "mov %%rsp, %1\n\t"
                   "mov %%rbp, %2\n"
                   "0:"
                   : "=r"(g.pc), "=r"(g.sp), "=r"(g.rbp)
                   :
                   : "memory");
  uint32_t gen = unload_count();
  info->unloads = gen;
  struct walk_tls *m = memo_take(gen);
  /* the replay is this thread's, and only where the walk's frames are given */
  struct replay *last = m && g_cached ? &m->last : NULL;
  int n;
  enum walk_end end;
  if (last && replayed(last, gen, g, ips, sps, max, &n)) {
    end = (enum walk_end)last->end;
  } else {
    if (last)
      log_walk(last, g);
    end = walk_frames(m, last, gen, g, ips, sps, max, &n);
    if (last)
      keep_walk(last, gen, sps, max, n, end);
  }
  info->walk = last ? last->walk : 0;
  memo_give(m);
  /* GPUTRACE_UNWIND=backtrace: glibc's frames, unless the walk above saw
   * a frame that would make it read outside the stack (libgcc would
   * fault there). Its first frame is this one: dropped. */
  if (!g_cached && end != WALK_BAD) {
    int k = g_backtrace(ips, max);
    if (k > 0)
      memmove(ips, ips + 1, (size_t)(k - 1) * sizeof *ips);
    if (sps && k > 1)
      memset(sps, 0, (size_t)(k - 1) * sizeof *sps); /* backtrace() gives none */
    atomic_fetch_add_explicit(&g_backtraces, 1, memory_order_relaxed);
    info->how = GT_UNWIND_BACKTRACE;
    return k > 0 ? k - 1 : 0;
  }
  if (end != WALK_DONE) {
    atomic_fetch_add_explicit(&g_cuts, 1, memory_order_relaxed);
    info->how = GT_UNWIND_CUT;
  }
  return n;
}

void gt_unwind_init(int cached, void *(*lookup)(void *handle, const char *name)) {
  g_cached = cached;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc) {
    void *find = lookup(libc, "_dl_find_object"), *bt = lookup(libc, "backtrace");
    memcpy(&g_find_object, &find, sizeof find);
    if (bt)
      memcpy(&g_backtrace, &bt, sizeof bt);
    dlclose(libc);
  }
  if (!cached) { /* glibc loads libgcc_s on backtrace()'s first call: dlopen, malloc */
    void *warm[2];
    g_backtrace(warm, 2);
  }
}

void gt_unwind_counts(struct gt_unwind_counts *out) {
  out->backtrace = atomic_load_explicit(&g_backtraces, memory_order_relaxed);
  out->cut = atomic_load_explicit(&g_cuts, memory_order_relaxed);
  out->rules = atomic_load_explicit(&g_computed, memory_order_relaxed);
  out->cache_bytes = sizeof g_rules;
}
