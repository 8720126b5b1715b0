"""`gputrace export`: SQLite and CSV tables of a trace, checked against the
other commands' exact figures — launch, allocation and copy counts against
dump --summary, live bytes against leaks, per-kernel GPU time and NVTX range
counts against report --json, the DEVICE records (the call rows' device
columns, device_unmatched, the `device` view) against dump --summary and
dump --json — on the demo (infer 20) and on a two-process trace; the example queries of docs/export.md run on it; CSV has the same rows,
header rows and RFC 4180 quoting, and every SQLite value equals its CSV cell
(demo and a generated trace); kernels' idle-stream waits in device_wait_ns;
an index that does not fit leaves the tables whole (status 1, the SQL to
make it); --pid, a pid not there, an existing output, the default name;
NULL exactly where docs/export.md says (and never an empty text, which CSV
could not tell from NULL); a forced CSV export that fails leaves the
directory as it was, other files and the old tables untouched."""
import csv
import json
import os
import re
import resource
import signal
import sqlite3
import subprocess

from gtest import *

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SQLITE3 = "/usr/bin/sqlite3"
TABLES = ["metadata", "processes", "threads", "api_calls", "launches", "copies", "memsets",
          "allocations", "frees", "stacks", "frames", "nvtx_ranges", "device_unmatched",
          "metrics"]
VIEWS = ["device"]  # SQLite only: every DEVICE record
WORK = (("launches", "launch"), ("copies", "memcpy"), ("memsets", "memset"))
# A command-line argument that needs every CSV rule: a comma, a quote, a newline.
ODD = 'odd, "quoted"\nname'


def export(trace, *args, rc=0):
    p = run([GPUTRACE, "export", trace] + list(args), base_env())
    if p.returncode != rc:
        raise AssertionError("export %s: rc %d, expected %d: %s" %
                             (args, p.returncode, rc, p.stderr))
    return p


def fresh(path):
    if os.path.isdir(path):
        for f in os.listdir(path):
            os.unlink(os.path.join(path, f))
        os.rmdir(path)
    elif os.path.lexists(path):
        os.unlink(path)
    return path


def to_sqlite(trace, name, *args):
    out = fresh(os.path.join(TMP, name + ".sqlite"))
    export(trace, "-o", out, *args)
    return sqlite3.connect(out), out


def rows(db, sql, *params):
    return db.execute(sql, params).fetchall()


def summary_counts(trace):
    """dump --summary's records per kind."""
    p = run([GPUTRACE, "dump", "--summary", trace], base_env(), check_rc=0)
    body = p.stdout.split("by kind:\n", 1)[1].split("by api:\n", 1)[0]
    return {k: int(n) for k, n in re.findall(r"^\s+(\S+)\s+(\d+)$", body, re.M)}


def leaks_live_bytes(trace):
    p = run([GPUTRACE, "leaks", "--json", trace], base_env())
    totals = json.loads(p.stdout)["totals"]
    return {t["pid"]: sum(t[m]["bytes"] for m in ("device", "pinned_host", "managed"))
            for t in totals}


def report_json(trace):
    return json.loads(run([GPUTRACE, "report", "--json", trace], base_env(),
                          check_rc=0).stdout)


_demo = {}


def demo():
    """The demo trace (infer 20, with an odd argument) and its export."""
    if not _demo:
        _, trace = record([prog("infer"), "20", ODD])
        db, path = to_sqlite(trace, "demo")
        _demo.update(trace=trace, db=db, path=path)
    return _demo["trace"], _demo["db"], _demo["path"]


