"""`gputrace diff` between runs of tests/cuda/compute_loop.cu with one known
change each — twice the copies, or kernels twice as long (through the
stand-in's GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD) — flags exactly that
change; two runs of the same program flag nothing; exit statuses for CI."""
import json
import subprocess
from gtest import *

ITER, KERNELS, KIB = "40", "10", "16"


def run_loop(name, copies="1", **env):
    _, out = record([prog("compute_loop"), ITER, copies, KERNELS, KIB],
                    out=os.path.join(TMP, name + ".gtrace"), **env)
    return out


def diff(a, b, *args, expect_rc):
    p = subprocess.run([GPUTRACE, "diff", a, b, "--json"] + list(args), capture_output=True,
                       text=True, timeout=300)
    if p.returncode != expect_rc:
        raise AssertionError("diff exited %d, expected %d\n%s%s" %
                             (p.returncode, expect_rc, p.stdout, p.stderr))
    return json.loads(p.stdout)


def flagged(d):
    return {(c["section"], c["name"], c["metric"], c["status"]) for c in d["changes"]
            if c["status"] != "unchanged"}


BASE = {}


def base():
    if not BASE:
        BASE["a"] = run_loop("base")
    return BASE["a"]


def test_twice_the_copies():
    b = run_loop("copies2", copies="2")
    d = diff(base(), b, expect_rc=1)
    eq(flagged(d), {("api", "cudaMemcpyAsync", "calls", "regression"),
                    ("transfer", "HtoD", "count", "regression"),
                    ("transfer", "HtoD", "bytes", "regression")}, "flagged changes")
    row = [c for c in d["changes"] if c["section"] == "transfer" and c["metric"] == "bytes"][0]
    eq((row["a"], row["b"], row["change_pct"]), (40 * 16384, 80 * 16384, 100.0), "bytes row")
    eq(d["regressions"], 3, "regressions")
    # the other way round: improvements only, and exit 0
    d = diff(b, base(), expect_rc=0)
    eq({s for *_, s in flagged(d)}, {"improvement"}, "reverse diff")


def test_kernels_twice_as_long():
    b = run_loop("slow", GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD=200)
    d = diff(base(), b, expect_rc=1)
    # Without device timing a kernel shows through the time the host waited
    # for it: the synchronize and the ranges around it, nothing else.
    eq(flagged(d), {("api", "cudaStreamSynchronize", "total_ns", "regression"),
                    ("api", "cudaStreamSynchronize", "mean_ns", "regression"),
                    ("range", "step", "p50_ns", "regression"),
                    ("range", "step", "p90_ns", "regression")}, "flagged changes")
    eq(d["verdict"], {"a": "compute-bound", "b": "compute-bound"}, "verdicts")


def test_same_program_twice():
    b = run_loop("again")
    d = diff(base(), b, expect_rc=0)
    eq(flagged(d), set(), "nothing flagged")
    # a threshold of 0 and no significance gate flags noise: the knobs work
    d = diff(base(), b, "--threshold", "0", "--min-share", "0", expect_rc=1)
    if d["regressions"] + d["improvements"] == 0:
        raise AssertionError("threshold 0 flagged nothing")


def test_text_and_usage():
    b = run_loop("copies2t", copies="2")
    p = subprocess.run([GPUTRACE, "diff", base(), b], capture_output=True, text=True)
    eq(p.returncode, 1, "text diff status")
    for want in ("3 regressions", "regression   api      cudaMemcpyAsync calls: 40 -> 80 (+100.0 %)",
                 "verdict: compute-bound -> compute-bound"):
        if want not in p.stdout:
            raise AssertionError("%r not in:\n%s" % (want, p.stdout))
    for args in ([base()], [base(), b, "--threshold", "x"], [base(), "/nonexistent.gtrace"],
                 [base(), b, b], ["--bogus", base(), b]):
        p = subprocess.run([GPUTRACE, "diff"] + args, capture_output=True, text=True)
        eq(p.returncode, 2, "status of diff %s" % args)


main([test_twice_the_copies, test_kernels_twice_as_long, test_same_program_twice,
      test_text_and_usage])
