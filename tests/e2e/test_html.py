"""gputrace html: one self-contained page, opened in headless Chromium.

The page is loaded from disk with scripts on (--dump-dom prints the DOM after
they ran): no console message at all (the page's Content-Security-Policy
turns any request into one), the kernel table holds report's kernels in
report's order (the first 200 and a last row summing the rest, exactly, when
there are more), the memory chart's series reaches report's peak. A trace of
100k kernels and 300k range names gives a page under the 5 MiB bound that
Chromium loads. A screenshot of the demo trace's page is left at
BUILD/html_demo.png for a person to look at.

Exits 77 (ctest: skipped, SKIP_RETURN_CODE) only when chromium is not
installed (scripts/deps.sh installs it); everything else runs without it."""
import html
import json
import os
import re
import shutil
import subprocess
import sys

import test_chrome as tc
from gtest import *

CHROMIUM = shutil.which("chromium")


def page(trace, *args, rc=0, out=None):
    """gputrace html TRACE -o OUT --force ARGS: (completed process, OUT)."""
    out = out or os.path.join(TMP, os.path.basename(trace).replace(".gtrace", ".html"))
    p = subprocess.run([GPUTRACE, "html", trace, "-o", out, "--force"] + list(args),
                       capture_output=True, text=True, timeout=300)
    if p.returncode != rc:
        raise AssertionError("html %s %s exited %d, expected %d: %s" %
                             (trace, args, p.returncode, rc, p.stderr))
    return p, out


def report_json(trace, *args):
    p = subprocess.run([GPUTRACE, "report", "--json", trace] + list(args),
                       capture_output=True, text=True, timeout=300)
    eq(p.returncode, 0, "report --json rc")
    return json.loads(p.stdout)


