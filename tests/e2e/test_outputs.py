"""No output path is followed into someone else's file.

A shared, world-writable (not sticky) directory where another user (nobody)
plants symbolic links and files: a symlink at the final component is never
followed; names gputrace picks are created O_EXCL (the next free one is
taken); an existing output is refused unless --force, which overwrites only a
regular file of ours with one link, and leaves it 0600. The same for `chrome`.
A squatted socket directory falls back to a private one; no .sock.lock files
are left behind."""
import os
import stat
import subprocess
from gtest import *

NOBODY = 65534


def as_root(test):
    """Tests that plant files as another user (nobody) need root."""
    def run_as_root():
        if os.geteuid() != 0:
            print("SKIP %s: needs root to act as another user" % test.__name__)
            return
        test()
    run_as_root.__name__ = test.__name__
    return run_as_root


def shared_dir(name):
    os.chmod(TMP, 0o755)  # others may enter TMP, not write it
    d = os.path.join(TMP, name)
    os.makedirs(d)
    os.chmod(d, 0o777)
    victim = os.path.join(d, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    return d, victim


def plant_symlink(path, target):
    os.symlink(target, path)
    os.lchown(path, NOBODY, NOBODY)


def record_to(out, *opts, cwd=None, **env):
    args = [GPUTRACE, "record", "-q"] + (["-o", out] if out else []) + list(opts) + \
        ["--", prog("basic")]
    return subprocess.run(args, env=base_env(**env), capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def refused(p, *words):
    if p.returncode != 2 or p.stdout != "" or not all(w in p.stderr for w in words):
        raise AssertionError("expected a refusal (%r), got status %d, stdout %r, stderr %r"
                             % (words, p.returncode, p.stdout, p.stderr))


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def launches(path):
    return count(dump(path), kind="launch")


@as_root
def test_record_output_symlink():
    d, victim = shared_dir("sym")
    out = os.path.join(d, "run.gtrace")
    plant_symlink(out, victim)
    refused(record_to(out), out, "symbolic link")
    refused(record_to(out, "--force"), out, "symbolic link")
    eq(open(victim).read(), "precious\n", "the victim's file")


def test_record_output_exists():
    out = os.path.join(TMP, "exists.gtrace")
    eq(record_to(out).returncode, 0, "first record")
    refused(record_to(out), out, "exists", "--force")
    eq(launches(out), 15, "the first trace is kept")
    eq(record_to(out, "--force").returncode, 0, "record --force")
    eq((launches(out), mode(out)), (15, 0o600), "overwritten, 0600")
    mine = os.path.join(TMP, "mine.gtrace")
    open(mine, "w").close()
    os.chmod(mine, 0o666)
    eq(record_to(mine, "--force").returncode, 0, "record --force over a 0666 file")
    eq(mode(mine), 0o600, "no longer readable by others")
    linked = os.path.join(TMP, "linked.gtrace")
    os.link(mine, linked)
    refused(record_to(linked, "--force"), linked, "2 links")


@as_root
def test_record_output_of_another_user():
    d, _ = shared_dir("theirs")
    out = os.path.join(d, "run.gtrace")
    open(out, "w").close()
    os.chmod(out, 0o666)
    os.chown(out, NOBODY, NOBODY)
    refused(record_to(out), out, "exists")
    refused(record_to(out, "--force"), out, "owned by uid 65534")
    eq(os.path.getsize(out), 0, "their file untouched")


@as_root
def test_record_default_name():
    d, _ = shared_dir("default")
    target = os.path.join(d, "made-through-the-link")
    plant_symlink(os.path.join(d, "gputrace-1.gtrace"), target)
    p = record_to(None, cwd=d)
    eq(p.returncode, 0, "record (stderr %r)" % p.stderr)
    eq(os.path.exists(target), False, "nothing created through the link")
    out = os.path.join(d, "gputrace-2.gtrace")
    eq((launches(out), mode(out)), (15, 0o600), "the trace took the next free name")


@as_root
def test_preload_default_name():
    d, victim = shared_dir("pid")
    # The shim's default is gputrace-<pid>.gtrace: plant it for the pid the
    # program will have (sh execs it).
    script = "ln -s %s gputrace-$$.gtrace && chown -h %d gputrace-$$.gtrace && exec %s" % (
        victim, NOBODY, prog("basic"))
    p = subprocess.run(["sh", "-c", script], env=base_env(LD_PRELOAD=SHIM), cwd=d,
                       capture_output=True, text=True, timeout=120)
    eq((p.returncode, p.stdout), (0, "basic: 0 failures\n"), "the program")
    links = [n for n in os.listdir(d) if os.path.islink(os.path.join(d, n))]
    eq(len(links), 1, "the planted link")
    picked = os.path.join(d, links[0][:-len(".gtrace")] + "-1.gtrace")
    events = wait_for_trace(picked, 1)
    eq(count(events, kind="launch"), 15, "launches in " + picked)
    eq(open(victim).read(), "precious\n", "the victim's file")


def test_chrome_output():
    _, trace = record([prog("basic")], out=os.path.join(TMP, "forchrome.gtrace"))
    chrome = lambda *a: subprocess.run([GPUTRACE, "chrome", trace] + list(a),
                                       capture_output=True, text=True, timeout=120)
    eq(chrome().returncode, 0, "first export")
    json_out = os.path.join(TMP, "forchrome.json")
    refused(chrome(), json_out, "exists", "--force")
    eq(chrome("--force").returncode, 0, "chrome --force")
    eq(mode(json_out), 0o600, "export mode")
    if os.geteuid() == 0:
        d, victim = shared_dir("chrome")
        link = os.path.join(d, "x.json")
        plant_symlink(link, victim)
        refused(chrome("-o", link), link, "symbolic link")
        refused(chrome("-o", link, "--force"), link, "symbolic link")
        eq(open(victim).read(), "precious\n", "the victim's file")


@as_root
def test_squatted_socket_directory():
    xdg = os.path.join(TMP, "xdg_squat")
    os.makedirs(xdg, 0o700)
    squat = os.path.join(xdg, "gputrace")
    os.makedirs(squat, 0o777)
    os.chown(squat, NOBODY, NOBODY)
    out = os.path.join(TMP, "squat.gtrace")
    p = record_to(out, XDG_RUNTIME_DIR=xdg)
    eq(p.returncode, 0, "record beside a squatted directory (stderr %r)" % p.stderr)
    eq(launches(out), 15, "traced")
    pre = os.path.join(TMP, "squat_pre.gtrace")
    p = run([prog("basic")], base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=pre, XDG_RUNTIME_DIR=xdg),
            check_rc=0)
    eq(count(wait_for_trace(pre, 1), kind="launch"), 15, "traced under plain LD_PRELOAD")
    eq(os.listdir(squat), [], "nothing of ours in the squatted directory")


def test_no_lock_files_left():
    xdg = os.path.join(TMP, "xdg_clean")
    os.makedirs(xdg, 0o700)
    out = os.path.join(TMP, "clean.gtrace")
    eq(record_to(out, XDG_RUNTIME_DIR=xdg).returncode, 0, "record")
    pre = os.path.join(TMP, "clean_pre.gtrace")
    run([prog("basic")], base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=pre, XDG_RUNTIME_DIR=xdg),
        check_rc=0)
    wait_for_trace(pre, 1)
    eq(sorted(os.listdir(os.path.join(xdg, "gputrace"))), [], "socket directory afterwards")


main([test_record_output_symlink, test_record_output_exists, test_record_output_of_another_user,
      test_record_default_name, test_preload_default_name, test_chrome_output,
      test_squatted_socket_directory, test_no_lock_files_left])
