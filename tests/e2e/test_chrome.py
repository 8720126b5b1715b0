"""gputrace chrome: the Chrome Trace Event Format export, checked against
`dump --json` of the same trace (exact counts, names, times, counters) and
for the properties viewers rely on: valid JSON, named events, integer pids
and tids, metadata, and slices that nest perfectly on every track — computed
the way Perfetto and chrome://tracing rebuild a track (sorted by start,
ties in file order). Traces come from nvcc programs on the stand-in runtime,
from tests/chrome/synth_trace.c scripts (DEVICE records, equal timestamps,
crossing clocks, failures, drops) and from bench/gen_trace.c."""
import collections
import decimal
import gzip
import json
import os
import subprocess

from gtest import *

SYNTH = os.path.join(BIN, "chrome_synth_trace")
GEN = os.path.join(BIN, "gputrace-gen-trace")
MiB = 1 << 20
SYNTH_TID = 0x40000000  # synthetic tracks (NVTX lanes, device streams) start here
HOST_KINDS = ("alloc", "free", "memcpy", "memset", "launch", "sync", "stream", "event")


# ---------------------------------------------------------------- helpers

def chrome(trace, *args, rc=0):
    """gputrace chrome TRACE --force ARGS: these tests export to one name
    again and again (refusing an existing output is test_outputs.py's)."""
    p = subprocess.run([GPUTRACE, "chrome", trace, "--force"] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        raise AssertionError("chrome %s %s exited %d, expected %d: %s" %
                             (trace, args, p.returncode, rc, p.stderr))
    return p


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def export(trace, *args, out=None, rc=0):
    """Export to OUT (default: next to the trace) and return the document."""
    out = out or trace[:-len(".gtrace")] + ".json"
    chrome(trace, "-o", out, *args, rc=rc)
    return load(out)


def ns(v):
    """A JSON timestamp in microseconds (three decimals) as exact nanoseconds."""
    return int(decimal.Decimal(v) * 1000)


def synth(name, script):
    path = os.path.join(TMP, name + ".gtrace")
    p = subprocess.run([SYNTH, path], input=script, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("synth %s: %s" % (name, p.stderr))
    return path


def gen(name, n, *args):
    path = os.path.join(TMP, name + ".gtrace")
    subprocess.run([GEN, path, str(n)] + list(args), check=True, timeout=120)
    return path


def evs(doc, **match):
    return [e for e in doc["traceEvents"] if all(e.get(k) == v for k, v in match.items())]


def meta(doc, what):
    """{(pid, tid): args value} of the M events named `what`."""
    key = "sort_index" if what.endswith("sort_index") else "name"
    return {(e["pid"], e["tid"]): e["args"][key] for e in evs(doc, ph="M", name=what)}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_doc(doc):
    """Shape: what every viewer needs of every event."""
    eq(sorted(doc), ["displayTimeUnit", "metadata", "traceEvents"], "top-level keys")
    eq(doc["displayTimeUnit"], "ns", "displayTimeUnit")
    for e in doc["traceEvents"]:
        what = "event %r" % (e,)
        if not (isinstance(e.get("name"), str) and e["name"]):
            raise AssertionError("no name: " + what)  # DevTools' engine throws on these
        if not (is_int(e.get("pid")) and is_int(e.get("tid"))):
            raise AssertionError("pid/tid not integers: " + what)
        ph = e["ph"]
        if ph != "M":
            ts = e["ts"]
            if ts < 0 or ns(ts) != decimal.Decimal(ts) * 1000:
                raise AssertionError("ts not >= 0 with ns precision: " + what)
        if ph == "X":
            if e["dur"] < 0 or not isinstance(e.get("args", {}), dict):
                raise AssertionError("bad X: " + what)
        elif ph == "C":
            if not e.get("args") or not all(is_int(v) for v in e["args"].values()):
                raise AssertionError("counter without integer args: " + what)
        elif ph == "i":
            if e.get("s") not in ("t", "p"):
                raise AssertionError("instant scope: " + what)
        elif ph in ("s", "f"):
            if not is_int(e.get("id")) or (ph == "f" and e.get("bp") != "e"):
                raise AssertionError("flow: " + what)
        elif ph == "M":
            if e["name"] not in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index"):
                raise AssertionError("metadata: " + what)
        else:
            raise AssertionError("unexpected phase: " + what)


def check_nesting(doc):
    """Every track's slices (X, and thread instants, which Perfetto makes
    zero-length slices) must nest: rebuild each track as Perfetto does —
    sorted by start, ties in file order — and require each slice to end no
    later than the one it starts inside."""
    tracks = collections.defaultdict(list)
    for i, e in enumerate(doc["traceEvents"]):
        if e["ph"] == "X" or (e["ph"] == "i" and e.get("s") == "t"):
            start = ns(e["ts"])
            tracks[(e["pid"], e["tid"])].append((start, i, start + ns(e.get("dur", 0)), e["name"]))
    for track, slices in tracks.items():
        stack = []
        for start, i, end, name in sorted(slices):
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack and end > stack[-1][0]:
                raise AssertionError("track %s: %r [%d, %d) crosses %r ending at %d" %
                                     (track, name, start, end, stack[-1][1], stack[-1][0]))
            stack.append((end, name))
    return tracks


def inside(inner, outer):
    return ns(outer["ts"]) <= ns(inner["ts"]) and \
        ns(inner["ts"]) + ns(inner.get("dur", 0)) <= ns(outer["ts"]) + ns(outer["dur"])


def host_slices(doc, **match):
    return [e for e in evs(doc, ph="X", **match) if e["cat"] in HOST_KINDS and e["tid"] < SYNTH_TID]


def device_slices(doc):
    """Device work: on synthetic stream tracks, with the host call's category."""
    return [e for e in evs(doc, ph="X") if e["tid"] >= SYNTH_TID and "device" in e["args"]]


def counter_values(doc, name, pid=None):
    return [next(iter(e["args"].values())) for e in evs(doc, ph="C", name=name)
            if pid is None or e["pid"] == pid]


def check_against_dump(doc, records):
    """Every traced call is a slice with its exact time, duration and name."""
    base = doc["metadata"]["trace_start_ns"]
    calls_ = [r for r in records if r["kind"] in HOST_KINDS]
    slices = host_slices(doc)
    eq(collections.Counter(e["cat"] for e in slices),
       collections.Counter(r["kind"] for r in calls_), "slices per kind")
    eq(collections.Counter(e["name"] for e in slices if e["cat"] == "launch"),
       collections.Counter(r["kernel"] for r in calls_ if r["kind"] == "launch"),
       "launches per kernel name")
    by_thread = collections.defaultdict(list)
    for e in slices:
        by_thread[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["dur"]), e["args"]["api"]))
    for r in calls_:
        by_thread[(r["pid"], r["tid"])]  # every thread has its slices
    for (pid, tid), got in by_thread.items():
        want = [(r["ts_ns"] - base, r["dur_ns"], r["api"]) for r in calls_
                if (r["pid"], r["tid"]) == (pid, tid)]
        eq(got, want, "times of thread %d's calls" % tid)


