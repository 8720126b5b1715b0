"""NVML hardware metrics (docs/standin.md "NVML", docs/report.md "Hardware"):
the collector samples the stand-in libnvidia-ml.so.1, whose readings come
from a script, so every METRIC record, chrome counter and report figure is
checked exactly against the scripted values."""
import json
import os
import subprocess
from gtest import *

# dev gpu% mem% used total temp power_mW limit_mW sm_MHz mem_MHz tx_KBps rx_KBps slowdown_C
#     [clock_event_mask ecc_corrected ecc_uncorrected]
SCRIPT = """\
# device 0: idle, memory nearly full, hot, throttled (SW power cap, then SW thermal)
0 10 5 9500 10000 80 100000 300000 1500 5000 100 200 90 4 0 0
0 20 6 8000 10000 86 150500 300000 1600 5001 - 300 90 36 3 -
0 15 7 8800 10000 88 120250 300000 1700 5002 400 500 90 32 3 1
# device 1: busy, cool, no memory, power or health readings
1 60 40 - - 50 - - 1400 4000 10 20 -
"""
FIELDS = ["gpu_util", "mem_util", "mem_used", "mem_total", "temperature", "power",
          "power_limit", "sm_clock", "mem_clock", "pcie_tx", "pcie_rx", "temp_slowdown",
          "clock_events", "ecc_corrected", "ecc_uncorrected"]
SCALE = {"power": 1 / 1000, "power_limit": 1 / 1000, "pcie_tx": 1024, "pcie_rx": 1024}


def scripted():
    """{device: [ {metric: value} per scripted line ]}"""
    out = {}
    for line in SCRIPT.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        vals = {}
        for name, v in zip(FIELDS, f[1:]):
            if v != "-":
                vals[name] = int(v) / 1000 if name in ("power", "power_limit") else \
                    int(v) * SCALE.get(name, 1)
        out.setdefault(int(f[0]), []).append(vals)
    return out


def traced(iterations=200, **env):
    path = os.path.join(TMP, "nvml_script.txt")
    with open(path, "w") as f:
        f.write(SCRIPT)
    out = os.path.join(TMP, "nvml_%d.gtrace" % iterations)
    record([prog("steady"), str(iterations)], out=out, GPUTRACE_STANDIN_NVML_SCRIPT=path,
           GPUTRACE_NVML_MS=50, **env)
    return out


def series(events):
    """{(device, metric): [(ts, value)]} in trace order."""
    s = {}
    for e in events:
        if e["kind"] == "metric":
            s.setdefault((e["device"], e["metric"]), []).append((e["ts_ns"], e["value"]))
    return s


def check_values(events):
    want = scripted()
    s = series(events)
    n = len(s[(0, "gpu_util")])
    if n < 3:
        raise AssertionError("only %d samples of device 0" % n)
    for dev, lines in want.items():
        samples = len(s[(dev, "gpu_util")])
        for name in FIELDS:
            expect = [lines[min(i, len(lines) - 1)].get(name) for i in range(samples)]
            expect = [v for v in expect if v is not None]
            eq([v for _, v in s.get((dev, name), [])], expect, "device %d %s" % (dev, name))
    eq(count(events, kind="note"), 0, "no note with NVML present")
    for e in select(events, kind="metric"):
        eq(e["pid"], 0, "metric records belong to no process")
    return s


def test_dump_values():
    events = dump(traced())
    check_values(events)
    eq(count(events, kind="launch"), 200, "launches")


def test_chrome_counters():
    trace = traced()
    events = dump(trace)
    s = check_values(events)
    out = os.path.join(TMP, "nvml.json")
    run([GPUTRACE, "chrome", trace, "-o", out], base_env(), check_rc=0)
    doc = json.load(open(out))
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    counters = {}
    for e in evs:
        if e.get("ph") == "C" and e["pid"] == 0:
            counters.setdefault(e["name"], []).append(e["args"]["value"])
    eq(counters["GPU 0 utilization %"], [v for _, v in s[(0, "gpu_util")]], "utilization track")
    eq(counters["GPU 0 temperature C"], [v for _, v in s[(0, "temperature")]], "temperature")
    eq(counters["GPU 0 power W"], [v for _, v in s[(0, "power")]], "power track")
    eq(counters["GPU 1 utilization %"], [v for _, v in s[(1, "gpu_util")]], "gpu 1 track")
    eq("GPU 1 power W" in counters, False, "no track for a missing reading")
    names = [e for e in evs if e.get("ph") == "M" and e["pid"] == 0 and e["name"] == "process_name"]
    eq([e["args"]["name"] for e in names], ["GPU hardware (NVML)"], "hardware process name")