def check_against_commands(trace, db):
    n = summary_counts(trace)
    for table, kind in (("launches", "launch"), ("allocations", "alloc"),
                        ("copies", "memcpy"), ("memsets", "memset"), ("frees", "free"),
                        ("device", "device")):
        eq(rows(db, "SELECT count(*) FROM " + table)[0][0], n.get(kind, 0),
           "%s rows vs dump --summary's %s" % (table, kind))
    marks = count(dump(trace), kind="nvtx", op="mark")
    calls = sum(n.get(k, 0) for k in ("sync", "stream", "event", "graph")) + marks
    eq(rows(db, "SELECT count(*) FROM api_calls")[0][0], calls,
       "api_calls rows: dump --summary's sync, stream, event, graph, and NVTX marks")
    eq(rows(db, "SELECT count(*) FROM device d JOIN launches l ON l.id = d.call_id "
                "WHERE d.of_kind = 'launch' AND (l.pid, l.tid, l.corr) != (d.pid, d.tid, d.corr)"),
       [(0,)], "device.call_id names the launch of the same pid, tid and corr")
    eq(rows(db, "SELECT count(*) FROM launches WHERE device_ns IS NOT NULL")[0][0],
       rows(db, "SELECT count(*) FROM device WHERE of_kind = 'launch' AND call_id IS NOT NULL")[0][0],
       "matched launches, both ways")
    timed = sum(rows(db, "SELECT count(*) FROM %s WHERE device_start_ns IS NOT NULL" % t)[0][0]
                for t, _ in WORK)
    unmatched = rows(db, "SELECT count(*) FROM device_unmatched")[0][0]
    eq(timed + unmatched, n.get("device", 0),
       "timed launches, copies, memsets + device_unmatched = dump --summary's device")
    meta = dict(rows(db, "SELECT key, value FROM metadata"))
    eq(int(meta["unmatched_device"]), unmatched, "metadata.unmatched_device")
    for t, _ in WORK:
        eq(rows(db, "SELECT count(*) FROM %s WHERE (device_start_ns IS NULL) != "
                    "(device_sample IS NULL) OR (device_start_ns IS NULL) != (device IS NULL) "
                    "OR device_end_ns != device_start_ns + device_ns" % t), [(0,)],
           "%s: the device columns all set or all NULL, consistent" % t)
    check_device_columns(trace, db)
    live = dict(rows(db, "SELECT pid, sum(bytes) FROM allocations WHERE ended = 'live' "
                         "GROUP BY pid"))
    want = {pid: b for pid, b in leaks_live_bytes(trace).items() if b}
    eq(live, want, "live bytes at the end vs leaks --json totals")
    r = report_json(trace)
    gpu = {k["kernel"]: k["gpu_total_ns"] for k in r["kernels"] if k.get("gpu_timed")}
    got = dict(rows(db, "SELECT kernel, sum(device_ns) FROM launches "
                        "WHERE device_ns IS NOT NULL GROUP BY kernel"))
    eq(got, gpu, "launches' device time per kernel vs report --json gpu_total_ns")
    ranges = {g["name"]: g["count"] for g in r["ranges"]}
    got = dict(rows(db, "SELECT name, count(*) FROM nvtx_ranges WHERE end_ns IS NOT NULL "
                        "GROUP BY name"))
    eq(got, ranges, "NVTX ranges per name vs report --json")


def check_device_columns(trace, db):
    """Each DEVICE record of dump --json is in the row of its call (same pid,
    tid, corr and kind) or in device_unmatched, with its times, sample,
    source, device and estimated flag."""
    origin = int(dict(rows(db, "SELECT key, value FROM metadata"))["origin_ns"])
    want = sorted((e["of_kind"], e["pid"], e["tid"], e["corr"], e["ts_ns"] - origin,
                   e["ts_ns"] + e["dur_ns"] - origin, e["dur_ns"], e.get("sample", 1),
                   e.get("source"), e.get("device", 0), int(bool(e.get("estimated"))),
                   e.get("wait_ns", 0))
                  for e in dump(trace) if e["kind"] == "device")
    got = []
    for t, kind in WORK:
        got += [(kind,) + r for r in rows(
            db, "SELECT pid, tid, corr, device_start_ns, device_end_ns, device_ns, "
                "device_sample, device_source, device, device_estimated, device_wait_ns "
                "FROM %s WHERE device_start_ns IS NOT NULL" % t)]
    got += rows(db, "SELECT of_kind, pid, tid, corr, start_ns, end_ns, dur_ns, sample, "
                    "source, device, estimated, wait_ns FROM device_unmatched")
    eq(sorted(got), want, "DEVICE records of dump --json vs the call rows' device columns "
                          "and device_unmatched")
    view = rows(db, "SELECT of_kind, pid, tid, corr, start_ns, end_ns, dur_ns, sample, "
                    "source, device, estimated, wait_ns FROM device")
    eq(sorted(view), want, "the device view vs dump --json's DEVICE records")


