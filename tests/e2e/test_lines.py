"""Launches by line, exactly, under default settings: lines_server (built
-O2 -g) launches the same kernels from several lines (<<<>>> of a plain,
a namespaced and a template kernel with two instances, from a function
and from a thread's lambda; cudaLaunchKernelEx; cudaLaunchCooperativeKernel),
each line a known number of times; report's "GPU time by launching line",
pprof --gpu's launches and flame --gpu's GPU time give each line its own
count (the <<<>>> line, never the kernel's declaration or nvcc's stubs),
and GPU time by line is the stand-in's kernel model times the count
(within 5 %). A graph's replayed node counts at the line that launched the
graph, the capturing line the frame beneath it (flame, pprof). Before the launch key took the <<<>>> line, the three
mlp_fused <<<>>> lines were one site (nvcc's stub), the template kernels
were "at" their declaration, and counts were spread from samples."""
import collections
import os
import re
import shutil
import subprocess
from gtest import *

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "cuda", "lines_server.cu")
GO = shutil.which("go")
ROUNDS = 5
# the program's own counts per round (lines_server.cu's enum)
PER_ROUND = {"gemm_f": 300, "gemm_i": 300, "mlp_pre": 300, "mlp_dec": 900, "rms_thr": 40,
             "fill_thr": 1, "mlp_ex": 3, "mlp_coop": 2}
# the stand-in's kernel model (standin/timeline.c si_dur_kernel): base 2000 ns
# plus 100 ps per thread; every launch here is grid 4, block 128 but fill's
KERNEL_NS = 2000 + 4 * 128 * 100 / 1000
FILL_NS = 2000 + 4096 * 1024 * 100 / 1000


def model_ns(line):
    return FILL_NS if line == marker_lines()["fill_thr"] else KERNEL_NS


def marker_lines():
    lines = {}
    for i, text in enumerate(open(SRC).read().splitlines(), 1):
        m = re.search(r"// L:(\w+)$", text)
        if m:
            lines[m.group(1)] = i
    return lines


def by_line(pairs):
    """{line number in lines_server.cu: summed value} from (site, value)."""
    out = collections.Counter()
    for site, v in pairs:
        m = re.search(r"lines_server\.cu:(\d+)", site)
        out[int(m.group(1)) if m else site] += v
    return dict(out)


# graph replays per round, by the line that launched the graph (one node each)
GRAPH_PER_ROUND = {"graph_a": 10, "graph_b": 4}


def expected():
    """{line: launches}: eager launches at their lines, a graph's node runs at
    the line that launched the graph (none at the capturing line)."""
    lines = marker_lines()
    want = {lines[k]: n * ROUNDS for k, n in PER_ROUND.items()}
    want.update({lines[k]: n * ROUNDS for k, n in GRAPH_PER_ROUND.items()})
    return want


def trace():
    p, out = record([prog("lines_server"), str(ROUNDS)])
    if "mlp_dec=%d" % (900 * ROUNDS) not in p.stdout:
        raise AssertionError("lines_server: %r" % p.stdout)
    return out


def test_report_launches_by_line():
    t = trace()
    rep = json.loads(run([GPUTRACE, "report", "--json", t], base_env(), check_rc=0).stdout)
    rows = rep["gpu_by_line"]
    got = by_line((r["site"], r["launches"]) for r in rows)
    eq(got, expected(), "report: launches by line")
    ns = by_line((r["site"], r["gpu_ns"]) for r in rows)
    for line, n in expected().items():
        want = n * model_ns(line)
        if abs(ns[line] - want) > 0.05 * want:
            raise AssertionError("report: line %d: GPU %d ns, the model %d" %
                                 (line, ns[line], want))
    # the template kernel's two instances are at their own <<<>>> lines
    lines = marker_lines()
    names = {r["site"] for r in rows}
    for k in ("gemm_f", "gemm_i"):
        if not any(s.endswith("lines_server.cu:%d" % lines[k]) for s in names):
            raise AssertionError("no row at the %s line: %s" % (k, sorted(names)))
    flame = run([GPUTRACE, "flame", "--gpu", t], base_env(), check_rc=0).stdout
    fl, beneath = collections.Counter(), collections.defaultdict(set)
    for l in flame.splitlines():
        stack, v = l.rsplit(" ", 1)
        lines_in = [int(x) for x in re.findall(r"lines_server\.cu:(\d+)\)", stack)]
        # a graph's node: the capturing line is the frame under the launching one
        at = lines_in[-2] if lines_in[-1] == lines["mlp_cap"] else lines_in[-1]
        fl[at] += int(v)
        beneath[at].add(lines_in[-1])
    for k in GRAPH_PER_ROUND:
        eq(beneath[lines[k]], {lines["mlp_cap"]}, "flame --gpu: the frame under " + k)
    for line, n in expected().items():
        want = n * model_ns(line)
        if abs(fl[line] - want) > 0.05 * want:
            raise AssertionError("flame --gpu: line %d: %d ns, the model %d\n%s" %
                                 (line, fl[line], want, flame))


