"""`gputrace leaks` and `gputrace flame` on programs with known leaks:
exact bytes, blocks, functions and lines (native and Python), nothing freed
reported, invalid frees, the peak, growth in a program killed mid-run, a
forked child's leak under its pid, suppressions, --fail-on-leak."""
import json
import re
import os
import signal
import subprocess
import time
from gtest import *

MiB = 1 << 20


def leaks_json(path, *args):
    p = run([GPUTRACE, "leaks", "--json", path] + list(args), base_env())
    if p.returncode not in (0, 1):
        raise AssertionError("leaks exited %d: %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout), p.returncode


def origin(leak):
    """(function, file basename, line) of the first frame."""
    f = leak["stack"][0]
    return f["function"], os.path.basename(f["file"]), f["line"]


def test_leaky_exact():
    p, out = record([prog("leaky")])
    d, _ = leaks_json(out)
    got = sorted((l["memory"], l["bytes"], l["blocks"]) + origin(l) for l in d["leaks"])
    eq(got, sorted([("device", 48 * MiB, 1, "load_model()", "leaky.cu", 25),
                    ("device", 25 * MiB, 25, "stage_input(int)", "leaky.cu", 20),
                    ("pinned_host", 65536, 1, "pinned_staging()", "leaky.cu", 35)]),
       "leaks: memory, bytes, blocks, origin")
    for l in d["leaks"]:
        eq(l["stack"][1]["function"], "main", "caller of " + l["stack"][0]["function"])
    eq(d["totals"][0]["device"], {"bytes": 73 * MiB, "blocks": 26}, "device totals")
    eq((d["totals"][0]["ended"], d["totals"][0]["exited"]), (True, True), "process exited")
    inv = sorted((v["status"], v["allocation_memory"], v["stack"][0]["line"]) for v in d["invalid_frees"])
    eq(inv, [("double free", "unknown", 43), ("wrong memory kind", "pinned_host", 39)], "invalid frees")
    peak = d["peak"]
    eq(peak["device_bytes"], 48 * MiB + 25 * MiB + 4096, "peak device bytes")
    eq([(s["bytes"], s["blocks"], s["stack"][0]["function"]) for s in peak["stacks"]],
       [(48 * MiB, 1, "load_model()"), (25 * MiB, 25, "stage_input(int)"), (4096, 1, "scratch()")],
       "stacks holding the peak")
    eq([(g["bytes"], g["stack"][0]["function"], g["per_range"]["name"],
         g["per_range"]["bytes_per_occurrence"], g["per_range"]["occurrences"]) for g in d["growth"]],
       [(25 * MiB, "stage_input(int)", "request", MiB, 25)], "growth: only the per-request leak")
    text = run([GPUTRACE, "leaks", out], base_env(), check_rc=0).stdout
    for line in ["25.0 MiB in 25 blocks leaked (device) from stage_input(int) at leaky.cu:20 in leaky",
                 "48.0 MiB in 1 block leaked (device) from load_model() at leaky.cu:25 in leaky",
                 "64.0 KiB in 1 block leaked (pinned_host) from pinned_staging() at leaky.cu:35 in leaky",
                 "LEAK SUMMARY (pid %d): device 73.0 MiB in 26 blocks, pinned_host 64.0 KiB in 1 block,"
                 " managed 0 B in 0 blocks" % d["totals"][0]["pid"],
                 "Invalid frees: 2"]:
        if line not in text.splitlines():
            raise AssertionError("missing line %r in:\n%s" % (line, text))
    # a run under 10 s gets no rate per minute: the bytes, and per request
    if not re.search(r'^    growing: 25\.0 MiB over [0-9.]+ (ns|µs|ms|s) \(no rate: the run is under 10 s\);'
                     r' 1\.00 MiB per "request" range \(25 ranges\)$', text, re.M):
        raise AssertionError("no growth line in:\n" + text)
    if "scratch" in text.split("Peak device memory")[0]:
        raise AssertionError("a freed allocation was reported as leaked")


def test_fail_on_leak_and_suppressions():
    _, out = record([prog("leaky")], out=os.path.join(TMP, "leaky_sup.gtrace"))
    p = run([GPUTRACE, "leaks", "--fail-on-leak", out], base_env())
    eq(p.returncode, 1, "status with leaks")
    sup = os.path.join(TMP, "sup.txt")
    with open(sup, "w") as f:
        f.write("# known\nleak:stage_input\nleak:load_model\nleak:pinned_*\n")
    p = run([GPUTRACE, "leaks", "--fail-on-leak", "--suppressions", sup, out], base_env())
    eq(p.returncode, 0, "status with every leak suppressed (%s)" % p.stdout)
    d, _ = leaks_json(out, "--suppressions", sup)
    eq(d["leaks"], [], "nothing left")
    eq(d["suppressed"], {"bytes": 73 * MiB + 65536, "blocks": 27}, "suppressed totals")
    with open(sup, "w") as f:
        f.write("stage_input\n")
    p = run([GPUTRACE, "leaks", "--suppressions", sup, out], base_env())
    eq(p.returncode, 2, "bad suppression file")
    if "expected 'leak:PATTERN'" not in p.stderr:
        raise AssertionError(p.stderr)


def test_growth_in_killed_program():
    out = os.path.join(TMP, "killed_leaky.gtrace")
    p = subprocess.Popen([GPUTRACE, "record", "-q", "-o", out, "--", prog("leaky"), "60", "20000"],
                         env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.8)
    kids = subprocess.run(["pgrep", "-P", str(p.pid), "-x", "leaky"], capture_output=True, text=True)
    os.kill(int(kids.stdout.split()[0]), signal.SIGKILL)
    p.communicate(timeout=60)
    eq(p.returncode, 137, "record's status")
    d, _ = leaks_json(out)
    eq((d["totals"][0]["ended"], d["totals"][0]["exited"]), (True, False),
       "the killed process ended without exit()")
    growth = [(g["stack"][0]["function"], g["bytes"] // MiB == g["blocks"]) for g in d["growth"]]
    eq(growth, [("stage_input(int)", True)], "growing stacks")
    g = d["growth"][0]
    if not (10 <= g["blocks"] < 60 and g["bytes_per_min"] is None):  # a run under 10 s
        raise AssertionError("growth figures: %r" % {k: g[k] for k in ("blocks", "bytes_per_min")})
    held = [l for l in d["leaks"] if l["stack"][0]["function"] == "load_model()"]
    eq((len(held), held[0]["growing"]), (1, False), "start-up memory is held, not growing")


def test_forked_child_leak():
    p, out = record([prog("fork_leak")])
    parent, child = [int(x) for x in p.stdout.split()[1::2]]
    d, _ = leaks_json(out)
    eq([(l["pid"], l["bytes"], l["stack"][0]["function"]) for l in d["leaks"]],
       [(child, 777, "child_work()")], "the child's leak under its pid")


def test_python_frames():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_alloc.py")
    p, out = record(["python3", script, "3"], out=os.path.join(TMP, "py.gtrace"))
    d, _ = leaks_json(out)
    eq(sum(l["blocks"] for l in d["leaks"]), 3, "leaked blocks")
    eq(sum(l["bytes"] for l in d["leaks"]), 3 * 65536, "leaked bytes")
    for l in d["leaks"]:
        py = [f for f in l["stack"] if f["python"]]
        eq([(f["function"], os.path.basename(f["file"]), f["line"]) for f in py[:2]],
           [("allocate_batch", "py_alloc.py", 16), ("<listcomp>", "py_alloc.py", 22)],
           "innermost Python frames")
        eq(py[-1]["function"], "<module>", "outermost Python frame")
    text = run([GPUTRACE, "leaks", out], base_env(), check_rc=0).stdout
    if "from allocate_batch at py_alloc.py:16" not in text:
        raise AssertionError(text[:2000])


def test_pythons():
    """(interpreter, version) for python3 and each of GT_TEST_PYTHONS (set by
    tests/CMakeLists.txt), 3.10 and later, one per version."""
    found = {}
    for py in ["python3"] + [p for p in os.environ.get("GT_TEST_PYTHONS", "").split(":") if p]:
        v = run([py, "-c", "import sys; print(*sys.version_info[:3])"], base_env())
        if v.returncode == 0:
            version = tuple(int(x) for x in v.stdout.split())
            if version >= (3, 10):
                found.setdefault(version, py)
    return sorted((py, v) for v, py in found.items())


def test_python_frames_gil_released():
    """ctypes.CDLL drops the GIL around the call: the frames come from
    pyframes.c, on the main thread and a worker; none on versions it does
    not know, and the leaks are still all there."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_alloc_nogil.py")
    F = "py_alloc_nogil.py"
    for py, version in test_pythons():
        tag = "Python %d.%d.%d" % version
        _, out = record([py, script, "3"], out=os.path.join(TMP, "py_nogil_%d%d%d.gtrace" % version))
        d, _ = leaks_json(out)
        leaks = {l["bytes"]: (l["blocks"], [(f["function"], os.path.basename(f["file"]), f["line"])
                                            for f in l["stack"] if f["python"]])
                 for l in d["leaks"]}
        eq(sorted((b, n) for b, (n, _) in leaks.items()), [(3 * 4096, 3), (MiB, 1)],
           tag + ": leaked bytes and blocks (the scratch block was freed)")
        weights, batches = leaks[MiB][1], leaks[3 * 4096][1]
        if (3, 11) <= version[:2] <= (3, 13):
            eq(weights, [("load_weights", F, 21), ("main", F, 42), ("<module>", F, 50)],
               tag + ": main thread's Python frames")
            eq(batches[:2], [("stage_batch", F, 26), ("worker", F, 38)],
               tag + ": worker thread's innermost Python frames")
            eq([(f[0], f[1]) for f in batches[2:]],
               [("run", "threading.py"), ("_bootstrap_inner", "threading.py"),
                ("_bootstrap", "threading.py")], tag + ": threading's frames")
            text = run([GPUTRACE, "leaks", out], base_env(), check_rc=0).stdout
            if "from load_weights at py_alloc_nogil.py:21" not in text:
                raise AssertionError(tag + ": " + text[:2000])
        else:
            eq((weights, batches), ([], []), tag + ": no Python frames from an unknown layout")


def test_flame():
    _, out = record([prog("leaky")], out=os.path.join(TMP, "flame.gtrace"))
    def folded(*mode):
        lines = run([GPUTRACE, "flame", out] + list(mode), base_env(), check_rc=0).stdout.splitlines()
        return {l.rsplit(" ", 1)[0].split(";")[-1]: int(l.rsplit(" ", 1)[1]) for l in lines}
    eq(folded(), {"load_model() (leaky.cu:25)": 48 * MiB, "stage_input(int) (leaky.cu:20)": 25 * MiB,
                  "pinned_staging() (leaky.cu:35)": 65536}, "leaked")
    alloc = folded("--allocated")
    eq((alloc["scratch() (leaky.cu:30)"], alloc["stage_input(int) (leaky.cu:20)"],
        alloc["bad_free(void*) (leaky.cu:41)"]), (25 * 4096, 25 * MiB, 512), "allocated")
    eq(folded("--peak"), {"load_model() (leaky.cu:25)": 48 * MiB,
                          "stage_input(int) (leaky.cu:20)": 25 * MiB, "scratch() (leaky.cu:30)": 4096},
       "at the peak")
    eq(folded("--peak", "--functions"), {"load_model()": 48 * MiB, "stage_input(int)": 25 * MiB,
                                         "scratch()": 4096}, "at the peak, by function")
    line = [l for l in run([GPUTRACE, "flame", out], base_env()).stdout.splitlines() if "stage_input" in l][0]
    if not line.startswith("pid ") or \
            ";main (leaky.cu:52);stage_input(int) (leaky.cu:20) " not in line:
        raise AssertionError("folded line: " + line)


def test_memory_a_caching_allocator_holds():
    """A block PyTorch's caching allocator takes for its cache (a segment,
    DeviceCachingAllocator::alloc_block) is not the program's leak: leaks
    says who holds it, the report counts it apart at the end. A tensor the
    allocator gives its own cudaMalloc (PYTORCH_NO_CUDA_MEMORY_CACHING=1) and
    the program's own leak have no holder."""
    p, out = record([prog("holders")])
    eq(p.stdout, "holders: ok\n", "program output")
    d = json.loads(run([GPUTRACE, "leaks", "--json", out], base_env(), check_rc=0).stdout)
    eq(sorted((l["bytes"], l.get("holder")) for l in d["leaks"]),
       [(1 << 20, None), (2 << 20, None), (20 << 20, "pytorch_caching_allocator")],
       "leaks and their holders")
    text = run([GPUTRACE, "leaks", out], base_env(), check_rc=0).stdout
    if "held by PyTorch's caching allocator: segments it reserves" not in text:
        raise AssertionError("no holder line:\n" + text)
    rep = json.loads(run([GPUTRACE, "report", "--json", out], base_env(), check_rc=0).stdout)
    eq(rep["memory"]["held_at_end"], [{"holder": "pytorch_caching_allocator",
                                       "bytes": 20 << 20}], "report: held at the end")


def test_library_swapped_at_an_address():
    """dl_swap.c: libswap_alpha.so dlclose'd, libswap_beta.so loaded at its
    address, a worker allocating meanwhile: every block at its own site
    (address epochs, schema.h), the worker's 30 in one stack."""
    libs = [os.path.join(PROGS, "libswap_%s.so" % n) for n in ("alpha", "beta")]
    p, out = record([prog("dl_swap")] + libs)
    eq(p.stdout, "dl_swap: same address\ndl_swap: 90 leaks\n", "program output "
       "(beta must load where alpha was, or the case tests nothing)")
    d, _ = leaks_json(out)
    eq(sorted((l["bytes"], l["blocks"], l["stack"][0]["function"], l["stack"][0]["module"])
              for l in d["leaks"]),
       [(30 * 32 << 10, 30, "worker_site", "dl_swap"),
        (20 * 128 << 10, 20, "beta_site", "libswap_beta.so"),
        (40 * 64 << 10, 40, "alpha_site", "libswap_alpha.so")], "leaks by site")
    modules = [m for m in dump(out) if m["kind"] == "module" and "libswap" in m["path"]]
    eq([(os.path.basename(m["path"]), m.get("epoch", 0)) for m in modules],
       [("libswap_alpha.so", 0), ("libswap_beta.so", 1)], "the libraries' MODULE records")
    eq(modules[0]["start"], modules[1]["start"], "where they were loaded")


main([test_leaky_exact, test_memory_a_caching_allocator_holds, test_library_swapped_at_an_address, test_fail_on_leak_and_suppressions, test_growth_in_killed_program,
      test_forked_child_leak, test_python_frames, test_python_frames_gil_released, test_flame])
