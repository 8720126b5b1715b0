"""check_golden.py — traces written by earlier builds, read by this one.

Usage: check_golden.py BUILD [--update]

Each tests/golden/NAME.gtrace was recorded by an older commit (README.md
says which and how). For each, `gputrace dump --json` and `gputrace report
--json` of this build must print exactly NAME.dump.json and NAME.report.json,
and exit with the status and stderr in NAME.status. A difference fails (its
first differing line is shown): a reader that stops reading an old file, or
reads it differently, is caught here. --update rewrites the expected files
from this build, for a change meant to alter the output (review the diff).

The commands run in an empty folder with no GPUTRACE_* variables; the
trace's own path in any output is written as <golden>/NAME.gtrace."""
import glob
import struct
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMMANDS = (("dump", ["dump", "--json"]), ("report", ["report", "--json"]))


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NO_COLOR")}
    env["LC_ALL"] = "C"
    return env


def run(gputrace, args, trace, cwd):
    p = subprocess.run([gputrace] + args + [trace], cwd=cwd, env=clean_env(),
                       capture_output=True, text=True, timeout=120)
    name = "<golden>/" + os.path.basename(trace)
    return p.returncode, p.stdout.replace(trace, name), p.stderr.replace(trace, name)


def status_text(results):
    lines = []
    for what, (rc, _, err) in results:
        lines.append("%s rc=%d" % (what, rc))
        lines.extend("%s stderr: %s" % (what, l) for l in err.splitlines())
    return "\n".join(lines) + "\n"


def first_difference(expected, actual):
    e, a = expected.splitlines(), actual.splitlines()
    for i in range(max(len(e), len(a))):
        el = e[i] if i < len(e) else "<end>"
        al = a[i] if i < len(a) else "<end>"
        if el != al:
            return "line %d:\n  expected %s\n  actual   %s" % (i + 1, el[:400], al[:400])
    return "same lines, different bytes"


def dense_chunks(path):
    """The dense chunks (magic "GHCD") of a trace, from its chunk headers."""
    with open(path, "rb") as f:
        data = f.read()
    off, n = 64, 0
    while off + 32 <= len(data):
        magic, compressed = struct.unpack_from("<I", data, off)[0], \
            struct.unpack_from("<I", data, off + 24)[0]
        n += magic == 0x44434847
        off += 32 + compressed
    return n


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_golden.py BUILD [--update]")
    gputrace = os.path.join(os.path.abspath(sys.argv[1]), "bin", "gputrace")
    update = "--update" in sys.argv[2:]
    traces = sorted(glob.glob(os.path.join(HERE, "*.gtrace")))
    if len(traces) < 3:
        sys.exit("golden traces: %d found in %s, expected 3 or more" % (len(traces), HERE))
    dense = [t for t in traces if dense_chunks(t)]
    if not dense:
        sys.exit("golden traces: none holds a dense chunk (file version 3)")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="gt_golden_") as cwd:
        for trace in traces:
            stem = trace[:-len(".gtrace")]
            results = [(what, run(gputrace, args, trace, cwd)) for what, args in COMMANDS]
            files = [(stem + "." + what + ".json", out) for what, (_, out, _) in results]
            files.append((stem + ".status", status_text(results)))
            for path, actual in files:
                if update:
                    with open(path, "w") as f:
                        f.write(actual)
                    continue
                try:
                    with open(path) as f:
                        expected = f.read()
                except FileNotFoundError:
                    expected = None
                if expected == actual:
                    passed += 1
                    continue
                failed += 1
                why = ("missing (run with --update)" if expected is None else
                       first_difference(expected, actual))
                print("FAIL %s: %s" % (os.path.basename(path), why))
    if update:
        print("updated the expected output of %d traces" % len(traces))
        return
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
