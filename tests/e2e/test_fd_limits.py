"""The collector at its descriptor limit: every traced process costs it two
descriptors. At the default soft limit (1024) with a higher hard one, 700
processes connected at once are all traced (the collector raises its soft
limit to the hard one). With a hard limit of 64 (nothing to raise), 60
held processes are each traced or told the true cause — the shim says
"the collector ... is out of file descriptors", the trace holds an
untraced NOTE naming each such pid and a summary NOTE counting them — the
collector does not spin meanwhile (its CPU time, read from /proc, stays
low); one more that connects while they hold every descriptor waits, and is
traced once they end (a NOTE says it waited, the summary counts it); and
once they are gone later processes are traced again.

The programs are tests/cuda/hold_open.c run by e2e/hold_many.py under
`gputrace record`, on the stand-in runtime."""
import os
import re
import resource
import subprocess
import threading
import time
from gtest import *

HOLD_MANY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hold_many.py")
TOLD = re.compile(r"^gputrace: the collector at \S+ is out of file descriptors \(its hard "
                  r"limit, ulimit -Hn, is too low for this many traced processes\); pid "
                  r"(\d+) runs untraced$")
UNTRACED = re.compile(r"^pid (\d+) \(%s\) ran untraced: the collector was out of file "
                      r"descriptors \(limit 64, 2 per traced process\)$" % re.escape(prog("hold_open")))
WAITED = re.compile(r"^pid (\d+) waited \d+\.\d s for one of the collector's file "
                    r"descriptors, then was traced$")
SUMMARY = re.compile(r"^the collector ran out of file descriptors \(limit 64, 2 per traced "
                     r"process\): (\d+) processes ran untraced, (\d+) waited for one and "
                     r"were traced; raise its hard limit \(ulimit -Hn\) to trace more at once$")


def start_record(out, nofile, *counts):
    """record -- hold_many.py hold_open COUNTS..., with RLIMIT_NOFILE nofile
    (soft, hard) for record, its collector and the programs; the shim's
    messages on (GPUTRACE_QUIET=0), stderr into a file."""
    if os.path.lexists(out):
        os.unlink(out)
    err = open(out + ".stderr", "w+")
    env = base_env(GPUTRACE_QUIET="0", GPUTRACE_RING_KB="64")
    rec = subprocess.Popen(
        [GPUTRACE, "record", "-o", out, "--", "python3", HOLD_MANY, prog("hold_open")] +
        [str(c) for c in counts],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile))
    return rec, err


def expect_line(rec, word, timeout=240):
    """The launcher's next line, which must start with `word`; its fields."""
    got = []
    reader = threading.Thread(target=lambda: got.append(rec.stdout.readline()))
    reader.start()
    reader.join(timeout)
    if not got or not got[0].startswith(word + " "):
        rec.kill()
        raise AssertionError("hold_many printed %r, expected a '%s' line" % (got, word))
    return got[0].split()[1:]


def finish(rec, err, timeout=120):
    rec.stdin.close()
    rec.wait(timeout)
    err.seek(0)
    text = err.read()
    err.close()
    eq(rec.returncode, 0, "record's status (stderr: %s)" % text[-2000:])
    return text.splitlines()


def cpu_seconds(pid):
    """utime + stime of process pid, all its threads, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def say_go(rec):
    rec.stdin.write("\n")
    rec.stdin.flush()


# poll(2), in which a shim waits for the collector's answer
POLL_SYSCALLS = {"x86_64": {"7", "271"}, "aarch64": {"73"}}.get(os.uname().machine, set())


def wait_in_handshake(pid, timeout=30):
    """Until process pid waits in poll(2): its first CUDA call has sent the
    hello and waits for the answer (hold_open polls nowhere else)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open("/proc/%d/syscall" % pid) as f:
            if f.read().split(" ")[0] in POLL_SYSCALLS:
                return
        time.sleep(0.01)
    raise AssertionError("pid %d never waited for the collector's answer" % pid)


def traced_pids(events):
    starts = select(events, kind="process", phase="start", cmdline=prog("hold_open"))
    return sorted(s["pid"] for s in starts)


def notes(events):
    return [e["note"] for e in events if e["kind"] == "note" and e["note"] != "nvml unavailable"]


