"""Capture ranges (`gputrace record --capture-range`, GPUTRACE_CAPTURE_RANGE):
only what runs between cudaProfilerStart and cudaProfilerStop, or inside
NVTX ranges of one name, is recorded; memory records, graph definitions and
names are kept whatever the range (preload/range.h)."""
import json
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


def test_bad_range():
    p = run([GPUTRACE, "record", "-q", "--capture-range", "nvtx:", "--", "true"], base_env())
    eq(p.returncode, 2, "status of a bad --capture-range")
    if "nvtx:NAME" not in p.stderr:
        raise AssertionError("the error does not say what is wanted: " + p.stderr)


main([test_profiler_range, test_nvtx_ranges, test_bad_range])
