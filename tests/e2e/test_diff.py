"""`gputrace diff` between runs of tests/cuda/compute_loop.cu with one known
change each — twice the copies, or kernels twice as long (through the
stand-in's GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD) — flags exactly that
change; two runs of the same program flag nothing; exit statuses for CI.

The known changes double a figure (+100 %); they are checked at a threshold
of 50 %, because on a loaded machine the host wakes up late from a wait, or
is preempted inside a call, by up to milliseconds, which moves times by
more than 15 % now and then. The test runs alone (RUN_SERIAL) for the same
reason."""
import json
import subprocess
import sys
from gtest import *

ITER, KERNELS, KIB = "100", "10", "16"
PS = 500  # kernels of 2 us + 1048576 threads x 0.5 ns: about 0.53 ms, 5.3 ms per step


def run_loop(name, copies="1", ps=PS, timing="auto"):
    _, out = record([prog("compute_loop"), ITER, copies, KERNELS, KIB],
                    out=os.path.join(TMP, name + ".gtrace"),
                    GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD=ps, GPUTRACE_GPU_TIMING=timing)
    return out


def diff(a, b, *args, expect_rc):
    p = subprocess.run([GPUTRACE, "diff", a, b, "--json"] + list(args), capture_output=True,
                       text=True, timeout=300)
    d = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    if expect_rc is None:  # whatever the regressions say
        expect_rc = 1 if d.get("regressions") else 0
    if p.returncode != expect_rc:
        raise AssertionError("diff exited %d, expected %d\n%s%s" %
                             (p.returncode, expect_rc, p.stdout, p.stderr))
    return d


def flagged(d):
    """The judged changes: regressions and improvements (what the load moves,
    "noise" and "info", is shown but never judged)."""
    return {(c["section"], c["name"], c["metric"], c["status"]) for c in d["changes"]
            if c["status"] in ("regression", "improvement")}


BASE = {}


def base():
    if not BASE:
        BASE["a"] = run_loop("base")
    return BASE["a"]


def test_twice_the_copies():
    b = run_loop("copies2", copies="2")
    d = diff(base(), b, "--threshold", "50", expect_rc=1)
    eq(flagged(d), {("api", "cudaMemcpyAsync", "calls", "regression"),
                    ("transfer", "HtoD", "count", "regression"),
                    ("transfer", "HtoD", "bytes", "regression")}, "flagged changes")
    row = [c for c in d["changes"] if c["section"] == "transfer" and c["metric"] == "bytes"][0]
    eq((row["a"], row["b"], row["change_pct"]), (100 * 16384, 200 * 16384, 100.0), "bytes row")
    eq(d["regressions"], 3, "regressions")
    # the other way round: improvements only, and exit 0
    d = diff(b, base(), "--threshold", "50", expect_rc=0)
    eq({s for *_, s in flagged(d)}, {"improvement"}, "reverse diff")


# A distribution moves as a whole: its p50 and its fastest (totals and p90s
# follow, shown as "info": never judged, as a busy machine moves them).
SLOWER = {("api", "cudaStreamSynchronize", "p50_ns", "regression"),
          ("api", "cudaStreamSynchronize", "fastest_ns", "regression"),
          ("range", "step", "p50_ns", "regression"),
          ("range", "step", "fastest_ns", "regression")}


def test_kernels_twice_as_long():
    # With device timing (the shim's default): the kernel's GPU time, and
    # what the host waited for it — the synchronize, the ranges around it.
    b = run_loop("slow", ps=2 * PS)
    d = diff(base(), b, "--threshold", "50", expect_rc=1)
    eq(flagged(d), SLOWER | {("kernel", "layer(float*, int)", "gpu_p50_ns", "regression"),
                             ("kernel", "layer(float*, int)", "gpu_fastest_ns", "regression")},
       "flagged changes")
    eq(d["verdict"], {"a": "compute-bound", "b": "compute-bound"}, "verdicts")
    # Without device timing the kernel shows only through the waits.
    a = run_loop("base_off", timing="off")
    b = run_loop("slow_off", ps=2 * PS, timing="off")
    eq(flagged(diff(a, b, "--threshold", "50", expect_rc=1)), SLOWER, "flagged, CPU timing")


