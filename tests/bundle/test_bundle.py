"""The relocatable bundle (scripts/bundle.sh): packaged from this build,
unpacked into an empty directory, it records and symbolizes with none of the
build's libraries reachable — the system's copies of every library it bundles
(but libgcc_s, which glibc loads for the shim's backtrace()) are covered with
/dev/null in a private mount namespace, and the build's bin/ and lib/ with
empty directories — both through `gputrace record` and through
plain LD_PRELOAD (the shim finds its collector beside it). And a program with
its own libzstd.so.1 and libunwind.so.8 keeps them while traced, and its trace
is complete (the collector ignores the fake libzstd that LD_LIBRARY_PATH
offers it)."""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gtest import *  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARBALL = os.path.join(TMP, "gputrace.tar.gz")
UNPACKED = os.path.join(TMP, "unpacked")
CLASH = os.path.join(BUILD, "tests", "clash")


def bundle_root():
    if not os.path.isdir(UNPACKED):
        p = run([os.path.join(REPO, "scripts", "bundle.sh"), "--build-dir", BUILD,
                 "--no-build", "-o", TARBALL], dict(os.environ), timeout=240, check_rc=0)
        size = os.path.getsize(TARBALL)
        if size > 32 << 20:
            raise AssertionError("bundle is %d bytes, over 32 MiB" % size)
        os.makedirs(UNPACKED)
        with tarfile.open(TARBALL) as t:
            t.extractall(UNPACKED)
        print(p.stdout.strip())
    (name,) = os.listdir(UNPACKED)
    return os.path.join(UNPACKED, name)


# glibc itself loads the system's libgcc_s (backtrace(), pthread_cancel): the
# shim's stacks come from it (preload/stacks.c), so it stays reachable.
SYSTEM_RUNTIME = ("libgputrace.so", "libgcc_s.so.1")


def system_copies(libdir):
    """Every path the loader could take a bundled library's soname from."""
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    paths = set()
    for lib in os.listdir(libdir):
        if lib in SYSTEM_RUNTIME:
            continue
        for line in cache.splitlines():
            if line.strip().startswith(lib + " ") and "=>" in line:
                p = line.split("=>")[1].strip()
                paths.update({p, os.path.realpath(p)})
    return sorted(paths)


def in_namespace(script, root):
    """Run a shell script with the system's copies of the bundled libraries
    and the build's bin/ and lib/ made unreachable (root: a private mount
    namespace; otherwise the script runs as it is, after an ldd check)."""
    hide = system_copies(os.path.join(root, "lib"))
    if os.geteuid() != 0 or subprocess.run(["unshare", "-m", "true"]).returncode != 0:
        print("note: no mount namespace here (not root); ldd checks only")
        return run(["bash", "-c", script], env=clean_env(), timeout=120)
    mounts = "".join("mount --bind /dev/null %s\n" % p for p in hide)
    mounts += "".join("mount -t tmpfs none %s\n" % os.path.join(BUILD, d)
                      for d in ("bin", "lib"))
    guard = "[ ! -s %s ] || { echo 'library not hidden'; exit 99; }\n" % hide[0]
    return run(["unshare", "-m", "--propagation", "private", "bash", "-ec",
                mounts + guard + script], env=clean_env(), timeout=120)


def clean_env(**extra):
    env = base_env(standin=True, **extra)
    env.pop("GPUTRACE_QUIET")
    return env


def test_ldd_resolves_inside():
    root = bundle_root()
    libs = os.path.join(root, "lib")
    for d in ("bin", "lib"):
        for f in os.listdir(os.path.join(root, d)):
            out = run(["ldd", os.path.join(root, d, f)], {"PATH": "/usr/bin:/bin"},
                      check_rc=0).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[1] == "=>":
                    path = os.path.realpath(parts[2])
                    glibc = parts[0].split(".so")[0] in ("libc", "libm", "libpthread",
                                                         "libdl", "librt", "libresolv")
                    if not glibc and not path.startswith(os.path.realpath(libs) + "/"):
                        raise AssertionError("%s/%s loads %s from %s" % (d, f, parts[0],
                                                                        path))
    shim_deps = run(["ldd", os.path.join(libs, "libgputrace.so")], {}, check_rc=0).stdout
    # glibc's own three: libpthread and libdl are named for glibc before 2.34
    # (preload/glibc_compat.h), where they hold what libc holds since
    eq(sorted(l.split()[0] for l in shim_deps.splitlines() if "=>" in l),
       ["libc.so.6", "libdl.so.2", "libpthread.so.0"], "the shim's libraries")


