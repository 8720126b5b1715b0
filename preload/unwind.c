/* unwind.c — native stacks at a cached rule's cost (x86-64).
 *
 * Contract (unwind.h has the API):
 *  - gt_unwind gives exactly the frames glibc's backtrace() gives at the
 *    same place. It walks the stack itself with one rule per return
 *    address: the CFA (canonical frame address) is rsp or rbp plus an
 *    offset, the return address and the saved rbp sit at fixed offsets from
 *    it. Rules come from each module's .eh_frame_hdr and .eh_frame (the
 *    memory the loader mapped: no file, no descriptor, no allocation),
 *    found with _dl_find_object (lock-free, glibc 2.35+; dl_iterate_phdr
 *    before), by interpreting the FDE's call-frame instructions up to the
 *    address, as libgcc does — then cached.
 *  - The cache is a static table of GT_RULE_SLOTS slots, direct-mapped by
 *    address (a collision replaces), each a seqlock: readers never wait
 *    and never see a torn rule; a writer that finds a slot being written
 *    skips caching. Entries carry the loader's unload count (dlpi_subs,
 *    read once a stack): a dlclose makes every cached rule stale, so a
 *    library loaded later at the same address gets its own rules. In
 *    front of it, each thread keeps its last walk's rules by frame (TLS,
 *    GT_MEMO_FRAMES): a stack taken again reads them without waiting for
 *    its return addresses. A walk interrupting another (a signal handler's)
 *    uses the table alone.
 *  - Backtrace() means glibc's own (found in libc.so.6 at init), not an
 *    interposer's such as a sanitizer's, which adds a frame of its own.
 *  - Whatever the fast path does not handle falls back to backtrace() for
 *    the whole stack, counted, never truncated: a rule it cannot express
 *    (a CFA expression or register other than rsp/rbp, rbp or the return
 *    address kept by expression or in a register, a signal frame's 'S'
 *    CIE), an address in no module or with no FDE (JIT code: libgcc may
 *    know frames registered with __register_frame), a step that does not
 *    go up the stack. Such rules are cached as "fall back", so the check
 *    costs a lookup the next time.
 *  - Ending as backtrace() ends: a frame whose return address is undefined
 *    (_start, a thread's start) is the last; a return address of 0 is not
 *    given. Frame 0's rule is looked up at its exact address, callers' at
 *    the return address less 1 (the call, which may end a function).
 *  - Reads of the stack are of this thread's own frames: every step must
 *    move the CFA up by less than GT_MAX_FRAME, 8-aligned, or the stack
 *    falls back. No sanitizer instruments them (they read other frames'
 *    slots by design).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _dl_find_object's types */
#endif
#include "unwind.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define GT_RULE_SLOTS 32768u    /* 1 MiB: 32 B a slot */
#define GT_MAX_FRAME (1u << 20) /* a larger frame falls back (exact, slower) */
#define GT_CFI_STATES 8         /* DW_CFA_remember_state nesting */
#define GT_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

/* DWARF register numbers (x86-64 psABI) */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* ---- rules ---- */

