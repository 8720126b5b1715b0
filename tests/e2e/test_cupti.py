"""CUPTI device timing on the stand-in libcupti (standin/cupti/, docs/standin.md):
tests/cuda/cupti_server.cu (3 workers, 2 streams each, kernels, copies,
memsets and a graph per request) under GPUTRACE_GPU_TIMING=cupti, against
the stand-in runtime's own record of its timeline
(GPUTRACE_STANDIN_TIMELINE_LOG)."""
import json
import os
from gtest import *

KNOBS = dict(GPUTRACE_STANDIN_KERNEL_BASE_NS=2000, GPUTRACE_STANDIN_KERNEL_PS_PER_THREAD=100,
             GPUTRACE_STANDIN_COPY_LATENCY_NS=2000, GPUTRACE_STANDIN_MEMSET_GBPS=1000,
             GPUTRACE_STANDIN_PINNED_GBPS=24)
REQUESTS = 40
OPS_PER_REQUEST = 8  # 2 kernels, 2 copies, a memset, a graph of 2 kernels and a memset
STDOUT = "cupti_server: 3 workers x %d requests, 0 failures\n" % REQUESTS
KIND = {"kernel": "launch", "memcpy": "memcpy", "memset": "memset"}


def timeline(path):
    """The stand-in's log: (of_kind, start, dur, node) per operation."""
    ops = []
    with open(path) as f:
        for line in f:
            kind, start, end, _, node = line.split()
            ops.append((KIND[kind], int(start), int(end) - int(start), int(node) & 0xffffffff))
    return ops


def run_server(name, warnings=None, **env):
    log = os.path.join(TMP, name + ".timeline")
    settings = dict(KNOBS, GPUTRACE_GPU_TIMING="cupti", GPUTRACE_GPU_TIMING_SAMPLE=1,
                    GPUTRACE_STANDIN_TIMELINE_LOG=log)
    settings.update(env)
    e = base_env(**settings)
    del e["GPUTRACE_QUIET"]
    out = os.path.join(TMP, name + ".gtrace")
    if os.path.exists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--", prog("cupti_server"), str(REQUESTS)], e,
            check_rc=0)
    eq(p.stdout, STDOUT, name + ": the program's output")
    got = [l for l in p.stderr.splitlines() if l.startswith("gputrace")]
    eq(got, warnings or [], name + ": warnings")
    return timeline(log), dump(out)


def match(ops, devs, what):
    """Each operation of the timeline has its own DEVICE record: same kind
    and graph node, start and duration within 1 us."""
    free = {}
    for d in devs:
        free.setdefault((d["of_kind"], d.get("node", 0)), []).append(d)
    for kind, start, dur, node in ops:
        cands = free.get((kind, node), [])
        best = None
        for i, d in enumerate(cands):
            if abs(d["ts_ns"] - start) <= 1000 and abs(d["dur_ns"] - dur) <= 1000:
                best = i
                break
        if best is None:
            raise AssertionError("%s: no DEVICE record for %s at %d (%d ns, node %d)" % (
                what, kind, start, dur, node))
        cands.pop(best)


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
    mlp, norm = kernel_ns(64, 256), kernel_ns(1, 32)
    want = {"mlp(float*)": (n - 1) * mlp + norm, "layer_norm(float*)": (n - 1) * norm + mlp}
    for k, total in want.items():
        got = kernels[k]["gpu_total_ns"]
        if abs(got - total) > 10 * n:
            raise AssertionError("%s: %d ns, want %d" % (k, got, total))


main([test_every_op_exact, test_graph_nodes_by_id])
