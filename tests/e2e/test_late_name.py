"""A launch whose kernel was named far back in another thread's sub-ring:
the collector looks ahead in the other sources for the name
(collector/clients.c look_ahead) and must find it however deep it sits, so
that the name precedes the launch in the file and every reader names the
launch (tests/cuda/late_name.cu). The collector is stopped (SIGSTOP) while
the program runs, so that the whole run waits in the ring: thread A's
100,000 filler launches lie between the start of A's sub-ring and the name,
more than one look-ahead used to take (65,536)."""
import signal
import time

from gtest import *

FILLERS = 100000


def wait_line(p, want):
    line = p.stdout.readline()
    if line != want + "\n":
        p.kill()
        raise AssertionError("program said %r, expected %r" % (line, want))


def wait_collector(out, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        pid = collector_pid(out)
        if pid:
            return pid
        time.sleep(0.05)
    raise AssertionError("no collector writing %s" % out)


def test_name_deep_in_another_sub_ring_precedes_the_launch():
    out = os.path.join(TMP, "late_name.gtrace")
    p = subprocess.Popen([GPUTRACE, "record", "-q", "-o", out, "--", prog("late_name"),
                          str(FILLERS)], env=base_env(GPUTRACE_STANDIN_TIMELINE=0),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    wait_line(p, "ready")
    collector = wait_collector(out)
    os.kill(collector, signal.SIGSTOP)
    try:
        p.stdin.write("go\n")
        p.stdin.flush()
        wait_line(p, "done")
    finally:
        os.kill(collector, signal.SIGCONT)
    p.stdin.close()
    eq(p.wait(timeout=120), 0, "gputrace record's exit status")
    events = dump(out)
    eq(ring_drops(events), 0, "records dropped")
    launches = collections.Counter(e["kernel"] for e in select(events, kind="launch"))
    eq(dict(launches), {"warm_up()": 1, "filler()": FILLERS, "named_late()": 2},
       "launches by kernel name, as the file names them")
    order = [e["kind"] for e in events
             if e.get("mangled") == "_Z10named_latev" or
             (e["kind"] == "launch" and e["kernel"] == "named_late()")]
    eq(order, ["kernel_name", "launch", "launch"],
       "named_late's name once, before both its launches, in file order")
    eq([e for e in events if str(e.get("kernel", "")).startswith("0x")], [],
       "records (launches, device times) whose kernel the file had not named yet")


main([test_name_deep_in_another_sub_ring_precedes_the_launch])
