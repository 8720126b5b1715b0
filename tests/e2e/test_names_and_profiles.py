"""Names as a new user reads them: report (and diff) shorten a long
templated kernel name to its column by emptying template argument lists
and the parameter list before cutting its start (whole with --wide and in
--json); flame's
folded stacks carry each frame's file:line (so allocations on different
lines of one function are different stacks), leave out the CUDA runtime
and nvcc's launch stubs, fold by function alone with --functions, and make
names from the traced process safe (no ';', no control bytes). pprof's
default sample types are checked with go tool pprof in test_pprof.py."""
import json
import os
import shutil
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20
VEC = ("void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<%s>, "
       "at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<%s>, "
       "at::detail::Array<char*, 2>)")


def gputrace(*args):
    return run([GPUTRACE] + list(args), base_env(), check_rc=0).stdout


def kernel_rows(text):
    """The rows of report's Kernels table: [(name cell, launches)]."""
    lines = text.split("\nKernels\n", 1)[1].split("\n\n", 1)[0].splitlines()
    eq(lines[0].split()[:2], ["kernel", "launches"], "the table's header")
    return [(l[:46], l[46:].split()[0]) for l in lines[1:]]


def test_report_shortens_templates_first():
    _, trace = record([prog("templated")])
    # 44 columns: the lists emptied ('…' is one column), then the start cut
    short = "  …::vectorized_elementwise_kernel<…>(…)      "
    eq(kernel_rows(gputrace("report", trace)),
       [(short, "3"), (short, "2"), ("  tiny(int)" + " " * 35, "1")], "report's kernel rows")
    wide = gputrace("report", "--wide", trace)
    rows = wide.split("\nKernels\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    names = [r[2:].split("  ")[0] for r in rows]
    eq([(n, r[2 + len(n):].split()[0]) for n, r in zip(names, rows)],
       [(VEC % ("float", "float"), "3"), (VEC % ("double", "double"), "2"), ("tiny(int)", "1")],
       "report --wide: whole names")
    rep = json.loads(gputrace("report", "--json", trace))
    eq([(k["kernel"], k["launches"]) for k in rep["kernels"]],
       [(VEC % ("float", "float"), 3), (VEC % ("double", "double"), 2), ("tiny(int)", 1)],
       "report --json: whole names")
    # diff's rows: 60 columns, or whole with --wide
    def launches_rows(*opts):
        out = run([GPUTRACE, "diff", "--all", trace, trace] + list(opts), base_env(),
                  check_rc=0).stdout
        return [l for l in out.splitlines() if l.startswith("  unchanged    kernel") and
                " launches: " in l]
    eq(launches_rows(), ["  unchanged    kernel   void at::native::vectorized_elementwise_kernel"
                         "<…>(…) launches: %s -> %s (+0.0 %%)" % (n, n) for n in (3, 2)] +
       ["  unchanged    kernel   tiny(int) launches: 1 -> 1 (+0.0 %)"], "diff's kernel rows")
    eq(launches_rows("--wide"), ["  unchanged    kernel   %s launches: %s -> %s (+0.0 %%)" %
                                 (VEC % (t, t), n, n) for t, n in (("float", 3), ("double", 2))] +
       ["  unchanged    kernel   tiny(int) launches: 1 -> 1 (+0.0 %)"], "diff --wide")


def folded(*args):
    """flame's lines as [(the frames from main on, weight)]."""
    out = []
    for line in gputrace("flame", *args).splitlines():
        stack, weight = line.rsplit(" ", 1)
        frames = stack.split(";")
        at = [i for i, f in enumerate(frames) if f.startswith("main")]
        out.append((";".join(frames[at[0]:] if at else frames), int(weight)))
        for glue in ("cudaMalloc", "__device_stub__", "__cudaLaunchKernel"):
            if glue in stack:
                raise AssertionError("flame keeps %s: %s" % (glue, line))
    return out


def test_flame_lines_tell_stacks_apart():
    """The demo's peak: four allocations of main, told apart by line (before,
    four identical ...;main;cudaMalloc<float>(...) stacks)."""
    _, trace = record([prog("infer"), "3"], out=os.path.join(TMP, "infer.gtrace"))
    eq(sorted(folded("--peak", trace)),
       [("main (infer.cu:32)", 64 * MiB), ("main (infer.cu:33)", 4 * MiB),
        ("main (infer.cu:34)", 4 * MiB), ("main (infer.cu:35)", 4 * MiB),
        ("main (infer.cu:46)", MiB)], "flame --peak")
    eq(sorted(folded("--peak", "--functions", trace)),
       [("main", w) for w in (MiB, 4 * MiB, 4 * MiB, 4 * MiB, 64 * MiB)],
       "flame --peak --functions")
    # the copies too, at their lines: copies carry their call site's stack
    gpu = folded("--gpu", trace)
    eq(sorted(s for s, _ in gpu if s.startswith("main")),
       ["main (infer.cu:37);memcpy HtoD", "main (infer.cu:47);memcpy HtoD",
        "main (infer.cu:49);embed(int const*, float*, int)",
        "main (infer.cu:51);attention(float*, float const*, int)",
        "main (infer.cu:52);mlp(float*, float const*, float*, int)",
        "main (infer.cu:54);memcpy DtoH"], "flame --gpu stacks")
    eq(sorted(s for s, _ in folded("--gpu", "--functions", trace) if s.startswith("main")),
       ["main;attention(float*, float const*, int)", "main;embed(int const*, float*, int)",
        "main;memcpy DtoH", "main;memcpy HtoD", "main;memcpy HtoD",
        "main;mlp(float*, float const*, float*, int)"], "flame --gpu --functions")


def test_flame_names_are_safe():
    """A Python file named with ';' and an escape byte: the folded frame
    has ':' and '?' instead, and stays one line."""
    script = os.path.join(TMP, "we;ird\x1b.py")
    shutil.copy(os.path.join(HERE, "py_alloc.py"), script)
    _, trace = record(["python3", script, "2"], out=os.path.join(TMP, "weird.gtrace"))
    lines = gputrace("flame", trace).splitlines()
    eq(len(lines), 1, "one stack")
    frames = lines[0].rsplit(" ", 1)[0].split(";")
    eq([f for f in frames if f.startswith("allocate_batch")], ["allocate_batch (we:ird?.py:16)"],
       "the Python frame")
    eq(lines[0].rsplit(" ", 1)[1], str(2 * 65536), "its bytes")
    if any(ord(c) < 0x20 for c in lines[0]):
        raise AssertionError("a control byte in: %r" % lines[0])


main([test_report_shortens_templates_first, test_flame_lines_tell_stacks_apart,
      test_flame_names_are_safe])
