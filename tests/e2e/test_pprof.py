"""gputrace pprof, report's GPU time by line, flame --gpu: profiles
go tool pprof (Debian's golang-go)
reads with every sample index, and opens each profile on its headline
figure (inuse_space, gpu_time); the device-memory profile's inuse_space total
is `gputrace leaks --json`'s leaked bytes, with the leaking functions named;
the GPU profile's gpu_time total of kernels is the report's kernel GPU
total; a Python program's launching functions and lines are in the GPU
profile."""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
GO = shutil.which("go")


def pprof_tool(*args):
    # cwd TMP: run from build/tests, pprof would look for the sources' trimmed
    # paths (cuda/leaky.cu) under that directory, next to the programs
    p = subprocess.run([GO, "tool", "pprof"] + list(args), capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=TMP), cwd=TMP)
    if p.returncode != 0:
        raise AssertionError("go tool pprof %s: %s" % (args, p.stderr))
    return p.stdout


def raw_samples(path):
    """[(values, {label: value})] from `go tool pprof -raw`."""
    out = pprof_tool("-raw", path)
    samples, cur = [], None
    for line in out.split("Locations")[0].splitlines():
        m = re.match(r"^\s+(-?\d+(?:\s+-?\d+)*):", line)
        if m:
            cur = ([int(v) for v in m.group(1).split()], {})
            samples.append(cur)
        elif cur and re.match(r"^\s+\w+:\[", line):
            k, v = line.strip().split(":", 1)
            cur[1][k] = v.strip("[]")
    return samples


def gputrace(*args, rc=0):
    return run([GPUTRACE] + list(args), base_env(), check_rc=rc)


def opens_on(path, index):
    """go tool pprof -top with no -sample_index shows `index`: its Type line,
    and the same total as -sample_index=index (not the last type's)."""
    def head(*args):
        lines = pprof_tool(*args, "-top", path).splitlines()
        return ([l for l in lines if l.startswith("Type: ")],
                [l for l in lines if l.startswith("Showing nodes accounting for")])
    plain = head()
    eq(plain[0], ["Type: " + index], path + ": the default sample type")
    eq(plain[1], head("-sample_index=" + index)[1], path + ": the default's total")
    if not plain[1] or " 0 total" in plain[1][0] or ", 0%" in plain[1][0]:
        raise AssertionError(path + ": empty by default: %r" % plain[1])


def test_default_sample_types():
    """Each profile opens on its headline figure: in-use bytes, GPU time."""
    _, trace = record([prog("compute_loop")], out=os.path.join(TMP, "dst.gtrace"))
    gpu, mem = os.path.join(TMP, "dst.gpu.pb.gz"), os.path.join(TMP, "dst.mem.pb.gz")
    gputrace("pprof", "--gpu", trace, "-o", gpu)
    opens_on(gpu, "gpu_time")
    _, trace = record([prog("leaky")], out=os.path.join(TMP, "dsm.gtrace"))
    gputrace("pprof", trace, "-o", mem)
    opens_on(mem, "inuse_space")


def test_memory_profile():
    _, trace = record([prog("leaky")])
    out = os.path.join(TMP, "leaky.mem.pb.gz")
    gputrace("pprof", trace, "-o", out)
    samples = raw_samples(out)
    leaks = json.loads(gputrace("leaks", "--json", trace).stdout)["leaks"]
    eq(sum(s[0][3] for s in samples), sum(l["bytes"] for l in leaks),
       "inuse_space total == leaks' leaked bytes")
    eq(sum(s[0][2] for s in samples), sum(l["blocks"] for l in leaks), "inuse_objects")
    eq(sum(s[0][0] for s in samples), 53, "alloc_objects: every allocation")
    eq({s[1]["memory"] for s in samples}, {"device", "pinned_host"}, "memory labels")
    for index in ("alloc_objects", "alloc_space", "inuse_objects", "inuse_space"):
        top = pprof_tool("-sample_index=" + index, "-top", out)
        if "Showing nodes accounting for" not in top:
            raise AssertionError(index + ": " + top)
    top = pprof_tool("-sample_index=inuse_space", "-top", out)
    for fn in ("load_model()", "stage_input(int)"):
        if fn not in top:
            raise AssertionError("%s not in -top:\n%s" % (fn, top))
    listing = pprof_tool("-list", "stage_input", out)  # the source view, by line
    if not re.search(r"25MB\s+25MB\s+20:\s+cudaMalloc", listing):
        raise AssertionError("-list does not show line 20: %r" % listing)


