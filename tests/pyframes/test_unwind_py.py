"""test_unwind_py.py — preload/unwind.c inside the interpreter that runs
this script (through tests/pyframes/unwind_probe.c, loaded with ctypes).

gt_unwind's native frames must equal backtrace()'s, frame for frame, on the
interpreter's own stack: under a 20-deep Python recursion, through ctypes
callbacks (Python -> C -> Python -> C, twice over), with the GIL held
(ctypes.PyDLL) and released (ctypes.CDLL), and in a thread; no frame of
these stacks may need backtrace() (gt_unwind_counts' fallback stays).

Usage: python3.X test_unwind_py.py PROBE.so   (prints "N passed, N failed")
"""
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gtest import eq, main  # noqa: E402

PROBE = sys.argv[1]
released = ctypes.CDLL(PROBE)  # ctypes releases the GIL around these calls
held = ctypes.PyDLL(PROBE)  # ... and keeps it around these
BACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
for lib in (released, held):
    lib.unwind_compare.restype = ctypes.c_int
    lib.unwind_call.argtypes = [BACK, ctypes.c_int]
    lib.unwind_call.restype = ctypes.c_int
    lib.unwind_counts.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)] * 2
released.unwind_probe_init()


def fallbacks():
    fb, rules = ctypes.c_ulonglong(), ctypes.c_ulonglong()
    released.unwind_counts(ctypes.byref(fb), ctypes.byref(rules))
    return fb.value


def recurse(n, lib):
    if n == 0:
        return lib.unwind_compare()
    r = recurse(n - 1, lib)
    return r  # not a tail call (CPython has none anyway)


def compare(what, fn, times=3):
    """fn() several times (cold, then cached): 0 mismatches each, no fallback."""
    fb = fallbacks()
    for i in range(times):
        eq(fn(), 0, "%s, capture %d: mismatching frames" % (what, i))
    eq(fallbacks() - fb, 0, "%s: fallbacks" % what)


def test_recursion_released():
    compare("20-deep recursion, GIL released", lambda: recurse(20, released))


def test_recursion_held():
    compare("20-deep recursion, GIL held", lambda: recurse(20, held))


def through_c(lib, levels):
    """Python -> C (unwind_call) -> Python (a CFUNCTYPE callback) -> ... -> C."""
    @BACK
    def back(n):
        if n == 0:
            return recurse(5, lib)
        return lib.unwind_call(back, n - 1)
    return lib.unwind_call(back, levels)


def test_callbacks_released():
    compare("callbacks, GIL released", lambda: through_c(released, 1))
    compare("callbacks 2 deep, GIL released", lambda: through_c(released, 2))


def test_callbacks_held():
    compare("callbacks, GIL held", lambda: through_c(held, 1))
    compare("callbacks 2 deep, GIL held", lambda: through_c(held, 2))


def test_thread():
    box = []

    def work():
        for lib in (released, held):
            box.append(recurse(20, lib))
            box.append(through_c(lib, 2))
    fb = fallbacks()
    t = threading.Thread(target=work, name="worker")
    t.start()
    t.join()
    eq(box, [0, 0, 0, 0], "worker thread: mismatching frames")
    eq(fallbacks() - fb, 0, "worker thread: fallbacks")


if __name__ == "__main__":
    main([test_recursion_released, test_recursion_held, test_callbacks_released,
          test_callbacks_held, test_thread])
