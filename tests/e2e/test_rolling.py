"""Always-on recording: --max-size / --roll-size / --keep write a rolling
set of files (BASE.0001.gtrace, ...) that honours its limits; every file
reads on its own; the set reads as one trace (given the base name) and
equals one big trace of the same run; SIGUSR1 closes the current file."""
import glob
import os
import signal
import subprocess
import time
from gtest import *

MiB = 1 << 20


def files(base):
    return sorted(glob.glob(base[:-len(".gtrace")] + ".[0-9][0-9][0-9][0-9].gtrace"))


def test_set_equals_one_trace():
    base = os.path.join(TMP, "set.gtrace")
    # Device timing off: under load its DEVICE records trail the launches by
    # so much that the last file can hold nothing else.
    p, _ = record([prog("threads"), "50000"], out=base, GPUTRACE_GPU_TIMING="off")
    single = dump(base)
    os.unlink(base)
    run([GPUTRACE, "record", "-q", "-o", base, "--roll-size", "1MiB", "--max-size", "1GiB", "--",
         prog("threads"), "50000"], base_env(GPUTRACE_GPU_TIMING="off"), check_rc=0)
    fs = files(base)
    if len(fs) < 2:
        raise AssertionError("no rolling happened: %s" % fs)
    eq(os.path.exists(base), False, "no single file")
    rolled = dump(base)  # the base name opens the set
    for kind in ("launch", "sync", "stream"):
        eq(count(calls(rolled), kind=kind) + sum(e["count"] for e in select(rolled, kind="drop", of_kind=kind)),
           count(calls(single), kind=kind) + sum(e["count"] for e in select(single, kind="drop", of_kind=kind)),
           "%s calls (recorded + dropped) in the set and in one trace" % kind)
    eq(count(rolled, kind="process", phase="start"), 1, "the process once in the set")
    later_launches = 0
    for i, f in enumerate(fs):
        alone = dump(f)
        eq(count(alone, kind="process", phase="start"), 1, "%s names its process" % f)
        if os.path.getsize(f) > 1 * MiB + 1 * MiB:  # a file passes the size by one chunk at most
            raise AssertionError("%s is %d bytes" % (f, os.path.getsize(f)))
        # Every file alone names the kernels it launches: the names are
        # written again into each new file. (The last file can hold only
        # the run's tail — syncs, thread and process ends — so every file is
        # checked, and launches past the first file required.)
        launches = [e for e in calls(alone) if e["kind"] == "launch"]
        eq({e["kernel"] for e in launches} - {"work(int*)"}, set(), "%s names its kernels" % f)
        later_launches += len(launches) if i > 0 else 0
    if later_launches == 0:
        raise AssertionError("no launches past the first file: %s" % fs)


def test_graphs_in_a_later_file():
    """A graph captured at start-up and replayed for long: a later file of
    the set, read alone, still knows what the graph runs (the capture is
    replayed at its start) and counts nothing of it as its own calls."""
    import json
    base = os.path.join(TMP, "graphs.gtrace")
    run([GPUTRACE, "record", "-q", "-o", base, "--roll-size", "1MiB", "--max-size", "1GiB",
         "--", prog("graph_decode"), "100000", "5"], base_env(GPUTRACE_GPU_TIMING_SAMPLE=1),
        check_rc=0, timeout=300)
    fs = files(base)
    if len(fs) < 2:
        raise AssertionError("no rolling happened: %s" % fs)
    p = subprocess.run([GPUTRACE, "report", "--json", fs[-1]], capture_output=True, text=True)
    eq(p.returncode, 0, "report of the last file alone (%s)" % p.stderr)
    rep = json.loads(p.stdout)
    kern = {k["kernel"]: k for k in rep["kernels"]}
    if any(k.startswith("graph ") or k.startswith("0x") for k in kern):
        raise AssertionError("a graph counted as a kernel: %s" % sorted(kern))
    step = [g for g in rep["graphs"] if g["nodes"] == 7]
    eq(len(step), 1, "the step's executable in the last file")
    eq(step[0]["captured_at"].split(" at ")[-1].split(":")[0], "graph_decode.cu",
       "where it was captured, from the replayed capture")
    eq(kern["attn_block(float*, int)"]["graph_launches"], 2 * step[0]["launches"],
       "attn_block runs: 2 per launch of the step in this file")
    api = {a["api"]: a["calls"] for a in rep["api"]}
    eq((api.get("cudaStreamBeginCapture"), api.get("cudaGraphInstantiateWithFlags")),
       (None, None), "the replayed capture is not a call of this file")


def test_max_size_deletes_oldest():
    base = os.path.join(TMP, "capped.gtrace")
    p = run([GPUTRACE, "record", "-o", base, "--roll-size", "1MiB", "--max-size", "2MiB", "--",
             prog("threads"), "100000"], base_env(), check_rc=0)
    fs = files(base)
    total = sum(os.path.getsize(f) for f in fs)
    if total > 2 * MiB + 1 * MiB:
        raise AssertionError("the set holds %d bytes" % total)
    if fs[0].endswith(".0001.gtrace"):
        raise AssertionError("the oldest file was kept: %s" % fs)
    if "oldest files of" not in p.stderr:
        raise AssertionError("deletions not reported: " + p.stderr)
    rolled = dump(base)
    if not 0 < count(rolled, kind="launch") < 800000:
        raise AssertionError("launches left: %d" % count(rolled, kind="launch"))


def test_sigusr1_closes_the_current_file():
    base = os.path.join(TMP, "snap.gtrace")
    p = subprocess.Popen([GPUTRACE, "record", "-q", "-o", base, "--max-size", "1GiB", "--",
                          prog("steady"), "400"], env=base_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    coll = None
    for _ in range(200):
        kids = subprocess.run(["pgrep", "-P", str(p.pid), "-x", "gputrace-collec"],
                              capture_output=True, text=True).stdout.split()
        if kids:
            coll = int(kids[0])
            break
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(coll, signal.SIGUSR1)
    for _ in range(200):
        if len(files(base)) >= 2:
            break
        time.sleep(0.01)
    first = files(base)[0]
    snapshot = dump(first)  # readable while tracing goes on
    if count(snapshot, kind="launch") == 0:
        raise AssertionError("the closed file has no launches")
    p.communicate(timeout=60)
    eq(p.returncode, 0, "status")
    eq(count(dump(base), kind="launch"), 400, "launches across the set")


def test_keep_ages_out_files():
    base = os.path.join(TMP, "kept.gtrace")
    run([GPUTRACE, "record", "-q", "-o", base, "--keep", "400ms", "--", prog("steady"), "500"],
        base_env(), check_rc=0)
    fs = files(base)
    if fs[0].endswith(".0001.gtrace"):
        raise AssertionError("nothing aged out: %s" % fs)
    launches = count(dump(base), kind="launch")
    if not 0 < launches < 500:
        raise AssertionError("launches kept: %d" % launches)


main([test_set_equals_one_trace, test_graphs_in_a_later_file, test_max_size_deletes_oldest, test_sigusr1_closes_the_current_file,
      test_keep_ages_out_files])
