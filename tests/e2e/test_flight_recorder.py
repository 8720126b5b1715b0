"""The flight recorder (record --flight-recorder SIZE, GPUTRACE_FLIGHT_RECORDER):
nothing is written until asked; `gputrace snapshot` (and SIGUSR2) write the
window as one trace that every command reads; its calls are exactly the tail
of the run (the same calls, in the same order, as the tail of an unfiltered
trace of the same deterministic program), with every kernel name and stack
resolved and the allocations live at the window's start carried, so leaks
reports exactly the program's leaked bytes. A snapshot of a recorder that
holds nothing yet is an empty trace; a TARGET that is no flight recorder is
status 2 with a clear line. A graph made before the window still runs its
kernel in the snapshot; with --keep the window is the last DURATION."""
import collections
import json
import os
import re
import signal
import subprocess
import threading
import time
from gtest import *

ROUNDS = 250000  # 750,000 launches: about 5 MiB of trace, past a 4 MiB window
WINDOW = "4MiB"
EARLY_LINE, LATE_LINE = 38, 44  # flight.cu's two leaks
LEAKED = (3 << 20) + (5 << 20)
KERNELS = {"k_embed(int)", "k_attend(int)", "k_sample(int)"}
CALL_KINDS = ("launch", "alloc", "free", "sync")
# A ring that holds the whole storm: a collector slowed by a loaded machine
# drops nothing, so the runs compare exactly.
RING = ["--ring-kb", "131072"]


def call_key(r):
    """What a call is, run after run (no times, pointers or sampled stacks)."""
    return (r["kind"], r["api"], r.get("kernel"), r.get("corr"), r.get("bytes"), r["result"])


