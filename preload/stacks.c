/* stacks.c — call stacks of traced calls, interned once per process.
 *
 * Contract:
 *  - GPUTRACE_STACKS=alloc (default: allocations, and frees that failed;
 *    a free that succeeded takes its call site's stack, launch.c
 *    gt_site_stack), all (every traced call), none, or alloc+free (every
 *    free's own too). gt_stack_id() is called from gt_record_begin with
 *    the recursion guard held and returns the id of the calling thread's
 *    current stack (0 when off or when it cannot be captured).
 *  - Native frames come from unwind.c: backtrace()'s frames from unwind
 *    rules cached per return address (about 25x cheaper), never faulting
 *    on a bad stack (a stack cut short is flagged GT_F_STACK_CUT; one cut
 *    at its first frame, when the stack's mapping cannot be read, is kept
 *    empty and flagged, never dropped unsaid), or
 *    backtrace() itself under GPUTRACE_UNWIND=backtrace; the shim's own
 *    frames are skipped. Not libunwind: the shim is injected
 *    into programs that may load their own libunwind (two copies under one
 *    soname clash, and Debian ships no position-independent libunwind.a to
 *    hide inside the shim), and libunwind keeps descriptors in the program
 *    (its memory-validation pipe) that a program closing all descriptors
 *    reuses (docs/PERFORMANCE.md, "Stack capture per allocation").
 *  - Native entries carry their address epoch (schema.h): an epoch begins
 *    when a capture's walk finds the loader's unload count changed; the
 *    modules unloaded then are marked gone, a module found later (one
 *    loaded where a gone one was) is a new entry of the module table and a
 *    new MODULE record, in the new epoch, and an address takes its
 *    module's epoch (a lookup cached per thread; none before the first
 *    unload). Code that stayed loaded keeps its entries, so its stacks keep
 *    their ids.
 *  - Off the program's stack (docs/stack-budget.md): a capture's buffers
 *    are thread-local (one capture at a time: the guard is held).
 *  - A thread's last stack, if its walk did not go through the evaluation
 *    loop, is kept by its walk's number (unwind.c's replay): a capture
 *    whose walk replays it, from the same `top`, under the same unload
 *    count, epoch, gone modules and evaluation loop, takes its id without
 *    the entries, the hash or the table; a fork forgets it (the child's
 *    table is its own).
 *  - Python frames replace the evaluation-loop frames of a CPython found in
 *    the process (looked up with dlsym, never linked): they are spliced in
 *    where the innermost _PyEval_EvalFrameDefault frame was. A thread that
 *    holds the GIL gets them from the C API (PyEval_GetFrame, ...); one that
 *    released it (ctypes CDLL, nogil sections, C++ workers calling back)
 *    from pyframes.c, which reads its own frames by layout on the versions
 *    it knows and gives none on the others.
 *  - Each distinct stack is written once as a STACK record; the objects its
 *    addresses fall in are written first as MODULE records, and each distinct
 *    Python (code, line) as a PYFRAME record, so the collector can symbolize
 *    while the process runs or after it died.
 *  - The stack table is lock-free (CAS on a hash) and grows: a chain of
 *    fixed segments of 65,536 slots (1 MiB each), the first static, the
 *    others mmap'd (never malloc: async-signal-safe) when a probe window of
 *    every earlier one is full, published with a release store (a loser of
 *    the race unmaps its own). Slots are never freed, so a stack is always
 *    found in the first segment whose window holds it or an empty slot.
 *    At most GPUTRACE_STACK_CAP distinct stacks (default and largest
 *    1,048,576; the segments at most 2 slots per stack: 32 MiB). Past it, or
 *    when every segment's window is full, the call gets id 0 and is counted
 *    as a dropped STACK record (a DROP of kind stack: one per call left
 *    without its stack); readers say so (leaks, report, pprof). The Python
 *    frame table is one segment; a full window gives id 0. Module scans
 *    take a mutex: they happen only when a stack holds an address outside
 *    every known module (start, dlopen), and when a new epoch begins.
 *  - A forked child forgets everything and re-emits into its own ring.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devtime.h" /* gt_count_dropped */
#include "gputrace/knobs.h"
#include "pyframes.h"
#include "shim.h"
#include "unwind.h"

