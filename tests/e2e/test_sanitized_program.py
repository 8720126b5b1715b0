"""A program built with gcc -fsanitize=address (tests/cuda/asan_alloc.c):
its runtime, libasan.so, must be the first library loaded, and the shim
preloaded ahead of it makes ASan abort ("ASan runtime does not come first").
The settings the README gives: `record` keeps the sanitizer runtimes the
user put first in LD_PRELOAD first, so `LD_PRELOAD=<libasan> gputrace record
-- PROGRAM` records it; under plain LD_PRELOAD, libasan before the shim, or
ASAN_OPTIONS=verify_asan_link_order=0. Each way its calls are in the trace,
exactly. And record's LD_PRELOAD for other values: the shim after the
leading sanitizer runtimes, the rest as it was."""
import os
import subprocess
from gtest import *

PROG = prog("asan_alloc")
SIZES = [4096, 8192, 12288]


def asan_runtime():
    """The libasan the program loads, from ldd (None: linked statically, as
    clang does by default: then nothing needs to come first)."""
    p = run(["ldd", PROG], base_env(), check_rc=0)
    for line in p.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("libasan.") and len(parts) >= 3:
            return parts[2]
    return None


def check_calls(events, what):
    eq([e["bytes"] for e in select(events, kind="alloc")], SIZES, "%s: cudaMalloc sizes" % what)
    eq(count(events, kind="free"), 3, "%s: cudaFree calls" % what)
    eq([e["bytes"] for e in select(events, kind="memset")], SIZES, "%s: cudaMemset sizes" % what)
    eq(len(select(events, kind="process", phase="start")), 1, "%s: processes" % what)


def asan_env(**extra):
    # the program's ASan: leaks checked, a failed check exits 1 (no abort)
    return dict(ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", **extra)


def test_record_with_the_runtime_preloaded():
    """The README's line, as a shell runs it, with the compiler that built
    the program."""
    out = os.path.join(TMP, "asan_record.gtrace")
    if os.path.lexists(out):
        os.unlink(out)
    line = 'LD_PRELOAD=$("$1" -print-file-name=libasan.so) "$2" record -q -o "$3" -- "$4"'
    p = run(["sh", "-c", line, "sh", cmake_cache("CMAKE_C_COMPILER"), GPUTRACE, out, PROG],
            base_env(**asan_env()), check_rc=0)
    eq(p.stdout, "asan_alloc: 0 failures\n", "the program's output")
    check_calls(dump(out), "record")


def test_record_without_it_is_what_asan_says():
    """What the README's setting is for: without it ASan stops the program."""
    if not asan_runtime():
        return  # a static runtime needs no setting
    p, out = record([PROG], check_rc=1, **asan_env())
    eq("ASan runtime does not come first in initial library list" in p.stderr, True,
       "ASan's message (stderr: %r)" % p.stderr)
    eq(p.stdout, "", "the program did not run")


def test_plain_ld_preload_both_ways():
    runtime = asan_runtime()
    ways = [("verify_asan_link_order=0",
             dict(LD_PRELOAD=SHIM,
                  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:verify_asan_link_order=0"))]
    if runtime:
        ways.append(("libasan first", asan_env(LD_PRELOAD=runtime + ":" + SHIM)))
    for i, (what, env) in enumerate(ways):
        out = os.path.join(TMP, "asan_plain_%d.gtrace" % i)
        if os.path.lexists(out):
            os.unlink(out)
        p = run([PROG], base_env(GPUTRACE_OUTPUT=out, **env), check_rc=0)
        eq(p.stdout, "asan_alloc: 0 failures\n", "%s: the program's output" % what)
        check_calls(wait_for_trace(out, 1), what)


def preload_seen(value):
    """The LD_PRELOAD a command run by record sees, given `value` (names of
    files that do not exist: ld.so says it ignores them, and goes on)."""
    extra = {"LD_PRELOAD": value} if value is not None else {}
    p, _ = record(["sh", "-c", 'printf %s "$LD_PRELOAD"'], **extra)
    return p.stdout


def test_record_keeps_sanitizer_runtimes_first():
    shim = preload_seen(None)
    eq(os.path.basename(shim), "libgputrace.so", "the shim alone")
    cases = [
        ("/n/libasan.so.8", "/n/libasan.so.8:" + shim),
        ("/n/libasan.so.8 /n/libfoo.so", "/n/libasan.so.8:" + shim + " /n/libfoo.so"),
        ("/n/libasan.so.8:/n/libubsan.so.1:/n/libfoo.so",
         "/n/libasan.so.8:/n/libubsan.so.1:" + shim + ":/n/libfoo.so"),
        ("libclang_rt.asan-x86_64.so::/n/libfoo.so",
         "libclang_rt.asan-x86_64.so:" + shim + "::/n/libfoo.so"),
        ("/n/libfoo.so:/n/libasan.so.8", shim + ":/n/libfoo.so:/n/libasan.so.8"),
        ("/n/libasanx.so", shim + ":/n/libasanx.so"),
        (" /n/libtsan.so.2", " /n/libtsan.so.2:" + shim),
    ]
    for value, want in cases:
        eq(preload_seen(value), want, "LD_PRELOAD=%r under record" % value)


if __name__ == "__main__":
    main([test_record_with_the_runtime_preloaded, test_record_without_it_is_what_asan_says,
          test_plain_ld_preload_both_ways, test_record_keeps_sanitizer_runtimes_first])