def test_gpu_profile_totals():
    _, trace = record([prog("compute_loop")])
    out = os.path.join(TMP, "compute.gpu.pb.gz")
    gputrace("pprof", "--gpu", trace, "-o", out)
    samples = raw_samples(out)
    rep = json.loads(gputrace("report", "--json", trace).stdout)
    kernels = sum(s[0][1] for s in samples if s[1]["kind"] == "kernel")
    eq(kernels, sum(k["gpu_total_ns"] for k in rep["kernels"]),
       "gpu_time of kernels == the report's kernel GPU total")
    eq(sum(s[0][0] for s in samples if s[1]["kind"] == "kernel"),
       sum(k["launches"] for k in rep["kernels"]), "launches")
    copies = sum(s[0][2] for s in samples if s[1]["kind"] == "memcpy")
    eq(copies, sum(t["bytes"] for t in rep["transfers"] if t["dir"] != "memset"),
       "bytes of copies")
    for index in ("launches", "gpu_time", "bytes"):
        pprof_tool("-sample_index=" + index, "-top", out)


def test_gpu_time_by_python_line():
    _, trace = record([sys.executable, os.path.join(HERE, "py_launch.py"),
                       prog("libplugin.so")], GPUTRACE_STACKS="all")
    out = os.path.join(TMP, "py.gpu.pb.gz")
    gputrace("pprof", "--gpu", trace, "-o", out)
    top = pprof_tool("-sample_index=launches", "-top", "-lines", out)
    for where in ("decode_step", "prefill"):
        if where not in top:
            raise AssertionError("%s not in the GPU profile:\n%s" % (where, top))
    launches = {}
    for line in top.splitlines():
        m = re.search(r"^\s*\d+\s+\S+\s+\S+\s+(\d+)\s+\S+\s+(\w+) \S*py_launch.py:(\d+)$", line)
        if m:
            launches[(m.group(2), int(m.group(3)))] = int(m.group(1))
    eq((launches.get(("decode_step", 13)), launches.get(("prefill", 17))), (25, 10),
       "launches by Python line (cum)")
    # the same in report's table and flame --gpu
    rep = json.loads(gputrace("report", "--json", trace).stdout)
    eq([(g["site"], g["launches"]) for g in rep["gpu_by_line"]],
       [("decode_step at py_launch.py:13", 25), ("prefill at py_launch.py:17", 10)],
       "report: GPU time by launching line")
    gpu = sum(s[0][1] for s in raw_samples(out) if s[1]["kind"] == "kernel")
    eq(sum(g["gpu_ns"] for g in rep["gpu_by_line"]), gpu, "report's lines add up to the profile")
    folded = gputrace("flame", "--gpu", trace).stdout.splitlines()
    eq(sum(int(l.rsplit(" ", 1)[1]) for l in folded), gpu, "flame --gpu total")
    if not any("decode_step (" in l and "py_launch.py:13)" in l for l in folded):
        raise AssertionError("flame --gpu lacks decode_step:\n" + "\n".join(folded))


