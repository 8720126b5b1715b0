"""The less common entry points the trace covers (tests/cuda/coverage.cu,
drv_coverage.c, abi12.c): CUDA arrays, cudaMalloc3D, copies to, from and
between arrays, 3D and 3D peer copies, 3D memsets, batch copies, prefetches,
IPC mappings and stream callbacks, and their driver twins.
- on the stand-in: every call recorded once, in order, with its exact bytes,
  direction and pinned flag, on both default streams (the _ptds/_ptsz twins);
  device times of the new copies carry their bytes;
- leaks and the peak count arrays; an unclosed IPC mapping is a leak but not
  part of the peak; the transfer table counts prefetches;
- against the real libcudart without a driver: every call recorded with 35,
  the program's output and status unchanged;
- the driver twins through the exported functions and cuGetProcAddress, an
  IPC mapping sized by cuMemGetAddressRange_v2;
- a CUDA 12 program calling the three names whose ABI changed in 13."""
import json
import os
import re
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
KiB, MiB = 1 << 10, 1 << 20

# (kind, api, bytes, dir) of coverage.cu's calls, legacy default stream. An
# IPC mapping is 0 bytes here: no driver is loaded to size it.
COVERAGE = [
    ("stream", "cudaStreamCreate", None, None),
    ("alloc", "cudaMallocHost", MiB, None),
    ("alloc", "cudaMallocArray", 65536, None),
    ("alloc", "cudaMallocArray", 65536, None),
    ("alloc", "cudaMalloc3DArray", 65536, None),
    ("alloc", "cudaMalloc3DArray", 12288, None),
    ("alloc", "cudaMallocMipmappedArray", 4 * (64 * 64 + 32 * 32 + 16 * 16 + 8 * 8), None),
    ("alloc", "cudaMalloc3D", 512 * 20 * 5, None),
    ("alloc", "cudaMalloc", 16384, None),
    ("memcpy", "cudaMemcpy2DToArray", 65536, "HtoD"),
    ("memcpy", "cudaMemcpy2DFromArray", 65536, "DtoH"),
    ("memcpy", "cudaMemcpy2DToArrayAsync", 16384, "HtoD"),
    ("memcpy", "cudaMemcpy2DFromArrayAsync", 16384, "DtoH"),
    ("memcpy", "cudaMemcpy2DArrayToArray", 65536, "DtoD"),
    ("memcpy", "cudaMemcpyToArray", 4096, "HtoD"),
    ("memcpy", "cudaMemcpyFromArray", 4096, "DtoH"),
    ("memcpy", "cudaMemcpyToArrayAsync", 2048, "HtoD"),
    ("memcpy", "cudaMemcpyFromArrayAsync", 2048, "DtoH"),
    ("memcpy", "cudaMemcpyArrayToArray", 8192, "DtoD"),
    ("memcpy", "cudaMemcpy3D", 65536, "HtoD"),
    ("memcpy", "cudaMemcpy3D", 65536, "DtoH"),
    ("memcpy", "cudaMemcpy3DAsync", 10000, "HtoD"),
    ("memcpy", "cudaMemcpy3DPeer", 10000, "peer"),
    ("memcpy", "cudaMemcpy3DPeerAsync", 10000, "peer"),
    ("memset", "cudaMemset3D", 10000, None),
    ("memset", "cudaMemset3DAsync", 1000, None),
    ("memcpy", "cudaMemcpyBatchAsync", 4096 + 8192 + 12288, "HtoD"),
    ("memcpy", "cudaMemcpy3DBatchAsync", 1024 + 1024, "HtoD"),
    ("alloc", "cudaMallocManaged", MiB, None),
    ("memcpy", "cudaMemPrefetchAsync", MiB, "HtoD"),
    ("memcpy", "cudaMemPrefetchAsync", 65536, "DtoH"),
    ("memcpy", "cudaMemPrefetchBatchAsync", 8192, "HtoD"),
    ("alloc", "cudaMalloc", 262144, None),
    ("alloc", "cudaIpcOpenMemHandle", 0, None),
    ("memcpy", "cudaMemcpy", 4096, "HtoD"),
    ("memcpy", "cudaMemcpy", 4096, "DtoH"),
    ("free", "cudaIpcCloseMemHandle", 0, None),
    ("alloc", "cudaIpcOpenMemHandle", 0, None),
    ("launch", "cudaStreamAddCallback", None, None),
    ("launch", "cudaStreamAddCallback", None, None),
    ("sync", "cudaStreamSynchronize", None, None),
    ("free", "cudaFreeArray", 65536, None),
    ("free", "cudaFreeArray", 65536, None),
    ("free", "cudaFreeArray", 12288, None),
    ("free", "cudaFreeMipmappedArray", 21760, None),
    ("free", "cudaFree", 51200, None),
    ("free", "cudaFree", 16384, None),
    ("free", "cudaFree", MiB, None),
    ("free", "cudaFree", 262144, None),
    ("free", "cudaFreeHost", MiB, None),
    ("stream", "cudaStreamDestroy", None, None),
]
# Copies whose host side is cudaMallocHost memory.
PINNED = {"cudaMemcpy2DToArrayAsync", "cudaMemcpy2DFromArrayAsync", "cudaMemcpyToArrayAsync",
          "cudaMemcpyFromArrayAsync", "cudaMemcpy3DAsync", "cudaMemcpyBatchAsync",
          "cudaMemcpy3DBatchAsync"}


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


