"""test_first_hour_data.py — what gputrace says when the trace cannot answer:
a program built the way plain nvcc builds it (static runtime: NVTX recorded,
no CUDA call) gets the one warning from `record` and every command; a
traced program gets none; a --pid/--from/--to that selects nothing is an
error (status 2) naming what the trace holds; a window without CUDA calls
has no verdict; a near tie names its runner-up; growth over a short run
has no rate; severities are coloured on a terminal only.

Run: python3 tests/e2e/test_first_hour_data.py BUILD
"""
import json
import os
import pty
import re
import subprocess

from gtest import GPUTRACE, TMP, base_env, eq, main, prog, record, run

CAUSES = (
    "  likely causes:\n"
    "  - the program links the CUDA runtime statically (nvcc's default,\n"
    "    libcudart_static) and no CUDA driver was loaded: rebuild it with\n"
    "    `nvcc -cudart shared` (`ldd PROGRAM | grep cudart` prints nothing\n"
    "    when static)\n"
    "  - the program never reached CUDA: it failed or exited first (see its output)\n"
    "  - the CUDA runtime was loaded from an unusual path: `LD_DEBUG=libs PROGRAM\n"
    "    2>&1 | grep -i cuda` shows which CUDA libraries it loaded, from where\n")


def warning(cmd, path):
    return "gputrace %s: warning: no CUDA calls were recorded in %s\n%s" % (cmd, path, CAUSES)


def record_loud(name, out):
    """record without -q: its closing lines on stderr."""
    if os.path.lexists(out):
        os.unlink(out)
    return run([GPUTRACE, "record", "-o", out, "--", prog(name)], base_env(), check_rc=0)


def commands(trace, other):
    """Every command reading a trace, as (name, argv)."""
    return [("report", ["report", trace]), ("report", ["report", "--json", trace]),
            ("leaks", ["leaks", trace]), ("leaks", ["leaks", "--json", trace]),
            ("flame", ["flame", trace]), ("flame", ["flame", "--gpu", trace]),
            ("chrome", ["chrome", "--force", "-o", os.path.join(TMP, "x.json"), trace]),
            ("pprof", ["pprof", "--force", "-o", os.path.join(TMP, "x.pb.gz"), trace]),
            ("dump", ["dump", "--summary", trace]), ("dump", ["dump", trace]),
            ("dump", ["dump", "--json", trace]),
            ("diff", ["diff", other, trace])]


def test_static_runtime_warns_everywhere():
    static, shared = os.path.join(TMP, "static.gtrace"), os.path.join(TMP, "shared.gtrace")
    p = record_loud("nvtx_static", static)
    if not p.stderr.endswith(warning("record", static)):
        raise AssertionError("record's closing lines:\n" + p.stderr)
    record_loud("nvtx", shared)
    for cmd, argv in commands(static, shared):
        p = run([GPUTRACE] + argv, base_env())
        if cmd == "pprof":  # then the line naming what it wrote
            eq(p.stderr.count("\n"), warning(cmd, static).count("\n") + 1, "pprof's lines")
        eq((p.returncode, p.stderr[:len(warning(cmd, static))]), (0, warning(cmd, static)),
           " ".join(argv))
    text = run([GPUTRACE, "report", static], base_env()).stdout
    if "\nVerdict: none — no data (no CUDA calls)\n" not in text:
        raise AssertionError("no verdict without CUDA calls:\n" + text)
    rep = json.loads(run([GPUTRACE, "report", "--json", static], base_env()).stdout)
    eq((rep["verdict"], rep["no_data"], rep["runner_up"]), (None, True, None), "JSON verdict")
    d = json.loads(run([GPUTRACE, "diff", "--json", shared, static], base_env()).stdout)
    eq(d["verdict"]["b"], None, "diff: B has no verdict")


def test_traced_program_no_warning():
    shared = os.path.join(TMP, "shared_quiet.gtrace")
    p = record_loud("nvtx", shared)
    if "no CUDA calls" in p.stderr:
        raise AssertionError("record warned on a traced program:\n" + p.stderr)
    for cmd, argv in commands(shared, shared):
        p = run([GPUTRACE] + argv, base_env())
        eq((p.returncode, "no CUDA calls" in p.stderr), (0, False), " ".join(argv))


def test_filter_matching_nothing_is_an_error():
    _, trace = record([prog("nvtx")], out=os.path.join(TMP, "filter.gtrace"))
    dumped = run([GPUTRACE, "dump", "--json", trace], base_env(), check_rc=0).stdout
    pid = json.loads(dumped.splitlines()[0])["pid"]
    t = r"[0-9.]+ (ns|µs|ms|s)"
    holds = r": it holds pid %d; its calls span \+%s \.\. \+%s\n$" % (pid, t, t)
    for cmd in ("report", "chrome", "pprof"):
        out = os.path.join(TMP, "filtered." + cmd)
        extra = [] if cmd == "report" else ["-o", out]
        for args, what in ((["--pid", "99999"], "--pid 99999"),
                           (["--from", "5s"], "--from 5.00 s"),
                           (["--from", "5s", "--to", "6s"], "--from 5.00 s --to 6.00 s")):
            p = run([GPUTRACE, cmd, trace] + extra + args, base_env())
            eq((p.returncode, p.stdout), (2, ""), "%s %s" % (cmd, args))
            if not re.match(re.escape("gputrace %s: %s matches nothing in %s" % (cmd, what, trace))
                            + holds, p.stderr):
                raise AssertionError("%s %s: %r" % (cmd, args, p.stderr))
            eq(os.path.exists(out), False, "%s %s wrote nothing" % (cmd, args))


