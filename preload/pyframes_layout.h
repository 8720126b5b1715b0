/* pyframes_layout.h — where CPython keeps what pyframes.c reads, per version.
 *
 * Contract:
 *  - struct gt_pylayout holds byte offsets into CPython's thread state,
 *    interpreter frame, code, str and bytes objects of a GIL (not
 *    free-threaded), non-debug 64-bit build. pyframes.c fills one at start:
 *    from GT_PYLAYOUT_311 / GT_PYLAYOUT_312 below, or on 3.13 from the
 *    _Py_DebugOffsets the interpreter publishes at the start of _PyRuntime
 *    (read through struct gt_pydebug_313, which mirrors its 3.13 layout).
 *  - Every number here is checked against the real headers by
 *    tests/unit/test_pyframes_layout.c (offsetof with Py_BUILD_CORE) for each
 *    version whose headers the build machine has.
 *  - Header positions cited are those of the v3.11.7, v3.12.1 and v3.13.0
 *    sources (Include/...). Within a minor version these structures do not
 *    move (extensions and out-of-process profilers depend on them).
 */
#ifndef GPUTRACE_PYFRAMES_LAYOUT_H
#define GPUTRACE_PYFRAMES_LAYOUT_H

#include <stdint.h>

struct gt_pylayout {
  unsigned long version; /* PY_VERSION_HEX of the interpreter in the process */
  /* PyThreadState, and _PyCFrame on 3.11/3.12 */
  uint32_t ts_cframe;    /* tstate->cframe; 0: the frame pointer is in tstate itself */
  uint32_t ts_frame;     /* current_frame, in *cframe or in tstate (3.13) */
  uint32_t ts_thread_id; /* pthread_self() of the thread that owns it */
  /* _PyInterpreterFrame */
  uint32_t fr_code;     /* f_code (3.11/3.12), f_executable (3.13) */
  uint32_t fr_previous; /* the caller's frame */
  uint32_t fr_instr;    /* prev_instr (3.11/3.12), instr_ptr (3.13) */
  uint32_t fr_owner;    /* char: thread, generator, frame object, C stack */
  /* PyCodeObject (a PyVarObject: Py_SIZE is its length in code units) */
  uint32_t co_filename, co_name, co_linetable, co_firstlineno;
  uint32_t co_firsttraceable; /* int; 0: not published (3.13) */
  uint32_t co_code;           /* co_code_adaptive, the instructions */
  /* str: the compact forms' header sizes (their characters follow) */
  uint32_t str_length, str_state, str_ascii_size, str_compact_size;
  /* bytes */
  uint32_t bytes_data; /* ob_sval */
};

/* Common to every GIL build: PyObject_HEAD is ob_refcnt then ob_type,
 * PyObject_VAR_HEAD adds ob_size (Include/object.h). */
#define GT_PY_OB_TYPE 8u
#define GT_PY_OB_SIZE 16u
/* _frameowner (Include/internal/pycore_frame.h) */
#define GT_PY_OWNED_BY_GENERATOR 1
#define GT_PY_OWNED_BY_CSTACK 3 /* 3.12+: the interpreter's entry frames */

/* 3.11: Include/cpython/pystate.h:110 (cframe), :132 (thread_id), :51
 * (_PyCFrame.current_frame); Include/internal/pycore_frame.h:47-67
 * (_PyInterpreterFrame: f_code fifth, then frame_obj, previous, prev_instr,
 * stacktop, is_entry, owner); Include/cpython/code.h:36-100 (_PyCode_DEF);
 * Include/cpython/unicodeobject.h (PyASCIIObject still has wstr, and
 * PyCompactUnicodeObject wstr_length). */
#define GT_PYLAYOUT_311                                                                  \
  {                                                                                      \
    .ts_cframe = 56, .ts_frame = 8, .ts_thread_id = 152, .fr_code = 32,                  \
    .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .co_filename = 112,               \
    .co_name = 120, .co_linetable = 136, .co_firstlineno = 72, .co_firsttraceable = 168, \
    .co_code = 184, .str_length = 16, .str_state = 32, .str_ascii_size = 48,             \
    .str_compact_size = 72, .bytes_data = 32                                             \
  }

/* 3.12: Include/cpython/pystate.h:161 (cframe, after the _status bit field
 * and the recursion counters), :181 (thread_id), :79 (_PyCFrame.
 * current_frame, now its first member); Include/internal/pycore_frame.h:
 * 51-75 (_PyInterpreterFrame: f_code :52 and previous :53 first,
 * prev_instr :63, owner :72 after return_offset); Include/cpython/code.h
 * :144 (co_firstlineno), :158-161 (co_filename, co_name, co_linetable),
 * :166 (_co_firsttraceable), :171 (co_code_adaptive);
 * Include/cpython/unicodeobject.h:52-159 (no wstr any more). */
#define GT_PYLAYOUT_312                                                                  \
  {                                                                                      \
    .ts_cframe = 56, .ts_frame = 0, .ts_thread_id = 136, .fr_code = 0, .fr_previous = 8, \
    .fr_instr = 56, .fr_owner = 70, .co_filename = 112, .co_name = 120,                  \
    .co_linetable = 136, .co_firstlineno = 68, .co_firsttraceable = 176, .co_code = 192, \
    .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56,     \
    .bytes_data = 32                                                                     \
  }

/* The leading part of 3.13's _Py_DebugOffsets
 * (Include/internal/pycore_runtime.h:62-195): all uint64_t, in sections
 * that each start with the size of the structure they describe. Sections
 * pyframes.c does not read are kept as arrays of the right length. The
 * layout changes between minor versions (3.14 inserts fields), so it is
 * used only when the published version is 3.13.x. */
struct gt_pydebug_313 {
  char cookie[8]; /* "xdebugpy" */
  uint64_t version;
  uint64_t free_threaded;
  struct {
    uint64_t size, finalizing, interpreters_head;
  } runtime_state;
  uint64_t interpreter_state[13];
  struct {
    uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
        datastack_chunk, status;
  } thread_state;
  struct {
    uint64_t size, previous, executable, instr_ptr, localsplus, owner;
  } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
        localsplusnames, localspluskinds, co_code_adaptive;
  } code_object;
  struct {
    uint64_t size, ob_type;
  } pyobject;
  uint64_t type_object[4], tuple_object[3], list_object[3], dict_object[3],
      float_object[2], long_object[3];
  struct {
    uint64_t size, ob_size, ob_sval;
  } bytes_object;
  struct {
    uint64_t size, state, length, asciiobject_size;
  } unicode_object;
};

/* Bits of PyASCIIObject.state (3.11-3.13, GIL builds): interned:2, kind:3,
 * compact:1, ascii:1 from the lowest bit up. */
#define GT_PY_STR_KIND(state) (((state) >> 2) & 7u)
#define GT_PY_STR_COMPACT(state) (((state) >> 5) & 1u)
#define GT_PY_STR_ASCII(state) (((state) >> 6) & 1u)

#endif