/* One frame's step, packed in 64 bits for the seqlock'd cache. */
enum {
  RULE_CFA_RBP = 1u << 0,   /* CFA = rbp + cfa_off, else rsp + cfa_off */
  RULE_RBP_SAVED = 1u << 1, /* caller's rbp at CFA + rbp_off, else unchanged */
  RULE_END = 1u << 2,       /* return address undefined: the outermost frame */
  RULE_FALLBACK = 1u << 3,  /* not expressible: backtrace() */
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
static const struct rule k_fallback = {0, 0, 0, RULE_FALLBACK};

/* ---- the cache ---- */

struct rule_slot {
  _Atomic uint32_t seq; /* odd while written */
  _Atomic uint32_t gen; /* the unload count the rule was computed under */
  _Atomic uint64_t addr;
  _Atomic uint64_t rule;
  uint64_t pad;
};
static struct rule_slot g_rules[GT_RULE_SLOTS];
static _Atomic uint64_t g_fallbacks, g_computed;
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

static int find_module(uintptr_t addr, struct module *m) {
  if (g_find_object) {
    struct dl_find_object o;
    if (g_find_object((void *)addr, &o) != 0 || !o.dlfo_eh_frame)
      return 0;
    *m = (struct module){o.dlfo_map_start, o.dlfo_map_end, o.dlfo_eh_frame};
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
  uint8_t cfa_reg;  /* REG_RSP or REG_RBP; other: fall back */
  uint8_t cfa_expr; /* DW_CFA_def_cfa_expression in force */
  uint8_t rbp_how, ra_how;
  int64_t cfa_off, rbp_off, ra_off;
};
enum { HOW_SAME, HOW_OFFSET, HOW_UNDEFINED, HOW_OTHER };

struct cie {
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_enc;
  uint8_t has_z; /* FDEs have augmentation data */
  const uint8_t *insns, *end;
};

/* Set register reg's rule; only rbp and the return address matter. */
static void set_reg(struct cfi_row *r, uint64_t reg, int how, int64_t off) {
  if (reg == REG_RBP)
    r->rbp_how = (uint8_t)how, r->rbp_off = off;
  else if (reg == REG_RA)
    r->ra_how = (uint8_t)how, r->ra_off = off;
}

/* Run instructions [c.p, end) while their location is at or below addr,
 * starting at `loc`; `init` is the CIE's row (DW_CFA_restore). Returns 0
 * on an instruction this unwinder does not take. */
static int run_cfi(struct cur *c, const uint8_t *end, const struct cie *cie,
                   uintptr_t loc, uintptr_t addr, struct cfi_row *row,
                   const struct cfi_row *init) {
  struct cfi_row saved[GT_CFI_STATES];
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
      set_reg(row, reg, reg == REG_RBP ? init->rbp_how : init->ra_how,
              reg == REG_RBP ? init->rbp_off : init->ra_off);
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
      set_reg(row, reg, reg == REG_RBP ? init->rbp_how : init->ra_how,
              reg == REG_RBP ? init->rbp_off : init->ra_off);
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
    case 0x0c: row->cfa_reg = (uint8_t)rd_uleb(c); row->cfa_off = (int64_t)rd_uleb(c); row->cfa_expr = 0; continue;
    case 0x0d: row->cfa_reg = (uint8_t)rd_uleb(c); continue;
    case 0x0e: row->cfa_off = (int64_t)rd_uleb(c); continue;
    case 0x0f: skip(c, rd_uleb(c)); row->cfa_expr = 1; continue;
    case 0x10: case 0x16: /* (val_)expression: reg, block */
      reg = rd_uleb(c);
      skip(c, rd_uleb(c));
      set_reg(row, reg, HOW_OTHER, 0);
      continue;
    case 0x11: reg = rd_uleb(c); set_reg(row, reg, HOW_OFFSET, rd_sleb(c) * cie->data_align); continue;
    case 0x12:
      row->cfa_reg = (uint8_t)rd_uleb(c);
      row->cfa_off = rd_sleb(c) * cie->data_align;
      row->cfa_expr = 0;
      continue;
    case 0x13: row->cfa_off = rd_sleb(c) * cie->data_align; continue;
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
  if (ra != REG_RA)
    return 0;
  cie->fde_enc = 0; /* absptr */
  cie->has_z = aug[0] == 'z';
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
      else
        return 0; /* 'S' (a signal frame), 'B', ...: backtrace() knows */
    }
    if (c.bad || c.p > after || after > cie->end)
      return 0;
    c.p = after;
  }
  cie->insns = c.p;
  return !c.bad;
}

