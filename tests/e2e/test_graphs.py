"""CUDA graphs on the stand-in runtime, which enforces CUDA's
stream-capture rules (docs/standin.md): tests/cuda/graph_decode.cu warms a
decode step up eagerly, captures it in global mode while timed work is
still running on another stream, replays it, builds a graph node by node
and brackets launches with cudaProfilerStart/Stop.

- Tracing never breaks the capture: the program's output is the same
  traced (default settings, events, every launch timed) and untraced. The
  device-timing thread polls its events during the capture; in global mode
  that is a forbidden call unless the thread is relaxed.
- Captured launches are nodes, not runs: report counts each kernel's runs
  exactly (eager + one per node per graph launch), the graphs section has
  both executables with their launches, kernels and GPU totals (within
  10 % of the stand-in's kernel model), and nothing reads as dropped or
  missing."""
import json
import subprocess
from gtest import *

REPLAYS = 40
BUILT_LAUNCHES = 5
WARM = 3  # eager warm-up steps
KNOBS = dict(GPUTRACE_STANDIN_KERNEL_BASE_NS=2000, GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD=100,
             GPUTRACE_STANDIN_COPY_LATENCY_NS=2000, GPUTRACE_STANDIN_DTOD_GBPS=1000,
             GPUTRACE_STANDIN_MEMSET_GBPS=1000)
GRID, BLOCK, N = 256, 256, 1 << 16


def kernel_ns(grid, block):
    return 2000 + grid * block * 100 // 1000


STEP = {"attn_block(float*, int)": (2, kernel_ns(GRID, BLOCK)),
        "mlp_up(float*, int)": (1, kernel_ns(GRID * 2, BLOCK)),
        "mlp_act(float*, int)": (1, kernel_ns(GRID, BLOCK)),
        "mlp_down(float*, int)": (1, kernel_ns(GRID * 4, BLOCK))}


def untraced():
    p = run([prog("graph_decode")], base_env(**KNOBS), check_rc=0)
    return p.stdout


def traced(name, **env):
    settings = dict(KNOBS)
    settings.update(env)
    out = os.path.join(TMP, "graphs_%s.gtrace" % name)
    p, out = record([prog("graph_decode")], out=out, **settings)
    return p.stdout, out


def report(path, *args):
    p = subprocess.run([GPUTRACE, "report", path, "--json"] + list(args),
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, "report status (%s)" % p.stderr)
    return json.loads(p.stdout)


def test_capture_survives_tracing():
    """Default settings, events and GPUTRACE_GPU_TIMING_SAMPLE=1: the capture
    succeeds and the output is the untraced one."""
    want = untraced()
    if "capture: ok" not in want or "replays: %d, host function ran %d" % (
            REPLAYS, WARM + REPLAYS) not in want:
        raise AssertionError("the untraced program did not run as planned:\n" + want)
    for name, env in (("default", {}), ("events", dict(GPUTRACE_GPU_TIMING="events")),
                      ("sample1", dict(GPUTRACE_GPU_TIMING_SAMPLE=1))):
        got, _ = traced(name, **env)
        eq(got, want, "output traced with %s settings" % name)


