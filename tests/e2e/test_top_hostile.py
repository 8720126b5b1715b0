"""`gputrace top` against servers that are not a collector (docs/cli.md#top,
the caps in analyze/top.h), each a thread of this script:
 - endless headers: status 2, "headers over 16 KiB";
 - one endless line, and endless bodies of fixed-length lines on both
   endpoints: each body read to its 8 MiB cap and no further, the sample
   shown with what it lacks: "incomplete: both answers cut at 8 MiB" and
   exactly how many series past the caps (1024 processes, 1024 kernels);
 - 100k processes in one /metrics: 98,976 over the caps;
   in each, top's peak RSS (wait4) is at most 64 MiB;
 - a server that answers two samples, then trickles a byte every 0.1 s:
   SIGINT (piped), q and Ctrl-C (in tmux) end top during that fetch,
   status 0, the terminal restored, the connection closed by top;
 - CJK and fullwidth kernel names in tmux: every line within the 80
   columns of the pane, the kernel rows' figures under their headers.

Run: python3 test_top_hostile.py BUILD
"""
import multiprocessing
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import unicodedata

from promrun import *

RSS_MAX = 64 << 20
BODY_MAX = 8 << 20
FORK = multiprocessing.get_context("fork")


class Server:
    """A TCP server on a free port: answer(conn, path, n) for each request,
    n counting from 1. It runs in a process of its own: what it builds is
    not in this one, whose size a child's ru_maxrss includes (the
    resident set before the exec counts)."""

    def __init__(self, answer):
        self.answer = answer
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        self.addr = "127.0.0.1:%d" % sock.getsockname()[1]
        self.proc = FORK.Process(target=self.loop, args=(sock,), daemon=True)
        self.proc.start()
        sock.close()

    def loop(self, sock):
        n = 0
        while True:
            c, _ = sock.accept()
            n += 1
            threading.Thread(target=self.serve, args=(c, n), daemon=True).start()

    def serve(self, c, n):
        try:
            req = b""
            while b"\r\n\r\n" not in req:
                got = c.recv(4096)
                if not got:
                    return
                req += got
            self.answer(c, req.split(b" ")[1].decode(), n)
        except OSError:
            pass  # top closed it: what a cap does
        finally:
            c.close()

    def close(self):
        self.proc.kill()
        self.proc.join()


def forever(c, head, chunk):
    c.sendall(head)
    while True:
        c.sendall(chunk)


OK = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"


def top_rss(addr, *args):
    """`gputrace top -n 1 --interval 100ms ADDR`: (status, stdout, stderr, peak RSS)."""
    out, err = os.path.join(TMP, "top.out"), os.path.join(TMP, "top.err")
    with open(out, "w") as o, open(err, "w") as e:
        p = subprocess.Popen([GPUTRACE, "top", "-n", "1", "--interval", "100ms"] + list(args) +
                             [addr], env=base_env(), stdout=o, stderr=e)
        timer = threading.Timer(120, p.kill)  # a top that never ends fails, not hangs
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timer.cancel()
    return (os.waitstatus_to_exitcode(status), open(out).read(), open(err).read(),
            usage.ru_maxrss * 1024)


def check_rss(rss, what):
    print("%s: peak RSS %.1f MiB" % (what, rss / 1048576))
    if cmake_cache("GPUTRACE_SANITIZE"):  # ASan keeps freed buffers in quarantine
        print("SKIP the RSS bound: a sanitizer build")
        return
    if rss > RSS_MAX:
        raise AssertionError("%s: top's peak RSS %.1f MiB > 64 MiB" % (what, rss / 1048576))


def second_line(out, what):
    lines = out.splitlines()
    if len(lines) < 3 or not lines[0].startswith("gputrace top "):
        raise AssertionError("%s: not one block of top's lines: %r" % (what, out))
    return lines[1]


def test_endless_headers():
    srv = Server(lambda c, path, n: forever(c, b"HTTP/1.0 200 OK\r\n",
                                            b"X-Filler: " + b"a" * 4096 + b"\r\n"))
    try:
        rc, out, err, rss = top_rss(srv.addr)
    finally:
        srv.close()
    check_rss(rss, "endless headers")
    eq((rc, out, err), (2, "", "gputrace top: %s/metrics: headers over 16 KiB, not a gputrace "
                        "collector\n" % srv.addr), "top against endless headers")


