"""A multi-worker server (tests/cuda/server.cu) through report,
html, export, diff and /metrics: the leak is the first finding with its line
and its bytes per request; the verdict and the per-request-type breakdown
hold whether workers wait for requests or not; a request's GPU time is the
device time of its own work, exactly."""
import json
import re
import subprocess
import time
from gtest import *
import promrun

MiB = 1 << 20
LEAK_LINE = 73  # embed_cache_grow's cudaMalloc in server.cu


def server(*args, name="server", **env):
    p, out = record([prog("server")] + list(args),
                    out=os.path.join(TMP, "%s.gtrace" % name), **env)
    m = re.search(r"server: workers (\d+) requests (\d+) chat (\d+) embed (\d+) legacy (\d+) "
                  r"leaked_bytes (\d+)", p.stdout)
    assert m, "server printed: %r" % p.stdout
    keys = ("workers", "requests", "chat", "embed", "legacy", "leaked_bytes")
    return dict(zip(keys, map(int, m.groups()))), out


def dump_json(path):
    p = run([GPUTRACE, "dump", "--json", path], base_env(), check_rc=0)
    return [json.loads(l) for l in p.stdout.splitlines()]


def own_gpu(recs):
    """Per range name: the device time (DEVICE dur x sample) of the launches,
    graph launches, copies and memsets its thread made while it was open,
    every range open counting (outer ranges include inner ones) - computed
    here from the raw records, independently of the tool."""
    calls, threads = {}, {}
    for d in recs:
        if d["kind"] != "device" and "tid" in d:
            threads.setdefault((d["pid"], d["tid"]), []).append(d)
    for key, recs_of in threads.items():
        stack = []
        for d in recs_of:  # a thread's records are in call order
            if d["kind"] == "nvtx" and d.get("op") == "push":
                stack.append(d["message"])
            elif d["kind"] == "nvtx" and d.get("op") == "pop" and stack:
                stack.pop()
            elif d["kind"] in ("launch", "memcpy", "memset") and d.get("corr") and \
                    d["result"] == 0 and stack and not d.get("captured"):
                calls[(key, d["corr"])] = list(stack)
    total = {}
    for d in recs:
        if d["kind"] == "device":
            for n in calls.get(((d["pid"], d["tid"]), d.get("corr")), []):
                total[n] = total.get(n, 0) + d["dur_ns"] * max(1, d.get("sample", 1))
    return total


def report_json(path, *args):
    p = run([GPUTRACE, "report", "--json", path] + list(args), base_env(), check_rc=0)
    return json.loads(p.stdout)


def test_leak_is_the_first_finding():
    counts, out = server()
    # 35 requests a worker: i % 7 == 6 legacy (5), else i % 5 == 4 embed (6)
    eq((counts["chat"], counts["embed"], counts["legacy"]), (72, 18, 15), "request types")
    d = report_json(out)
    f = d["findings"][0]
    eq((f["rule"], f["severity"]), ("memory_leak", "high"), "first finding")
    ev = f["evidence"]
    eq(ev["site"], "embed_cache_grow(unsigned long) at server.cu:%d" % LEAK_LINE, "leak site")
    eq((ev["bytes"], ev["blocks"]), (counts["leaked_bytes"], counts["embed"]), "leaked bytes, blocks")
    eq((ev["range"], ev["ranges"], ev["bytes_per_range"]), ("req:embed", 18, 2 * MiB),
       "bytes per leaking request")
    eq((d["leaks"]["bytes"], d["leaks"]["blocks"]), (counts["leaked_bytes"], counts["embed"]),
       "leaks: bytes, blocks")
    eq([x["rule"] for x in d["findings"]].count("memory_leak"), 1,
       "one leak finding (the weights are freed, the rest is freed)")
    text = run([GPUTRACE, "report", out], base_env(), check_rc=0).stdout
    first = text.split("Findings (")[1].splitlines()[1]
    assert first.strip().startswith("[high] memory_leak: 36.0 MiB in 18 blocks") and \
        "server.cu:%d" % LEAK_LINE in first and '2.00 MiB per "req:embed" range' in first, first
    page = os.path.join(TMP, "server.html")
    run([GPUTRACE, "html", out, "-o", page], base_env(), check_rc=0)
    html = open(page).read()
    findings = html.split("<h3>Findings")[1]
    assert findings.find("memory_leak") >= 0 and findings.find("memory_leak") < \
        findings.find("pageable_memcpy"), "html: the leak listed first"