# ---------------------------------------------------------------- programs

def test_basic():
    _, trace = record([prog("basic")])
    records = dump(trace)
    chrome(trace)  # default output: basic.gtrace -> basic.json
    doc = load(trace[:-len(".gtrace")] + ".json")
    check_doc(doc)
    check_nesting(doc)
    check_against_dump(doc, records)
    pid = records[0]["pid"]
    start = [r for r in records if r["kind"] == "process" and r["phase"] == "start"][0]
    eq(meta(doc, "process_name"), {(pid, pid): start["cmdline"]}, "process_name")
    names = meta(doc, "thread_name")
    host = {k: v for k, v in names.items() if not v.startswith("GPU ")}
    eq(host, {(pid, pid): "main"}, "host thread_name")
    # device timing is on by default: one track per stream the program used
    # (its own stream, and the legacy default stream cudaStreamLegacy = 0x1)
    stream = [r for r in records if r["api"] == "cudaStreamCreate"][0]["handle"]
    eq(sorted(v for v in names.values() if v.startswith("GPU ")),
       sorted(["GPU 0 stream 0x1", "GPU 0 stream " + stream]), "device tracks")
    eq(doc["metadata"]["adjusted_slices"], 0, "no slice needed moving")
    infer = [e for e in host_slices(doc, cat="launch") if e["name"] == "infer(float*, float*, int)"]
    eq((infer[0]["args"]["grid"], infer[0]["args"]["block"]), ([1024, 1, 1], [256, 1, 1]),
       "launch args")
    # basic.cu: cudaMalloc 1 MiB, 1 MiB, 4096 B, all live together
    device = counter_values(doc, "device memory")
    eq((max(device), device[-1], len(device)), (2 * MiB + 4096, 0, 6), "device memory counter")
    eq(max(counter_values(doc, "pinned host memory")), MiB, "pinned memory counter")
    eq(max(counter_values(doc, "managed memory")), 65536, "managed memory counter")
    copy = host_slices(doc, cat="memcpy")[1]
    eq((copy["args"]["bytes"], copy["args"]["dir"], copy["args"]["pinned"]), (MiB, "HtoD", True),
       "copy args")


