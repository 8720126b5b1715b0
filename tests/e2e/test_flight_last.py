"""snapshot --last DURATION is exact: a server program (3 workers, two
streams each, a decode graph captured per worker and replayed per request,
NVTX request types, idle gaps, a leak) runs ~30 s under --flight-recorder
10s. Stopped (SIGSTOP: nothing more comes), it is snapshotted twice, with
--last 5s and whole: the --last snapshot's own records are exactly the
whole window's own records stamped at or after its cut (the NOTE it opens
with) — the same records, byte for byte as dump prints them, so the same
counts by kind, kernel names and stacks — however the cut falls in the
segments; what is before the cut is kept only as what the rest needs (the
definitions, flagged replayed; the blocks live at the cut and the peaks,
carried; the graphs' making, replayed): leaks reads the same leaked bytes,
blocks, peak and lines from both, report's graph launches run their
kernels, and report, leaks, chrome, html and export read it without a
warning. --last longer than the window is the whole window."""
import json
import os
import re
import signal
import subprocess
import threading
import time
from gtest import *
from test_flight_recorder import check_readers  # every reader, no warning

SERVER = ["--workers", "3", "--requests", "280", "--hold", "100", "--leak-every", "20"]
LEAK_LINE, WEIGHTS_LINE = 73, 68  # server.cu's embed_cache_grow, load_weights
OWN_SKIP = ("replayed", "carried")


def own(records):
    """A snapshot's records of its own: not repeated from before its window."""
    return [r for r in records if not any(r.get(k) for k in OWN_SKIP)]


def server_pid(rec):
    with open("/proc/%d/task/%d/children" % (rec.pid, rec.pid)) as f:
        kids = [int(x) for x in f.read().split()]

    def name(pid):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return os.path.basename(f.read().split(b"\0")[0])
    kids = [k for k in kids if name(k) == b"server"]
    eq(len(kids), 1, "record's children running server")
    return kids[0]


def snapshot(target, out, *extra):
    if os.path.lexists(out):
        os.unlink(out)
    p = run([GPUTRACE, "snapshot", "-o", out] + list(extra) + [str(target)], base_env())
    eq(p.returncode, 0, "snapshot status (%s)" % p.stderr)
    return p


def leaks_of(path):
    p = run([GPUTRACE, "leaks", "--json", path], base_env(), check_rc=0)
    eq(p.stderr, "", "leaks' stderr on %s" % path)
    d = json.loads(p.stdout)
    return ([(t["device"]["bytes"], t["device"]["blocks"]) for t in d["totals"]],
            d["peak"]["device_bytes"],
            sorted((g["bytes"], g["stack"][0]["file"].rsplit("/", 1)[-1],
                    g["stack"][0]["line"]) for g in d["leaks"]))