#define SEG_SLOTS 65536u      /* slots per segment of the stack table */
#define MAX_SEGS 32u          /* 2 slots per stack at the largest cap */
#define STACK_LOST UINT32_MAX /* a slot's id past the cap */
#define PYFRAME_SLOTS 65536u
#define MAX_MODULES 1024
#define UNWIND_MAX (GT_STACK_MAX_DEPTH + 16)

int gt_stacks_mode = GT_STACKS_ALLOC;

struct intern_slot {
  _Atomic uint64_t key; /* hash | 1; 0 = empty */
  _Atomic uint32_t id;  /* 0 until published */
};

static struct intern_slot g_stacks[SEG_SLOTS];       /* segment 0 */
static struct intern_slot *_Atomic g_segs[MAX_SEGS]; /* 1.. mmap'd */
static uint32_t g_stack_cap = GT_STACK_CAP_MAX, g_nsegs = MAX_SEGS;
static struct intern_slot g_pyframes[PYFRAME_SLOTS];
static _Atomic uint32_t g_next_stack = 1, g_next_pyframe = 1;

/* The modules written as MODULE records: appended, never moved (readers
 * scan without the lock); one unloaded since is marked gone, and another
 * module found at its addresses is a new entry. */
struct module {
  uintptr_t start, end;
  uint64_t identity;     /* its path and load bias, hashed */
  uint32_t epoch;        /* the address epoch it was found in */
  _Atomic uint32_t gone; /* unloaded: its addresses may be another's */
  uint32_t present;      /* (under the lock, while unloads are looked for) */
};
static struct module g_modules[MAX_MODULES];
static _Atomic int g_nmodules;
static pthread_mutex_t g_module_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t g_self_start, g_self_end; /* this library */

/* Address epochs (schema.h, GT_STACK_EPOCH_SHIFT): one begins each time a
 * capture finds the loader's unload count (dlpi_subs) changed; the modules
 * gone then are marked, those loaded later are found in the new epoch, and
 * a native entry carries the epoch its module was found in — so a library
 * loaded where an unloaded one was has entries of its own, while the code
 * that stayed keeps its entries (and its stacks their ids). Changed under
 * g_module_lock; g_module_marks counts the modules marked gone (the TLS
 * caches of tags are for one value of it). */
static _Atomic uint32_t g_epoch, g_epoch_unloads, g_module_marks;

/* One capture's working memory, off the program's stack (whose room may
 * be small: docs/stack-budget.md): gt_stack_id runs with the recursion
 * guard held, so a thread makes one capture at a time. */
#define TAG_CACHE 4
/* A thread's last capture, kept when its walk did not go through the
 * evaluation loop (Python frames change under one native walk): a walk that
 * gave that capture's frames again (unwind.c's replay: the same walk
 * number), from the same `top`, under the same loader and module state,
 * is the same stack, and takes its id without the entries, hash and table
 * probe (an allocator called in a loop: most captures; docs/PERFORMANCE.md,
 * "Stack capture per allocation"). id 0: none. */
struct last_stack {
  uint32_t id;
  uint32_t unloads, epoch, marks, python_end; /* the state its entries hold */
  uint64_t walk;
  const void *top;
  uintptr_t top_sp;
};
struct capture_scratch {
  void *ips[UNWIND_MAX];
  uintptr_t sps[UNWIND_MAX]; /* gt_stack_id_at: each frame's stack pointer */
  const void *top;           /* gt_stack_id_at's arguments, for collect */
  uintptr_t top_sp;
  uint64_t entries[GT_STACK_MAX_DEPTH];
  struct gt_pyframe pyframes[GT_STACK_MAX_DEPTH];
  char text[512]; /* a PYFRAME's "name\x1ffile", the main program's path */
  /* the last modules an address was tagged from, for g_module_marks */
  uint32_t tag_marks, tag_next;
  uintptr_t tag_start[TAG_CACHE], tag_end[TAG_CACHE];
  uint64_t tag[TAG_CACHE];
  struct last_stack last; /* the thread's last capture, for same_as_last */
};
static __thread struct capture_scratch tls_scratch
    __attribute__((tls_model("initial-exec")));

/* ---- configuration ---- */

