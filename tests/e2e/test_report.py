"""`gputrace report` on nvcc-built loops with a known bottleneck, run on the
stand-in runtime: the verdict and findings each loop must get, and every
figure checked exactly against the records `gputrace dump --json` shows
(percentiles by the nearest-rank definition of docs/report.md), with the
shim's device timing (DEVICE records: the default) and without it
(GPUTRACE_GPU_TIMING=off: the CPU-side attribution model)."""
import json
import os
import subprocess
from gtest import *

MiB = 1 << 20
SYNC_APIS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize")


def report(path, *args, expect_rc=0):
    p = subprocess.run([GPUTRACE, "report", path] + list(args), capture_output=True, text=True,
                       timeout=300)
    if p.returncode != expect_rc:
        raise AssertionError("report %s exited %d, expected %d: %s" %
                             (args, p.returncode, expect_rc, p.stderr))
    return json.loads(p.stdout) if "--json" in args else p.stdout


def pct(values, p):
    """Nearest rank: the k-th smallest, k = ceil(p * n / 100)."""
    v = sorted(values)
    return v[max(1, (p * len(v) + 99) // 100) - 1] if v else 0


def rules(rep):
    return {f["rule"]: f for f in rep["findings"]}


def api_calls(events):
    return [e for e in events if e["kind"] in
            ("alloc", "free", "memcpy", "memset", "launch", "sync", "stream", "event")]


def check_api_table(rep, events):
    calls = api_calls(events)
    eq({a["api"]: a["calls"] for a in rep["api"]}, dict(by(calls, "api")), "calls per API")
    for row in rep["api"]:
        d = [e["dur_ns"] for e in calls if e["api"] == row["api"]]
        want = {"total_ns": sum(d), "mean_ns": sum(d) // len(d), "p50_ns": pct(d, 50),
                "p90_ns": pct(d, 90), "p99_ns": pct(d, 99), "max_ns": max(d)}
        eq({k: row[k] for k in want}, want, "figures of " + row["api"])


def ranges_from(events):
    """Push/pop ranges per thread: {name: [(start, end, launches, bytes, allocs)]}."""
    out, stacks = {}, {}
    for e in events:
        if e["kind"] == "nvtx" and e["op"] == "push":
            stacks.setdefault(e["tid"], []).append([e["message"], e["ts_ns"], 0, 0, 0])
        elif e["kind"] == "nvtx" and e["op"] == "pop" and stacks.get(e["tid"]):
            name, start, n, b, a = stacks[e["tid"]].pop()
            out.setdefault(name, []).append((start, e["ts_ns"], n, b, a))
        for open_range in stacks.get(e["tid"], []):
            open_range[2] += e["kind"] == "launch"
            open_range[3] += e.get("bytes", 0) if e["kind"] == "memcpy" else 0
            open_range[4] += e["kind"] == "alloc" and e["result"] == 0
    return out


def check_ranges(rep, events):
    want = ranges_from(events)
    eq(sorted(r["name"] for r in rep["ranges"]), sorted(want), "range names")
    for row in rep["ranges"]:
        occ = sorted(want[row["name"]])
        cold, warm = occ[0], occ[1:]
        d = [end - start for start, end, *_ in warm]
        eq(row["count"], len(occ), "count of " + row["name"])
        eq((row["cold"]["start_ns"], row["cold"]["dur_ns"], row["cold"]["launches"]),
           (cold[0], cold[1] - cold[0], cold[2]), "cold start of " + row["name"])
        eq({k: row[k] for k in ("warm_count", "p50_ns", "p90_ns", "p99_ns", "max_ns",
                                 "launches", "bytes", "allocs")},
           {"warm_count": len(d), "p50_ns": pct(d, 50), "p90_ns": pct(d, 90),
            "p99_ns": pct(d, 99), "max_ns": max(d) if d else 0,
            "launches": sum(o[2] for o in warm), "bytes": sum(o[3] for o in warm),
            "allocs": sum(o[4] for o in warm)}, "warm figures of " + row["name"])


def merged(intervals):
    out = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(runs, s, e):
    return sum(max(0, min(e, re) - max(s, rs)) for rs, re in runs)


def device_runs(events):
    """The device's busy stretches (one process): kernels, and kernels or copies."""
    dev = select(events, kind="device")
    k = merged((d["ts_ns"], d["ts_ns"] + d["dur_ns"]) for d in dev if d["of_kind"] == "launch")
    u = merged((d["ts_ns"], d["ts_ns"] + d["dur_ns"]) for d in dev)
    return k, u


def check_device(rep, events):
    """GPU figures from the DEVICE records, exactly (all timed: sample 1)."""
    dev = select(events, kind="device")
    eq((rep["device_timing"], rep["device_records"]), (True, len(dev)), "device records")
    eq({d["sample"] for d in dev}, {1}, "every call timed")
    for k in rep["kernels"]:
        d = [e["dur_ns"] for e in dev if e.get("kernel") == k["kernel"]]
        eq((k["gpu_timed"], k["gpu_total_ns"], k["gpu_mean_ns"], k["gpu_max_ns"]),
           (len(d), sum(d), sum(d) // len(d), max(d)), "GPU time of " + k["kernel"])
    for x in rep["transfers"]:
        d = [e["dur_ns"] for e in dev if (e["of_kind"] == "memset" and x["dir"] == "memset") or
             (e["of_kind"] == "memcpy" and e.get("dir") == x["dir"])]
        eq((x.get("gpu_timed", 0), x.get("gpu_total_ns", 0)), (len(d), sum(d)),
           "GPU time of " + x["dir"])
    # blocked time: kernels running, else copies running, else the wait's own
    kruns, uruns = device_runs(events)
    want = {}
    for e in events:
        if e["kind"] == "sync" and e["api"] in SYNC_APIS:
            s, t = e["ts_ns"], e["ts_ns"] + e["dur_ns"]
            k, u = overlap(kruns, s, t), overlap(uruns, s, t)
            w = want.setdefault(e["api"], [0, 0, 0])
            w[0] += k
            w[1] += u - k
            w[2] += e["dur_ns"] - u
    eq({s["api"]: [s["kernel_ns"], s["copy_ns"], s["unexplained_ns"]] for s in rep["sync"]
        if s["api"] in want}, want, "blocked time split by the device intervals")
    for row in rep["ranges"]:
        occ = sorted(ranges_from(events)[row["name"]])
        eq((row["cold"]["gpu_ns"], row["gpu_ns"]),
           (overlap(uruns, occ[0][0], occ[0][1]), sum(overlap(uruns, a, b) for a, b, *_ in occ[1:])),
           "GPU time in ranges " + row["name"])


def check_partition(rep):
    s = rep["shares"]
    parts = ("copy", "kernel", "launch", "sync", "api", "idle")
    eq(sum(s[p + "_ns"] for p in parts), s["traced_ns"], "shares partition the traced time")
    if abs(sum(s[p] for p in parts) - 1) > 1e-5:
        raise AssertionError("shares sum to %r" % sum(s[p] for p in parts))


def test_pageable_loop_is_transfer_bound():
    _, out = record([prog("pageable_loop"), "20", "16"])
    rep, events = report(out, "--json"), dump(out)
    eq(rep["verdict"], "transfer-bound", "verdict")
    found = rules(rep)
    for r in ("pageable_memcpy", "sync_memcpy"):
        if r not in found:
            raise AssertionError("missing %s in %s" % (r, sorted(found)))
    eq(found["pageable_memcpy"]["evidence"]["copies"], 20, "pageable copies")
    eq(found["pageable_memcpy"]["evidence"]["bytes"], 20 * 16 * MiB, "pageable bytes")
    if rep["shares"]["copy"] < 0.5:
        raise AssertionError("copy share %r" % rep["shares"]["copy"])
    check_api_table(rep, events)
    check_ranges(rep, events)
    check_partition(rep)
    launches = select(events, kind="launch")
    eq([{k: r[k] for k in ("kernel", "launches", "cpu_total_ns", "cpu_mean_ns")}
        for r in rep["kernels"]],
       [{"kernel": "touch(float*)", "launches": 20,
         "cpu_total_ns": sum(e["dur_ns"] for e in launches),
         "cpu_mean_ns": sum(e["dur_ns"] for e in launches) // 20}], "kernels")
    check_device(rep, events)
    copies = select(events, kind="memcpy")
    x = rep["transfers"][0]
    eq((x["dir"], x["count"], x["bytes"], x["pageable_count"], x["async_count"],
        x["blocking_count"], x["host_ns"]),
       ("HtoD", 20, 20 * 16 * MiB, 20, 0, 20, sum(e["dur_ns"] for e in copies)), "transfers")
    eq((rep["processes"], rep["threads"], rep["dropped"]), (1, 1, 0), "run summary")
    eq(rep["memory"]["peak_device_bytes"], 16 * MiB, "peak device memory")
    eq(rep["memory"]["pressure"], "unknown", "device memory total unknown")


def check_compute_loop(rep, events):
    eq(rep["verdict"], "compute-bound", "verdict")
    found = rules(rep)
    for r in ("pageable_memcpy", "sync_memcpy", "excessive_sync"):
        if r in found:
            raise AssertionError("unexpected %s: %s" % (r, found[r]["message"]))
    check_api_table(rep, events)
    check_ranges(rep, events)
    check_partition(rep)
    eq([(k["kernel"], k["launches"]) for k in rep["kernels"]], [("layer(float*, int)", 300)],
       "kernels")
    x = rep["transfers"][0]
    eq((x["dir"], x["count"], x["pageable_count"], x["async_count"], x["blocking_count"]),
       ("HtoD", 30, 0, 30, 0), "pinned async copies")
    if rep["shares"]["kernel"] < 0.5:
        raise AssertionError("kernel share %r" % rep["shares"]["kernel"])


def test_compute_loop_is_compute_bound():
    # every call timed (GPUTRACE_GPU_TIMING_SAMPLE=1) so GPU figures compare
    # exactly; the default's sampling is tested in test_report_device
    _, out = record([prog("compute_loop"), "30", "1", "10"], GPUTRACE_GPU_TIMING_SAMPLE="1")
    rep, events = report(out, "--json"), dump(out)
    check_compute_loop(rep, events)
    check_device(rep, events)


def test_compute_loop_cpu_timing_only():
    _, out = record([prog("compute_loop"), "30", "1", "10"], out=os.path.join(TMP, "cpu.gtrace"),
                    GPUTRACE_GPU_TIMING="off")
    rep, events = report(out, "--json"), dump(out)
    eq((rep["device_timing"], count(events, kind="device")), (False, 0), "no device timing")
    check_compute_loop(rep, events)
    # The CPU-side model: each cudaStreamSynchronize waited for one queued
    # 1 MiB pinned copy (2000 ns + 1048576 B / 24 B/ns) and 10 kernels, so
    # the copy gets min(blocked, 45690 ns) and the kernels the rest.
    syncs = [e["dur_ns"] for e in select(events, api="cudaStreamSynchronize")]
    est = 2000 + MiB // 24
    row = [s for s in rep["sync"] if s["api"] == "cudaStreamSynchronize"][0]
    eq((row["calls"], row["total_ns"], row["copy_ns"], row["kernel_ns"], row["unexplained_ns"]),
       (30, sum(syncs), sum(min(d, est) for d in syncs), sum(d - min(d, est) for d in syncs), 0),
       "sync attribution")


def test_sync_loop_findings():
    _, out = record([prog("sync_loop"), "200"])
    rep, events = report(out, "--json"), dump(out)
    found = rules(rep)
    for r in ("excessive_sync", "alloc_churn", "small_transfers"):
        if r not in found:
            raise AssertionError("missing %s in %s" % (r, sorted(found)))
    ev = found["excessive_sync"]["evidence"]
    eq((ev["launches"], ev["launches_then_sync"], ev["sync_calls"]), (200, 200, 200),
       "excessive_sync evidence")
    eq(found["alloc_churn"]["evidence"]["reallocations"], 199, "allocations of a freed size")
    eq((found["small_transfers"]["evidence"]["small_copies"],
        found["small_transfers"]["evidence"]["copies"]), (200, 200), "small copies")
    # 4 KiB host-to-device copies are staged by the runtime: neither rule
    # about synchronous or pageable copies applies (as in nsys)
    for r in ("sync_memcpy", "pageable_memcpy"):
        if r in found:
            raise AssertionError("unexpected %s" % r)
    check_api_table(rep, events)
    check_ranges(rep, events)
    eq({f["severity"] for f in rep["findings"]} - {"high", "medium", "low"}, set(), "severities")


def test_window_and_pid():
    _, out = record([prog("pageable_loop"), "10", "4"])
    events = dump(out)
    origin = events[0]["ts_ns"]
    copies = select(events, kind="memcpy")
    lo, hi = copies[3]["ts_ns"] - origin, copies[7]["ts_ns"] - origin  # copies 3..6
    rep = report(out, "--json", "--from", "%dns" % lo, "--to", "%.6fms" % (hi / 1e6))
    inside = [e for e in api_calls(events) if lo <= e["ts_ns"] - origin < hi]
    eq({a["api"]: a["calls"] for a in rep["api"]}, dict(by(inside, "api")), "calls in window")
    eq(rep["window"], {"from_ns": lo, "to_ns": hi}, "window")
    eq(rep["transfers"][0]["count"], 4, "copies in window")
    eq(report(out, "--json", "--from", "%.9f" % (lo / 1e9), "--to", "%dus" % (hi // 1000))
       ["transfers"][0]["count"], 4, "seconds and microseconds")
    pid = events[0]["pid"]
    eq(report(out, "--json", "--pid", str(pid))["api"], report(out, "--json")["api"], "own pid")
    # a pid the trace does not hold is an error (test_first_hour_data.py: the message)
    p = subprocess.run([GPUTRACE, "report", out, "--json", "--pid", str(pid + 1)],
                       capture_output=True, text=True, timeout=300)
    eq((p.returncode, p.stdout), (2, ""), "another pid")


def test_text_output():
    _, out = record([prog("pageable_loop"), "10", "16"])
    text = report(out)
    for want in ("Verdict: transfer-bound", "[high] pageable_memcpy", "CUDA API",
                 "cudaMemcpy", "Transfers", "HtoD", "MiB", "GB/s", "NVTX ranges", "iter",
                 "device memory: unknown"):
        if want not in text:
            raise AssertionError("%r not in the text report:\n%s" % (want, text))
    if text.index("Verdict") > text.index("CUDA API") or text.index("Findings") > text.index("CUDA API"):
        raise AssertionError("verdict and findings must come first")


def test_usage_errors():
    _, out = record([prog("pageable_loop"), "2", "1"])
    for args in ([], ["--from", "soon", out], ["--to", "0", out], [out, "--bogus"],
                 ["/nonexistent.gtrace"], [out, out], ["--device-memory", "lots", out]):
        p = subprocess.run([GPUTRACE, "report"] + args, capture_output=True, text=True)
        eq(p.returncode, 2, "status of report %s" % args)
        if not p.stderr:
            raise AssertionError("no message for %s" % args)
    eq(subprocess.run([GPUTRACE, "report", "--help"], capture_output=True).returncode, 0,
       "--help")


main([test_pageable_loop_is_transfer_bound, test_compute_loop_is_compute_bound,
      test_compute_loop_cpu_timing_only,
      test_sync_loop_findings, test_window_and_pid, test_text_output, test_usage_errors])