def test_last_is_exact():
    base = os.path.join(TMP, "last.gtrace")
    rec = subprocess.Popen([GPUTRACE, "record", "--flight-recorder", "10s", "-o", base,
                            "--", prog("server")] + SERVER, env=base_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = []
    threading.Thread(target=lambda: err.extend(rec.stderr), daemon=True).start()
    last, whole, longer = (os.path.join(TMP, n + ".gtrace") for n in ("l5", "lw", "l60"))
    try:
        deadline = time.time() + 10
        while not re.search(r"flight recorder in collector (\d+)", "".join(err)):
            if time.time() > deadline:
                raise AssertionError("record did not name its collector: %r" % err)
            time.sleep(0.05)
        collector = re.search(r"flight recorder in collector (\d+)", "".join(err)).group(1)
        time.sleep(16)  # the window (10 s) is full: older segments were dropped
        pid = server_pid(rec)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(1.0)  # the collector drains what was written
            snapshot(collector, last, "--last", "5s")
            snapshot(collector, whole)
            snapshot(collector, longer, "--last", "60s")
        finally:
            os.kill(pid, signal.SIGCONT)
        out, _ = rec.communicate(timeout=120)
    finally:
        if rec.poll() is None:
            rec.kill()
    eq(rec.returncode, 0, "record's status (%s)" % "".join(err))
    if not out.startswith("server: workers 3 requests 840"):
        raise AssertionError("the server's line: %r" % out)

    lrecs, wrecs = dump(last), dump(whole)
    notes = [r for r in lrecs if r["kind"] == "note" and
             r.get("note") == "flight recorder snapshot: the records from here on"]
    eq(len(notes), 1, "the cut's note in the --last snapshot")
    cut = notes[0]["ts_ns"]
    lown = [r for r in own(lrecs) if r is not notes[0]]
    wown = own(wrecs)
    first = min(r["ts_ns"] for r in wown if r.get("ts_ns"))
    if not first + 3e9 < cut:
        raise AssertionError("the cut (%d) is not inside the window (from %d)" % (cut, first))
    after = [r for r in wown if not r.get("ts_ns") or r["ts_ns"] >= cut]
    eq(lown == after[:len(lown)], True, "the --last snapshot's records are the window's "
       "from the cut (%d and %d of them)" % (len(lown), len(after)))
    calls = [r for r in after[len(lown):] if r["kind"] not in META_KINDS or r["kind"] == "device"]
    eq(calls, [], "calls of the window after the --last snapshot, the server stopped")
    eq([r for r in lown if r.get("ts_ns") and r["ts_ns"] < cut], [], "records before the cut")
    kinds = {r["kind"] for r in lown}
    for k in ("launch", "memcpy", "alloc", "free", "sync", "nvtx", "device"):
        if k not in kinds:
            raise AssertionError("no %s record after the cut: %r" % (k, sorted(kinds)))
    eq(any(r["api"] == "cudaGraphLaunch" for r in lown), True, "graph launches after the cut")
    eq([r["api"] for r in lown if r["kind"] == "graph"], [],
       "graph making after the cut (the graphs are captured at start-up)")
    # what the window's records refer to: every stack, every kernel named
    stacks = {r["id"] for r in lrecs if r["kind"] == "stack"}
    eq({r["stack_id"] for r in lown if r.get("stack_id")} - stacks, set(),
       "stacks referred to and not in the snapshot")
    eq([r for r in lown if r["kind"] == "launch" and not r.get("kernel")], [],
       "launches whose kernel is not named")
    eq(len([r for r in lrecs if r["kind"] == "alloc" and r.get("carried")]) > 0, True,
       "blocks carried across the cut")

    lleaks, wleaks = leaks_of(last), leaks_of(whole)
    eq(lleaks, wleaks, "leaks of the --last snapshot and of the whole window")
    # live while stopped: the weights (64 MiB) and the embedding cache's
    # leak (2 MiB a req:embed), allocated long before the cut, among others
    held = {(f, l): b for b, f, l in lleaks[2]}
    if held.get(("server.cu", WEIGHTS_LINE)) != 64 << 20 or \
            held.get(("server.cu", LEAK_LINE), 1) % (2 << 20):
        raise AssertionError("what the snapshot holds by line: %r" % (lleaks[2],))
    rep = json.loads(run([GPUTRACE, "report", "--json", last], base_env(), check_rc=0).stdout)
    eq(rep["recording"], [{"ts_ns": cut, "event": "snapshot_cut"}], "report's recording")
    # Each graph launched after the cut has its making (4 nodes); a worker
    # that launched none in the 5 s (a loaded machine) has none to replay.
    graphs = [g["nodes"] for g in rep["graphs"] if g["launches"] > 0]
    if not graphs or set(graphs) != {4}:
        raise AssertionError("graphs replayed after the cut: %r" % rep["graphs"])
    kern = {k["kernel"]: k for k in rep["kernels"]}
    eq(all(kern[k]["graph_launches"] > 0 for k in ("attn(float*)", "mlp(float*)")), True,
       "graph kernels run after the cut")
    check_readers(last)
    # a window younger than asked: all of it
    eq(own(dump(longer)) == wown, True, "--last 60s of a 10 s window is the whole window")


if __name__ == "__main__":
    main([test_last_is_exact])
