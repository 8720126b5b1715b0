"""test_pyframes.py — preload/pyframes.c inside the interpreter that runs
this script (through tests/pyframes/probe.c, loaded with ctypes).

On a version it knows (CPython 3.11-3.13, GIL builds) the frames it reads
without the GIL must equal the interpreter's own (sys._getframe: function,
file, line, innermost first) in nested calls, generators, coroutines, a
worker thread, class bodies, comprehensions, calls through C, exec'd code
with non-ASCII and long names, and at its depth cap; the line of every code
unit of every code object of a few hundred stdlib modules must equal
co_positions(); names and files must equal co_name and co_filename. On any
other version it must read nothing, and say so.

Usage: python3.X test_pyframes.py PROBE.so   (prints "N passed, N failed")
"""
import asyncio
import ctypes
import importlib
import os
import sys
import threading
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gtest import eq, main  # noqa: E402

PROBE = sys.argv[1]
released = ctypes.CDLL(PROBE)  # ctypes releases the GIL around these calls
held = ctypes.PyDLL(PROBE)  # ... and keeps it around these
for lib in (released, held):
    lib.probe_init.restype = ctypes.c_ulong
    lib.probe_stack.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    lib.probe_text.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.probe_text.restype = ctypes.c_size_t
    lib.probe_lines.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.probe_bench.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.probe_bench.restype = ctypes.c_double

VERSION = released.probe_init()
FREE_THREADED = bool(getattr(sys, "_is_gil_enabled", lambda: True)() is False or
                     "t" in getattr(sys, "abiflags", ""))
KNOWN = (sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)
         and not FREE_THREADED and not hasattr(sys, "gettotalrefcount"))
SRC = open(__file__, encoding="utf-8").read().splitlines()
HERE = sys._getframe().f_code.co_filename


def line_of(marker):
    return [i + 1 for i, l in enumerate(SRC) if l.rstrip().endswith("# " + marker)][0]


def probe(lib=released, max_frames=256):
    buf = ctypes.create_string_buffer(1 << 20)
    n = lib.probe_stack(buf, len(buf), max_frames)  # PROBE
    if n < 0:
        raise AssertionError("probe buffer too small")
    out = []
    for l in buf.value.decode("utf-8").splitlines():
        name, file, line = l.split("\x1f")
        out.append((name, file, int(line)))
    if len(out) != n:
        raise AssertionError("probe: %d frames, %d lines" % (n, len(out)))
    return out


def want(depth):
    """The interpreter's own frames, from `depth` callers up."""
    f, out = sys._getframe(depth), []
    while f is not None:
        out.append((f.f_code.co_name, f.f_code.co_filename, f.f_lineno))
        f = f.f_back
    return out


def snap(lib=released, max_frames=256):
    return probe(lib, max_frames), want(2)  # SNAP


def check(result, what, max_frames=256):
    got, exp = result
    top = [("probe", HERE, line_of("PROBE")), ("snap", HERE, line_of("SNAP"))]
    eq(got, (top + exp)[:max_frames], what)


# ---- frames ----

def test_init():
    eq(VERSION, sys.hexversion, "probe_init")


def outer(lib):
    return middle(lib)


def middle(lib):
    return inner(lib)


def inner(lib):
    return snap(lib)


def test_nested_released():
    check(outer(released), "nested calls, GIL released")


def test_nested_held():
    check(outer(held), "nested calls, GIL held")


def gen():
    yield snap()
    yield from subgen()


def subgen():
    yield snap()


def test_generators():
    results = list(gen())
    check(results[0], "generator")
    check(results[1], "yield from")


async def coro():
    await asyncio.sleep(0)
    return await subcoro()


async def subcoro():
    return snap()


def test_coroutines():
    check(asyncio.run(coro()), "coroutine under asyncio.run")
    c = subcoro()
    try:
        c.send(None)
    except StopIteration as stop:
        check(stop.value, "coroutine driven by send")


def test_thread():
    box = []
    t = threading.Thread(target=lambda: box.append(outer(released)), name="worker")
    t.start()
    t.join()
    check(box[0], "worker thread")


def test_through_c():
    check([snap() for _ in range(1)][0], "comprehension")
    check(list(map(lambda x: snap(), [1]))[0], "lambda called by map (C)")
    box = []
    sorted([1], key=lambda x: box.append(snap()))
    check(box[0], "key function called by sorted (C)")


class Body:
    result = snap()


def test_class_body():
    check(Body.result, "class body")


def recurse(n, max_frames):
    return snap(released, max_frames) if n == 0 else recurse(n - 1, max_frames)


