"""A traced program's descriptors are its own (issue 14).

`daemon` closes every descriptor it did not open right after its first CUDA
call (daemons do this), opens its own files, pauses, makes 1000 more
allocations from new threads, forks a child that writes to every file and
allocates once, and checks its files byte for byte. Before: the collector took
the closed socket for the process's end (1 of 1001 allocations, dropped=0
lost=0) and the child's fork handler closed the program's file that had the
socket's old number (EBADF). Now the shim's descriptors live high and are
checked before use, and the collector tells the end of a process by its pidfd."""
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
    # Stacks off: libunwind's validation pipe is the lead's (backtrace() replaces it).
    p, out = record([prog("daemon"), d], GPUTRACE_STACKS="none")
    eq(p.stdout, "input ok\nfiles ok\ndaemon: 1001 allocations\n", "the program's own checks")
    check_daemon(dump(out), d)


def test_plain_preload():
    d = run_daemon("pre")
    out = os.path.join(TMP, "daemon_pre.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_STACKS="none")
    p = run([prog("daemon"), d], env, check_rc=0)
    eq(p.stdout, "input ok\nfiles ok\ndaemon: 1001 allocations\n", "the program's own checks")
    check_daemon(wait_for_trace(out, 2), d)


main([test_record, test_plain_preload])
