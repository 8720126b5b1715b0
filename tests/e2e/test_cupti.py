"""CUPTI device timing on the stand-in libcupti (standin/cupti/, docs/standin.md):
tests/cuda/cupti_server.cu (3 workers, 2 streams each, kernels, copies,
memsets and a graph per request) under GPUTRACE_GPU_TIMING=cupti, against
the stand-in runtime's own record of its timeline
(GPUTRACE_STANDIN_TIMELINE_LOG)."""
import json
import os
import re
from gtest import *

KNOBS = dict(GPUTRACE_STANDIN_KERNEL_BASE_NS=2000, GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD=100,
             GPUTRACE_STANDIN_COPY_LATENCY_NS=2000, GPUTRACE_STANDIN_MEMSET_GBPS=1000,
             GPUTRACE_STANDIN_PINNED_GBPS=24)
REQUESTS = 40
OPS_PER_REQUEST = 8  # 2 kernels, 2 copies, a memset, a graph of 2 kernels and a memset
KIND = {"kernel": "launch", "memcpy": "memcpy", "memset": "memset"}


def timeline(path):
    """The stand-in's log: (of_kind, start, dur, node) per operation."""
    ops = []
    with open(path) as f:
        for line in f:
            kind, start, end, _, node = line.split()
            ops.append((KIND[kind], int(start), int(end) - int(start), int(node) & 0xffffffff))
    return ops


def run_server(name, warnings=None, requests=REQUESTS, optional=None, **env):
    log = os.path.join(TMP, name + ".timeline")
    settings = dict(KNOBS, GPUTRACE_GPU_TIMING="cupti", GPUTRACE_GPU_TIMING_SAMPLE=1,
                    GPUTRACE_STANDIN_TIMELINE_LOG=log)
    settings.update(env)
    e = base_env(**settings)
    del e["GPUTRACE_QUIET"]
    out = os.path.join(TMP, name + ".gtrace")
    if os.path.exists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("cupti_server"), str(requests)], e,
            check_rc=0)
    eq(p.stdout, "cupti_server: 3 workers x %d requests, 0 failures\n" % requests,
       name + ": the program's output")
    got = [l for l in p.stderr.splitlines() if l.startswith("gputrace")]
    if optional:  # CUPTI's own drop count, when a takeover left it short of buffers
        got = [l for l in got if not re.match(optional, l)]
    eq(got, warnings or [], name + ": warnings")
    return timeline(log), dump(out)


def near(d, op):
    return abs(d["ts_ns"] - op[1]) <= 1000 and abs(d["dur_ns"] - op[2]) <= 1000


def match(ops, devs, what, every_op=True):
    """Each operation of the timeline has its own DEVICE record (every_op),
    or each record its own operation: same kind and graph node, start and
    duration within 1 us."""
    free = {}
    for o in ops:
        free.setdefault((o[0], o[3]), []).append(o)
    if every_op:
        free = {}
        for d in devs:
            free.setdefault((d["of_kind"], d.get("node", 0)), []).append(d)
    for x in (ops if every_op else devs):
        key = (x[0], x[3]) if every_op else (x["of_kind"], x.get("node", 0))
        cands = free.get(key, [])
        hit = next((i for i, c in enumerate(cands) if (near(c, x) if every_op else near(x, c))),
                   None)
        if hit is None:
            raise AssertionError("%s: nothing matches %r" % (what, x))
        cands.pop(hit)


def calls(ops):
    """Timed calls: each op outside graphs, and each graph launch (3 nodes)."""
    return sum(1 for o in ops if o[3] == 0) + sum(1 for o in ops if o[3] != 0) // 3


def test_every_op_exact():
    """Every kernel, copy, memset and graph node gets a DEVICE record with
    the timeline's start and duration (within 1 us); none lost."""
    ops, recs = run_server("exact")
    eq(len(ops), 3 * REQUESTS * OPS_PER_REQUEST, "operations on the timeline")
    devs = [r for r in recs if r["kind"] == "device"]
    eq(len(devs), len(ops), "DEVICE records")
    eq({d["source"] for d in devs}, {"cupti"}, "sources")
    eq([r for r in recs if r["kind"] == "drop" and r.get("of_kind") == "device"], [],
       "no DEVICE record lost")
    eq(len({d["node"] for d in devs if d.get("node")}), 3 * 3, "graph nodes by id")
    match(ops, devs, "exact")


def kernel_ns(grid, block):
    return 2000 + grid * block * 100 // 1000