def test_depth_cap():
    check(recurse(300, 50), "300 deep, 50 kept", 50)
    check(recurse(300, 256), "300 deep, 256 kept", 256)


def test_unicode_and_long_names():
    ns = {"snap": snap}
    src = "def \u00f1and\u00fa_\u51fd\u6570():\n    return snap()\nr = \u00f1and\u00fa_\u51fd\u6570()\n"
    exec(compile(src, "/tmp/\u00fcn\u00efc\u00f6d\u00e9/\U0001F600 file.py", "exec"), ns)
    check(ns["r"], "non-ASCII function and file names")
    bad = "/tmp/bad\udcff.py"  # surrogateescape'd byte: not UTF-8, read as '?'
    exec(compile("r = snap()\n", bad, "exec"), ns)
    got, exp = ns["r"]
    eq(got[2][1], "/tmp/bad?.py", "lone surrogate")
    long_name = "/tmp/" + "\u00e9" * 600 + ".py"
    exec(compile("r = snap()\n", long_name, "exec"), ns)
    got, exp = ns["r"]
    file = got[2][1]
    if not (0 < len(file.encode()) <= 511 and long_name.startswith(file)):
        raise AssertionError("long file name cut to %d bytes: %r" % (len(file.encode()), file[:40]))


# ---- lines and names of every code object of many modules ----

def code_objects():
    names = sorted(m for m in sys.builtin_module_names) + [
        "asyncio", "json", "email.message", "http.client", "typing", "dataclasses",
        "argparse", "inspect", "collections", "enum", "pathlib", "re", "ast", "dis",
        "unittest", "logging", "decimal", "fractions", "statistics", "textwrap",
        "difflib", "tarfile", "zipfile", "pickle", "threading", "concurrent.futures",
        "xml.etree.ElementTree", "urllib.parse", "csv", "configparser", "ipaddress"]
    seen, todo = set(), []
    for name in names:
        try:
            mod = importlib.import_module(name)
        except Exception:
            continue
        for v in list(vars(mod).values()):
            for obj in [v] + (list(vars(v).values()) if isinstance(v, type) else []):
                fn = getattr(obj, "__func__", obj)
                if isinstance(fn, types.FunctionType):
                    todo.append(fn.__code__)
    todo.append(sys._getframe().f_code)
    while todo:
        co = todo.pop()
        if id(co) in seen:
            continue
        seen.add(id(co))
        yield co
        todo.extend(c for c in co.co_consts if isinstance(c, types.CodeType))


def test_lines_and_names():
    codes = units = 0
    for co in code_objects():
        exp = [p[0] if p[0] is not None else -1 for p in co.co_positions()]
        lines = (ctypes.c_int * max(len(exp), 1))()
        released.probe_lines(co.co_linetable, len(co.co_linetable), co.co_firstlineno,
                             lines, len(exp))
        eq(list(lines)[:len(exp)], exp, "lines of %s (%s)" % (co.co_qualname, co.co_filename))
        buf = ctypes.create_string_buffer(512)
        n = released.probe_text(id(co), buf, len(buf))
        text = buf.raw[:n].decode("utf-8")
        full = co.co_name + "\x1f" + co.co_filename
        if len(full.encode()) < 255:
            eq(text, full, "name and file of a code object")
        codes += 1
        units += len(exp)
    if codes < 1000:
        raise AssertionError("only %d code objects" % codes)
    print("  %d code objects, %d code units" % (codes, units))


def test_cost():
    depth = ctypes.c_int()
    ns = recurse_bench(20, depth)
    print("  walk of %d frames: %.0f ns (%.1f ns a frame)" % (depth.value, ns, ns / depth.value))


def recurse_bench(n, depth):
    if n:
        return recurse_bench(n - 1, depth)
    return released.probe_bench(20000, ctypes.byref(depth))


# ---- an unknown version ----

def test_unknown_version_reads_nothing():
    eq(VERSION, 0, "probe_init on %s" % sys.version.split()[0])
    eq(probe(), [], "frames read")
    buf = ctypes.create_string_buffer(64)
    eq(released.probe_text(id(test_unknown_version_reads_nothing.__code__), buf, 64), 0,
       "text of a code object")


if __name__ == "__main__":
    print("Python %s: pyframes %s" % (sys.version.split()[0], "%#x" % VERSION if VERSION
                                      else "reads no frames (unknown layout)"))
    if KNOWN:
        main([test_init, test_nested_released, test_nested_held, test_generators,
              test_coroutines, test_thread, test_through_c, test_class_body, test_depth_cap,
              test_unicode_and_long_names, test_lines_and_names, test_cost])
    main([test_unknown_version_reads_nothing])