def browse(path, screenshot=None):
    """Chromium's DOM of the page after its scripts ran, and its stderr."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--enable-logging=stderr", "--v=0", "--user-data-dir=" + os.path.join(TMP, "chr")]
    if screenshot:
        args += ["--screenshot=" + screenshot, "--window-size=1280,2400",
                 "--hide-scrollbars"]
    else:
        args += ["--dump-dom"]
    p = subprocess.run(args + ["file://" + os.path.abspath(path)], capture_output=True,
                       text=True, timeout=120)
    return p.stdout, p.stderr


def console_messages(stderr):
    return [l for l in stderr.splitlines() if "CONSOLE" in l or "Content Security" in l]


def table_first_column(dom, table_id):
    m = re.search(r'<table[^>]*id="%s"[^>]*>(.*?)</table>' % table_id, dom, re.S)
    assert m, "no table#%s in the page" % table_id
    body = re.search(r"<tbody>(.*)</tbody>", m.group(1), re.S).group(1)
    return [html.unescape(c) for c in re.findall(r"<tr><td>(.*?)</td>", body, re.S)]


def table_more(dom, table_id):
    """A cut table's last row (tfoot): (rows left out, its cells' data-v
    values as ints, None for "-"), or (0, None) for a whole table."""
    m = re.search(r'<table[^>]*id="%s"[^>]*>(.*?)</table>' % table_id, dom, re.S)
    more = re.search(r'<tfoot><tr class="more"><td>(\d+) more [^<]*</td>(.*?)</tr></tfoot>',
                     m.group(1), re.S)
    if not more:
        return 0, None
    cells = [None if v == "-1" else float(v) if "." in v else int(v)
             for v in re.findall(r'data-v="([^"]*)"', more.group(2))]
    return int(more.group(1)), cells


def table_row(dom, table_id, first):
    """The cells' text of the row of table#table_id whose first cell is first."""
    m = re.search(r'<table[^>]*id="%s"[^>]*>(.*?)</table>' % table_id, dom, re.S)
    for row in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S):
        cells = [html.unescape(re.sub(r"<[^>]*>", "", c))
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells and cells[0] == first:
            return cells
    raise AssertionError("no row %r in table#%s" % (first, table_id))


def memory_peak(text):
    m = re.search(r'<svg[^>]*id="memory"[^>]*data-peak="(\d+)"', text)
    assert m, "no svg#memory with data-peak"
    svg = text[m.start():text.index("</svg>", m.start())]
    series = [v for vs in re.findall(r'data-v="([^"]*)"', svg) for v in vs.split(",") if v]
    return int(m.group(1)), max(int(v) for v in series), len(series)


def self_contained(text):
    assert "Content-Security-Policy" in text and "default-src 'none'" in text, "no CSP"
    bad = re.findall(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//', text, re.I)
    assert not bad, "the page refers to the network: %s" % bad[:3]
    assert "http://" not in text and "https://" not in text, "a URL in the page"


def check_page(trace, out, *args):
    """What every page must do, against report --json of the same selection."""
    with open(out, encoding="utf-8") as f:
        text = f.read()
    self_contained(text)
    rep = report_json(trace, *args)
    dom, err = browse(out)
    eq(console_messages(err), [], "console messages of %s" % out)
    assert "</html>" in dom, "chromium printed no DOM: %s" % err[-2000:]
    shown = table_first_column(dom, "kernels")
    want = [k["kernel"].replace("\ufffd", "?") for k in rep["kernels"]]
    eq(shown, want[:len(shown)], "kernel table: report's kernels in report's order")
    eq(len(shown) + table_more(dom, "kernels")[0], len(want), "kernel rows and the more")
    peak = rep["memory"]["peak_device_bytes"]
    if peak:
        attr, series_max, _ = memory_peak(text)
        eq(attr, peak, "memory chart data-peak")
        eq(series_max, peak, "memory chart series max")
    eq(dom.count("<script"), 1, "script elements after load")
    return text, rep, dom


def test_demo():
    _, trace = record([prog("infer"), "20"])
    p, out = page(trace)
    assert re.search(r"gputrace html: wrote .*infer\.html \(\d+ KB\): open it in a browser",
                     p.stderr), p.stderr
    text, rep, dom = check_page(trace, out)
    for section in ("verdict", "memory-s", "device", "requests", "tables", "flames"):
        assert 'id="%s"' % section in text, "no section %s" % section
    if rep["verdict"]:
        assert ">%s <small>" % rep["verdict"] in text, "the verdict is not on the page"
    for f in rep["findings"]:
        assert html.escape(f["rule"]) in text, "finding %s not on the page" % f["rule"]
    eq(len(table_first_column(dom, "api")), len(rep["api"]), "API table rows")
    eq(len(table_first_column(dom, "nvtx")), len(rep["ranges"]), "NVTX table rows")
    once = table_row(dom, "nvtx", "load_model")
    eq((once[1], once[2] != "-", once[3:5]), ("1", True, ["-", "-"]),
       "a range that ran once: its count, its first's time, no warm p50 or p90 (never 0 ns)")
    # the same headers as report's text table, the same figures: means per range
    rtext = run([GPUTRACE, "report", trace], base_env(), check_rc=0).stdout
    warm = [g for g in rep["ranges"] if g["warm_count"]]
    if not warm:
        raise AssertionError("no range ran twice")
    for g in warm:
        line = re.search(r"^  %s +\d+ .*$" % re.escape(g["name"]), rtext, re.M).group(0)
        m = re.search(r"([\d.]+) +([\d.]+ [KMG]?i?B) +([\d.]+) +(?:[\d.]+ [mun]?s|-)$", line)
        row = table_row(dom, "nvtx", g["name"])
        eq(row[8:11], [m.group(1), m.group(2), m.group(3)],
           "%s: launches, copied, allocs as in report's text" % g["name"])
    assert 'class="flame"' in text, "no flame graph"
    shot = os.path.join(BUILD, "html_demo.png")
    if os.path.exists(shot):
        os.unlink(shot)
    _, err = browse(out, screenshot=shot)
    assert os.path.getsize(shot) > 10000, "no screenshot: %s" % err[-2000:]


def test_multi_process():
    _, trace = record([prog("forked")])
    _, out = page(trace)
    text, rep, _ = check_page(trace, out)
    pids = sorted(set(re.findall(r'data-name="pid (\d+)"', text[text.index('id="memory"'):])))
    assert len(pids) >= 2, "one memory line per process, got %s" % pids
    child = [p for p in pids if int(p) != rep["memory"]["pid"]][0]
    _, out = page(trace, "--pid", child, out=os.path.join(TMP, "child.html"))
    check_page(trace, out, "--pid", child)


def test_filters_and_output():
    _, trace = record([prog("forked")], out=os.path.join(TMP, "filt.gtrace"))
    default = os.path.join(TMP, "filt.html")
    p = subprocess.run([GPUTRACE, "html", trace], capture_output=True, text=True)
    eq(p.returncode, 0, "rc, default output: " + p.stderr)
    assert os.path.exists(default), "FILE.gtrace -> FILE.html"
    p = subprocess.run([GPUTRACE, "html", trace], capture_output=True, text=True)
    eq(p.returncode, 2, "rc with the output present and no --force")
    assert "--force" in p.stderr, p.stderr
    os.unlink(default)
    p = subprocess.run([GPUTRACE, "html", trace, "--pid", "999999"], capture_output=True,
                       text=True)
    eq(p.returncode, 2, "rc of a --pid matching nothing")
    assert "matches nothing" in p.stderr, p.stderr
    assert not os.path.exists(default), "the output of a failed run is removed"
    p = subprocess.run([GPUTRACE, "html", trace, "--from", "1000s"], capture_output=True,
                       text=True)
    eq(p.returncode, 2, "rc of a window matching nothing")
    p = subprocess.run([GPUTRACE, "html", trace, "-o", "-"], capture_output=True, text=True)
    eq(p.returncode, 0, "rc to stdout")
    assert p.stdout.startswith("<!DOCTYPE html>") and p.stdout.endswith("</html>\n")
    eq(p.stderr, "", "stderr writing to stdout")
    p = subprocess.run([GPUTRACE, "html", trace, "-o", trace, "--force"],
                       capture_output=True, text=True)
    eq(p.returncode, 2, "rc of an output that is the trace")


def test_nvml_readings():
    import test_nvml as tn
    trace = tn.traced()
    _, out = page(trace)
    text, _, _ = check_page(trace, out)
    m = re.search(r'<svg[^>]*id="nvml-gpu_util".*?</svg>', text, re.S)
    assert m, "no GPU utilization chart"
    lines = dict(re.findall(r'data-name="([^"]*)" data-v="([^"]*)"', m.group(0)))
    for dev, readings in tn.scripted().items():
        want = max(r["gpu_util"] for r in readings if "gpu_util" in r)
        got = max(float(v) for v in lines["GPU %d" % dev].split(",") if v)
        eq(got, want, "GPU %d utilization's highest reading" % dev)


HOSTILE = b"""process ts=1000 phase=start ppid=1 text=./evil
kernel_name ts=1001 kernel=0x10 text=k<script>alert(1)</script>&"'\xff\xfe\xe2\x80\xa8end
alloc ts=1500 dur=10 ptr=0x1000 bytes=4096 memory=1
nvtx ts=2000 op=push text=</svg><img src=x onerror=alert(2)>\xc3
launch ts=2100 dur=50 kernel=0x10 stream=0x5 corr=1
sync ts=2200 dur=100
nvtx ts=2400 op=pop
nvtx ts=3000 op=push text=</svg><img src=x onerror=alert(2)>\xc3
launch ts=3100 dur=50 kernel=0x10 stream=0x5 corr=2
sync ts=3200 dur=100
nvtx ts=3400 op=pop
"""


def test_escaping():
    path = os.path.join(TMP, "evil.gtrace")
    p = subprocess.run([tc.SYNTH, path], input=HOSTILE, capture_output=True, timeout=60)
    eq(p.returncode, 0, "synth: %r" % p.stderr)
    _, out = page(path)
    raw = open(out, "rb").read()
    raw.decode("utf-8")  # valid UTF-8 throughout
    text = raw.decode("utf-8")
    assert "<script>alert" not in text and "<img" not in text, "trace text as markup"
    assert "\u2028" not in text, "U+2028 passed into the page as it is"
    check_page(path, out)


def test_bounded_size():
    trace = tc.gen("big", 300000, "--device", "--threads", "4")
    _, out = page(trace)
    size = os.path.getsize(out)
    assert size < 2 * 1024 * 1024, "page of %d bytes for 300 k records" % size
    text = open(out, encoding="utf-8").read()
    for vs in re.findall(r'data-v="([^"]*)"', text):
        assert len(vs.split(",")) <= 500, "a series of more than 500 buckets"
    for pts in re.findall(r'<polyline class="ln"[^>]*points="([^"]*)"', text):
        assert len(pts.split()) <= 1000, "a line of more than 1000 points"


def many_names_script(kernels, ranges):
    """kernels named kernels, each launched once (host time varied, every
    other one timed on the device) and ranges NVTX range names, the first
    thousand three times (warm figures to sum), the rest once."""
    out = ["process ts=1000 phase=start ppid=1 text=./many\n"]
    ts = 2000
    for i in range(kernels):
        out.append("kernel_name ts=%d kernel=0x%x text=void ns::gemm_%06d<float, 128>"
                   "(float const*, float*, int)\n" % (ts, 0x100000 + 16 * i, i))
        ts += 1
    for i in range(kernels):
        k = 0x100000 + 16 * i
        out.append("launch ts=%d dur=%d kernel=0x%x stream=0x5 corr=%d\n"
                   % (ts, 50 + i * 7919 % 1000, k, i + 1))
        if i % 2:
            out.append("device ts=%d dur=%d stream=0x5 kernel=0x%x corr=%d of_kind=launch "
                       "sample=1\n" % (ts + 10, 100 + i * 104729 % 5000, k, i + 1))
        ts += 2000
    for occ in range(3):
        for i in range(ranges if occ == 0 else 1000):
            out.append("nvtx ts=%d op=push text=request/stage_%06d\nlaunch ts=%d dur=20 "
                       "kernel=0x100000 stream=0x5\nnvtx ts=%d op=pop\n"
                       % (ts, i, ts + 1, ts + 100 + (i * 31 % 900)))
            ts += 1000
    return "".join(out)


def test_many_names():
    """100k kernels and 300k range names: the page is under its bound (5 MiB,
    docs/cli.md) and Chromium loads it; each cut table shows report's first
    200 rows, in report's order, and a last row whose count and sums are
    exactly those of the rows left out, so no total on the page changes."""
    path = os.path.join(TMP, "many.gtrace")
    p = subprocess.run([tc.SYNTH, path], input=many_names_script(100000, 300000),
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, "synth: %s" % p.stderr)
    _, out = page(path)
    size = os.path.getsize(out)
    assert size <= 5 * 1024 * 1024, "a page of %d bytes, over 5 MiB" % size
    text, rep, dom = check_page(path, out)
    shown = table_first_column(dom, "kernels")
    eq(len(shown), 200, "kernel rows shown")
    more, cells = table_more(dom, "kernels")
    rest = rep["kernels"][200:]
    timed = [k for k in rest if k.get("gpu_timed")]
    eq(more, len(rest), "kernels left out")
    eq(cells, [sum(k["launches"] for k in rest), sum(k["cpu_total_ns"] for k in rest),
               sum(k["cpu_total_ns"] for k in rest) // sum(k["launches"] for k in rest),
               sum(k["gpu_total_ns"] for k in timed),
               sum(k["gpu_mean_ns"] * k["gpu_timed"] for k in timed) //
               sum(k["gpu_timed"] for k in timed), max(k["gpu_max_ns"] for k in timed)],
       "the kernels' last row: their launches, launch time, GPU time, exactly")
    shown = table_first_column(dom, "nvtx")
    eq(shown, [g["name"] for g in rep["ranges"][:200]], "range rows: report's first 200")
    more, cells = table_more(dom, "nvtx")
    rest = rep["ranges"][200:]
    warm = [g for g in rest if g["warm_count"]]
    eq(more, len(rest), "range names left out")
    eq(cells, [sum(g["count"] for g in rest), None, None, None, None,
               max(g["max_ns"] for g in warm),
               sum(g["mean_ns"] * g["warm_count"] for g in warm) //
               sum(g["warm_count"] for g in warm),
               round(sum(g["launches"] for g in warm) / sum(g["warm_count"] for g in warm), 1),
               sum(g["bytes"] for g in warm) // sum(g["warm_count"] for g in warm),
               round(sum(g["allocs"] for g in warm) / sum(g["warm_count"] for g in warm), 1),
               sum(g.get("gpu_ns", 0) + g["cold"].get("gpu_ns", 0) for g in rest)],
       "the ranges' last row: their occurrences, warm means per range as report's "
       "columns, and their own work's GPU total, exactly")
    assert "299984 more are not" in text, "the histogram says what it left out"


if __name__ == "__main__":
    if not CHROMIUM:
        print("SKIP: chromium is not installed (scripts/deps.sh installs it)")
        sys.exit(77)
    main([test_demo, test_multi_process, test_filters_and_output, test_nvml_readings,
          test_escaping, test_bounded_size, test_many_names])
