"""A multi-worker server (tests/cuda/server.cu, issue 36) through report,
html, export, diff and /metrics: the leak is the first finding with its line
and its bytes per request; the verdict and the per-request-type breakdown
hold whether workers wait for requests or not; a request's GPU time is the
device time of its own work, exactly."""
import json
import re
from gtest import *

MiB = 1 << 20
LEAK_LINE = 73  # embed_cache_grow's cudaMalloc in server.cu


def server(*args, name="server"):
    p, out = record([prog("server")] + list(args),
                    out=os.path.join(TMP, "%s.gtrace" % name))
    m = re.search(r"server: workers (\d+) requests (\d+) chat (\d+) embed (\d+) legacy (\d+) "
                  r"leaked_bytes (\d+)", p.stdout)
    assert m, "server printed: %r" % p.stdout
    keys = ("workers", "requests", "chat", "embed", "legacy", "leaked_bytes")
    return dict(zip(keys, map(int, m.groups()))), out


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


def test_idle_waiting_is_not_cpu_work():
    """Workers that wait 20 ms for each request (blocked outside CUDA) give
    the verdict and per-type breakdown of workers that never wait, within 5
    points: shares are of the time inside requests."""
    reps = {}
    for hold in (0, 20):
        counts, out = server("--requests", "70", "--hold", str(hold), name="server_hold%d" % hold)
        eq((counts["chat"], counts["embed"], counts["legacy"]), (144, 36, 30), "request types")
        reps[hold] = report_json(out)
    a, b = reps[0], reps[20]
    for d in (a, b):
        eq(d["shares_of"], "requests", "verdict judged on request time")
        eq(d["verdict"], "compute-bound", "verdict (req:chat's decode kernels dominate)")
        types = {q["name"]: q for q in d["requests"]}
        eq(sorted((n, q["count"]) for n, q in types.items()),
           [("req:chat", 144), ("req:embed", 36), ("req:legacy", 30)], "request types, counts")
        leg = [f for f in d["findings"] if f["rule"] == "request_pageable"]
        eq([(f["severity"], f["evidence"]["request"], f["evidence"]["copies"]) for f in leg],
           [("high", "req:legacy", 60)], "req:legacy's pageable copies, judged on its own time")
    # the waiting shows in the whole process's figure, beside
    assert b["shares"]["idle"] > a["shares"]["idle"] + 0.2, (a["shares"], b["shares"])
    sa, sb = a["request_shares"], b["request_shares"]
    w = {"compute-bound": "kernel"}[a["verdict"]]
    assert abs(sa[w] - sb[w]) <= 0.05, "verdict share %.3f vs %.3f" % (sa[w], sb[w])
    ta = {q["name"]: q for q in a["requests"]}
    tb = {q["name"]: q for q in b["requests"]}
    for name in ta:
        for k in SHARES + ("host",):
            assert abs(ta[name][k] - tb[name][k]) <= 0.05, \
                "%s %s: %.3f at --hold 0, %.3f at --hold 20" % (name, k, ta[name][k], tb[name][k])
        # the partition adds up to the requests' time
        eq(sum(tb[name][k + "_ns"] for k in SHARES + ("host",)), tb[name]["time_ns"],
           name + ": shares add up")


if __name__ == "__main__":
    main([test_leak_is_the_first_finding, test_diff_compares_leaks,
          test_idle_waiting_is_not_cpu_work])
