"""Always-on recording: --max-size / --roll-size / --keep write a rolling
set of files (BASE.0001.gtrace, ...) that honours its limits; every file
reads on its own; the set reads as one trace (given the base name) and
equals one big trace of the same run; SIGUSR1 closes the current file; a
big graph cache does not crowd the kept set out."""
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


def read_status(p, what):
    """0, or 3 with an `incomplete:` warning (a file that lacks something)."""
    eq(p.returncode, 3 if "incomplete:" in p.stderr else 0, "%s (%s)" % (what, p.stderr))


def summary_records(path):
    p = subprocess.run([GPUTRACE, "dump", "--summary", path], capture_output=True, text=True)
    read_status(p, "dump --summary %s" % path)
    return int(p.stdout.split()[1])  # "records: N ..."


def report_json(path):
    import json
    p = subprocess.run([GPUTRACE, "report", "--json", path], capture_output=True, text=True)
    read_status(p, "report of %s" % path)
    return json.loads(p.stdout), p.stderr


def test_big_graph_cache():
    """A server with a big graph cache (100 graphs of 5,000 nodes captured at
    start-up and kept, more than the collector's 32 MiB graph cache holds),
    then a steady loop, recorded with --max-size 4MiB (1 MiB files, the
    default roll size): the kept set holds the steady launches, named, each
    file repeats only what it uses (graph 0, launched every 1,000
    iterations), and the graphs the cache had no room for are counted."""
    import re
    base = os.path.join(TMP, "cache.gtrace")
    graphs, nodes, steady = 100, 5000, 20000
    # The start-up burst (500,000 records) in a 128 MiB ring: under a
    # sanitizer on a busy machine the collector falls behind it, and the
    # count of graphs without room below needs every record.
    p = run([GPUTRACE, "record", "-o", base, "--max-size", "4MiB", "--ring-kb", "131072", "--",
             prog("graph_cache"), str(graphs), str(nodes), str(steady), "40000"], base_env(),
            check_rc=0, timeout=240)
    if re.search(r"[1-9]\d* records dropped", p.stderr):
        raise AssertionError("records dropped: %s" % p.stderr)
    eq(p.stdout.strip(), "steady: %d launches, %d graph launches" % (steady, steady // 1000),
       "the program's output")
    fs = files(base)
    rep, _ = report_json(base)
    kern = {k["kernel"]: k for k in rep["kernels"]}
    ticks = kern.get("tick(int)", {}).get("launches", 0)
    if ticks < 0.9 * steady:
        raise AssertionError("%d of %d steady launches in the kept set %s" % (ticks, steady, fs))
    # The files repeat little: what they hold read alone, less what the set
    # holds (each record once), is their repeats.
    alone = sum(summary_records(f) for f in fs)
    repeated = alone - summary_records(base)
    if repeated > alone // 10:
        raise AssertionError("the kept files repeat %d of their %d records" % (repeated, alone))
    sizes = [os.path.getsize(f) for f in fs]
    if sum(sizes) > 4 * MiB + 1 * MiB or max(sizes) > 2 * MiB:
        raise AssertionError("file sizes %s" % sizes)
    m = re.search(r"gputrace: \d+ records, (\d+) bytes", p.stderr)
    m2 = re.search(r"(\d+) oldest files of .* deleted", p.stderr)
    written = len(fs) + (int(m2.group(1)) if m2 else 0)
    if not m or written > int(m.group(1)) // MiB + 2:
        raise AssertionError("%d files for the run: %s" % (written, p.stderr))
    # The graph cache keeps whole graphs while they fit: a kept record takes
    # its 96-byte slot and 8 bytes; a graph is its capture's begin and end,
    # its nodes and its instantiation.
    per_graph = nodes + 3
    dropped = graphs - (32 * MiB) // (per_graph * (96 + 8))
    said = "no room for the making of %d graphs (%d records)" % (dropped, dropped * per_graph)
    if said not in p.stderr:
        raise AssertionError("%r not said: %s" % (said, p.stderr))
    # Each file alone names its kernels and knows graph 0 where it launches
    # it; the last one says that it lacks graphs' making (the counts at the
    # time each file opened: test_rolling_graphs checks them).
    graph_launches = 0
    for f in fs:
        alone, warned = report_json(f)
        unnamed = [k["kernel"] for k in alone["kernels"] if k["kernel"].startswith("0x")]
        eq(unnamed, [], "%s names its kernels" % f)
        launched = [g for g in alone["graphs"] if g["launches"]]
        eq([g["nodes"] for g in launched], [nodes] if launched else [],
           "%s: the graphs it launches" % f)
        graph_launches += sum(g["launches"] for g in launched)
    if graph_launches == 0:
        raise AssertionError("no graph launch in the kept files")
    if not re.search(r"incomplete: the making of \d+ graphs in use \(\d+ records\) is not in "
                     r"this file", warned):
        raise AssertionError("%s alone: the graphs it lacks not warned: %s" % (fs[-1], warned))


main([test_set_equals_one_trace, test_graphs_in_a_later_file, test_max_size_deletes_oldest, test_sigusr1_closes_the_current_file,
      test_keep_ages_out_files, test_big_graph_cache])