def test_same_program_twice():
    b = run_loop("again")
    d = diff(base(), b, "--threshold", "50", expect_rc=0)
    eq(flagged(d), set(), "nothing flagged")
    # at the default 15 %, host timing noise may show, but never in counts,
    # bytes or memory, nor in the medians of the ranges
    p = subprocess.run([GPUTRACE, "diff", base(), b, "--json"], capture_output=True, text=True)
    eq({(s, n, m) for s, n, m, _ in flagged(json.loads(p.stdout))
        if m in ("calls", "launches", "count", "bytes", "peak_bytes", "p50_ns")}, set(),
       "exact figures unchanged at the default threshold")
    # A threshold of 0 and no share gate flag every time that moved, either
    # way (the second run may be faster throughout: then no regression and
    # exit 0), and never a figure that did not move: the knobs work.
    d = diff(base(), b, "--threshold", "0", "--min-share", "0", expect_rc=None)
    way = lambda c: (c["b"] > c["a"]) - (c["b"] < c["a"])
    pairs = {(c["section"], c["name"], c["metric"]): c for c in d["changes"]}
    for c in d["changes"]:
        moved = c["a"] != c["b"]
        timed = c["metric"].endswith("_ns")
        status = "regression" if c["b"] > c["a"] else "improvement"
        twin = {"p50_ns": "fastest_ns", "fastest_ns": "p50_ns",
                "gpu_p50_ns": "gpu_fastest_ns", "gpu_fastest_ns": "gpu_p50_ns"}
        if c["metric"] in ("total_ns", "cpu_total_ns", "host_ns", "p90_ns", "gpu_total_ns"):
            status = "info"  # totals and tails: shown, not judged
        elif c["metric"] in twin:  # a p50 and its fastest, judged together
            other = pairs[(c["section"], c["name"], twin[c["metric"]])]
            p50, fast = (c, other) if c["metric"].endswith("p50_ns") else (other, c)
            apart = (fast["b"] > p50["a"] if way(p50) > 0 else
                     p50["b"] < fast["a"] if way(p50) < 0 else False)
            status = ("regression" if way(p50) > 0 else "improvement") if apart else "noise"
        want = ("unchanged" if not moved else status if timed else c["status"])
        eq(c["status"], want, "status of %s %s %s at threshold 0" %
           (c["section"], c["name"], c["metric"]))
    if not any(c["a"] != c["b"] for c in d["changes"] if c["metric"].endswith("_ns")):
        raise AssertionError("no time moved between two runs: the traces are not two runs")
    eq(d["regressions"], sum(c["status"] == "regression" for c in d["changes"]), "regressions")
    eq(d["improvements"], sum(c["status"] == "improvement" for c in d["changes"]),
       "improvements")


def test_identical_runs_beside_busy_loops():
    """Two identical runs, each recorded beside two busy loops (on this
    machine's cores: the process preempted inside its calls, woken late
    from its waits): at the default threshold nothing is a regression —
    what the load moved reads as noise or info — and diff exits 0."""
    def beside_busy(name):
        spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2)]
        try:  # the server: host-bound copies and short calls, graphs, ranges
            return record([prog("server"), "--requests", "100"],
                          out=os.path.join(TMP, name + ".gtrace"))[1]
        finally:
            for p in spin:
                p.kill()
                p.wait()
    a, b = beside_busy("busy_a"), beside_busy("busy_b")
    d = diff(a, b, expect_rc=0)
    eq(d["regressions"], 0, "regressions between identical runs")
    eq({(s, n, m) for s, n, m, st in flagged(d) if st in ("regression", "improvement")
        and m in ("calls", "launches", "count", "bytes", "peak_bytes")}, set(),
       "counts, bytes and memory unchanged")


def test_text_and_usage():
    b = run_loop("copies2t", copies="2")
    p = subprocess.run([GPUTRACE, "diff", base(), b, "--threshold", "50"], capture_output=True,
                       text=True)
    eq(p.returncode, 1, "text diff status")
    for want in ("threshold 50.0 %", "3 regressions",
                 "regression   api      cudaMemcpyAsync calls: 100 -> 200 (+100.0 %)",
                 "verdict: compute-bound -> compute-bound"):
        if want not in p.stdout:
            raise AssertionError("%r not in:\n%s" % (want, p.stdout))
    for args in ([base()], [base(), b, "--threshold", "x"], [base(), "/nonexistent.gtrace"],
                 [base(), b, b], ["--bogus", base(), b]):
        p = subprocess.run([GPUTRACE, "diff"] + args, capture_output=True, text=True)
        eq(p.returncode, 2, "status of diff %s" % args)


main([test_twice_the_copies, test_kernels_twice_as_long, test_same_program_twice,
      test_identical_runs_beside_busy_loops, test_text_and_usage])
