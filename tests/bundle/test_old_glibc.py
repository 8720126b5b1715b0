"""The shim in older containers (preload/glibc_compat.h): no glibc symbol of
libgputrace.so newer than GLIBC_2.17 (objdump -T), libpthread.so.0 and
libdl.so.2 named; and in a real Debian 11 (bullseye, glibc 2.31) root built
with debootstrap from Debian's registry, a program traced with the shim
prints and exits as untraced and its calls are in the trace, recorded by a
collector outside the root that shares only the socket directory with it
(as a sidecar would); and a program on the stand-in runtime (built with
the same glibc 2.17 symbols) traced there, whose calls and leak `report`
and `leaks` read exactly, the leak at its function and file; and the same
with the whole bundle built in a Debian 11 build root (scripts/bundle.sh
--root) and run inside the root: record, collector, report and leaks. The
roots are cached under ~/.cache/gputrace; without root privileges,
debootstrap or the registry, the root's tests say so and are skipped."""
import json
import os
import re
import shutil
import subprocess
import sys

BUILD = os.path.abspath(sys.argv[1])
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


# On the stand-in runtime (built, as the shim, with glibc 2.17's symbols:
# preload/glibc_compat.h): work that succeeds, one block left allocated.
STANDIN_PROGRAM = r"""
#include <stdio.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
static void *keep(size_t n) { /* the leak: its site is this function */
  void *p = 0;
  cudaMalloc(&p, n);
  return p;
}
int main(void) {
  void *a = 0, *b = 0;
  static char host[1 << 16];
  cudaStream_t s;
  cudaEvent_t e;
  int ok = cudaMalloc(&a, 1 << 20) == 0 && cudaMalloc(&b, 1 << 16) == 0 &&
           cudaStreamCreate(&s) == 0 && cudaEventCreate(&e) == 0 &&
           cudaMemcpyAsync(b, host, sizeof host, cudaMemcpyHostToDevice, s) == 0 &&
           cudaEventRecord(e, s) == 0 && cudaEventSynchronize(e) == 0 &&
           cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost) == 0 &&
           cudaFree(a) == 0 && cudaFree(b) == 0 && keep(3 << 20) != 0 &&
           cudaDeviceSynchronize() == 0;
  printf("stand-in: %s\n", ok ? "ok" : "failed");
  sleep(1); /* alive while the collector reads its files (through /proc/PID/root) */
  return ok ? 0 : 1;
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


def in_root(root, script, proc=True, **env):
    """`script` (sh) in a private mount namespace with the build, the CUDA
    toolkit, a socket directory and /proc (as a container has it: the
    shim's unwinder reads /proc/self/maps) bound into `root` at their own
    paths."""
    binds = "".join("mkdir -p %s%s && mount --bind %s %s%s && " % (root, d, d, root, d)
                    for d in (BUILD, CUDA, env["XDG_RUNTIME_DIR"]) + (("/proc",) if proc else ()))
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
    # every record the shim wrote (its call, stack and modules) is in the
    # trace: the collector's own (process, frame) aside
    pid = [r["pid"] for r in recs if r["kind"] == "process"][0]
    written = [r for r in recs if r["pid"] == pid and r["kind"] not in ("process", "frame")]
    eq(ends, [(len(written), 0, 0)], "the process's end: records, dropped, lost")
    eq(sum(1 for r in written if r["kind"] == "stack"), 1, "the call's stack")
    print("bullseye (%s): traced and recorded" % glibc)


def standin_program(root, sock):
    """The stand-in program built in the root; its untraced run checked."""
    standin = os.path.join(BUILD, "standin", "13")
    with open(os.path.join(root, "tmp", "gt_old_si.c"), "w") as f:
        f.write(STANDIN_PROGRAM)
    built = in_root(root, "chroot %s gcc -g -I%s/include /tmp/gt_old_si.c -o /tmp/gt_old_si -L%s "
                    "-l:libcudart.so.13 -Wl,-rpath,%s" % (root, CUDA, standin, standin),
                    XDG_RUNTIME_DIR=sock)
    eq(built.returncode, 0, "gcc in bullseye: " + built.stderr)
    plain = in_root(root, "chroot %s /tmp/gt_old_si" % root, XDG_RUNTIME_DIR=sock)
    eq((plain.returncode, plain.stdout), (0, "stand-in: ok\n"), "untraced: " + plain.stderr)
    return plain


def check_standin_trace(report_json, leaks_json):
    """report --json and leaks --json of the stand-in program's trace: its
    calls and its leak, exactly."""
    d = json.loads(report_json)
    calls = {a["api"]: a["calls"] for a in d["api"]}
    want = {"cudaMalloc": 3, "cudaFree": 2, "cudaStreamCreate": 1, "cudaEventCreate": 1,
            "cudaMemcpyAsync": 1, "cudaEventRecord": 1, "cudaEventSynchronize": 1,
            "cudaMemcpy": 1, "cudaDeviceSynchronize": 1}
    eq({k: calls.get(k) for k in want}, want, "report: calls per API")
    eq((d["dropped"], d["lost"]), (0, 0), "report: dropped, lost")
    eq((d["leaks"]["bytes"], d["leaks"]["blocks"]), (3 << 20, 1), "report: the leak")
    leaks = json.loads(leaks_json)["leaks"]
    eq([(l["bytes"], l["blocks"]) for l in leaks], [(3 << 20, 1)], "leaks: bytes, blocks")
    assert "keep" in json.dumps(leaks[0]) and "gt_old_si.c" in json.dumps(leaks[0]), leaks[0]


def test_bullseye_standin():
    """A program on the stand-in runtime in the root, traced, then read by
    report and leaks outside it: its calls and its leak, exactly."""
    root = bullseye_root()
    if root is None:
        return
    sock = os.path.join(BUILD, "old_glibc_standin")
    shutil.rmtree(sock, ignore_errors=True)
    os.makedirs(sock, mode=0o700)
    plain = standin_program(root, sock)
    trace = os.path.join(sock, "old_si.gtrace")
    traced = in_root(root, "exec %s record -q -o %s -- chroot %s /tmp/gt_old_si" %
                     (GPUTRACE, trace, root), XDG_RUNTIME_DIR=sock)
    eq((traced.returncode, traced.stdout), (0, plain.stdout), "traced (stderr: %s)" % traced.stderr)
    eq([l for l in traced.stderr.splitlines() if l.startswith("gputrace")], [], "warnings")
    rep = subprocess.run([GPUTRACE, "report", "--json", trace], capture_output=True, text=True)
    eq(rep.returncode, 0, "report: " + rep.stderr)
    lk = subprocess.run([GPUTRACE, "leaks", "--json", trace], capture_output=True, text=True)
    check_standin_trace(rep.stdout, lk.stdout)
    # A root without /proc: the shim cannot find its stacks' mappings, and
    # says so (an empty stack marked cut), rather than dropping them unsaid.
    bare = os.path.join(sock, "old_si_noproc.gtrace")
    traced = in_root(root, "exec %s record -q -o %s -- chroot %s /tmp/gt_old_si" %
                     (GPUTRACE, bare, root), proc=False, XDG_RUNTIME_DIR=sock)
    eq((traced.returncode, traced.stdout), (0, plain.stdout), "traced without /proc")
    lk = subprocess.run([GPUTRACE, "leaks", "--json", bare], capture_output=True, text=True)
    leaks = json.loads(lk.stdout)["leaks"]
    eq([(l["bytes"], [f["function"] for f in l["stack"]]) for l in leaks],
       [(3 << 20, ["[stack cut short]"])], "leaks without /proc: the stack said lost")
    print("bullseye: a stand-in program traced, reported and its leak at keep()")


def test_bullseye_bundle():
    """The bundle built in a Debian 11 root (scripts/bundle.sh --root), run
    wholly inside the minimal root: its gputrace records the stand-in program
    (its collector spawned there), then reports and finds the leak there."""
    root = bullseye_root()
    if root is None:
        return
    tarball = os.path.join(BUILD, "bullseye-bundle.tar.gz")
    made = subprocess.run(["bash", os.path.join(SOURCE, "scripts", "bundle.sh"), "--root",
                           CACHE + "-build", "-o", tarball], capture_output=True, text=True,
                          timeout=900)
    if made.returncode == 3:
        print("SKIP bullseye bundle: %s" % made.stderr.strip())
        return
    eq(made.returncode, 0, "bundle.sh --root: " + made.stderr)
    opt = os.path.join(root, "opt", "gt")
    shutil.rmtree(opt, ignore_errors=True)
    os.makedirs(opt)
    subprocess.run(["tar", "-xzf", tarball, "-C", opt, "--strip-components=1"], check=True)
    sock = os.path.join(BUILD, "old_glibc_bundle")
    shutil.rmtree(sock, ignore_errors=True)
    os.makedirs(sock, mode=0o700)
    plain = standin_program(root, sock)
    trace = "/tmp/gt_bundle.gtrace"
    if os.path.lexists(root + trace):
        os.unlink(root + trace)
    traced = in_root(root, "chroot %s /opt/gt/bin/gputrace record -q -o %s -- /tmp/gt_old_si" %
                     (root, trace), XDG_RUNTIME_DIR=sock)
    eq((traced.returncode, traced.stdout), (0, plain.stdout), "traced (stderr: %s)" % traced.stderr)
    eq([l for l in traced.stderr.splitlines() if l.startswith("gputrace")], [], "warnings")
    out = {}
    for cmd in ("report", "leaks"):
        p = in_root(root, "chroot %s /opt/gt/bin/gputrace %s --json %s" % (root, cmd, trace),
                    XDG_RUNTIME_DIR=sock)
        eq((p.returncode, p.stderr), (0, ""), "the bundle's %s in the root" % cmd)
        out[cmd] = p.stdout
    check_standin_trace(out["report"], out["leaks"])
    print("bullseye: the bundle built there recorded, reported and found the leak there")


failed = 0
for t in (test_symbol_versions, test_bullseye, test_bullseye_standin, test_bullseye_bundle):
    try:
        t()
        print("PASS %s" % t.__name__)
    except Exception as e:
        failed += 1
        print("FAIL %s: %s" % (t.__name__, e))
sys.exit(1 if failed else 0)
