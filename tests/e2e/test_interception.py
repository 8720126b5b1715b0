"""Nothing escapes the trace, and tracing changes nothing:
- the runtime reached through dlsym on a library handle (ctypes.CDLL, RTLD_LOCAL)
  is traced: every call of tests/e2e/rt_ctypes.py is in the trace;
- a driver whose cuGetProcAddress hands out exported addresses that resolve
  through the global scope to the shim's own hooks (the stand-in libcuda built
  without -Bsymbolic, loaded RTLD_LOCAL) gives the program the same results
  traced and untraced, and every call is recorded;
- the API table (include/gputrace/apis.h) and the shim's exports agree;
- a launch hook entered inside another's call (libcudart reaching the driver
  through the shim's hooks, as on a real GPU) forwards untraced, and its
  result comes back through the outer hook into that hook's record."""
import json
import os
import re
import subprocess
import sys
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
INTERPOSABLE = os.path.join(BUILD, "standin", "13-interposable")


def test_runtime_through_a_ctypes_handle():
    p, out = record([sys.executable, os.path.join(HERE, "rt_ctypes.py")])
    eq(p.stdout, "ctypes: 20 allocations, 10 frees\n", "program output")
    ev = dump(out)
    eq(dict(by(calls(ev), "api")), {"cudaMalloc": 20, "cudaFree": 10,
                                    "cudaDeviceSynchronize": 1}, "every call recorded")
    eq({e["bytes"] for e in select(ev, kind="alloc")}, {1 << 20}, "allocation sizes")
    eq([e["result"] for e in calls(ev) if e["result"] != 0], [], "no call failed")
    # the 10 blocks left: attributed to the Python line that allocated them,
    # read without the GIL (ctypes released it around the call)
    d = json.loads(run([GPUTRACE, "leaks", "--json", out], base_env(), check_rc=0).stdout)
    eq([(l["bytes"], l["blocks"]) for l in d["leaks"]], [(10 << 20, 10)], "leaked blocks")
    py = [f for f in d["leaks"][0]["stack"] if f["python"]]
    frames = [(f["function"], os.path.basename(f["file"]), f["line"]) for f in py]
    eq(frames[0], ("stage", "rt_ctypes.py", 12), "the allocating Python line")
    # the list comprehension's own frame before 3.12, inlined in <module> after
    eq(frames[1][1:], ("rt_ctypes.py", 16), "its caller's line")


def interposable_env():
    env = base_env()
    env["LD_LIBRARY_PATH"] = INTERPOSABLE + ":" + env["LD_LIBRARY_PATH"]
    return env


def test_driver_handing_out_interposable_addresses():
    for name, extra in (("drv_proc", {"cuStreamSynchronize_ptsz": 1}), ("drv_dlsym", {})):
        plain = run([prog(name)], interposable_env())
        out = os.path.join(TMP, name + "_interposable.gtrace")
        traced = run([GPUTRACE, "record", "-q", "-o", out, "--", prog(name)],
                     interposable_env())
        eq((traced.returncode, traced.stdout, traced.stderr),
           (plain.returncode, plain.stdout, plain.stderr), name + ": same results traced")
        eq(plain.stdout, "drv: 0 failures\n", name + " output")
        ev = dump(out)
        c = calls(ev)
        eq([e for e in c if e.get("result", 0) != 0], [], name + ": no call failed")
        want = {"alloc": 7, "free": 5, "memcpy": 4, "memset": 1, "launch": 5,
                "sync": 2 + sum(extra.values())}
        got = by(c, "kind")
        eq({k: got[k] for k in want}, want, name + ": calls by kind")
        eq(by(select(c, kind="launch"), "kernel"), {"vec_add": 3, "reduce(float*, int)": 2},
           name + ": kernel names")


def test_launch_nested_in_a_launch_hook():
    """tests/cuda/nested_launch.c, preloaded after the shim, answers each
    <<<>>> launch of two_sites (1000) through the global cuLaunchKernel (the
    shim's driver hook, nested) and has every third refused (400). Under each
    state the hooks take (device timing off: the fast form; default: timed
    launches take the general form; clock_gettime stamps: the general form
    always), the program's output is the untraced run's, the nested driver
    launches are not recorded, and each outer record has its own result."""
    nested = os.path.join(PROGS, "nested_launch.so")
    plain = run([prog("two_sites")], base_env(LD_PRELOAD=nested))
    eq(plain.stdout, "two_sites: 1103 launches\nnested: 1000 launches, 334 refused\n",
       "untraced output")
    for setting in ({"GPUTRACE_GPU_TIMING": "off"}, {}, {"GPUTRACE_CLOCK": "monotonic"}):
        # preloaded into the program only (an ASan build of gputrace refuses
        # a library ahead of its runtime)
        p, out = record(["env", "LD_PRELOAD=%s:%s" % (SHIM, nested), prog("two_sites")],
                        **setting)
        eq((p.stdout, p.stderr), (plain.stdout, plain.stderr), "%r: same output" % setting)
        launches = select(dump(out), kind="launch")
        eq(by(launches, "api"), {"__cudaLaunchKernel": 1000, "cudaLaunchKernel": 103},
           "%r: launches by API (the nested cuLaunchKernel untraced)" % setting)
        outer = sorted(select(launches, api="__cudaLaunchKernel"), key=lambda e: e["corr"])
        eq([e["result"] for e in outer], [400 if i % 3 == 0 else 0 for i in range(1000)],
           "%r: each outer launch's result, in order" % setting)


def api_table():
    src = open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "include", "gputrace",
                            "apis.h")).read()
    body = src.split("#define GT_API_LIST(X)")[1].split("/* clang-format on */")[0]
    return re.findall(r"X\((\w+), (\w+), (\w+), (\w+), (\w+),", body)


# Exported by the shim but not traced: registration, lookups, bookkeeping.
UNTRACED_EXPORTS = {
    "__cudaRegisterFunction", "__cudaGetKernel", "cudaGetKernel", "cudaDeviceReset",
    "__cudaPushCallConfiguration",
    "cuGetProcAddress", "cuGetProcAddress_v2", "cuModuleGetFunction", "cuLibraryGetKernel",
    "cudaGetDriverEntryPoint", "cudaGetDriverEntryPoint_ptsz",
    "cudaGetDriverEntryPointByVersion", "cudaGetDriverEntryPointByVersion_ptsz",
}


def test_api_table_and_exports_agree():
    table = api_table()
    names = [t[0] for t in table]
    eq(sorted(n for n in set(names) if names.count(n) > 1), [], "names listed twice")
    hooked = {t[0] for t in table if t[2] in ("RT", "DRV")}
    nm = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True,
                        text=True, check=True).stdout
    exported = {l.split()[-1] for l in nm.splitlines() if l.split()[1] == "T"}
    cuda = {s for s in exported if s.startswith(("cu", "__cuda"))}
    eq(sorted(hooked - cuda), [], "table entries the shim does not export")
    eq(sorted(cuda - hooked - UNTRACED_EXPORTS), [], "exports missing from the table")
    for name, kind, fam, base, var in table:
        if var == "PT":
            eq(any(b == base and v == "L" and f == fam for _, _, f, b, v in table), True,
               name + ": a per-thread twin has a legacy entry")


main([test_runtime_through_a_ctypes_handle, test_driver_handing_out_interposable_addresses,
      test_launch_nested_in_a_launch_hook, test_api_table_and_exports_agree])
