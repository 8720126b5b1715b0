"""The collector's HTTP server (`record --prometheus`) against a local user
holding connections open, and its address checks.

- ~1,000 half-sent `GET /metrics` requests held under `ulimit -n 1024`
  while traced processes start: they take at most the server's 32
  connections of the collector's descriptors, every process is traced, a
  scrape is answered, and the collector does not spin (CPU bounded).
- A port out of range is refused; port 0 picks one and says which.

Run: python3 test_http_limits.py BUILD
"""
import os
import re
import resource
import socket
import subprocess
import time

from promrun import *

HELD = 1000


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_scrape(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = scrape(port)
        if text is not None:
            return text
        time.sleep(0.2)
    return None


def hold(port, n):
    """n connections, each with a request cut before its blank line. Opened
    without waiting: past what the server takes, a connection waits in the
    kernel (or is refused there), as a capped server should have it."""
    held = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        held.append(s)
    time.sleep(0.5)
    for s in held:
        try:
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass  # not connected (yet): still held open
    return held


def test_held_connections_do_not_starve_tracing():
    port = free_port()
    out = os.path.join(TMP, "held.gtrace")
    go, stop = os.path.join(TMP, "held.go"), os.path.join(TMP, "held.stop")
    # three traced processes once the connections are held, then wait (the
    # collector serves until the command ends)
    script = ("until [ -e {go} ]; do sleep 0.05; done; for i in 1 2 3; do {p} 5 || exit 9; done; "
              "until [ -e {stop} ]; do sleep 0.05; done".format(go=go, stop=stop, p=prog("steady")))

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    p = subprocess.Popen([GPUTRACE, "record", "--prometheus", "127.0.0.1:%d" % port, "-o", out,
                          "--", "sh", "-c", script], env=base_env(), preexec_fn=low_limit,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    held = []
    try:
        if wait_scrape(port, 20) is None:
            raise AssertionError("the collector never served /metrics")
        collector = collector_pid(out)
        fds0 = len(os.listdir("/proc/%d/fd" % collector))
        cpu0, t0 = cpu_seconds(collector), time.time()
        held = hold(port, HELD)
        most = fds0
        for _ in range(30):  # the server takes what it takes
            most = max(most, len(os.listdir("/proc/%d/fd" % collector)))
            time.sleep(0.1)
        if most - fds0 > 32 + 8:
            raise AssertionError("held connections took %d of the collector's descriptors" %
                                 (most - fds0))
        open(go, "w").close()  # the traced processes start now
        time.sleep(4)  # a spinning server shows here
        answered = wait_scrape(port, 30)
        cpu = cpu_seconds(collector) - cpu0
        wall = time.time() - t0
        if answered is None:
            raise AssertionError("no scrape answered with %d connections held" % HELD)
        if cpu > 0.5 * wall:
            raise AssertionError("collector CPU %.2f s in %.2f s while connections were held" %
                                 (cpu, wall))
    finally:
        open(stop, "w").close()
        for s in held:
            s.close()
    _, err = p.communicate(timeout=120)
    eq(p.returncode, 0, "record's status (stderr %r)" % err)
    if "untraced" in err:
        raise AssertionError("a process ran untraced: %r" % err)
    events = dump(out)
    launches = by(events, "pid", kind="launch")
    eq(sorted(launches.values()), [5, 5, 5], "launches of the three processes started meanwhile")


def record_prometheus(addr):
    return run([GPUTRACE, "record", "--prometheus", addr, "-o", os.path.join(TMP, "port.gtrace"),
                "--force", "--", prog("steady"), "1"], base_env())


def test_port_checks():
    for addr in ("127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http"):
        p = record_prometheus(addr)
        eq(p.returncode, 2, "%s refused (stderr %r)" % (addr, p.stderr))
        if "bad --prometheus '%s'" % addr not in p.stderr or "port" not in p.stderr:
            raise AssertionError("%s: the message: %r" % (addr, p.stderr))
    p = record_prometheus("127.0.0.1:0")
    eq(p.returncode, 0, "port 0 (stderr %r)" % p.stderr)
    m = re.search(r"gputrace-collector: serving http://127\.0\.0\.1:(\d+)/metrics", p.stderr)
    if not m or not 0 < int(m.group(1)) < 65536:
        raise AssertionError("port 0: the port chosen is not said: %r" % p.stderr)


if __name__ == "__main__":
    main([test_held_connections_do_not_starve_tracing, test_port_checks])