def test_report_counts_graph_runs():
    _, path = traced("counts", GPUTRACE_GPU_TIMING="events", GPUTRACE_GPU_TIMING_SAMPLE=1)
    rep = report(path)
    kern = {k["kernel"]: k for k in rep["kernels"]}
    if any(k.startswith("graph ") or k.startswith("0x") for k in kern):
        raise AssertionError("a graph counted as a kernel, or a kernel unnamed: %s" %
                             sorted(kern))
    for name, (per_step, ns) in STEP.items():
        runs = per_step * REPLAYS + (BUILT_LAUNCHES if name.startswith("mlp_up") else 0)
        k = kern[name]
        eager = WARM * per_step
        eq((k["launches"], k["graph_launches"]), (eager + runs, runs), name + " runs")
        eq(k["gpu_timed"], eager + runs, name + " timed runs")
        want = (eager + runs) * ns
        if abs(k["gpu_total_ns"] - want) > want * 0.10:
            raise AssertionError("%s: GPU total %d ns, the model says %d" %
                                 (name, k["gpu_total_ns"], want))
        if k.get("gpu_estimated") != runs:
            raise AssertionError("%s: %r estimated, expected %d" %
                                 (name, k.get("gpu_estimated"), runs))
    # ranged's first launch comes after the graphs: its DEVICE records must
    # not reach the trace before its name (a look-ahead for a graph launch
    # once drained them early: collector/clients.c name_first)
    eq((kern["ranged(float*, int)"]["launches"], kern["ranged(float*, int)"]["gpu_timed"],
        kern["busy(float*, int)"]["launches"]), (5, 5, 1), "eager launches, all timed")
    host = kern["host function on_host(void*)"]  # named by its symbol
    eq((host["launches"], host["graph_launches"]), (WARM + REPLAYS + BUILT_LAUNCHES,
                                                    REPLAYS + BUILT_LAUNCHES), "host function runs")
    text = subprocess.run([GPUTRACE, "report", path], capture_output=True, text=True).stdout
    for word in ("dropped", "missing"):
        if word in text:
            raise AssertionError("report says %r on a run that lost nothing:\n%s" % (word, text))


def test_graphs_section():
    _, path = traced("section", GPUTRACE_GPU_TIMING="events", GPUTRACE_GPU_TIMING_SAMPLE=1)
    graphs = report(path)["graphs"]
    eq(len(graphs), 2, "executable graphs")
    step, built = graphs
    eq((step["launches"], step["captured"], step["nodes"]), (REPLAYS, True, 7),
       "the captured step: launches, captured, nodes (5 kernels, a copy, a host function)")
    eq({k["name"]: k["count"] for k in step["kernels"]},
       {name: per_step for name, (per_step, _) in STEP.items()}, "the step's kernels")
    eq(step["timed"], REPLAYS, "timed launches")
    # measured: the graph launches' DEVICE records, every one timed
    spans = [e["dur_ns"] for e in dump(path) if e["kind"] == "device"
             and e["api"] == "cudaGraphLaunch" and e["kernel"] == "graph " + step["graph"]]
    eq(len(spans), REPLAYS, "DEVICE records of the step's launches")
    eq(step["gpu_total_ns"], sum(spans), "step GPU total")
    eq(step["gpu_p99_ns"], sorted(spans)[-1], "p99 of 40 launches (the 40th)")
    kernels = sum(c * ns for c, ns in STEP.values())
    if step["gpu_mean_ns"] < kernels:
        raise AssertionError("a launch took %d ns, less than its kernels' %d" %
                             (step["gpu_mean_ns"], kernels))
    for key in ("captured_at", "instantiated_at"):
        if "graph_decode.cu" not in step[key]:
            raise AssertionError("%s: %r" % (key, step[key]))
    eq((built["launches"], built["captured"], built["nodes"]), (BUILT_LAUNCHES, False, 3),
       "the built graph")
    eq(built["kernels"], [{"name": "mlp_up(float*, int)", "count": 1}], "its kernels")


def test_sampled_graph_totals():
    """At 1 in 4 each graph's first launch is timed with sample 4, and
    every 4th after it: a graph's GPU total is its timed launches' mean
    times its launches, as for a kernel; the weights (4 each) would count
    the built graph's 5 launches as 8."""
    _, path = traced("sampled", GPUTRACE_GPU_TIMING="events", GPUTRACE_GPU_TIMING_SAMPLE=4)
    events = dump(path)
    for g in report(path)["graphs"]:
        spans = [e["dur_ns"] for e in events if e["kind"] == "device"
                 and e["api"] == "cudaGraphLaunch" and e["kernel"] == "graph " + g["graph"]]
        eq(g["timed"], len(spans), "graph %s: timed launches" % g["graph"])
        if not 0 < len(spans) < g["launches"]:
            raise AssertionError("graph %s: %d of %d launches timed at 1 in 4" %
                                 (g["graph"], len(spans), g["launches"]))
        want = int("%.0f" % (sum(spans) / len(spans) * g["launches"]))
        eq(g["gpu_total_ns"], want, "graph %s (%d launches, %d timed): GPU total" %
           (g["graph"], g["launches"], len(spans)))