/* The rule for the frame whose (looked-up) address is addr. */
static struct rule compute_rule(uintptr_t addr) {
  struct module m;
  const uint8_t *fde;
  if (!find_module(addr, &m) || !(fde = find_fde(&m, addr)))
    return k_fallback;
  struct cur c = {fde, m.lo, m.hi, 0};
  uint64_t len = rd_u(&c, 4);
  if (c.bad || len == 0 || len == 0xffffffffu || !need(&c, len))
    return k_fallback;
  const uint8_t *end = c.p + len;
  const uint8_t *id_at = c.p;
  uint32_t cie_off = (uint32_t)rd_u(&c, 4);
  struct cie cie;
  struct cur cc = {id_at - cie_off, m.lo, m.hi, 0};
  if (cie_off == 0 || !read_cie(cc, &cie))
    return k_fallback;
  uintptr_t start = (uintptr_t)rd_enc(&c, cie.fde_enc, 0);
  uintptr_t range = (uintptr_t)rd_enc(&c, cie.fde_enc & 0x0fu, 0);
  if (c.bad || addr < start || addr - start >= range)
    return k_fallback;
  if (cie.has_z)
    skip(&c, rd_uleb(&c)); /* augmentation data (the LSDA) */
  struct cfi_row init = {REG_RSP, 0, HOW_SAME, HOW_UNDEFINED, 0, 0, 0}, row;
  struct cur ci = {cie.insns, m.lo, m.hi, 0};
  if (!run_cfi(&ci, cie.end, &cie, start, UINTPTR_MAX, &init, &init))
    return k_fallback;
  row = init;
  if (!run_cfi(&c, end, &cie, start, addr, &row, &init))
    return k_fallback;
  struct rule r = {(int32_t)row.cfa_off, (int16_t)row.rbp_off, (int8_t)row.ra_off, 0};
  if (row.ra_how == HOW_UNDEFINED) {
    r.flags = RULE_END;
    return r;
  }
  if (row.cfa_expr || (row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) ||
      row.ra_how != HOW_OFFSET || row.cfa_off != r.cfa_off || row.ra_off != r.ra_off ||
      row.rbp_off != r.rbp_off || (row.rbp_how != HOW_SAME && row.rbp_how != HOW_OFFSET))
    return k_fallback;
  r.flags = (uint8_t)((row.cfa_reg == REG_RBP ? RULE_CFA_RBP : 0) |
                      (row.rbp_how == HOW_OFFSET ? RULE_RBP_SAVED : 0));
  return r;
}

/* ---- the walk ---- */

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

static struct rule rule_for(uintptr_t addr, uint32_t gen) {
  struct rule r;
  if (cache_get(addr, gen, &r))
    return r;
  r = compute_rule(addr);
  atomic_fetch_add_explicit(&g_computed, 1, memory_order_relaxed);
  cache_put(addr, gen, r);
  return r;
}

/* Walk from frame 0 (pc, sp, rbp: gt_unwind's own, at its label); -1 to
 * fall back. */
/* This thread's last walk: each frame's looked-up address and rule. A
 * stack taken again (the same call site: most of them) finds its rules
 * here in order, off the walk's chain of dependent loads (return address,
 * then its slot in the table, then the next return address): these loads
 * do not wait for the return address. Worth ~40 % of a warm walk
 * (docs/PERFORMANCE.md). Left alone by a walk that interrupts another (a
 * signal handler's). */
#define GT_MEMO_FRAMES 32
struct memo {
  uint32_t gen;  /* the unload count its rules are for */
  uint32_t busy; /* a walk of this thread uses it */
  uintptr_t addr[GT_MEMO_FRAMES];
  uint64_t rule[GT_MEMO_FRAMES];
};
static __thread struct memo tls_memo __attribute__((tls_model("initial-exec")));

static struct memo *memo_take(uint32_t gen) {
  struct memo *m = &tls_memo;
  if (m->busy)
    return NULL;
  m->busy = 1;
  atomic_signal_fence(memory_order_seq_cst); /* busy before any use */
  if (m->gen != gen) {
    memset(m->addr, 0, sizeof m->addr);
    m->gen = gen;
  }
  return m;
}

