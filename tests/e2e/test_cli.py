"""The CLI's contract: exit statuses, clear errors, nothing run when the
output cannot be written, damaged traces read as far as they go; every
command's --help lists what its parser takes, an unknown option shows the
usage (status 2)."""
import os
import re
from gtest import *


def cli(args, **env):
    return run([GPUTRACE] + args, base_env(**env))


def test_exit_status_passes_through():
    p = cli(["record", "-q", "-o", os.path.join(TMP, "x.gtrace"), "--", "sh", "-c", "exit 7"])
    eq(p.returncode, 7, "exit status")
    p = cli(["record", "-q", "-o", os.path.join(TMP, "y.gtrace"), "--", "sh", "-c", "kill -TERM $$"])
    eq(p.returncode, 128 + 15, "status of a command killed by SIGTERM")


def test_usage_errors():
    p = cli(["record", "--bogus", "--", "true"])
    eq(p.returncode, 2, "unknown option status")
    if "unexpected argument '--bogus'" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    p = cli(["record", "-o", os.path.join(TMP, "z.gtrace")])
    eq(p.returncode, 2, "missing command status")
    if "missing argument" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    p = cli(["frobnicate"])
    eq(p.returncode, 2, "unknown command status")
    if "unknown command 'frobnicate'" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    p = cli(["dump"])
    eq(p.returncode, 2, "dump without file")


def test_unwritable_output_runs_nothing():
    marker = os.path.join(TMP, "ran")
    p = cli(["record", "-o", "/nonexistent-dir/out.gtrace", "--", "touch", marker])
    eq(p.returncode, 2, "status")
    if "cannot write /nonexistent-dir/out.gtrace" not in p.stderr:
        raise AssertionError("message: " + p.stderr)
    eq(os.path.exists(marker), False, "command was not run")


def test_missing_command():
    p = cli(["record", "-q", "-o", os.path.join(TMP, "m.gtrace"), "--", "/no/such/program"])
    eq(p.returncode, 127, "status")
    if "cannot run '/no/such/program'" not in p.stderr:
        raise AssertionError("message: " + p.stderr)


def test_stdout_untouched():
    p = cli(["record", "-o", os.path.join(TMP, "s.gtrace"), "--", "echo", "hello"])
    eq(p.stdout, "hello\n", "the command's stdout holds only its own output")


def test_dump_bad_files():
    empty = os.path.join(TMP, "empty.gtrace")
    open(empty, "w").close()
    p = cli(["dump", empty])
    eq(p.returncode, 2, "empty file status")
    eq(p.stderr.strip(), "gputrace dump: %s: not a gputrace trace (empty file)" % empty, "message")
    junk = os.path.join(TMP, "junk.gtrace")
    with open(junk, "wb") as f:
        f.write(os.urandom(5000))
    p = cli(["dump", junk])
    eq(p.returncode, 2, "random file status")
    if "not a gputrace trace" not in p.stderr:
        raise AssertionError("message: " + p.stderr)


def test_truncated_trace_reads_partially():
    _, out = record([prog("threads"), "20000"])
    full = dump(out)
    data = open(out, "rb").read()
    cut = os.path.join(TMP, "cut.gtrace")
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    p = run([GPUTRACE, "dump", "--json", cut], base_env())
    eq(p.returncode, 3, "damaged trace status")
    if "truncated" not in p.stderr:
        raise AssertionError("no truncation warning: " + p.stderr)
    partial = [l for l in p.stdout.splitlines()]
    if not (0 < len(partial) < len(full)):
        raise AssertionError("partial read: %d of %d" % (len(partial), len(full)))


# Every program and command, as invoked (the prog its messages begin with).
PROGRAMS = [[GPUTRACE, c] for c in ("record", "dump", "leaks", "flame", "chrome", "report",
                                     "diff", "pprof")] + [[os.path.join(BIN, "gputrace-collector")]]
# A value the parser takes for each value name the help shows.
SAMPLE_VALUES = {"FILE": "x.gtrace", "OUT": "x.json", "OUT.pb.gz": "x.pb.gz", "P": "1",
                 "T": "1.5s", "N": "64", "SIZE": "1GiB", "DURATION": "5m", "PCT": "5",
                 "ADDR:PORT": "127.0.0.1:9400", "PATH": "x.sock",
                 "cudaProfilerApi|nvtx:NAME": "cudaProfilerApi", "DIR": TMP}