def test_graph_findings():
    """The step's host function runs on every replay; nothing else is wrong
    with how graph_decode uses graphs."""
    _, path = traced("findings")
    rules = {f["rule"]: f for f in report(path)["findings"]}
    eq(rules["graph_host_function"]["evidence"], {"graphs": 1, "launches": REPLAYS},
       "graph_host_function evidence")
    for rule in ("graph_reinstantiated", "graph_capture_while_serving",
                 "graph_launch_in_capture"):
        if rule in rules:
            raise AssertionError("unexpected finding %s: %s" % (rule, rules[rule]["message"]))


def test_graph_memory():
    """graph_memory.cu: graph allocations exist while a launched graph holds
    them, not at capture: none leaked, none an invalid free (one is freed
    by the application with cudaFree), the peak the 4 MiB allocation node."""
    want = run([prog("graph_memory")], base_env(**KNOBS), check_rc=0).stdout
    out = os.path.join(TMP, "graph_memory.gtrace")
    p, out = record([prog("graph_memory")], out=out, **KNOBS)
    eq(p.stdout, want, "output traced")
    leaks = json.loads(subprocess.run([GPUTRACE, "leaks", "--json", out], capture_output=True,
                                      text=True).stdout)
    eq((leaks["leaks"], leaks["invalid_free_count"]), ([], 0), "graph memory: leaks, invalid frees")
    peak = leaks["peak"]
    eq((peak["device_bytes"], [st["bytes"] for st in peak["stacks"]]), (4 << 20, [4 << 20]),
       "peak: the allocation node's 4 MiB while its graph ran")
    if "graph_memory.cu" not in peak["stacks"][0]["stack"][0]["file"]:
        raise AssertionError("peak held at %r" % peak["stacks"][0]["stack"][0])
    rep = report(out)
    eq([(g["launches"], g["nodes"], g["timed"]) for g in rep["graphs"]],
       [(3, 3, 3), (1, 2, 1), (2, 3, 2)], "graphs: launches, nodes (memory nodes too), timed")
    touch = {k["kernel"]: k for k in rep["kernels"]}["touch(float*, int)"]
    eq((touch["launches"], touch["graph_launches"], touch["gpu_timed"]), (7, 6, 7),
       "touch: 1 eager run, 6 in graphs, every one timed")
    eq(len(rep["kernels"]), 1, "no graph counted as a kernel")


def test_chrome_graph_spans():
    """chrome: each graph launch's span on its stream's device track holds its
    nodes' shares, in node order (the copy last)."""
    _, path = traced("chrome", GPUTRACE_GPU_TIMING_SAMPLE=1)
    out = os.path.join(TMP, "graphs.json")
    if os.path.lexists(out):
        os.unlink(out)
    run([GPUTRACE, "chrome", path, "-o", out], base_env(), check_rc=0)
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    spans = [e for e in ev if e.get("ph") == "X" and e["name"].startswith("graph 0x")
             and "host_tid" in e.get("args", {})]
    eq(len(spans), REPLAYS + BUILT_LAUNCHES, "graph spans on device tracks")
    g = spans[0]
    inside = [e["name"] for e in ev if e.get("ph") == "X" and e is not g and
              e["tid"] == g["tid"] and e["pid"] == g["pid"] and g["ts"] <= e["ts"] and
              e["ts"] + e["dur"] <= g["ts"] + g["dur"]]
    eq(inside, ["attn_block(float*, int)", "mlp_up(float*, int)", "attn_block(float*, int)",
                "mlp_act(float*, int)", "mlp_down(float*, int)", "memcpy DtoD"],
       "the first span's nodes")


