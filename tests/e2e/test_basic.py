"""Exact counts of every kind, sizes, directions, pinned/pageable and kernel
names for tests/cuda/basic.cu on the stand-in runtime; the same program
built with --default-stream per-thread goes through the _ptds/_ptsz entry
points."""
from gtest import *

MiB = 1 << 20


def check_basic(events, suffix_sync="", suffix_async=""):
    eq(count(events, kind="process"), 2, "process start+end records")
    eq(by(events, "kind", pid=events[0]["pid"])["alloc"], 5, "allocations")
    allocs = select(events, kind="alloc")
    eq(sorted((e["api"], e["bytes"], e["memory"]) for e in allocs),
       sorted([("cudaMalloc", MiB, "device"), ("cudaMalloc", MiB, "device"),
               ("cudaMalloc", 4096, "device"),
               # C++'s typed cudaMallocHost(T**, size) template calls cudaHostAlloc
               ("cudaHostAlloc", MiB, "pinned_host"),
               ("cudaMallocManaged", 65536, "managed")]), "allocation apis/bytes/memory")
    frees = select(events, kind="free")
    eq(len(frees), 5, "frees")
    # dump matches each free to its allocation: bytes and memory kind
    eq(sorted((e["api"], e["bytes"], e["memory"]) for e in frees),
       sorted([("cudaFree", MiB, "device"), ("cudaFree", MiB, "device"),
               ("cudaFree", 4096, "device"), ("cudaFreeHost", MiB, "pinned_host"),
               ("cudaFree", 65536, "managed")]), "frees matched to allocations")
    copies = select(events, kind="memcpy")
    eq([(e["api"], e["bytes"], e["dir"], e["pinned"]) for e in copies],
       [("cudaMemcpy" + suffix_sync, MiB, "HtoD", False),
        ("cudaMemcpy" + suffix_sync, MiB, "HtoD", True),
        ("cudaMemcpyAsync" + suffix_async, MiB, "DtoH", True),
        ("cudaMemcpy" + suffix_sync, MiB, "DtoH", False),
        ("cudaMemcpy" + suffix_sync, 4096, "DtoD", False),
        ("cudaMemcpy" + suffix_sync, 1024, "HtoD", False)], "copies in order")
    eq([(e["api"], e["bytes"]) for e in select(events, kind="memset")],
       [("cudaMemset" + suffix_sync, MiB), ("cudaMemsetAsync" + suffix_async, 4096)], "memsets")
    launches = select(events, kind="launch")
    eq(len(launches), 15, "launches")
    eq(by(launches, "kernel"), {"infer(float*, float*, int)": 10,
                                "void scale<float>(float*, float, int)": 5}, "kernel names")
    eq(by(launches, "api"), {"__cudaLaunchKernel" + suffix_async: 15}, "launch entry point")
    infer = select(launches, kernel="infer(float*, float*, int)")[0]
    eq((infer["grid"], infer["block"]), ([1024, 1, 1], [256, 1, 1]), "infer dims")
    scale = select(launches, kernel="void scale<float>(float*, float, int)")[0]
    eq((scale["grid"], scale["block"]), ([64, 2, 1], [128, 1, 1]), "scale dims")
    stream = select(events, api="cudaStreamCreate")[0]["handle"]
    eq({e["stream"] for e in select(launches, kernel="infer(float*, float*, int)")}, {stream},
       "infer launched on the created stream")
    eq(by(events, "api", kind="sync"),
       {"cudaDeviceSynchronize": 2, "cudaStreamSynchronize" + suffix_async: 1,
        "cudaEventSynchronize": 1}, "synchronizations")
    eq(by(events, "api", kind="event"),
       {"cudaEventCreate": 2, "cudaEventRecord" + suffix_async: 2}, "event calls")
    eq(by(events, "api", kind="stream"), {"cudaStreamCreate": 1, "cudaStreamDestroy": 1},
       "stream calls")
    eq([e for e in events if e.get("result", 0) != 0], [], "no call failed")
    eq(ring_drops(events) + count(events, kind="lost"), 0, "nothing dropped")
    pid = events[0]["pid"]
    eq({e["pid"] for e in events if e["kind"] not in ("metric", "note")}, {pid}, "one process")
    ts = [e["ts_ns"] for e in calls(events)]
    eq(ts, sorted(ts), "one thread's records are in time order")


def test_basic():
    p, out = record([prog("basic")])
    eq(p.stdout, "basic: 0 failures\n", "program output")
    check_basic(dump(out))


def test_basic_per_thread_default_stream():
    p, out = record([prog("basic_ptds")])
    eq(p.stdout, "basic: 0 failures\n", "program output")
    check_basic(dump(out), "_ptds", "_ptsz")


def test_same_output_untraced():
    plain = run([prog("basic")], base_env(), check_rc=0)
    traced, _ = record([prog("basic")])
    eq(traced.stdout, plain.stdout, "stdout with and without tracing")


main([test_basic, test_basic_per_thread_default_stream, test_same_output_untraced])
