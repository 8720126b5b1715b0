#!/usr/bin/env python3
"""hook_signatures_planted.py — the signature check fails on a drifted hook.

Usage: hook_signatures_planted.py CC CUDA_INCLUDE SOURCE_DIR BINARY_DIR WORK_DIR

Compiles preload/sigcheck/hook_signatures.c (both halves: plain names, and
with GT_SIGCHECK_PT the _ptsz/_ptds ones) as the build does, which must pass;
then plants a wrong parameter type in cudaMemcpyAsync's row of a copy of
preload/hook_sigs.h (its size_t count made an unsigned int) and compiles
again with that copy first on the include path: each half must fail with
exactly one error, naming cudaMemcpyAsync (cudaMemcpyAsync_ptsz for the
per-thread half), and the shim's own hooks_copy.c with exactly two
(its definitions of cudaMemcpyAsync and cudaMemcpyAsync_ptsz now conflict
with the declarations the table makes). The
compiler's error lines are printed, and the count of checked entries.
"""
import os
import re
import shutil
import subprocess
import sys

PLANTED_API = "cudaMemcpyAsync"
ROW = ("  S(cudaMemcpyAsync, cudaError_t, "
       "(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t)) \\")
WRONG_ROW = ROW.replace("const void *, size_t,", "const void *, unsigned int,")


def compile_check(cc, cuda_inc, src, preload, extra):
    """The build's compilation of the check, from `preload` (a copy of it)."""
    check = os.path.join(preload, "sigcheck", "hook_signatures.c")
    cmd = [cc, "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
           "-Wno-deprecated-declarations"] + extra + [
               "-I" + preload, "-I" + os.path.join(src, "include"), "-isystem", cuda_inc,
               check]
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_shim_file(cc, src, binary, preload, name):
    cmd = [cc, "-std=c11", "-fsyntax-only", "-D_GNU_SOURCE",
           "-include", os.path.join(preload, "glibc_compat.h"),
           "-I" + preload, "-I" + os.path.join(src, "include"),
           "-I" + os.path.join(binary, "include"), os.path.join(preload, name)]
    return subprocess.run(cmd, capture_output=True, text=True)


def errors(result):
    return [l for l in result.stderr.splitlines() if " error: " in l]


def expect_errors(what, result, pattern, names):
    """Fails unless `result` failed with one error per name of `names`, each
    matching `pattern` (a regex whose group 1 is the entry named)."""
    errs = errors(result)
    for line in errs:
        print(f"{what}: {line}")
    if result.returncode == 0:
        sys.exit(f"FAIL: {what} compiled with the planted signature")
    got = sorted(m.group(1) for m in (re.search(pattern, l) for l in errs) if m)
    if len(errs) != len(names) or got != sorted(names):
        sys.exit(f"FAIL: {what}: expected errors naming {names}, got:\n" + result.stderr)


def main():
    cc, cuda_inc, src, binary, work = sys.argv[1:6]
    halves = [("plain names", [], PLANTED_API),
              ("per-thread names", ["-DGT_SIGCHECK_PT"], PLANTED_API + "_ptsz")]
    preload = os.path.join(src, "preload")
    for what, extra, _ in halves:
        r = compile_check(cc, cuda_inc, src, preload, extra)
        if r.returncode != 0:
            sys.exit(f"FAIL: the unplanted check ({what}) does not compile:\n{r.stderr}")

    # A copy of preload/ (a quoted #include looks beside its includer first).
    planted = os.path.join(work, "planted_preload")
    shutil.rmtree(planted, ignore_errors=True)
    shutil.copytree(preload, planted)
    with open(os.path.join(preload, "hook_sigs.h")) as f:
        table = f.read()
    if table.count(ROW + "\n") != 1:
        sys.exit(f"FAIL: the row of {PLANTED_API} in hook_sigs.h is not\n{ROW}")
    with open(os.path.join(planted, "hook_sigs.h"), "w") as f:
        f.write(table.replace(ROW + "\n", WRONG_ROW + "\n"))
    print(f"planted: {WRONG_ROW.strip()}")

    for what, extra, name in halves:
        r = compile_check(cc, cuda_inc, src, planted, extra)
        expect_errors(f"check, {what}", r, r'static assertion failed: "(\w+): ', [name])
    r = compile_shim_file(cc, src, binary, planted, "hooks_copy.c")
    expect_errors("shim, hooks_copy.c", r, r"conflicting types for .(\w+).",
                  [PLANTED_API, PLANTED_API + "_ptsz"])

    exe = os.path.join(work, "hook_signatures_count")
    check = os.path.join(preload, "sigcheck", "hook_signatures.c")
    subprocess.run([cc, "-std=c11", "-DGT_SIGCHECK_MAIN", "-Wno-deprecated-declarations",
                    "-I" + preload, "-I" + os.path.join(src, "include"),
                    "-isystem", cuda_inc, check, "-o", exe], check=True)
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.strip()
    m = re.match(r"(\d+) of the (\d+) hooked entries .* (\d+) skipped$", out)
    if not m or int(m.group(1)) + int(m.group(3)) != int(m.group(2)):
        sys.exit(f"FAIL: the count reads {out!r}")
    print(out)
    print("PASS")


if __name__ == "__main__":
    main()