void gt_stacks_configure(void) {
  gt_stacks_mode = (int)gt_knob(GT_KNOB_STACKS);
  g_stack_cap = (uint32_t)gt_knob(GT_KNOB_STACK_CAP);
  g_nsegs = (uint32_t)(((uint64_t)g_stack_cap * 2 + SEG_SLOTS - 1) / SEG_SLOTS);
  g_nsegs = g_nsegs > MAX_SEGS ? MAX_SEGS : g_nsegs;
  if (gt_stacks_mode != GT_STACKS_NONE) /* at start-up, not in the first traced call */
    gt_unwind_init(gt_knob(GT_KNOB_UNWIND) == GT_UNWIND_CACHED, gt_real_dlsym);
}

int gt_stacks_wanted(unsigned kind, unsigned api, int result) {
  if (gt_stacks_mode == GT_STACKS_ALLOC || gt_stacks_mode == GT_STACKS_ALLOC_FREE)
    return kind == GT_KIND_ALLOC || (gt_api_flags(api) & GT_AF_STACK) ||
           (kind == GT_KIND_FREE &&
            (result != 0 || gt_stacks_mode == GT_STACKS_ALLOC_FREE));
  /* API calls only: the trace's own records (stacks, modules) have none */
  return gt_stacks_mode == GT_STACKS_ALL && gt_kind_is_call(kind);
}

/* ---- modules ---- */

/* The module (not gone) holding ip; NULL when none is known. */
static const struct module *module_of(uintptr_t ip) {
  int n = atomic_load_explicit(&g_nmodules, memory_order_acquire);
  for (int i = n; i-- > 0;)
    if (ip >= g_modules[i].start && ip < g_modules[i].end &&
        !atomic_load_explicit(&g_modules[i].gone, memory_order_relaxed))
      return &g_modules[i];
  return NULL;
}

/* The range of a loaded object's PT_LOAD segments; 0 when it has none. */
static int load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi) {
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t s = info->dlpi_addr + ph->p_vaddr;
    *lo = s < *lo ? s : *lo;
    *hi = s + ph->p_memsz > *hi ? s + ph->p_memsz : *hi;
  }
  return *lo < *hi;
}

static uint64_t identity_of(const struct dl_phdr_info *info) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)info->dlpi_addr;
  for (const char *c = info->dlpi_name ? info->dlpi_name : ""; *c; c++)
    h = (h ^ (uint8_t)*c) * 1099511628211ull;
  return h;
}

/* The known module that is this loaded object, else NULL. */
static struct module *same_module(const struct dl_phdr_info *info, uintptr_t lo,
                                  uintptr_t hi) {
  const struct module *m = module_of(lo);
  return m && m->start == lo && m->end == hi && m->identity == identity_of(info)
             ? (struct module *)m
             : NULL;
}

static int emit_module_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  uintptr_t lo, hi;
  int n = atomic_load_explicit(&g_nmodules, memory_order_relaxed);
  if (!load_range(info, &lo, &hi) || n >= MAX_MODULES || same_module(info, lo, hi))
    return 0; /* (none, no room, or already written) */
  char *exe = tls_scratch.text;
  const char *path = info->dlpi_name;
  if (!path || !path[0]) { /* the main program */
    ssize_t len = readlink("/proc/self/exe", exe, sizeof tls_scratch.text - 1);
    exe[len > 0 ? len : 0] = '\0';
    path = exe;
  }
  uint32_t epoch = atomic_load_explicit(&g_epoch, memory_order_relaxed);
  g_modules[n] = (struct module){lo, hi, identity_of(info), epoch, 0, 0};
  atomic_store_explicit(&g_nmodules, n + 1, memory_order_release);
  struct gt_record rec;
  uint64_t now = gt_now();
  gt_record_begin(&rec, GT_API_gputrace_module, now, now, 0);
  rec.u.module.bias = info->dlpi_addr;
  rec.u.module.start = lo;
  rec.u.module.end = hi;
  rec.u.module.epoch = epoch;
  gt_emit_text(&rec, path, strlen(path));
  return 0;
}

static void scan_modules(void) {
  pthread_mutex_lock(&g_module_lock);
  dl_iterate_phdr(emit_module_cb, NULL);
  pthread_mutex_unlock(&g_module_lock);
}

static int mark_present_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  uintptr_t lo, hi;
  struct module *m = load_range(info, &lo, &hi) ? same_module(info, lo, hi) : NULL;
  if (m)
    m->present = 1;
  return 0;
}

