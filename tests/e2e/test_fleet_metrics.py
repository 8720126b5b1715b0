"""Fleet metrics (docs/monitoring/README.md): `record --prometheus` on
tests/cuda/requests (30 NVTX "request" ranges of ~1..10 ms around copies,
allocations and kernels, then 20 launches of a CUDA graph of the same
kernels, then a 3 s hold so a scrape sees them all), with the
NVML stand-in scripted for health readings (clock-event reasons, ECC, XID
events, GPU processes). A scrape during the run is checked against the trace
and `gputrace report`: the request histogram's exact count and buckets, its
per-request counters, GPU seconds by kernel and process (within 10 % of
report's GPU totals), the health series with the stand-in's values; the trace
holds the same health readings (and a NOTE per XID). `promtool check
metrics` accepts the page, and `promtool check rules` / `test rules` accept
docs/monitoring's alert and dcgm rules and their unit tests (both skipped
with a message without promtool)."""
import json
import math
import shutil
import time
from promrun import *

N = 30
GRAPHS = 20  # graph launches, 5 kernels each, outside the ranges
MONITORING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                          "monitoring")
# dev gpu% mem% used total temp power_mW limit_mW sm mem tx rx slowdown clock_mask ecc_c ecc_u
SCRIPT = """\
0 30 5 8000 10000 70 200000 300000 1500 5000 100 200 90 36 3 1
1 60 40 5000 10000 50 75500 250000 1400 4000 10 20 - - - -
"""
PROCS = "0:4242:1048576,0:4343:2097152"
XIDS = "0:79@1,1:48@0,0:79@2"