def test_backwards_window_is_refused():
    # --to at or before --from: refused before the trace is read, one text
    _, trace = record([prog("nvtx")], out=os.path.join(TMP, "window.gtrace"))
    for cmd in ("report", "html", "export", "pprof"):
        out = os.path.join(TMP, "window." + cmd)
        extra = [] if cmd == "report" else ["-o", out]
        for args in (["--from", "2s", "--to", "1s"], ["--from", "1s", "--to", "1s"]):
            p = run([GPUTRACE, cmd, trace] + extra + args, base_env())
            eq((p.returncode, p.stdout, p.stderr),
               (2, "", "gputrace %s: --to must be later than --from\n" % cmd),
               "%s %s" % (cmd, args))
            eq(os.path.exists(out), False, "%s %s wrote nothing" % (cmd, args))


def test_empty_trace_has_no_verdict():
    p, trace = record(["/bin/true"], out=os.path.join(TMP, "true.gtrace"))
    p = run([GPUTRACE, "report", trace], base_env(), check_rc=0)
    eq(p.stderr, warning("report", trace), "report of `true`")
    if "\nVerdict: none — no data (no CUDA calls)\n" not in p.stdout:
        raise AssertionError(p.stdout)
    # a window or pid on a trace without calls: nothing to miss but the pid
    p = run([GPUTRACE, "report", trace, "--from", "5s"], base_env(), check_rc=0)
    p = run([GPUTRACE, "report", trace, "--pid", "1"], base_env(), check_rc=2)
    eq(p.stderr.splitlines()[-1],
       "gputrace report: --pid 1 matches nothing in %s: it holds no process; no timed calls"
       % trace, "pid on an empty trace")


def test_near_tie_names_the_runner_up():
    _, trace = record([prog("infer"), "20"], out=os.path.join(TMP, "demo.gtrace"))
    rep = json.loads(run([GPUTRACE, "report", "--json", trace], base_env(), check_rc=0).stdout)
    s = rep["request_shares"] if rep["shares_of"] == "requests" else rep["shares"]
    groups = {"transfer-bound": s["copy"], "compute-bound": s["kernel"],
              "launch-bound": s["launch"], "cpu-bound": s["idle"] + s["api"]}
    ranked = sorted(groups, key=lambda g: -groups[g])
    eq(rep["verdict"], ranked[0], "verdict")
    close = groups[ranked[0]] - groups[ranked[1]] <= 0.05
    eq(rep["runner_up"], ranked[1] if close else None, "runner-up within 5 points")
    text = run([GPUTRACE, "report", trace], base_env(), check_rc=0).stdout
    line = [l for l in text.splitlines() if l.startswith("Verdict: ")][0]
    want = r"Verdict: %s$" % ranked[0]
    if close:
        want = r"Verdict: %s \(close: %s [0-9.]+ %% against [0-9.]+ %%\)$" % (ranked[0], ranked[1])
    if not re.match(want, line):
        raise AssertionError("verdict line %r, expected %r" % (line, want))


def test_growth_over_a_short_run_has_no_rate():
    _, trace = record([prog("leaky")], out=os.path.join(TMP, "leaky_rate.gtrace"))
    text = run([GPUTRACE, "leaks", "--json", trace], base_env(), check_rc=0).stdout
    if "-0.0" in text or "/min" in text:
        raise AssertionError("a rate over a short run:\n" + text)
    d = json.loads(text)
    eq([g["bytes_per_min"] for g in d["leaks"]], [None] * len(d["leaks"]), "no rate")


def on_pty(argv, env):
    """argv's output through a terminal (colour is for terminals only)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode()


SGR = re.compile("\033\\[[0-9;]*m")  # a colour; other escapes (a progress line) are not


def test_colour_on_terminals_only():
    _, trace = record([prog("pageable_loop"), "10", "16"], out=os.path.join(TMP, "colour.gtrace"))
    high = "\033[1;31m[high]\033[0m pageable_memcpy"
    verdict = "Verdict: \033[1mtransfer-bound\033[0m"
    env = base_env()
    env.pop("NO_COLOR", None)
    tty = on_pty([GPUTRACE, "report", trace], env)
    if high not in tty or verdict not in tty:
        raise AssertionError("no colour on a terminal:\n" + tty)
    for argv, e in (([GPUTRACE, "report", trace], dict(env, NO_COLOR="1")),
                    ([GPUTRACE, "report", "--color=never", trace], env)):
        if SGR.search(on_pty(argv, e)):
            raise AssertionError("colour with %s" % argv)
    if not SGR.search(on_pty([GPUTRACE, "report", trace], dict(env, NO_COLOR=""))):
        raise AssertionError("an empty NO_COLOR turns colour off")
    piped = run([GPUTRACE, "report", trace], env, check_rc=0).stdout
    eq(bool(SGR.search(piped)), False, "colour in a pipe")
    forced = run([GPUTRACE, "report", "--color=always", trace], dict(env, NO_COLOR="1"),
                 check_rc=0).stdout
    eq((high in forced, verdict in forced), (True, True), "--color=always")
    p = run([GPUTRACE, "report", "--color=sometimes", trace], env, check_rc=2)
    if not p.stderr.startswith("gputrace report: "):
        raise AssertionError(p.stderr)


if __name__ == "__main__":
    main([test_static_runtime_warns_everywhere, test_traced_program_no_warning,
          test_filter_matching_nothing_is_an_error,
      test_backwards_window_is_refused, test_empty_trace_has_no_verdict,
          test_near_tie_names_the_runner_up, test_growth_over_a_short_run_has_no_rate,
          test_colour_on_terminals_only])
