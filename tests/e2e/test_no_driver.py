"""Against the real libcudart.so.13 with no driver, every call fails with
cudaErrorInsufficientDriver: the shim records each one and changes nothing
(stdout, exit status, errno as printed by the program)."""
import os
from gtest import *

EXPECTED = [("alloc", "cudaMalloc"), ("memcpy", "cudaMemcpy"), ("memset", "cudaMemset"),
            ("launch", "__cudaLaunchKernel"), ("stream", "cudaStreamCreate"),
            ("sync", "cudaDeviceSynchronize"), ("free", "cudaFree")]


def real_env(**extra):
    return base_env(standin=False, **extra)


def test_program_uses_real_runtime():
    p = run(["ldd", prog("no_driver")], real_env(), check_rc=0)
    line = [l for l in p.stdout.splitlines() if "libcudart.so.13" in l]
    eq(len(line), 1, "libcudart.so.13 linked")
    if "/standin/" in line[0]:
        raise AssertionError("resolved to the stand-in: " + line[0])


def test_record_changes_nothing():
    plain = run([prog("no_driver")], real_env())
    eq(plain.returncode, 7, "untraced exit status (7 calls failed with 35)")
    traced, out = record([prog("no_driver")], standin=False, check_rc=7)
    eq(traced.stdout, plain.stdout, "stdout")
    events = dump(out)
    eq([(e["kind"], e["api"]) for e in calls(events)], EXPECTED, "every call recorded, in order")
    eq({e["result"] for e in calls(events)}, {35}, "each call's error")
    eq(select(events, kind="launch")[0]["kernel"], "k(float*)", "kernel name")


def test_plain_preload_changes_nothing():
    plain = run([prog("no_driver")], real_env())
    out = os.path.join(TMP, "nd_preload.gtrace")
    traced = run([prog("no_driver")], real_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out))
    eq((traced.returncode, traced.stdout), (plain.returncode, plain.stdout), "status and stdout")
    events = wait_for_trace(out, traced_pid_count=1)
    eq([(e["kind"], e["api"]) for e in calls(events)], EXPECTED, "every call recorded")


main([test_program_uses_real_runtime, test_record_changes_nothing,
      test_plain_preload_changes_nothing])
