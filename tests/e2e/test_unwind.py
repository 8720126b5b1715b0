"""The shim's cached unwinder (preload/unwind.c) against glibc's backtrace():
the same program (tests/cuda/unwind_paths.cu: a 30-deep recursion, a signal
handler, a destructor run while an exception unwinds, a catch block)
recorded with GPUTRACE_UNWIND=cached (the default) and =backtrace gives the
same leaks with the same stacks, frame for frame (function, file, line);
under the cached unwinder no stack came from backtrace() (the signal
handler's is walked through its signal frame), under =backtrace all (their
STACK records say "backtrace": true).

And a program whose frame loads another value into rbp around cudaMalloc
(tests/cuda/odd_frames.c, three ways) runs traced as untraced under both
unwinders, its three leaks at their line, each stack ending at that frame,
marked cut ("[stack cut short]", "cut": true in dump)."""
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
    eq(flagged, [], "stacks from backtrace() under the cached unwinder")
    eq(slow_nstacks, nstacks, "distinct stacks in both runs")
    eq(slow_flagged, sorted(slow_allocs.values()), "under GPUTRACE_UNWIND=backtrace: all")


def test_odd_frames():
    untraced = run([prog("odd_frames")], base_env(), check_rc=0)
    eq(untraced.stdout, "odd_frames: 3 leaks\n", "untraced output")
    for unwind in ("cached", "backtrace"):
        p, out = record([prog("odd_frames")], out=os.path.join(TMP, "odd_%s.gtrace" % unwind),
                        GPUTRACE_UNWIND=unwind)
        eq(p.stdout, untraced.stdout, "output traced (%s)" % unwind)
        # the three stacks are one: each ends at the frame whose rbp is elsewhere
        stacks = leak_stacks(out)
        eq(sorted(stacks), [6 * MiB], "the leaks' sizes (%s)" % unwind)
        eq(stacks[6 * MiB], [("alloc_leak", "odd_frames.c", 29), ("uw_bad_rbp", "odd_rbp.S", 27),
                             ("[stack cut short]", "", 0)], "the leaks' stack (%s)" % unwind)
        events = dump(out)
        allocs = select(events, kind="alloc")
        eq(len(allocs), 3, "allocations (%s)" % unwind)
        cut = sorted(s["id"] for s in select(events, kind="stack") if s.get("cut"))
        eq(cut, sorted(set(a["stack_id"] for a in allocs)), "stacks marked cut (%s)" % unwind)
        eq([s["id"] for s in select(events, kind="stack") if s.get("backtrace")], [],
           "stacks from backtrace() (%s): none, it would fault there" % unwind)


if __name__ == "__main__":
    main([test_same_frames_as_backtrace, test_odd_frames])
