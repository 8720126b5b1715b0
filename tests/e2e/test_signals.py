"""Signals are the traced program's own.

`record` passes SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to it on to
the command and survives them; a signal the command sends to its own process
group reaches the command only (the collector runs in its own group, and
`record` does not relay what the group already got); a collector started with
SIGHUP ignored (nohup) keeps ignoring it; a collector stopped while processes
run says so in the trace, and every command warns about it. A program's
interval timer firing through the shim's handshake with the collector does not
leave it untraced."""
import os
import signal
import subprocess
import time
from gtest import *


def start_record(out, args, ignore_hup=False):
    """record in a session of its own (like a shell job), the command's stdout piped."""
    def setup():
        if ignore_hup:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = subprocess.Popen([GPUTRACE, "record", "-q", "-o", out, "--"] + args, env=base_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=setup)
    eq(p.stdout.readline(), "ready\n", "the command started")
    return p


def collector_of(out):
    pid = collector_pid(out)
    if pid is None:
        raise AssertionError("no collector for " + out)
    return pid


def launches(out):
    """Launches in the trace, and its notes other than NVML's."""
    events = dump(out)
    notes = [e for e in select(events, kind="note") if e["note"] != "nvml unavailable"]
    return count(events, kind="launch"), len(notes)


def test_group_signals():
    # Before: record died of the command's kill(0, SIGUSR1) (status 138) and
    # the collector stopped on its SIGHUP. A session of its own: the group
    # signals must not reach this test.
    out = os.path.join(TMP, "group.gtrace")
    p = subprocess.run([GPUTRACE, "record", "-q", "-o", out, "--", prog("signals"), "group"],
                       env=base_env(), capture_output=True, text=True, timeout=60,
                       start_new_session=True)
    eq(p.returncode, 0, "record's status (stderr %r)" % p.stderr)
    eq(p.stdout, "int=0 term=0 hup=1 usr1=1 usr2=1 launches=200\n", "the command's signals")
    eq(launches(out), (200, 0), "launches traced, no note")


def test_relayed_to_command():
    out = os.path.join(TMP, "relayed.gtrace")
    p = start_record(out, [prog("signals"), "wait", "3"])
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT):
        os.kill(p.pid, sig)
        time.sleep(0.1)
    stdout, stderr = p.communicate(timeout=60)
    eq(p.returncode, 0, "record's status (stderr %r)" % stderr)
    if not stdout.startswith("int=1 term=1 hup=1 usr1=1 usr2=1 launches="):
        raise AssertionError("each signal once: %r" % stdout)
    n = int(stdout.split("launches=")[1])
    eq(launches(out), (n, 0), "every launch traced, no note")


def test_nohup_collector_keeps_ignoring_sighup():
    out = os.path.join(TMP, "nohup.gtrace")
    p = start_record(out, [prog("signals"), "wait", "1.5"], ignore_hup=True)
    os.kill(collector_of(out), signal.SIGHUP)
    stdout, stderr = p.communicate(timeout=60)
    eq(p.returncode, 0, "record's status (stderr %r)" % stderr)
    n = int(stdout.split("launches=")[1])
    eq(launches(out), (n, 0), "every launch traced after the SIGHUP, no note")


def test_collector_stopped_early():
    out = os.path.join(TMP, "early.gtrace")
    p = start_record(out, [prog("signals"), "wait", "1.5"])
    time.sleep(0.2)
    os.kill(collector_of(out), signal.SIGTERM)
    stdout, _ = p.communicate(timeout=60)
    eq(p.returncode, 0, "the command is unaffected")
    note = "the collector stopped early (Terminated) while 1 traced process was running: " \
           "what they did afterwards is not in the trace"
    events = dump(out, expect_rc=3)
    eq([e["note"] for e in select(events, kind="note") if e["note"] != "nvml unavailable"],
       [note], "the note")
    for cmd in (["dump"], ["report"], ["leaks"], ["flame"], ["chrome", "-o", "-"]):
        r = subprocess.run([GPUTRACE] + cmd[:1] + [out] + cmd[1:], capture_output=True,
                           text=True, timeout=120)
        warning = "gputrace: warning: %s: incomplete: %s" % (out, note)
        if warning not in r.stderr.splitlines() or r.returncode != 3:
            raise AssertionError("%s: exit %d, stderr %r" % (cmd[0], r.returncode, r.stderr))


def test_timer_through_the_handshake():
    # Three runs: an alarm lands in the handshake's wait in most runs, not all.
    for run_no in range(3):
        p, out = record([prog("timer_start")])
        eq(p.stdout, "timer_start: 3 launches, ok, alarms seen\n", "the program's line")
        eq([e["kernel"] for e in select(dump(out), kind="launch")], ["tick()"] * 3,
           "run %d: launches traced (SIGALRM every 20 us through the connection)" % run_no)


main([test_group_signals, test_relayed_to_command, test_nohup_collector_keeps_ignoring_sighup,
      test_collector_stopped_early, test_timer_through_the_handshake])
