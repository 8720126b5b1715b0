"""Driver API interception: tests/cuda/drv_paths.c reaches the
stand-in libcuda linked (-lcuda), through dlopen + dlsym, and through
cuGetProcAddress_v2 + cudaGetDriverEntryPointByVersion. Exact counts per
kind and api, kernel names, VMM records, and leaks attributed to the lines
of cuMemAlloc and cuMemCreate; report and chrome accept the trace."""
import json
import os
from gtest import *

MiB = 1 << 20
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda", "drv_paths.c")


def line_of(marker):
    with open(SRC) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise AssertionError("no %s in %s" % (marker, SRC))


def check(name, extra_sync):
    p, out = record([prog(name)])
    eq(p.stdout, "drv: 0 failures\n", "program output")
    ev = dump(out)
    c = calls(ev)
    eq([e for e in c if e.get("result", 0) != 0], [], "no call failed")
    launches = select(c, kind="launch")
    eq(by(launches, "kernel"), {"vec_add": 3, "reduce(float*, int)": 2}, "kernel names")
    eq(by(launches, "api"), {"cuLaunchKernel": 3, "cuLaunchKernelEx": 2}, "launch apis")
    vec = select(launches, kernel="vec_add")[0]
    eq((vec["grid"], vec["block"]), ([1024, 1, 1], [256, 1, 1]), "vec_add dims")
    allocs = select(c, kind="alloc")
    eq(sorted((e["api"], e["bytes"]) for e in allocs),
       sorted([("cuMemAlloc_v2", MiB), ("cuMemAlloc_v2", MiB), ("cuMemAlloc_v2", 4096),
               ("cuMemAllocHost_v2", 65536), ("cuMemCreate", 2 * MiB),
               ("cuMemCreate", 4 * MiB), ("cuMemMap", 2 * MiB)]), "allocations")
    frees = select(c, kind="free")
    eq(sorted(e["api"] for e in frees),
       sorted(["cuMemFree_v2", "cuMemFree_v2", "cuMemFreeHost", "cuMemUnmap", "cuMemRelease"]),
       "frees")
    eq([(e["api"], e["bytes"]) for e in select(c, kind="memcpy")],
       [("cuMemcpyHtoD_v2", MiB), ("cuMemcpyHtoD_v2", 65536), ("cuMemcpyDtoD_v2", MiB),
        ("cuMemcpyDtoH_v2", 65536)], "copies")
    eq([e["dir"] for e in select(c, kind="memcpy")], ["HtoD", "HtoD", "DtoD", "DtoH"], "dirs")
    eq([(e["api"], e["bytes"]) for e in select(c, kind="memset")], [("cuMemsetD32_v2", MiB)],
       "memsets")
    sync = {"cuStreamSynchronize": 1, "cuCtxSynchronize": 1}
    sync.update(extra_sync)
    eq(dict(by(c, "api", kind="sync")), sync, "synchronizations")
    d = json.loads(run([GPUTRACE, "leaks", "--json", out], base_env()).stdout)
    got = sorted((l["memory"], l["bytes"], l["blocks"], l["stack"][0]["function"],
                  os.path.basename(l["stack"][0]["file"]), l["stack"][0]["line"])
                 for l in d["leaks"])
    eq(got, sorted([("device", 4096, 1, "leak_device", "drv_paths.c", line_of("LEAK_ALLOC")),
                    ("device", 4 * MiB, 1, "leak_physical", "drv_paths.c",
                     line_of("LEAK_CREATE"))]), "leaks: the cuMemAlloc and cuMemCreate lines")
    rep = run([GPUTRACE, "report", out], base_env(), check_rc=0).stdout
    for api in ["cuLaunchKernel", "cuMemAlloc_v2", "cuMemCreate", "cuMemcpyHtoD_v2"]:
        if api not in rep:
            raise AssertionError("report does not list %s:\n%s" % (api, rep))
    ch = os.path.join(TMP, name + ".json")
    run([GPUTRACE, "chrome", "-o", ch, out], base_env(), check_rc=0)
    with open(ch) as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    for n in ["vec_add", "cuMemCreate", "cuMemAlloc_v2"]:
        if not any(n in (x or "") for x in names):
            raise AssertionError("chrome trace lacks %s" % n)


def test_linked():
    check("drv_link", {})


def test_dlopen_dlsym():
    check("drv_dlsym", {})


def test_get_proc_address():
    check("drv_proc", {"cuStreamSynchronize_ptsz": 1})


def test_driver_work_timed_on_the_device():
    """Launches, copies and memsets made through the driver (as cuBLAS and
    Triton make them) get a corr and one DEVICE record each when the process
    has a runtime to time with (drv_proc loads libcudart, as PyTorch does);
    without one (drv_link) they carry their corr and go untimed."""
    _, out = record([prog("drv_proc")])
    ev = dump(out)
    work = [e for e in calls(ev) if e["kind"] in ("launch", "memcpy", "memset")]
    eq(len(work), 10, "driver launches, copies and memsets")
    eq([e["corr"] for e in work], list(range(1, 11)), "corr: one per call, in order")
    dev = select(ev, kind="device")
    eq(sorted((e["tid"], e["corr"], e["api"], e["of_kind"]) for e in dev),
       sorted((e["tid"], e["corr"], e["api"], e["kind"]) for e in work),
       "one DEVICE record per call, joined by (tid, corr)")
    eq(by(dev, "source"), {"events": 10}, "timed with events")
    eq(by(select(dev, of_kind="launch"), "kernel"), {"vec_add": 3, "reduce(float*, int)": 2},
       "DEVICE records name the kernel")
    _, out = record([prog("drv_link")])
    ev = dump(out)
    eq(count(ev, kind="device"), 0, "no runtime in the process: no DEVICE record")
    eq([e["corr"] for e in calls(ev) if e["kind"] == "launch"], [5, 6, 7, 8, 9],
       "corr without timing")


def test_untraced_output_same():
    for name in ["drv_link", "drv_dlsym", "drv_proc"]:
        plain = run([prog(name)], base_env(), check_rc=0)
        eq(plain.stdout, "drv: 0 failures\n", name + " untraced")


main([test_linked, test_dlopen_dlsym, test_get_proc_address,
      test_driver_work_timed_on_the_device, test_untraced_output_same])
