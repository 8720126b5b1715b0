#!/usr/bin/env python3
"""cuda-samples.py — NVIDIA's cuda-samples on the CPU stand-in, traced and
untraced: the shim changes no sample's behaviour, and `report`'s launches by
line equal each sample's own count, read from its source (the counts and
the reading that gives them are in SAMPLES below).

Usage: scripts/cuda-samples.py [--samples DIR] [--build DIR] [NAME...]
  --samples DIR  a checkout of https://github.com/NVIDIA/cuda-samples
                 (default: ~/.cache/gputrace/cuda-samples, cloned at
                 PINNED when missing: needs the network once)
  --build DIR    gputrace's build (default: build), with its stand-in
  NAME...        only these samples

Each sample is built with `nvcc -cudart shared -g -I Common` into
BUILD/cuda-samples/, run from the checkout's root on the stand-in
(LD_LIBRARY_PATH=BUILD/standin/13) without and with `gputrace record`.
Kernels do not execute on the stand-in, so most samples' own result checks
fail: the exit status must be the same both ways, and the output the same
once decimal figures (timings, bandwidths) are masked. A launch statement
written over several lines counts at its first line. Exits 0 when every
sample matched, 1 when one did not, 2 on bad usage or a missing checkout.
"""
import json
import os
import re
import subprocess
import sys

PINNED = "c94ff366"  # the commit docs/validation.md's figures come from
URL = "https://github.com/NVIDIA/cuda-samples"