def test_diff_compares_leaks():
    _, a = server("--leak-every", "5", name="server_leak5")
    _, b = server("--leak-every", "3", name="server_leak3")
    p = run([GPUTRACE, "diff", "--json", a, b], base_env())
    rows = {(r["section"], r["metric"]): r for r in json.loads(p.stdout)["changes"]}
    row = rows[("memory", "leaked_bytes")]
    eq(row["a"], 18 * 2 * MiB, "leaked bytes of A")
    # a worker's request i is a req:embed when i % 3 == 2 and it is no req:legacy
    nb = sum(1 for i in range(35) if i % 7 != 6 and i % 3 == 2) * 3
    eq(row["b"], nb * 2 * MiB, "leaked bytes of B")
    eq(row["status"], "regression", "more leaked bytes is a regression")
    assert ("memory", "growth_bytes_per_min") in rows, "diff compares the growth rate"


SHARES = ("copy", "kernel", "launch", "sync", "api")


def hold_pair(attempt, workers):
    """Reports of the server at --hold 0 and --hold 20: 70 requests a worker."""
    want = {3: (144, 36, 30), 1: (48, 12, 10)}[workers]
    reps = {}
    for hold in (0, 20):
        counts, out = server("--workers", str(workers), "--requests", "70", "--warmup", "1",
                             "--hold", str(hold), name="server_w%d_hold%d_%d" % (workers, hold, attempt))
        eq((counts["chat"], counts["embed"], counts["legacy"]), want, "request types")
        reps[hold] = report_json(out)
    return reps[0], reps[20]


def compare_holds(a, b, workers):
    """The differences past 5 points between the two runs, as text; the
    exact checks raise. The shares are compared with 1 worker, where both
    runs have the device to themselves; with 3 the checks are exact only:
    at --hold 0 the device is shared all the time, so req:legacy's
    synchronous copies wait 5x longer behind the other workers' kernels
    (and, as they wait on kernels, count partly as kernel time), which moves
    both the mix of request time and req:legacy's own split, while at
    --hold 20 the workers rarely overlap: contention, not a dilution."""
    want = {3: (144, 36, 30), 1: (48, 12, 10)}[workers]
    for d in (a, b):
        eq(d["shares_of"], "requests", "verdict judged on request time")
        eq(d["verdict"], "compute-bound", "verdict (req:chat's decode kernels dominate)")
        types = {q["name"]: q for q in d["requests"]}
        eq(sorted((n, q["count"]) for n, q in types.items()),
           sorted(zip(("req:chat", "req:embed", "req:legacy"), want)), "request types, counts")
        for name, q in types.items():  # the partition adds up to the requests' time
            eq(sum(q[k + "_ns"] for k in SHARES + ("host",)), q["time_ns"], name + ": shares add up")
        rs = d["request_shares"]  # the verdict's shares: of the requests' time, nothing else
        eq((rs["traced_ns"], rs["kernel_ns"]),
           (sum(q["time_ns"] for q in types.values()), sum(q["kernel_ns"] for q in types.values())),
           "request shares: the request types' time and kernel time")
        leg = [f for f in d["findings"] if f["rule"] == "request_pageable"]
        eq([(f["severity"], f["evidence"]["request"], f["evidence"]["copies"]) for f in leg],
           [("high", "req:legacy", 2 * want[2])], "req:legacy's pageable copies, judged on its own time")
    # the waiting shows in the whole process's figure, beside
    assert b["shares"]["idle"] > a["shares"]["idle"] + 0.2, (a["shares"], b["shares"])
    off = []
    sa, sb = a["request_shares"], b["request_shares"]
    if workers == 1 and abs(sa["kernel"] - sb["kernel"]) > 0.05:
        off.append("verdict share %.3f vs %.3f" % (sa["kernel"], sb["kernel"]))
    ta = {q["name"]: q for q in a["requests"]}
    tb = {q["name"]: q for q in b["requests"]}
    for name in ta:
        for k in SHARES + ("host",):
            if workers == 1 and abs(ta[name][k] - tb[name][k]) > 0.05:
                off.append("%s %s: %.3f at --hold 0, %.3f at --hold 20" % (name, k, ta[name][k], tb[name][k]))
    return off


