"""One collector for a pod (docs/kubernetes.md): `gputrace collect
--socket-dir D` serves every traced process whose shim finds it there
(GPUTRACE_SOCKET_DIR, or the socket directory when no GPUTRACE_OUTPUT is
set), any number over time, until SIGTERM or SIGINT, and no process starts a
collector of its own.

Two stand-in servers run as containers of a pod would: each in a mount
namespace of its own (unshare -m) with a private /tmp, seeing the socket
directory only through a bind mount at another path. While both hold their
leaked memory, /metrics lists both pids with exactly those bytes (promtool
accepts the page) and exactly one gputrace-collector runs, the stand-alone
one; after SIGTERM the trace holds each process's calls exactly as a
`gputrace record` run of the same program has them, by kind and API, with
nothing dropped or lost, and their frames are named although each runs a
copy of the server only its namespace has (read through /proc/PID/root).
Without unshare -m (no privilege) the namespaces are left out, said on
stdout, and the rest still runs. A collector that cannot see a process's
pid namespace refuses it, named in the trace."""
import atexit
import collections
import os
import signal
import subprocess
import time

import promrun
from gtest import *

# Two servers of different sizes: each process's records must be its own.
SERVERS = [["--workers", "2", "--requests", "10", "--weights", "4", "--gate", "1"],
           ["--workers", "1", "--requests", "14", "--weights", "8", "--gate", "1"]]
# Inside a namespace: a private /tmp, the socket directory at /mnt/gtpod, the
# server a copy only the namespace has (/mnt/server: its frames are named
# through the process's root).
NAMESPACE = ("mount --make-rprivate / && mount -t tmpfs gtpod /mnt && mkdir /mnt/gtpod && "
             "mount --bind \"$GT_POD_DIR\" /mnt/gtpod && %s cd / && "
             "cp \"$1\" /mnt/server && shift && "
             "export LD_PRELOAD=\"$GT_POD_PRELOAD\" && exec /mnt/server \"$@\"")


def can_unshare():
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs gtpod /mnt"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("NOTE: unshare -m is not permitted here (%s): the servers share our mount "
              "namespace" % p.stderr.strip())
    return p.returncode == 0


NAMESPACES = can_unshare()


def collectors():
    """(pid, argv) of every gputrace-collector running on this machine."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")[:-1]
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"gputrace-collector":
            found.append((int(pid), [a.decode() for a in argv]))
    return found


def environ_of(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def ours(pod_dir):
    """The collectors serving pod_dir, or started by a shim of a process of
    pod_dir (--autospawn: it has the process's environment, GT_POD_DIR
    included), not another test's."""
    sock = os.path.join(pod_dir, "collector.sock")
    return [c for c in collectors() if sock in c[1] or (
        "--autospawn" in c[1] and "GT_POD_DIR=" + pod_dir in environ_of(c[0]))]


STARTED = []  # collectors this script started: none outlives it


@atexit.register
def stop_all():
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()


