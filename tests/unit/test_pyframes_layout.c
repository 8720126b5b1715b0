/* test_pyframes_layout.c — the CPython layouts preload/pyframes_layout.h
 * hard-codes (3.11, 3.12) or mirrors (3.13's _Py_DebugOffsets), against the
 * real headers of the version it is compiled with: offsetof and sizeof with
 * Py_BUILD_CORE, and the str state bits set through the headers' own bit
 * field. tests/CMakeLists.txt builds it once per CPython 3.11-3.13 whose
 * headers (internal ones included) the build machine has; none: no test.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#if PY_VERSION_HEX >= 0x030D0000
#include <internal/pycore_runtime.h>
#endif

#include <stddef.h>
#include <string.h>

#include "check.h"
#include "pyframes_layout.h"

#if PY_VERSION_HEX < 0x030D0000
static void check_table(const struct gt_pylayout *l) {
  CHECK_EQ_U64(l->ts_cframe, offsetof(PyThreadState, cframe));
  CHECK_EQ_U64(l->ts_frame, offsetof(_PyCFrame, current_frame));
  CHECK_EQ_U64(l->ts_thread_id, offsetof(PyThreadState, thread_id));
  CHECK_EQ_U64(l->fr_code, offsetof(_PyInterpreterFrame, f_code));
  CHECK_EQ_U64(l->fr_previous, offsetof(_PyInterpreterFrame, previous));
  CHECK_EQ_U64(l->fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
  CHECK_EQ_U64(l->fr_owner, offsetof(_PyInterpreterFrame, owner));
  CHECK_EQ_U64(l->co_filename, offsetof(PyCodeObject, co_filename));
  CHECK_EQ_U64(l->co_name, offsetof(PyCodeObject, co_name));
  CHECK_EQ_U64(l->co_linetable, offsetof(PyCodeObject, co_linetable));
  CHECK_EQ_U64(l->co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
  CHECK_EQ_U64(l->co_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
  CHECK_EQ_U64(l->co_code, offsetof(PyCodeObject, co_code_adaptive));
  CHECK_EQ_U64(l->str_length, offsetof(PyASCIIObject, length));
  CHECK_EQ_U64(l->str_state, offsetof(PyASCIIObject, state));
  CHECK_EQ_U64(l->str_ascii_size, sizeof(PyASCIIObject));
  CHECK_EQ_U64(l->str_compact_size, sizeof(PyCompactUnicodeObject));
  CHECK_EQ_U64(l->bytes_data, offsetof(PyBytesObject, ob_sval));
  CHECK_EQ_U64(sizeof(((_PyInterpreterFrame *)0)->owner), 1);
  CHECK_EQ_U64(sizeof(((PyCodeObject *)0)->_co_firsttraceable), 4);
}
#else
/* Every field of the mirror sits where the real struct has it. */
#define SAME(field)                                                                      \
  CHECK_EQ_U64(offsetof(struct gt_pydebug_313, field), offsetof(_Py_DebugOffsets, field))

static void check_mirror(void) {
  SAME(version);
  SAME(free_threaded);
  SAME(thread_state.size);
  SAME(thread_state.current_frame);
  SAME(thread_state.thread_id);
  SAME(interpreter_frame.size);
  SAME(interpreter_frame.previous);
  SAME(interpreter_frame.executable);
  SAME(interpreter_frame.instr_ptr);
  SAME(interpreter_frame.owner);
  SAME(code_object.size);
  SAME(code_object.filename);
  SAME(code_object.name);
  SAME(code_object.linetable);
  SAME(code_object.firstlineno);
  SAME(code_object.co_code_adaptive);
  SAME(pyobject.ob_type);
  SAME(bytes_object.size);
  SAME(bytes_object.ob_sval);
  SAME(unicode_object.size);
  SAME(unicode_object.state);
  SAME(unicode_object.length);
  SAME(unicode_object.asciiobject_size);
  CHECK_EQ_U64(offsetof(_PyRuntimeState, debug_offsets), 0);
  /* what pyframes.c derives rather than reads */
  CHECK_EQ_U64(sizeof(PyASCIIObject) + 16, sizeof(PyCompactUnicodeObject));
  CHECK_EQ_U64(sizeof(((_PyInterpreterFrame *)0)->owner), 1);
  CHECK_EQ_U64(sizeof(((PyCodeObject *)0)->co_firstlineno), 4);
}
#endif

static uint32_t state_of(unsigned kind, unsigned compact, unsigned ascii) {
  PyASCIIObject s;
  memset(&s, 0, sizeof s);
  s.state.interned = 3;
  s.state.kind = kind & 7;
  s.state.compact = compact & 1;
  s.state.ascii = ascii & 1;
  uint32_t raw;
  memcpy(&raw, &s.state, sizeof raw);
  return raw;
}

int main(void) {
  CHECK_EQ_U64(GT_PY_OB_TYPE, offsetof(PyObject, ob_type));
  CHECK_EQ_U64(GT_PY_OB_SIZE, offsetof(PyVarObject, ob_size));
  CHECK_EQ_U64(GT_PY_OWNED_BY_GENERATOR, FRAME_OWNED_BY_GENERATOR);
#if PY_VERSION_HEX >= 0x030C0000
  CHECK_EQ_U64(GT_PY_OWNED_BY_CSTACK, FRAME_OWNED_BY_CSTACK);
#endif
  CHECK_EQ_U64(sizeof(((PyASCIIObject *)0)->state), 4);
  for (unsigned kind = 1; kind <= 4; kind *= 2)
    for (unsigned bits = 0; bits < 4; bits++) {
      uint32_t st = state_of(kind, bits & 1, bits >> 1);
      CHECK_EQ_U64(GT_PY_STR_KIND(st), kind);
      CHECK_EQ_U64(GT_PY_STR_COMPACT(st), bits & 1);
      CHECK_EQ_U64(GT_PY_STR_ASCII(st), bits >> 1);
    }
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  static const struct gt_pylayout l = GT_PYLAYOUT_311;
  check_table(&l);
#elif PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
  static const struct gt_pylayout l = GT_PYLAYOUT_312;
  check_table(&l);
#elif PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
  check_mirror();
#else
#error "no layout for this version in pyframes_layout.h"
#endif
  printf("CPython headers %s\n", PY_VERSION);
  return check_finish("test_pyframes_layout");
}
