"""A process that ran untraced leaves a note in the trace: with the collector
of a `record` run stopped (SIGSTOP), a second traced process connects, waits
5 s for the handshake's answer and runs untraced; once the collector goes on
(SIGCONT) it finds the connection (the hello given up on) and writes a NOTE
flagged untraced, naming the pid, the command line and why, which every
command shows as a warning (report, dump --summary); what the trace holds
is whole, so the exit status stays 0."""
import os
import signal
import subprocess
import time
from gtest import *


def wait_file(path, timeout):
    deadline = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > deadline:
            raise AssertionError("no %s after %ss" % (path, timeout))
        time.sleep(0.05)


def test_untraced_process_noted():
    d = os.path.join(TMP, "untraced")
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, "u.gtrace")
    ready, go, done, pidf = (os.path.join(d, n) for n in ("ready", "go", "done", "pid"))
    script = ('"$1"; touch "$2"; while [ ! -e "$3" ]; do sleep 0.05; done; '
              '"$1" & echo $! > "$5"; wait; touch "$4"')
    cmd = [GPUTRACE, "record", "-q", "-o", out, "--", "sh", "-c", script, "sh",
           prog("basic"), ready, go, done, pidf]
    rec = subprocess.Popen(cmd, env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    collector = None
    try:
        wait_file(ready, 60)
        collector = collector_pid(out)
        if not collector:
            raise AssertionError("no collector for %s" % out)
        os.kill(collector, signal.SIGSTOP)
        open(go, "w").close()
        wait_file(done, 30)  # the second basic gave up after 5 s and ran untraced
        os.kill(collector, signal.SIGCONT)
        _, err = rec.communicate(timeout=60)
    finally:
        if collector and rec.poll() is None:
            os.kill(collector, signal.SIGCONT)
        if rec.poll() is None:
            rec.kill()
    eq(rec.returncode, 0, "record's status")
    pid = int(open(pidf).read())
    text = ("pid %d (%s) ran untraced: it gave up waiting 5 s for the collector's answer "
            "(the collector was stopped or starved)" % (pid, prog("basic")))
    notes = [e["note"] for e in dump(out) if e["kind"] == "note"]
    eq(text in notes, True, "the note in the trace (notes: %r)" % notes)
    warning = "gputrace: warning: %s: %s" % (out, text)
    for args in (["report", out], ["dump", "--summary", out]):
        p = run([GPUTRACE] + args, base_env(), check_rc=0)
        eq(warning in p.stderr.splitlines(), True, "%s warns (stderr: %r)" % (args[0], p.stderr))


if __name__ == "__main__":
    main([test_untraced_process_noted])