/* Under the lock: the modules no longer loaded are marked gone. */
static void mark_gone(void) {
  int n = atomic_load_explicit(&g_nmodules, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    g_modules[i].present = 0;
  dl_iterate_phdr(mark_present_cb, NULL);
  for (int i = 0; i < n; i++)
    if (!g_modules[i].present && !atomic_load(&g_modules[i].gone)) {
      atomic_store(&g_modules[i].gone, 1);
      atomic_fetch_add(&g_module_marks, 1);
    }
}

/* A walk made under the loader's unload count `unloads`: a count newer
 * than the epoch's begins the next epoch (a walk that read the count
 * before another thread's newer one changes nothing). */
static void see_unloads(uint32_t unloads) {
  if (unloads == atomic_load_explicit(&g_epoch_unloads, memory_order_acquire))
    return;
  pthread_mutex_lock(&g_module_lock);
  uint32_t at = atomic_load_explicit(&g_epoch_unloads, memory_order_relaxed);
  if ((int32_t)(unloads - at) > 0) {
    uint32_t epoch = atomic_load_explicit(&g_epoch, memory_order_relaxed);
    atomic_store_explicit(&g_epoch, epoch + (epoch < GT_STACK_EPOCH_MAX),
                          memory_order_relaxed);
    mark_gone();
    atomic_store_explicit(&g_epoch_unloads, unloads, memory_order_release);
  }
  pthread_mutex_unlock(&g_module_lock);
}

/* ip's epoch tag: its module's epoch (the current one for an address in no
 * known module: it is found now); 0 until the first unload, without a
 * lookup. Thread-cached by module range. */
static uint64_t epoch_tag(uintptr_t ip) {
  if (atomic_load_explicit(&g_epoch, memory_order_relaxed) == 0)
    return 0;
  struct capture_scratch *c = &tls_scratch;
  uint32_t marks = atomic_load_explicit(&g_module_marks, memory_order_acquire);
  if (c->tag_marks != marks) {
    memset(c->tag_end, 0, sizeof c->tag_end);
    c->tag_marks = marks;
  }
  for (int i = 0; i < TAG_CACHE; i++)
    if (ip >= c->tag_start[i] && ip < c->tag_end[i])
      return c->tag[i];
  const struct module *m = module_of(ip);
  uint32_t epoch = m ? m->epoch : atomic_load_explicit(&g_epoch, memory_order_relaxed);
  uint64_t tag = (uint64_t)epoch << GT_STACK_EPOCH_SHIFT;
  if (m) {
    int k = (int)(c->tag_next++ % TAG_CACHE);
    c->tag_start[k] = m->start;
    c->tag_end[k] = m->end;
    c->tag[k] = tag;
  }
  return tag;
}

static void find_self(void) {
  Dl_info info;
  if (g_self_end || !dladdr((void *)&find_self, &info))
    return;
  struct link_map *map = NULL;
  if (!dladdr1((void *)&find_self, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
    return;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  const ElfW(Ehdr) *eh = info.dli_fbase;
  const ElfW(Phdr) *ph = (const void *)((const char *)eh + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; i++) {
    if (ph[i].p_type != PT_LOAD)
      continue;
    uintptr_t s = map->l_addr + ph[i].p_vaddr;
    lo = s < lo ? s : lo;
    hi = s + ph[i].p_memsz > hi ? s + ph[i].p_memsz : hi;
  }
  g_self_start = lo;
  g_self_end = hi;
}

/* ---- Python ---- */

struct python_api {
  int (*gil_check)(void);
  void *(*get_frame)(void);
  void *(*frame_code)(void *);
  int (*frame_line)(void *);
  void *(*frame_back)(void *);
  void *(*getattr)(void *, const char *);
  const char *(*utf8)(void *);
  void (*decref)(void *);
  int api;      /* all of the above were found */
  int unlocked; /* pyframes.c reads frames without the GIL */
  uintptr_t eval_start, eval_end;
};
static struct python_api g_py;
static _Atomic int g_py_state; /* 0 unknown, 2 being stored, 1 looked for */

static void *lookup_global(const char *name) {
  return gt_real_dlsym(RTLD_DEFAULT, name);
}

/* Once, at the first capture: out of gt_stack_id's frame (the stack budget). */
__attribute__((noinline, cold)) static void find_python(void) {
  struct python_api p;
  memset(&p, 0, sizeof p);
  p.gil_check = (int (*)(void))lookup_global("PyGILState_Check");
  p.get_frame = (void *(*)(void))lookup_global("PyEval_GetFrame");
  p.frame_code = (void *(*)(void *))lookup_global("PyFrame_GetCode");
  p.frame_line = (int (*)(void *))lookup_global("PyFrame_GetLineNumber");
  p.frame_back = (void *(*)(void *))lookup_global("PyFrame_GetBack");
  p.getattr = (void *(*)(void *, const char *))lookup_global("PyObject_GetAttrString");
  p.utf8 = (const char *(*)(void *))lookup_global("PyUnicode_AsUTF8");
  p.decref = (void (*)(void *))lookup_global("Py_DecRef");
  p.api = p.gil_check && p.get_frame && p.frame_code && p.frame_line && p.frame_back &&
          p.getattr && p.utf8 && p.decref;
  p.unlocked = gt_pyframes_init(lookup_global) != 0;
  void *eval = lookup_global("_PyEval_EvalFrameDefault");
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if ((p.api || p.unlocked) && eval &&
      dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym) {
    p.eval_start = (uintptr_t)eval;
    p.eval_end = (uintptr_t)eval + sym->st_size;
  }
  int expected = 0;
  if (atomic_compare_exchange_strong(&g_py_state, &expected, 2)) {
    g_py = p;
    atomic_store(&g_py_state, 1);
  }
  /* another thread won: it is copying the same answer */
  for (int spin = 0; atomic_load(&g_py_state) != 1 && spin < 1000000; spin++)
    ;
}

static uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* A stack's identity in the table (its 64-bit hash is its key). Four
 * lanes, each a rotate-multiply per entry, mixed at the end: a chain of
 * mix64 per entry was half of a warm capture's cost (its latency, ~12
 * cycles an entry; docs/PERFORMANCE.md, "Stack capture per allocation"). */
static inline uint64_t lane_step(uint64_t lane, uint64_t entry) {
  uint64_t h = (lane ^ entry) * 0x9FB21C651E98DF25ull;
  return h << 29 | h >> 35;
}
static uint64_t stack_hash(const uint64_t *entries, int depth) {
  uint64_t a = 0x9E3779B97F4A7C15ull, b = 0xC2B2AE3D27D4EB4Full,
           c = 0x165667B19E3779F9ull, d = 0x27D4EB2F165667C5ull;
  int i = 0;
  for (; i + 4 <= depth; i += 4) {
    a = lane_step(a, entries[i]);
    b = lane_step(b, entries[i + 1]);
    c = lane_step(c, entries[i + 2]);
    d = lane_step(d, entries[i + 3]);
  }
  for (; i < depth; i++)
    a = lane_step(a, entries[i] + (uint64_t)i); /* the tail: its position mixed in */
  return mix64(mix64(a ^ mix64(b)) ^ mix64(c ^ mix64(d)));
}

/* Find or claim `key` in a table's probe window; *fresh says the caller
 * must publish it. NULL: the window is full of other keys. */
static struct intern_slot *intern(struct intern_slot *table, uint32_t slots, uint64_t key,
                                  int *fresh) {
  key |= 1;
  *fresh = 0;
  for (uint32_t i = 0; i < 64; i++) {
    struct intern_slot *s = &table[(key + i) & (slots - 1)];
    uint64_t cur = atomic_load_explicit(&s->key, memory_order_acquire);
    if (cur == 0) {
      uint64_t expected = 0;
      if (atomic_compare_exchange_strong(&s->key, &expected, key)) {
        *fresh = 1;
        return s;
      }
      cur = expected;
    }
    if (cur == key)
      return s;
  }
  return NULL;
}

/* Segment i of the stack table, mapped and published on first need. */
static struct intern_slot *segment(uint32_t i) {
  if (i == 0)
    return g_stacks;
  struct intern_slot *seg = atomic_load_explicit(&g_segs[i], memory_order_acquire);
  if (seg)
    return seg;
  size_t bytes = sizeof(struct intern_slot) * SEG_SLOTS;
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  struct intern_slot *expected = NULL;
  if (atomic_compare_exchange_strong_explicit(&g_segs[i], &expected, m,
                                              memory_order_acq_rel, memory_order_acquire))
    return m;
  munmap(m, bytes); /* another thread published one first */
  return expected;
}

/* Find or claim `key` in the first segment whose window holds it or room. */
static struct intern_slot *intern_stack(uint64_t key, int *fresh) {
  for (uint32_t i = 0; i < g_nsegs; i++) {
    struct intern_slot *seg = segment(i);
    if (!seg)
      return NULL;
    struct intern_slot *s = intern(seg, SEG_SLOTS, key, fresh);
    if (s)
      return s;
  }
  return NULL;
}

/* The published id of a slot another thread claimed (it publishes as soon
 * as its record is written): spin a little, then yield to it (it may be
 * preempted on a loaded machine); bounded, 0 when it never comes. */
static uint32_t wait_id(struct intern_slot *s) {
  uint32_t id;
  for (int spin = 0; (id = atomic_load_explicit(&s->id, memory_order_acquire)) == 0;
       spin++) {
    if (spin > 1000 + 100000)
      return 0;
    if (spin > 1000)
      sched_yield();
  }
  return id;
}

/* "name\x1ffile" of a code object: through the C API with the GIL, else by
 * layout (pyframes.c). */
static size_t pyframe_text(void *code, int gil, char *text, size_t cap) {
  if (!gil)
    return gt_pyframes_text(code, text, cap);
  void *name = g_py.getattr(code, "co_name");
  void *file = g_py.getattr(code, "co_filename");
  const char *n = name ? g_py.utf8(name) : NULL, *f = file ? g_py.utf8(file) : NULL;
  int len = snprintf(text, cap, "%s\x1f%s", n ? n : "?", f ? f : "?");
  if (name)
    g_py.decref(name);
  if (file)
    g_py.decref(file);
  return len < 0 ? 0 : len < (int)cap ? (size_t)len : cap - 1;
}

__attribute__((noinline)) static uint32_t pyframe_id(void *code, int line, int gil) {
  uint64_t key = mix64((uint64_t)(uintptr_t)code * 31 + (uint64_t)(unsigned)line);
  int fresh;
  struct intern_slot *s = intern(g_pyframes, PYFRAME_SLOTS, key, &fresh);
  if (!s)
    return 0;
  if (!fresh)
    return wait_id(s);
  uint32_t id = atomic_fetch_add(&g_next_pyframe, 1);
  char *text = tls_scratch.text;
  size_t len = pyframe_text(code, gil, text, sizeof tls_scratch.text);
  struct gt_record rec;
  uint64_t now = gt_now();
  gt_record_begin(&rec, GT_API_gputrace_pyframe, now, now, 0);
  rec.u.pyframe.id = id;
  rec.u.pyframe.line = (uint32_t)line;
  gt_emit_text(&rec, text, len);
  atomic_store_explicit(&s->id, id, memory_order_release);
  return id;
}

/* Through the C API: only with the GIL held. */
static int python_frames_api(uint64_t *out, int max) {
  int n = 0;
  void *frame = g_py.get_frame(); /* borrowed */
  void *owned = NULL;
  while (frame && n < max) {
    void *code = g_py.frame_code(frame); /* new reference */
    uint32_t id = code ? pyframe_id(code, g_py.frame_line(frame), 1) : 0;
    if (code)
      g_py.decref(code);
    if (id)
      out[n++] = GT_STACK_PYFRAME | id;
    void *back = g_py.frame_back(frame); /* new reference */
    if (owned)
      g_py.decref(owned);
    owned = frame = back;
  }
  if (owned)
    g_py.decref(owned);
  return n;
}

/* This thread's Python frames, innermost first, as GT_STACK_PYFRAME ids. */
static int python_frames(uint64_t *out, int max) {
  if (atomic_load(&g_py_state) != 1)
    return 0;
  if (g_py.api && g_py.gil_check())
    return python_frames_api(out, max);
  if (!g_py.unlocked)
    return 0;
  struct gt_pyframe *frames = tls_scratch.pyframes;
  int n = gt_pyframes_read(frames,
                           max < (int)GT_STACK_MAX_DEPTH ? max : (int)GT_STACK_MAX_DEPTH);
  int k = 0;
  for (int i = 0; i < n; i++) {
    uint32_t id = pyframe_id((void *)frames[i].code, frames[i].line, 0);
    if (id)
      out[k++] = GT_STACK_PYFRAME | id;
  }
  return k;
}

/* ---- stacks ---- */

/* (noinline: its record is not on the stack while gt_unwind walks) */
__attribute__((noinline)) static void emit_stack(uint32_t id, const uint64_t *entries,
                                                 int depth, int python, unsigned how) {
  struct gt_record rec;
  uint64_t now = gt_now();
  gt_record_begin(&rec, GT_API_gputrace_stack, now, now, 0);
  rec.flags |= (how & GT_UNWIND_BACKTRACE) ? GT_F_UNWIND_FALLBACK : 0u;
  rec.flags |= (how & GT_UNWIND_CUT) ? GT_F_STACK_CUT : 0u;
  rec.u.stack.id = id;
  rec.u.stack.depth = (uint32_t)depth;
  rec.u.stack.python = (uint32_t)python;
  gt_emit_text(&rec, (const char *)entries, (size_t)depth * sizeof *entries);
}

/* The frame whose stack pointer at its call is `sp` (a hook's caller's, as
 * the hook saw it), or the last below it (the call that followed passed
 * arguments on the stack: at most GT_TOP_SLACK bytes of them); -1: none
 * (no stack pointers: backtrace()). Frames go up the stack, so the frames
 * before it are the ones it called (nvcc's launch stubs). */
#define GT_TOP_SLACK 512u
static int top_frame(const uintptr_t *sps, int n, uintptr_t sp) {
  int at = -1;
  for (int i = 0; i < n && sps[i] != 0 && sps[i] <= sp; i++)
    at = i;
  return at >= 0 && sp - sps[at] <= GT_TOP_SLACK ? at : -1;
}

/* The walk from the caller's frame: its return addresses, starting at
 * `top` in the frame that called it when the capture names one. */
static int walk(void ***ips_out, struct gt_unwind_info *info) {
  if (atomic_load(&g_py_state) != 1)
    find_python(); /* where the eval loop is, before the first walk */
  void **ips = tls_scratch.ips;
  int n = gt_unwind_sp(ips, tls_scratch.sps, UNWIND_MAX, info);
  see_unloads(info->unloads);
  const void *top = tls_scratch.top;
  int from = top ? top_frame(tls_scratch.sps, n, tls_scratch.top_sp) : -1;
  if (from >= 0) { /* the stack starts at `top`, in that frame */
    ips += from;
    n -= from;
    ips[0] = (void *)(uintptr_t)top;
  }
  *ips_out = ips;
  return n;
}

/* What a walk's entries depend on besides its frames: the loader's unload
 * count, the address epoch, the modules marked gone, where the evaluation
 * loop is (a digest: it only has to differ once the loop is found). */
static void capture_state(struct last_stack *l, const struct gt_unwind_info *info) {
  l->unloads = info->unloads;
  l->epoch = atomic_load_explicit(&g_epoch, memory_order_relaxed);
  l->marks = atomic_load_explicit(&g_module_marks, memory_order_acquire);
  l->python_end = (uint32_t)g_py.eval_end ^ (uint32_t)atomic_load(&g_py_state);
  l->walk = info->walk;
  l->top = tls_scratch.top;
  l->top_sp = tls_scratch.top_sp;
}

/* This thread's last capture's id when this walk is the same stack. */
static uint32_t same_as_last(const struct gt_unwind_info *info) {
  struct last_stack *l = &tls_scratch.last, now;
  if (!l->id || !info->walk || info->walk != l->walk)
    return 0;
  capture_state(&now, info);
  return now.unloads == l->unloads && now.epoch == l->epoch && now.marks == l->marks &&
                 now.python_end == l->python_end && now.top == l->top &&
                 now.top_sp == l->top_sp
             ? l->id
             : 0;
}

/* A walk's native frames outside this library, tagged with their address
 * epoch, with Python frames spliced in where the innermost evaluation-loop
 * frame was (the others then dropped); *spliced: the walk went through
 * the evaluation loop (its Python frames change under the same walk). */
static int collect(void *const *ips, int n, uint64_t *out, int *spliced_out) {
  int depth = 0, spliced = 0, npy = 0;
  for (int i = 0; i < n && depth < (int)GT_STACK_MAX_DEPTH; i++) {
    uintptr_t ip = (uintptr_t)ips[i];
    if (ip >= g_self_start && ip < g_self_end)
      continue;
    if (g_py.eval_end && ip >= g_py.eval_start && ip < g_py.eval_end) {
      if (!spliced)
        depth += npy = python_frames(out + depth, (int)GT_STACK_MAX_DEPTH - depth);
      spliced = 1;
      if (npy > 0)
        continue; /* evaluation-loop frames are replaced by Python frames */
    }
    out[depth++] = (uint64_t)ip | epoch_tag(ip);
  }
  *spliced_out = spliced;
  return depth;
}

/* The id of the stack `entries` holds, written as a STACK record (and its
 * modules first) when it is new; 0 (counted as a dropped STACK) past the
 * cap or with the table full. */
static uint32_t stack_id_of(const uint64_t *entries, int depth, unsigned how) {
  uint64_t hash = stack_hash(entries, depth);
  int python = 0;
  for (int i = 0; i < depth; i++)
    python += (entries[i] & GT_STACK_PYFRAME) != 0;
  int fresh;
  struct intern_slot *s = intern_stack(hash ^ (uint64_t)depth, &fresh);
  uint32_t id = !s ? STACK_LOST : fresh ? atomic_fetch_add(&g_next_stack, 1) : wait_id(s);
  if (fresh && id > g_stack_cap) {
    id = STACK_LOST; /* past the cap: the slot says so to later callers */
    atomic_store_explicit(&s->id, id, memory_order_release);
  }
  if (id == STACK_LOST || id == 0) {
    gt_count_dropped(GT_KIND_STACK, 1);
    return 0;
  }
  if (!fresh)
    return id;
  for (int i = 0; i < depth; i++) {
    uint64_t e = entries[i];
    if (!(e & GT_STACK_PYFRAME) && !module_of(gt_stack_addr(e))) {
      scan_modules();
      break;
    }
  }
  emit_stack(id, entries, depth, python, how);
  atomic_store_explicit(&s->id, id, memory_order_release);
  return id;
}

uint32_t gt_stack_id(void) {
  return gt_stack_id_at(NULL, 0);
}

__attribute__((noinline)) uint32_t gt_stack_id_at(const void *top, uintptr_t top_sp) {
  if (gt_stacks_mode == GT_STACKS_NONE)
    return 0;
  find_self();
  uint64_t *entries = tls_scratch.entries;
  struct gt_unwind_info info;
  /* kept in the scratch, not in registers across the walk (docs/stack-budget.md) */
  tls_scratch.top = top;
  tls_scratch.top_sp = top_sp;
  void **ips;
  int n = walk(&ips, &info);
  uint32_t id = same_as_last(&info);
  if (id)
    return id;
  tls_scratch.last.id = 0;
  int spliced;
  int depth = collect(ips, n, entries, &spliced);
  /* No frame at all: none to give, unless the walk was cut at its first
   * (the stack's mapping unreadable: a root without /proc): that stack is
   * kept, empty and marked cut, so the call says its stack was lost. */
  if (depth == 0 && !(info.how & GT_UNWIND_CUT))
    return 0;
  id = stack_id_of(entries, depth, info.how);
  if (id && !spliced && info.walk) {
    tls_scratch.last.id = id;
    capture_state(&tls_scratch.last, &info);
  }
  return id;
}

void gt_stacks_after_fork(void) {
  /* The parent's stacks and modules live in the parent's ring (under its
   * pid): this process writes its own, so forget them. */
  memset(g_stacks, 0, sizeof g_stacks);
  for (uint32_t i = 1; i < MAX_SEGS; i++) {
    struct intern_slot *seg = atomic_exchange(&g_segs[i], NULL);
    if (seg)
      munmap(seg, sizeof(struct intern_slot) * SEG_SLOTS);
  }
  memset(g_pyframes, 0, sizeof g_pyframes);
  atomic_store(&g_next_stack, 1);
  atomic_store(&g_next_pyframe, 1);
  atomic_store(&g_nmodules, 0); /* written again, in the parent's epoch */
  atomic_fetch_add(&g_module_marks, 1);
  memset(tls_scratch.tag_end, 0, sizeof tls_scratch.tag_end);
  tls_scratch.last.id = 0; /* an id of the parent's table */
  pthread_mutex_init(&g_module_lock, NULL);
}
