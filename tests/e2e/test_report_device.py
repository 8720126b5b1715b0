"""`gputrace report` on synthesized traces, where every timestamp is chosen:
device timing (DEVICE records, exact and sampled 1 in N), verdicts the
stand-in cannot produce (launch-bound, cpu-bound), GPU idle gaps, memory
pressure against --device-memory, API errors, drops and --pid. The traces
are written here in the documented file format (docs/trace-format.md):
zstd frames made of raw blocks, which any zstd decoder reads."""
import json
import os
import re
import struct
import subprocess
from gtest import *

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(SRC, "include", "gputrace", "apis.h")) as f:
    LIST = f.read().split("#define GT_API_LIST(X)")[1].split("/* clang-format on */")[0]
    API = {name: i for i, name in enumerate(re.findall(r"X\((\w+),", LIST))}
KIND = {k: i for i, k in enumerate(["none", "alloc", "free", "memcpy", "memset", "launch", "sync",
                                    "stream", "event", "nvtx", "process", "kernel_name", "drop",
                                    "lost", "device"])}
F_PINNED, F_ASYNC, F_PAGEABLE = 0x1, 0x2, 0x40
HTOD, DTOH = 1, 2
MiB = 1 << 20
T0 = 10 ** 12


class Trace:
    """Records in file order; helpers take times in ns from T0."""

    def __init__(self):
        self.recs = []

    def rec(self, kind, api, ts, dur, payload, pid=100, tid=100, result=0, flags=0, text=b"",
            stack=0):
        payload = payload.ljust(56, b"\0")
        nslots = 1 + (len(text) + 87) // 88
        head = struct.pack("<QQIIHBBiII", T0 + ts, dur, pid, tid, API[api], KIND[kind],
                           nslots, result, flags, stack)
        slots = b"".join(struct.pack("<II88s", 0x54585447, i + 1, text[i * 88:(i + 1) * 88])
                         for i in range(nslots - 1))
        self.recs.append(head + payload + slots)

    def process(self, ts, pid=100, cmd=b"synthetic"):
        self.rec("process", "gputrace_process", ts, 0,
                 struct.pack("<IIQQQQII", 1, 1, 0, 0, 0, 0, len(cmd), 0), pid=pid, tid=pid,
                 text=cmd)

    def kname(self, stub, mangled, pid=100):
        self.rec("kernel_name", "gputrace_kernel_name", 0, 0,
                 struct.pack("<QII", stub, len(mangled), 0), pid=pid, tid=pid, text=mangled)

    def launch(self, ts, dur, stub, corr=0, stream=0, **kw):
        self.rec("launch", "__cudaLaunchKernel", ts, dur,
                 struct.pack("<Q3I3IQQII", stub, 1, 1, 1, 32, 1, 1, 0, stream, corr, 0), **kw)

    def copy(self, ts, dur, nbytes, api="cudaMemcpyAsync", direction=HTOD, flags=0, corr=0, **kw):
        self.rec("memcpy", api, ts, dur,
                 struct.pack("<QQQQIIBB2xiiI", 0x7000, 0x8000, nbytes, 0, 0, 0, direction,
                             direction, -1, -1, corr), flags=flags, **kw)

    def sync(self, ts, dur, api="cudaDeviceSynchronize", handle=0, **kw):
        self.rec("sync", api, ts, dur, struct.pack("<QQIi", handle, 0, 0, 0), **kw)

    def alloc(self, ts, dur, ptr, nbytes, api="cudaMalloc", **kw):
        self.rec("alloc", api, ts, dur, struct.pack("<QQQQQIB3x", ptr, nbytes, 0, 0, 0, 0, 1), **kw)

    def free(self, ts, dur, ptr, **kw):
        self.rec("free", "cudaFree", ts, dur, struct.pack("<QQQQQIB3x", ptr, 0, 0, 0, 0, 0, 1), **kw)

    def nvtx(self, ts, op, msg=b"", **kw):
        api = "nvtxRangePushA" if op == 1 else "nvtxRangePop"
        self.rec("nvtx", api, ts, 0, struct.pack("<QQIIiI", 0, 0, op, 0, 0, len(msg)), text=msg,
                 **kw)

    def device(self, start, dur, of_kind, stub=0, nbytes=0, direction=0, corr=0, sample=1,
               api="__cudaLaunchKernel", **kw):
        self.rec("device", api, start, dur,
                 struct.pack("<QQQIIBBB5xiI", 0, stub, nbytes, corr, sample, KIND[of_kind],
                             direction, 1, 0, 0), **kw)

    def drop(self, ts, count, of_kind="launch", **kw):
        self.rec("drop", "gputrace_drop", ts, 0, struct.pack("<QII", count, KIND[of_kind], 0),
                 **kw)

    def write(self, name):
        path = os.path.join(TMP, name + ".gtrace")
        raw = b"".join(self.recs)
        # one zstd frame of raw blocks: magic, single-segment header with the
        # 8-byte content size, no checksum; blocks of at most 128 KiB
        frame = struct.pack("<IBQ", 0xFD2FB528, 0xE0, len(raw))
        for off in range(0, len(raw), 1 << 17):
            part = raw[off:off + (1 << 17)]
            last = off + (1 << 17) >= len(raw)
            frame += struct.pack("<I", (len(part) << 3) | last)[:3] + part
        head = struct.pack("<IIQIII", 0x4b434847, 32, 0, len(self.recs), len(raw) // 96,
                           len(frame))
        check = 2166136261
        for byte in head:
            check = ((check ^ byte) * 16777619) & 0xffffffff
        with open(path, "wb") as f:
            f.write(struct.pack("<8sIIIIQQI20s", b"GPUTRACE", 1, 64, 96, 0, 0, T0, 1, b""))
            f.write(head + struct.pack("<I", check) + frame)
        return path


