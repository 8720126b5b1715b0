"""The CLI's contract: exit statuses, clear errors, nothing run when the
output cannot be written, damaged traces read as far as they go."""
import os
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


main([test_exit_status_passes_through, test_usage_errors, test_unwritable_output_runs_nothing,
      test_missing_command, test_stdout_untouched, test_dump_bad_files,
      test_truncated_trace_reads_partially])
