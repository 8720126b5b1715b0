"""promrun.py — helpers for the live-metrics tests: a traced run of
tests/cuda/steady with `gputrace record --prometheus 127.0.0.1:PORT`, and a
parser for the Prometheus text exposition format."""
import os
import re
import socket
import subprocess
import time
from gtest import *

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
SKIP = 77  # ctest SKIP_RETURN_CODE of these tests

NVML_SCRIPT = """\
0 30 5 8000 10000 70 200000 300000 1500 5000 100 200 90
1 60 40 5000 10000 50 75500 250000 1400 4000 10 20 -
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(iterations, port):
    """Start the traced run in the background: (Popen, trace path)."""
    script = os.path.join(TMP, "prom_nvml.txt")
    with open(script, "w") as f:
        f.write(NVML_SCRIPT)
    out = os.path.join(TMP, "prom_%d.gtrace" % port)
    env = base_env(GPUTRACE_STANDIN_NVML_SCRIPT=script, GPUTRACE_NVML_MS=50)
    p = subprocess.Popen([GPUTRACE, "record", "-q", "--prometheus", "127.0.0.1:%d" % port,
                          "-o", out, "--", prog("steady"), str(iterations)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p, out


def scrape(port):
    p = subprocess.run(["curl", "-sf", "--max-time", "5", "http://127.0.0.1:%d/metrics" % port],
                       capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


def parse(text):
    """{(name, frozenset(labels)): value}; raises on a malformed line."""
    out, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("malformed line %r" % line)
        labels = frozenset(tuple(kv.split("=", 1)) for kv in re.findall(r'[a-z_]+="[^"]*"', m.group(3) or ""))
        labels = frozenset((k, v.strip('"')) for k, v in labels)
        out[(m.group(1), labels)] = float(m.group(4))
    return out, types


def scrape_until(port, proc, pred, timeout=30):
    """Scrape until pred(parsed) holds; returns (text, parsed)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = scrape(port)
        if text:
            parsed, _ = parse(text)
            if pred(parsed):
                return text, parsed
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError("no scrape of :%d satisfied the check (run rc %s)" % (port, proc.poll()))


def value(parsed, name, **labels):
    return parsed.get((name, frozenset(labels.items())))


def finish(proc, timeout=60):
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    eq(proc.returncode, 0, "record exit status (stderr: %s)" % err)


def promtool_check(text):
    """`promtool check metrics` accepts the page (skipped, said, without
    promtool: Debian's package prometheus)."""
    import shutil
    if not shutil.which("promtool"):
        print("SKIP promtool check: promtool (Debian package prometheus) is not installed")
        return
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    eq((p.returncode, p.stdout + p.stderr), (0, ""), "promtool check metrics")
