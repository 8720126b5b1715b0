"""gtest.py — helpers for the end-to-end tests.

Each test script runs nvcc-built programs (built by tests/CMakeLists.txt into
<build>/tests/cuda) under `gputrace record` or plain LD_PRELOAD, on the CPU
stand-in runtime (<build>/standin/13) or the real libcudart, then reads the
trace back with `gputrace dump --json` and checks exact values.

A check failure raises AssertionError with the values; the script exits 1.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GT_BUILD", "build"))
BIN = os.path.join(BUILD, "bin")
GPUTRACE = os.path.join(BIN, "gputrace")
SHIM = os.path.join(BUILD, "lib", "libgputrace.so")
STANDIN = os.path.join(BUILD, "standin", "13")
PROGS = os.path.join(BUILD, "tests", "cuda")
TMP = tempfile.mkdtemp(prefix="gt_e2e_")


def cmake_cache(name):
    """The value of `name` in the build's CMakeCache.txt ("" when empty or unset)."""
    import re
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        m = re.search(r"^%s:\w+=(.*)$" % re.escape(name), f.read(), re.M)
    return m.group(1) if m else ""


def contract(kinds=None):
    """The shim-collector contract this tree builds, as both sides print it
    (include/gputrace/protocol.h, gt_contract_format):
    "protocol/ring/kinds/APIs", read from the headers; `kinds` replaces the
    kind count (a skewed peer's)."""
    import re
    inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                       "gputrace")

    def text(name):
        with open(os.path.join(inc, name)) as f:
            return f.read()

    protocol = re.search(r"#define GT_PROTOCOL_VERSION (\d+)u", text("protocol.h")).group(1)
    ring = re.search(r"#define GT_RING_VERSION (\d+)u", text("ring.h")).group(1)

    def table(header, macro):  # the X(...) lines of an X-macro table
        body = text(header).split("#define %s(X)" % macro, 1)[1].split("\n\n", 1)[0]
        return len(re.findall(r"^\s*X\(", body, re.M))

    n_kinds = table("schema.h", "GT_KIND_LIST") if kinds is None else kinds
    return "%s/%s/%d/%d" % (protocol, ring, n_kinds, table("apis.h", "GT_API_LIST"))


def prog(name):
    return os.path.join(PROGS, name)


def base_env(standin=True, **extra):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GPUTRACE_") or k in ("LD_PRELOAD", "NVTX_INJECTION64_PATH"):
            del env[k]
    if standin:
        env["LD_LIBRARY_PATH"] = STANDIN + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["GPUTRACE_QUIET"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(cmd, env, timeout=120, check_rc=None):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check_rc is not None and p.returncode != check_rc:
        raise AssertionError("%s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s" %
                             (cmd, p.returncode, check_rc, p.stdout, p.stderr))
    return p


def record(args, out=None, standin=True, check_rc=0, timeout=120, **env):
    """gputrace record -o OUT -- args; returns (completed process, trace path).
    A trace left at OUT by an earlier call is removed first (record refuses
    to overwrite one without --force)."""
    out = out or os.path.join(TMP, "%s.gtrace" % os.path.basename(args[0]))
    if os.path.lexists(out):
        os.unlink(out)
    p = run([GPUTRACE, "record", "-q", "-o", out, "--"] + list(args),
            base_env(standin, **env), timeout=timeout, check_rc=check_rc)
    return p, out


# The layout version every JSON output of the CLI carries as its first key,
# "schema_version" (docs/cli.md): dump --json has it on every line.
JSON_SCHEMA_VERSION = 1


def dump_records(text):
    """dump --json's lines as records, each checked for the schema version,
    which is then dropped (it is about the format, not the record)."""
    records = []
    for line in text.splitlines():
        r = json.loads(line)
        if r.pop("schema_version", None) != JSON_SCHEMA_VERSION:
            raise AssertionError("dump --json line without schema_version %d: %s" %
                                 (JSON_SCHEMA_VERSION, line))
        records.append(r)
    return records


def dump(path, expect_rc=0):
    p = subprocess.run([GPUTRACE, "dump", "--json", path], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != expect_rc:
        raise AssertionError("dump %s exited %d, expected %d: %s" % (path, p.returncode, expect_rc, p.stderr))
    return dump_records(p.stdout)


# Records about the trace itself rather than a traced call.
META_KINDS = {"process", "kernel_name", "drop", "lost", "stack", "module", "pyframe", "frame",
              "metric", "note", "heap",
              "device"}


def calls(events):
    """Only the records of traced calls (no process/name/stack/... records)."""
    return [e for e in events if e["kind"] not in META_KINDS]


def ring_drops(events):
    """Records the rings had no room for. Calls left untimed by device timing
    (event pool exhausted, counted as drops of kind "device") are not lost
    records and depend on timing, so they are left out."""
    return sum(e["count"] for e in events if e["kind"] == "drop" and e["of_kind"] != "device")


def count(events, **match):
    return sum(1 for e in events if all(e.get(k) == v for k, v in match.items()))


def select(events, **match):
    return [e for e in events if all(e.get(k) == v for k, v in match.items())]


def by(events, key, **match):
    return collections.Counter(e.get(key) for e in select(events, **match))


def eq(actual, expected, what):
    if actual != expected:
        raise AssertionError("%s: got %r, expected %r" % (what, actual, expected))


def main(tests):
    """Run each test function; print 'N passed, N failed'; exit 1 on failure."""
    passed = failed = 0
    for t in tests:
        try:
            t()
            passed += 1
            print("PASS %s" % t.__name__)
        except Exception as e:  # report every failing test, not just the first
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


def wait_for_trace(path, traced_pid_count, timeout=20):
    """Plain LD_PRELOAD: the shim's collector finishes on its own a moment
    after the last traced process; wait until every process has its end
    record (and the collector has exited, so the file is complete)."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path):
            p = subprocess.run([GPUTRACE, "dump", "--json", path], capture_output=True, text=True)
            if p.returncode == 0:
                events = dump_records(p.stdout)
                ends = [e for e in events if e["kind"] == "process" and e["phase"] == "end"]
                if len(ends) >= traced_pid_count and not collector_running(path):
                    return events
        time.sleep(0.1)
    raise AssertionError("no complete trace at %s after %ss" % (path, timeout))


def collector_pid(path):
    """The pid of a gputrace-collector writing `path` (named in its
    arguments), or None."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if args and args[0].endswith(b"gputrace-collector") and path.encode() in args:
                return int(pid)
    return None


def wait_collector(path, timeout=20):
    """The pid of the gputrace-collector writing `path`, once it runs."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        pid = collector_pid(path)
        if pid:
            return pid
        time.sleep(0.01)
    raise AssertionError("no collector writing %s" % path)


def collector_running(path):
    return collector_pid(path) is not None


def on_cpus(cpus):
    """A preexec_fn that runs the child on the CPUs in the set `cpus`
    (None: wherever the scheduler puts it)."""
    return cpus and (lambda: os.sched_setaffinity(0, cpus))


class BusyCpu:
    """A busy loop at nice 0 on one CPU, as a loaded machine's: what shares
    it with the collector leaves its symbolizer (nice 19) a sliver."""

    def __init__(self, cpu):
        self.cpu = cpu
        self.p = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                  preexec_fn=on_cpus({cpu}))

    def stop(self):
        self.p.kill()
        self.p.wait()