def test_demo_matches_commands():
    trace, db, _ = demo()
    eq(rows(db, "SELECT count(*) FROM launches")[0][0] > 0, True, "launches exported")
    check_against_commands(trace, db)
    untimed = rows(db, "SELECT count(*) FROM launches WHERE device_ns IS NULL")[0][0]
    eq(untimed, 0, "every demo launch has its DEVICE record")
    eq(rows(db, "SELECT count(*) FROM device WHERE call_id IS NULL")[0][0], 0,
       "every DEVICE record matched its call")
    eq(rows(db, "SELECT count(*) FROM device_unmatched")[0][0], 0,
       "no row of device_unmatched")


def test_metadata_and_schema():
    trace, db, _ = demo()
    meta = dict(rows(db, "SELECT key, value FROM metadata"))
    eq(meta["schema_version"], "1", "export schema version")
    eq(meta["trace"], trace, "trace")
    eq(int(meta["origin_ns"]) > 0 and int(meta["origin_realtime_ns"]) > 10**18, True,
       "origin")
    eq(rows(db, "SELECT min(start_ns) >= 0 FROM launches")[0][0], 1, "relative times")
    idx = {r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    eq(sorted(idx), sorted(["launches_tid_start_ns", "copies_tid_start_ns",
                            "allocations_pid_start_ns", "allocations_pid_stack_id",
                            "frees_alloc_id", "stacks_pid_stack_id", "frames_pid_stack_id",
                            "metrics_metric_ts_ns"]), "the indexes docs/export.md lists")
    doc = open(os.path.join(ROOT, "docs", "export.md")).read()
    ixdoc = doc.split("\n## Indexes\n", 1)[1].split("\n## ", 1)[0]
    for i in idx:
        eq("`%s`" % i in ixdoc, True, "index %s documented" % i)
    eq(rows(db, "SELECT type FROM sqlite_master WHERE name = 'device'"), [("view",)],
       "device is a view")
    plan = " ".join(r[-1] for r in rows(
        db, "EXPLAIN QUERY PLAN SELECT count(*) FROM nvtx_ranges r JOIN launches l "
            "ON l.pid = r.pid AND l.tid = r.tid AND l.start_ns BETWEEN r.start_ns AND r.end_ns"))
    eq("launches_tid_start_ns" in plan, True, "a thread's launches in a range use the "
                                              "index: " + plan)
    frames = rows(db, "SELECT function, file, line FROM frames f JOIN allocations a "
                      "ON f.pid = a.pid AND f.stack_id = a.stack_id WHERE a.ended = 'live'")
    eq(any(os.path.basename(f) == "infer.cu" and line > 0 for _, f, line in frames), True,
       "live allocations' stacks have infer.cu lines")
    cmd = rows(db, "SELECT cmdline FROM processes")[0][0]
    eq(cmd.endswith(ODD), True, "command line kept whole: " + repr(cmd))


def test_doc_schema_and_queries():
    """Every table and column is documented; each example query runs."""
    _, db, path = demo()
    doc = open(os.path.join(ROOT, "docs", "export.md")).read()
    for t in TABLES + VIEWS:
        sec = doc.split("\n### %s\n" % t, 1)
        if len(sec) < 2:
            raise AssertionError("docs/export.md: no section for " + t)
        body = sec[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        named = set()
        for cell in re.findall(r"^\| ([a-z_0-9, ]+) \|", body, re.M):
            named.update(c.strip() for c in cell.split(","))
        cols = [r[1] for r in rows(db, "PRAGMA table_info(%s)" % t)]
        common = {"id", "pid", "tid", "api", "start_ns", "dur_ns", "result", "stack_id"}
        missing = [c for c in cols if c not in named and not
                   ("api_calls" != t and c in common and "common columns" in body)]
        eq(missing, [], "columns of %s missing from docs/export.md" % t)
    queries = re.findall(r"```sql\n(.*?)```", doc, re.S)
    eq(len(queries) >= 5, True, "example queries in docs/export.md")
    for q in queries:
        p = subprocess.run([SQLITE3, path], input=q, capture_output=True, text=True)
        if p.returncode != 0 or p.stderr or not p.stdout.strip():
            raise AssertionError("query failed or empty:\n%s\n%s" % (q, p.stderr))


def test_csv_same_tables():
    trace, db, _ = demo()
    out = fresh(os.path.join(TMP, "demo.csv"))
    p = export(trace, "--format", "csv", "-o", out)
    if not re.search(r"wrote .*demo\.csv/ \([\d.]+ MB, \d+ rows in 14 files\)", p.stderr):
        raise AssertionError("closing line: " + p.stderr)
    eq(sorted(os.listdir(out)), sorted(t + ".csv" for t in TABLES), "one file a table")
    for t in TABLES:
        with open(os.path.join(out, t + ".csv"), newline="") as f:
            raw = f.read()
        if raw and not raw.endswith("\r\n"):
            raise AssertionError("%s.csv: records end with CRLF" % t)
        data = list(csv.reader(raw.splitlines(keepends=True)))
        cols = [r[1] for r in rows(db, "PRAGMA table_info(%s)" % t)]
        eq(data[0], cols, "%s.csv header" % t)
        eq(len(data) - 1, rows(db, "SELECT count(*) FROM " + t)[0][0], "%s.csv rows" % t)
        eq(os.stat(os.path.join(out, t + ".csv")).st_mode & 0o777, 0o600, "mode of " + t)
    with open(os.path.join(out, "processes.csv"), newline="") as f:
        procs = list(csv.DictReader(f))
    eq(procs[0]["cmdline"].endswith(ODD), True, "comma, quote, newline round-trip")
    eq(os.stat(out).st_mode & 0o777, 0o700, "directory mode")


def csv_cell(v):
    """A SQLite value as the CSV writer gives it: NULL empty, integers in
    decimal, reals as %.17g, text as it is; an empty text (which no column
    holds, docs/export.md) as a marker no CSV field reads back as."""
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.17g" % v
    return str(v) if v != "" else "<an empty text, not NULL>"


def check_cells_as_csv(trace, db, name):
    """Every table of the SQLite export equals the CSV export's, value for
    value in row order: the CSV writer binds nothing, so a value the SQLite
    writer failed to bind (it binds only what changed in each parameter
    since the statement's last run) shows here, named by table, row and
    column."""
    out = fresh(os.path.join(TMP, name + ".csv"))
    export(trace, "--format", "csv", "-o", out)
    for t in TABLES:
        with open(os.path.join(out, t + ".csv"), newline="") as f:
            data = list(csv.reader(f))
        cols = data[0]
        got = [[csv_cell(v) for v in r] for r in rows(db, "SELECT * FROM " + t)]
        eq(len(got), len(data) - 1, "%s (%s): rows" % (t, name))
        for i, (a, b) in enumerate(zip(got, data[1:])):
            if a != b:
                bad = [(c, x, y) for c, x, y in zip(cols, a, b) if x != y]
                raise AssertionError("%s (%s) row %d: SQLite vs CSV (column, sqlite, "
                                     "csv): %s" % (t, name, i + 1, bad[:4]))


def test_cells_as_csv():
    """The demo, and a generated trace of 4 threads with DEVICE records
    (launch rows timed and untimed, allocations freed and live): enough
    rows that each 32-row statement runs many times, with values that
    change kind (NULL, integer, text) from one run to the next."""
    trace, db, _ = demo()
    check_cells_as_csv(trace, db, "demo_cells")
    gen = os.path.join(TMP, "cells.gtrace")
    run([os.path.join(BIN, "gputrace-gen-trace"), gen, "60000", "--threads", "4", "--device"],
        base_env())
    db, _ = to_sqlite(gen, "cells")
    eq(rows(db, "SELECT count(*) > 640, sum(device_ns IS NULL) > 0, "
                "sum(device_ns IS NOT NULL) > 0 FROM launches"), [(1, 1, 1)],
       "generated: launches, timed and untimed")
    eq(rows(db, "SELECT count(DISTINCT kernel) > 1, count(DISTINCT tid) FROM launches"),
       [(1, 4)], "generated: kernels and threads")
    eq(rows(db, "SELECT sum(free_id IS NULL) > 0, sum(free_id IS NOT NULL) > 0 "
                "FROM allocations"), [(1, 1)], "generated: allocations live and freed")
    check_cells_as_csv(gen, db, "cells")


SYNTH = os.path.join(BIN, "chrome_synth_trace")
# Every case docs/export.md gives a NULL for that a script can make: a process
# with no start or end record (pid 200), a kernel and an NVTX range with empty
# names, untimed calls, DEVICE records no call took (a copy's and a launch's,
# one naming no source), a live allocation, a free of an unknown pointer, a
# range open at the end.
NULLS_SCRIPT = """process ts=1000 phase=start ppid=1 text=./nulls
kernel_name ts=1001 kernel=0x10 text=
kernel_name ts=1002 kernel=0x20 text=named
launch ts=1100 dur=10 kernel=0x10 stream=0x5 corr=1
launch ts=1200 dur=10 kernel=0x20 stream=0x5 corr=2
memcpy ts=1300 dur=10 bytes=64 dir=1 stream=0x5 corr=3
memset ts=1400 dur=10 bytes=64 ptr=0x9000 stream=0x5 corr=4
device ts=1500 dur=5 stream=0x5 kernel=0x20 corr=2 of_kind=launch sample=1 source=1
device ts=1600 dur=5 stream=0x5 bytes=64 corr=99 of_kind=memcpy dir=1 sample=1
device ts=1700 dur=5 stream=0x5 kernel=0x20 corr=98 of_kind=launch sample=1
alloc ts=1800 dur=10 ptr=0x1000 bytes=4096 memory=1
alloc ts=1900 dur=10 ptr=0x2000 bytes=4096 memory=1
free ts=2000 dur=10 ptr=0x2000
free ts=2100 dur=10 ptr=0x7777
nvtx ts=2200 op=push text=
nvtx ts=2300 op=pop
nvtx ts=2400 op=push text=open
launch ts=2500 dur=10 pid=200 tid=200 kernel=0x30 stream=0x5
sync ts=2600 dur=10
process ts=3000 phase=end
"""


def documented_nulls():
    """{table: set of columns whose row in docs/export.md says NULL (a NULL
    value, not a NULL pointer)}; a row "as in `launches`" takes launches'
    rows of the same names."""
    doc = open(os.path.join(ROOT, "docs", "export.md")).read()
    out = {}
    for t in TABLES + VIEWS:
        body = doc.split("\n### %s\n" % t, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        out[t] = set()
        for names, meaning in re.findall(r"^\| ([a-z_0-9, ]+) \|[^|]*\|[^|]*\| (.*) \|$",
                                         body, re.M):
            cols = [c.strip() for c in names.split(",")]
            if re.search(r"\bNULL\b(?! pointer)", meaning):  # not "a NULL pointer"
                out[t].update(cols)
            elif meaning == "as in `launches`":
                out[t].update(c for c in cols if c in out["launches"])
    return out


def check_nulls(db, name, documented, seen):
    """No NULL where docs/export.md has none, no empty text anywhere; seen
    collects (table, column) that held NULL."""
    for t in TABLES + VIEWS:
        for _, col, ctype, *_ in rows(db, "PRAGMA table_info(%s)" % t):
            nulls, empty = rows(db, "SELECT count(*) FILTER (WHERE %s IS NULL), "
                                    "count(*) FILTER (WHERE %s = '') FROM %s" % (col, col, t))[0]
            if nulls:
                seen.add((t, col))
            eq(empty, 0, "%s (%s): %s holds empty texts (NULL in CSV)" % (t, name, col))
            if col not in documented[t]:
                eq(nulls, 0, "%s (%s): %s is NULL, docs/export.md says it never is"
                   % (t, name, col))


def test_null_where_documented():
    """SQLite has NULL exactly where docs/export.md says: in no column whose
    row does not say NULL (the demo, two processes, a Python program, NVML
    readings, a script of every case), in every column whose row does (one
    of those traces has each case), and never an empty text: an unknown
    file, an empty name are NULL, as CSV's empty field is (test_cells_as_csv
    holds CSV to the same cells)."""
    documented = documented_nulls()
    traces = [demo()[0], record([prog("forked")])[1], nvml_trace()]
    py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_alloc.py")
    traces.append(record(["python3", py, "3"], out=os.path.join(TMP, "export_py.gtrace"))[1])
    script = os.path.join(TMP, "nulls.gtrace")
    p = subprocess.run([SYNTH, script], input=NULLS_SCRIPT, capture_output=True, text=True,
                       timeout=60)
    eq(p.returncode, 0, "synth: " + p.stderr)
    traces.append(script)
    seen = set()
    for i, trace in enumerate(traces):
        db, _ = to_sqlite(trace, "nulls%d" % i)
        check_nulls(db, os.path.basename(trace), documented, seen)
        if trace == script:
            eq(rows(db, "SELECT name FROM nvtx_ranges ORDER BY id"), [(None,), ("open",)],
               "an empty range name is NULL")
            eq(rows(db, "SELECT kernel FROM launches WHERE corr = 1"), [(None,)],
               "an empty kernel name is NULL")
            check_cells_as_csv(trace, db, "nulls_csv")
    missing = sorted((t, c) for t in documented for c in documented[t] if (t, c) not in seen)
    eq(missing, [], "columns docs/export.md says can be NULL that no test trace made NULL")


def test_device_wait():
    """Kernels queued on an idle stream by launches that spend 30 us on the
    host (the stand-in's GPUTRACE_STANDIN_LAUNCH_HOST_NS): their DEVICE
    records' wait_ns, every one, in the launches' device_wait_ns and the
    device view."""
    _, trace = record([prog("devtime"), "idle"], GPUTRACE_GPU_TIMING="events",
                      GPUTRACE_GPU_TIMING_SAMPLE="1", GPUTRACE_STANDIN_LAUNCH_HOST_NS="30000")
    db, _ = to_sqlite(trace, "wait")
    check_device_columns(trace, db)
    waited = rows(db, "SELECT count(*) FROM launches WHERE device_wait_ns >= 29000")[0][0]
    eq(waited >= 20, True, "launches that waited 29 us or more: %d of 40" % waited)
    eq(rows(db, "SELECT sum(wait_ns) FROM device"),
       rows(db, "SELECT sum(device_wait_ns) FROM launches"), "the device view's wait_ns")


def test_index_left_out():
    """An output that cannot hold the last indexes (a file size limit 3 pages
    short of the whole export, SIGXFSZ ignored: writes fail with EFBIG):
    status 1, the tables whole and the file consistent, the indexes that fit
    made, and a warning whose SQL makes the rest."""
    trace, full, path = demo()
    size = os.path.getsize(path)
    out = fresh(os.path.join(TMP, "short.sqlite"))

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size - 3 * 65536, size - 3 * 65536))
    p = subprocess.run([GPUTRACE, "export", "-o", out, trace], env=base_env(),
                       preexec_fn=limit, capture_output=True, text=True, timeout=120)
    eq(p.returncode, 1, "status: " + p.stderr)
    warn = p.stderr.splitlines()[-1]
    m = re.match(r'gputrace export: warning: (\d+) indexes were not made \((.+); the '
                 r'sorts\' temporary files go to (.+)\): the tables are complete, queries '
                 r'that use them are slower; make them later with sqlite3 (\S+) "(.+)"$', warn)
    if not m:
        raise AssertionError("warning: " + warn)
    eq((m.group(3), m.group(4)), (TMP, out), "the temporary files' directory, the file")
    db = sqlite3.connect(out)
    eq(rows(db, "PRAGMA integrity_check"), [("ok",)], "the file is consistent")
    for t in TABLES:
        eq(rows(db, "SELECT * FROM " + t), rows(full, "SELECT * FROM " + t), "table " + t)
    index = "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
    made = rows(db, index)
    eq(len(made), len(rows(full, index)) - int(m.group(1)), "indexes made")
    db.close()
    run([SQLITE3, out, m.group(5)], base_env(), check_rc=0)
    db = sqlite3.connect(out)
    eq(rows(db, index), rows(full, index), "the warning's SQL made the rest")


def test_two_processes_and_pid_filter():
    _, trace = record([prog("forked")])
    db, _ = to_sqlite(trace, "forked")
    check_against_commands(trace, db)
    pids = [r[0] for r in rows(db, "SELECT pid FROM processes ORDER BY start_ns")]
    eq(len(pids), 2, "two processes")
    child = pids[1]
    sub, _ = to_sqlite(trace, "forked_child", "--pid", str(child))
    for t in TABLES + VIEWS:
        cols = [r[1] for r in rows(sub, "PRAGMA table_info(%s)" % t)]
        if "pid" in cols and t != "metrics":
            got = {r[0] for r in rows(sub, "SELECT DISTINCT pid FROM " + t)}
            eq(got <= {child}, True, "%s: only the child's rows (%s)" % (t, got))
            eq(rows(sub, "SELECT count(*) FROM " + t)[0][0],
               rows(db, "SELECT count(*) FROM %s WHERE pid = ?" % t, child)[0][0],
               "%s: the child's rows, all of them" % t)
    out = fresh(os.path.join(TMP, "nopid.sqlite"))
    p = export(trace, "-o", out, "--pid", "1", rc=2)
    if "--pid 1 matches nothing" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    eq(os.path.lexists(out), False, "nothing left behind after a filter matching nothing")


def test_time_window():
    trace, db, _ = demo()
    lo, hi = 50000000, 100000000  # 50 ms .. 100 ms
    sub, _ = to_sqlite(trace, "window", "--from", "50ms", "--to", "100ms")
    for t, col in (("launches", "start_ns"), ("copies", "start_ns"), ("device", "start_ns"),
                   ("nvtx_ranges", "start_ns"), ("allocations", "start_ns")):
        q = "SELECT count(*) FROM %s WHERE %s >= ? AND %s < ?" % (t, col, col)
        eq(rows(sub, "SELECT count(*) FROM " + t)[0][0], rows(db, q, lo, hi)[0][0],
           "%s inside --from 50ms --to 100ms" % t)
    meta = dict(rows(sub, "SELECT key, value FROM metadata"))
    eq((meta["from_ns"], meta["to_ns"]), (str(lo), str(hi)), "the window in metadata")
    out = fresh(os.path.join(TMP, "late.sqlite"))
    p = export(trace, "-o", out, "--from", "1h", rc=2)
    if "matches nothing" not in p.stderr or os.path.lexists(out):
        raise AssertionError("--from past the end: " + p.stderr)


def test_existing_output_and_default_name():
    trace, _, path = demo()
    p = export(trace, "-o", path, rc=2)
    if "exists" not in p.stderr:
        raise AssertionError("refusal message: " + p.stderr)
    before = os.stat(path).st_size
    p = export(trace, "-o", path, "--force")
    if "sqlite3 " + path not in p.stderr:
        raise AssertionError("closing line: " + p.stderr)
    eq(os.stat(path).st_size, before, "--force rewrote the same database")
    eq(os.stat(path).st_mode & 0o777, 0o600, "database mode")
    csvdir = os.path.join(TMP, "demo.csv")
    if os.path.isdir(csvdir):
        export(trace, "--format", "csv", "-o", csvdir, rc=2)
        export(trace, "--format", "csv", "-o", csvdir, "--force")
        dirlink = fresh(os.path.join(TMP, "dirlink.csv"))
        os.symlink(csvdir, dirlink)
        before = sorted(os.listdir(csvdir))
        export(trace, "--format", "csv", "-o", dirlink, "--force", rc=2)
        eq(sorted(os.listdir(csvdir)), before, "a linked directory's files untouched")
        os.unlink(dirlink)
    default = fresh(trace[:-len(".gtrace")] + ".sqlite")
    export(trace)
    eq(os.path.isfile(default), True, "default output: FILE's .sqlite")
    link = fresh(os.path.join(TMP, "link.sqlite"))
    os.symlink(default, link)
    export(trace, "-o", link, "--force", rc=2)
    export(trace, "-o", trace, "--force", rc=2)
    eq(summary_counts(trace).get("launch", 0) > 0, True, "the trace is untouched")


def snapshot(d):
    """Every entry of directory d: name -> its bytes, or the target of a link."""
    out = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        out[n] = ("link", os.readlink(p)) if os.path.islink(p) else open(p, "rb").read()
    return out


def same_dir(got, want, what):
    """Two snapshots equal; else the names that differ (not the bytes)."""
    bad = sorted(n for n in set(got) | set(want) if got.get(n) != want.get(n))
    if bad:
        raise AssertionError("%s: these differ: %s (missing: %s)" %
                             (what, bad, sorted(set(want) - set(got))))


def test_csv_force_failures():
    """--force on a CSV directory replaces its tables only when the export
    succeeds: one that fails — a table's name taken by a symbolic link, a
    write error part-way (a file size limit), a filter matching nothing —
    leaves every file as it was (the old tables whole, a user's notes.txt
    and kernels.csv, which is no table's name) and no .part file; one that
    succeeds replaces the tables and keeps the other files."""
    trace, _, _ = demo()
    d = fresh(os.path.join(TMP, "force.csv"))
    export(trace, "--format", "csv", "-o", d)
    for name, text in (("notes.txt", b"mine\n"), ("kernels.csv", b"my,own\r\n")):
        with open(os.path.join(d, name), "wb") as f:
            f.write(text)
    first = snapshot(d)
    outside = os.path.join(TMP, "outside.txt")
    with open(outside, "w") as f:
        f.write("precious\n")
    threads = os.path.join(d, "threads.csv")  # a table in the middle of the list
    os.unlink(threads)
    os.symlink(outside, threads)
    before = snapshot(d)
    p = export(trace, "--format", "csv", "-o", d, "--force", rc=2)
    if "threads.csv" not in p.stderr or "symbolic link" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    same_dir(snapshot(d), before, "a refused table name: every file as it was")
    eq(open(outside).read(), "precious\n", "the link's target")
    os.unlink(threads)
    with open(os.open(threads, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(first["threads.csv"])
    before = snapshot(d)
    same_dir(before, first, "the directory of the first export, restored")
    limit = max(len(v) for v in before.values()) // 2

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    p = subprocess.run([GPUTRACE, "export", "--format", "csv", "-o", d, "--force", trace],
                       env=base_env(), preexec_fn=small_files, capture_output=True,
                       text=True, timeout=120)
    eq(p.returncode, 2, "a write error: status; " + p.stderr)
    same_dir(snapshot(d), before, "a write error part-way: every file as it was")
    p = export(trace, "--format", "csv", "-o", d, "--force", "--pid", "1", rc=2)
    same_dir(snapshot(d), before, "a filter matching nothing: every file as it was")
    export(trace, "--format", "csv", "-o", d, "--force")
    after = snapshot(d)
    eq(sorted(after), sorted([t + ".csv" for t in TABLES] + ["notes.txt", "kernels.csv"]),
       "a forced export that succeeds: the tables and the other files, no .part")
    eq((after["notes.txt"], after["kernels.csv"]), (b"mine\n", b"my,own\r\n"),
       "the other files kept")
    eq(after["threads.csv"].split(b"\r\n")[0], b"pid,tid,first_ns,last_ns,calls",
       "threads.csv replaced by the table")
    gone = fresh(os.path.join(TMP, "never.csv"))
    export(trace, "--format", "csv", "-o", gone, "--pid", "1", rc=2)
    eq(os.path.lexists(gone), False, "a directory it made, removed after a failure")


_nvml = {}


def nvml_trace():
    """A trace with NVML readings (the stand-in NVML, scripted)."""
    if not _nvml:
        script = os.path.join(TMP, "export_nvml.txt")
        with open(script, "w") as f:
            f.write("0 10 5 9500 10000 80 100000 300000 1500 5000 100 200 90\n")
        out = os.path.join(TMP, "export_nvml.gtrace")
        record([prog("steady"), "200"], out=out, GPUTRACE_STANDIN_NVML_SCRIPT=script,
               GPUTRACE_NVML_MS=50)
        _nvml["trace"] = out
    return _nvml["trace"]


def test_nvml_metrics():
    """METRIC records (the stand-in NVML, scripted) as metrics rows, value for value."""
    out = nvml_trace()
    want = sorted((e["device"], e["metric"], e["value"]) for e in dump(out)
                  if e["kind"] == "metric")
    eq(len(want) > 0, True, "the trace has NVML readings")
    db, _ = to_sqlite(out, "nvml")
    got = sorted(rows(db, "SELECT device, metric, value FROM metrics"))
    eq(got, want, "metrics rows vs dump --json's METRIC records")
    eq(rows(db, "SELECT unit FROM metrics WHERE metric = 'gpu_util' LIMIT 1"), [("%",)],
       "unit")


if __name__ == "__main__":
    main([test_demo_matches_commands, test_metadata_and_schema, test_doc_schema_and_queries,
          test_csv_same_tables, test_cells_as_csv, test_device_wait, test_index_left_out,
          test_two_processes_and_pid_filter,
          test_time_window, test_existing_output_and_default_name, test_nvml_metrics,
          test_null_where_documented, test_csv_force_failures])
