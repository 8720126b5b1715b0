"""Bad GPUTRACE_* values get a clear one-line warning and the documented
default: GPUTRACE_DISABLE=yes disables tracing, no knob takes garbage
silently, and an out-of-range GPUTRACE_RING_KB (16777216) is ignored with a
warning. One parser (common/knobs.c) for all."""
import os
import time
from gtest import *


def loud_env(**extra):
    env = base_env(**extra)
    del env["GPUTRACE_QUIET"]
    return env


def test_disable_yes():
    out = os.path.join(TMP, "disabled.gtrace")
    p = run([prog("basic")], loud_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out,
                                      GPUTRACE_DISABLE="yes"), check_rc=0)
    eq((p.stdout, p.stderr), ("basic: 0 failures\n", ""), "the program, no warning")
    time.sleep(1.5)  # a collector would have created the file by now
    eq(os.path.exists(out), False, "nothing traced")


def test_ring_kb_out_of_bounds():
    out = os.path.join(TMP, "ringkb.gtrace")
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("basic")],
            loud_env(GPUTRACE_RING_KB="16777216"), check_rc=0)
    eq(p.stderr, "gputrace: ignoring GPUTRACE_RING_KB=16777216 (want a whole number of KiB "
       "from 16 to 1048576); using 32768\n", "the warning")
    eq(count(dump(out), kind="launch"), 15, "traced with the default ring")
    p = run([GPUTRACE, "record", "-q", "--ring-kb", "16777216", "-o", out + "2", "--",
             prog("basic")], base_env(), check_rc=2)
    eq((p.stdout, p.stderr), ("", "gputrace record: bad --ring-kb '16777216' (want a whole "
                              "number of KiB from 16 to 1048576)\n"), "record's refusal")


def test_garbage_values():
    out = os.path.join(TMP, "garbage.gtrace")
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("basic")],
            loud_env(GPUTRACE_STACKS="bogus", GPUTRACE_NVTX="maybe", GPUTRACE_CLOCK="tsc",
                     GPUTRACE_GPU_TIMING_SAMPLE="x", GPUTRACE_RINGKB="64"), check_rc=0)
    eq(p.stdout, "basic: 0 failures\n", "the program")
    eq(sorted(p.stderr.splitlines()), sorted([
        "gputrace: ignoring GPUTRACE_STACKS=bogus (want alloc, all, none or alloc+free); using alloc",
        "gputrace: ignoring GPUTRACE_NVTX=maybe (want 1 or 0 (also true/false, yes/no, "
        "on/off)); using 1",
        "gputrace: ignoring GPUTRACE_CLOCK=tsc (want auto or monotonic); using auto",
        "gputrace: ignoring GPUTRACE_GPU_TIMING_SAMPLE=x (want auto or a whole number of "
        "calls from 1 to 1000000); using auto",
        "gputrace: ignoring unknown variable GPUTRACE_RINGKB (docs/cli.md)"]),
       "one line per bad knob")
    events = dump(out)
    eq(count(events, kind="launch"), 15, "traced with the defaults")
    eq(count(events, kind="stack") > 0, True, "allocation stacks (the default) captured")


main([test_disable_yes, test_ring_kb_out_of_bounds, test_garbage_values])
