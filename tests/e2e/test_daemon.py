"""A traced program's descriptors are its own, and its end is told by the
process, not by its socket.

`daemon` closes every descriptor it did not open right after its first CUDA
call (daemons do this), opens its own files, pauses, makes 1000 more
allocations from new threads, forks a child that writes to every file and
allocates once, and checks its files byte for byte. The closed socket is not
the process's end (all 1001 allocations are in the trace, nothing dropped or
lost) and the child's fork handler never closes the program's file that got
the socket's old number: the shim's descriptors live high and are checked
before use, and the collector tells the end of a process by its pidfd."""
import os
from gtest import *


def check_daemon(events, d):
    starts = select(events, kind="process", phase="start")
    daemons = [e for e in starts if e["cmdline"] == "%s %s" % (prog("daemon"), d)]
    eq(len(daemons), 2, "parent and child traced (%r)" % [e["cmdline"] for e in starts])
    parent = [e["pid"] for e in daemons if e["ppid"] not in [x["pid"] for x in daemons]]
    eq(len(parent), 1, "one parent")
    child = [e["pid"] for e in daemons if e["pid"] != parent[0]][0]
    mine = select(events, pid=parent[0])
    eq((count(mine, kind="alloc"), count(mine, kind="free")), (1001, 1000),
       "the parent's allocations and frees")
    eq(count(select(events, pid=child), kind="alloc"), 1, "the child's allocation")
    ends = [(e["pid"], e["dropped"], e["lost"]) for e in select(events, kind="process", phase="end")
            if e["pid"] in (parent[0], child)]
    eq(sorted(ends), sorted([(parent[0], 0, 0), (child, 0, 0)]), "end records")


def run_daemon(name, **env):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    with open(os.path.join(d, "input"), "wb") as f:
        f.write(bytes(i % 251 for i in range(4096)))
    return d


def test_record():
    d = run_daemon("rec")
    # Stacks on (the default): the shim's unwinder (glibc's backtrace) keeps no
    # descriptor of its own among the program's.
    p, out = record([prog("daemon"), d])
    eq(p.stdout, "input ok\nfiles ok\ndaemon: 1001 allocations\n", "the program's own checks")
    check_daemon(dump(out), d)


def test_plain_preload():
    d = run_daemon("pre")
    out = os.path.join(TMP, "daemon_pre.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out)
    p = run([prog("daemon"), d], env, check_rc=0)
    eq(p.stdout, "input ok\nfiles ok\ndaemon: 1001 allocations\n", "the program's own checks")
    check_daemon(wait_for_trace(out, 2), d)


def test_exec_into_a_traced_image():
    # The same pid connects again after the exec: the first image's ring is
    # final and ends there, the second is traced on its own.
    p, out = record([prog("exec_after"), "3", prog("basic")])
    eq(p.stdout, "basic: 0 failures\n", "the program")
    events = dump(out)
    starts = select(events, kind="process", phase="start")
    eq([s["cmdline"].split()[0] for s in starts], [prog("exec_after"), prog("basic")],
       "two images")
    eq(starts[0]["pid"], starts[1]["pid"], "one pid")
    eq(len(select(events, kind="process", phase="end")), 2, "two ends")
    second = starts[1]["ts_ns"]  # the new image's ring is made after the exec
    allocs = [e["ts_ns"] < second for e in select(events, kind="alloc")]
    eq((allocs.count(True), allocs.count(False), count(events, kind="launch")), (3, 5, 15),
       "every call of both images")


def test_exec_into_an_untraced_image():
    # The exec unmaps the ring: its end is the exec, not the exit 2 s later.
    p, out = record([prog("exec_after"), "3", "sleep", "2"])
    events = dump(out)
    start = select(events, kind="process", phase="start")
    end = select(events, kind="process", phase="end")
    eq((len(start), len(end), count(events, kind="alloc")), (1, 1, 3), "one image, 3 allocations")
    took = (end[0]["ts_ns"] - start[0]["ts_ns"]) / 1e9
    if took > 1.0:
        raise AssertionError("the end came %.2f s after the start: at the exit, not the exec" % took)


main([test_record, test_plain_preload, test_exec_into_a_traced_image,
      test_exec_into_an_untraced_image])
