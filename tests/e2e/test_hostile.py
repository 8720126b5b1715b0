"""A hostile client cannot crash, stall or starve the collector.

Each test runs `gputrace record -- sh -c 'hostile_client MODE ... & exec steady 400'`:
a client attacking the collector beside a well-behaved program (400 launches
and synchronizations, 2 ms apart) whose ring holds only half a second of
records. Whatever the attacker does, the collector must keep draining: the
program's 800 calls are all in the trace, nothing dropped or lost, and
`record` finishes with the program's status."""
import json
import os
import re
import signal
import subprocess
import time
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


def attack(name, hostile_args, pause=0.2, dump_rc=0):
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
    events = dump(out, dump_rc)
    starts = [e for e in events if e["kind"] == "process" and e["phase"] == "start"
              and "steady" in e["cmdline"]]
    eq(len(starts), 1, "steady traced once")
    pid = starts[0]["pid"]
    mine = select(events, pid=pid)
    end = select(mine, kind="process", phase="end")
    # On a failure, how the records went missing (dropped: its ring was full,
    # the collector did not drain it) and what the collector said.
    why = "dropped %d, end (dropped, lost) %r; record's stderr: %r" % (
        ring_drops(mine), [(e["dropped"], e["lost"]) for e in end], p.stderr[-800:])
    eq(count(mine, kind="launch"), STEADY_N, "steady's launches (%s)" % why)
    eq(count(mine, kind="sync"), STEADY_N, "steady's synchronizations (%s)" % why)
    eq(ring_drops(mine), 0, "steady's dropped records")
    eq([(e["dropped"], e["lost"]) for e in end], [(0, 0)], "steady's end record")
    return p.stderr, open(said).read(), events, pid


def test_scribbling_ring():
    # A process that writes garbage into its own ring (a buggy program can):
    # before, its drop counter (3008939473955805617), a head far past its
    # ring (lost 18446744073709551615) and impossible times went into the
    # trace as they were: report said "wall time 17524196857.46 s", shares
    # of 138 %, status 0.
    t0 = time.monotonic()
    err, said, events, _ = attack("scribble", ["scribble", "1"], dump_rc=3)
    took = time.monotonic() - t0
    eq(said, "ack K\n", "attacker accepted")
    hostile = [e["pid"] for e in events if e["kind"] == "process" and e["phase"] == "start"
               and e["cmdline"] == "hostile_client"]
    eq(len(hostile), 1, "attacker traced")
    mine = select(events, pid=hostile[0])
    syncs = select(mine, kind="sync")
    eq(len(syncs), 10, "its honest synchronizations, and only those")
    eq(ring_drops(mine), 0, "its garbage drop counter ignored")
    end = select(mine, kind="process", phase="end")
    eq(len(end), 1, "its end")
    eq(end[0]["dropped"], 0, "dropped in its end record")
    if not 0 < end[0]["lost"] <= 64 * 1024 // 64:
        raise AssertionError("lost in its end record: %d" % end[0]["lost"])
    what = ("process %d wrote garbage into its ring: 3 records with times outside its "
            "run dropped, drop counters out of bounds ignored, 1 impossible positions "
            "skipped; its figures are not whole" % hostile[0])
    if what not in err:
        raise AssertionError("collector note: %r" % err)
    notes = select(mine, kind="note")
    eq([n["note"] for n in notes], [what], "the NOTE marking its data damaged")
    out = os.path.join(TMP, "scribble.gtrace")
    r = subprocess.run([GPUTRACE, "report", out], capture_output=True, text=True,
                       timeout=120)
    eq(r.returncode, 3, "report: damage is status 3 (stderr %r)" % r.stderr)
    if "incomplete: " + what not in r.stderr:
        raise AssertionError("report names the damaged process: %r" % r.stderr)
    wall = re.search(r"wall time ([0-9.]+) (s|ms)", r.stdout)
    secs = float(wall.group(1)) / (1000 if wall.group(2) == "ms" else 1)
    if secs > took:
        raise AssertionError("wall time %.2f s, the run took %.2f s" % (secs, took))
    shares = [float(x) for x in re.findall(r"([0-9.]+) %", r.stdout)]
    if not shares or max(shares) > 100:
        raise AssertionError("shares %r:\n%s" % (shares, r.stdout))
    r = subprocess.run([GPUTRACE, "report", "--json", out], capture_output=True, text=True,
                       timeout=120)
    sh = json.loads(r.stdout)["shares"]
    fractions = [sh[k] for k in ("copy", "kernel", "launch", "sync", "api", "idle")]
    if not all(0 <= f <= 1 for f in fractions):
        raise AssertionError("JSON shares out of 0..1: %r" % sh)


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


def test_other_contracts():
    # A shim of protocol 1 (its 1064-byte hello, version 1: read by its
    # version alone, never as this protocol's hello) and one of this
    # protocol claiming a kind more: each is answered GT_ACK_CONTRACT ('C',
    # the first byte, all a protocol 1 shim reads), noted untraced, and its
    # ring, which holds a synchronization, never read.
    ours = contract()
    for which, theirs, said_expected in (
            ("v1", "1", "ack C\n"),
            ("kinds", contract(int(ours.split("/")[2]) + 1), "ack C contract %s\n" % ours)):
        err, said, events, _ = attack("contract_" + which, ["contract", which, "0.5"])
        eq(said, said_expected, "%s: the attacker's answer" % which)
        why = ("refused a shim of contract %s, this collector's %s (protocol/ring/kinds/APIs)"
               % (theirs, ours))
        refusals = [l for l in err.splitlines() if "refused" in l]
        if len(refusals) != 1 or not re.fullmatch(
                r"gputrace-collector: %s \(pid \d+\)" % re.escape(why), refusals[0]):
            raise AssertionError("%s: the collector's note: %r" % (which, refusals))
        pid = int(re.search(r"\(pid (\d+)\)$", refusals[0]).group(1))
        notes = [e["note"] for e in events if e["kind"] == "note" and "untraced" in e["note"]]
        eq(notes, ["pid %d (%s contract %s 0.5) ran untraced: %s" %
                   (pid, prog("hostile_client"), which, why)], "%s: the trace's note" % which)
        eq(select(events, pid=pid), [], "%s: nothing of its ring" % which)
        eq(count(events, kind="sync"), STEADY_N, "%s: steady's synchronizations alone" % which)


main([test_silent_clients, test_huge_ring, test_fifo_module, test_mutating_ring,
      test_scribbling_ring, test_other_contracts])