def test_graph_nodes_by_id():
    """A graph whose kernel nodes run in the opposite order of their
    creation: CUPTI's graphNodeId names each node (learned at the first
    launch, whose records go by arrival order), so from the second launch
    on each kernel gets its own node's time. By arrival order alone every
    launch would swap them."""
    n = 20
    e = base_env(**dict(KNOBS, GPUTRACE_GPU_TIMING="cupti", GPUTRACE_GPU_TIMING_SAMPLE=1))
    out = os.path.join(TMP, "branches.gtrace")
    if os.path.exists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("cupti_server"), "branches",
             str(n)], e, check_rc=0)
    eq(p.stdout, "cupti_server branches: %d launches, 0 failures\n" % n, "stdout")
    rep = json.loads(run([GPUTRACE, "report", "--json", out], base_env(), check_rc=0).stdout)
    kernels = {k["kernel"]: k for k in rep["kernels"]}
    eq({k["gpu_source"] for k in kernels.values()}, {"cupti"}, "report: gpu_source")
    mlp, norm = kernel_ns(64, 256), kernel_ns(1, 32)
    want = {"mlp(float*)": (n - 1) * mlp + norm, "layer_norm(float*)": (n - 1) * norm + mlp}
    for k, total in want.items():
        got = kernels[k]["gpu_total_ns"]
        if abs(got - total) > 10 * n:
            raise AssertionError("%s: %d ns, want %d" % (k, got, total))


def drops(recs):
    return sum(r["count"] for r in recs if r["kind"] == "drop" and r.get("of_kind") == "device")


def sane_events(devs, ops):
    """Records timed with events after a fallback: within the run, no garbage."""
    lo = min(o[1] for o in ops) - 10**9
    hi = max(o[1] + o[2] for o in ops) + 10**9
    for d in devs:
        if not (lo <= d["ts_ns"] <= hi and 0 <= d["dur_ns"] < 10**9):
            raise AssertionError("garbage DEVICE record: %r" % d)


def fault(name, knobs, lost, warnings=None, requests=REQUESTS, optional=None):
    """A fault knob: the program's output unchanged, each CUPTI record one
    of the timeline's operations, exact; every lost one counted (exactly
    `lost` dropped DEVICE records, when not None); no garbage."""
    ops, recs = run_server(name, warnings, requests, optional, **knobs)
    devs = [r for r in recs if r["kind"] == "device"]
    cupti = [d for d in devs if d["source"] == "cupti"]
    events = [d for d in devs if d["source"] == "events"]
    match(ops, cupti, name, every_op=False)
    if lost is not None:
        eq(drops(recs), lost, name + ": lost, counted")
        eq(len(cupti) + drops(recs), len(ops), name + ": every op accounted")
    sane_events(events, ops)
    return ops, recs, cupti, events, devs


N = 3 * REQUESTS * OPS_PER_REQUEST