HELP_LINE = re.compile(r"^  (?:-(\w), |    )--([\w-]+)(?: (\S+))?(?:\s|$)")


def prog_name(argv):
    return " ".join([os.path.basename(argv[0])] + argv[1:])


def listed_options(argv):
    """--help: status 0, stdout only, the usage first; its option lines as
    (short, long, value name) and the usage's lines."""
    p = run(argv + ["--help"], base_env(), check_rc=0)
    eq(p.stderr, "", "stderr of %s --help" % prog_name(argv))
    if not p.stdout.startswith("usage: %s " % prog_name(argv)):
        raise AssertionError("%s --help:\n%s" % (prog_name(argv), p.stdout))
    for line in p.stdout.splitlines():
        if len(line) > 80:
            raise AssertionError("%s --help: a line over 80 columns: %r" % (prog_name(argv), line))
    lines = p.stdout.splitlines()
    wrapped = 1
    while wrapped < len(lines) and lines[wrapped].startswith(" "):
        wrapped += 1
    usage = "\n".join(lines[:wrapped])  # the usage line, wrapped
    opts = [HELP_LINE.match(l).groups() for l in lines if HELP_LINE.match(l)]
    return opts, usage


def test_help_lists_what_the_parser_takes():
    """Each option --help lists is in the usage and taken by the parser: given
    alone (with a value of its kind), parsing gets past it to the missing
    argument or option (status 2), and nothing runs."""
    for argv in PROGRAMS:
        opts, usage = listed_options(argv)
        names = [o[1] for o in opts]
        reads_a_trace = len(argv) == 2 and argv[1] != "record"
        eq("help" in names, True, "%s --help lists --help" % prog_name(argv))
        eq("no-wait" in names, reads_a_trace, "%s --help lists --no-wait" % prog_name(argv))
        for short, name, value in opts:
            if name in ("help", "version"):
                continue
            if ("-" + short if short else "--" + name) not in usage:
                raise AssertionError("%s: %s not in the usage:\n%s" % (prog_name(argv), name, usage))
            given = ["--" + name] + ([SAMPLE_VALUES[value]] if value else [])
            for form in ([given] + ([["-" + short] + given[1:]] if short else []) +
                         ([["--%s=%s" % (name, given[1])]] if value else [])):
                p = run(argv + form, base_env(), timeout=20)
                first = p.stderr.splitlines()[0] if p.stderr else ""
                if p.returncode != 2 or not (
                        first == "%s: missing argument" % prog_name(argv) or
                        first.startswith("%s: missing option --" % prog_name(argv))):
                    raise AssertionError("%s %s: status %d, stderr:\n%s" %
                                         (prog_name(argv), " ".join(form), p.returncode, p.stderr))


def test_unknown_option_shows_the_usage():
    for argv in PROGRAMS:
        _, usage = listed_options(argv)
        p = run(argv + ["--no-such-option", "x.gtrace"], base_env(), timeout=20)
        eq(p.returncode, 2, "status of %s --no-such-option" % prog_name(argv))
        eq(p.stdout, "", "stdout of %s --no-such-option" % prog_name(argv))
        eq(p.stderr, "%s: unexpected argument '--no-such-option' (unknown option)\n%s\n" %
           (prog_name(argv), usage), "stderr of %s --no-such-option" % prog_name(argv))


def test_versions():
    """Both programs print CMake's project version, written once."""
    cmake = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "CMakeLists.txt")).read()
    version = re.search(r"project\(gputrace VERSION ([0-9.]+)", cmake).group(1)
    eq(run([GPUTRACE, "--version"], base_env(), check_rc=0).stdout, "gputrace %s\n" % version,
       "gputrace --version")
    p = run([os.path.join(BIN, "gputrace-collector"), "--version"], base_env(), check_rc=0)
    eq(p.stdout, "gputrace-collector %s\n" % version, "gputrace-collector --version")


main([test_exit_status_passes_through, test_usage_errors, test_unwritable_output_runs_nothing,
      test_missing_command, test_stdout_untouched, test_dump_bad_files,
      test_truncated_trace_reads_partially, test_help_lists_what_the_parser_takes,
      test_unknown_option_shows_the_usage, test_versions])
