"""Launch records written around the call (preload/launch.h): values the
compact frame cannot hold go as full records, exactly, whether known before
the call (dims, shared memory) or after it (a 4.5 s call); a kernel
registered inside a launch's call (a host function that dlopens a CUDA
library, run inside cudaLaunchHostFunc by the stand-in) neither overwrites
that launch's waiting frame nor is lost; a fork inside the call leaves the
child whole (tests/cuda/launch_values.cu). All of it again with
GPUTRACE_CLOCK=monotonic, which sends every launch through the hooks'
general form (clock_gettime stamps) instead of the rdtsc one."""
from gtest import *


def check_launch_values(name, **env):
    plugin = os.path.join(PROGS, "libplugin.so")
    p, out = record([prog("launch_values"), plugin], out=os.path.join(TMP, name + ".gtrace"),
                    **env)
    eq(p.stdout, "9 9 0 0 0 1 0 0 0 0 0\nplugin_run: 0\nchild: 7\n",
       "launch results, and the child forked inside a launch's call")
    events = dump(out)
    launches = [(e["api"], e.get("kernel"), e["grid"], e["block"], e["shared_mem"],
                 e.get("result", 0)) for e in select(events, kind="launch")]
    hello = "hello(int)"
    host = [e["kernel"] for e in select(events, kind="launch", api="cudaLaunchHostFunc")]
    eq(len(set(host)), 1, "one host function")
    eq(launches, [
        ("__cudaLaunchKernel", hello, [1, 70000, 1], [1, 1, 1], 0, 9),
        ("__cudaLaunchKernel", hello, [1, 1, 1], [70000, 1, 1], 0, 9),
        ("cudaLaunchKernel", hello, [2, 3, 4], [5, 6, 7], 1024, 0),
        ("cudaLaunchKernel", hello, [2, 3, 4], [5, 6, 7], 1024, 0),
        ("cudaLaunchKernel", hello, [2, 3, 4], [5, 6, 7], 1024, 0),
        ("__cudaLaunchKernel", hello, [1, 1, 1], [1, 1, 1], 5 << 30, 1),
    ] + [("cudaLaunchHostFunc", host[0], [0, 0, 0], [0, 0, 0], 0, 0)] * 5 +
       [("__cudaLaunchKernel", "plugin_kernel(float*)", [4, 1, 1], [64, 1, 1], 0, 0)] * 3,
       "every launch, with its exact values, in order")
    durs = [e["dur_ns"] for e in select(events, kind="launch", api="cudaLaunchHostFunc")]
    if not 4500000000 <= durs[3] < 9000000000 or max(durs[:3] + durs[4:]) >= 1000000000:
        raise AssertionError("host function launch durations: %s" % durs)
    eq(count(events, kind="kernel_name", mangled="_Z13plugin_kernelPf"), 1,
       "the kernel registered inside a launch's call")
    eq(ring_drops(events), 0, "records dropped")
    eq(count(events, kind="lost"), 0, "LOST records")


def test_values_and_registration_inside_a_launch():
    check_launch_values("tsc")


def test_the_same_with_clock_gettime_stamps():
    check_launch_values("monotonic", GPUTRACE_CLOCK="monotonic")


main([test_values_and_registration_inside_a_launch, test_the_same_with_clock_gettime_stamps])