def test_one_endless_line():
    srv = Server(lambda c, path, n: forever(c, OK + b"gputrace_kernel_launches_total ",
                                            b"9" * 65536))
    try:
        rc, out, err, rss = top_rss(srv.addr)
    finally:
        srv.close()
    check_rss(rss, "one endless line")
    eq((rc, err), (0, ""), "top against one endless line")
    eq(second_line(out, "one endless line"), "incomplete: both answers cut at 8 MiB",
       "what the sample lacks")


KERNEL = b'gputrace_kernel_gpu_seconds_total{kernel="k%08d"} 1\n'
PROCESS = b'{"process":%d,"live_bytes":1048576,"peak_bytes":1048576,"launches":1}\n'


def endless_body(c, path, n):
    """Fixed-length lines past the cap: distinct kernels, distinct processes."""
    line = KERNEL if path == "/metrics" else PROCESS
    first = 10000000  # 8 digits each
    body = b"".join(line % i for i in range(first, first + BODY_MAX // (len(line % first)) + 2))
    forever(c, OK + body, (line % 99999999) * 1000)


def test_endless_bodies():
    srv = Server(endless_body)
    try:
        rc, out, err, rss = top_rss(srv.addr)
    finally:
        srv.close()
    check_rss(rss, "endless bodies")
    eq((rc, err), (0, ""), "top against endless bodies")
    # whole lines in each 8 MiB body, less the 1024 kernels and 1024 processes kept
    over = sum(BODY_MAX // len(l % 10000000) - 1024 for l in (KERNEL, PROCESS))
    eq(second_line(out, "endless bodies"),
       "incomplete: both answers cut at 8 MiB, %d series over the caps" % over,
       "what the sample lacks")
    if not re.search(r"^10000000 +1\.00 MiB +1\.00 MiB ", out, re.M):
        raise AssertionError("the first process kept is not shown:\n%s" % out)


def many_series(c, path, n):
    if path != "/metrics":
        c.sendall(b"HTTP/1.0 404 Not Found\r\n\r\n")
        return
    c.sendall(OK + b"".join(b'gputrace_device_memory_bytes{pid="%d"} %d\n' % (i, i << 10)
                            for i in range(1, 100001)))


def test_100k_series():
    srv = Server(many_series)
    try:
        rc, out, err, rss = top_rss(srv.addr)
    finally:
        srv.close()
    check_rss(rss, "100k series")
    eq((rc, err), (0, ""), "top against 100k processes")
    eq(second_line(out, "100k series"), "incomplete: 98976 series over the caps",
       "what the sample lacks")
    eq(out.splitlines()[3].split()[:3], ["1024", "1.00", "MiB"], "the first process row")


class Slow:
    """Two samples answered (a process, a kernel), then a trickle: the
    status line and a byte every 0.1 s for as long as the client stays."""

    def __init__(self):
        self.trickling, self.left = FORK.Event(), FORK.Event()
        self.srv = Server(self.answer)

    def answer(self, c, path, n):
        if n <= 4:
            c.sendall(OK + (b'gputrace_device_memory_bytes{pid="42"} 1048576\n'
                            if path == "/metrics" else b""))
            return
        self.trickling.set()
        c.sendall(OK)
        try:
            for _ in range(600):
                c.sendall(b"#")
                time.sleep(0.1)
        except OSError:
            self.left.set()  # top closed the connection
            raise


def test_sigint_during_a_slow_fetch():
    slow = Slow()
    try:
        p = subprocess.Popen([GPUTRACE, "top", "--interval", "100ms", slow.srv.addr],
                             env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        eq(slow.trickling.wait(30), True, "top's third sample reaches the trickle")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        eq((p.returncode, err), (0, ""), "status and stderr of top stopped by SIGINT mid-fetch")
        eq(slow.left.wait(10), True, "top closed the trickling connection")
        eq(out.count("gputrace top %s" % slow.srv.addr), 1, "the one sample drawn")
    finally:
        slow.srv.close()


def tmux(sock, *args):
    env = dict(os.environ, LC_ALL="C.UTF-8")  # tmux's own character widths
    return subprocess.run(["tmux", "-u", "-L", sock] + list(args), capture_output=True,
                          text=True, timeout=10, env=env)


def pane(sock):
    return "\n".join(l.rstrip() for l in tmux(sock, "capture-pane", "-p").stdout.splitlines())


def pane_until(sock, pred, what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = pane(sock)
        if pred(text):
            return text
        time.sleep(0.2)
    raise AssertionError("%s: the pane shows:\n%s" % (what, text))


def in_tmux(sock, addr):
    # the shell outlives a Ctrl-C (a trap), top gets it (a trap is not inherited)
    script = ('trap : INT; a=$(stty -g); "%s" top --interval 100ms %s; rc=$?; [ "$a" = "$(stty -g)" ] && '
              'echo "tty restored"; echo "top exited $rc"; sleep 60' % (GPUTRACE, addr))
    tmux(sock, "new-session", "-d", "-x", "80", "-y", "24", "sh", "-c", script)


def test_keys_during_a_slow_fetch():
    if not shutil.which("tmux"):
        print("SKIP: tmux is not installed (scripts/deps.sh installs it)")
        return
    for key in ("q", "C-c"):
        slow, sock = Slow(), "gt_top_slow_%d" % os.getpid()
        try:
            in_tmux(sock, slow.srv.addr)
            eq(slow.trickling.wait(30), True, "top's third sample reaches the trickle")
            pane_until(sock, lambda t: re.search(r"^42 +1\.00 MiB", t, re.M), "the sample drawn")
            tmux(sock, "send-keys", key)
            text = pane_until(sock, lambda t: "top exited" in t, "%s during the fetch" % key)
            eq(("tty restored" in text, "top exited 0" in text), (True, True),
               "after %s mid-fetch: stty settings and status:\n%s\n" % (key, text))
            eq(slow.left.wait(10), True, "top closed the trickling connection on %s" % key)
        finally:
            tmux(sock, "kill-server")
            slow.srv.close()


WIDE = ["核函数_ｆｕｌｌ", "ｆｕｌｌｗｉｄｔｈ::カーネル<漢字>(int)"]


def wide_kernels(c, path, n):
    if path != "/metrics":
        c.sendall(b"HTTP/1.0 404 Not Found\r\n\r\n")
        return
    c.sendall(OK + "".join('gputrace_kernel_gpu_seconds_total{kernel="%s"} %.3f\n' %
                           (k, n * (i + 1) / 1000) for i, k in enumerate(WIDE)).encode())


def columns(line):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def test_wide_names_in_a_terminal():
    if not shutil.which("tmux"):
        print("SKIP: tmux is not installed (scripts/deps.sh installs it)")
        return
    srv, sock = Server(wide_kernels), "gt_top_wide_%d" % os.getpid()
    try:
        in_tmux(sock, srv.addr)
        text = pane_until(sock, lambda t: all(k in t for k in WIDE), "wide names drawn")
        rows = [l for l in text.splitlines() if l.startswith(tuple(WIDE))]
        head = [l for l in text.splitlines() if l.startswith("KERNEL ")]
        eq((len(rows), len(head)), (2, 1), "the kernel rows and their header:\n%s\n" % text)
        for line in rows:  # the figures end where their header ends: the 79th column
            if not re.search(r" ms +\d+\.\d$", line) or columns(line) != columns(head[0]):
                raise AssertionError("a kernel row is not laid out in %d columns (%d):\n%s" %
                                     (columns(head[0]), columns(line), text))
        for line in text.splitlines():
            if columns(line) > 80:
                raise AssertionError("a line over 80 columns: %r" % line)
        tmux(sock, "send-keys", "q")
        pane_until(sock, lambda t: "top exited 0" in t, "q quits")
    finally:
        tmux(sock, "kill-server")
        srv.close()


if __name__ == "__main__":
    main([test_endless_headers, test_one_endless_line, test_endless_bodies, test_100k_series,
          test_sigint_during_a_slow_fetch, test_keys_during_a_slow_fetch,
          test_wide_names_in_a_terminal])