# name: (directory under Samples/, sources, {file:line: launches}, how the
# counts follow from the source at PINNED[, {"libs": [...], "fatbin": (kernel
# source, the image the program loads from its own directory), "common":
# [sources of Common/ it needs], "mask": a pattern of its output that differs
# run to run}])
SAMPLES = {
    "simpleStreams": ("0_Introduction/simpleStreams", ["simpleStreams.cu"],
                      {"simpleStreams.cu:347": 1, "simpleStreams.cu:360": 100,
                       "simpleStreams.cu:382": 400},
                      "a warm-up launch; nreps = 100 (getCmdLineArgumentInt gives 0 for an "
                      "absent sync_method, so 'Setting reps to 100'); nreps x 4 streams"),
    "scan": ("2_Concepts_and_Techniques/scan", ["main.cpp", "scan.cu", "scan_gold.cpp"],
             {"scan.cu:226": 900, "scan.cu:246": 800, "scan.cu:254": 800, "scan.cu:261": 800},
             "short arrays 4..1024 (9 sizes) x 100 cycles; large 2048..262144 (8 sizes) x 100, "
             "three kernels each"),
    "simpleMultiCopy": ("0_Introduction/simpleMultiCopy", ["simpleMultiCopy.cu"],
                        {"simpleMultiCopy.cu:192": 1, "simpleMultiCopy.cu:212": 1,
                         "simpleMultiCopy.cu:316": 20},
                        "two single launches; processWithStreams twice (1 and 4 streams), "
                        "nreps = 10 each"),
    "shfl_scan": ("2_Concepts_and_Techniques/shfl_scan", ["shfl_scan.cu"],
                  {"shfl_scan.cu:279": 1, "shfl_scan.cu:280": 1, "shfl_scan.cu:281": 1,
                   "shfl_scan.cu:345": 1, "shfl_scan.cu:362": 1},
                  "each launch once"),
    "mergeSort": ("0_Introduction/mergeSort",
                  ["main.cpp", "bitonic.cu", "mergeSort.cu", "mergeSort_host.cpp",
                   "mergeSort_validate.cpp"],
                  {"mergeSort.cu:170": 1, "mergeSort.cu:223": 12, "mergeSort.cu:276": 12,
                   "mergeSort.cu:279": 12, "mergeSort.cu:423": 12},
                  "N = 4M, DIR = 1: the shared sort once, then 12 merge stages (strides 1024 .. "
                  "2M); the <1U> template branch each time"),
    "matrixMul": ("0_Introduction/matrixMul", ["matrixMul.cu"],
                  {"matrixMul.cu:196": 1, "matrixMul.cu:213": 300},
                  "block_size 32: MatrixMulCUDA<32> once to warm up, then nIter = 300"),
    "simpleTemplates": ("0_Introduction/simpleTemplates", ["simpleTemplates.cu"],
                        {"simpleTemplates.cu:225": 2},
                        "runTest<float> and runTest<int>: testKernel<T> once each"),
    "reduction": ("2_Concepts_and_Techniques/reduction", ["reduction.cpp", "reduction_kernel.cu"],
                  {"reduction_kernel.cu:860": 101, "reduction_kernel.cu:872": 100},
                  "kernel 7, 2^24 ints, 256 threads, 64 blocks: reduce7<int,256,true> to warm "
                  "up and in each of 100 iterations, whose 64 partial sums reduce7<int,32,true> "
                  "finishes"),
    "threadFenceReduction": ("2_Concepts_and_Techniques/threadFenceReduction",
                             ["threadFenceReduction.cu"],
                             {"threadFenceReduction_kernel.cuh:231": 1,
                              "threadFenceReduction_kernel.cuh:326": 100},
                             "2^20 floats, 128 threads: reduceMultiPass<128,true> to warm up, "
                             "then reduceSinglePass<128,true> x 100"),
    "alignedTypes": ("6_Performance/alignedTypes", ["alignedTypes.cu"],
                     {"alignedTypes.cu:192": 12 * 32},
                     "12 runTest<T> instances x NUM_ITERATIONS = 32 (one line, 12 template "
                     "instances: 32 each, told apart by their functions)"),
    # The samples that needed entry points the stand-ins lacked:
    "simpleZeroCopy": ("0_Introduction/simpleZeroCopy", ["simpleZeroCopy.cu"],
                       {"simpleZeroCopy.cu:207": 1},
                       "one launch on mapped pinned memory (cudaHostGetDevicePointer)"),
    "simpleOccupancy": ("0_Introduction/simpleOccupancy", ["simpleOccupancy.cu"],
                        {"simpleOccupancy.cu:142": 1},
                        "test(false) launches once; its results are wrong (kernels do not run) "
                        "so main returns -1 before test(true)"),
    "simpleAWBarrier": ("0_Introduction/simpleAWBarrier", ["simpleAWBarrier.cu"],
                        {"simpleAWBarrier.cu:222": 1},
                        "one cudaLaunchCooperativeKernel, sized by the occupancy query"),
    "simpleAttributes": ("0_Introduction/simpleAttributes", ["simpleAttributes.cu"],
                         {"simpleAttributes.cu:190": 1},
                         "one launch on a stream with an access policy window"),
    "vectorAddDrv": ("0_Introduction/vectorAddDrv", ["vectorAddDrv.cpp"],
                     {"vectorAddDrv.cpp:144": 1},
                     "the if (1) branch's cuLaunchKernel once",
                     {"libs": ["-lcuda"], "fatbin": ("vectorAdd_kernel.cu",
                                                     "vectorAdd_kernel64.fatbin")}),
    "matrixMulDrv": ("0_Introduction/matrixMulDrv", ["matrixMulDrv.cpp"],
                     {"matrixMulDrv.cpp:176": 1},
                     "the if (1) branch's cuLaunchKernel once",
                     {"libs": ["-lcuda"], "fatbin": ("matrixMul_kernel.cu",
                                                     "matrixMul_kernel64.fatbin")}),
    "simpleIPC": ("0_Introduction/simpleIPC", ["simpleIPC.cu"],
                  {"simpleIPC.cu:158": 1},
                  "one device, so one child process (spawned, traced on its own), which "
                  "launches once per process: procCount = 1",
                  {"common": ["helper_multiprocess.cpp"],
                   "mask": r"simpleIPCshm\d+"}),  # its shared memory's name has its pid
}


