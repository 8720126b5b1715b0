"""Graph building and stream capture (preload/hooks_graph.c, preload/capture.c).
- tests/cuda/graph_api.cu against NVIDIA's real libcudart.so.13 with no
  driver: every call fails with cudaErrorInsufficientDriver; the shim records
  each one once, in order, with its API, its error and exactly the arguments
  it was given (nodes as the kinds of their work, flagged node, the graph as
  their stream), and changes nothing (stdout, exit status, errno); on both
  default streams (the _ptsz twins);
- tests/cuda/drv_graph.c against NVIDIA's stub libcuda (every call fails with
  CUDA_ERROR_STUB_LIBRARY), its functions found with dlsym and linked: the
  driver's twins, recorded the same way;
- graph_api on the stand-in runtime, once it exports the graph-building
  entry points: results as the program printed them, handles made recorded."""
import ctypes
import os
import re
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))

# graph_api.cu's traced calls: (kind, api, the label its result is printed
# under; None: cudaGetLastError's "launch").
GRAPH_API = [
    ("stream", "cudaStreamCreateWithFlags", "cudaStreamCreateWithFlags"),
    ("alloc", "cudaMalloc", "cudaMalloc"),
    ("launch", "cudaGraphAddKernelNode", "cudaGraphAddKernelNode"),
    ("launch", "cudaGraphKernelNodeSetParams", "cudaGraphKernelNodeSetParams"),
    ("launch", "cudaGraphAddHostNode", "cudaGraphAddHostNode"),
    ("memcpy", "cudaGraphAddMemcpyNode", "cudaGraphAddMemcpyNode"),
    ("memcpy", "cudaGraphAddMemcpyNode1D", "cudaGraphAddMemcpyNode1D"),
    ("memset", "cudaGraphAddMemsetNode", "cudaGraphAddMemsetNode"),
    ("graph", "cudaGraphAddChildGraphNode", "cudaGraphAddChildGraphNode"),
    ("graph", "cudaGraphAddEmptyNode", "cudaGraphAddEmptyNode"),
    ("alloc", "cudaGraphAddMemAllocNode", "cudaGraphAddMemAllocNode"),
    ("free", "cudaGraphAddMemFreeNode", "cudaGraphAddMemFreeNode"),
    ("graph", "cudaGraphInstantiate", "cudaGraphInstantiate"),
    ("graph", "cudaGraphInstantiateWithFlags", "cudaGraphInstantiateWithFlags"),
    ("graph", "cudaGraphInstantiateWithParams", "cudaGraphInstantiateWithParams"),
    ("graph", "cudaGraphExecUpdate", "cudaGraphExecUpdate"),
    ("graph", "cudaGraphClone", "cudaGraphClone"),
    ("launch", "cudaGraphExecKernelNodeSetParams", "cudaGraphExecKernelNodeSetParams"),
    ("graph", "cudaGraphUpload", "cudaGraphUpload"),
    ("graph", "cudaStreamBeginCapture", "cudaStreamBeginCapture"),
    ("launch", "__cudaLaunchKernel", None),
    ("graph", "cudaStreamEndCapture", "cudaStreamEndCapture"),
    ("graph", "cudaStreamBeginCaptureToGraph", "cudaStreamBeginCaptureToGraph"),
    ("launch", "__cudaLaunchKernel", None),
    ("graph", "cudaStreamEndCapture", "cudaStreamEndCapture to"),
    ("graph", "cudaProfilerStart", "cudaProfilerStart"),
    ("graph", "cudaProfilerStop", "cudaProfilerStop"),
    ("graph", "cudaGraphExecDestroy", "cudaGraphExecDestroy e1"),
    ("graph", "cudaGraphExecDestroy", "cudaGraphExecDestroy e2"),
    ("graph", "cudaGraphExecDestroy", "cudaGraphExecDestroy e3"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy cl"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy cg"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy tg"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy mg"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy child"),
    ("graph", "cudaGraphDestroy", "cudaGraphDestroy g"),
    ("sync", "cudaStreamSynchronize", "cudaStreamSynchronize"),
    ("free", "cudaFree", "cudaFree"),
    ("stream", "cudaStreamDestroy", "cudaStreamDestroy"),
]
GRAPH_KEYS = ("graph", "exec", "node", "stream", "capture", "arg", "mode")


def api_table():
    src = open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "include", "gputrace",
                            "apis.h")).read()
    body = src.split("#define GT_API_LIST(X)")[1].split("/* clang-format on */")[0]
    return re.findall(r"X\((\w+), (\w+), (\w+), (\w+), (\w+),", body)


def per_thread(name):
    """The name a --default-stream per-thread build calls instead."""
    table = api_table()
    base = [b for n, _, _, b, _ in table if n == name][0]
    twins = [n for n, _, f, b, v in table if b == base and v == "PT" and f == "RT"]
    return twins[0] if twins else name