def summary(events):
    return [(e["kind"], e["api"], e.get("bytes"), e.get("dir")) for e in calls(events)]


def check_coverage_trace(name, rename):
    p, out = record([prog(name)])
    eq(p.stdout, "coverage: 0 failures, 0 mismatches\n", name + " output")
    ev = dump(out)
    want = [(k, rename(a), b, d) for k, a, b, d in COVERAGE]
    eq(summary(ev), want, name + ": every call, in order, with its bytes and direction")
    eq([e for e in calls(ev) if e["result"] != 0], [], name + ": no call failed")
    pinned = {rename(a) for a in PINNED}
    for e in select(calls(ev), kind="memcpy"):
        eq(e["pinned"], e["api"] in pinned, name + ": pinned flag of " + e["api"])
    s = select(ev, api="cudaStreamCreate")[0]["handle"]
    for e in calls(ev):
        if e["kind"] in ("memcpy", "memset") and "Async" in e["api"]:
            eq(e["stream"], s, name + ": stream of " + e["api"])
    cb = select(ev, kind="launch")
    eq(len({e["kernel"] for e in cb}), 1, name + ": one callback function")
    if not cb[0]["kernel"].startswith("host function 0x"):
        raise AssertionError("callback recorded as %r" % cb[0]["kernel"])
    # device times of the copies and memsets carry the host record's bytes
    host = {e["corr"]: e for e in calls(ev) if e["kind"] in ("memcpy", "memset")}
    timed = [d for d in select(ev, kind="device") if d["of_kind"] in ("memcpy", "memset")]
    if not timed:
        raise AssertionError(name + ": no copy was timed on the device")
    for d in timed:
        eq(d["bytes"], host[d["corr"]]["bytes"], name + ": device bytes of " + host[d["corr"]]["api"])
    return out


def test_runtime_entry_points():
    global COVERAGE_TRACE
    COVERAGE_TRACE = check_coverage_trace("coverage", lambda a: a)


def test_runtime_entry_points_per_thread():
    check_coverage_trace("coverage_ptds", per_thread)


def test_leaks_peak_and_transfers():
    out = COVERAGE_TRACE
    p = run([GPUTRACE, "leaks", "--json", out], base_env())
    d = json.loads(p.stdout)
    got = sorted((l["memory"], l["bytes"], l["blocks"], l["stack"][0]["function"],
                  os.path.basename(l["stack"][0]["file"])) for l in d["leaks"])
    eq(got, [("device", 0, 1, "leak_ipc_mapping(cudaIpcMemHandle_st)", "coverage.cu"),
             ("device", 65536, 1, "leak_array(cudaChannelFormatDesc const*)", "coverage.cu")],
       "leaks: the array and the IPC mapping")
    eq(d["invalid_frees"], [], "no invalid free")
    # arrays 3 x 64 KiB + 12 KiB + 21760 B, cudaMalloc3D 50 KiB, 16 KiB and the
    # 256 KiB export: the peak; the (0-byte) mapping is not counted
    eq(d["peak"]["device_bytes"], 3 * 65536 + 12288 + 21760 + 51200 + 16384 + 262144,
       "peak device bytes")
    r = json.loads(run([GPUTRACE, "report", "--json", out], base_env(), check_rc=0).stdout)
    rows = {t["dir"]: (t["count"], t["bytes"]) for t in r["transfers"]}
    htod = [b for k, a, b, d in COVERAGE if d == "HtoD"]
    dtoh = [b for k, a, b, d in COVERAGE if d == "DtoH"]
    eq(rows["HtoD"], (len(htod), sum(htod)), "HtoD transfers (prefetches included)")
    eq(rows["DtoH"], (len(dtoh), sum(dtoh)), "DtoH transfers (prefetches included)")


def test_real_runtime_without_driver():
    env = base_env(standin=False)
    plain = run([prog("coverage")], env)
    if plain.returncode == 0:
        raise AssertionError("coverage ran on a device: %s" % plain.stdout)
    traced, out = record([prog("coverage")], standin=False, check_rc=plain.returncode)
    eq(traced.stdout, plain.stdout, "stdout unchanged")
    c = calls(dump(out))
    eq([(e["kind"], e["api"]) for e in c], [(k, a) for k, a, _, _ in COVERAGE],
       "every call recorded, in order")
    eq({e["result"] for e in c}, {35}, "each call's error")