def test_idle_waiting_is_not_cpu_work():
    """Workers that wait 20 ms for each request (blocked outside CUDA) give
    the verdict of workers that never wait (3 workers, exactly: verdict,
    what it is judged on, the pageable finding) and, with 1 worker, the
    same verdict share and per-type breakdown within 5 points: shares are
    of the time inside requests. These are wall-time shares: a host busy
    with other work stretches some requests, so a pair of runs is tried up
    to 3 times (without the rule every try fails: at --hold 20 the threads'
    time is 80 % waiting, cpu-bound)."""
    for workers in (3, 1):
        tries = []
        for attempt in range(3):
            off = compare_holds(*hold_pair(attempt, workers), workers)
            if not off:
                break
            tries.append("; ".join(off))
        else:
            raise AssertionError("%d workers, 3 tries: %s" % (workers, " | ".join(tries)))


def range_gpu(d):
    return {r["name"]: r["gpu_ns"] + r["cold"]["gpu_ns"] for r in d["ranges"]}


def test_request_gpu_is_its_own_work():
    """A range's GPU time is the device time of its own thread's work while
    it was open, nested ranges their own; with 3 workers as with 1."""
    counts, out = server("--hold", "30", "--stagger", "1", name="server_gpu3")
    want = own_gpu(dump_json(out))
    eq(sorted(want), ["decode", "prefill", "req:chat", "req:embed", "req:legacy"], "ranges with work")
    d = report_json(out)
    eq(range_gpu(d), want, "report: GPU time per range = its own work's device time")
    assert want["req:chat"] > want["prefill"] + want["decode"] > 0, want
    per = {q["name"]: q for q in d["requests"]}
    for name in ("req:chat", "req:embed", "req:legacy"):
        n = counts[name.split(":")[1]]
        eq((per[name]["gpu_ns"], per[name]["gpu_per_request_ns"]), (want[name], want[name] // n),
           name + ": requests table GPU")
    # the HTML page's NVTX table: GPU total, exact ns in data-v
    page = os.path.join(TMP, "server_gpu3.html")
    run([GPUTRACE, "html", out, "-o", page, "--force"], base_env(), check_rc=0)
    table = open(page).read().split('id="nvtx"')[1].split("</table>")[0]
    got = {}
    for name, cells in re.findall(r"<tr><td>([^<]*)</td>(.*?)</tr>", table):
        got[name] = int(re.findall(r'data-v="(\d+)"', cells)[-1])
    eq(got, want, "html: GPU total per range")
    # export: nvtx_ranges.gpu_ns per occurrence
    import sqlite3
    db = os.path.join(TMP, "server_gpu3.sqlite")
    if os.path.exists(db):
        os.unlink(db)
    run([GPUTRACE, "export", "--format", "sqlite", "-o", db, out], base_env(), check_rc=0)
    con = sqlite3.connect(db)
    got = dict(con.execute("SELECT name, sum(gpu_ns) FROM nvtx_ranges GROUP BY name"))
    eq(got, want, "export: nvtx_ranges.gpu_ns summed per name")
    eq(con.execute("SELECT count(*) FROM nvtx_ranges WHERE gpu_ns IS NULL").fetchone()[0], 0,
       "export: every range has its GPU time")
    con.close()
    _, one = server("--workers", "1", name="server_gpu1")
    d1 = report_json(one)
    # With 1 worker as with 3: decode (graph launches). The stand-in times a
    # copy (and a kernel waiting for one) with events around it, host-side
    # delays included: their device times follow the host's load, so
    # prefill's and req:chat's are compared only where load is flat: every
    # type is, timed by CUPTI, in test_request_gpu_with_3_workers_as_with_1.
    for name in ("decode",):
        a = range_gpu(d)[name] / {r["name"]: r["count"] for r in d["ranges"]}[name]
        b = range_gpu(d1)[name] / {r["name"]: r["count"] for r in d1["ranges"]}[name]
        assert abs(a - b) <= 0.10 * b, "%s: %.0f ns per range with 3 workers, %.0f with 1" % (name, a, b)


def test_request_gpu_with_3_workers_as_with_1():
    """Timed by CUPTI (the stand-in libcupti: each op's own start and end on
    the device, no event span that a loaded host stretches), every request
    type's and nested range's GPU time per range is the same within 10 %
    with 3 workers sharing the device as with 1: a range counts its own
    work, not what other workers' streams ran meanwhile."""
    per_range = {}
    for workers in (3, 1):
        _, out = server("--workers", str(workers), "--hold", "30", "--stagger", "1",
                        name="server_cupti%d" % workers, GPUTRACE_GPU_TIMING="cupti",
                        GPUTRACE_GPU_TIMING_SAMPLE=1)
        d = report_json(out)
        # exactly its own work's CUPTI records, also those the CUPTI thread
        # wrote before the worker (preempted) wrote its call
        eq(range_gpu(d), own_gpu(dump_json(out)), "%d workers: report = own work" % workers)
        count = {r["name"]: r["count"] for r in d["ranges"]}
        per_range[workers] = {k: v / count[k] for k, v in range_gpu(d).items()}
    eq(sorted(per_range[3]), ["decode", "prefill", "req:chat", "req:embed", "req:legacy"],
       "ranges with work")
    eq(sorted(per_range[1]), sorted(per_range[3]), "the same ranges with 1 worker")
    for name, b in per_range[1].items():
        a = per_range[3][name]
        assert b > 0 and abs(a - b) <= 0.10 * b, \
            "%s: %.0f ns per range with 3 workers, %.0f with 1" % (name, a, b)


def test_metrics_request_gpu():
    """/metrics' gputrace_request_gpu_seconds_total: the same rule, live; and
    `top`'s GPU time per request is those totals over the requests counted."""
    port = promrun.free_port()
    out = os.path.join(TMP, "server_prom.gtrace")
    p = subprocess.Popen([GPUTRACE, "record", "-q", "--prometheus", "127.0.0.1:%d" % port, "-o", out,
                          "--", prog("server"), "--hold", "30", "--stagger", "1", "--linger", "3000"],
                         env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last, deadline = None, time.time() + 60
    while p.poll() is None and time.time() < deadline:
        text = promrun.scrape(port)
        screen = run([GPUTRACE, "top", "-n", "1", "127.0.0.1:%d" % port], base_env()).stdout
        if text and promrun.scrape(port) == text:  # nothing moved while top sampled
            last, top_screen = promrun.parse(text)[0], screen
        time.sleep(0.2)
    p.communicate(timeout=60)
    eq(p.returncode, 0, "traced server")
    assert last, "no scrape"
    want = own_gpu(dump_json(out))
    got = {dict(k[1])["range"]: round(v * 1e9) for k, v in last.items()
           if k[0] == "gputrace_request_gpu_seconds_total"}
    eq({n: got.get(n) for n in want}, want, "/metrics: each range's own work's device time")
    eq(range_gpu(report_json(out)), want, "report agrees")
    # top: each range's GPU time per request, the same totals over its count
    count = {dict(k[1])["range"]: v for k, v in last.items()
             if k[0] == "gputrace_request_seconds_count"}
    rows = {m.group(1): m.group(2) for m in
            re.finditer(r"^(\S+) +(?:-|[\d.]+) +([\d.]+ (?:ms|µs|us|ns|s)) +(?:-|[\d.]+)$", top_screen, re.M)}
    for name in want:
        figure, unit = rows[name].split()
        ns = float(figure) * {"s": 1e9, "ms": 1e6, "µs": 1e3, "us": 1e3, "ns": 1}[unit]
        per = got[name] / count[name]
        assert abs(ns - per) <= 0.005 * per, "top: %s GPU/REQ %s, /metrics %.0f ns" % (name, rows[name], per)


if __name__ == "__main__":
    main([test_leak_is_the_first_finding, test_diff_compares_leaks,
          test_idle_waiting_is_not_cpu_work, test_request_gpu_is_its_own_work,
          test_request_gpu_with_3_workers_as_with_1,
          test_metrics_request_gpu])
