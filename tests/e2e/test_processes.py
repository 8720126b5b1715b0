"""Threads, fork and SIGKILL: 8 threads launching concurrently keep exact
per-thread counts, each thread's records in time order (each writes its
own sub-ring); a forked child's events carry its own pid, and each process
names only the kernels it launched; a program killed with SIGKILL keeps
every event it made before the kill."""
from gtest import *


def test_eight_threads():
    p, out = record([prog("threads"), "2000"])
    events = dump(out)
    launches = select(events, kind="launch")
    per_tid = by(launches, "tid")
    eq(len(per_tid), 8, "threads that launched")
    eq(sorted(per_tid.values()), [2000] * 8, "launches per thread")
    eq(by(launches, "kernel"), {"work(int*)": 16000}, "kernel name")
    # each thread's launches all went to the stream that thread created
    for tid in per_tid:
        created = select(events, tid=tid, api="cudaStreamCreate")
        eq(len(created), 1, "streams created by thread %d" % tid)
        eq({e["stream"] for e in select(launches, tid=tid)}, {created[0]["handle"]},
           "thread %d's stream" % tid)
    eq(count(events, api="cudaStreamSynchronize"), 8, "syncs")
    eq(ring_drops(events), 0, "drops")
    for tid in per_tid:
        ts = [e["ts_ns"] for e in calls(events) if e["tid"] == tid]
        eq(ts, sorted(ts), "thread %d's records in time order" % tid)


def test_fork_child_has_its_own_pid():
    p, out = record([prog("forked")])
    events = dump(out)
    starts = select(events, kind="process", phase="start")
    eq(len(starts), 2, "processes")
    parent, child = starts[0]["pid"], starts[1]["pid"]
    eq(starts[1]["ppid"], parent, "child's parent")
    eq(p.stdout.splitlines()[-1], "parent %d child %d status 0" % (parent, child), "pids agree")
    eq(by(select(events, pid=parent), "kind")["launch"], 4, "parent launches")
    eq(by(select(events, pid=child), "kind")["launch"], 7, "child launches")
    eq(sorted(e["bytes"] for e in select(events, pid=child, kind="alloc")), [2000, 3000],
       "child allocations")
    eq([e["bytes"] for e in select(events, pid=parent, kind="alloc")], [1000], "parent alloc")
    eq(sorted(e["bytes"] for e in select(events, pid=child, kind="free")), [2000, 3000],
       "child frees matched within the child")
    eq(by(select(events, pid=child, kind="launch"), "kernel"), {"child_kernel()": 7},
       "child kernel names resolve")
    # Both kernels are registered in both processes; the collector writes
    # only the names of kernels each launched (held back until a launch).
    eq([e["mangled"] for e in select(events, pid=parent, kind="kernel_name")],
       ["_Z13parent_kernelv"], "the parent's kernel names")
    eq([e["mangled"] for e in select(events, pid=child, kind="kernel_name")],
       ["_Z12child_kernelv"], "the child's kernel names")
    eq(len(select(events, kind="process", phase="end")), 2, "both processes ended")


def test_sigkill_keeps_events():
    p, out = record([prog("killed"), "20000"], check_rc=137)
    eq(p.stdout, "launched 20000\n", "program output before the kill")
    events = dump(out)
    eq(count(events, kind="launch", kernel="before_kill(int)"), 20000, "launches before kill")
    eq(count(events, kind="alloc"), 3, "allocations before kill")
    end = select(events, kind="process", phase="end")
    eq(len(end), 1, "the process's end is recorded")
    eq((end[0]["dropped"], end[0]["lost"]), (0, 0), "nothing dropped or lost")


main([test_eight_threads, test_fork_child_has_its_own_pid, test_sigkill_keeps_events])