def scan(path, err=""):
    """One pass over dump --json (a million records: not kept): the calls
    of the trace's own (not carried or replayed), and what the checks need."""
    s = {"calls": [], "corrs": [], "kernels": set(), "stacks": set(), "stack_refs": set(),
         "carried": [], "names": collections.Counter(), "records": 0, "drops": 0}
    p = subprocess.Popen([GPUTRACE, "dump", "--json", path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        r = json.loads(line)
        s["records"] += 1
        if r.get("stack_id"):
            s["stack_refs"].add(r["stack_id"])
        kind = r["kind"]
        if kind == "stack":
            s["stacks"].add(r["id"])
        elif kind == "kernel_name":
            s["names"][r["mangled"]] += 1
        elif kind == "drop" and r.get("of_kind") != "device":
            s["drops"] += r["count"]
        elif kind == "alloc" and r.get("carried"):
            s["carried"].append(r["bytes"])
        if kind in CALL_KINDS and not r.get("carried") and not r.get("replayed"):
            s["calls"].append(call_key(r))
            if kind == "launch":
                s["corrs"].append(r["corr"])
                s["kernels"].add(r.get("kernel"))
    eq((p.wait(), p.stderr.read()), (0, err), "dump of %s" % path)
    return s


class Paused:
    """`record [ARGS] -- flight ROUNDS` until the program says it paused;
    stderr kept (the collector's pid is in it); resume() lets it finish."""

    def __init__(self, args, env, *prog_args, settle=2.0, cpus=None):
        self.err = []
        self.p = subprocess.Popen([GPUTRACE, "record"] + args +
                                  ["--", prog("flight"), str(ROUNDS)] + list(prog_args),
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  preexec_fn=on_cpus(cpus))
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        self.out = []
        for line in self.p.stdout:
            self.out.append(line)
            if line.startswith("flight: paused"):
                break
        else:
            raise AssertionError("flight never paused: %r %r" % (self.out, self.err))
        time.sleep(settle)  # the collector drains and symbolizes what is left

    def collector(self):
        deadline = time.time() + 10
        while not re.search(r"in collector \d+", "".join(self.err)) and time.time() < deadline:
            time.sleep(0.05)
        m = re.search(r"flight recorder in collector (\d+)", "".join(self.err))
        assert m, "record did not name its collector: %r" % self.err
        return int(m.group(1))

    def resume(self):
        self.p.stdin.write("\n")
        self.p.stdin.close()
        rest = self.p.stdout.read()
        eq(self.p.wait(timeout=120), 0, "record's status (%s)" % "".join(self.err))
        return "".join(self.out) + rest


def snapshot(target, out, *extra, rc=0):
    if os.path.lexists(out):
        os.unlink(out)
    p = run([GPUTRACE, "snapshot", "-o", out] + list(extra) + [str(target)], base_env())
    eq(p.returncode, rc, "snapshot status (%s)" % p.stderr)
    return p


def full_run():
    """The same program unfiltered: the calls of the whole run."""
    out = os.path.join(TMP, "full.gtrace")
    if os.path.lexists(out):
        os.unlink(out)
    p = subprocess.run([GPUTRACE, "record", "-q", "-o", out] + RING +
                       ["--", prog("flight"), str(ROUNDS)],
                       env=base_env(), input="\n", capture_output=True, text=True, timeout=300)
    eq(p.returncode, 0, "the full run (%s)" % p.stderr)
    s = scan(out)
    eq(s["drops"], 0, "records the full run's ring dropped")
    return s["calls"]


def check_tail(snap, full):
    s = scan(snap)
    eq(s["drops"], 0, "records the ring dropped")
    got = s["calls"]
    if not 0 < len(got) < len(full):
        raise AssertionError("the snapshot holds %d of the run's %d calls: the window "
                             "dropped nothing, or kept nothing" % (len(got), len(full)))
    eq(got == full[-len(got):], True, "the snapshot's calls are the run's last %d" % len(got))
    corrs = s["corrs"]
    eq(corrs == list(range(corrs[0], corrs[0] + len(corrs))), True,
       "consecutive correlation ids from %d" % corrs[0])
    eq(corrs[-1], 3 * ROUNDS, "the last launch's correlation id")
    if corrs[0] <= 1:
        raise AssertionError("the window starts at the first launch: nothing was dropped")
    eq(s["kernels"], KERNELS, "every launch's kernel name")
    eq(s["stack_refs"] - s["stacks"], set(), "stacks referred to and not in the snapshot")
    # live at the window's start: the early block, and the round's scratch
    # block when the window opened between its allocation and its free
    if sorted(s["carried"]) not in ([3 << 20], [4096, 3 << 20]):
        raise AssertionError("carried blocks: %r" % s["carried"])
    eq(sorted(s["names"].values()), [1, 1, 1], "each kernel name once")


def check_leaks(snap):
    p = run([GPUTRACE, "leaks", "--json", snap], base_env(), check_rc=0)
    d = json.loads(p.stdout)
    eq([(t["device"]["bytes"], t["device"]["blocks"]) for t in d["totals"]], [(LEAKED, 2)],
       "leaked device bytes and blocks")
    eq(sorted((g["bytes"], g.get("carried_bytes", 0)) for g in d["leaks"]),
       [(3 << 20, 3 << 20), (5 << 20, 0)], "each leak's bytes, and those carried")
    lines = sorted(g["stack"][0]["line"] for g in d["leaks"])
    eq(lines, [EARLY_LINE, LATE_LINE], "the leaks' lines")
    eq({g["stack"][0]["file"].rsplit("/", 1)[-1] for g in d["leaks"]}, {"flight.cu"},
       "the leaks' file")


def check_readers(snap):
    for cmd in (["report"], ["leaks"], ["chrome", "-o", snap + ".json"],
                ["html", "-o", snap + ".html"], ["export", "-o", snap + ".sqlite"]):
        for f in (snap + ".json", snap + ".html", snap + ".sqlite"):
            if os.path.lexists(f):
                os.unlink(f)
        p = run([GPUTRACE] + cmd + [snap], base_env())
        eq((p.returncode, "warning" in p.stderr), (0, False),
           "gputrace %s of the snapshot (%s)" % (cmd[0], p.stderr))


def test_snapshot_is_the_runs_tail():
    full = full_run()
    base = os.path.join(TMP, "fr.gtrace")
    before = set(os.listdir(TMP))
    run_ = Paused(["--flight-recorder", WINDOW, "-o", base] + RING, base_env())
    try:
        eq(set(os.listdir(TMP)) - before, set(), "files written before the snapshot")
        pid = run_.collector()
        last = os.path.join(TMP, "fr-last.gtrace")
        snapshot(pid, last, "--last", "1ms")
        snap = os.path.join(TMP, "fr-snap.gtrace")
        p = snapshot(pid, snap)
        if not re.search(r"\d+ records \(\d+ segments, [0-9.]+ s\) written to " + re.escape(snap),
                         p.stderr):
            raise AssertionError("snapshot's line: %r" % p.stderr)
        os.kill(pid, signal.SIGUSR2)
        by_signal = base[:-len(".gtrace")] + ".snapshot-1.gtrace"
        deadline = time.time() + 30
        while not any("written to " + by_signal in l for l in run_.err) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        out = run_.resume()
    eq("leaked_bytes %d" % LEAKED in out, True, "the program's line: %r" % out)
    check_tail(snap, full)
    check_leaks(snap)
    check_readers(snap)
    check_tail(by_signal, full)
    check_leaks(by_signal)
    # --last 1ms: the records of the last millisecond (test_flight_last.py):
    # none, the program paused 2 s before; a reader says so
    eq(scan(last, "gputrace dump: note: no CUDA call in %s: the flight recorder's window "
                  "it was cut to (snapshot --last) holds none\n" % last)["calls"], [],
       "--last 1ms's calls")
    eq(sorted(f for f in os.listdir(TMP) if f.startswith("fr.")), ["fr.snapshot-1.gtrace"],
       "files of the recorder after it ended")


def test_snapshots_wait_for_names():
    """SIGUSR2 and `gputrace snapshot` at the moment the program pauses, on
    a busy CPU (the symbolizer, at nice 19, behind): each snapshot waits for
    the names of the stacks taken before it was asked for, so both name the
    leaks' lines (they had none before: the snapshot was written at once)."""
    base = os.path.join(TMP, "nm.gtrace")
    busy = BusyCpu(0)
    run_ = Paused(["--flight-recorder", WINDOW, "-o", base] + RING, base_env(), settle=0,
                  cpus={0})
    try:
        pid = run_.collector()
        os.kill(pid, signal.SIGUSR2)
        snap = os.path.join(TMP, "nm-snap.gtrace")
        snapshot(pid, snap)
        by_signal = base[:-len(".gtrace")] + ".snapshot-1.gtrace"
        eq(wait_line(run_, "written to " + by_signal), True, "SIGUSR2's line: %r" % run_.err)
    finally:
        busy.stop()
        run_.resume()
    check_leaks(snap)
    check_leaks(by_signal)


def test_graph_made_before_the_window():
    """A graph captured at start-up (long before the window) and launched
    every 1,000 rounds: the snapshot repeats its making once, so its
    launches there run its kernel, and counts nothing of it as a call."""
    run_ = Paused(["--flight-recorder", WINDOW, "-o", os.path.join(TMP, "g.gtrace")],
                  base_env(), "1000")
    try:
        snap = os.path.join(TMP, "g-snap.gtrace")
        # a snapshot holds the symbols named when asked (cli.md): on a loaded
        # machine the symbolizer (nice 19) may be later than Paused's 2 s
        for _ in range(20):
            snapshot(run_.collector(), snap)
            rep = json.loads(run([GPUTRACE, "report", "--json", snap], base_env()).stdout)
            if all("??" not in g["captured_at"] for g in rep["graphs"]):
                break
            time.sleep(1)
    finally:
        out = run_.resume()
    eq("graph_launches %d" % (ROUNDS // 1000) in out, True, "the program's line: %r" % out)
    p = run([GPUTRACE, "report", "--json", snap], base_env())
    eq((p.returncode, p.stderr), (0, ""), "report of the snapshot")
    rep = json.loads(p.stdout)
    api = {a["api"]: a["calls"] for a in rep["api"]}
    launches = api.get("cudaGraphLaunch", 0)
    if not 0 < launches < ROUNDS // 1000:
        raise AssertionError("graph launches in the snapshot: %d" % launches)
    eq([(g["nodes"], g["launches"], g["captured_at"].split(" at ")[-1]) for g in rep["graphs"]],
       [(1, launches, "flight.cu:29")], "the graph, its launches, where it was captured")
    kern = {k["kernel"]: k for k in rep["kernels"]}
    eq((kern["k_graph(int)"]["launches"], kern["k_graph(int)"]["graph_launches"]),
       (launches, launches), "k_graph: one run per graph launch")
    eq([a for a in ("cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiate")
        if a in api], [], "the graph's making counted as calls of the window")


def keeps_the_last_second(window, name):
    """`record WINDOW` of a steady loop (a launch every ~2 ms for ~4 s) keeps
    the last second, give or take a segment (a quarter of it), counted from
    its last record: the launches up to the last, in a row, over at least a
    second and well under the run."""
    env = base_env()
    p = subprocess.Popen([GPUTRACE, "record"] + window + ["-o",
                          os.path.join(TMP, name + ".gtrace"), "--", prog("steady"), "2000",
                          "1999"],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    err = []
    threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
    try:
        while not p.stdout.readline().startswith("steady: paused"):
            pass
        time.sleep(1.5)  # quiet: age counts from the last record, not the clock
        m = re.search(r"flight recorder in collector (\d+)", "".join(err))
        assert m, "record did not name its collector: %r" % err
        snap = os.path.join(TMP, name + "-snap.gtrace")
        snapshot(m.group(1), snap)
    finally:
        p.communicate("\n", timeout=60)
    launches = [r for r in dump(snap) if r["kind"] == "launch"]
    corrs = [r["corr"] for r in launches]
    eq(corrs == list(range(corrs[0], 2000)), True, "launches %d..%d in a row, to the last" %
       (corrs[0], corrs[-1]))
    span = (launches[-1]["ts_ns"] - launches[0]["ts_ns"]) / 1e9
    if not 1.0 <= span < 2.5 or len(launches) > 1500:
        raise AssertionError("%d launches over %.2f s kept by %s" % (len(launches), span, window))


def test_keep_bounds_the_window_in_time():
    """--flight-recorder SIZE --keep 1s: the last second."""
    keeps_the_last_second(["--flight-recorder", WINDOW, "--keep", "1s"], "k")


def test_flight_recorder_duration():
    """--flight-recorder 1s: --keep 1s within the default cap (1 GiB): the
    last second; with --keep as well, refused."""
    keeps_the_last_second(["--flight-recorder", "1s"], "kd")
    p = run([GPUTRACE, "record", "--flight-recorder", "1s", "--keep", "2s", "-o",
             os.path.join(TMP, "kk.gtrace"), "--", prog("steady"), "2", "1"], base_env())
    if p.returncode == 0 or "--flight-recorder DURATION is the window's --keep" not in p.stderr:
        raise AssertionError("--flight-recorder 1s --keep 2s: %d %r" % (p.returncode, p.stderr))


def test_plain_preload_knob():
    """GPUTRACE_FLIGHT_RECORDER under plain LD_PRELOAD: nothing at
    GPUTRACE_OUTPUT; SIGUSR2 writes BASE.snapshot-1.gtrace."""
    out = os.path.join(TMP, "plain.gtrace")
    env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_FLIGHT_RECORDER=WINDOW)
    p = subprocess.Popen([prog("flight"), "20000"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        while not p.stdout.readline().startswith("flight: paused"):
            pass
        time.sleep(1.0)
        pid = collector_pid(out)
        assert pid, "no collector for %s" % out
        eq(os.path.lexists(out), False, "GPUTRACE_OUTPUT written by a flight recorder")
        os.kill(pid, signal.SIGUSR2)
        snap = os.path.join(TMP, "plain.snapshot-1.gtrace")
        deadline = time.time() + 30
        while not os.path.exists(snap) and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # written under its lock, marked complete at the end
    finally:
        p.communicate("\n", timeout=60)
    eq(len(scan(snap)["corrs"]), 3 * 20000, "launches of a window that dropped nothing")
    eq(os.path.lexists(out), False, "GPUTRACE_OUTPUT after the run")


def test_plain_preload_death():
    """Under plain LD_PRELOAD nothing waits for the program but the
    collector, which sees it die: abort() (SIGABRT) leaves one snapshot
    ending at its last launch, its leaks exact; _exit() is an end, not a
    death: none."""
    for how, rc, want in (("abort", -signal.SIGABRT, ["pd-abort.signal-1.gtrace"]),
                          ("_exit", 0, [])):
        out = os.path.join(TMP, "pd-%s.gtrace" % how)
        env = base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out, GPUTRACE_FLIGHT_RECORDER=WINDOW,
                       GPUTRACE_RING_KB="131072", GPUTRACE_QUIET="0")
        p = subprocess.Popen([prog("flight"), "20000"], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while not p.stdout.readline().startswith("flight: paused"):
            pass
        time.sleep(1.0)
        pid = collector_pid(out)
        assert pid, "no collector for %s" % out
        p.stdin.write(how + "\n")
        p.stdin.flush()
        deadline = time.time() + 5  # the program's end: its zombie waits for our wait
        while time.time() < deadline and open("/proc/%d/stat" % p.pid).read().split(")")[1].split()[0] != "Z":
            time.sleep(0.01)
        deadline = time.time() + 30
        while os.path.exists("/proc/%d" % pid) and time.time() < deadline:
            time.sleep(0.1)  # the collector writes the snapshot, then ends
        eq(p.wait(timeout=60), rc, "the program's status after %s" % how)
        err = p.stderr.read()
        eq(sorted(f for f in os.listdir(TMP) if f.startswith("pd-%s." % how)), want,
           "snapshots after %s (%s)" % (how, err))
        if want:
            snap = os.path.join(TMP, want[0])
            corrs = scan(snap)["corrs"]
            eq((corrs == list(range(corrs[0], corrs[0] + len(corrs))), corrs[-1]),
               (True, 3 * 20000), "the run's last launches, in a row")
            d = json.loads(run([GPUTRACE, "leaks", "--json", snap], base_env(), check_rc=0).stdout)
            eq(sorted((g["bytes"], g["stack"][0]["line"]) for g in d["leaks"]),
               [(3 << 20, EARLY_LINE), (5 << 20, LATE_LINE)], "the leaks and their lines")
    # _exit() marks the ring as exit() does (the shim's _exit): a trace says so
    for how, exited in (("_exit", True), ("abort", False)):
        out = os.path.join(TMP, "pe-%s.gtrace" % how)
        p = subprocess.run([GPUTRACE, "record", "-q", "-o", out, "--", prog("flight"), "200"],
                           env=base_env(), input=how + "\n", capture_output=True, text=True,
                           timeout=120)
        eq([r["exited"] for r in dump(out) if r["kind"] == "process" and r["phase"] == "end"],
           [exited], "the process's end after %s: exited (%s)" % (how, p.stderr))


def test_empty_recorder_and_bad_targets():
    run_ = Paused(["--flight-recorder", WINDOW, "-o", os.path.join(TMP, "e.gtrace")],
                  base_env(GPUTRACE_DISABLE=1))  # traced by nobody: the window holds nothing
    try:
        snap = os.path.join(TMP, "empty.gtrace")
        p = snapshot(run_.collector(), snap)
        if "0 records" not in p.stderr or "holds nothing yet" not in p.stderr:
            raise AssertionError("snapshot of an empty recorder: %r" % p.stderr)
        eq(dump(snap), [], "the empty snapshot's records")
    finally:
        run_.resume()
    bad = os.path.join(TMP, "bad.gtrace")
    for target, says in (("999999999", "999999999 is no flight recorder"),
                         (os.path.join(TMP, "nothing.sock"), "is no flight recorder"),
                         (str(os.getpid()), "is no flight recorder")):
        p = snapshot(target, bad, rc=2)
        if says not in p.stderr:
            raise AssertionError("snapshot %s: %r" % (target, p.stderr))
        eq(os.path.lexists(bad), False, "output of a refused snapshot")
    p = run([GPUTRACE, "snapshot", "-o", bad], base_env())
    eq(p.returncode, 2, "snapshot without TARGET")


def post(port, path, body=b"", host="127.0.0.1"):
    """(status, body) of a POST, as an Alertmanager's webhook makes it."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request("http://%s:%d%s" % (host, port, path), data=body,
                                 method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_line(run_, text, timeout=30):
    deadline = time.time() + timeout
    while not any(text in l for l in run_.err) and time.time() < deadline:
        time.sleep(0.1)
    return any(text in l for l in run_.err)


def test_snapshot_webhook():
    """--snapshot-webhook local: POST /snapshot on the --prometheus server
    (an Alertmanager's JSON body), sent as the program pauses, is 202 and
    writes BASE.alert-1.gtrace, the window as SIGUSR2's (the run's last
    launches in a row, the leaks exact and at their lines);
    two more within 10 s are 202 and coalesced, no second file; a peer off
    loopback is 403; POST elsewhere 405; without --prometheus refused."""
    import promrun
    port = promrun.free_port()
    base = os.path.join(TMP, "wh.gtrace")
    alert = os.path.join(TMP, "wh.alert-1.gtrace")
    body = json.dumps({"version": "4", "status": "firing", "receiver": "gputrace",
                       "alerts": [{"labels": {"alertname": "P99High"}}]}).encode()
    # Asked at once on a busy CPU: the snapshot waits for the late leak's
    # stack to be named.
    busy = BusyCpu(0)
    run_ = Paused(["--flight-recorder", WINDOW, "--prometheus", "0.0.0.0:%d" % port,
                   "--snapshot-webhook", "local", "-o", base] + RING, base_env(), settle=0,
                  cpus={0})
    try:
        eq(post(port, "/metrics")[0], 405, "POST /metrics")
        st, text = post(port, "/snapshot", body)
        eq((st, "alert-N.gtrace" in text), (202, True), "POST /snapshot: %r" % text)
        eq(wait_line(run_, "POST /snapshot: "), True, "the snapshot's line: %r" % run_.err)
        if not any(re.search(r"POST /snapshot: \d+ records of the last [0-9.]+ s written to " +
                             re.escape(alert), l) for l in run_.err):
            raise AssertionError("the snapshot's line: %r" % run_.err)
        eq([post(port, "/snapshot", body)[0] for _ in range(2)], [202, 202], "two more")
        eq(wait_line(run_, "coalesced into the snapshot of"), True, "coalesced: %r" % run_.err)
        ours = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        ours = [a for a in ours if ":" not in a and not a.startswith("127.")]
        if ours:
            st, text = post(port, "/snapshot", body, host=ours[0])
            eq((st, "from this host only" in text), (403, True), "a peer at %s" % ours[0])
        else:
            print("SKIP the 403 of a peer off loopback: this host has no other IPv4 address")
    finally:
        busy.stop()
        run_.resume()
    eq(sorted(f for f in os.listdir(TMP) if f.startswith("wh.")), ["wh.alert-1.gtrace"],
       "files of the recorder")
    corrs = scan(alert)["corrs"]
    eq((corrs == list(range(corrs[0], corrs[0] + len(corrs))), corrs[-1]), (True, 3 * ROUNDS),
       "the run's last launches, in a row")
    check_leaks(alert)
    p = subprocess.run([GPUTRACE, "record", "--snapshot-webhook", "local", "--flight-recorder",
                        WINDOW, "-o", os.path.join(TMP, "whx.gtrace"), "--", prog("flight"), "2"],
                       env=base_env(), input="\n", capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or "it needs both" not in p.stderr:
        raise AssertionError("--snapshot-webhook without --prometheus: %d %r" %
                             (p.returncode, p.stderr))
    p = run([GPUTRACE, "record", "--snapshot-webhook", "everyone", "--", prog("flight"), "2"],
            base_env())
    if p.returncode != 2 or "local (POST from this host only) or any" not in p.stderr:
        raise AssertionError("--snapshot-webhook everyone: %d %r" % (p.returncode, p.stderr))


def command_pid(run_):
    """The traced command: `record`'s child."""
    with open("/proc/%d/task/%d/children" % (run_.p.pid, run_.p.pid)) as f:
        kids = [int(x) for x in f.read().split()]

    def program(pid):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0])
    kids = [k for k in kids if program(k) == b"flight"]  # not the collector
    eq(len(kids), 1, "record's children running flight")
    return kids[0]


def test_death_by_signal():
    """The command killed by SIGSEGV: `record` tells its collector, which
    writes BASE.signal-1.gtrace once the command's records are all taken:
    the run's last launches in a row, the leaks exact, one line naming the
    signal; record's status 139. Killed by SIGTERM (a stop on purpose): no
    snapshot."""
    for sig, name, want in ((signal.SIGSEGV, "ds", ["ds.signal-1.gtrace"]),
                            (signal.SIGTERM, "dt", [])):
        base = os.path.join(TMP, name + ".gtrace")
        run_ = Paused(["--flight-recorder", WINDOW, "-o", base] + RING, base_env())
        os.kill(command_pid(run_), sig)
        run_.p.stdin.close()
        eq(run_.p.wait(timeout=120), 128 + sig, "record's status after %s" % sig.name)
        time.sleep(0.2)  # the stderr thread reads the last lines
        said = [l for l in run_.err if "died of signal" in l]
        eq(sorted(f for f in os.listdir(TMP) if f.startswith(name + ".")), want,
           "snapshots after %s (%r)" % (sig.name, run_.err))
        if not want:
            eq(said, [], "a line for %s" % sig.name)
            continue
        snap = os.path.join(TMP, want[0])
        if len(said) != 1 or not re.search(r"pid \d+ died of signal 11 "
                                            r"\(Segmentation fault\): \d+ records of the last "
                                            r"[0-9.]+ s written to " + re.escape(snap), said[0]):
            raise AssertionError("the snapshot's line: %r" % run_.err)
        corrs = scan(snap)["corrs"]
        eq((corrs == list(range(corrs[0], corrs[0] + len(corrs))), corrs[-1]),
           (True, 3 * ROUNDS), "the run's last launches, in a row")
        check_leaks(snap)


if __name__ == "__main__":
    main([test_snapshot_is_the_runs_tail, test_graph_made_before_the_window,
          test_keep_bounds_the_window_in_time, test_flight_recorder_duration,
          test_plain_preload_knob, test_snapshot_webhook, test_death_by_signal,
          test_plain_preload_death,
          test_empty_recorder_and_bad_targets])