def test_per_thread_stream_capture():
    """tests/cuda/ptds_capture.cu (--default-stream per-thread) captures a
    kernel and a host function on stream 0, the per-thread default stream,
    and replays the graph 4 times: the _ptsz host function is a node of the
    captured graph (its stream 0 is the per-thread stream, not the legacy
    one), so both rows count 4 graph runs and no eager call."""
    untraced_out = run([prog("ptds_capture")], base_env(), check_rc=0).stdout
    eq(untraced_out, "host function ran 4 times\n", "untraced output")
    p, path = record([prog("ptds_capture")], out=os.path.join(TMP, "graphs_ptds.gtrace"))
    eq(p.stdout, untraced_out, "traced output")
    r = report(path)
    eq([(g["launches"], g["captured"], g["nodes"]) for g in r["graphs"]], [(4, True, 2)],
       "the graph: launches, captured, nodes (a kernel and a host function)")
    eq(sorted((k["kernel"], k["launches"], k["graph_launches"]) for k in r["kernels"]),
       [("host function on_host(void*)", 4, 4), ("step(float*, int)", 4, 4)],
       "kernel rows: runs, of which in graph launches")


def test_same_kernel_two_shapes():
    """graph_shapes.cu runs one kernel at 64 and 1024 blocks, eagerly (3
    steps) and in each of 20 graph launches: each node's time is estimated
    from its own configuration's eager runs, so the kernel's GPU total is
    the model's within 10 % (with the kernel's shortest run for both nodes
    it would be 67 % short)."""
    replays, warm = 20, 3
    p, path = record([prog("graph_shapes"), str(replays)],
                     out=os.path.join(TMP, "graphs_shapes.gtrace"), GPUTRACE_GPU_TIMING="events",
                     GPUTRACE_GPU_TIMING_SAMPLE=1, **KNOBS)
    eq(p.stdout, "replays: %d\n" % replays, "traced output")
    k = {r["kernel"]: r for r in report(path)["kernels"]}["gemm_like(float*, int)"]
    eq((k["launches"], k["graph_launches"], k["gpu_timed"], k["gpu_estimated"]),
       (2 * (warm + replays), 2 * replays, 2 * (warm + replays), 2 * replays),
       "runs, graph runs, timed, estimated")
    want = (warm + replays) * (kernel_ns(64, 256) + kernel_ns(1024, 256))
    if abs(k["gpu_total_ns"] - want) > want * 0.10:
        raise AssertionError("GPU total %d ns, the model says %d" % (k["gpu_total_ns"], want))


EDITS_OUT = """graph node set: 3 launches before, 10 after
a node of another graph: 1 (cudaErrorInvalidValue)
executable node set: 4 launches before, 6 after, 2 of the graph
capture into a graph: the same graph, 2 nodes, 5 launches
captured node set: 1 node
executable updated: 2 launches before, 3 after, 1 after its node set
"""