def hx(v):
    return "0x%x" % v


def printed(p):
    """The program's results by label (in order) and the handles it used."""
    results = []
    for line in p.stdout.splitlines():
        m = re.match(r"(.+?) = (-?\d+) \(\w+\) errno=0$", line)
        if m:
            results.append((m.group(1), int(m.group(2))))
    handles = {m.group(1): int(m.group(2), 16)
               for m in re.finditer(r"^handle (\w+) (0x[0-9a-f]+)$", p.stderr, re.M)}
    return results, handles


def graph_fields(e, **want):
    """A GRAPH record's seven fields: those named, 0 for the others."""
    got = {k: e[k] for k in GRAPH_KEYS}
    exp = {k: (0 if k in ("capture", "mode") else "0x0") for k in GRAPH_KEYS}
    for k, v in want.items():
        exp[k] = v if k in ("capture", "mode") else hx(v)
    return got, exp


def check_graph_api(name, p, events, rename):
    results, h = printed(p)
    by_label = {}
    for label, value in results:
        by_label.setdefault(label, []).append(value)
    c = calls(events)
    want = [(k, rename(a)) for k, a, _ in GRAPH_API]
    eq([(e["kind"], e["api"]) for e in c], want, name + ": every call recorded once, in order")
    for e, (_, api, label) in zip(c, GRAPH_API):
        eq(e["result"], by_label[label or "launch"].pop(0), name + ": result of " + e["api"])
    ok = lambda e: e["result"] == 0
    out = lambda e, key: h[key] if ok(e) else 0  # what a successful call made
    rec = {}
    for e, (_, api, label) in zip(c, GRAPH_API):
        rec.setdefault(label or "launch", []).append(e)
    one = lambda label: rec[label][0]

    def node(e, **fields):
        fields.update(node=True, corr=0)
        eq({k: e.get(k) for k in fields}, fields, name + ": " + e["api"])
        if "captured" in e:
            raise AssertionError(name + ": a node flagged captured: %r" % e)

    # a kernel node's records name it by its handle's low 32 bits (the one
    # it made; none when it failed)
    e = one("cudaGraphAddKernelNode")
    node(e, kernel="k(float*)", grid=[3, 2, 1], block=[64, 2, 1], shared_mem=256,
         stream=hx(h["g"]), node_id=hx(h["kn"] & 0xffffffff) if ok(e) else None)
    # its parameters set: the new ones, in the graph (stream 0: the call
    # names no graph) or in an executable
    node(one("cudaGraphKernelNodeSetParams"), kernel="k(float*)", grid=[4, 1, 1],
         block=[64, 2, 1], shared_mem=256, stream="0x0", node_id=hx(h["kn"] & 0xffffffff))
    node(one("cudaGraphExecKernelNodeSetParams"), kernel="k(float*)", grid=[5, 1, 1],
         block=[64, 2, 1], shared_mem=256, stream=hx(h["e1"]), node_id=hx(h["kn"] & 0xffffffff))
    node(one("cudaGraphAddHostNode"), kernel="host function " + hx(h["host_fn"]),
         grid=[0, 0, 0], block=[0, 0, 0], shared_mem=0, stream=hx(h["g"]))
    node(one("cudaGraphAddMemcpyNode"), dir="HtoD", bytes=256 * 4 * 2, dst=hx(h["d"]),
         src=hx(h["host_buf"]), stream=hx(h["g"]), pinned=False)
    node(one("cudaGraphAddMemcpyNode1D"), dir="DtoH", bytes=3000,
         dst=hx(h["host_buf"] + 8192), src=hx(h["d"]), stream=hx(h["g"]), pinned=False)
    node(one("cudaGraphAddMemsetNode"), ptr=hx(h["d"]), bytes=4 * 100 * 3, value=7,
         stream=hx(h["g"]))
    e = one("cudaGraphAddMemAllocNode")
    eq({k: e.get(k) for k in ("memory", "ptr", "bytes", "stream", "node")},
       {"memory": "device", "ptr": hx(out(e, "gmem")), "bytes": 65536,
        "stream": hx(h["mg"]), "node": True}, name + ": the alloc node")
    e = one("cudaGraphAddMemFreeNode")
    eq({k: e.get(k) for k in ("memory", "ptr", "stream", "node")},
       {"memory": "device", "ptr": hx(h["gmem"]), "stream": hx(h["mg"]), "node": True},
       name + ": the free node")

    def graph(label, **fields):
        e = one(label)
        got, exp = graph_fields(e, **fields)
        eq(got, exp, name + ": " + label)
        return e

    e = one("cudaGraphAddChildGraphNode")
    if ok(e) != (e["node"] != "0x0"):
        raise AssertionError(name + ": child node handle %r (result %d)" % (e["node"], e["result"]))
    graph("cudaGraphAddChildGraphNode", graph=h["g"], arg=h["child"], node=int(e["node"], 16))
    e = one("cudaGraphAddEmptyNode")
    if ok(e) != (e["node"] != "0x0"):
        raise AssertionError(name + ": empty node handle %r" % e["node"])
    graph("cudaGraphAddEmptyNode", graph=h["g"], node=int(e["node"], 16))
    e = one("cudaGraphInstantiate")
    graph("cudaGraphInstantiate", graph=h["g"], exec=out(e, "e1"), mode=0)
    e = one("cudaGraphInstantiateWithFlags")
    graph("cudaGraphInstantiateWithFlags", graph=h["g"], exec=out(e, "e2"), mode=1)
    e = one("cudaGraphInstantiateWithParams")
    # the params' result_out as the call left it (printed after the call)
    result_out = int(re.search(r"^result_out = (\d+)$", p.stdout, re.M).group(1))
    graph("cudaGraphInstantiateWithParams", graph=h["g"], exec=out(e, "e3"), mode=2,
          stream=h["s"], arg=result_out)
    graph("cudaGraphExecUpdate", exec=h["e1"], graph=h["g"])
    e = one("cudaGraphClone")
    graph("cudaGraphClone", graph=h["g"], arg=out(e, "cl"))
    graph("cudaGraphUpload", exec=h["e1"], stream=h["s"])
    for x in ("e1", "e2", "e3"):
        graph("cudaGraphExecDestroy " + x, exec=h[x])
    for x in ("cl", "cg", "tg", "mg", "child", "g"):
        graph("cudaGraphDestroy " + x, graph=h[x])
    graph("cudaProfilerStart")
    graph("cudaProfilerStop")
    # captures: ids only when one began (the stand-in); the launches queued
    # into them flagged captured, with the capture's id as corr
    begin = one("cudaStreamBeginCapture")
    cap = begin["capture"]
    if ok(begin) != (cap != 0):
        raise AssertionError(name + ": capture id %d of %r" % (cap, begin))
    graph("cudaStreamBeginCapture", stream=h["s"], capture=cap, mode=0)
    e = one("cudaStreamEndCapture")
    graph("cudaStreamEndCapture", stream=h["s"], capture=cap, graph=out(e, "cg"))
    begin2 = one("cudaStreamBeginCaptureToGraph")
    cap2 = begin2["capture"]
    graph("cudaStreamBeginCaptureToGraph", stream=h["s"], capture=cap2, mode=1, graph=h["tg"])
    e = one("cudaStreamEndCapture to")
    graph("cudaStreamEndCapture to", stream=h["s"], capture=cap2, graph=h["tg"] if ok(e) else 0)
    for launch, grid, c_id in zip(rec["launch"], ([1, 1, 1], [2, 1, 1]), (cap, cap2)):
        eq((launch["kernel"], launch["grid"], launch["stream"]), ("k(float*)", grid, hx(h["s"])),
           name + ": a launch into the capture")
        eq(launch.get("captured", False), c_id != 0, name + ": captured flag")
        if c_id:
            eq(launch["corr"], c_id & 0xffffffff, name + ": a captured launch's corr")


