/* pyframes.c — the calling thread's Python frames, read without the GIL.
 *
 * Contract: see pyframes.h. Why it is safe without the GIL: everything read
 * belongs to the calling thread or never changes. The thread state comes
 * from PyGILState_GetThisThreadState (a pthread_getspecific on CPython's
 * auto-thread-state key; callable without the GIL by design, it is what
 * PyGILState_Ensure starts from). The frames on its chain are this
 * thread's and stay put while it is inside the C call that reached the
 * shim; each holds a strong reference to its code object, whose name, file
 * name and location table are immutable. Other threads may create frame
 * objects for these frames or specialise the bytecode, which touches
 * nothing read here. PyCode_Addr2Line is not used: on 3.11 it reads a line
 * array another thread may be filling in (_co_linearray); the location
 * table is decoded here instead (Objects/locations.md).
 *
 * The one hazard: at finalization CPython frees the thread states of
 * daemon threads that may still be inside C calls. The walk is skipped once
 * Py_IsFinalizing() says so, and a thread state whose thread id is not ours
 * is not followed; a walk already under way when finalization starts
 * (microseconds, on a thread that is about to be stopped) is not covered.
 */
#include "pyframes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "pyframes_layout.h"

#define WALK_STEPS 1024 /* frames followed at most, skipped ones included */

struct python {
  struct gt_pylayout lay;
  void *(*this_thread)(void); /* PyGILState_GetThisThreadState */
  int (*finalizing)(void);    /* Py_IsFinalizing (3.13) / _Py_IsFinalizing */
  uintptr_t code_type, str_type, bytes_type;
};
static struct python g_python;
enum { UNKNOWN, SEARCHING, FOUND, NONE };
static _Atomic int g_state;

/* ---- reading memory by layout ---- */

/* A user-space address, 8-byte aligned: every object and frame is. */
static int plausible(uintptr_t p) {
  return p >= 4096 && p < ((uintptr_t)1 << 56) && (p & 7) == 0;
}

static uintptr_t ld(uintptr_t base, uint32_t off) {
  uintptr_t v;
  memcpy(&v, (const void *)(base + off), sizeof v);
  return v;
}

static int32_t ld32(uintptr_t base, uint32_t off) {
  int32_t v;
  memcpy(&v, (const void *)(base + off), sizeof v);
  return v;
}

static int is_object(uintptr_t p, uintptr_t type) {
  return plausible(p) && ld(p, GT_PY_OB_TYPE) == type;
}

/* ---- finding the interpreter ---- */

static int inside(uint64_t size, uint64_t off, uint64_t width) {
  return off + width <= size && size < 65536;
}

/* 3.13: every offset from the interpreter's own _Py_DebugOffsets. */
static int from_debug_offsets(struct gt_pylayout *l, const struct gt_pydebug_313 *d,
                              unsigned long version) {
  if (!d || memcmp(d->cookie, "xdebugpy", 8) != 0 || d->version >> 16 != version >> 16 ||
      d->free_threaded || d->pyobject.ob_type != GT_PY_OB_TYPE)
    return 0;
  uint64_t ts = d->thread_state.size, fr = d->interpreter_frame.size,
           co = d->code_object.size, str = d->unicode_object.size;
  if (!inside(ts, d->thread_state.current_frame, 8) ||
      !inside(ts, d->thread_state.thread_id, 8) ||
      !inside(fr, d->interpreter_frame.previous, 8) ||
      !inside(fr, d->interpreter_frame.executable, 8) ||
      !inside(fr, d->interpreter_frame.instr_ptr, 8) ||
      !inside(fr, d->interpreter_frame.owner, 1) ||
      !inside(co, d->code_object.filename, 8) || !inside(co, d->code_object.name, 8) ||
      !inside(co, d->code_object.linetable, 8) ||
      !inside(co, d->code_object.firstlineno, 4) ||
      !inside(co, d->code_object.co_code_adaptive, 1) ||
      !inside(str, d->unicode_object.state, 4) ||
      !inside(str, d->unicode_object.length, 8) ||
      !inside(str, d->unicode_object.asciiobject_size, 0) ||
      !inside(d->bytes_object.size, d->bytes_object.ob_sval, 1))
    return 0;
  *l = (struct gt_pylayout){
      .ts_frame = (uint32_t)d->thread_state.current_frame,
      .ts_thread_id = (uint32_t)d->thread_state.thread_id,
      .fr_code = (uint32_t)d->interpreter_frame.executable,
      .fr_previous = (uint32_t)d->interpreter_frame.previous,
      .fr_instr = (uint32_t)d->interpreter_frame.instr_ptr,
      .fr_owner = (uint32_t)d->interpreter_frame.owner,
      .co_filename = (uint32_t)d->code_object.filename,
      .co_name = (uint32_t)d->code_object.name,
      .co_linetable = (uint32_t)d->code_object.linetable,
      .co_firstlineno = (uint32_t)d->code_object.firstlineno,
      .co_code = (uint32_t)d->code_object.co_code_adaptive,
      .str_length = (uint32_t)d->unicode_object.length,
      .str_state = (uint32_t)d->unicode_object.state,
      .str_ascii_size = (uint32_t)d->unicode_object.asciiobject_size,
      /* PyCompactUnicodeObject adds utf8_length and utf8 (unicodeobject.h) */
      .str_compact_size = (uint32_t)d->unicode_object.asciiobject_size + 16,
      .bytes_data = (uint32_t)d->bytes_object.ob_sval,
  };
  return 1;
}

