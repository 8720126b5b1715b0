"""A rolling set keeps the memory picture whole: every file starts
with what each process holds (its live allocations, with their stacks, and
its peaks, flagged carried), so `leaks`, `report` and `html` over the files
a --max-size set kept give the leaked bytes, blocks, peak and holders of the
whole run, teardown frees of blocks allocated in deleted files are no
invalid frees, carried blocks are no calls of the file, and a set with a
file missing in its middle says so."""
import glob
import json
import os
import re
import shutil
from gtest import *

MiB = 1 << 20


def files(base):
    return sorted(glob.glob(base[:-len(".gtrace")] + ".[0-9][0-9][0-9][0-9].gtrace"))


def server(*args):
    return [prog("server")] + list(args)


def printed(p):
    m = re.search(r"server: workers (\d+) requests (\d+) chat (\d+) embed (\d+) legacy (\d+) "
                  r"leaked_bytes (\d+)", p.stdout)
    if not m:
        raise AssertionError("no summary line: %r" % p.stdout)
    return {"embed": int(m.group(4)), "leaked": int(m.group(6))}


# Without device timing and with a large ring, so that no record is dropped
# (a dropped allocation or free would make two runs differ; checked).
QUIET = {"GPUTRACE_GPU_TIMING": "off", "GPUTRACE_RING_KB": "65536",
         "GPUTRACE_STANDIN_TIMELINE": "0"}


def no_drops(path):
    summary = run([GPUTRACE, "dump", "--summary", path], base_env(), check_rc=0).stdout
    if not re.search(r"dropped: 0 +lost: 0", summary):
        raise AssertionError("%s lost records: %s" % (path, summary.splitlines()[0]))


def record_set(base, args, max_size):
    for f in files(base):
        os.unlink(f)
    p = run([GPUTRACE, "record", "-q", "-o", base, "--roll-size", "1MiB", "--max-size", max_size,
             "--"] + args, base_env(**QUIET), check_rc=0, timeout=300)
    no_drops(base)
    return p


def leaks(path, rc=0):
    p = run([GPUTRACE, "leaks", "--json", path], base_env())
    eq(p.returncode, rc, "leaks %s exit status (%s)" % (path, p.stderr))
    return json.loads(p.stdout), p.stderr


def memory(path):
    """What the three commands say about memory, in one tuple each."""
    d, err = leaks(path)
    lk = sorted((l["memory"], l["bytes"], l["blocks"], l["stack"][0]["function"])
                for l in d["leaks"])
    peak = (d["peak"]["device_bytes"], d["peak"]["ts_ns"],
            sorted((s["bytes"], s["blocks"], s["stack"][0]["function"])
                   for s in d["peak"]["stacks"]))
    p = run([GPUTRACE, "report", "--json", path], base_env(), check_rc=0)
    rep = json.loads(p.stdout)
    html = os.path.join(TMP, "page.html")
    run([GPUTRACE, "html", "--force", "-o", html, path], base_env(), check_rc=0)
    with open(html) as f:
        page = f.read()
    chart = re.search(r'data-peak="(\d+)"', page).group(1)
    return {"leaks": lk, "invalid": d["invalid_free_count"], "peak": peak,
            "report_peak": rep["memory"]["peak_device_bytes"], "html_peak": int(chart),
            "report": rep, "stderr": err}


def keep_from(src_base, dst_base, start, skip=()):
    """Copy the files of a set from its start-th on (1-based), less those
    numbered in skip, to a set named dst_base (their numbers kept)."""
    for f in files(dst_base):
        os.unlink(f)
    kept = []
    for f in files(src_base)[start - 1:]:
        number = int(f[-len("0000.gtrace"):-len(".gtrace")])
        if number in skip:
            continue
        dst = "%s.%04d.gtrace" % (dst_base[:-len(".gtrace")], number)
        shutil.copy(f, dst)
        kept.append(dst)
    return kept


def allocs_in_api(rep):
    return {a["api"]: a["calls"] for a in rep["api"] if a["api"] in ("cudaMalloc", "cudaFree")}


