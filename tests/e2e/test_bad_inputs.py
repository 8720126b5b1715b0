"""Every analyzer command on empty, random, wrong-format, truncated and
bit-flipped files: a clear error naming the file (exit 2), or a partial
result with a warning (exit 3) for a damaged trace — never a crash, a hang
or a silent success on a damaged file."""
import os
import random
from gtest import *

COMMANDS = [["dump"], ["dump", "--json"], ["leaks"], ["leaks", "--json"], ["flame"],
            ["report"], ["report", "--json"], ["chrome", "-o", "-"]]


def bad_files():
    _, good = record([prog("leaky")], out=os.path.join(TMP, "good.gtrace"))
    data = open(good, "rb").read()
    rnd = random.Random(7)
    files = {}
    def put(name, content):
        path = os.path.join(TMP, name)
        with open(path, "wb") as f:
            f.write(content)
        files[name] = path
    put("empty.gtrace", b"")
    put("random.gtrace", bytes(rnd.randrange(256) for _ in range(20000)))
    put("wrong_format.json", b'{"traceEvents": []}\n')
    put("header_only.gtrace", data[:64])
    put("truncated.gtrace", data[: len(data) * 3 // 5])
    flipped = bytearray(data)
    for _ in range(8):
        i = rnd.randrange(64, len(flipped))
        flipped[i] ^= 1 << rnd.randrange(8)
    put("bitflipped.gtrace", bytes(flipped))
    files["missing.gtrace"] = os.path.join(TMP, "no-such-file.gtrace")
    files["directory"] = TMP
    return files


def test_every_command_on_bad_files():
    failures = []
    for name, path in sorted(bad_files().items()):
        for cmd in COMMANDS:
            p = run([GPUTRACE] + cmd + [path], base_env(), timeout=60)
            expect = {3} if name in ("truncated.gtrace", "bitflipped.gtrace") else {2}
            if name == "header_only.gtrace":
                expect = {0}  # a valid, empty trace
            if p.returncode not in expect:
                failures.append("%s %s: exit %d, expected %s (%s)" %
                                (" ".join(cmd), name, p.returncode, expect, p.stderr.strip()[:200]))
            elif p.returncode != 0 and path not in p.stderr:
                failures.append("%s %s: the message does not name the file: %r" %
                                (" ".join(cmd), name, p.stderr[:200]))
    if failures:
        raise AssertionError("\n".join(failures))


main([test_every_command_on_bad_files])
