"""The traced program never depends on the collector: none can start, or it
is killed mid-run, and the program runs on with one warning; a missing
runtime symbol degrades to an error code, not a crash."""
import os
import signal
import subprocess
import time
from gtest import *


def test_no_collector_can_start():
    out = os.path.join(TMP, "nocoll.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_COLLECTOR="/nonexistent/collector")
    del env["GPUTRACE_QUIET"]
    t0 = time.time()
    p = run([prog("basic")], env)
    eq((p.returncode, p.stdout), (0, "basic: 0 failures\n"), "program result")
    warnings = [l for l in p.stderr.splitlines() if l.startswith("gputrace:")]
    eq(len(warnings), 1, "one warning (%r)" % p.stderr)
    if "runs untraced" not in warnings[0]:
        raise AssertionError("warning: " + warnings[0])
    if time.time() - t0 > 3:
        raise AssertionError("the program waited %.1fs for a collector" % (time.time() - t0))
    eq(os.path.exists(out), False, "no trace file")


def find_collector(path, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    args = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
                except OSError:
                    continue
                if args[0].endswith(b"gputrace-collector") and path.encode() in args:
                    return int(pid)
        time.sleep(0.05)
    raise AssertionError("no collector for " + path)


def test_collector_killed_mid_run():
    out = os.path.join(TMP, "killcoll.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_RING_KB="16")  # 128 slots: fills fast
    del env["GPUTRACE_QUIET"]
    # 300 iterations of launch + sync + 2 ms sleep: about a second.
    p = subprocess.Popen([prog("steady"), "300"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    coll = find_collector(out)
    time.sleep(0.2)
    os.kill(coll, signal.SIGKILL)
    stdout, stderr = p.communicate(timeout=60)
    eq((p.returncode, stdout), (0, "steady: 300 iterations\n"), "program result")
    warnings = [l for l in stderr.splitlines() if l.startswith("gputrace:")]
    eq(len(warnings), 1, "one warning (%r)" % stderr)
    if "collector went away" not in warnings[0]:
        raise AssertionError("warning: " + warnings[0])
    # What was written before the kill is readable (chunks are cut every 200 ms).
    r = subprocess.run([GPUTRACE, "dump", "--json", out], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise AssertionError("dump of the cut trace: %d %s" % (r.returncode, r.stderr))
    if '"kind":"launch"' not in r.stdout:
        raise AssertionError("no launch survived in the partial trace")


def test_missing_runtime_symbol_degrades():
    out = os.path.join(TMP, "noruntime.gtrace")
    p = run([prog("no_runtime")], base_env(standin=False, LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out))
    eq(p.returncode, 0, "status (%s)" % p.stdout)
    eq(p.stdout, "cudaMalloc=801 cudaDeviceSynchronize=801 ptr=0x1\n", "output")


main([test_no_collector_can_start, test_collector_killed_mid_run,
      test_missing_runtime_symbol_degrades])
