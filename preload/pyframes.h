/* pyframes.h — the calling thread's Python frames, read without the GIL.
 *
 * Contract:
 *  - gt_pyframes_init(lookup) finds a CPython in the process through `lookup`
 *    (dlsym on RTLD_DEFAULT; nothing is linked) and decides, once per
 *    process, whether its layout is known: 3.11 and 3.12 from built-in
 *    tables, 3.13 from the _Py_DebugOffsets it publishes. It returns the
 *    interpreter's PY_VERSION_HEX when frames can be read, else 0 (no
 *    CPython, another major or minor version, a free-threaded or
 *    Py_TRACE_REFS build). Concurrent callers all get the same answer.
 *  - gt_pyframes_read() fills `out` with the calling thread's Python frames,
 *    innermost first, without the GIL and without calling into Python: the
 *    thread state from CPython's thread-local slot, then the frame chain,
 *    code objects and line tables read by layout. A thread's own frames
 *    cannot change while it is inside a C call, so they are safe to read
 *    whether or not it holds the GIL. No allocation, lock or syscall. Every
 *    pointer followed is checked first (plausible address, alignment, the
 *    object's type is PyCode_Type / PyBytes_Type / PyUnicode_Type, the thread
 *    state belongs to this thread) and the walk is capped, so a layout that
 *    does not match yields fewer or no frames, never a wild read chain.
 *    0 frames: unknown version, not a Python thread, or the interpreter is
 *    finalizing (it frees other threads' states then).
 *  - Frames not yet started or owned by the C stack are skipped, as
 *    CPython's own tracebacks do.
 *  - gt_pyframes_text() writes "co_name\x1fco_filename" of a code object that
 *    gt_pyframes_read returned (UTF-8, cut on a character boundary to fit,
 *    "?" for a string it cannot read), NUL-terminated; returns its length.
 */
#ifndef GPUTRACE_PYFRAMES_H
#define GPUTRACE_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>

struct gt_pyframe {
  const void *code; /* PyCodeObject */
  int line;         /* 0 when the instruction has no line */
};

unsigned long gt_pyframes_init(void *(*lookup)(const char *name));
int gt_pyframes_read(struct gt_pyframe *out, int max);
size_t gt_pyframes_text(const void *code, char *buf, size_t cap);

/* The line of code unit `unit` in a 3.11+ location table (co_linetable),
 * or -1 when it has none; exposed for tests. */
int gt_pyframes_line(const uint8_t *table, size_t len, int firstlineno, long unit);

#endif