static int detect(struct python *py, void *(*lookup)(const char *)) {
  const unsigned long *version = lookup("Py_Version"); /* 3.11+ */
  uintptr_t type_type = (uintptr_t)lookup("PyType_Type");
  py->code_type = (uintptr_t)lookup("PyCode_Type");
  py->str_type = (uintptr_t)lookup("PyUnicode_Type");
  py->bytes_type = (uintptr_t)lookup("PyBytes_Type");
  py->this_thread = (void *(*)(void))lookup("PyGILState_GetThisThreadState");
  py->finalizing = (int (*)(void))lookup("Py_IsFinalizing");
  if (!py->finalizing)
    py->finalizing = (int (*)(void))lookup("_Py_IsFinalizing");
  if (!version || !type_type || !py->code_type || !py->str_type || !py->bytes_type ||
      !py->this_thread || !py->finalizing)
    return 0;
  /* Py_TRACE_REFS builds put two pointers before ob_type: not this layout */
  if (ld(py->code_type, GT_PY_OB_TYPE) != type_type)
    return 0;
  static const struct gt_pylayout l311 = GT_PYLAYOUT_311, l312 = GT_PYLAYOUT_312;
  unsigned long v = *version;
  if (v >> 16 == 0x030B)
    py->lay = l311;
  else if (v >> 16 == 0x030C)
    py->lay = l312;
  else if (v >> 16 != 0x030D || !from_debug_offsets(&py->lay, lookup("_PyRuntime"), v))
    return 0;
  py->lay.version = v;
  return 1;
}

unsigned long gt_pyframes_init(void *(*lookup)(const char *name)) {
  int state = atomic_load_explicit(&g_state, memory_order_acquire);
  for (int spin = 0; state == SEARCHING && spin < 1000000; spin++)
    state = atomic_load_explicit(&g_state, memory_order_acquire);
  if (state == FOUND || state == NONE)
    return state == FOUND ? g_python.lay.version : 0;
  struct python py;
  memset(&py, 0, sizeof py);
  int found = detect(&py, lookup);
  int expected = UNKNOWN;
  if (atomic_compare_exchange_strong(&g_state, &expected, SEARCHING)) {
    g_python = py;
    atomic_store_explicit(&g_state, found ? FOUND : NONE, memory_order_release);
  }
  return found ? py.lay.version : 0;
}

/* ---- lines ---- */

/* An unsigned varint: 6-bit chunks, least significant first, bit 6 set on
 * every chunk but the last (Objects/locations.md). */
static unsigned long varint(const uint8_t *t, size_t len, size_t *i) {
  unsigned long v = 0;
  for (unsigned shift = 0; *i < len && shift < 8 * sizeof v; shift += 6) {
    uint8_t b = t[(*i)++];
    v |= (unsigned long)(b & 63) << shift;
    if (!(b & 64))
      break;
  }
  return v;
}

