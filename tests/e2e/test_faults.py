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


def test_collector_killed_mid_run():
    out = os.path.join(TMP, "killcoll.gtrace")
    # 16 KiB: 5 blocks of 32 slots and a shared ring of 64: fills fast
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_RING_KB="16")
    del env["GPUTRACE_QUIET"]
    # 600 iterations of launch + sync + 2 ms sleep, paused after 100 until
    # the collector is killed: the 500 after it fill the ring (3 records
    # each), where the shim looks for its collector, however loaded the
    # machine (a fixed time left 0 warnings there).
    p = subprocess.Popen([prog("steady"), "600", "100"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    coll = wait_collector(out)
    eq(p.stdout.readline(), "steady: paused\n", "the program's pause")
    # Kill it once it has written a chunk (chunks are cut every 200 ms).
    deadline = time.time() + 20
    while time.time() < deadline and (not os.path.exists(out) or os.path.getsize(out) <= 64):
        time.sleep(0.02)
    os.kill(coll, signal.SIGKILL)
    stdout, stderr = p.communicate("go\n", timeout=60)
    eq((p.returncode, stdout), (0, "steady: 600 iterations\n"), "program result")
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




def test_output_size_limit_and_full_disk():
    import resource
    # A full disk before the start: a clear error, the command is not run.
    marker = os.path.join(TMP, "ran_full")
    p = run([GPUTRACE, "record", "-o", "/dev/full", "--", "touch", marker], base_env())
    eq(p.returncode, 2, "status with /dev/full")
    if "No space left on device" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    eq(os.path.exists(marker), False, "command not run")
    # The disk fills up mid-run (the collector gets a 4 KiB file size limit
    # once running): the program is unaffected, the loss is reported, what
    # was written stays readable.
    out = os.path.join(TMP, "limited.gtrace")
    plain = run([prog("steady"), "300"], base_env())
    p = subprocess.Popen([GPUTRACE, "record", "-o", out, "--", prog("steady"), "300"],
                         env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    coll = wait_collector(out)
    resource.prlimit(coll, resource.RLIMIT_FSIZE, (4096, 4096))
    stdout, stderr = p.communicate(timeout=120)
    eq((p.returncode, stdout), (plain.returncode, plain.stdout), "program unaffected")
    if "File too large" not in stderr or "records lost" not in stderr:
        raise AssertionError("no clear error: " + stderr)
    r = subprocess.run([GPUTRACE, "dump", "--summary", out], capture_output=True, text=True)
    if r.returncode not in (0, 3) or not r.stdout.startswith("records:"):
        raise AssertionError("partial trace unreadable: %d %s" % (r.returncode, r.stderr))
    # the collector ran to its end: it ran out of space, it did not stop early
    if "ran out of space (a write failed)" not in r.stderr or "stopped without" in r.stderr:
        raise AssertionError("the warning does not say the disk filled: " + r.stderr)
    if os.path.getsize(out) > 4096:
        raise AssertionError("wrote past the limit")


def test_other_interposer_rtld_next():
    """An interposer preloaded after the shim still finds the next puts()."""
    wrapper = os.path.join(PROGS, "next_wrapper.so")
    p = run([prog("puts_hello")], base_env(LD_PRELOAD=SHIM + ":" + wrapper))
    eq((p.returncode, p.stdout), (0, "[wrapped] hello\n"), "wrapped puts through RTLD_NEXT")


main_tests = [test_other_interposer_rtld_next, test_no_collector_can_start, test_collector_killed_mid_run,
              test_missing_runtime_symbol_degrades, test_output_size_limit_and_full_disk]
main(main_tests)