def test_sampled_launch_stacks():
    """Launch stacks as sampled by default (one in N per thread, here N=10):
    every launch carries its call site's stack, a sampled one its own, and
    each counts once where it is: two_sites launches one kernel from hot()
    1000 times, cold() 100 (interleaved) and rare() 3, and launches by line
    are exactly those (spreading the unsampled launches over the samples
    gave 991, 101 and 11)."""
    _, trace = record([prog("two_sites")], GPUTRACE_LAUNCH_STACKS="10",
                      GPUTRACE_GPU_TIMING_SAMPLE="1")
    launches = select(dump(trace), kind="launch")
    eq(len(launches), 1103, "launches")
    site, sampled = collections.Counter(), collections.Counter()
    for l in launches:
        if l.get("stack_id"):
            (sampled if l.get("stack_sampled") else site)[l["stack_id"]] += 1
    eq(len(site), 3, "one site stack per call site")
    eq(sum(site.values()) + sum(sampled.values()), 1103, "every launch has a stack")
    if sum(sampled.values()) < 100:
        raise AssertionError("one in 10 sampled: %r" % sampled)
    rep = json.loads(gputrace("report", "--json", trace).stdout)
    got = {g["site"]: g["launches"] for g in rep["gpu_by_line"]}
    eq(got, {"hot(int) at two_sites.cu:22": 1000, "cold(int) at two_sites.cu:27": 100,
             "rare(int) at two_sites.cu:32": 3}, "launches by line")


def test_outputs():
    _, trace = record([prog("leaky")], out=os.path.join(TMP, "o.gtrace"))
    gputrace("pprof", trace)  # default name beside the trace
    if not os.path.exists(os.path.join(TMP, "o.mem.pb.gz")):
        raise AssertionError("no o.mem.pb.gz")
    p = gputrace("pprof", trace, rc=2)  # exists: refused without --force
    if "--force" not in p.stderr:
        raise AssertionError(p.stderr)
    gputrace("pprof", "--force", trace)
    gputrace("pprof", "--bogus", trace, rc=2)


def live_files(d):
    """{(pid, seq, kind): path} of the live profiles in d."""
    out = {}
    for name in os.listdir(d):
        m = re.match(r"^gputrace-(\d+)-(\d{6})\.(mem|gpu)\.pb\.gz$", name)
        if not m:
            raise AssertionError("unexpected file %s in %s" % (name, d))
        out[(int(m.group(1)), int(m.group(2)), m.group(3))] = os.path.join(d, name)
    return out


def record_live(args, *opts):
    """record with --pprof-dir: (trace, profile directory)."""
    d = tempfile.mkdtemp(dir=TMP)
    trace, profiles = os.path.join(d, "t.gtrace"), os.path.join(d, "p")
    os.mkdir(profiles)
    run([GPUTRACE, "record", "-q", "-o", trace, "--pprof-dir", profiles] + list(opts) +
        ["--"] + args, base_env(), check_rc=0)
    return trace, profiles


def test_live_profiles():
    """leaky: 25 requests 120 ms apart, profiles every second: in-use space
    grows from file to file (a leak seen while it runs); the intervals'
    allocations add up to every allocation; the last in-use is leaks'."""
    trace, d = record_live([prog("leaky"), "25", "120000"], "--pprof-every", "1s")
    files = live_files(d)
    pids = {k[0] for k in files}
    seqs = sorted(k[1] for k in files if k[2] == "mem")
    eq((len(pids), seqs, sorted(k[1] for k in files if k[2] == "gpu")),
       (1, list(range(1, len(seqs) + 1)), seqs), "one process, mem and gpu files 1..N")
    if len(seqs) < 3:
        raise AssertionError("a 3 s run with 1 s profiles wrote %d" % len(seqs))
    pid = pids.pop()
    mem = [raw_samples(files[(pid, q, "mem")]) for q in seqs]
    inuse = [sum(s[0][3] for s in m) for m in mem]
    if inuse != sorted(inuse) or inuse[0] == inuse[-1]:
        raise AssertionError("in-use space does not grow: %r" % inuse)
    eq(sum(s[0][0] for m in mem for s in m), 53, "alloc_objects over the intervals")
    leaks = json.loads(gputrace("leaks", "--json", trace).stdout)["leaks"]
    eq(inuse[-1], sum(l["bytes"] for l in leaks), "last in-use space == leaks' bytes")
    opens_on(files[(pid, seqs[-1], "mem")], "inuse_space")
    top = pprof_tool("-top", files[(pid, seqs[-1], "mem")])
    if "stage_input(int)" not in top:
        raise AssertionError("stage_input not in the last profile:\n" + top)