int gt_pyframes_line(const uint8_t *t, size_t len, int firstlineno, long unit) {
  long line = firstlineno, addr = 0;
  size_t i = 0;
  while (i < len) {
    uint8_t head = t[i++];
    if (!(head & 0x80))
      return -1; /* not the start of an entry: a table we do not understand */
    unsigned code = (head >> 3) & 15;
    long entry = line;
    if (code == 15) { /* no location */
      entry = -1;
    } else if (code >= 13) { /* no columns, or long form: an svarint delta first */
      unsigned long u = varint(t, len, &i);
      if (u >> 31)
        return -1; /* a delta no source file has: keeps `line` from overflowing */
      line += (u & 1) ? -(long)(u >> 1) : (long)(u >> 1);
      entry = line;
      while (i < len && !(t[i] & 0x80)) /* the long form's end line and columns */
        i++;
    } else if (code >= 10) { /* one-line forms: the delta is the code; 2 columns */
      line += code - 10;
      entry = line;
      i += 2;
    } else { /* short forms: same line; 1 byte of columns */
      i += 1;
    }
    addr += (head & 7) + 1;
    if (unit < addr)
      return entry < 0 || entry > INT32_MAX ? -1 : (int)entry;
  }
  return -1;
}

/* Lines already decoded. Decoding is linear in the instruction's position,
 * and the outer frames (a long script's <module> at its last line) are the
 * same on every capture. One 64-bit word per entry, so a reader never sees
 * a torn one: a 40-bit tag of (code, line table, unit) above the line. */
#define LINE_CACHE 4096u
static _Atomic uint64_t g_lines[LINE_CACHE];

static int code_line(const struct python *py, uintptr_t code, long unit) {
  const struct gt_pylayout *l = &py->lay;
  uintptr_t table = ld(code, l->co_linetable);
  if (!is_object(table, py->bytes_type))
    return 0;
  uint64_t h = (uint64_t)code * 0x9E3779B97F4A7C15ull ^
               (uint64_t)table * 0xC2B2AE3D27D4EB4Full ^
               (uint64_t)unit * 0x165667B19E3779F9ull;
  h ^= h >> 31;
  _Atomic uint64_t *slot = &g_lines[h & (LINE_CACHE - 1)];
  uint64_t tag = h >> 24, hit = atomic_load_explicit(slot, memory_order_relaxed);
  if (hit && hit >> 24 == tag)
    return (int)(hit & 0xFFFFFF);
  long len = (long)ld(table, GT_PY_OB_SIZE);
  if (len < 0 || len > (1L << 26))
    return 0;
  int line = gt_pyframes_line((const uint8_t *)(table + l->bytes_data), (size_t)len,
                              ld32(code, l->co_firstlineno), unit);
  if (line > 0 && line < 0xFFFFFF)
    atomic_store_explicit(slot, tag << 24 | (uint64_t)line, memory_order_relaxed);
  return line > 0 ? line : 0;
}

/* ---- frames ---- */

/* The code object of a frame to report, with its current line; 0 for a
 * frame CPython leaves out of tracebacks. */
static uintptr_t frame_code(const struct python *py, uintptr_t frame, int *line) {
  const struct gt_pylayout *l = &py->lay;
  char owner = *(const char *)(frame + l->fr_owner);
  if (owner == GT_PY_OWNED_BY_CSTACK)
    return 0;
  uintptr_t code = ld(frame, l->fr_code); /* 3.13: may be None */
  if (!is_object(code, py->code_type))
    return 0;
  uintptr_t first = code + l->co_code, instr = ld(frame, l->fr_instr);
  /* Incomplete: pushed, its prologue not yet run (_PyFrame_IsIncomplete) */
  if (owner != GT_PY_OWNED_BY_GENERATOR && l->co_firsttraceable &&
      instr < first + 2 * (uintptr_t)ld32(code, l->co_firsttraceable))
    return 0;
  long units = (long)ld(code, GT_PY_OB_SIZE);
  if (instr < first) /* not started: PyCode_Addr2Line says co_firstlineno */
    *line = ld32(code, l->co_firstlineno);
  else if ((instr - first) / 2 < (uintptr_t)units)
    *line = code_line(py, code, (long)((instr - first) / 2));
  else
    *line = 0;
  return code;
}