# drv_coverage.c's calls (both builds): the IPC mapping is sized by the
# stand-in driver's cuMemGetAddressRange_v2.
DRIVER = [
    ("alloc", "cuMemAllocHost_v2", MiB, None, None),
    ("alloc", "cuMemAlloc_v2", MiB, None, None),
    ("alloc", "cuMemAlloc_v2", MiB, None, None),
    ("alloc", "cuArrayCreate_v2", 65536, None, None),
    ("alloc", "cuArray3DCreate_v2", 65536, None, None),
    ("alloc", "cuArray3DCreate_v2", 12288, None, None),
    ("alloc", "cuMipmappedArrayCreate", 21760, None, None),
    ("memcpy", "cuMemcpy2D_v2", 65536, "HtoD", False),
    ("memcpy", "cuMemcpy2D_v2_ptds", 65536, "DtoH", False),
    ("memcpy", "cuMemcpy2DUnaligned_v2", 16384, "DtoD", False),
    ("memcpy", "cuMemcpy2DAsync_v2", 16384, "HtoD", True),
    ("memcpy", "cuMemcpy2DAsync_v2_ptsz", 16384, "HtoD", True),
    ("memcpy", "cuMemcpy3D_v2", 65536, "HtoD", False),
    ("memcpy", "cuMemcpy3D_v2", 65536, "DtoH", False),
    ("memcpy", "cuMemcpy3DAsync_v2", 2048, "DtoD", False),
    ("alloc", "cuMemAllocManaged", MiB, None, None),
    ("memcpy", "cuMemPrefetchAsync_v2", MiB, "HtoD", False),
    ("memcpy", "cuMemPrefetchAsync_v2_ptsz", 65536, "DtoH", False),
    ("alloc", "cuIpcOpenMemHandle_v2", MiB, None, None),
    ("memcpy", "cuMemcpyHtoD_v2", 4096, "HtoD", False),
    ("memcpy", "cuMemcpyDtoH_v2", 4096, "DtoH", False),
    ("free", "cuIpcCloseMemHandle", MiB, None, None),
    ("alloc", "cuIpcOpenMemHandle_v2", MiB, None, None),
    ("launch", "cuLaunchHostFunc", None, None, None),
    ("launch", "cuLaunchHostFunc_ptsz", None, None, None),
    ("launch", "cuStreamAddCallback", None, None, None),
    ("free", "cuArrayDestroy", 65536, None, None),
    ("free", "cuArrayDestroy", 12288, None, None),
    ("free", "cuMipmappedArrayDestroy", 21760, None, None),
    ("free", "cuMemFree_v2", MiB, None, None),
    ("free", "cuMemFree_v2", MiB, None, None),
    ("free", "cuMemFree_v2", MiB, None, None),
    ("free", "cuMemFreeHost", MiB, None, None),
]


def test_driver_twins():
    for name in ("drv_coverage_link", "drv_coverage_proc"):
        plain = run([prog(name)], base_env())
        traced, out = record([prog(name)], out=os.path.join(TMP, name + ".gtrace"))
        eq((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
           name + ": same results traced")
        eq(plain.stdout, "drv_coverage: 0 failures, 0 mismatches\n", name + " output")
        ev = dump(out)
        eq([(e["kind"], e["api"], e.get("bytes"), e.get("dir"), e.get("pinned")) for e in calls(ev)],
           DRIVER, name + ": every call, in order, with its bytes, direction and pinned flag")
        eq([e for e in calls(ev) if e["result"] != 0], [], name + ": no call failed")
        d = json.loads(run([GPUTRACE, "leaks", "--json", out], base_env()).stdout)
        eq(sorted((l["bytes"], l["stack"][0]["function"]) for l in d["leaks"]),
           [(65536, "leak_array"), (MiB, "leak_ipc_mapping")], name + ": leaks")
        eq(d["peak"]["device_bytes"], 2 * MiB + 65536 + 65536 + 12288 + 21760,
           name + ": peak device bytes (the IPC mappings left out)")


def test_cuda12_abi():
    plain = run([prog("abi12")], base_env())
    traced, out = record([prog("abi12")])
    eq((traced.returncode, traced.stdout, traced.stderr),
       (plain.returncode, plain.stdout, plain.stderr), "same results traced")
    eq(plain.stdout, "abi12: 0 failures\n", "abi12 output")
    ev = dump(out)
    s = select(ev, api="cudaStreamCreate")[0]["handle"]
    got = [(e["api"], e["result"], e["bytes"], e["dir"], e["stream"])
           for e in select(ev, kind="memcpy") if e["api"] != "cudaMemcpy"]
    eq(got, [("cudaMemPrefetchAsync", 0, MiB, "HtoD", s),
             ("cudaMemPrefetchAsync", 0, 65536, "DtoH", s),
             ("cudaMemcpyBatchAsync", 0, 8192, "HtoD", s),
             ("cudaMemcpy3DBatchAsync", 0, 1024, "DtoD", s),
             ("cudaMemcpyBatchAsync", 1, 8192, "default", "0x0")],
       "CUDA 12 prefetches and batches: bytes, direction, stream")


main([test_runtime_entry_points, test_runtime_entry_points_per_thread,
      test_leaks_peak_and_transfers, test_real_runtime_without_driver, test_driver_twins,
      test_cuda12_abi])