def test_seven_hundred_at_the_default_soft_limit():
    out = os.path.join(TMP, "fd700.gtrace")
    rec, err = start_record(out, (1024, 4096), 700)
    held = [int(p) for p in expect_line(rec, "held")]
    say_go(rec)
    eq(expect_line(rec, "ended"), ["0"] * 700, "the programs' statuses")
    lines = finish(rec, err)
    events = dump(out)
    eq(traced_pids(events), sorted(held), "every one of the 700 processes traced")
    eq(count(events, kind="alloc", bytes=4096), 700, "their cudaMalloc calls")
    eq(count(events, kind="free"), 700, "their cudaFree calls")
    eq(notes(events), [], "notes")
    eq([l for l in lines if "untraced" in l or "descriptor" in l], [], "messages")


def test_hard_limit_of_64_tells_the_cause_and_does_not_spin():
    out = os.path.join(TMP, "fd64.gtrace")
    rec, err = start_record(out, (64, 64), 60, 1, 10)
    collector = wait_collector(out)
    cpu_start = cpu_seconds(collector)
    held = [int(p) for p in expect_line(rec, "held")]  # each traced, or told after 3 s
    cpu_held = cpu_seconds(collector)
    time.sleep(2)
    cpu_after = cpu_seconds(collector)
    # One more while the traced ones hold every descriptor: it waits (up to
    # 3 s), and the 60 end meanwhile.
    say_go(rec)
    late = int(expect_line(rec, "late")[0])
    wait_in_handshake(late)
    time.sleep(0.5)
    say_go(rec)
    eq(expect_line(rec, "ended"), ["0"] * 61, "the programs' statuses")
    # The next ten once the collector has closed the descriptors of the 61
    # (it does as it sees each process end): room for all ten at once.
    deadline = time.time() + 30
    while len(os.listdir("/proc/%d/fd" % collector)) > 40 and time.time() < deadline:
        time.sleep(0.05)
    say_go(rec)
    later = [int(p) for p in expect_line(rec, "then")]
    lines = finish(rec, err)
    events = dump(out)

    traced = traced_pids(events)
    told = sorted(int(m.group(1)) for m in map(TOLD.match, lines) if m)
    untraced = sorted(int(m.group(1)) for m in map(UNTRACED.match, notes(events)) if m)
    waited = sorted(int(m.group(1)) for m in map(WAITED.match, notes(events)) if m)
    summary = [SUMMARY.match(n) for n in notes(events) if SUMMARY.match(n)]
    if not told:
        raise AssertionError("no process was told (60 need 120 descriptors of 64)")
    eq(sorted(set(traced) | set(told)), sorted(held + [late] + later), "each traced or told")
    eq(set(traced) & set(told), set(), "none both")
    eq(untraced, told, "an untraced NOTE for each process told")
    eq(late in waited, True, "the late one waited (%r)" % waited)
    eq(set(waited) <= set(traced), True, "those that waited were traced")
    eq(len(notes(events)), len(told) + len(waited) + 1,
       "notes: those and the summary (%r)" % notes(events))
    eq(len(summary), 1, "the summary NOTE")
    eq([int(summary[0].group(1)), int(summary[0].group(2))], [len(told), len(waited)],
       "the summary's counts of untraced processes and of those that waited")
    eq(set(later) <= set(traced), True, "the ten run after the 61 all traced")
    eq(count(events, kind="alloc", bytes=4096), len(traced), "the traced ones' cudaMalloc")
    shortage = [l for l in lines if l.startswith("gputrace-collector: ")]
    eq(shortage[0], "gputrace-collector: out of file descriptors (limit 64, 2 per traced "
       "process): new processes wait for one, and run untraced after 3 s", "the log's first line")
    eq(shortage[-1], "gputrace-collector: " + summary[0].group(0), "the log's last line")
    # Spinning, a collector takes a core from its first shortage on (the 3 s
    # before the untold are told, and on while connections wait to be taken).
    if cpu_held - cpu_start > 2.0 or cpu_after - cpu_held > 1.0:
        raise AssertionError("collector CPU %.2f s until all were held (>= 3 s), %.2f s in the "
                             "2 s after" % (cpu_held - cpu_start, cpu_after - cpu_held))


if __name__ == "__main__":
    main([test_seven_hundred_at_the_default_soft_limit,
          test_hard_limit_of_64_tells_the_cause_and_does_not_spin])
