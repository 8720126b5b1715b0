"""A hostile client cannot crash, stall or starve the collector.

Each test runs `gputrace record -- sh -c 'hostile_client MODE ... & exec steady 400'`:
a client attacking the collector beside a well-behaved program (400 launches
and synchronizations, 2 ms apart) whose ring holds only half a second of
records. Whatever the attacker does, the collector must keep draining: the
program's 800 calls are all in the trace, nothing dropped or lost, and
`record` finishes with the program's status."""
import os
import signal
import subprocess
from gtest import *

STEADY_N = 400


def kill_leftovers(out):
    """After a failed run: stop a collector still serving `out`, and the attacker."""
    pids = [collector_pid(out)]
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and os.readlink("/proc/%s/exe" % p).endswith("hostile_client"):
                pids.append(int(p))
        except OSError:
            pass
    for pid in pids:
        try:
            if pid:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def attack(name, hostile_args, pause=0.2):
    """Run the attacker and steady side by side; return (record stderr,
    attacker output, events, steady's pid)."""
    out = os.path.join(TMP, name + ".gtrace")
    said = os.path.join(TMP, name + ".hostile")
    script = "%s %s > %s 2>&1 & sleep %s; exec %s %d" % (
        prog("hostile_client"), " ".join(hostile_args), said, pause, prog("steady"), STEADY_N)
    env = base_env(GPUTRACE_RING_KB="64")  # 512 slots: half a second of steady
    try:
        p = subprocess.run([GPUTRACE, "record", "-o", out, "--", "sh", "-c", script], env=env,
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        kill_leftovers(out)
        raise AssertionError("record did not finish in 60 s: the collector is stalled")
    eq((p.returncode, p.stdout), (0, "steady: %d iterations\n" % STEADY_N),
       "steady's status and output (stderr: %r)" % p.stderr)
    if "collector reported errors" in p.stderr:
        raise AssertionError("collector failed: %r" % p.stderr)
    events = dump(out)
    starts = [e for e in events if e["kind"] == "process" and e["phase"] == "start"
              and "steady" in e["cmdline"]]
    eq(len(starts), 1, "steady traced once")
    pid = starts[0]["pid"]
    mine = select(events, pid=pid)
    eq(count(mine, kind="launch"), STEADY_N, "steady's launches")
    eq(count(mine, kind="sync"), STEADY_N, "steady's synchronizations")
    eq(ring_drops(mine), 0, "steady's dropped records")
    end = select(mine, kind="process", phase="end")
    eq([(e["dropped"], e["lost"]) for e in end], [(0, 0)], "steady's end record")
    return p.stderr, open(said).read(), events, pid


def test_silent_clients():
    # Five connections that never send a hello: before, each held the drain
    # loop for 2 s and steady's ring overflowed (or its handshake timed out).
    err, said, _, _ = attack("silent", ["silent", "5", "6"], pause=0.3)
    eq(said, "connected 5\n", "attacker")
    eq(err.count("refused a silent client"), 5, "collector notes (%r)" % err)


def test_huge_ring():
    # A sparse 2 GiB ring: before, it was accepted and faulted in on the
    # accept path (seconds, gigabytes); now refused by the 1 GiB cap.
    err, said, events, _ = attack("huge", ["huge", str(2 << 30)])
    eq(said, "ack R\n", "the attacker is refused")
    if "refused an invalid ring" not in err or "larger than the 1 GiB limit" not in err:
        raise AssertionError("collector note: %r" % err)
    eq(count(events, kind="process", phase="start", cmdline="hostile_client"), 0,
       "no trace of the refused process")


def test_fifo_module():
    # A MODULE record naming a FIFO: before, the collector blocked in open()
    # forever and every other process ran untraced.
    fifo = os.path.join(TMP, "module.fifo")
    os.mkfifo(fifo)
    _, said, events, _ = attack("fifo", ["fifo", fifo, "3"])
    eq(said, "ack K\n", "attacker accepted")
    hostile = [e["pid"] for e in events if e["kind"] == "process" and e["phase"] == "start"
               and e["cmdline"] == "hostile_client"]
    eq(len(hostile), 1, "attacker traced")
    frames = select(events, kind="frame", pid=hostile[0])
    eq([(f["ip"], f["function"]) for f in frames], [("0x1234", "??")],
       "its address resolves to an unknown frame")


def test_mutating_ring():
    # Slot counts flipped between the collector's check and its copy: before,
    # the collector overflowed its stack copying a 255-slot "record" (SIGSEGV).
    _, said, events, _ = attack("mutate", ["mutate", "1.5"])
    eq(said, "ack K\n", "attacker accepted")
    hostile = [e["pid"] for e in events if e["kind"] == "process" and e["phase"] == "start"
               and e["cmdline"] == "hostile_client"]
    eq(len(hostile), 1, "attacker traced")
    stacks = select(events, kind="stack", pid=hostile[0])
    if not stacks or any(len(s["entries"]) != 16 for s in stacks):
        raise AssertionError("stack records: %d, depths %r" %
                             (len(stacks), sorted({len(s["entries"]) for s in stacks})))


main([test_silent_clients, test_huge_ring, test_fifo_module, test_mutating_ring])
