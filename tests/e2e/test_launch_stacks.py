"""Launch stacks by default: the first launch of each kernel from
each call site gets a call stack, then one launch in N per thread, N
adapting so that stacks cost about 1 % of the thread's time;
GPUTRACE_LAUNCH_STACKS=N fixes N, GPUTRACE_STACKS=all takes every launch's
and GPUTRACE_STACKS=none none."""
from gtest import *


def launch_stacks(events):
    return [e for e in select(events, kind="launch") if e.get("stack_id")]


def test_first_launch_of_each_kernel_has_a_stack():
    p, out = record([prog("basic")])
    events = dump(out)
    firsts = {}
    for e in select(events, kind="launch"):
        firsts.setdefault(e["kernel"], e)
    eq(len(firsts), 2, "kernels launched")
    for kernel, e in firsts.items():
        if not e.get("stack_id"):
            raise AssertionError("the first launch of %s has no stack" % kernel)
    # 15 launches: fewer than the first sample (N starts at 1024)
    eq(len(launch_stacks(events)), 2, "launches with a stack")
    stacks = {e["id"] for e in select(events, kind="stack")}
    for e in launch_stacks(events):
        if e["stack_id"] not in stacks:
            raise AssertionError("stack %d is not in the trace" % e["stack_id"])
    functions = {e["function"] for e in select(events, kind="frame")}
    if "main" not in functions:
        raise AssertionError("launch stacks are not symbolized: %s" % sorted(functions))


def test_sampled_per_thread_within_budget():
    p, out = record([prog("threads"), "50000", "4"], GPUTRACE_GPU_TIMING="off")
    events = dump(out)
    launches = count(events, kind="launch")
    eq(launches + ring_drops(events), 200000, "launches")
    per_tid = by(launch_stacks(events), "tid")
    eq(len(per_tid), 4, "threads with sampled launch stacks")
    n = sum(per_tid.values())
    if n > launches // 100:
        raise AssertionError("%d launch stacks in %d launches: over the budget" % (n, launches))


def test_knobs():
    _, out = record([prog("basic")], GPUTRACE_STACKS="none")
    eq(len(launch_stacks(dump(out))), 0, "GPUTRACE_STACKS=none")
    _, out = record([prog("basic")], GPUTRACE_LAUNCH_STACKS="1")
    eq(len(launch_stacks(dump(out))), 15, "GPUTRACE_LAUNCH_STACKS=1: every launch")
    _, out = record([prog("basic")], GPUTRACE_STACKS="all")
    eq(len(launch_stacks(dump(out))), 15, "GPUTRACE_STACKS=all: every launch")
    _, out = record([prog("basic")], GPUTRACE_LAUNCH_STACKS="3")
    # the first of each kernel (launches 1 and 11), then every third launch
    # after the first (4, 7, 10, 13)
    eq(len(launch_stacks(dump(out))), 2 + (15 - 1) // 3, "GPUTRACE_LAUNCH_STACKS=3")


main([test_first_launch_of_each_kernel_has_a_stack, test_sampled_per_thread_within_budget,
      test_knobs])
