"""Threads, fork and SIGKILL: 8 threads launching concurrently keep exact
per-thread counts, each thread's records in time order (each writes its
own sub-ring); a forked child's events carry its own pid, and each process
names only the kernels it launched; a child that clone() made without
fork()'s handlers (raw clone system call, glibc's clone(), a grandchild) is
traced under its own pid, and its parent loses nothing (before: the child
wrote into its parent's sub-ring, 0 of the parent's 1,000 allocations
reached the trace, dropped 0, lost 0); a program killed with SIGKILL keeps
every event it made before the kill."""
import collections

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


def clone_run(how, out):
    """raw_clone HOW: its trace's events and the pids it printed."""
    p, trace = record([prog("raw_clone"), how], out=os.path.join(TMP, out))
    words = p.stdout.split()
    return dump(trace), [int(w) for w in words[1::2]]


def same_sizes(got, expected, what):
    """Allocation sizes, compared as (count, unexpected, missing)."""
    eq((len(got), sorted(set(got) - set(expected)), sorted(set(expected) - set(got))),
       (len(expected), [], []), what + " (count, unexpected, missing)")


def check_parent(events, parent, extra=()):
    same_sizes([e["bytes"] for e in select(events, pid=parent, kind="alloc")],
               [999] + list(range(1000, 2000)) + list(extra), "the parent's allocations")
    eq(count(events, pid=parent, kind="free"), 1001, "the parent's frees")
    eq(by(select(events, pid=parent, kind="launch"), "kernel"), {"parent_kernel()": 4},
       "the parent's launches")


def check_whole(events, pids):
    starts = select(events, kind="process", phase="start")
    eq(sorted(s["pid"] for s in starts), sorted(pids), "processes")
    ends = select(events, kind="process", phase="end")
    eq(sorted((e["pid"], e["dropped"], e["lost"]) for e in ends),
       sorted((pid, 0, 0) for pid in pids), "processes ended, nothing dropped or lost")
    eq([e["note"] for e in select(events, kind="note") if "garbage" in e["note"]], [],
       "notes of damage")


def check_child(events, child, parent, base, launches):
    eq([s["ppid"] for s in select(events, kind="process", phase="start", pid=child)],
       [parent], "the child's parent")
    eq(sorted(e["bytes"] for e in select(events, pid=child, kind="alloc")),
       list(range(base, base + 10)), "the child's allocations")
    eq(count(events, pid=child, kind="free"), 10, "the child's frees")
    eq(by(select(events, pid=child, kind="launch"), "kernel"),
       {"child_kernel()": launches} if launches else {}, "the child's launches")


def test_clone_children():
    for run in range(3):
        events, (parent, child) = clone_run("syscall", "clone_syscall_%d.gtrace" % run)
        check_whole(events, [parent, child])
        check_parent(events, parent)
        check_child(events, child, parent, 5000, 5)
    events, (parent, child) = clone_run("clone", "clone_glibc.gtrace")
    check_whole(events, [parent, child])
    check_parent(events, parent)
    check_child(events, child, parent, 5000, 5)
    events, (parent, child, grand) = clone_run("grandchild", "clone_grand.gtrace")
    check_whole(events, [parent, child, grand])
    check_parent(events, parent)
    check_child(events, child, parent, 5000, 5)
    check_child(events, grand, child, 7000, 0)


def test_clone_child_other_thread_first():
    """The child's first CUDA calls come from a thread it made: untraced until
    the thread clone() returned in makes one (its thread-local state is its
    parent thread's until then), and counted in the child's own trace."""
    events, (parent, child) = clone_run("thread", "clone_thread.gtrace")
    check_parent(events, parent)
    check_child(events, child, parent, 5000, 0)
    # the collector writes a drop record for what each drain found, so a
    # drain between the other thread's calls splits the 6 (1 + 5 seen under
    # ASan): the counts add up, of one kind
    drops = collections.Counter()
    for e in select(events, kind="drop", pid=child):
        drops[e["of_kind"]] += e["count"]
    eq(dict(drops), {"none": 6}, "the other thread's 3 allocations and 3 frees, counted")
    eq(count(events, kind="drop", pid=parent), 0, "nothing of the parent's dropped")


def test_vfork_child_calls_cuda():
    """Undefined by POSIX (a vfork child may only _exit or exec): it runs in its
    parent's memory and thread, so its call is recorded as the parent's
    (docs/cli.md), and the parent loses nothing."""
    events, (parent, child) = clone_run("vfork", "vfork_cuda.gtrace")
    check_whole(events, [parent])
    check_parent(events, parent, extra=[9999])


def test_sigkill_keeps_events():
    p, out = record([prog("killed"), "20000"], check_rc=137)
    eq(p.stdout, "launched 20000\n", "program output before the kill")
    events = dump(out)
    eq(count(events, kind="launch", kernel="before_kill(int)"), 20000, "launches before kill")
    eq(count(events, kind="alloc"), 3, "allocations before kill")
    end = select(events, kind="process", phase="end")
    eq(len(end), 1, "the process's end is recorded")
    eq((end[0]["dropped"], end[0]["lost"]), (0, 0), "nothing dropped or lost")


main([test_eight_threads, test_fork_child_has_its_own_pid, test_clone_children,
      test_clone_child_other_thread_first, test_vfork_child_calls_cuda,
      test_sigkill_keeps_events])