static uintptr_t current_frame(const struct gt_pylayout *l, uintptr_t tstate) {
  if (!l->ts_cframe)
    return ld(tstate, l->ts_frame);
  uintptr_t cframe = ld(tstate, l->ts_cframe); /* on the eval loop's C stack */
  return plausible(cframe) ? ld(cframe, l->ts_frame) : 0;
}

int gt_pyframes_read(struct gt_pyframe *out, int max) {
  if (atomic_load_explicit(&g_state, memory_order_acquire) != FOUND)
    return 0;
  const struct python *py = &g_python;
  if (py->finalizing())
    return 0;
  uintptr_t tstate = (uintptr_t)py->this_thread();
  if (!plausible(tstate) || ld(tstate, py->lay.ts_thread_id) != (uintptr_t)pthread_self())
    return 0;
  uintptr_t frame = current_frame(&py->lay, tstate);
  int n = 0;
  for (int steps = 0; frame && n < max && steps < WALK_STEPS; steps++) {
    if (!plausible(frame))
      break;
    int line = 0;
    uintptr_t code = frame_code(py, frame, &line);
    if (code)
      out[n++] = (struct gt_pyframe){(const void *)code, line > 0 ? line : 0};
    frame = ld(frame, py->lay.fr_previous);
  }
  return n;
}

/* ---- names ---- */

static size_t utf8(uint32_t c, char *out) {
  if (c >= 0xD800 && c < 0xE000) /* lone surrogate (surrogateescape): not UTF-8 */
    c = '?';
  if (c < 0x80) {
    out[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (char)(0xC0 | c >> 6);
    out[1] = (char)(0x80 | (c & 63));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (char)(0xE0 | c >> 12);
    out[1] = (char)(0x80 | ((c >> 6) & 63));
    out[2] = (char)(0x80 | (c & 63));
    return 3;
  }
  out[0] = (char)(0xF0 | (c >> 18 & 7));
  out[1] = (char)(0x80 | ((c >> 12) & 63));
  out[2] = (char)(0x80 | ((c >> 6) & 63));
  out[3] = (char)(0x80 | (c & 63));
  return 4;
}

/* A compact str's characters as UTF-8, at most `cap` bytes; "?" otherwise. */
static size_t str_text(const struct python *py, uintptr_t s, char *out, size_t cap) {
  const struct gt_pylayout *l = &py->lay;
  uint32_t state = 0;
  long len = -1;
  if (is_object(s, py->str_type)) {
    state = (uint32_t)ld32(s, l->str_state);
    len = (long)ld(s, l->str_length);
  }
  unsigned kind = GT_PY_STR_KIND(state);
  if (len < 0 || !GT_PY_STR_COMPACT(state) || (kind != 1 && kind != 2 && kind != 4)) {
    if (cap == 0)
      return 0;
    out[0] = '?';
    return 1;
  }
  const uint8_t *data =
      (const uint8_t *)(s + (GT_PY_STR_ASCII(state) ? l->str_ascii_size
                                                    : l->str_compact_size));
  size_t n = 0;
  for (long i = 0; i < len; i++) {
    uint32_t c = 0;
    memcpy(&c, data + (size_t)i * kind, kind); /* little-endian, as the ABI is */
    char enc[4];
    size_t w = utf8(c, enc);
    if (n + w > cap)
      break;
    memcpy(out + n, enc, w);
    n += w;
  }
  return n;
}

size_t gt_pyframes_text(const void *code, char *buf, size_t cap) {
  if (cap < 4 || atomic_load_explicit(&g_state, memory_order_acquire) != FOUND) {
    if (cap)
      buf[0] = '\0';
    return 0;
  }
  const struct python *py = &g_python;
  uintptr_t c = (uintptr_t)code;
  int ok = is_object(c, py->code_type);
  size_t n = str_text(py, ok ? ld(c, py->lay.co_name) : 0, buf, (cap - 2) / 2);
  buf[n++] = '\x1f';
  n += str_text(py, ok ? ld(c, py->lay.co_filename) : 0, buf + n, cap - 1 - n);
  buf[n] = '\0';
  return n;
}