def real_env(**extra):
    return base_env(standin=False, **extra)


def run_no_driver(name, rename):
    plain = run([prog(name)], real_env())
    r, _ = printed(plain)
    eq({v for _, v in r}, {35}, name + ": untraced, every call fails with 35")
    eq(plain.returncode, len(r), name + ": untraced exit status")
    traced, out = record([prog(name)], standin=False, check_rc=plain.returncode)
    eq(traced.stdout, plain.stdout, name + ": stdout")
    events = dump(out)
    eq({e["result"] for e in calls(events)}, {35}, name + ": each call's error")
    check_graph_api(name, traced, events, rename)


def test_program_uses_real_runtime():
    p = run(["ldd", prog("graph_api")], real_env(), check_rc=0)
    line = [l for l in p.stdout.splitlines() if "libcudart.so.13" in l]
    eq(len(line), 1, "libcudart.so.13 linked")
    if "/standin/" in line[0]:
        raise AssertionError("resolved to the stand-in: " + line[0])


def test_runtime_without_driver():
    run_no_driver("graph_api", lambda a: a)


def test_runtime_without_driver_per_thread():
    run_no_driver("graph_api_ptds", per_thread)


# drv_graph.c's calls: (api, fields of the record)
DRIVER = [
    ("cuStreamBeginCapture_v2", dict(stream=0x5100, mode=1)),
    ("cuStreamBeginCapture_v2_ptsz", dict(stream=0x2, mode=2)),
    ("cuStreamEndCapture", dict(stream=0x5100)),
    ("cuStreamEndCapture_ptsz", dict(stream=0x2)),
    ("cuGraphInstantiateWithFlags", dict(graph=0x6000, mode=8)),
    ("cuGraphInstantiateWithParams",
     dict(graph=0x6000, mode=2, stream=0x5100, node=0x7777, arg=2)),
    ("cuGraphInstantiateWithParams_ptsz", dict(graph=0x6000, mode=2, node=0x7777, arg=2)),
    ("cuGraphAddKernelNode_v2", dict(kernel="0xf00d")),
    ("cuGraphAddKernelNode_v2", dict(kernel="0xbeef")),
    ("cuGraphKernelNodeSetParams_v2", dict(kernel="0xbeef", stream="0x0", node_id="0x7001")),
    ("cuGraphExecKernelNodeSetParams_v2",
     dict(kernel="0xf00d", stream="0x8001", node_id="0x7002")),
    ("cuGraphExecUpdate_v2", dict(exec=0x8001, graph=0x6000)),
    ("cuStreamBeginCaptureToGraph", dict(stream=0x5100, graph=0x6000, mode=0)),
    ("cuStreamBeginCaptureToGraph_ptsz", dict(stream=0x2, graph=0x6000, mode=2)),
    ("cuGraphUpload", dict(exec=0x8001, stream=0x5100)),
    ("cuGraphUpload_ptsz", dict(exec=0x8001)),
    ("cuGraphExecDestroy", dict(exec=0x8001)),
    ("cuGraphDestroy", dict(graph=0x6000)),
]