def test_record_and_symbolize_without_build_libraries():
    root = bundle_root()
    work = os.path.join(TMP, "ns")
    os.makedirs(work, exist_ok=True)
    gt = os.path.join(root, "bin", "gputrace")
    script = """
cd {work}
{gt} record -q -o rec.gtrace -- {leaky} > rec.out
{gt} dump --summary rec.gtrace > rec.summary
{gt} leaks rec.gtrace > rec.leaks
LD_PRELOAD={shim} GPUTRACE_OUTPUT={work}/pre.gtrace {leaky} > pre.out
# the collector the shim started finishes a moment after the program
sleep 0.2; for i in $(seq 200); do pgrep -x gputrace-collec >/dev/null || break; sleep 0.1; done
{gt} dump --summary pre.gtrace > pre.summary
""".format(work=work, gt=gt, leaky=prog("leaky"),
           shim=os.path.join(root, "lib", "libgputrace.so"))
    p = in_namespace(script, root)
    eq(p.returncode, 0, "namespace script status (stderr: %s)" % p.stderr[-500:])
    want = expected("leaky")
    for name in ("rec", "pre"):
        summary = open(os.path.join(work, name + ".summary")).read()
        counts = {l.split()[0]: int(l.split()[1]) for l in summary.splitlines()
                  if l.startswith("  ") and len(l.split()) == 2}
        eq({k: counts.get(k) for k in want}, want, "%s: counts by kind" % name)
        if "dropped: 0  lost: 0" not in summary:
            raise AssertionError("%s: losses: %s" % (name, summary.splitlines()[0]))
    leaks = open(os.path.join(work, "rec.leaks")).read()
    for line in ("stage_input(int) at leaky.cu:20", "load_model() at leaky.cu:25"):
        if line not in leaks:
            raise AssertionError("leaks lacks %r (symbolized by the bundle's libdw):\n%s" %
                                 (line, leaks[:800]))


def expected(name):
    import re
    src = open(os.path.join(REPO, "tests", "cuda", name + ".cu")).read()
    m = re.search(r"expect:\s*(.*)", src)
    return {k: int(v) for k, v in (t.split("=") for t in m.group(1).split())}


def test_program_keeps_its_own_libraries():
    root = bundle_root()
    app = os.path.join(CLASH, "clash_app")
    env = clean_env()
    env["LD_LIBRARY_PATH"] = CLASH + ":" + env["LD_LIBRARY_PATH"]
    plain = run([app], env, check_rc=0)
    eq(plain.stdout, "clash: zstd 99999 unwind -4242 failures 0\n", "untraced output")
    out = os.path.join(TMP, "clash.gtrace")
    traced = run([os.path.join(root, "bin", "gputrace"), "record", "-q", "-o", out, "--",
                  app], env, check_rc=0)
    eq(traced.stdout, plain.stdout, "traced output: the program's own libzstd and libunwind")
    events = dump(out)
    eq(by(calls(events), "api"), {"cudaMalloc": 3, "cudaFree": 3}, "calls in the trace")
    eq([e["bytes"] for e in select(events, kind="alloc")], [1 << 20, 2 << 20, 3 << 20],
       "allocation sizes")
    eq(ring_drops(events) + count(events, kind="lost"), 0, "nothing dropped")


def test_docs_shipped():
    """The man page and the completion are the build's, byte for byte; the
    README names every command (from gputrace --help)."""
    root = bundle_root()
    for f in ("share/man/man1/gputrace.1", "share/bash-completion/completions/gputrace"):
        eq(open(os.path.join(root, f)).read(), open(os.path.join(BUILD, f)).read(), f)
    readme = open(os.path.join(root, "README")).read()
    listed = run([GPUTRACE, "--help"], base_env(), check_rc=0).stdout
    names = re.findall(r"(?m)^  ([a-z]+) ", listed)
    eq(len(names) >= 8, True, "commands in gputrace --help: %s" % names)
    for name in names:
        if not re.search(r"\b%s\b" % name, readme):
            raise AssertionError("README does not name %s:\n%s" % (name, readme))


main([test_ldd_resolves_inside, test_record_and_symbolize_without_build_libraries,
      test_program_keeps_its_own_libraries, test_docs_shipped])