def test_live_gpu_and_keep():
    """steady: 1000 launches over ~2.5 s; the GPU profiles' launches add up
    to 1000 (each interval's own); --pprof-keep 2 leaves the newest two."""
    trace, d = record_live([prog("steady"), "1000"], "--pprof-every", "1s", "--pprof-keep", "2")
    files = live_files(d)
    seqs = sorted(k[1] for k in files if k[2] == "gpu")
    eq(len(seqs), 2, "files kept per kind")
    if seqs[0] < 2:
        raise AssertionError("nothing was deleted: %r" % seqs)
    trace, d = record_live([prog("steady"), "1000"], "--pprof-every", "1s")
    files = live_files(d)
    gpu = [raw_samples(p) for k, p in sorted(files.items()) if k[2] == "gpu"]
    eq(sum(s[0][0] for g in gpu for s in g if s[1]["kind"] == "kernel"), 1000,
       "launches over the intervals")
    rep = json.loads(gputrace("report", "--json", trace).stdout)
    eq([k["kernel"] for k in rep["kernels"]], ["tick(int)"], "the report's kernel")
    first = sorted(p for k, p in files.items() if k[2] == "gpu")[0]
    opens_on(first, "gpu_time")
    if "tick(int)" not in pprof_tool("-sample_index=launches", "-top", first):
        raise AssertionError("tick(int) not in the first GPU profile")


def test_live_bad_settings():
    """A bad --pprof-* is refused before the command runs; a bad
    GPUTRACE_PPROF_DIR under plain LD_PRELOAD warns, and the trace is whole."""
    marker = os.path.join(TMP, "ran")
    for opts, why in ((["--pprof-dir", "/nonexistent/x"], "No such file or directory"),
                      (["--pprof-dir", GPUTRACE], "not a directory"),
                      (["--pprof-dir", TMP, "--pprof-every", "0.5s"], "from 1s to 86400s"),
                      (["--pprof-dir", TMP, "--pprof-keep", "-3"], "whole number")):
        p = run([GPUTRACE, "record", "-q", "-o", os.path.join(TMP, "bad.gtrace")] + opts +
                ["--", "touch", marker], base_env(), check_rc=2)
        if why not in p.stderr or os.path.exists(marker):
            raise AssertionError("%s: %r" % (opts, p.stderr))
    out = os.path.join(TMP, "envbad.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_PPROF_DIR="/nonexistent/x")
    run([prog("leaky"), "5", "0"], env, check_rc=0)
    eq(count(dump(out), kind="alloc"), 13, "allocations in the trace")


def test_live_under_plain_preload():
    """GPUTRACE_PPROF_DIR: the autospawned collector writes the profiles; the
    last (the process's end) has leaks' in-use bytes."""
    d = tempfile.mkdtemp(dir=TMP)
    out = os.path.join(TMP, "plain_live.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_PPROF_DIR=d)
    run([prog("leaky"), "5", "0"], env, check_rc=0)
    dump(out)  # waits for the collector to finish
    files = live_files(d)
    mem = [p for k, p in sorted(files.items()) if k[2] == "mem"]
    leaks = json.loads(gputrace("leaks", "--json", out).stdout)["leaks"]
    eq(sum(s[0][3] for s in raw_samples(mem[-1])), sum(l["bytes"] for l in leaks),
       "in-use space at the end")


if GO is None:
    print("SKIP: go (Debian's golang-go) not installed")
    sys.exit(77)
main([test_default_sample_types, test_memory_profile, test_gpu_profile_totals, test_gpu_time_by_python_line,
      test_sampled_launch_stacks, test_outputs, test_live_profiles, test_live_gpu_and_keep,
      test_live_bad_settings, test_live_under_plain_preload])
