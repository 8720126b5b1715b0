"""The shim in older containers (preload/glibc_compat.h): no glibc symbol of
libgputrace.so newer than GLIBC_2.17 (objdump -T), libpthread.so.0 and
libdl.so.2 named; and in a real Debian 11 (bullseye, glibc 2.31) root built
with debootstrap from Debian's registry, a program traced with the shim
prints and exits as untraced and its calls are in the trace, recorded by a
collector outside the root that shares only the socket directory with it
(as a sidecar would). The root is cached under ~/.cache/gputrace; without
root privileges, debootstrap or the registry, the second test says so and
is skipped."""
import json
import os
import re
import shutil
import subprocess
import sys

BUILD = os.path.abspath(sys.argv[1])
SHIM = os.path.join(BUILD, "lib", "libgputrace.so")
GPUTRACE = os.path.join(BUILD, "bin", "gputrace")
CUDA = sys.argv[2] if len(sys.argv) > 2 else "/usr/local/cuda"
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "gputrace", "debian-bullseye")
PROGRAM = r"""
#include <stdio.h>
#include <cuda_runtime_api.h>
int main(void) {
  void *p = 0;
  int n = -1;
  cudaError_t count = cudaGetDeviceCount(&n), alloc = cudaMalloc(&p, 1 << 20);
  printf("count %d n %d malloc %d\n", (int)count, n, (int)alloc);
  return 3;
}
"""


def eq(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, expected %r" % (what, got, want))


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def test_symbol_versions():
    out = subprocess.run(["objdump", "-T", SHIM], capture_output=True, text=True,
                         check=True).stdout
    versions = sorted(set(re.findall(r"GLIBC_([0-9.]+)", out)), key=version_key)
    newer = [v for v in versions if version_key(v) > (2, 17)]
    eq(newer, [], "glibc versions above 2.17 (all: %s)" % versions)
    dyn = subprocess.run(["readelf", "-d", SHIM], capture_output=True, text=True,
                         check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    for lib in ("libpthread.so.0", "libdl.so.2", "libc.so.6"):
        assert lib in needed, "%s not needed: %s" % (lib, needed)


def bullseye_root():
    """The cached root (made once: debootstrap minbase plus gcc), or None
    with the reason printed."""
    if os.path.exists(os.path.join(CACHE, "usr", "bin", "gcc")):
        return CACHE
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        print("SKIP bullseye: needs root and debootstrap (scripts/deps.sh installs it)")
        return None
    tmp = CACHE + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    steps = [["debootstrap", "--variant=minbase", "--include=gcc,libc6-dev", "bullseye", tmp,
              "http://deb.debian.org/debian"]]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            print("SKIP bullseye: %s failed (Debian's registry unreachable?): %s" %
                  (cmd[0], (p.stdout + p.stderr).strip().splitlines()[-1:]))
            shutil.rmtree(tmp, ignore_errors=True)
            return None
    os.rename(tmp, CACHE)
    return CACHE


def in_root(root, script, **env):
    """`script` (sh) in a private mount namespace with the build, the CUDA
    toolkit and a socket directory bound into `root` at their own paths."""
    binds = "".join("mkdir -p %s%s && mount --bind %s %s%s && " % (root, d, d, root, d)
                    for d in (BUILD, CUDA, env["XDG_RUNTIME_DIR"]))
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("GPUTRACE_") or k in ("LD_PRELOAD", "NVTX_INJECTION64_PATH"):
            del e[k]
    e.update(env)
    return subprocess.run(["unshare", "-m", "sh", "-c", binds + script], env=e,
                          capture_output=True, text=True, timeout=300)


def test_bullseye():
    root = bullseye_root()
    if root is None:
        return
    glibc = subprocess.run(["chroot", root, "ldd", "--version"], capture_output=True,
                           text=True).stdout.splitlines()[0]
    assert glibc.endswith(" 2.31"), glibc
    sock = os.path.join(BUILD, "old_glibc_run")
    shutil.rmtree(sock, ignore_errors=True)
    os.makedirs(sock, mode=0o700)
    with open(os.path.join(root, "tmp", "gt_old.c"), "w") as f:
        f.write(PROGRAM)
    built = in_root(root, "chroot %s gcc -I%s/include /tmp/gt_old.c -o /tmp/gt_old -L%s/lib64 "
                    "-lcudart -Wl,-rpath,%s/lib64" % (root, CUDA, CUDA, CUDA),
                    XDG_RUNTIME_DIR=sock)
    eq(built.returncode, 0, "gcc in bullseye: " + built.stderr)
    plain = in_root(root, "chroot %s /tmp/gt_old" % root, XDG_RUNTIME_DIR=sock)
    eq(plain.returncode, 3, "untraced exit status")
    trace = os.path.join(sock, "old.gtrace")
    traced = in_root(root, "exec %s record -q -o %s -- chroot %s /tmp/gt_old" %
                     (GPUTRACE, trace, root), XDG_RUNTIME_DIR=sock)
    eq(traced.stdout, plain.stdout, "traced output")
    eq(traced.returncode, 3, "traced exit status (stderr: %s)" % traced.stderr)
    eq([l for l in traced.stderr.splitlines() if l.startswith("gputrace")], [], "warnings")
    dump = subprocess.run([GPUTRACE, "dump", "--json", trace], capture_output=True, text=True)
    eq(dump.returncode, 0, "dump: " + dump.stderr)
    recs = [json.loads(l) for l in dump.stdout.splitlines()]
    calls = [(r["api"], r["result"], r["bytes"]) for r in recs if r["kind"] == "alloc"]
    eq(calls, [("cudaMalloc", 35, 1 << 20)], "the traced call (no driver: 35)")
    ends = [(r["records"], r["dropped"], r["lost"]) for r in recs
            if r["kind"] == "process" and r.get("phase") == "end"]
    eq(ends, [(1, 0, 0)], "the process's end: records, dropped, lost")
    print("bullseye (%s): traced and recorded" % glibc)


failed = 0
for t in (test_symbol_versions, test_bullseye):
    try:
        t()
        print("PASS %s" % t.__name__)
    except Exception as e:
        failed += 1
        print("FAIL %s: %s" % (t.__name__, e))
sys.exit(1 if failed else 0)