def time_above(samples, pred):
    span = above = 0
    for (t0, v0), (t1, _) in zip(samples, samples[1:]):
        span += t1 - t0
        above += (t1 - t0) if pred(v0) else 0
    return span, above


def test_report_hardware():
    trace = traced()
    events = dump(trace)
    s = check_values(events)
    p = run([GPUTRACE, "report", trace, "--json"], base_env(), check_rc=0)
    rep = json.loads(p.stdout)
    hw = rep["hardware"]
    eq(hw["nvml"], "available", "nvml state")
    devs = {d["gpu"]: d for d in hw["devices"]}
    eq(sorted(devs), [0, 1], "devices")
    for (dev, name), vals in s.items():
        v = [x for _, x in vals]
        m = devs[dev]["metrics"][name]
        eq((m["samples"], m["mean"], m["max"]), (len(v), sum(v) / len(v), max(v)),
           "mean/max of device %d %s" % (dev, name))
    d0 = devs[0]
    span, low = time_above(s[(0, "gpu_util")], lambda v: v < 25)
    eq((d0["util_sampled_ns"], d0["util_low_ns"], d0["util_low_fraction"]),
       (span, low, low / span), "time under 25 % utilization")
    used = s[(0, "mem_used")]
    span, a85 = time_above(used, lambda v: v / 10000 * 100 > 85)
    _, a90 = time_above(used, lambda v: v / 10000 * 100 > 90)
    eq((d0["vram_sampled_ns"], d0["vram_85_ns"], d0["vram_90_ns"]), (span, a85, a90), "VRAM time")
    span, hot = time_above(s[(0, "temperature")], lambda v: v >= 85)
    eq((d0["hot_threshold_c"], d0["temp_sampled_ns"], d0["hot_ns"]), (85, span, hot), "hot time")
    eq(devs[1]["hot_threshold_c"], 83, "default threshold without a slowdown reading")
    found = {(f["rule"], f["evidence"]["gpu"]): f for f in rep["findings"]
             if f["rule"] in ("gpu_underutilized", "vram_pressure", "thermal")}
    eq(sorted(found), [("gpu_underutilized", 0), ("thermal", 0), ("vram_pressure", 0)],
       "hardware findings")
    eq(found[("gpu_underutilized", 0)]["severity"], "high", "all samples under 25 %")
    eq(found[("vram_pressure", 0)]["severity"], "high", "above 90 % at the start")
    eq(found[("thermal", 0)]["severity"], "high" if hot / span >= 0.25 else "medium", "thermal")
    text = run([GPUTRACE, "report", trace], base_env(), check_rc=0).stdout
    for want in ("Hardware (NVML", "GPU 0", "utilization < 25 %", "VRAM > 85 %",
                 "temperature >= 85 C"):
        if want not in text:
            raise AssertionError("%r not in report:\n%s" % (want, text))


def test_without_nvml():
    _, trace = record([prog("steady"), "5"], out=os.path.join(TMP, "no_nvml.gtrace"))
    events = dump(trace)
    eq([e["note"] for e in select(events, kind="note")], ["nvml unavailable"], "one note")
    eq(count(events, kind="metric"), 0, "no readings")
    rep = json.loads(run([GPUTRACE, "report", trace, "--json"], base_env(), check_rc=0).stdout)
    eq(rep["hardware"], {"nvml": "unavailable", "devices": []}, "report hardware")
    text = run([GPUTRACE, "report", trace], base_env(), check_rc=0).stdout
    if "nvml unavailable" not in text:
        raise AssertionError("report does not say nvml unavailable:\n" + text)


if __name__ == "__main__":
    main([test_dump_values, test_chrome_counters, test_report_hardware, test_without_nvml])
