"""Traces read while they are written: under plain LD_PRELOAD the
collector finishes the file a moment after the program exits, holding an
exclusive lock on it until it marks it complete (trace_file.h). A command run
at once waits for it (one note on stderr) and sees every record; --no-wait
reads what is there and says it is incomplete; a file whose collector was
killed says so."""
import os
import signal
import subprocess
import time
from gtest import *


def preload_run(name, args):
    """The program under plain LD_PRELOAD; returns (stdout, trace) as soon as
    the program itself has exited. Its output goes to a file, not a pipe: the
    collector it started keeps stderr open until it is done, and a pipe
    would wait for it."""
    out = os.path.join(TMP, name + ".gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out)
    with open(out + ".stdout", "w+") as f:
        rc = subprocess.call([prog(args[0])] + args[1:], env=env, stdout=f,
                             stderr=subprocess.DEVNULL, timeout=60)
        f.seek(0)
        stdout = f.read()
    eq(rc, 0, "%s exit status" % args[0])
    return stdout, out


def summary(out, *flags):
    return subprocess.run([GPUTRACE, "dump", "--summary"] + list(flags) + [out],
                          capture_output=True, text=True, timeout=60)


def counts(text):
    return {l.split()[0]: int(l.split()[1]) for l in text.splitlines()
            if l.startswith("  ") and len(l.split()) == 2}


def test_dump_right_after_the_program_waits_for_the_collector():
    stdout, out = preload_run("wait", ["basic"])
    eq(stdout, "basic: 0 failures\n", "program output")
    d = summary(out)  # the collector lingers about a second after the program
    eq(d.returncode, 0, "dump status (stderr %r)" % d.stderr)
    want = {"alloc": 5, "free": 5, "memcpy": 6, "memset": 2, "launch": 15, "sync": 4}
    got = counts(d.stdout)
    eq({k: got.get(k) for k in want}, want, "every record, read at once")
    if "still being written by its collector" not in d.stderr or "waiting" not in d.stderr:
        raise AssertionError("no waiting note: %r" % d.stderr)


def test_no_wait_reads_what_is_there():
    _, out = preload_run("nowait", ["basic"])
    d = summary(out, "--no-wait")
    eq(d.returncode, 3, "an incomplete trace is a damaged one (status 3)")
    if "incomplete: still being written" not in d.stderr:
        raise AssertionError("no incomplete warning: %r" % d.stderr)
    time.sleep(0.1)
    d = summary(out)  # and the finished file is whole
    eq(d.returncode, 0, "finished trace")
    eq(counts(d.stdout).get("launch"), 15, "launches once finished")


def test_a_killed_collector_leaves_an_unfinished_trace():
    out = os.path.join(TMP, "killed_collector.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out)
    p = subprocess.Popen([prog("steady"), "300"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    pid = None
    for _ in range(100):
        pid = collector_pid(out)
        if pid:
            break
        time.sleep(0.02)
    if not pid:
        raise AssertionError("no collector for %s" % out)
    time.sleep(0.3)  # some chunks written
    os.kill(pid, signal.SIGKILL)
    p.communicate(timeout=60)
    d = summary(out)
    eq(d.returncode, 3, "status of an unfinished trace")
    if "stopped without finishing" not in d.stderr:
        raise AssertionError("no warning: %r" % d.stderr)


main([test_dump_right_after_the_program_waits_for_the_collector,
      test_no_wait_reads_what_is_there, test_a_killed_collector_leaves_an_unfinished_trace])