def test_threads():
    # Host threads only: with device timing on, how many launches of 8
    # racing threads get an event pair depends on the pool (and timing).
    _, trace = record([prog("threads"), "300"], GPUTRACE_GPU_TIMING="off")
    records = dump(trace)
    doc = export(trace)
    check_doc(doc)
    check_nesting(doc)
    check_against_dump(doc, records)
    pid = records[0]["pid"]
    names = meta(doc, "thread_name")
    workers = {tid for (p, tid) in names if tid != pid and not names[(p, tid)].startswith("GPU ")}
    eq(len(workers), 8, "worker threads")
    eq(len([v for v in names.values() if v.startswith("GPU ")]), 0,
       "no device tracks without device timing")
    eq({names[(pid, t)] for t in workers}, {"thread %d" % t for t in workers}, "thread names")
    sort = meta(doc, "thread_sort_index")  # main (no CUDA call here) would be 0
    eq({sort[(pid, t)] for t in workers}, {1}, "worker threads after main")
    eq(collections.Counter(e["tid"] for e in host_slices(doc, cat="launch")),
       {t: 300 for t in workers}, "launches per thread")


def test_nvtx():
    _, trace = record([prog("nvtx")])
    records = dump(trace)
    doc = export(trace)
    check_doc(doc)
    check_nesting(doc)
    check_against_dump(doc, records)
    pid = records[0]["pid"]
    ranges = evs(doc, ph="X", cat="nvtx")
    eq(collections.Counter((e["name"], e["tid"] == pid) for e in ranges),
       {("request", True): 5, ("decode", True): 5, ("batch", True): 1, ("warmup", False): 1},
       "ranges and their tracks")
    requests = [e for e in ranges if e["name"] == "request"]
    decodes = [e for e in ranges if e["name"] == "decode"]
    launches = host_slices(doc, cat="launch")
    for r in requests:
        eq(sum(inside(d, r) for d in decodes), 1, "one decode inside each request")
        eq(sum(inside(l, r) for l in launches), 2, "two launches inside each request")
    for d in decodes:
        eq(sum(inside(l, d) for l in launches), 1, "one launch inside each decode")
    warmup = [e for e in ranges if e["name"] == "warmup"][0]
    eq(meta(doc, "thread_name")[(pid, warmup["tid"])], "NVTX ranges", "start/end lane name")
    if warmup["tid"] < SYNTH_TID:
        raise AssertionError("lane tid %d collides with real tids" % warmup["tid"])
    marks = evs(doc, ph="i", name="checkpoint")
    eq((len(marks), marks[0]["s"], marks[0]["tid"]), (1, "t", pid), "mark")
    base = doc["metadata"]["trace_start_ns"]
    pushes = [r for r in records if r["kind"] == "nvtx" and r["op"] == "push"]
    eq(sorted(ns(e["ts"]) for e in ranges if e["tid"] == pid),
       sorted(r["ts_ns"] - base for r in pushes), "ranges start at their push")


