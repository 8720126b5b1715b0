"""A launch whose kernel was named far back in another thread's sub-ring:
the collector looks ahead in the other sources for the name
(collector/clients.c look_ahead) and must find it however deep it sits, so
that the name precedes the launch in the file and every reader names the
launch (tests/cuda/late_name.cu). The collector is stopped (SIGSTOP) while
the program runs, so that the whole run waits in the ring: thread A's
100,000 filler launches lie between the start of A's sub-ring and the name,
more than one look-ahead used to take (65,536).

And a name behind a third thread's launches of the same kernel
(tests/cuda/name_order.cu): the look-ahead for X's launch meets Y's
launches of it before N's sub-ring, which holds the name; they used to go
out unnamed (the e2e_test_processes flake: test_eight_threads, 181 of
16,000 launches named by their handle)."""
import signal
import time

from gtest import *

FILLERS = 100000


def wait_line(p, want):
    line = p.stdout.readline()
    if line != want + "\n":
        p.kill()
        raise AssertionError("program said %r, expected %r" % (line, want))


def record_stopped(name, arg):
    """Record `name arg` with the collector stopped from "ready" to "done":
    the whole run waits in the ring. Returns the trace's events."""
    out = os.path.join(TMP, name + ".gtrace")
    p = subprocess.Popen([GPUTRACE, "record", "-q", "-o", out, "--", prog(name), str(arg)],
                         env=base_env(GPUTRACE_STANDIN_TIMELINE=0), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
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
    return events


def unnamed(events):
    return [e for e in events if str(e.get("kernel", "")).startswith("0x")]


def test_name_deep_in_another_sub_ring_precedes_the_launch():
    events = record_stopped("late_name", FILLERS)
    launches = collections.Counter(e["kernel"] for e in select(events, kind="launch"))
    eq(dict(launches), {"warm_up()": 1, "filler()": FILLERS, "named_late()": 2},
       "launches by kernel name, as the file names them")
    order = [e["kind"] for e in events
             if e.get("mangled") == "_Z10named_latev" or
             (e["kind"] == "launch" and e["kernel"] == "named_late()")]
    eq(order, ["kernel_name", "launch", "launch"],
       "named_late's name once, before both its launches, in file order")
    eq(unnamed(events), [],
       "records (launches, device times) whose kernel the file had not named yet")


def test_name_behind_a_third_threads_launches():
    per_thread = 10
    events = record_stopped("name_order", per_thread)
    launches = collections.Counter(e["kernel"] for e in select(events, kind="launch"))
    eq(dict(launches), {"warm_up()": 4, "shared_kernel()": 2 * per_thread + 1},
       "launches by kernel name, as the file names them")
    eq(unnamed(events), [], "launches whose kernel the file had not named yet")
    eq(len({e["tid"] for e in select(events, kind="launch", kernel="shared_kernel()")}), 3,
       "threads that launched shared_kernel")


main([test_name_deep_in_another_sub_ring_precedes_the_launch,
      test_name_behind_a_third_threads_launches])
