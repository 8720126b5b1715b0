"""Security: trace files are 0600, socket directories 0700, and a
collector refuses a process of another user even when it can reach the
socket (SO_PEERCRED) — that process runs on untraced, unharmed."""
import os
import signal
import stat
import subprocess
import time
from gtest import *


def test_trace_file_mode():
    _, out = record([prog("basic")])
    eq(stat.S_IMODE(os.stat(out).st_mode), 0o600, "trace file mode")


def test_socket_directory_mode():
    env = base_env()
    d = os.path.join(env["XDG_RUNTIME_DIR"], "gputrace") if env.get("XDG_RUNTIME_DIR") and \
        os.path.isdir(env["XDG_RUNTIME_DIR"]) else "/tmp/gputrace-%d" % os.geteuid()
    record([prog("basic")])
    eq(stat.S_IMODE(os.stat(d).st_mode), 0o700, "socket directory mode of " + d)


def test_other_user_refused():
    if os.geteuid() != 0:
        print("SKIP: needs root to run a program as another user")
        return
    d = os.path.join(TMP, "shared")
    os.makedirs(d)
    os.chmod(d, 0o777)
    os.chmod(TMP, 0o755)
    sock = os.path.join(d, "c.sock")
    out = os.path.join(TMP, "sec.gtrace")
    coll = subprocess.Popen([os.path.join(BIN, "gputrace-collector"), "--socket", sock,
                             "--output", out], stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    os.chmod(sock, 0o666)  # reachable: only the uid check stands in the way
    env = base_env(standin=False, LD_PRELOAD=SHIM, GPUTRACE_SOCKET=sock)
    del env["GPUTRACE_QUIET"]
    plain = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 prog("no_driver")], base_env(standin=False))
    p = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", prog("no_driver")],
            env)
    coll.send_signal(signal.SIGTERM)
    _, coll_err = coll.communicate(timeout=30)
    eq((p.returncode, p.stdout), (plain.returncode, plain.stdout), "program unaffected")
    if "handshake" not in p.stderr or "runs untraced" not in p.stderr:
        raise AssertionError("shim warning: %r" % p.stderr)
    if "refused a process of another user" not in coll_err:
        raise AssertionError("collector said: %r" % coll_err)
    eq(count(dump(out), kind="launch"), 0, "nothing of the other user's in the trace")


main([test_trace_file_mode, test_socket_directory_mode, test_other_user_refused])