def test_forked_and_pid_filter():
    _, trace = record([prog("forked")])
    records = dump(trace)
    starts = [r for r in records if r["kind"] == "process" and r["phase"] == "start"]
    parent, child = starts[0]["pid"], starts[1]["pid"]
    doc = export(trace)
    check_doc(doc)
    check_nesting(doc)
    check_against_dump(doc, records)
    eq({p for (p, _) in meta(doc, "process_name")}, {parent, child}, "both processes named")
    eq(meta(doc, "process_sort_index"), {(parent, parent): 0, (child, child): 1},
       "processes in order of appearance")
    only = export(trace, "--pid", child, out=os.path.join(TMP, "forked_child.json"))
    check_doc(only)
    check_against_dump(only, [r for r in records if r["pid"] == child])
    eq({e["pid"] for e in only["traceEvents"]}, {child}, "--pid keeps one process")
    eq(collections.Counter(e["name"] for e in host_slices(only, cat="launch")),
       {"child_kernel()": 7}, "the child's launches")
    eq(max(counter_values(only, "device memory")), 5000, "the child's peak")
    eq(only["metadata"]["pid"], child, "metadata says so")


def test_window():
    _, trace = record([prog("threads"), "300"])
    records = dump(trace)
    full = export(trace)
    base = full["metadata"]["trace_start_ns"]
    calls_ = [r for r in records if r["kind"] in HOST_KINDS]
    starts = sorted(r["ts_ns"] - base for r in calls_)  # a window around the middle fifth
    lo, hi = starts[len(starts) * 2 // 5] + 1, starts[len(starts) * 3 // 5]  # of the calls
    doc = export(trace, "--from", "%dns" % lo, "--to", "%dns" % hi,
                 out=os.path.join(TMP, "window.json"))
    check_doc(doc)
    check_nesting(doc)
    want = collections.Counter((r["tid"], r["ts_ns"] - base) for r in calls_
                               if r["ts_ns"] - base < hi and r["ts_ns"] - base + r["dur_ns"] >= lo)
    got = collections.Counter((e["tid"], ns(e["ts"])) for e in host_slices(doc))
    eq(got, want, "slices overlapping the window, exactly")
    if not 0 < len(got) < len(calls_):
        raise AssertionError("window kept %d of %d calls" % (len(got), len(calls_)))
    for e in evs(doc, ph="C") + evs(doc, ph="i"):
        if not lo <= ns(e["ts"]) < hi:
            raise AssertionError("instant or counter outside the window: %r" % e)
    # the same instant, written four ways, gives the same file
    outs = []
    for i, (f, t) in enumerate([("0.0015", "0.25"), ("1.5ms", "250ms"), ("1500us", "250000us"),
                                ("1500000ns", "250000000ns")]):
        out = os.path.join(TMP, "units%d.json" % i)
        chrome(trace, "-o", out, "--from", f, "--to", t)
        outs.append(open(out, "rb").read())
    eq(len(set(outs)), 1, "time units agree")
    eq(load(os.path.join(TMP, "units0.json"))["metadata"]["from_us"], 1500, "from in metadata")


def test_gzip_and_stdout():
    _, trace = record([prog("basic")])
    plain = os.path.join(TMP, "b.json")
    packed = os.path.join(TMP, "b.json.gz")
    chrome(trace, "-o", plain)
    chrome(trace, "-o", packed)
    raw = open(plain, "rb").read()
    eq(gzip.decompress(open(packed, "rb").read()) == raw, True, ".json.gz holds the same JSON")
    eq(load(packed)["metadata"]["records"], load(plain)["metadata"]["records"], "gzip parses")
    p = subprocess.run([GPUTRACE, "chrome", trace, "-o", "-"], capture_output=True, timeout=60)
    eq((p.returncode, p.stdout == raw), (0, True), "-o - writes the same JSON to stdout")


def test_bad_input():
    p = chrome("/no/such.gtrace", rc=2)
    if "cannot open /no/such.gtrace" not in p.stderr:
        raise AssertionError(p.stderr)
    junk = os.path.join(TMP, "junk.gtrace")
    with open(junk, "wb") as f:
        f.write(os.urandom(3000))
    p = chrome(junk, rc=2)
    if "not a gputrace trace" not in p.stderr:
        raise AssertionError(p.stderr)
    _, trace = record([prog("basic")])
    p = chrome(trace, "-o", "/nonexistent-dir/out.json", rc=2)
    eq(p.stderr.strip().startswith("gputrace chrome: cannot write /nonexistent-dir/out.json"), True,
       "unwritable output named: " + p.stderr)
    p = chrome(trace, "-o", "/dev/full", rc=2)  # a write error: named, and no file removed
    eq((p.stderr.strip(), os.path.exists("/dev/full")),
       ("gputrace chrome: writing /dev/full: No space left on device", True), "write error")
    p = chrome(trace, "-o", trace, rc=2)
    if "would overwrite" not in p.stderr:
        raise AssertionError(p.stderr)
    for args in (["--from", "abc"], ["--from", "-1"], ["--to", "5parsecs"], ["--pid", "x"],
                 ["--from", "2", "--to", "1"], ["--bogus"], ["-o"]):
        p = chrome(trace, *args, rc=2)
        if not p.stderr:
            raise AssertionError("no message for %s" % args)
    p = subprocess.run([GPUTRACE, "chrome"], capture_output=True, text=True)
    eq(p.returncode, 2, "no file")
    out = os.path.join(TMP, "nopid.json")
    p = chrome(trace, "--pid", "1", "-o", out, rc=2)
    if not p.stderr.startswith("gputrace chrome: --pid 1 matches nothing in "):
        raise AssertionError("unknown --pid: " + p.stderr)
    eq(os.path.exists(out), False, "nothing exported for an unknown pid")


def test_damaged_trace():
    _, trace = record([prog("threads"), "20000"])
    data = open(trace, "rb").read()
    cut = os.path.join(TMP, "cut.gtrace")
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    doc = export(cut, rc=3)  # what could be read, as valid JSON
    check_doc(doc)
    check_nesting(doc)
    eq(doc["metadata"].get("damaged"), True, "metadata says damaged")
    if not host_slices(doc):
        raise AssertionError("nothing exported from the readable part")


# ---------------------------------------------------------------- synthetic

DEVICE_SCRIPT = """
process ts=1000 phase=start ppid=1 text=./server --device
kernel_name ts=1001 kernel=0x10 text=_Z4gemmPfi
launch ts=10000 dur=2000 kernel=0x10 stream=0x5 corr=1 grid=8,1,1 block=32,1,1
launch ts=13000 dur=2000 kernel=0x10 stream=0x5 corr=2 grid=8,1,1 block=32,1,1
memcpy ts=16000 dur=3000 bytes=4096 dir=1 stream=0x5 corr=3 api=cudaMemcpyAsync flags=3
launch ts=20000 dur=1000 tid=101 kernel=0x10 stream=0x6 corr=1
device ts=14000 dur=5000 stream=0x5 kernel=0x10 corr=1 of_kind=launch sample=1
# overlaps the one before on its stream: goes to an overflow track
device ts=18000 dur=4000 stream=0x5 kernel=0x10 corr=2 of_kind=launch sample=1
device ts=22000 dur=1000 stream=0x5 bytes=4096 corr=3 of_kind=memcpy dir=1 sample=1 api=cudaMemcpyAsync
device ts=30000 dur=500 tid=101 stream=0x6 kernel=0x10 corr=1 of_kind=launch sample=1
# reported before its host call, and one whose host call never came
device ts=40000 dur=100 stream=0x5 kernel=0x10 corr=4 of_kind=launch sample=1
launch ts=35000 dur=1000 kernel=0x10 stream=0x5 corr=4
device ts=50000 dur=100 stream=0x5 kernel=0x10 corr=99 of_kind=launch sample=1
process ts=60000 phase=end
"""


def test_device_tracks_and_flows():
    trace = synth("device", DEVICE_SCRIPT)
    doc = export(trace)
    check_doc(doc)
    check_nesting(doc)
    names = meta(doc, "thread_name")
    device = device_slices(doc)
    eq([(e["name"], e["cat"], names[(100, e["tid"])], ns(e["ts"]), ns(e["dur"])) for e in device],
       [("gemm(float*, int)", "launch", "GPU 0 stream 0x5", 13000, 5000),
        ("gemm(float*, int)", "launch", "GPU 0 stream 0x5 (overlap 1)", 17000, 4000),
        ("memcpy HtoD", "memcpy", "GPU 0 stream 0x5", 21000, 1000),
        ("gemm(float*, int)", "launch", "GPU 0 stream 0x6", 29000, 500),
        ("gemm(float*, int)", "launch", "GPU 0 stream 0x5", 39000, 100),
        ("gemm(float*, int)", "launch", "GPU 0 stream 0x5", 49000, 100)],
       "device slices and tracks")
    sort = meta(doc, "thread_sort_index")
    host_sort = max(sort[(100, t)] for t in (100, 101))
    if min(sort[(100, e["tid"])] for e in device) <= host_sort:
        raise AssertionError("device tracks must sort after host threads: %r" % sort)
    eq(doc["metadata"]["overflow_slices"], 1, "one slice moved to the overflow track")
    # flows: s at the start of the host call, f at the start of the device
    # slice, same id, and the category of both slices (how DevTools binds)
    hosts = {(e["tid"], e["args"].get("corr")): e for e in host_slices(doc)}
    devs = {(e["args"]["host_tid"], e["args"]["corr"]): e for e in device}
    starts = {e["id"]: e for e in evs(doc, ph="s")}
    ends = {e["id"]: e for e in evs(doc, ph="f")}
    eq(sorted(starts) == sorted(ends) and len(starts) == 5, True, "5 arrows, ids paired")
    matched = set()
    for i, s in starts.items():
        f = ends[i]
        host = [h for h in hosts.values() if (h["tid"], h["ts"], h["cat"]) ==
                (s["tid"], s["ts"], s["cat"])]
        eq(len(host), 1, "arrow %d starts at one host call" % i)
        key = (s["tid"], host[0]["args"]["corr"])
        dev = devs[key]
        eq((f["tid"], f["ts"], f["cat"], f["name"]), (dev["tid"], dev["ts"], dev["cat"], s["name"]),
           "arrow %d ends at its device slice" % i)
        matched.add(key)
    eq(sorted(matched), [(100, 1), (100, 2), (100, 3), (100, 4), (101, 1)], "arrows by corr")
    eq(doc["metadata"]["flows"], 5, "flows in metadata")


GRAPH_SCRIPT = """
process ts=1000 phase=start ppid=1 text=graph
kernel_name ts=1001 kernel=0x10 text=_Z1av
kernel_name ts=1002 kernel=0x20 text=_Z1bv
graph ts=2000 dur=100 api=cudaStreamBeginCapture stream=0x5 capture=7
launch ts=3000 dur=100 kernel=0x10 stream=0x5 corr=7 flags=0x800
launch ts=4000 dur=100 kernel=0x20 stream=0x5 corr=7 flags=0x800
graph ts=5000 dur=100 api=cudaStreamEndCapture stream=0x5 capture=7 graph=0x900
graph ts=6000 dur=100 api=cudaGraphInstantiate graph=0x900 exec=0xe00
# the graph's device work starts the very ns its launch does (the clamp)
launch ts=10000 dur=500 api=cudaGraphLaunch kernel=0xe00 stream=0x5 corr=1 flags=0x20
device ts=10000 dur=2000 api=cudaGraphLaunch kernel=0xe00 stream=0x5 corr=1 of_kind=launch flags=0x20 sample=1
process ts=20000 phase=end
"""


def test_graph_span_at_its_call():
    """A graph launch's span that starts the ns its call does moves 1 ns for
    its arrow, and its first node with it: both nodes inside the span, on
    its track (the first used to fall onto a lane of its own:
    test_graphs.py test_chrome_graph_spans failed so, now and then)."""
    doc = export(synth("graph_at_call", GRAPH_SCRIPT))
    check_doc(doc)
    device = device_slices(doc)
    span = [e for e in device if e["name"] == "graph 0xe00"]
    eq(len(span), 1, "the graph's span")
    g = span[0]
    eq((ns(g["ts"]), ns(g["dur"])), (9001, 1999), "the span, 1 ns after its call")
    nodes = [(e["name"], e["tid"] == g["tid"], inside(e, g)) for e in device if e is not g]
    eq(nodes, [("a()", True, True), ("b()", True, True)], "its nodes: on its track, inside it")


TIES_SCRIPT = """
process ts=1000 phase=start ppid=1 text=ties
kernel_name ts=1001 kernel=0x10 text=_Z4stepv
# 1. a call starts in the same ns as its range; the range ends as the call ends
nvtx ts=2000 op=push text=outer
launch ts=2000 dur=0 kernel=0x10
launch ts=2000 dur=50 kernel=0x10
nvtx ts=2050 op=pop
# 2. two ranges pushed in the same ns around one call
nvtx ts=3000 op=push text=a
nvtx ts=3000 op=push text=b
sync ts=3000 dur=10
nvtx ts=3010 op=pop
nvtx ts=3010 op=pop
# 3. crossing stamps: a call starts before the previous one ended
sync ts=4000 dur=100
sync ts=4090 dur=100
# 4. ranges of two domains that cross
nvtx ts=5000 op=push domain=1 text=d1
nvtx ts=5010 op=push domain=2 text=d2
sync ts=5020 dur=10
nvtx ts=5050 op=pop domain=1
nvtx ts=5060 op=pop domain=2
# 5. start/end ranges that overlap
nvtx ts=6000 op=start range_id=1 text=r1
nvtx ts=6010 op=start range_id=2 text=r2
nvtx ts=6100 op=end range_id=1
nvtx ts=6200 op=end range_id=2
# 6. a failed call, memory, drops, a mark
alloc ts=7000 dur=10 ptr=0 bytes=1024 result=2 memory=1
alloc ts=7100 dur=10 ptr=0x1000 bytes=4096 memory=1
drop ts=7200 count=5 of_kind=launch
drop ts=7300 count=3 of_kind=memcpy
nvtx ts=7400 op=mark text=checkpoint
free ts=7500 dur=10 ptr=0x1000
# 7. a range still open when the trace ends
nvtx ts=8000 op=push text=unfinished
launch ts=8010 dur=100 kernel=0x10
# 8. stamped before the trace start (another thread): clamped to 0
sync ts=500 dur=10 tid=101
"""


def test_equal_and_crossing_stamps():
    doc = export(synth("ties", TIES_SCRIPT))
    check_doc(doc)
    check_nesting(doc)

    def slices(name, tid=100):
        return [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in evs(doc, ph="X", name=name)
                if e["tid"] == tid]

    # 1: the range first, its calls strictly after its start (1 ns later)
    eq(slices("outer"), [(1000, 1050)], "range around calls")
    eq(slices("step()")[:2], [(1001, 1001), (1001, 1050)], "calls moved 1 ns into the range")
    # 2: nested ranges from one instant: starts 1 ns apart, same end
    eq((slices("a"), slices("b")), ([(2000, 2010)], [(2001, 2010)]), "nested at one instant")
    # 3: the later call starts when the earlier one ended
    syncs = slices("cudaDeviceSynchronize")
    eq(syncs[1:3], [(3000, 3100), (3100, 3190)], "crossing calls made sequential")
    # 4: the range that would cross goes to the NVTX lane
    names = meta(doc, "thread_name")
    d1 = evs(doc, ph="X", name="d1")[0]
    eq((names[(100, d1["tid"])], slices("d2")), ("NVTX ranges", [(4010, 4060)]), "crossing domains")
    # 5: overlapping start/end ranges on two lanes
    r1, r2 = evs(doc, ph="X", name="r1")[0], evs(doc, ph="X", name="r2")[0]
    eq((names[(100, r1["tid"])], names[(100, r2["tid"])]), ("NVTX ranges", "NVTX ranges (2)"),
       "start/end lanes")
    eq((ns(r2["ts"]), ns(r2["dur"])), (5010, 190), "r2 time")
    # 6: failure, counters, drops, mark
    failed = host_slices(doc, cat="alloc")[0]
    eq((failed["args"]["result"], failed["args"]["error"]), (2, "cudaErrorMemoryAllocation"),
       "failed call args")
    err = evs(doc, ph="i", name="error: cudaErrorMemoryAllocation")
    eq([(e["tid"], ns(e["ts"]), e["s"]) for e in err], [(100, 6005, "t")], "error instant")
    eq(counter_values(doc, "device memory"), [4096, 0], "device memory counter")
    eq(counter_values(doc, "dropped records"), [5, 8], "drop counter")
    drops = evs(doc, ph="i", name="dropped records")
    eq([(e["s"], e["args"]["count"], e["args"]["of_kind"]) for e in drops],
       [("p", 5, "launch"), ("p", 3, "memcpy")], "drop instants")
    eq([(e["s"], ns(e["ts"])) for e in evs(doc, ph="i", name="checkpoint")], [("t", 6400)], "mark")
    # 7: shown up to the thread's last call, marked
    u = evs(doc, ph="X", name="unfinished")[0]
    eq((ns(u["ts"]), ns(u["dur"]), u["args"].get("unfinished")), (7000, 110, True), "unfinished")
    # 8: clamped
    eq(slices("cudaDeviceSynchronize", tid=101), [(0, 10)], "clamped to the trace start")
    m = doc["metadata"]
    eq((m["adjusted_slices"], m["clamped"] > 0, m["overflow_slices"]), (5, True, 1), "metadata")


# ---------------------------------------------------------------- generated

def test_generated_device_trace():
    trace = gen("gen_device", 60000, "--device", "--threads", "3")
    records = dump(trace)
    doc = export(trace)
    check_doc(doc)
    check_nesting(doc)
    check_against_dump(doc, records)
    devices = [r for r in records if r["kind"] == "device"]
    eq(len(device_slices(doc)), len(devices), "a slice per DEVICE record")
    eq(len(evs(doc, ph="s")), doc["metadata"]["flows"], "flow starts")
    eq(doc["metadata"]["flows"], len(devices), "every device slice has its arrow")
    eq(len(evs(doc, ph="f")), len(devices), "flow ends")


def peak_rss_kb(args):
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(args, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    eq(os.waitstatus_to_exitcode(status), 0, "%s status" % args)
    return usage.ru_maxrss


def test_memory_does_not_grow_with_events():
    small = gen("gen_small", 100000, "--device")
    large = gen("gen_large", 1000000, "--device")
    a = peak_rss_kb([GPUTRACE, "chrome", small, "-o", "-"])
    b = peak_rss_kb([GPUTRACE, "chrome", large, "-o", "-"])
    if b > a + 4096:
        raise AssertionError("peak RSS %d KB for 1M records vs %d KB for 100k" % (b, a))


def test_size_warning():
    trace = gen("gen_warn", 20000)
    p = chrome(trace, "-o", os.path.join(TMP, "w.json"), "--warn-mb", "1")
    for needle in ("holds 20000 records", "--from", "--pid", "Perfetto"):
        if needle not in p.stderr:
            raise AssertionError("up-front warning lacks %r: %s" % (needle, p.stderr))
    p = chrome(trace, "-o", os.path.join(TMP, "w.json"), "--warn-mb", "1", "--pid", "4242")
    if "has passed 1 MB of JSON" not in p.stderr or "--to" not in p.stderr:
        raise AssertionError("warning while writing: " + p.stderr)
    out = os.path.join(TMP, "w.json")
    wrote = lambda p: p.stderr.startswith("gputrace chrome: wrote %s (" % out) and \
        p.stderr.count("\n") == 1  # the closing line alone: no warning
    eq(wrote(chrome(trace, "-o", out)), True, "no warning under 800 MB")
    eq(wrote(chrome(trace, "-o", out, "--warn-mb", "0")), True, "--warn-mb 0")


if __name__ == "__main__":
    main([test_basic, test_threads, test_nvtx, test_forked_and_pid_filter, test_window,
          test_gzip_and_stdout, test_bad_input, test_damaged_trace,
          test_device_tracks_and_flows, test_graph_span_at_its_call,
          test_equal_and_crossing_stamps, test_generated_device_trace, test_memory_does_not_grow_with_events, test_size_warning])
