"""Stress and process-model faults: a launch storm into a tiny
ring (every call either recorded or counted dropped, per kind, exactly),
fork storms, exec chains under `bash -c`, 64 threads, exit() while other
threads launch, SIGSEGV in the program, the runtime dlopen'ed late with
RTLD_LOCAL (as PyTorch loads it)."""
import os
from gtest import *


def recorded_plus_dropped(events, kind):
    dropped = sum(e["count"] for e in select(events, kind="drop", of_kind=kind))
    return count(events, kind=kind) + dropped, dropped


def storm_accounts_for_every_call(ring_kb, ring):
    """8 threads x 20,000 launches into a ring of ring_kb KiB that the storm
    overflows (dropping at once: GPUTRACE_FULL_WAIT_US=0, where a full
    sub-ring would wait for the collector: test_full_ring.py): every call
    recorded or counted dropped, per kind, exactly."""
    p, out = record([prog("threads"), "20000", "8"], GPUTRACE_RING_KB=ring_kb,
                    GPUTRACE_FULL_WAIT_US="0")
    events = dump(out)
    launches, dropped = recorded_plus_dropped(events, "launch")
    eq(launches, 8 * 20000, "launches recorded + dropped")
    if dropped == 0:
        raise AssertionError("%s under a launch storm dropped nothing" % ring)
    eq(recorded_plus_dropped(events, "stream")[0], 16, "stream create+destroy")
    eq(recorded_plus_dropped(events, "sync")[0], 8, "syncs")
    end = select(events, kind="process", phase="end")[0]
    eq(end["dropped"], sum(e["count"] for e in select(events, kind="drop")), "end record's total")
    eq(end["lost"], 0, "nothing lost")
    return events


def test_launch_storm_tiny_ring_accounts_for_every_call():
    # 16 KiB: 2 sub-rings over 5 blocks of 32 slots; 6 threads on the shared ring
    storm_accounts_for_every_call("16", "a 16 KiB ring")


def test_storm_eight_sub_rings_accounts_for_every_call():
    # 256 KiB: 16 sub-rings, so every launching thread has its own, over a
    # pool of 61 blocks of 64 slots
    events = storm_accounts_for_every_call("256", "a 244 KiB pool")
    for tid in by(select(events, kind="launch"), "tid"):
        ts = [e["ts_ns"] for e in calls(events) if e["tid"] == tid]
        eq(ts, sorted(ts), "thread %d's records in time order" % tid)


def test_sixty_four_threads():
    p, out = record([prog("threads"), "500", "64"])
    events = dump(out)
    per_tid = by(select(events, kind="launch"), "tid")
    eq(len(per_tid), 64, "threads")
    eq(set(per_tid.values()), {500}, "launches per thread")


def test_fork_storm():
    p, out = record([prog("fork_storm"), "24"])
    eq(p.stdout, "fork_storm: 24 children, 0 failed\n", "program output")
    events = dump(out)
    starts = select(events, kind="process", phase="start")
    eq(len(starts), 25, "processes")
    parent = starts[0]["pid"]
    children = [s["pid"] for s in starts if s["pid"] != parent]
    for pid in children:
        eq(count(events, pid=pid, kind="launch", kernel="in_child(int)"), 50, "child %d launches" % pid)
    sizes = sorted(e["bytes"] for e in select(events, kind="alloc") if e["pid"] != parent)
    eq(sizes, [4096 * (c + 1) for c in range(24)], "one allocation per child, by size")
    eq(count(events, pid=parent, kind="launch"), 25, "parent launches")
    eq(len(select(events, kind="process", phase="end")), 25, "every process ended")


def test_exec_chain_under_bash():
    basic = prog("basic")
    p, out = record(["bash", "-c", "%s && %s >/dev/null && exec %s" % (basic, basic, basic)])
    eq(p.stdout, "basic: 0 failures\nbasic: 0 failures\n", "output")
    events = dump(out)
    starts = select(events, kind="process", phase="start")
    eq(len(starts), 3, "three traced processes (bash itself makes no CUDA call)")
    for s in starts:
        eq(count(events, pid=s["pid"], kind="launch"), 15, "launches of pid %d" % s["pid"])


def test_exit_from_main_while_threads_launch():
    p, out = record([prog("exit_thread")], check_rc=3, timeout=60)
    events = dump(out)
    if count(events, kind="launch") < 1000:
        raise AssertionError("launches before exit: %d" % count(events, kind="launch"))


def test_sigsegv_in_program():
    plain = run([prog("segv")], base_env())
    eq(plain.returncode, -11, "untraced: killed by SIGSEGV")
    p, out = record([prog("segv")], check_rc=128 + 11)
    eq(p.stdout, plain.stdout, "output before the crash")
    events = dump(out)
    eq(count(events, kind="launch"), 100, "launches before the crash")
    eq(count(events, kind="alloc"), 2, "allocations before the crash")


def test_runtime_dlopened_late_with_rtld_local():
    plugin = os.path.join(PROGS, "libplugin.so")
    p, out = record([prog("dlopen_host"), plugin])
    eq(p.stdout, "plugin_run: 0\n", "output")
    events = dump(out)
    eq(count(events, kind="launch", kernel="plugin_kernel(float*)"), 25, "plugin launches")
    eq([(e["api"], e["bytes"]) for e in select(events, kind="alloc")], [("cudaMalloc", 1 << 20)],
       "allocation")
    eq(count(events, kind="free"), 1, "free")


main([test_launch_storm_tiny_ring_accounts_for_every_call,
      test_storm_eight_sub_rings_accounts_for_every_call, test_sixty_four_threads,
      test_fork_storm, test_exec_chain_under_bash, test_exit_from_main_while_threads_launch,
      test_sigsegv_in_program, test_runtime_dlopened_late_with_rtld_local])