def test_zeroed_timestamps():
    """Every 3rd device record 0/0 ('not collected'): counted, never written."""
    fault("zero", {"GPUTRACE_STANDIN_CUPTI_ZERO_EVERY": 3}, N // 3)


def test_reversed_timestamps():
    fault("reverse", {"GPUTRACE_STANDIN_CUPTI_REVERSE_EVERY": 4}, N // 4)


def test_dropped_records():
    """CUPTI drops every 5th record (its buffers full): it says how many,
    gputrace says so once, and every timed call left without any record is
    a dropped DEVICE record (a graph launch with some nodes' records is
    not: its missing ones are in CUPTI's count)."""
    n = 3 * REQUESTS * OPS_PER_REQUEST
    warn = ("gputrace: CUPTI dropped %d activity records (its buffers were full); timed calls "
            "left without any are counted as untimed" % (n // 5))
    ops, recs, cupti, _, _ = fault("drop", {"GPUTRACE_STANDIN_CUPTI_DROP_EVERY": 5}, None, [warn])
    eq(len(cupti), n - n // 5, "drop: records written")
    if not 0 < drops(recs) <= n // 5:
        raise AssertionError("drop: %d counted" % drops(recs))


def test_buffer_order():
    """Device buffers before the external-correlation ones, or shuffled:
    the join waits; nothing is lost."""
    for order in ("device-first", "shuffle"):
        fault(order, {"GPUTRACE_STANDIN_CUPTI_ORDER": order}, 0)


def test_clock_step():
    """CLOCK_REALTIME steps by an hour mid-run: gputrace's own timestamp
    callback makes CUPTI's times immune."""
    fault("step", {"GPUTRACE_STANDIN_CUPTI_CLOCK_STEP_NS": 3600 * 10**9,
                   "GPUTRACE_STANDIN_CUPTI_CLOCK_STEP_AT": 200}, 0)


def test_preempted_clock_check():
    """Every 2nd cuptiGetTimestamp stalls 5 ms before reading, as a resolver
    preempted between its own clock reads on a loaded host: the clock check
    allows for the time its reads took, so CUPTI is kept and nothing is
    lost (it once read a 20 ms interval stretched by a preemption as a
    slope of 1.25 and fell back to events mid-run)."""
    fault("stall", {"GPUTRACE_STANDIN_CUPTI_STALL_EVERY": 2}, 0, requests=400)


def test_nsys_subscribed_first():
    inj = "/opt/nsight-systems/libToolsInjection64.so"
    warn = ("gputrace: CUPTI is not used (CUPTI is in use by the CUDA injection library %s "
            "(Nsight Systems or Compute)); timing device work with CUDA events" % inj)
    ops, recs = run_server("nsys", [warn], GPUTRACE_STANDIN_CUPTI_NSYS=1,
                           CUDA_INJECTION64_PATH=inj)
    devs = [r for r in recs if r["kind"] == "device"]
    eq({d["source"] for d in devs}, {"events"}, "nsys: events only")
    eq(len(devs) + drops(recs), calls(ops), "nsys: every timed call accounted")
    sane_events(devs, ops)


def test_late_kineto():
    """torch.profiler starts mid-run: its timestamp callback replaces ours,
    its buffer callbacks ours, then it disables and finalizes. gputrace
    stops CUPTI at the next flush, saying why, and times with events; what
    CUPTI gave before is exact, no record is garbage."""
    warn = ("gputrace: CUPTI stopped (CUPTI's timestamps stopped following gputrace's clock "
            "(another client registered a timestamp callback)); timing device work with "
            "CUDA events")
    ops, recs, cupti, events, devs = fault("kineto", {"GPUTRACE_STANDIN_CUPTI_KINETO_AT": 6000}, None,
                                     [warn], requests=800,
                                     optional=r"gputrace: CUPTI dropped \d+ activity records")
    if not cupti or not events:
        raise AssertionError("kineto: %d CUPTI, %d events records" % (len(cupti), len(events)))
    # Every timed call (host record) has a DEVICE record, CUPTI's or events',
    # or is counted dropped.
    timed = {(r["tid"], r["corr"]) for r in recs
             if r["kind"] in ("launch", "memcpy", "memset") and not r.get("captured")}
    with_device = {(d["tid"], d["corr"]) for d in devs}
    eq(len(with_device - timed), 0, "kineto: DEVICE records of untimed calls")
    eq(len(timed - with_device), drops(recs), "kineto: calls without a DEVICE record, counted")


def test_events_upper_bound():
    """Without CUPTI (default settings: events): a short kernel queued on a
    second stream while a 10 ms kernel holds the device waits behind it;
    its events span is flagged an upper bound (DEVICE flag, report text and
    JSON), the long kernel's is not."""
    n = 5
    out = os.path.join(TMP, "overlap.gtrace")
    if os.path.exists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("cupti_server"), "overlap", str(n)],
            base_env(**KNOBS), check_rc=0)
    eq(p.stdout, "cupti_server overlap: %d rounds, 0 failures\n" % n, "stdout")
    devs = [r for r in dump(out) if r["kind"] == "device"]
    flagged = {}
    for d in devs:
        flagged.setdefault(d["kernel"], []).append(bool(d.get("upper_bound")))
    eq(flagged, {"attention(float*)": [False] * n, "mlp(float*)": [True] * n},
       "upper-bound flags by kernel")
    rep = json.loads(run([GPUTRACE, "report", "--json", out], base_env(), check_rc=0).stdout)
    kernels = {k["kernel"]: k for k in rep["kernels"]}
    eq({k.get("gpu_source") for k in kernels.values()}, {None}, "report: no gpu_source (events)")
    eq((kernels["mlp(float*)"].get("gpu_upper_bound"),
        kernels["attention(float*)"].get("gpu_upper_bound")), (n, None), "JSON gpu_upper_bound")
    text = run([GPUTRACE, "report", out], base_env(), check_rc=0).stdout
    rows = {l.split()[0]: l for l in text.splitlines()
            if l.strip().startswith(("mlp(", "attention("))}
    if not rows["mlp(float*)"].endswith(" upper bound") or "upper bound" in rows[
            "attention(float*)"]:
        raise AssertionError("kernel rows: %r" % rows)
    if "  upper bound: timed with CUDA events while another stream's work ran" not in text:
        raise AssertionError("no legend:\n" + text)


main([test_every_op_exact, test_graph_nodes_by_id, test_zeroed_timestamps,
      test_reversed_timestamps, test_dropped_records, test_buffer_order, test_clock_step,
      test_preempted_clock_check,
      test_nsys_subscribed_first, test_late_kineto, test_events_upper_bound])
