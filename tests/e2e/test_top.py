"""`gputrace top ADDR:PORT` on a running program (tests/cuda/top_target, built
with -g: 13 MiB held from two cudaMalloc sites, lines 29 and 30, a 2 MiB block
freed before, so a 15 MiB peak; launches and copies for as long as asked)
recorded with `record --prometheus 127.0.0.1:PORT` in the background:
 - in tmux (80x24): the pane shows the program's pid, its live and peak
   memory, launches/s > 0 and both sites by file:line; g and l move the sort
   mark, a resize to 100x30 redraws to fit, q quits, and the terminal is
   restored (stty settings, main screen);
 - piped, `-n 2`: the same figures as two blocks of plain lines;
 - without -n, when the program ends: "has gone", status 0;
 - nothing serving the address: the message and status 2.
The collector's /top.jsonl (collector/live_view.c) is checked line by line."""
import json
import re
import shutil
import subprocess
import time
import urllib.request
from promrun import *

SECONDS = 20
LIVE, PEAK = 13 << 20, 15 << 20


def jsonl(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/top.jsonl" % port, timeout=5) as r:
            return [json.loads(l) for l in r.read().decode().splitlines()]
    except OSError:
        return None


def program_pid(rec):
    """The traced program: the child of `gputrace record` named top_target."""
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            kids = open("/proc/%d/task/%d/children" % (rec.pid, rec.pid)).read().split()
        except OSError:
            kids = []
        for k in kids:
            try:
                if open("/proc/%s/comm" % k).read().strip() == "top_target":
                    return int(k)
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("no top_target child of gputrace record")


def start_run(port):
    out = os.path.join(TMP, "top_%d.gtrace" % port)
    rec = subprocess.Popen([GPUTRACE, "record", "-q", "--prometheus", "127.0.0.1:%d" % port,
                            "-o", out, "--", prog("top_target"), str(SECONDS)], env=base_env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pid = program_pid(rec)
    deadline = time.time() + 30
    while time.time() < deadline:  # held memory and its sites symbolized
        lines = jsonl(port) or []
        frames = [l for l in lines if "frame" in l and l.get("line") in (29, 30)]
        if any(l.get("process") == pid and l["live_bytes"] == LIVE for l in lines) and len(frames) == 2:
            return rec, pid, lines
        time.sleep(0.1)
    rec.kill()
    raise AssertionError("/top.jsonl never showed the program's memory: %r" % jsonl(port))


def check_jsonl(lines, pid):
    eq(lines[0], {"gputrace_top": 1}, "the first line of /top.jsonl")
    procs = [l for l in lines if "process" in l]
    eq([(p["process"], p["live_bytes"], p["peak_bytes"]) for p in procs], [(pid, LIVE, PEAK)],
       "processes of /top.jsonl")
    sites = [l for l in lines if "site" in l]
    eq([(s["site"], s["pid"], s["live_bytes"], s["blocks"]) for s in sites],
       [(1, pid, 12 << 20, 3), (2, pid, 1 << 20, 1)], "sites of /top.jsonl")
    for n, line in ((1, 29), (2, 30)):
        first = [l for l in lines if l.get("frame") == n][0]
        eq((first["function"], os.path.basename(first["file"]), first["line"]),
           ("main", "top_target.cu", line), "the innermost frame of site %d" % n)


def check_screen(text, pid, what):
    """The figures every view shows: the process row, the sites, the kernel."""
    row = re.search(r"^%d +13\.0 MiB +15\.0 MiB +([0-9.]+) +([0-9.]+)$" % pid, text, re.M)
    if not row or float(row.group(1)) <= 0:
        raise AssertionError("%s: no row of pid %d with 13.0 MiB live, 15.0 MiB peak and "
                             "launches/s > 0:\n%s" % (what, pid, text))
    for site in (r"^top_target\.cu:29 main +%d +12\.0 MiB +3$" % pid,
                 r"^top_target\.cu:30 main +%d +1\.00 MiB +1$" % pid,
                 r"^spin\(int\) ", r"^COPIES  HtoD \S+ \S+/s \(.*DtoH "):
        if not re.search(site, text, re.M):
            raise AssertionError("%s: no line matching %r:\n%s" % (what, site, text))
    for line in text.splitlines():
        if len(line) > 80:
            raise AssertionError("%s: a line over 80 columns: %r" % (what, line))


def tmux(sock, *args):
    return subprocess.run(["tmux", "-L", sock] + list(args), capture_output=True, text=True,
                          timeout=10)


def pane_until(sock, pred, what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = "\n".join(l.rstrip() for l in tmux(sock, "capture-pane", "-p").stdout.splitlines())
        if pred(text):
            return text
        time.sleep(0.2)
    raise AssertionError("%s: the pane shows:\n%s" % (what, text))


def in_tmux(port, pid):
    if not shutil.which("tmux"):
        print("SKIP tmux part: tmux is not installed (scripts/deps.sh installs it)")
        return
    sock = "gt_top_%d" % os.getpid()
    script = ('a=$(stty -g); "%s" top 127.0.0.1:%d; rc=$?; [ "$a" = "$(stty -g)" ] && '
              'echo "tty restored"; echo "top exited $rc"; sleep 60' % (GPUTRACE, port))
    tmux(sock, "new-session", "-d", "-x", "80", "-y", "24", "sh", "-c", script)
    try:
        text = pane_until(sock, lambda t: re.search(r"^%d +13\.0 MiB +15\.0 MiB +[0-9.]+ " % pid,
                                                    t, re.M) and "top_target.cu:30" in t,
                          "top in tmux")
        check_screen(text, pid, "top in tmux")
        if not re.search(r"^q quit .*l by launches", text.splitlines()[-1]):
            raise AssertionError("the keys on the bottom line:\n%s" % text)
        eq(len(text.splitlines()) <= 24, True, "lines of the 24-line pane")
        if not re.search(r"^PID +LIVE\* +PEAK +LAUNCH/S +GPU%$", text, re.M):
            raise AssertionError("memory sorts first:\n%s" % text)
        tmux(sock, "send-keys", "g")
        pane_until(sock, lambda t: re.search(r"^PID +LIVE +PEAK +LAUNCH/S +GPU%\*$", t, re.M),
                   "g sorts by GPU time")
        tmux(sock, "send-keys", "l")
        pane_until(sock, lambda t: re.search(r"^PID +LIVE +PEAK +LAUNCH/S\* +GPU%$", t, re.M),
                   "l sorts by launches")
        tmux(sock, "resize-window", "-x", "100", "-y", "30")  # SIGWINCH: redrawn to fit
        pane_until(sock, lambda t: len(t.splitlines()) == 30 and
                   t.splitlines()[-1].startswith("q quit") and
                   re.search(r"^KERNEL .{40,} GPU TIME", t, re.M), "redrawn at 100x30")
        screen = lambda: tmux(sock, "display", "-p", "#{alternate_on} #{cursor_flag}").stdout
        eq(screen(), "1 0\n", "alternate screen, cursor hidden, while top runs")
        tmux(sock, "send-keys", "q")
        text = pane_until(sock, lambda t: "top exited" in t, "q quits")
        eq(("tty restored" in text, "top exited 0" in text, screen()), (True, True, "0 1\n"),
           "after q: stty settings, status, main screen and cursor back:\n%s\n" % text)
    finally:
        tmux(sock, "kill-server")


def test_top_on_a_running_program():
    port = free_port()
    rec, pid, lines = start_run(port)
    try:
        check_jsonl(lines, pid)
        in_tmux(port, pid)
        p = run([GPUTRACE, "top", "-n", "2", "--interval", "500ms", "127.0.0.1:%d" % port],
                base_env(), timeout=30, check_rc=0)
        eq(p.stderr, "", "stderr of top -n 2")
        blocks = p.stdout.split("\n\n")
        eq((len(blocks), blocks[-1]), (3, ""), "two blocks of plain lines")
        for b in blocks[:2]:
            check_screen(b, pid, "top -n 2 (plain lines)")
            if "\x1b" in b:
                raise AssertionError("escape sequences in plain lines: %r" % b)
        p = run([GPUTRACE, "top", "127.0.0.1:%d" % port], base_env(), timeout=SECONDS + 60,
                check_rc=0)
        last = p.stdout.splitlines()[-1]
        if not re.fullmatch(r"gputrace top: 127\.0\.0\.1:%d has gone: the traced program "
                            r"finished \(\d+ samples shown\)" % port, last):
            raise AssertionError("top at the program's end: %r" % last)
        finish(rec)
        rec = None
    finally:
        if rec:
            rec.kill()
            rec.wait()


def test_nothing_serves():
    port = free_port()
    p = run([GPUTRACE, "top", "127.0.0.1:%d" % port], base_env(), timeout=20)
    eq((p.returncode, p.stdout, p.stderr),
       (2, "", "gputrace top: nothing serves 127.0.0.1:%d (start the program with gputrace "
        "record --prometheus 127.0.0.1:%d)\n" % (port, port)), "top on a free port")


if __name__ == "__main__":
    main([test_top_on_a_running_program, test_nothing_serves])
