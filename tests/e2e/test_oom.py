"""An allocation out of memory (the stand-in's GPUTRACE_STANDIN_MEM_BYTES
limit, cudaErrorMemoryAllocation): under a flight recorder it writes one
snapshot at once (BASE.oom-1.gtrace, said on stderr in one line), one per
interval however many failures come (a storm of 100 retries over 2 s); `leaks` and
`report` (text and JSON) on the snapshot, and on a plain record's full
trace, open with the failing call's line, the requested size and the top
holders with their bytes, exactly as oom.cu printed them."""
import json
import os
import re
import subprocess
import threading
import time
from gtest import *

MEM_BYTES = 20 << 20  # 3 rounds of 3 + 2 + 1 MiB fit; the 4th weights block fails
GAP_MS = 20  # a storm's retries: 100 of them over 2 s, well within one interval (10 s)
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda", "oom.cu")


def lines_of_sites():
    """oom.cu's allocating line per site (its WEIGHTS_LINE, ... markers)."""
    lines = {}
    with open(SOURCE) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"// (WEIGHTS|KV|SCRATCH)_LINE", text)
            if m:
                lines[m.group(1).lower()] = n
    eq(sorted(lines), ["kv", "scratch", "weights"], "oom.cu's site markers")
    return lines


LINES = lines_of_sites()


def site(name):
    return "alloc_%s(void**) at oom.cu:%d" % (name, LINES[name])


def run_oom(record_args, retries=0, snapshot=None):
    """`record RECORD_ARGS -- oom RETRIES GAP_MS` until it pauses, 3 s for the
    collector, then on: what it printed (held bytes per site, the failing
    site and its request) and record's stderr. With `snapshot`, that file
    must be there while the program is paused (written at once, not at the
    end)."""
    cmd = [GPUTRACE, "record"] + record_args + ["--", prog("oom"), str(retries), str(GAP_MS)]
    p = subprocess.Popen(cmd,
                         env=base_env(GPUTRACE_STANDIN_MEM_BYTES=MEM_BYTES),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    err = []
    threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
    held, failed = {}, None
    for line in p.stdout:
        m = re.match(r"oom: held (\w+) (\d+)$", line)
        if m:
            held[m.group(1)] = int(m.group(2))
        m = re.match(r"oom: failed (\w+) asked (\d+)$", line)
        if m:
            failed = (m.group(1), int(m.group(2)))
        if line.startswith("oom: paused"):
            break
    else:
        raise AssertionError("oom never paused: %r" % err)
    time.sleep(3.0)  # the collector takes the failure and writes its snapshot
    if snapshot:
        eq(os.path.exists(snapshot), True, "%s while the program is paused" % snapshot)
    p.stdin.write("\n")
    p.stdin.close()
    p.stdout.read()
    eq(p.wait(timeout=60), 0, "record's status (%s)" % "".join(err))
    eq(failed is not None and len(held) == 3, True, "oom's lines")
    return held, failed, "".join(err)


def expected(held, failed):
    """The line leaks and report open with, and report's evidence."""
    top = sorted(held.items(), key=lambda kv: (-kv[1], site(kv[0])))
    name, asked = failed
    line = ("out of memory at oom.cu:%d in alloc_%s(void**): asked %d bytes while %d were "
            "held by %s" % (LINES[name], name, asked, sum(held.values()),
                            ", ".join("%s (%d bytes)" % (site(s), b) for s, b in top)))
    evidence = {"site": site(name), "requested_bytes": asked,
                "held_bytes": sum(held.values()),
                "holders": [{"site": site(s), "bytes": b} for s, b in top]}
    return line, evidence


def check_trace(path, held, failed):
    line, evidence = expected(held, failed)
    env = base_env()
    p = run([GPUTRACE, "leaks", path], env, check_rc=0)
    eq(p.stdout.splitlines()[0], line, "leaks' first line on %s" % path)
    p = run([GPUTRACE, "leaks", "--json", path], env, check_rc=0)
    got = json.loads(p.stdout)["out_of_memory"]
    got.pop("pid")
    eq(got, evidence, "leaks --json's out_of_memory")
    p = run([GPUTRACE, "report", path], env, check_rc=0)
    eq(p.stdout.splitlines()[0], line, "report's first line on %s" % path)
    p = run([GPUTRACE, "report", "--json", path], env, check_rc=0)
    first = json.loads(p.stdout)["findings"][0]
    eq((first["rule"], first["severity"], first["message"]), ("out_of_memory", "high", line),
       "report --json's first finding")
    ev = dict(first["evidence"])
    ev.pop("pid")
    eq(ev, evidence, "the out_of_memory finding's evidence")


def oom_files(base):
    d, stem = os.path.split(base[:-len(".gtrace")])
    return sorted(f for f in os.listdir(d) if f.startswith(stem + ".oom-"))


def flight(retries, stem):
    base = os.path.join(TMP, stem + ".gtrace")
    snap = os.path.join(TMP, stem + ".oom-1.gtrace")
    held, failed, err = run_oom(["--flight-recorder", "8MiB", "-o", base], retries, snap)
    eq(oom_files(base), [stem + ".oom-1.gtrace"], "the snapshots beside %s" % base)
    said = [l for l in err.splitlines() if "ran out of memory" in l]
    eq(len(said), 1, "stderr's out-of-memory lines (%r)" % err)
    if snap not in said[0]:
        raise AssertionError("stderr does not name %s: %r" % (snap, said[0]))
    check_trace(snap, held, failed)


def test_oom_writes_one_snapshot():
    flight(0, "one")


def test_storm_writes_one_snapshot():
    flight(100, "storm")


def test_plain_record_reports_the_oom():
    out = os.path.join(TMP, "plain.gtrace")
    held, failed, err = run_oom(["-o", out])
    eq(oom_files(out), [], "snapshots of a plain record")
    check_trace(out, held, failed)


if __name__ == "__main__":
    main([test_oom_writes_one_snapshot, test_storm_writes_one_snapshot,
          test_plain_record_reports_the_oom])