def test_any_suffix_reads_the_whole_runs_memory():
    """Three workers: the set read from its 2nd and from its last file says
    what the whole set says — leaked bytes and blocks (exactly what the
    program leaked), the holders, the peak with its time and stacks — and
    no invalid frees (main frees the weights, allocated in the 1st file)."""
    base = os.path.join(TMP, "whole.gtrace")
    p = record_set(base, server("--requests", "6000", "--leak-every", "20"), "1GiB")
    want = printed(p)
    fs = files(base)
    if len(fs) < 3:
        raise AssertionError("need three files: %s" % fs)
    whole = memory(base)
    eq(whole["leaks"], [("device", want["leaked"], want["embed"], "embed_cache_grow(unsigned long)")],
       "whole set: the leak, exactly")
    eq(whole["invalid"], 0, "whole set: no invalid frees")
    for start in (2, len(fs)):
        suf = os.path.join(TMP, "from%d.gtrace" % start)
        keep_from(base, suf, start)
        got = memory(suf)
        for key in ("leaks", "invalid", "report_peak", "html_peak"):
            eq(got[key], whole[key], "from file %d: %s as over the whole set" % (start, key))
        eq(got["peak"][:2], whole["peak"][:2], "from file %d: the peak and when" % start)
        # its stacks, unless the peak was in a file not read (then none: said)
        if got["peak"][2] != []:
            eq(got["peak"][2], whole["peak"][2], "from file %d: the stacks at the peak" % start)
        if "the set starts at its file %d" % start not in got["stderr"]:
            raise AssertionError("from file %d: not said: %s" % (start, got["stderr"]))
        # carried blocks are no calls of the files read: the API table
        # counts only the calls the kept files hold
        kept_mallocs = sum(1 for e in calls(dump(suf))
                           if e.get("api") == "cudaMalloc" and not e.get("carried"))
        eq(allocs_in_api(got["report"]).get("cudaMalloc", 0), kept_mallocs,
           "from file %d: cudaMalloc calls are the kept files' own" % start)


def test_max_size_keeps_memory_whole():
    """--max-size deletes the oldest files: over the kept ones, leaked
    bytes, blocks and peak equal an unrolled run's (one worker: the same
    peak every run), with no invalid frees."""
    args = server("--workers", "1", "--requests", "40000", "--leak-every", "100")
    p, one = record(args, timeout=300, **QUIET)
    no_drops(one)
    want = printed(p)
    single = memory(one)
    eq(single["leaks"], [("device", want["leaked"], want["embed"], "embed_cache_grow(unsigned long)")],
       "unrolled: the leak, exactly")
    base = os.path.join(TMP, "kept.gtrace")
    record_set(base, args, "2MiB")
    fs = files(base)
    if not fs or fs[0].endswith(".0001.gtrace"):
        raise AssertionError("no file was deleted: %s" % fs)
    got = memory(base)
    eq(got["leaks"], single["leaks"], "kept files: leaked bytes and blocks as unrolled")
    eq(got["invalid"], 0, "kept files: no invalid frees")
    eq(got["peak"][0], single["peak"][0], "kept files: leaks' peak as unrolled")
    eq(got["peak"][2], single["peak"][2], "kept files: the stacks at the peak as unrolled")
    eq(got["report_peak"], single["report_peak"], "kept files: report's peak as unrolled")
    eq(got["html_peak"], single["html_peak"], "kept files: html's peak as unrolled")


def test_a_missing_file_is_said():
    """A file missing between two kept ones is a loss: every command warns
    (exit status 3) and names it."""
    base = os.path.join(TMP, "whole.gtrace")
    if len(files(base)) < 3:
        record_set(base, server("--requests", "6000", "--leak-every", "20"), "1GiB")
    gap = os.path.join(TMP, "gap.gtrace")
    keep_from(base, gap, 1, skip=(2,))
    p = run([GPUTRACE, "leaks", gap], base_env())
    eq(p.returncode, 3, "leaks of a set with a hole (%s)" % p.stderr)
    if "1 file of the set before it (from number 2) is missing" not in p.stderr:
        raise AssertionError("the hole is not said: %s" % p.stderr)


if __name__ == "__main__":
    main([test_any_suffix_reads_the_whole_runs_memory, test_max_size_keeps_memory_whole,
          test_a_missing_file_is_said])
