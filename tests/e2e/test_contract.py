"""The shim and the collector share a ring only under one contract
(include/gputrace/protocol.h: protocol, ring version, kind and API counts).

basic runs untraced, then under plain LD_PRELOAD against a collector this
test starts (its own stderr apart): gputrace-collector-skewed (the same
collector built to claim 63 record kinds), a fake collector of protocol 1
(it answers a one-byte refusal, as collectors before the contract did), and
the real collector. Against the first two the program's stdout and exit
status are those of the untraced run and its stderr has exactly one line
more, the shim's, naming both contracts; the skewed collector notes the
refusal in its trace and on its stderr and reads nothing of the ring. Against
the real one nothing is added and the trace holds the program.
(A protocol 1 shim's hello, and one claiming another kind count, against the
real collector: e2e/test_hostile.py.)"""
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time
from gtest import *

SKEWED = os.path.join(BIN, "gputrace-collector-skewed")
COLLECTOR = os.path.join(BIN, "gputrace-collector")
HELLO_MAGIC = 0x4f4c4c4548544750  # "PGTHELLO"


def program_env(sock):
    """basic's environment, traced into the collector at `sock` (no spawn:
    GPUTRACE_OUTPUT unset), with the shim's notes on (no GPUTRACE_QUIET)."""
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_SOCKET=sock)
    del env["GPUTRACE_QUIET"]
    return env


def untraced_run():
    env = base_env()
    del env["GPUTRACE_QUIET"]
    return run([prog("basic")], env)


def wait_socket(path, proc, timeout=20):
    deadline = time.time() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None or time.time() > deadline:
            raise AssertionError("no collector listening at %s (status %r)" %
                                 (path, proc.poll()))
        time.sleep(0.02)


def with_collector(binary, name):
    """Start `binary` on a socket of its own; run basic traced into it; stop
    it (SIGTERM: it drains and closes the trace). Returns (basic's run, the
    collector's stderr, the trace's path)."""
    d = os.path.join(TMP, name)
    os.makedirs(d, mode=0o700)
    sock, out = os.path.join(d, "sock"), os.path.join(d, "trace.gtrace")
    coll = subprocess.Popen([binary, "--socket", sock, "--output", out, "--linger-ms",
                             "600000"], env=base_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_socket(sock, coll)
        p = run([prog("basic")], program_env(sock))
    finally:
        coll.send_signal(signal.SIGTERM)
        _, err = coll.communicate(timeout=60)
    eq(coll.returncode, 0, "the collector's status (stderr %r)" % err)
    return p, err, out


def one_line_more(p, plain, what):
    """p ran as `plain` did but for one more stderr line: that line."""
    eq((p.returncode, p.stdout), (plain.returncode, plain.stdout),
       "%s: basic's status and stdout against the untraced run's" % what)
    lines, plain_lines = p.stderr.splitlines(), plain.stderr.splitlines()
    extra = [l for l in lines if l not in plain_lines]
    eq(len(lines), len(plain_lines) + 1, "%s: stderr lines (%r)" % (what, lines))
    eq(len(extra), 1, "%s: new stderr lines (%r)" % (what, lines))
    return extra[0]


def test_skewed_collector_refuses():
    plain = untraced_run()
    p, err, out = with_collector(SKEWED, "skewed")
    line = one_line_more(p, plain, "skewed collector")
    m = re.fullmatch(r"gputrace: the collector at (.*) speaks contract (\S+), this shim (\S+) "
                     r"\(protocol/ring/kinds/APIs\): pid (\d+) runs untraced", line)
    if not m:
        raise AssertionError("the shim's line: %r" % line)
    eq(m.group(1), os.path.join(TMP, "skewed", "sock"), "the socket named")
    eq((m.group(2), m.group(3)), (contract(63), contract()), "the contracts named")
    pid = int(m.group(4))
    why = ("refused a shim of contract %s, this collector's %s (protocol/ring/kinds/APIs)" %
           (contract(), contract(63)))
    eq([l for l in err.splitlines() if "refused" in l],
       ["gputrace-collector: %s (pid %d)" % (why, pid)], "the collector's stderr")
    events = dump(out)
    eq([(e["kind"], e.get("note")) for e in events],
       [("note", "pid %d (%s) ran untraced: %s" % (pid, prog("basic"), why))],
       "the trace: the refusal's note, nothing of the ring")


def fake_v1_collector(path, got):
    """A collector of protocol 1: it refuses a hello of any other size with
    one byte, 'R'. Appends (bytes received, descriptors attached) to `got`."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(4)
    srv.settimeout(30)

    def serve():
        try:
            conn, _ = srv.accept()
            msg, anc, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(4 * 4))
            fds = [f for lvl, typ, data in anc if typ == socket.SCM_RIGHTS
                   for f in struct.unpack("%di" % (len(data) // 4), data)]
            got.append((msg, len(fds)))
            for f in fds:
                os.close(f)
            conn.send(b"R" if len(msg) != 1064 else b"K")
            conn.recv(1)  # until the shim closes
            conn.close()
        except OSError as e:
            got.append(("error", repr(e)))
        finally:
            srv.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_protocol1_collector_refuses():
    plain = untraced_run()
    d = os.path.join(TMP, "v1")
    os.makedirs(d, mode=0o700)
    sock, got = os.path.join(d, "sock"), []
    t = fake_v1_collector(sock, got)
    p = run([prog("basic")], program_env(sock))
    t.join(30)
    line = one_line_more(p, plain, "protocol 1 collector")
    m = re.fullmatch(r"gputrace: the collector at %s speaks contract 1, this shim %s "
                     r"\(protocol/ring/kinds/APIs\): pid (\d+) runs untraced" %
                     (re.escape(sock), re.escape(contract())), line)
    if not m:
        raise AssertionError("the shim's line: %r" % line)
    eq(len(got), 1, "hellos the fake collector took (%r)" % got)
    msg, nfds = got[0]
    eq((len(msg), nfds), (1080, 1), "the hello's bytes and descriptors")
    magic, protocol, ring, kinds, apis, pid = struct.unpack_from("<QIIIII", msg)
    eq((magic, "%d/%d/%d/%d" % (protocol, ring, kinds, apis), pid),
       (HELLO_MAGIC, contract(), int(m.group(1))),
       "the hello's magic, contract (the protocol where version 1's was) and pid")


def test_same_contract_traced():
    plain = untraced_run()
    p, err, out = with_collector(COLLECTOR, "same")
    eq((p.returncode, p.stdout, p.stderr), (plain.returncode, plain.stdout, plain.stderr),
       "basic traced: as untraced")
    eq([l for l in err.splitlines() if "refused" in l], [], "the collector refused nothing")
    events = dump(out)
    starts = select(events, kind="process", phase="start")
    eq([s["cmdline"] for s in starts], [prog("basic")], "basic traced")
    eq(count(events, kind="launch"), 15, "its launches")
    eq([e["note"] for e in events if e["kind"] == "note" and "untraced" in e["note"]], [],
       "no untraced note")


main([test_skewed_collector_refuses, test_protocol1_collector_refuses,
      test_same_contract_traced])