def test_graph_edits():
    """graph_edits.cu changes graphs after making them: report counts each
    kernel as what ran (a graph node set before an instantiation, an
    executable's node set between its launches, a capture into a graph that
    had a node, an executable updated from another graph between its launches
    and then set by its first graph's node), each executable runs what its nodes were when it was made
    (or later set to), the stand-in runs the new kernel at its new grid, and
    the one edit of a node the trace never saw added is counted, not
    guessed."""
    want = run([prog("graph_edits")], base_env(**KNOBS), check_rc=0).stdout
    eq(want, EDITS_OUT, "untraced output")
    p, path = record([prog("graph_edits")], out=os.path.join(TMP, "graphs_edits.gtrace"),
                     GPUTRACE_GPU_TIMING="events", GPUTRACE_GPU_TIMING_SAMPLE=1, **KNOBS)
    eq(p.stdout, want, "traced output")
    rep = report(path)
    eq({k["kernel"]: (k["launches"], k["graph_launches"]) for k in rep["kernels"]},
       {"kA(float*)": (9, 9), "kB(float*)": (20, 20), "kC(float*)": (13, 13),
        "kD(float*)": (6, 6), "kE(float*)": (6, 6)}, "runs of each kernel, all in graphs")
    rows = [(g["launches"], g["nodes"], {k["name"]: k["count"] for k in g["kernels"]},
             g["node_edits"]) for g in rep["graphs"]]
    eq(rows, [(3, 2, {"kA(float*)": 1, "kB(float*)": 1}, 0),  # made before the graph's edit
              (10, 2, {"kC(float*)": 1, "kB(float*)": 1}, 0),  # after it
              (10, 1, {"kD(float*)": 1}, 1),  # set between its launches
              (2, 1, {"kA(float*)": 1}, 0),  # its graph, instantiated later, unchanged
              (5, 2, {"kE(float*)": 1, "kB(float*)": 1}, 0),  # captured into a graph
              (0, 1, {"kF(float*)": 1}, 0),  # its captured node set: not followed
              (6, 1, {"kE(float*)": 1}, 1)],  # updated, then set
       "graphs: launches, nodes, kernels, node edits")
    eq(rep["graph_edits_not_followed"], 1, "edits not followed")
    events = dump(path)
    added = {}  # kernel -> node ids of its nodes added, in order
    for e in select(events, api="cudaGraphAddKernelNode"):
        added.setdefault(e["kernel"], []).append(e["node_id"])
    edits = [(e["api"], e["kernel"], e["grid"][0], e["stream"] != "0x0", e.get("node_id"),
              e["result"]) for e in events
             if e["api"] in ("cudaGraphKernelNodeSetParams", "cudaGraphExecKernelNodeSetParams")]
    captured = edits[-2][4]
    eq(edits, [("cudaGraphKernelNodeSetParams", "kD(float*)", 8, False, added["kA(float*)"][0], 0),
               ("cudaGraphKernelNodeSetParams", "kC(float*)", 16, False, added["kA(float*)"][0], 0),
               ("cudaGraphExecKernelNodeSetParams", "kD(float*)", 4096, True,
                added["kA(float*)"][1], 0),
               ("cudaGraphExecKernelNodeSetParams", "kD(float*)", 4096, True,
                added["kB(float*)"][0], 1),
               ("cudaGraphExecKernelNodeSetParams", "kA(float*)", 4, True, captured, 0),
               ("cudaGraphExecKernelNodeSetParams", "kE(float*)", 4, True, added["kB(float*)"][1],
                0)],
       "edit records: api, kernel, grid, on an executable, node, result")
    if captured in [n for ids in added.values() for n in ids] or not captured:
        raise AssertionError("the captured node's id %r" % captured)
    # the stand-in runs what was set: the set executable's spans, before and
    # after, are its kernel's at 4 and then 4096 blocks (2.0 and 28.2 us; a
    # launch's span is never shorter than its kernel, and the host's delays
    # before it, up to 10 us allowed here, can only lengthen it)
    x = rep["graphs"][2]["graph"]
    spans = [e["dur_ns"] for e in select(events, kind="device", api="cudaGraphLaunch",
                                         kernel="graph " + x)]
    eq(len(spans), 10, "DEVICE records of the set executable's launches")
    got = (min(spans[:4]), min(spans[4:]))
    want_ns = (kernel_ns(4, 64), kernel_ns(4096, 64))
    if not all(w - 2 <= g < w + 10000 for g, w in zip(got, want_ns)):
        raise AssertionError("spans before and after the edit %r, the model says %r" %
                             (got, want_ns))


DESTROY_OUT = """a capture open on another stream: 1000 launches, %d queries; ended: 0
a capture ended by cudaStreamDestroy: 1000 launches, 0 queries
the next stream has the destroyed one's handle
ended from another thread: 908 (cudaErrorStreamCaptureWrongThread)
a stream destroyed unseen, its handle reused: 1000 launches after, 0 queries
a capture open at cudaDeviceReset: 1000 launches after, 0 queries
done
"""