def report(path, *args, expect_rc=0):
    p = subprocess.run([GPUTRACE, "report", path, "--json"] + list(args), capture_output=True,
                       text=True, timeout=60)
    if p.returncode != expect_rc:
        raise AssertionError("report exited %d: %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def rules(rep):
    return {f["rule"]: f for f in rep["findings"]}


K = 0x1000
PERIOD, LAUNCH, COPY, BLOCK = 650000, 5000, 3000, 500000
KSTART, KDUR, CDUR = 6000, 400000, 44000  # kernel then copy on the device


def loop(sample=1, iters=10):
    """Per iteration: push "iter", a launch, a pinned async 1 MiB copy, a
    cudaDeviceSynchronize blocked 500 us, pop; the device runs the kernel for
    400 us and then the copy for 44 us; DEVICE records come after the sync,
    for one iteration in `sample`."""
    t = Trace()
    t.process(0)
    t.kname(K, b"_Z6kernelPf")
    for i in range(iters):
        b = i * PERIOD
        t.nvtx(b, 1, b"iter")
        t.launch(b + 1000, LAUNCH, K, corr=2 * i + 1)
        t.copy(b + 10000, COPY, MiB, flags=F_ASYNC | F_PINNED, corr=2 * i + 2)
        t.sync(b + 20000, BLOCK)
        if i % sample == 0:
            t.device(b + KSTART, KDUR, "launch", stub=K, corr=2 * i + 1, sample=sample)
            t.device(b + KSTART + KDUR, CDUR, "memcpy", nbytes=MiB, direction=HTOD,
                     corr=2 * i + 2, sample=sample, api="cudaMemcpyAsync")
        t.nvtx(b + 600000, 2)
    return t


def test_exact_device_attribution():
    rep = report(loop().write("device_exact"))
    eq((rep["device_timing"], rep["device_records"], rep["device_sample"]), (True, 20, 1),
       "device timing")
    # blocked [20 us, 520 us): kernel [6, 406) us, then copy [406, 450) us,
    # then the device idle for 70 us (sync overhead: nothing untimed)
    eq([(s["api"], s["calls"], s["total_ns"], s["kernel_ns"], s["copy_ns"], s["unexplained_ns"])
        for s in rep["sync"]],
       [("cudaDeviceSynchronize", 10, 10 * BLOCK, 10 * 386000, 10 * 44000, 10 * 70000)],
       "sync attribution")
    eq(rep["kernels"], [{"kernel": "kernel(float*)", "launches": 10, "cpu_total_ns": 10 * LAUNCH,
                         "cpu_mean_ns": LAUNCH, "graph_launches": 0, "gpu_total_ns": 10 * KDUR, "gpu_mean_ns": KDUR,
                         "gpu_max_ns": KDUR, "gpu_timed": 10, "gpu_sample": 1,
                         "gpu_total_ci95_ns": 0}], "kernels")
    x = rep["transfers"][0]
    eq((x["dir"], x["count"], x["gpu_total_ns"], x["gpu_timed"], x["blocking_count"]),
       ("HtoD", 10, 10 * CDUR, 10, 0), "transfers")
    eq(round(x["bandwidth_gbps"], 6), round(MiB / CDUR, 6), "device bandwidth")
    s = rep["shares"]
    traced = 9 * PERIOD + 600000
    eq((s["traced_ns"], s["kernel_ns"], s["copy_ns"], s["sync_ns"], s["launch_ns"], s["api_ns"],
        s["idle_ns"]),
       (traced, 10 * 386000, 10 * (44000 + COPY), 10 * 70000, 10 * LAUNCH, 0,
        traced - 10 * (LAUNCH + COPY + BLOCK)), "shares")
    eq(rep["verdict"], "compute-bound", "verdict")
    r = rep["ranges"][0]
    eq((r["name"], r["count"], r["warm_count"], r["p50_ns"], r["gpu_ns"], r["launches"],
        r["bytes"], r["cold"]["gpu_ns"]),
       ("iter", 10, 9, 600000, 9 * (KDUR + CDUR), 9, 9 * MiB, KDUR + CDUR), "range GPU time")


def cpu_split(blocked, est, kernels):
    c = min(blocked, est)
    return (blocked - c, c) if kernels else (0, blocked)


def test_sampled_device_timing():
    rep = report(loop(sample=4).write("device_sampled"))
    eq((rep["device_records"], rep["device_sample"]), (6, 4), "sampled records")
    k = rep["kernels"][0]
    # the mean timed duration times the 10 launches (3 x 4 timed-weight would
    # count 12); the durations agree, so the interval is 0
    eq((k["gpu_timed"], k["gpu_total_ns"], k["gpu_mean_ns"], k["gpu_sample"],
        k["gpu_total_ci95_ns"]),
       (3, 10 * KDUR, KDUR, 4, 0), "kernel GPU time scaled to its launches")
    # the copies likewise: the mean times the 10 that succeeded, not 3 x 4
    eq(rep["transfers"][0]["gpu_total_ns"], 10 * CDUR, "copy GPU time scaled")
    # timed iterations: exact, then the CPU-side rule for the untimed rest
    # (70 us; the copy estimate less what was measured); untimed ones: the
    # CPU-side rule for all of it
    est = 2000 + MiB // 24
    kt, ct = cpu_split(70000, est - CDUR, True)
    ku, cu = cpu_split(BLOCK, est, True)
    row = rep["sync"][0]
    eq((row["kernel_ns"], row["copy_ns"], row["unexplained_ns"]),
       (3 * (386000 + kt) + 7 * ku, 3 * (CDUR + ct) + 7 * cu, 0), "sampled attribution")


def test_cpu_only_attribution_and_gaps():
    t = Trace()
    t.process(0)
    t.kname(K, b"_Z6kernelPf")
    t.launch(1000, 2000, K)
    t.copy(5000, 1000, 12 * MiB, flags=F_ASYNC | F_PINNED)
    t.sync(10000, 900000, stack=7)
    t.launch(1000000 + 600 * 10 ** 6, 2000, K)  # 600 ms later: a GPU idle gap
    t.sync(1010000 + 600 * 10 ** 6, 50000, api="cudaStreamSynchronize", stack=9)
    rep = report(t.write("cpu_only"))
    eq(rep["device_timing"], False, "no device timing")
    est = 2000 + 12 * MiB // 24
    rows = {s["api"]: s for s in rep["sync"]}
    eq((rows["cudaDeviceSynchronize"]["copy_ns"], rows["cudaDeviceSynchronize"]["kernel_ns"]),
       (est, 900000 - est), "queued copy estimate first, kernels the rest")
    eq((rows["cudaStreamSynchronize"]["kernel_ns"], rows["cudaStreamSynchronize"]["copy_ns"]),
       (50000, 0), "legacy stream sync")
    # where the host waited: by stack (no symbols in this trace), most first
    eq(rep["sync_sites"], [{"pid": 100, "stack_id": 7, "site": "pid 100 stack 7",
                            "blocked_ns": 900000},
                           {"pid": 100, "stack_id": 9, "site": "pid 100 stack 9",
                            "blocked_ns": 50000}], "sync call sites")
    gaps = rules(rep)["gpu_idle_gaps"]["evidence"]
    eq((gaps["gaps"], gaps["longest_ns"]), (1, 600 * 10 ** 6 + 1000000 - 910000),
       "gap from the drain to the next launch")


def test_driver_synchronizations_block():
    """cuCtxSynchronize / cuStreamSynchronize / cuEventSynchronize block the
    host like the runtime's (apis.h GT_AF_BLOCKING); a successful
    cuStreamWaitEvent orders the device and completes nothing."""
    t = Trace()
    t.process(0)
    t.kname(K, b"_Z6kernelPf")
    t.launch(1000, 2000, K)
    t.sync(10000, 500000, api="cuCtxSynchronize")
    t.launch(600000, 2000, K)
    t.sync(610000, 1000, api="cuStreamWaitEvent", handle=0x5)
    t.sync(620000, 300000, api="cuStreamSynchronize")
    t.sync(1000000, 40000, api="cuEventSynchronize", handle=0x9)
    rep = report(t.write("driver_sync"))
    rows = {s["api"]: (s["calls"], s["kernel_ns"], s["unexplained_ns"]) for s in rep["sync"]}
    eq(rows, {"cuCtxSynchronize": (1, 500000, 0), "cuStreamWaitEvent": (1, 0, 1000),
              "cuStreamSynchronize": (1, 300000, 0), "cuEventSynchronize": (1, 0, 40000)},
       "sync table: blocked time by what the device was doing")
    eq(rep["shares"]["blocked_ns"], 500000 + 300000 + 40000, "host blocked in the three syncs")


def test_launch_and_cpu_bound():
    t = Trace()
    t.process(0)
    t.kname(K, b"_Z4tinyv")
    for i in range(1000):  # back-to-back launches: 4 us each, 100 ns apart
        t.launch(i * 4100, 4000, K)
    t.sync(1000 * 4100, 1000)
    rep = report(t.write("launch_bound"))
    eq(rep["verdict"], "launch-bound", "launch-bound verdict")
    if "small_kernels" not in rules(rep):
        raise AssertionError("small_kernels missing: %s" % sorted(rules(rep)))
    t = Trace()
    t.process(0)
    t.kname(K, b"_Z4tinyv")
    for i in range(200):  # 1 us kernels, 2 us launches, 1 ms of host code each
        t.launch(i * 1000000, 2000, K)
        t.device(i * 1000000 + 3000, 1000, "launch", stub=K)
        t.sync(i * 1000000 + 5000, 2000)
    t.launch(200 * 1000000 + 700 * 10 ** 6, 2000, K)  # after 700 ms of host code
    t.device(200 * 1000000 + 700 * 10 ** 6 + 3000, 1000, "launch", stub=K)
    t.sync(200 * 1000000 + 700 * 10 ** 6 + 5000, 2000)
    rep = report(t.write("cpu_bound"))
    eq(rep["verdict"], "cpu-bound", "cpu-bound verdict")
    found = rules(rep)
    for r in ("small_kernels", "gpu_idle_gaps", "low_gpu_utilization"):
        if r not in found:
            raise AssertionError("missing %s in %s" % (r, sorted(found)))
    eq(found["small_kernels"]["evidence"]["launches"], 201, "small kernel launches")
    eq(found["gpu_idle_gaps"]["evidence"]["gaps"], 1, "one gap of 700 ms")
    eq(found["gpu_idle_gaps"]["evidence"]["source"], "device timing", "measured gaps")


def test_memory_errors_drops_pid():
    t = Trace()
    t.process(0)
    t.process(0, pid=200)
    t.alloc(1000, 100, 0x10000, 900 * MiB)
    t.free(2000, 100, 0x10000)
    t.alloc(3000, 100, 0x20000, 950 * MiB)
    t.alloc(4000, 100, 0, 10 * 2 ** 30, result=2)  # cudaErrorMemoryAllocation
    t.alloc(5000, 100, 0, 10 * 2 ** 30, result=2)
    t.sync(6000, 100, api="cudaStreamQuery", result=600)  # not ready: not an error
    t.alloc(7000, 100, 0x30000, 64 * MiB, pid=200, tid=200)
    t.drop(8000, 1234)
    path = t.write("memory")
    rep = report(path)
    eq(rep["memory"], {"peak_device_bytes": 950 * MiB, "pid": 100, "device_memory_bytes": None,
                       "fraction": None, "pressure": "unknown", "held_at_end": []},
       "memory, total unknown")
    found = rules(rep)
    eq((found["api_errors"]["evidence"]["failed_calls"], found["api_errors"]["severity"]),
       (2, "high"), "api errors")
    if "cudaMalloc: cudaErrorMemoryAllocation ×2" not in found["api_errors"]["message"]:
        raise AssertionError(found["api_errors"]["message"])
    eq((rep["dropped"], rep["processes"]), (1234, 2), "drops and processes")
    for total, severity in (("1GiB", "high"), ("1100MiB", "medium")):
        f = rules(report(path, "--device-memory", total))["memory_pressure"]
        eq(f["severity"], severity, "memory_pressure against " + total)
    rep = report(path, "--device-memory", "2GiB")
    eq(("memory_pressure" in rules(rep), rep["memory"]["pressure"]), (False, "ok"), "2 GiB")
    rep = report(path, "--pid", "200")
    eq((rep["memory"]["peak_device_bytes"], rep["processes"], rep["dropped"],
        [a["calls"] for a in rep["api"]]), (64 * MiB, 1, 0, [1]), "--pid 200")
    text = subprocess.run([GPUTRACE, "report", path], capture_output=True, text=True).stdout
    if "!! 1234 records dropped" not in text.splitlines()[2]:
        raise AssertionError("drops not prominent:\n" + text)


def test_damaged_trace():
    path = loop().write("damaged")
    clean = report(path)
    with open(path, "ab") as f:  # a torn chunk header after the last chunk
        f.write(b"GHCK" + b"\xff" * 20)
    p = subprocess.run([GPUTRACE, "report", path, "--json"], capture_output=True, text=True)
    eq(p.returncode, 3, "status of a damaged trace")
    if "truncated" not in p.stderr:
        raise AssertionError("no warning: " + p.stderr)
    rep = json.loads(p.stdout)
    eq((rep["damaged"], rep["api"], rep["verdict"]), (True, clean["api"], clean["verdict"]),
       "what could be read is reported")
    p = subprocess.run([GPUTRACE, "diff", path, path], capture_output=True, text=True)
    eq(p.returncode, 3, "diff of a damaged trace")


main([test_exact_device_attribution, test_driver_synchronizations_block, test_damaged_trace,
      test_sampled_device_timing,
      test_cpu_only_attribution_and_gaps, test_launch_and_cpu_bound,
      test_memory_errors_drops_pid])
