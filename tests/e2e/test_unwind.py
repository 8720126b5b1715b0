"""The shim's cached unwinder (preload/unwind.c) against glibc's backtrace():
the same program (tests/cuda/unwind_paths.cu: a 30-deep recursion, a signal
handler, a destructor run while an exception unwinds, a catch block)
recorded with GPUTRACE_UNWIND=cached (the default) and =backtrace gives the
same leaks with the same stacks, frame for frame (function, file, line);
under the cached unwinder only the signal handler's stack came from
backtrace() (its STACK record says "backtrace": true), under =backtrace all."""
import json
import os
from gtest import *

MiB = 1 << 20
SITES = [(1 * MiB, "deep_leak()", 17), (2 * MiB, "handler_leak(int)", 22),
         (3 * MiB, "Guard::~Guard()", 27), (4 * MiB, "caught_leak()", 32)]


def leak_stacks(path):
    """bytes -> [(function, file basename, line), ...] of each leak's stack."""
    p = run([GPUTRACE, "leaks", "--json", path], base_env())
    eq(p.returncode, 0, "leaks' status (stderr %r)" % p.stderr)
    stacks = {}
    for leak in json.loads(p.stdout)["leaks"]:
        stacks[leak["bytes"]] = [(f["function"], os.path.basename(f["file"] or ""), f["line"])
                                 for f in leak["stack"]]
    return stacks


def recorded(unwind):
    p, out = record([prog("unwind_paths")], out=os.path.join(TMP, unwind + ".gtrace"),
                    GPUTRACE_UNWIND=unwind)
    eq(p.stdout, "unwind_paths: 4 leaks\n", "the program's output")
    events = dump(out)
    flagged = sorted(s["id"] for s in select(events, kind="stack") if s.get("backtrace"))
    allocs = {a["bytes"]: a["stack_id"] for a in select(events, kind="alloc")}
    return leak_stacks(out), flagged, allocs, len(select(events, kind="stack"))


def test_same_frames_as_backtrace():
    cached, flagged, allocs, nstacks = recorded("cached")
    slow, slow_flagged, slow_allocs, slow_nstacks = recorded("backtrace")
    eq(sorted(cached), [b for b, _, _ in SITES], "the leaks' sizes")
    for nbytes, function, line in SITES:
        eq(cached[nbytes][0], (function, "unwind_paths.cu", line), "where %d B leaked" % nbytes)
        eq(cached[nbytes], slow[nbytes], "%s's stack, cached rules vs backtrace()" % function)
    deep = [f for f in cached[1 * MiB] if f[0] == "deep(int)"]
    eq(len(deep), 30, "deep(int) frames under deep_leak")
    # the handler's caller is the signal frame (glibc's __restore_rt, named
    # at its first byte), then raise()
    through = [f[0] for f in cached[2 * MiB]]
    eq(through[1], "__restore_rt", "the signal frame under the handler")
    if "raise" not in through or "main" not in through:
        raise AssertionError("the handler's stack does not reach raise and main: %r" % through)
    eq(flagged, [allocs[2 * MiB]], "stacks from backtrace() under the cached unwinder: the "
       "handler's only")
    eq(slow_nstacks, nstacks, "distinct stacks in both runs")
    eq(slow_flagged, sorted(slow_allocs.values()), "under GPUTRACE_UNWIND=backtrace: all")


if __name__ == "__main__":
    main([test_same_frames_as_backtrace])
