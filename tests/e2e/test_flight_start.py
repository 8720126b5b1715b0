"""gputrace start/stop: a flight recorder (record --flight-recorder) switched
to full recording mid-run and back. The file holds exactly the launches
between start and stop (phase 2 of flight_phases: consecutive correlation
ids, the count the program prints), every kernel name and stack resolved,
the block live at start carried (leaks: the early and the mid leak, no
warning), and the two notes, started then stopped, at its two ends; report
reads it. After stop the window goes on: a snapshot then holds the stop's
note and phase 3. A second start, a stop while not recording and bad
targets are status 2 with a clear line, and leave no file."""
import json
import os
import re
import subprocess
import threading
import time
from gtest import *

ROUNDS = 2000  # per phase: 6,000 launches
KERNELS = {"k_embed(int)", "k_attend(int)", "k_sample(int)"}
MID_LINE, GRAPH_LINE = 47, 28  # flight_phases.cu's leak in phase 2, its graph's capture
STARTED, STOPPED = "recording started by gputrace start", "recording stopped by gputrace stop"


class Phases:
    """`record --flight-recorder ... -- flight_phases ROUNDS`, one phase at a
    time: next() lets the program run its next phase and waits for its
    pause; the phases' lines are kept."""

    def __init__(self, args, *prog_args, cpus=None):
        self.err, self.lines = [], []
        self.p = subprocess.Popen([GPUTRACE, "record"] + args +
                                  ["--", prog("flight_phases"), str(ROUNDS)] + list(prog_args),
                                  env=base_env(), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  preexec_fn=on_cpus(cpus))
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        self.wait_pause()

    def wait_pause(self):
        for line in self.p.stdout:
            self.lines.append(line)
            if line.startswith("phase: paused"):
                time.sleep(1.0)  # the collector drains and symbolizes what is left
                return
        raise AssertionError("no pause: %r %r" % (self.lines, self.err))

    def next(self):
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        self.wait_pause()

    def collector(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            m = re.search(r"flight recorder in collector (\d+)", "".join(self.err))
            if m:
                return int(m.group(1))
            time.sleep(0.05)
        raise AssertionError("record did not name its collector: %r" % self.err)

    def finish(self):
        self.p.stdin.write("\n")
        self.p.stdin.close()
        self.p.stdout.read()
        eq(self.p.wait(timeout=120), 0, "record's status (%s)" % "".join(self.err))

    def phase(self, n):
        for l in self.lines:
            m = re.match(r"phase: %d launches (\d+) first_corr (\d+)" % n, l)
            if m:
                return int(m.group(1)), int(m.group(2))
        raise AssertionError("no line of phase %d: %r" % (n, self.lines))


def ctl(cmd, target, *extra, rc=0):
    p = run([GPUTRACE, cmd] + list(extra) + [str(target)], base_env())
    eq(p.returncode, rc, "gputrace %s status (%s)" % (cmd, p.stderr))
    return p


def own(records, kind):
    return [r for r in records if r["kind"] == kind and not r.get("replayed")
            and not r.get("carried")]


def check_recording(path, launches, first_corr):
    recs = dump(path)
    got = own(recs, "launch")
    corrs = [r["corr"] for r in got]
    eq(corrs, list(range(first_corr, first_corr + launches)),
       "the file's launches: phase 2's, consecutive")
    eq({r.get("kernel") for r in got}, KERNELS, "every launch's kernel name")
    stacks = {r["id"] for r in recs if r["kind"] == "stack"}
    refs = {r["stack_id"] for r in recs if r.get("stack_id")}
    eq(refs - stacks, set(), "stacks referred to and not in the file")
    eq([r["note"] for r in own(recs, "note")], [STARTED, STOPPED], "the file's notes")
    notes = [i for i, r in enumerate(recs) if r["kind"] == "note" and not r.get("replayed")]
    launches_at = [i for i, r in enumerate(recs) if r["kind"] == "launch"]
    eq(notes[0] < launches_at[0] and launches_at[-1] < notes[1], True,
       "the notes at the file's two ends")
    eq(len(own(recs, "alloc")), ROUNDS + 1, "allocations: phase 2's scratch, the mid leak")


def check_readers(path):
    p = run([GPUTRACE, "leaks", "--json", path], base_env(), check_rc=0)
    eq("warning" in p.stderr, False, "leaks warns (%s)" % p.stderr)
    d = json.loads(p.stdout)
    eq(sorted((g["bytes"], g.get("carried_bytes", 0)) for g in d["leaks"]),
       [(3 << 20, 3 << 20), (7 << 20, 0)], "each leak's bytes, and those carried")
    eq(MID_LINE in [g["stack"][0]["line"] for g in d["leaks"]], True, "the mid leak's line")
    p = run([GPUTRACE, "report", path], base_env())
    eq((p.returncode, "warning" in p.stderr), (0, False), "report (%s)" % p.stderr)
    listed = re.findall(r"^  +([0-9.]+) s  (started|stopped) by gputrace (start|stop)$",
                        p.stdout.split("\nRecording (flight recorder: gputrace start/stop, "
                                       "snapshot --last)\n", 1)[-1], re.M)
    eq([(w, c) for _, w, c in listed], [("started", "start"), ("stopped", "stop")],
       "report's Recording lines")
    eq(float(listed[0][0]) <= float(listed[1][0]), True, "started before stopped")
    notes = [r["ts_ns"] for r in dump(path) if r["kind"] == "note" and not r.get("replayed")]
    rep = json.loads(run([GPUTRACE, "report", "--json", path], base_env(), check_rc=0).stdout)
    eq(rep["recording"], [{"ts_ns": notes[0], "event": "started"},
                          {"ts_ns": notes[-1], "event": "stopped"}], "report --json's recording")


def test_start_stop_records_the_middle():
    rec = os.path.join(TMP, "fs-started.gtrace")
    snap = os.path.join(TMP, "fs-after.gtrace")
    run_ = Phases(["--flight-recorder", "4MiB", "-o", os.path.join(TMP, "fs.gtrace")])
    try:
        pid = run_.collector()
        p = ctl("start", pid, "-o", rec)
        eq("recording to %s" % rec in p.stderr, True, "start's line: %r" % p.stderr)
        p = ctl("start", pid, "-o", rec + ".2", rc=2)
        eq("already recording" in p.stderr, True, "a second start's line: %r" % p.stderr)
        eq(os.path.lexists(rec + ".2"), False, "a refused start's file")
        run_.next()
        p = ctl("stop", pid)
        eq(re.search(r"\d+ records \([0-9.]+ s\) recorded", p.stderr) is not None, True,
           "stop's line: %r" % p.stderr)
        p = ctl("stop", pid, rc=2)
        eq("not recording" in p.stderr, True, "a stop while not recording: %r" % p.stderr)
        run_.next()
        ctl("snapshot", pid, "-o", snap)
    finally:
        run_.finish()
    check_recording(rec, *run_.phase(2))
    check_readers(rec)
    recs = dump(snap)
    eq([r["note"] for r in own(recs, "note") if r["note"].startswith("recording ")],
       [STARTED, STOPPED], "the window's notes (each switch on its side)")
    n3, first3 = run_.phase(3)
    corrs = [r["corr"] for r in own(recs, "launch")]
    eq(corrs[-n3:], list(range(first3, first3 + n3)), "phase 3 in the window after stop")
    eq(first3 - 1 in corrs, False, "phase 2's launches in the window")


def test_graph_made_before_start():
    """A graph captured before phase 1 and launched once a phase: the file
    (phase 2) repeats its making, so its one launch there runs k_graph, and
    counts nothing of the making as a call; on a busy CPU (the symbolizer,
    at nice 19, behind), the stop waits for the names of the stacks taken
    before it, so the graph's capture has its line (it had none: its names
    went to the window after the stop)."""
    rec = os.path.join(TMP, "fs-graph.gtrace")
    busy = BusyCpu(0)
    run_ = Phases(["--flight-recorder", "4MiB", "-o", os.path.join(TMP, "fsg.gtrace")], "1",
                  cpus={0})
    try:
        pid = run_.collector()
        ctl("start", pid, "-o", rec)
        run_.next()
        ctl("stop", pid)
    finally:
        busy.stop()
        run_.next()
        run_.finish()
    p = run([GPUTRACE, "report", "--json", rec], base_env())
    eq((p.returncode, p.stderr), (0, ""), "report of the file")
    rep = json.loads(p.stdout)
    api = {a["api"]: a["calls"] for a in rep["api"]}
    eq(api.get("cudaGraphLaunch"), 1, "graph launches in the file")
    eq([(g["nodes"], g["launches"], g["captured_at"].split(" at ")[-1]) for g in rep["graphs"]],
       [(1, 1, "flight_phases.cu:%d" % GRAPH_LINE)], "the graph, its launch, where captured")
    kern = {k["kernel"]: k for k in rep["kernels"]}
    eq((kern["k_graph(int)"]["launches"], kern["k_graph(int)"]["graph_launches"]), (1, 1),
       "k_graph: run by the graph launch")
    eq([a for a in ("cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiate")
        if a in api], [], "the graph's making counted as calls of the file")


def test_bad_targets():
    bad = os.path.join(TMP, "fs-bad.gtrace")
    for cmd in ("start", "stop"):
        for target in ("999999999", os.path.join(TMP, "nothing.sock"), str(os.getpid())):
            extra = ["-o", bad] if cmd == "start" else []
            p = ctl(cmd, target, *extra, rc=2)
            if "is no flight recorder" not in p.stderr or not p.stderr.startswith(
                    "gputrace %s: " % cmd):
                raise AssertionError("%s %s: %r" % (cmd, target, p.stderr))
            eq(os.path.lexists(bad), False, "output of a refused start")
        eq(run([GPUTRACE, cmd], base_env()).returncode, 2, "%s without TARGET" % cmd)


if __name__ == "__main__":
    main([test_start_stop_records_the_middle, test_graph_made_before_start, test_bad_targets])