def test_destroyed_capture():
    """capture_destroy.cu, with tests/cuda/capinfo_count.so counting the
    shim's capture queries: launches ask whether their stream captures
    while a capture is open (1000 of 1000) and not once it ended, also when
    it was ended by destroying its stream (before the fix the shim kept it
    open: every later launch took the general form and asked). The stream
    made next has the destroyed one's handle: its capture is its own (its
    EndCapture names its BeginCapture's id; the destroyed capture's kernel
    never ran). An EndCapture from the wrong thread fails and the capture
    goes on: the launch into it after is a node, not a run. A capturing
    stream destroyed where no hook saw it: the next capture on its handle
    replaces it (and ends, so launches stop asking). A capture open at a
    cudaDeviceReset ends with it."""
    counter = os.path.join(PROGS, "capinfo_count.so")
    plain = run([prog("capture_destroy")], base_env(LD_PRELOAD=counter), check_rc=0)
    eq(plain.stdout, DESTROY_OUT % 0, "untraced output (no queries)")
    # device timing off: its resolver makes a stream of its own at a time of
    # its choosing, which could take the destroyed handle the program's next
    # stream is to have (the launches take the general form all the same)
    p, path = record(["env", "LD_PRELOAD=%s:%s" % (SHIM, counter), prog("capture_destroy")],
                     out=os.path.join(TMP, "graphs_destroy.gtrace"), GPUTRACE_GPU_TIMING="off")
    eq(p.stdout, DESTROY_OUT % 1000, "traced output: queries only while a capture is open")
    rep = report(path)
    eq({k["kernel"]: (k["launches"], k["graph_launches"]) for k in rep["kernels"]},
       {"busy(float*)": (5000, 0), "replayed(float*)": (3, 3), "late(float*)": (2, 2),
        "again(float*)": (1, 1)},
       "kernels: runs, of which in graphs")
    eq([(g["launches"], g["captured"], {k["name"]: k["count"] for k in g["kernels"]})
        for g in rep["graphs"]],
       [(3, True, {"replayed(float*)": 1}), (2, True, {"late(float*)": 1}),
        (1, True, {"again(float*)": 1})], "graphs")
    events = dump(path)
    caps = [e for e in events if e["kind"] == "graph" and "Capture" in e["api"]]
    main_tid = caps[0]["tid"]  # the other thread's EndCapture may come first in the file
    wrong = [(e["api"], e["stream"], e["capture"], e["result"]) for e in caps
             if e["tid"] != main_tid]
    caps = [(e["api"], e["stream"], e["capture"], e["result"]) for e in caps
            if e["tid"] == main_tid]
    begin, end = "cudaStreamBeginCapture", "cudaStreamEndCapture"
    eq([c[0] for c in caps], [begin, end, begin, begin, end, begin, end, begin, begin, end, begin],
       "the main thread's capture calls (the destroyed streams' and the reset's never ended)")
    (_, c, c1, _), _, (_, d, d1, _), (_, r, r1, _), (_, r_end, r2, _), (_, w, w1, _), \
        (_, w_end, w2, w_rc), (_, u, u1, _), (_, u2, u21, _), (_, u2_end, u22, _), _ = caps
    eq((u == u2, u2_end, u22, u1 != u21), (True, u2, u21, True),
       "a handle destroyed unseen: the new capture's id at its end")
    s = select(events, api="cudaStreamCreateWithFlags")[0]["handle"]
    eq([e["handle"] for e in select(events, api="cudaStreamDestroy")][:6], [d, u2, w, r, c, s],
       "the destroys the shim saw (not the unseen one)")
    eq((d == r, r_end, r2, len({c1, d1, r1, w1}), 0 in (c1, d1, r1, w1)), (True, r, r1, 4, False),
       "the reused handle's capture: its own id, ended by its EndCapture")
    eq((wrong, w_end, w2, w_rc), ([(end, w, 0, 908)], w, w1, 0),
       "the wrong thread's EndCapture ends nothing (capture 0); the capture's own does")
    eq([e.get("captured", False) for e in select(events, kind="launch")
        if e["kernel"] != "busy(float*)" and e["api"] == "__cudaLaunchKernel"],
       [True, True, True, True, True], "lost, replayed, late, lost, again were captured")


main([test_capture_survives_tracing, test_same_kernel_two_shapes, test_per_thread_stream_capture, test_chrome_graph_spans, test_report_counts_graph_runs, test_graphs_section,
      test_sampled_graph_totals, test_graph_findings, test_graph_memory, test_graph_edits,
      test_destroyed_capture])