def test_instances_print_apart():
    """The template kernel's two instances, shortened to the tables' columns,
    keep their template arguments: report's kernel table, diff and pprof's
    function names (go tool pprof -top) each show two names (top shortens
    with the same gt_name_fit).
    Before, both read `void gemm_tiled<…>(…)` (and `void gemm_tiled` in
    pprof)."""
    t = trace()
    want = ["void gemm_tiled<float, 16>(…)", "void gemm_tiled<int, 8>(…)"]
    rep = run([GPUTRACE, "report", t], base_env(), check_rc=0).stdout
    kern = rep.split("\nKernels")[1].split("\n\n")[0]
    eq(sorted(n for n in want if n in kern), want, "report: the kernel table's names")
    d = run([GPUTRACE, "diff", "--all", t, t], base_env(), check_rc=0).stdout
    eq(sorted(n for n in want if n in d), want, "diff: the names")
    rows = kern.splitlines()
    end = rows[1].index("launches") + len("launches")  # the column's right edge
    for r in rows[2:]:
        if r.strip() and not (r[end - 1].isdigit() and r[end] == " "):
            raise AssertionError("report: a kernel row out of its columns:\n" + kern)
    if GO:
        out = os.path.join(TMP, "lines_names.pb.gz")
        run([GPUTRACE, "pprof", "--gpu", t, "-o", out], base_env(), check_rc=0)
        top = subprocess.run([GO, "tool", "pprof", "-top", out], capture_output=True,
                             text=True, timeout=120, env=dict(os.environ, HOME=TMP),
                             cwd=TMP, check=True).stdout
        for n in ("void gemm_tiled<float, 16>(float*, int, float const*, float const*, float)",
                  "void gemm_tiled<int, 8>(int*, int, int const*, int const*, float)"):
            if not re.search(re.escape(n) + r"\s*$", top, re.M):
                raise AssertionError("pprof -top lacks %r:\n%s" % (n, top))


def raw_launches(path):
    """{line: launches} from go tool pprof -raw: the line of the location
    above the kernel's, or above the capturing line for a graph's node."""
    out = subprocess.run([GO, "tool", "pprof", "-raw", path], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ, HOME=TMP),
                         cwd=TMP, check=True).stdout
    samples, locs = out.split("Locations")[0], out.split("Locations")[1]
    loc_line, cur = {}, None  # a location's innermost line in lines_server.cu
    for l in locs.splitlines():
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ ", l)
        cur = int(m.group(1)) if m else cur
        m = re.search(r"lines_server\.cu:(\d+) s=", l)
        if m and cur is not None and cur not in loc_line:
            loc_line[cur] = int(m.group(1))
    got = collections.Counter()
    for l in samples.splitlines():
        m = re.match(r"^\s+(\d+)\s+\d+\s+\d+:\s+([\d ]+)$", l)
        if m:
            ids = [int(x) for x in m.group(2).split()]
            at = loc_line.get(ids[1], ids[1])
            if at == marker_lines()["mlp_cap"]:
                at = loc_line.get(ids[2], ids[2])
            got[at] += int(m.group(1))
    return dict(got)


def test_pprof_launches_by_line():
    if not GO:
        print("skipped: no go (pprof)")
        return
    t = trace()
    out = os.path.join(TMP, "lines.pb.gz")
    run([GPUTRACE, "pprof", "--gpu", t, "-o", out], base_env(), check_rc=0)
    eq(raw_launches(out), expected(), "pprof --gpu: launches by line")


if __name__ == "__main__":
    main([test_report_launches_by_line, test_pprof_launches_by_line, test_instances_print_apart])