def stub_libcuda():
    """NVIDIA's stub libcuda of the toolkit the build used."""
    root = os.path.dirname(os.path.dirname(cmake_cache("GPUTRACE_NVCC")))
    for sub in ("lib64/stubs", "targets/x86_64-linux/lib/stubs", "targets/sbsa-linux/lib/stubs"):
        path = os.path.join(root, sub, "libcuda.so")
        if os.path.exists(path):
            return path
    raise AssertionError("no stub libcuda.so under " + root)


def check_driver(name, args, env):
    plain = run([prog(name)] + args, real_env(**env))
    eq(plain.returncode, len(DRIVER), name + ": untraced, every call fails")
    traced, out = record([prog(name)] + args, standin=False, check_rc=plain.returncode, **env)
    eq(traced.stdout, plain.stdout, name + ": stdout")
    c = calls(dump(out))
    eq([e["api"] for e in c], [a for a, _ in DRIVER], name + ": every call recorded once")
    eq({e["result"] for e in c}, {34}, name + ": CUDA_ERROR_STUB_LIBRARY")
    for e, (api, want) in zip(c, DRIVER):
        if e["kind"] == "launch":
            want = dict(dict(grid=[7, 6, 5], block=[32, 4, 2], shared_mem=1024,
                             stream="0x6000", node=True, corr=0), **want)
            eq({k: e.get(k) for k in want}, want, name + ": " + api)
        else:
            eq(e["kind"], "graph", name + ": kind of " + api)
            got, exp = graph_fields(e, **want)
            eq(got, exp, name + ": " + api)


def test_driver_dlsym():
    check_driver("drv_graph_dlsym", [stub_libcuda()], {})


def test_driver_linked():
    if not os.path.exists(prog("drv_graph_link")):
        raise AssertionError("drv_graph_link not built")
    lib = os.path.join(TMP, "stubcuda")
    os.makedirs(lib, exist_ok=True)
    link = os.path.join(lib, "libcuda.so.1")
    if not os.path.lexists(link):
        os.symlink(stub_libcuda(), link)
    check_driver("drv_graph_link", [], {"LD_LIBRARY_PATH": lib})


STANDIN_NEEDS = [n for _, n, _ in GRAPH_API if n.startswith("cudaGraph")]


def test_standin_when_it_builds_graphs():
    """On the stand-in runtime, once it has the entry points (skipped, and
    said so, before)."""
    path = os.path.join(STANDIN, "libcudart.so.13")
    try:
        lib = ctypes.CDLL(path)
        missing = [n for n in STANDIN_NEEDS + ["cudaStreamBeginCaptureToGraph"]
                   if not hasattr(lib, n)]
    except OSError as e:
        missing = [str(e)]
    if missing:
        print("skip: the stand-in lacks %s" % ", ".join(missing[:4]))
        return
    plain = run([prog("graph_api")], base_env())
    traced, out = record([prog("graph_api")], check_rc=plain.returncode)
    eq(traced.stdout, plain.stdout, "stand-in: stdout")
    check_graph_api("stand-in", traced, dump(out), lambda a: a)


main([test_program_uses_real_runtime, test_runtime_without_driver,
      test_runtime_without_driver_per_thread, test_driver_dlsym, test_driver_linked,
      test_standin_when_it_builds_graphs])