def start_collect(pod_dir, out, *extra):
    p = subprocess.Popen([GPUTRACE, "collect", "--socket-dir", pod_dir, "-o", out] +
                         list(extra), env=base_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    STARTED.append(p)
    deadline = time.time() + 20
    while not listening(pod_dir):
        if p.poll() is not None or time.time() > deadline:
            raise AssertionError("collect did not listen: rc %s %s" % (p.poll(), p.stderr.read()))
        time.sleep(0.02)
    return p


def listening(pod_dir):
    """A collector holds the lock of pod_dir's socket (as the shim asks:
    paths.h); a socket left by a dead one is not enough."""
    import fcntl
    sock = os.path.join(pod_dir, "collector.sock")
    try:
        fd = os.open(sock + ".lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return os.path.exists(sock)
    finally:
        os.close(fd)


def stop(p, sig=signal.SIGTERM, rc=0):
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    eq(p.returncode, rc, "collect status after %s (stderr: %s)" % (sig.name, err))
    return err


def pod_env(pod_dir, **extra):
    return base_env(LD_PRELOAD=SHIM, GPUTRACE_QUIET=0, GT_POD_DIR=pod_dir, **extra)


def start_app(pod_dir, args, cwd):
    """A server as a container would run it: its own mount namespace with a
    private /tmp, the socket directory bound at /mnt/gtpod."""
    argv = [prog("server")] + args
    if NAMESPACES:
        private_tmp = "" if BUILD.startswith("/tmp") else "mount -t tmpfs gtpodtmp /tmp &&"
        argv = ["unshare", "-m", "sh", "-c", NAMESPACE % private_tmp, "sh"] + argv
        # The shim in the server only: in unshare, sh or mount it would ask
        # before the directory is bound, and tell the server its own socket.
        env = pod_env(pod_dir, GPUTRACE_SOCKET_DIR="/mnt/gtpod", GT_POD_PRELOAD=SHIM)
        del env["LD_PRELOAD"]
    else:
        env = pod_env(pod_dir, GPUTRACE_SOCKET_DIR=pod_dir)
    return subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_line(p):
    line = p.stdout.readline()
    if not line:
        raise AssertionError("server ended early: rc %s %s" % (p.wait(), p.stderr.read()))
    return line


def leaked(line):
    return int(line.split("leaked_bytes ")[1])


def by_kind_and_api(events, pid):
    return collections.Counter((e["kind"], e["api"]) for e in calls(select(events, pid=pid)))


def reference(args):
    """What a `gputrace record` run of the server has: its stdout line and
    its calls by kind and API."""
    ungated = args[:args.index("--gate")]
    p, trace = record([prog("server")] + ungated,
                      out=os.path.join(TMP, "ref_%s.gtrace" % "_".join(ungated)))
    events = dump(trace)
    pid = select(events, kind="process")[0]["pid"]
    return p.stdout, by_kind_and_api(events, pid)


def process_ends(events):
    return {e["pid"]: (e["dropped"], e["lost"]) for e in events
            if e["kind"] == "process" and e.get("phase") == "end"}


def test_two_containers_one_collector():
    pod_dir = os.path.join(TMP, "pod")
    out = os.path.join(TMP, "pod.gtrace")
    port = promrun.free_port()
    coll = start_collect(pod_dir, out, "--prometheus", "127.0.0.1:%d" % port)
    apps = [start_app(pod_dir, args, TMP) for args in SERVERS]
    lines = [read_line(a) for a in apps]  # each holds its leaked memory now
    pids = [a.pid for a in apps]  # unshare and sh exec'd into the server
    want = {("gputrace_device_memory_bytes", frozenset({("pid", str(p))})): leaked(l)
            for p, l in zip(pids, lines)}
    text, parsed = promrun.scrape_until(
        port, coll, lambda got: all(got.get(k) == v for k, v in want.items()))
    promrun.promtool_check(text)
    eq([c[0] for c in ours(pod_dir)], [coll.pid], "collectors while both run")
    for a in apps:
        _, err = a.communicate("\n", timeout=60)
        eq(a.returncode, 0, "server status (stderr: %s)" % err)
        eq([l for l in err.splitlines() if l.startswith("gputrace")], [], "shim warnings")
    time.sleep(1.5)  # past an autospawned collector's linger: this one stays
    eq(coll.poll(), None, "collect still running after its processes ended")
    later = subprocess.run([prog("server"), "--workers", "1", "--requests", "3", "--weights", "1"],
                           env=pod_env(pod_dir, GPUTRACE_SOCKET_DIR=pod_dir), cwd=TMP,
                           capture_output=True, text=True, timeout=60)
    eq(later.returncode, 0, "a later process's status (stderr: %s)" % later.stderr)
    eq([c[0] for c in ours(pod_dir)], [coll.pid], "collectors after a later process")
    err = stop(coll)
    if "records" not in err or out not in err:
        raise AssertionError("collect's closing line: %r" % err)
    eq(os.path.exists(os.path.join(pod_dir, "collector.sock")), False, "socket removed")
    events = dump(out)
    ends = process_ends(events)
    eq(len(ends), 3, "processes in the trace: %s" % sorted(ends))
    eq(sorted(ends.values()), [(0, 0)] * 3, "dropped and lost per process")
    eq(ring_drops(events), 0, "ring drops")
    eq(count(events, kind="lost"), 0, "lost records")
    for pid, args, line in zip(pids, SERVERS, lines):
        ref_out, ref_calls = reference(args)
        eq(ref_calls[("launch", "cudaGraphLaunch")] > 0, True, "graph launches in the reference")
        eq(line, ref_out, "server output traced by the pod's collector")
        eq(by_kind_and_api(events, pid), ref_calls, "calls of pid %d by kind and API" % pid)
        named = {(f["function"], f["module"]) for f in select(events, kind="frame", pid=pid)}
        eq(("embed_cache_grow(unsigned long)", "server") in named, True,
           "the leak's frame of pid %d named: %s" % (pid, sorted(named)[:8]))
        eq(pid in ends, True, "pid %d in the trace" % pid)


def test_default_socket_dir():
    """No GPUTRACE_SOCKET_DIR: the socket directory's stand-alone collector
    serves a process without GPUTRACE_OUTPUT; one with it gets its own
    trace, as before."""
    runtime = os.path.join(TMP, "xdg")
    os.makedirs(runtime, mode=0o700)
    out = os.path.join(TMP, "default.gtrace")
    coll = start_collect(os.path.join(runtime, "gputrace"), out)
    cwd = os.path.join(TMP, "default_cwd")
    os.makedirs(cwd)
    args = [prog("server"), "--workers", "1", "--requests", "2", "--weights", "1"]
    served = subprocess.run(args, env=pod_env(runtime, XDG_RUNTIME_DIR=runtime), cwd=cwd,
                            capture_output=True, text=True, timeout=60)
    eq((served.returncode, served.stderr), (0, ""), "a served process")
    own = os.path.join(TMP, "own.gtrace")
    run(args, pod_env(runtime, XDG_RUNTIME_DIR=runtime, GPUTRACE_OUTPUT=own), check_rc=0)
    eq(os.listdir(cwd), [], "no trace in the working directory")
    stop(coll)
    eq(len(process_ends(dump(out))), 1, "processes the stand-alone collector served")
    deadline = time.time() + 20
    while ours(runtime) and time.time() < deadline:
        time.sleep(0.05)  # the autospawned one finishes a second after its process
    eq(len(process_ends(dump(own))), 1, "processes in the GPUTRACE_OUTPUT trace")
    eq(served.stdout.startswith("server: workers 1 requests 2"), True, "served output")


def test_none_listening():
    """A socket left by a collector killed with SIGKILL is no collector: the
    process starts its own for its GPUTRACE_OUTPUT, as before; a new
    collect for the directory takes the socket over."""
    pod_dir = os.path.join(TMP, "stale")
    coll = start_collect(pod_dir, os.path.join(TMP, "stale.gtrace"))
    coll.kill()
    coll.wait()
    eq(os.path.exists(os.path.join(pod_dir, "collector.sock")), True, "stale socket")
    own = os.path.join(TMP, "stale_own.gtrace")
    # Not through pipes: the collector it starts keeps its stderr.
    p = subprocess.run([prog("server"), "--workers", "1", "--requests", "2", "--weights", "1"],
                       env=pod_env(pod_dir, GPUTRACE_SOCKET_DIR=pod_dir, GPUTRACE_OUTPUT=own),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    eq(p.returncode, 0, "the server's status")
    eq([("--autospawn" in c[1]) for c in ours(pod_dir)], [True],
       "the process's own collector, lingering (as test 1 would see one)")
    deadline = time.time() + 20
    while ours(pod_dir) and time.time() < deadline:
        time.sleep(0.05)
    eq(len(process_ends(dump(own))), 1, "processes in the autospawned collector's trace")
    again = start_collect(pod_dir, os.path.join(TMP, "stale_again.gtrace"))
    stop(again)  # the stale socket and lock are taken over


def test_one_per_dir_and_sigint():
    """A second collect for the same directory is refused (status 1, named);
    SIGINT stops the first, which finishes its (empty) trace; an existing
    output is refused without --force."""
    pod_dir = os.path.join(TMP, "twice")
    out = os.path.join(TMP, "twice.gtrace")
    first = start_collect(pod_dir, out)
    second = run([GPUTRACE, "collect", "--socket-dir", pod_dir, "-o",
                  os.path.join(TMP, "twice2.gtrace")], base_env(), timeout=20)
    eq((second.returncode, second.stderr),
       (1, "gputrace-collector: another collector listens on %s/collector.sock\n" % pod_dir),
       "a second collector")
    eq(first.poll(), None, "the first still runs")
    stop(first, signal.SIGINT)
    eq(os.path.exists(out), True, "the trace of SIGINT")
    again = run([GPUTRACE, "collect", "--socket-dir", pod_dir, "-o", out], base_env(), timeout=20)
    eq(again.returncode, 1, "an existing output")
    if "exists" not in again.stderr:
        raise AssertionError("message: " + again.stderr)
    bad = run([GPUTRACE, "collect", "--socket-dir", out, "-o", out + "2"], base_env())
    eq((bad.returncode, bad.stderr),
       (2, "gputrace collect: cannot listen in %s: not a directory\n" % out), "a file as DIR")


def test_unseen_pid_namespace():
    """A collector that cannot see a process's pid namespace (the kernel
    gives its pid as 0: a pod without a shared process namespace) could not
    tell such processes apart: it refuses them, the process says so and
    runs untraced, and the trace names it."""
    probe = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "true"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        print("NOTE: unshare -p is not permitted here (%s): not checked" % probe.stderr.strip())
        return
    pod_dir = os.path.join(TMP, "pidns")
    out = os.path.join(TMP, "pidns.gtrace")
    p = subprocess.Popen(["unshare", "-p", "-f", "--kill-child", "--mount-proc", GPUTRACE,
                          "collect", "--socket-dir", pod_dir, "-o", out], env=base_env(),
                         stderr=subprocess.PIPE, text=True)
    STARTED.append(p)
    deadline = time.time() + 20
    while not listening(pod_dir) and p.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    app = run([prog("server"), "--workers", "1", "--requests", "2", "--weights", "1"],
              pod_env(pod_dir, GPUTRACE_SOCKET_DIR=pod_dir), check_rc=0)
    warned = [l for l in app.stderr.splitlines() if l.startswith("gputrace")]
    eq(len(warned), 1, "the shim's warnings: %s" % warned)
    if not warned[0].startswith("gputrace: no collector at %s/collector.sock (handshake: "
                                "Permission denied); pid " % pod_dir):
        raise AssertionError("the shim's warning: " + warned[0])
    (coll, _), = ours(pod_dir)  # PID 1 of its namespace: signalled from here
    os.kill(coll, signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    eq(p.returncode, 0, "collect in its pid namespace (stderr: %s)" % err)
    events = dump(out)
    notes = [e["note"] for e in events if e["kind"] == "note" and "ran untraced" in e["note"]]
    eq(len(notes), 1, "untraced notes: %s" % notes)
    if "pid namespace the collector cannot see" not in notes[0]:
        raise AssertionError("the note: " + notes[0])
    eq(count(events, kind="process"), 0, "process records")


main([test_two_containers_one_collector, test_default_socket_dir, test_none_listening,
      test_one_per_dir_and_sigint, test_unseen_pid_namespace])
