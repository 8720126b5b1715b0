"""Capture ranges (`gputrace record --capture-range`, GPUTRACE_CAPTURE_RANGE):
only what runs between cudaProfilerStart and cudaProfilerStop, or inside
NVTX ranges of one name, is recorded; memory records, graph definitions and
names are kept whatever the range (preload/range.h)."""
import json
import re
import subprocess
from gtest import *


def ranged(program, rng, args=()):
    out = os.path.join(TMP, "%s_%s.gtrace" % (program, rng.replace(":", "_")))
    if os.path.lexists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--capture-range", rng, "--",
             prog(program)] + list(args), base_env(), check_rc=0)
    return p.stdout, dump(out)


def by_api(events):
    return by(calls(events), "api")


def test_profiler_range():
    """graph_decode: 3 `ranged` launches between cudaProfilerStart and Stop,
    one before and one after; the captured step and the built graph are
    definitions, kept; their launches (outside the range) are not."""
    want = run([prog("graph_decode")], base_env(), check_rc=0).stdout
    got, ev = ranged("graph_decode", "cudaProfilerApi")
    eq(got, want, "output under a capture range")
    launches = [e for e in calls(ev) if e["kind"] == "launch" and not e.get("captured")
                and not e.get("node")]
    eq([e["kernel"] for e in launches], ["ranged(float*, int)"] * 3, "launches in the range")
    apis = by_api(ev)
    eq((apis["cudaProfilerStart"], apis["cudaProfilerStop"], apis["cudaGraphLaunch"],
        apis["cudaStreamSynchronize"], apis["cudaMalloc"], apis["cudaFree"],
        apis["cudaStreamBeginCapture"], apis["cudaGraphAddKernelNode"]),
       (1, 1, 0, 0, 3, 3, 1, 1), "range markers, no graph launch or sync, memory and graphs kept")
    eq(sum(1 for e in ev if e["kind"] == "device" and e["api"] != "cudaGraphLaunch"
           and e.get("kernel") != "ranged(float*, int)"), 0, "device times outside the range")
    eq(sum(e["count"] for e in ev if e["kind"] == "drop"), 0, "nothing counted lost")
    rep = json.loads(subprocess.run([GPUTRACE, "leaks", "--json",
                                     os.path.join(TMP, "graph_decode_cudaProfilerApi.gtrace")],
                                    capture_output=True, text=True).stdout)
    eq((rep["leaks"], rep["invalid_free_count"], rep["totals"][0]["device"]["blocks"]),
       ([], 0, 0), "allocations and frees kept: nothing leaked, no invalid free")


def test_nvtx_ranges():
    """nvtx.cu: 5 request ranges, each with a nested decode range holding one
    launch; a warmup start/end range around a sync."""
    cases = {"nvtx:decode": (5, 0, 10), "nvtx:request": (10, 5, 20),
             "nvtx:warmup": (0, 1, 2), "nvtx:absent": (0, 0, 0)}
    for rng, (launches, syncs, nvtx) in cases.items():
        out, ev = ranged("nvtx", rng)
        eq(out, "nvtx: done\n", rng + " output")
        kinds = by(calls(ev), "kind")
        eq((kinds["launch"], kinds["sync"], kinds["nvtx"]), (launches, syncs, nvtx), rng)


def test_nvtx_range_per_thread():
    """server.cu, 3 workers: `nvtx:req:embed` keeps each worker's req:embed
    ranges whole (their count, launches and allocations as without the
    option) and nothing of the other request types its neighbours serve
    meanwhile: no req:chat or req:legacy range, whole or cut; every thread's
    pushes and pops balance; every call but memory and graph building is
    inside a req:embed range of its own thread."""
    args = ["--requests", "70"]
    want = run([prog("server")] + args, base_env(), check_rc=0).stdout
    embeds = int(re.search(r" embed (\d+) ", want).group(1))
    full = os.path.join(TMP, "server_full.gtrace")
    record([prog("server")] + args, out=full)
    out, ev = ranged("server", "nvtx:req:embed", args)
    eq(out, want, "output under a capture range")
    cut = os.path.join(TMP, "server_nvtx_req_embed.gtrace")
    rep = {}
    for name, path in (("full", full), ("cut", cut)):
        p = run([GPUTRACE, "report", "--json", path], base_env(), check_rc=0)
        rep[name] = {r["name"]: r for r in json.loads(p.stdout)["ranges"]}
    eq(sorted(rep["cut"]), ["req:embed"], "ranges under the capture range")
    keys = ("count", "warm_count", "launches", "allocs", "bytes")
    eq({k: rep["cut"]["req:embed"][k] for k in keys},
       {k: rep["full"]["req:embed"][k] for k in keys}, "req:embed as without the option")
    eq(rep["cut"]["req:embed"]["count"], embeds, "every req:embed")
    eq({k: rep["cut"]["req:embed"]["cold"][k] for k in ("launches", "allocs", "bytes")},
       {k: rep["full"]["req:embed"]["cold"][k] for k in ("launches", "allocs", "bytes")},
       "the cold req:embed as without the option")
    depth, outside, pushes = {}, 0, {}
    for e in calls(ev):
        tid = e["tid"]
        if e["kind"] == "nvtx" and e.get("op") == "push":
            depth[tid] = depth.get(tid, 0) + 1
            if depth[tid] == 1:
                pushes[e["message"]] = pushes.get(e["message"], 0) + 1
        elif e["kind"] == "nvtx" and e.get("op") == "pop":
            depth[tid] = depth.get(tid, 0) - 1
            if depth[tid] < 0:
                raise AssertionError("thread %d pops more than it pushed" % tid)
        elif e["kind"] not in ("alloc", "free", "graph") and not e.get("captured") \
                and not e.get("node") and depth.get(tid, 0) == 0:
            outside += 1
    eq(set(depth.values()), {0}, "every thread's pushes and pops balance")
    eq(pushes, {"req:embed": embeds}, "outermost ranges recorded")
    eq(outside, 0, "calls outside their thread's req:embed range")


def test_bad_range():
    p = run([GPUTRACE, "record", "-q", "--capture-range", "nvtx:", "--", "true"], base_env())
    eq(p.returncode, 2, "status of a bad --capture-range")
    if "nvtx:NAME" not in p.stderr:
        raise AssertionError("the error does not say what is wanted: " + p.stderr)


main([test_profiler_range, test_nvtx_ranges, test_nvtx_range_per_thread, test_bad_range])
