"""Text a traced process controls (NVTX messages, a kernel's name) built to
break outputs (tests/cuda/hostile_names.cu: newline, ESC sequences, a C1
CSI, DEL, quotes, backslash, overlong C0 80, surrogate ED A0 80, F4 90 80 80
past U+10FFFF, a lone continuation byte):
- JSON (chrome, dump --json, report/leaks --json) is strict UTF-8 and
  parses; invalid sequences are U+FFFD, never passed through;
- text (dump, report, leaks, flame) is strict UTF-8 with no control byte
  but the newline ending each line, no C1 control, and no forged line;
- pprof's string table is strict UTF-8."""
import gzip
import subprocess
import json
import os
from gtest import *

INVALID = [b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]


def trace():
    _, out = record([prog("hostile_names")], GPUTRACE_STACKS="all")
    return out


def output(args):
    p = subprocess.run([GPUTRACE] + args, capture_output=True, timeout=120,
                       env=base_env())
    if p.returncode not in (0, 1):
        raise AssertionError("%s exited %d: %s" % (args, p.returncode, p.stderr))
    return p.stdout


def strict(data, what):
    for b in INVALID:
        if b in data:
            raise AssertionError("%s holds %r" % (what, b))
    return data.decode("utf-8", "strict")


def check_text(data, what):
    text = strict(data, what)
    for c in text:
        if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0:
            raise AssertionError("%s holds control character %r" % (what, c))
    if any(line.startswith("FORGED") for line in text.splitlines()):
        raise AssertionError("%s: a forged line" % what)
    return text


def test_json_outputs():
    out = trace()
    chrome = os.path.join(TMP, "hostile.json")
    output(["chrome", "--force", "-o", chrome, out])
    with open(chrome, "rb") as f:
        doc = json.loads(strict(f.read(), "chrome"))
    names = [e.get("name", "") for e in doc["traceEvents"]]
    eq(any("\ufffd" in n and "FORGED" in n for n in names), True, "chrome: U+FFFD in the name")
    lines = strict(output(["dump", "--json", out]), "dump --json").splitlines()
    msgs = [json.loads(l).get("message", "") for l in lines]
    eq(sum("\nFORGED" in m and "\ufffd" in m for m in msgs), 3, "dump --json: messages kept")
    for cmd in (["report", "--json"], ["leaks", "--json"]):
        json.loads(strict(output(cmd + [out]), " ".join(cmd)))


def test_text_outputs():
    out = trace()
    text = check_text(output(["dump", out]), "dump")
    eq(len([l for l in text.splitlines() if l.startswith("+")]), len(text.splitlines()),
       "dump: one line per record")
    eq(text.count("\\nFORGED"), 6, "dump: newline shown as \\n (3 messages, 3 kernel names)")
    eq(text.count("\\x1b[31m"), 6, "dump: ESC shown as \\x1b")
    check_text(output(["report", out]), "report")
    check_text(output(["leaks", out]), "leaks")
    for how in ([], ["--gpu"]):
        check_text(output(["flame"] + how + [out]), "flame " + " ".join(how))


def proto_strings(data):
    """Profile.string_table (field 6) of a pprof protobuf."""
    def varint(i):
        v = s = 0
        while True:
            b = data[i]
            v |= (b & 0x7f) << s
            i, s = i + 1, s + 7
            if b < 0x80:
                return v, i
    i, strings = 0, []
    while i < len(data):
        key, i = varint(i)
        wire = key & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 2:
            n, i = varint(i)
            if key >> 3 == 6:
                strings.append(data[i:i + n])
            i += n
        else:
            raise AssertionError("pprof: wire type %d" % wire)
    return strings


def test_pprof_strings():
    out = trace()
    pb = os.path.join(TMP, "hostile.pb.gz")
    output(["pprof", "--gpu", "--force", "-o", pb, out])
    with open(pb, "rb") as f:
        strings = proto_strings(gzip.decompress(f.read()))
    names = [strict(s, "pprof string") for s in strings]
    eq(any("FORGED" in s for s in names), True, "pprof: the kernel's name is there")


if __name__ == "__main__":
    main([test_json_outputs, test_text_outputs, test_pprof_strings])