def traced_requests(port):
    script = os.path.join(TMP, "fleet_nvml.txt")
    with open(script, "w") as f:
        f.write(SCRIPT)
    out = os.path.join(TMP, "fleet_%d.gtrace" % port)
    env = base_env(GPUTRACE_STANDIN_NVML_SCRIPT=script, GPUTRACE_NVML_MS=50,
                   GPUTRACE_STANDIN_NVML_PROCS=PROCS, GPUTRACE_STANDIN_NVML_XID=XIDS)
    p = subprocess.Popen([GPUTRACE, "record", "-q", "--prometheus", "127.0.0.1:%d" % port,
                          "-o", out, "--", prog("requests"), str(N), "3000", str(GRAPHS)],
                         env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p, out


def settled(port, proc):
    """A scrape once every request and its device time are in (two scrapes
    100 ms apart agree), with the XIDs polled."""
    def done(m):
        return value(m, "gputrace_request_seconds_count", range="request") == N and \
            value(m, "gputrace_kernel_launches_total") == 5 * N + 5 * GRAPHS and \
            value(m, "gputrace_gpu_xid_errors_total", gpu="0", xid="79") == 2
    text, m = scrape_until(port, proc, done)
    while True:
        time.sleep(0.1)
        text2, m2 = scrape_until(port, proc, done)
        if m2 == m:
            return text, m
        text, m = text2, m2


def range_durations(events, name):
    """Wall times (s) of the push/pop ranges named `name`, from the trace."""
    stacks, out = {}, []
    for e in events:
        if e["kind"] != "nvtx" or e.get("op") not in ("push", "pop"):
            continue
        st = stacks.setdefault(e["tid"], [])
        if e["op"] == "push":
            st.append((e.get("message"), e["ts_ns"]))
        elif st:
            msg, t0 = st.pop()
            if msg == name:
                out.append((e["ts_ns"] - t0) / 1e9)
    return out


def buckets(m, name, **labels):
    got = [(float(dict(k[1])["le"]), v) for k, v in m.items()
           if k[0] == name + "_bucket" and all(dict(k[1]).get(a) == b for a, b in labels.items())]
    return sorted(got)


def check_request_histogram(m, events, rng):
    hist = buckets(m, "gputrace_request_seconds", range="request")
    eq(len(hist), 34, "33 bounds and +Inf")
    eq(hist[-1], (math.inf, N), "+Inf bucket = count")
    bounds = [b for b, _ in hist[:-1]]
    eq(bounds, [2 ** (k / 2) for k in range(-20, 13)], "log-spaced bounds, 2^(k/2) s")
    durs = range_durations(events, "request")
    eq(len(durs), N, "request ranges in the trace")
    eq([c for _, c in hist[:-1]], [sum(d <= b for d in durs) for b in bounds],
       "cumulative buckets = trace's range durations")
    s = value(m, "gputrace_request_seconds_sum", range="request")
    if abs(s - sum(durs)) > 1e-6:
        raise AssertionError("sum %r, trace %r" % (s, sum(durs)))
    eq(rng["count"], N, "report's request count")
    for q, key in ((0.5, "p50_ns"), (0.99, "p99_ns")):
        p = rng[key] / 1e9  # report's percentile falls in the bucket that holds rank q*N
        up = min(i for i, b in enumerate(bounds) if b >= p)
        if not (hist[up][1] >= math.floor(q * N) and (up == 0 or hist[up - 1][1] <= math.ceil(q * N))):
            raise AssertionError("report %s %r s vs buckets %r" % (key, p, hist))


def within(got, want, what, tol=0.10):
    if not (want > 0 and abs(got - want) <= tol * want):
        raise AssertionError("%s: %r, expected %r within %d %%" % (what, got, want, tol * 100))


def check_gpu_time(m, rep, rng):
    kernels = {k["kernel"]: k["gpu_total_ns"] / 1e9 for k in rep["kernels"]}
    eq(sorted((k["kernel"], k["launches"], k["graph_launches"]) for k in rep["kernels"]),
       [("decode(float*)", 3 * (N + GRAPHS), 3 * GRAPHS),
        ("encode(float*)", 2 * (N + GRAPHS), 2 * GRAPHS)],
       "report's kernels: each graph launch runs 2 encode and 3 decode")
    for name, secs in kernels.items():
        within(value(m, "gputrace_kernel_gpu_seconds_total", kernel=name), secs, name)
    pids = [k for k in m if k[0] == "gputrace_process_gpu_seconds_total"]
    eq(len(pids), 1, "one traced process")
    within(m[pids[0]], sum(kernels.values()), "process GPU seconds")
    within(value(m, "gputrace_request_gpu_seconds_total", range="request"),
           (rng["gpu_ns"] + rng["cold"]["gpu_ns"]) / 1e9, "GPU seconds in requests")
    eq((value(m, "gputrace_request_copy_bytes_total", range="request"),
        value(m, "gputrace_request_alloc_bytes_total", range="request"),
        value(m, "gputrace_request_copy_bytes_total", range="decode")),
       (N * 65536, N * 262144, 0), "bytes copied and allocated in requests (outermost range)")
    eq(value(m, "gputrace_request_seconds_count", range="decode"), N, "nested ranges")


def check_health(m):
    eq(value(m, "gputrace_gpu_clock_event_reasons", gpu="0"), 36, "clock-event mask")
    active = {dict(k[1])["reason"]: v for k, v in m.items()
              if k[0] == "gputrace_gpu_clock_event_active" and dict(k[1])["gpu"] == "0"}
    eq(sorted(r for r, v in active.items() if v == 1), ["sw_power_cap", "sw_thermal"],
       "active reasons (0x4 | 0x20)")
    eq(len(active), 9, "every reason")
    eq((value(m, "gputrace_gpu_ecc_errors_total", gpu="0", type="corrected"),
        value(m, "gputrace_gpu_ecc_errors_total", gpu="0", type="uncorrected")), (3, 1), "ECC")
    eq((value(m, "gputrace_gpu_clock_event_reasons", gpu="1"),
        value(m, "gputrace_gpu_ecc_errors_total", gpu="1", type="corrected")), (None, None),
       "readings a device refuses are skipped, per function")
    eq((value(m, "gputrace_gpu_xid_errors_total", gpu="0", xid="79"),
        value(m, "gputrace_gpu_xid_errors_total", gpu="1", xid="48"),
        value(m, "gputrace_gpu_last_xid", gpu="1")), (2, 1, 48), "XID errors")
    eq((value(m, "gputrace_gpu_process_memory_bytes", gpu="0", pid="4242"),
        value(m, "gputrace_gpu_process_memory_bytes", gpu="0", pid="4343"),
        value(m, "gputrace_gpu_compute_processes", gpu="0"),
        value(m, "gputrace_gpu_compute_processes", gpu="1")), (1048576, 2097152, 2, 0),
       "GPU processes (driver's view)")
    eq((value(m, "gputrace_gpu_memory_copy_utilization_percent", gpu="0"),
        value(m, "gputrace_gpu_memory_copy_utilization_percent", gpu="1")), (5, 40),
       "memory-copy utilization")
    info = [dict(k[1]) for k in m if k[0] == "gputrace_gpu_info"]
    eq(sorted((i["gpu"], i["uuid"], i["model_name"]) for i in info),
       [("0", "GPU-00000000-0000-0000-0000-000000000000", "gputrace stand-in GPU 0"),
        ("1", "GPU-00000000-0000-0000-0000-000000000001", "gputrace stand-in GPU 1")],
       "GPU identity")


def check_trace_health(events):
    metrics = select(events, kind="metric")
    last = {}
    for e in metrics:
        last[(e["device"], e["metric"], e.get("of_pid", 0))] = e["value"]
    eq((last[(0, "clock_events", 0)], last[(0, "ecc_corrected", 0)],
        last[(0, "ecc_uncorrected", 0)], last[(0, "processes", 0)],
        last[(0, "proc_mem", 4242)], last[(0, "proc_mem", 4343)]),
       (36, 3, 1, 2, 1048576, 2097152), "health readings in the trace")
    xids = [(e["ts_ns"], e["device"], e["value"]) for e in metrics if e["metric"] == "xid"]
    eq(sorted((d, v) for _, d, v in xids), [(0, 79), (0, 79), (1, 48)], "XID records")
    notes = [(e["ts_ns"], e["note"]) for e in select(events, kind="note")]
    eq(sorted(notes), sorted((t, "xid %d on GPU %d" % (v, d)) for t, d, v in xids),
       "a NOTE per XID, at its time")
    for e in metrics:
        eq(e["pid"], 0, "metric records belong to no process")


def test_fleet_series():
    port = free_port()
    proc, out = traced_requests(port)
    try:
        text, m = settled(port, proc)
    finally:
        finish(proc)
    events = dump(out)
    rep = report(out)
    rng = [r for r in rep["ranges"] if r["name"] == "request"][0]
    check_request_histogram(m, events, rng)
    check_gpu_time(m, rep, rng)
    check_health(m)
    check_trace_health(events)
    promtool_check(text)


def report(path):
    return json.loads(run([GPUTRACE, "report", path, "--json"], base_env(), check_rc=0).stdout)


def test_rules():
    if not shutil.which("promtool"):
        print("SKIP rules: promtool (Debian package prometheus) is not installed")
        return
    rules = [os.path.join(MONITORING, f) for f in ("gputrace-alerts.yml", "dcgm-rules.yml")]
    p = run(["promtool", "check", "rules"] + rules, base_env(), check_rc=None)
    eq(p.returncode, 0, "promtool check rules:\n" + p.stdout + p.stderr)
    tests = os.path.join(MONITORING, "tests", "rules-test.yml")
    p = run(["promtool", "test", "rules", tests], base_env(), check_rc=None)
    eq(p.returncode, 0, "promtool test rules:\n" + p.stdout + p.stderr)


if __name__ == "__main__":
    main([test_fleet_series, test_rules])
