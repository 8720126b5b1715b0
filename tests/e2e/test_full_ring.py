"""A full sub-ring waits for the collector before it drops: a storm whose
collector shares one CPU with it and a busy loop loses nothing while the
thread yields its core as the collector reads its sub-ring (giving up after
GPUTRACE_FULL_WAIT_US without: 50 ms by default, which holds on that CPU
here, docs/PERFORMANCE.md; 1 s in this test, so that a suite loading the
same CPU cannot starve the collector past it), where
GPUTRACE_FULL_WAIT_US=0 (drop at once) loses records; and a stopped
collector costs a thread one wait, then it drops at once for 10 s, so the
program runs on and every call is accounted for."""
import signal
import subprocess
import time

from gtest import *

LAUNCHES, THREADS = 20000, 4


def storm(wait_us):
    """THREADS x LAUNCHES launches into a 256 KiB ring under
    GPUTRACE_FULL_WAIT_US=wait_us, the program and its collector on CPU 0
    beside a busy loop: (launches recorded, dropped)."""
    busy = BusyCpu(0)
    try:
        out = os.path.join(TMP, "storm%s.gtrace" % wait_us)
        if os.path.lexists(out):
            os.unlink(out)
        p = subprocess.run([GPUTRACE, "record", "-q", "--ring-kb", "256", "-o", out, "--",
                            prog("threads"), str(LAUNCHES), str(THREADS)],
                           env=base_env(GPUTRACE_FULL_WAIT_US=wait_us), preexec_fn=on_cpus({0}),
                           capture_output=True, text=True, timeout=300)
    finally:
        busy.stop()
    eq(p.returncode, 0, "record's status (%s)" % p.stderr)
    events = dump(out)
    dropped = sum(e["count"] for e in select(events, kind="drop", of_kind="launch"))
    return count(events, kind="launch"), dropped


def test_a_storm_on_a_shared_cpu_loses_nothing():
    eq(storm(1000000), (LAUNCHES * THREADS, 0), "launches recorded and dropped, waiting")
    kept, dropped = storm(0)
    eq(kept + dropped, LAUNCHES * THREADS, "recorded + dropped, dropping at once")
    if dropped == 0:
        raise AssertionError("dropping at once lost nothing: the storm did not fill the ring")


def test_a_stopped_collector_costs_one_wait():
    """steady (a launch, a sync and a 2 ms sleep an iteration) into a 16 KiB
    ring, its collector stopped after 50 iterations for the 950 left: a
    wait per full record (50 ms each, ~2,800 of them) would add minutes;
    one wait in ten seconds adds 50 ms to its ~2 s."""
    out = os.path.join(TMP, "stopped.gtrace")
    if os.path.lexists(out):
        os.unlink(out)
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_RING_KB="16")
    p = subprocess.Popen([prog("steady"), "1000", "50"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    coll = wait_collector(out)
    eq(p.stdout.readline(), "steady: paused\n", "the program's pause")
    os.kill(coll, signal.SIGSTOP)
    try:
        t0 = time.time()
        p.stdin.write("go\n")
        p.stdin.flush()
        eq(p.stdout.readline(), "steady: 1000 iterations\n", "the program's end")
        took = time.time() - t0
    finally:
        os.kill(coll, signal.SIGCONT)
    p.communicate(timeout=60)
    eq(p.returncode, 0, "the program's status")
    if took > 10:
        raise AssertionError("950 iterations took %.1f s with the collector stopped" % took)
    events = wait_for_trace(out, 1, timeout=60)
    launches = count(events, kind="launch") + sum(
        e["count"] for e in select(events, kind="drop", of_kind="launch"))
    eq(launches, 1000, "launches recorded + dropped")


if __name__ == "__main__":
    main([test_a_storm_on_a_shared_cpu_loses_nothing, test_a_stopped_collector_costs_one_wait])