static void memo_give(struct memo *m) {
  if (!m)
    return;
  atomic_signal_fence(memory_order_seq_cst); /* every use before busy = 0 */
  m->busy = 0;
}

static struct rule frame_rule(struct memo *m, int frame, uintptr_t look, uint32_t gen) {
  if (!m || frame >= GT_MEMO_FRAMES)
    return rule_for(look, gen);
  if (m->addr[frame] == look)
    return rule_unpack(m->rule[frame]);
  struct rule r = rule_for(look, gen);
  m->addr[frame] = look;
  m->rule[frame] = rule_pack(r);
  return r;
}

GT_NO_SANITIZE static int walk_frames(struct memo *m, uint32_t gen, uintptr_t pc,
                                      uintptr_t sp, uintptr_t rbp, void **ips, int max) {
  int n = 0, frame = 0;
  for (uintptr_t look = pc;; look = pc - 1, frame++) {
    struct rule r = frame_rule(m, frame, look, gen);
    if (r.flags & RULE_FALLBACK)
      return -1;
    if (r.flags & RULE_END)
      return n;
    uintptr_t cfa =
        ((r.flags & RULE_CFA_RBP) ? rbp : sp) + (uintptr_t)(intptr_t)r.cfa_off;
    if (cfa <= sp || cfa - sp > GT_MAX_FRAME || (cfa & 7u))
      return -1; /* not up the stack: not a frame we trust */
    uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)r.ra_off;
    uintptr_t rbp_at = cfa + (uintptr_t)(intptr_t)r.rbp_off;
    if (ra_at < sp || ra_at >= cfa ||
        ((r.flags & RULE_RBP_SAVED) && (rbp_at < sp || rbp_at >= cfa)))
      return -1; /* saved outside the frame: not a rule we trust */
    uintptr_t ra = *(const uintptr_t *)ra_at;
    if (r.flags & RULE_RBP_SAVED)
      rbp = *(const uintptr_t *)rbp_at;
    sp = cfa;
    pc = ra;
    if (ra == 0 || n == max)
      return n;
    ips[n++] = (void *)ra;
  }
}

static int walk(uintptr_t pc, uintptr_t sp, uintptr_t rbp, void **ips, int max) {
  uint32_t gen = unload_count();
  struct memo *m = memo_take(gen);
  int n = walk_frames(m, gen, pc, sp, rbp, ips, max);
  memo_give(m);
  return n;
}

__attribute__((noinline)) int gt_unwind(void **ips, int max, int *fell_back) {
  max = max > GT_UNWIND_MAX ? GT_UNWIND_MAX : max;
  if (fell_back)
    *fell_back = !g_cached;
  if (max <= 0)
    return 0;
  if (g_cached) {
    uintptr_t pc, sp, rbp;
    /* This frame's registers at label 0, whose rule says where they go. */
    __asm__ volatile("lea 0f(%%rip), %0\n\t"
                     "mov %%rsp, %1\n\t"
                     "mov %%rbp, %2\n"
                     "0:"
                     : "=r"(pc), "=r"(sp), "=r"(rbp)
                     :
                     : "memory");
    int n = walk(pc, sp, rbp, ips, max);
    if (n >= 0)
      return n;
    atomic_fetch_add_explicit(&g_fallbacks, 1, memory_order_relaxed);
    if (fell_back)
      *fell_back = 1;
  }
  /* backtrace() from here: its first frame is this one, not the caller's. */
  void *all[GT_UNWIND_MAX + 1];
  int n = g_backtrace(all, max + 1);
  if (n <= 1)
    return 0;
  memcpy(ips, all + 1, (size_t)(n - 1) * sizeof *ips);
  return n - 1;
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
  void *warm[2];
  g_backtrace(warm, 2);
}

void gt_unwind_counts(struct gt_unwind_counts *out) {
  out->fallback = atomic_load_explicit(&g_fallbacks, memory_order_relaxed);
  out->rules = atomic_load_explicit(&g_computed, memory_order_relaxed);
  out->cache_bytes = sizeof g_rules;
}