def die(msg):
    print("cuda-samples.py: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    samples = os.path.expanduser("~/.cache/gputrace/cuda-samples")
    build, names, i = "build", [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("--samples", "--build") and i + 1 < len(argv):
            samples, build = (argv[i + 1], build) if a == "--samples" else (samples, argv[i + 1])
            i += 2
        elif a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a.startswith("-"):
            die("unknown option %s (try --help)" % a)
        elif a not in SAMPLES:
            die("unknown sample %s: one of %s" % (a, ", ".join(SAMPLES)))
        else:
            names.append(a)
            i += 1
    return os.path.abspath(samples), os.path.abspath(build), names or list(SAMPLES)


def checkout(path):
    if os.path.isdir(os.path.join(path, "Samples")):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    p = subprocess.run(["git", "clone", "-q", URL, path], capture_output=True, text=True)
    if p.returncode != 0:
        die("no checkout at %s and git clone %s failed: %s" % (path, URL, p.stderr.strip()))
    subprocess.run(["git", "-C", path, "checkout", "-q", PINNED], check=True)


def masked(text, extra=None):
    if extra:
        text = re.sub(extra, "M", text)
    return re.sub(r"\d+\.\d+(e[-+]?\d+)?", "F", text)


def launches_by_line(gputrace, trace):
    p = subprocess.run([gputrace, "report", "--json", trace], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "report exited %d: %s" % (p.returncode, p.stderr.strip())
    got = {}
    for g in json.loads(p.stdout)["gpu_by_line"]:
        where = g["site"].rsplit(" at ", 1)[-1]
        got[where] = got.get(where, 0) + int(g["launches"])
    return got, None


def losses(gputrace, trace):
    p = subprocess.run([gputrace, "dump", "--json", trace], capture_output=True, text=True)
    ends = [json.loads(l) for l in p.stdout.splitlines() if '"phase":"end"' in l]
    ends = [e for e in ends if e["kind"] == "process"]
    if not ends:
        return "no process end record"
    lost = sum(e["dropped"] + e["lost"] for e in ends)
    return "%d records dropped or lost" % lost if lost else None


def check(name, root, build):
    where, sources, want = SAMPLES[name][:3]
    extra = SAMPLES[name][4] if len(SAMPLES[name]) > 4 else {}
    out_dir = os.path.join(build, "cuda-samples")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, name)
    src_dir = os.path.join(root, "Samples", where)
    common = [os.path.join(root, "Common", f) for f in extra.get("common", [])]
    cc = subprocess.run(["nvcc", "-cudart", "shared", "-g", "-I", os.path.join(root, "Common"),
                         "-o", exe] + sources + common + extra.get("libs", []), cwd=src_dir,
                        capture_output=True, text=True)
    if cc.returncode != 0:
        return "build failed: " + cc.stderr.strip()[-500:]
    if "fatbin" in extra:  # a driver sample loads its kernels from beside the program
        src, image = extra["fatbin"]
        cc = subprocess.run(["nvcc", "-fatbin", "-o", os.path.join(out_dir, image), src],
                            cwd=src_dir, capture_output=True, text=True)
        if cc.returncode != 0:
            return "fatbin build failed: " + cc.stderr.strip()[-500:]
    cwd = out_dir if "fatbin" in extra else root
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "standin", "13"))
    for k in [k for k in env if k.startswith("GPUTRACE_") or k == "LD_PRELOAD"]:
        del env[k]
    plain = subprocess.run([exe], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    gputrace = os.path.join(build, "bin", "gputrace")
    trace = exe + ".gtrace"
    if os.path.exists(trace):
        os.unlink(trace)
    traced = subprocess.run([gputrace, "record", "-q", "-o", trace, "--", exe], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    problems = []
    if traced.returncode != plain.returncode:
        problems.append("exit %d traced, %d untraced" % (traced.returncode, plain.returncode))
    if masked(traced.stdout, extra.get("mask")) != masked(plain.stdout, extra.get("mask")):
        problems.append("output differs traced")
    got, err = launches_by_line(gputrace, trace)
    if err:
        return err
    if got != want:
        problems.append("launches by line %s, the source's %s" % (sorted(got.items()),
                                                                 sorted(want.items())))
    lost = losses(gputrace, trace)
    if lost:
        problems.append(lost)
    return "; ".join(problems) if problems else None, plain.returncode, got


def main(argv):
    root, build, names = parse_args(argv)
    checkout(root)
    failed = 0
    for name in names:
        res = check(name, root, build)
        if isinstance(res, str):
            res = (res, None, {})
        problem, rc, got = res
        lines = ", ".join("%s %d" % kv for kv in sorted(got.items()))
        if problem:
            failed += 1
            print("FAIL %-21s %s" % (name, problem))
        else:
            print("ok   %-21s exit %d both ways; launches by line: %s" % (name, rc, lines))
    print("%d of %d samples as their source counts" % (len(names) - failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
