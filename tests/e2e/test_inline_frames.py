"""Inlined frames as frames of their own: inline_leak (built -O2 -g) leaks
a cudaMalloc made in an always-inline helper called from a thread's lambda
(all of it inlined into std::thread's _M_run: one return address), and a
cudaMallocHost made in an always-inline helper called from a lambda inlined
into main. Each leak's frames are the inline chain `addr2line -i` gives for
its address — the same (file, line) levels in the same order — with the
helper, the lambda and _M_run as separate frames, in leaks, flame, pprof
-traces and export; the pinned leak keeps its user frames. Before, libdw's
dwarf_getscopes was followed past the innermost inlined call through the
lambda's definition: the device leak read grab <- _M_run at
inline_leak.cu:30, the lambda and std::thread's inlined calls gone."""
import csv
import os
import re
import shutil
import subprocess
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "cuda", "inline_leak.cu")
GO = shutil.which("go")


def markers():
    return {m.group(1): i for i, l in enumerate(open(SRC).read().splitlines(), 1)
            for m in [re.search(r"// L:(\w+)$", l)] if m}


def addr2line(path, offset):
    """[(function, "file:line")] innermost first, from addr2line -i -f -C."""
    out = subprocess.run(["addr2line", "-i", "-f", "-C", "-e", path, "0x%x" % offset],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return [(out[i], out[i + 1]) for i in range(0, len(out) - 1, 2)]


def loc(file, line):
    return "%s:%s" % (os.path.basename(file), line)


def leak_sites():
    """The trace, and per leaked kind (device, pinned_host): the export's
    frames of its stack's first address, and addr2line's for it."""
    _, trace = record([prog("inline_leak")])
    events = dump(trace)
    exe = [m for m in select(events, kind="module") if m["path"].endswith("/inline_leak")]
    eq(len(exe), 1, "the program's module")
    bias = int(exe[0]["bias"], 16)
    out = os.path.join(TMP, "inline_leak.csv")
    run([GPUTRACE, "export", "--format", "csv", "--force", "-o", out, trace], base_env(),
        check_rc=0)
    frames = list(csv.DictReader(open(os.path.join(out, "frames.csv"))))
    allocs = list(csv.DictReader(open(os.path.join(out, "allocations.csv"))))
    sites = {}
    for a in allocs:
        kind = "pinned_host" if "Host" in a.get("api", "") else "device"
        st = [f for f in frames if f["stack_id"] == a["stack_id"] and f["pid"] == a["pid"]]
        st.sort(key=lambda f: int(f["level"]))
        first = [f for f in st if f["ip"] == st[0]["ip"]]
        a2l = addr2line(prog("inline_leak"), int(first[0]["ip"]) - bias - 1)
        sites[kind] = (first, a2l)
    return trace, sites


def test_inline_chain_as_addr2line_gives_it():
    trace, sites = leak_sites()
    eq(sorted(sites), ["device", "pinned_host"], "leaked allocations")
    m = markers()
    for kind, (first, a2l) in sites.items():
        eq([loc(f["file"], f["line"]) for f in first], [loc(*x[1].rsplit(":", 1)) for x in a2l],
           kind + ": export's inline levels against addr2line -i")
    dev = [(f["function"], loc(f["file"], f["line"])) for f in sites["device"][0]]
    eq(dev[0], ("grab", "inline_leak.cu:%d" % m["grab"]), "the helper")
    eq(dev[1], ("operator()", "inline_leak.cu:%d" % m["lambda"]), "the lambda")
    if not dev[-1][0].endswith("::_M_run()"):
        raise AssertionError("the outermost level is not _M_run: %r" % dev)
    pin = [(f["function"], loc(f["file"], f["line"])) for f in sites["pinned_host"][0]]
    eq(pin[:3], [("pin", "inline_leak.cu:%d" % m["pin"]),
                 ("operator()", "inline_leak.cu:%d" % m["pin_lambda"]),
                 ("main", "inline_leak.cu:%d" % m["main_pin"])], "the pinned leak's user frames")

    # leaks --json: the same frames, in order, at the top of each leak's stack
    rep = json.loads(run([GPUTRACE, "leaks", "--json", trace], base_env(), check_rc=0).stdout)
    by_kind = {l["memory"]: l["stack"] for l in rep["leaks"]}
    for kind, (first, _) in sites.items():
        eq([(f["function"], loc(f["file"], f["line"])) for f in by_kind[kind][:len(first)]],
           [(f["function"], loc(f["file"], f["line"])) for f in first], "leaks: " + kind)

    # flame (leaked bytes): the levels as frames, outermost first
    folded = run([GPUTRACE, "flame", trace], base_env(), check_rc=0).stdout.splitlines()
    dev_line = [l for l in folded if l.endswith(" 1048576")]
    eq(len(dev_line), 1, "flame: the device leak's line")
    want = ";".join("%s (%s)" % (fn, at) for fn, at in reversed(dev))
    if want not in dev_line[0]:
        raise AssertionError("flame: %r lacks %r" % (dev_line[0], want))

    if GO:  # pprof -traces: the inlined functions as lines of the trace
        pb = os.path.join(TMP, "inline_leak.pb.gz")
        run([GPUTRACE, "pprof", trace, "-o", pb], base_env(), check_rc=0)
        traces = subprocess.run([GO, "tool", "pprof", "-traces", pb], capture_output=True,
                                text=True, timeout=120, env=dict(os.environ, HOME=TMP),
                                cwd=TMP, check=True).stdout
        block = [b for b in traces.split("-----------+") if "grab" in b]
        eq(len(block), 1, "pprof -traces: the device leak")
        lines = [l.strip() for l in block[0].splitlines()
                 if l.strip() and not l.strip().startswith("-") and ":  " not in l]
        lines[0] = re.sub(r"^\S+\s+", "", lines[0])  # the sample's value
        names = [re.sub(r"\s*\(inline\)$", "", l) for l in lines]
        eq(names[:2], ["grab", "operator()"], "pprof -traces: the helper and the lambda")
        if not any("::_M_run" in n for n in names[2:]):
            raise AssertionError("pprof -traces: no _M_run: %r" % names)


if __name__ == "__main__":
    main([test_inline_chain_as_addr2line_gives_it])
