"""The stand-in runtime's waits behave as hardware's do where every
timing test relies on them (tests/cuda/idle_sync.cu): a wait on queued work
sleeps until it ends; a synchronize on an idle device, an idle stream or a
completed event returns at once. Until the stand-in checked the time first,
each such wait entered an expired clock_nanosleep and came back only at the
next timer tick (20-70 us), which every report showed as time blocked in
synchronize with nothing running (docs/standin.md). Counted, not timed: the
program counts the stand-in's clock_nanosleep calls. Run untraced and
traced (device timing off: its resolver thread waits on events of its own,
which would count too)."""
from gtest import *

WANT = "busy sync 1, idle syncs 0, blocking copy 1, sync after it 0, idle waits 0\n"
KNOBS = {"GPUTRACE_STANDIN_KERNEL_BASE_NS": 300000000}


def test_idle_waits_do_not_sleep():
    p = run([prog("idle_sync")], base_env(**KNOBS), check_rc=0)
    eq(p.stdout, WANT, "sleeps per wait, untraced")


def test_idle_waits_do_not_sleep_traced():
    p, out = record([prog("idle_sync")], GPUTRACE_GPU_TIMING="off", **KNOBS)
    eq(p.stdout, WANT, "sleeps per wait, traced")
    eq(count(dump(out), api="cudaDeviceSynchronize"), 102, "synchronize calls recorded")


main([test_idle_waits_do_not_sleep, test_idle_waits_do_not_sleep_traced])
