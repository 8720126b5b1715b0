#!/usr/bin/env python3
"""gpu_check.py — gputrace checked against what a GPU says (scripts/gpu-check.sh).

Each check compares gputrace with a reference that is not gputrace: the
program's output and its specification, torch.profiler (CUPTI),
compute-sanitizer, nvidia-smi, an untraced run. With --standin the checks that
need no hardware run on the CPU stand-in runtime (build/standin/13), whose own
bookkeeping is the reference (its leak summary, its NVML script, its kernel
duration model), so CI keeps the suite from rotting. Without a GPU and without
--standin every check is skipped and the exit status is 0.

Results: JSON (-o FILE: {"device", "driver", "mode", "date", "checks": [{"name",
"status": "pass|fail|skip", "measured", "expected", "detail"}]}) and a Markdown
table (--md FILE, default FILE with .md; printed to stdout too). Exit status 1
when a check failed, 2 on bad usage.

The checks themselves live in gpu_checks.py; this file holds the context
(paths, environment, running and reading traces) and the command line.
"""
import argparse
import collections
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class CheckError(Exception):
    """A check could not run to its comparison (a program failed, ...)."""


class Ctx:
    """Where things are and how to run them, for one suite run."""

    def __init__(self, args, mode):
        self.mode = mode  # "gpu" or "standin"
        self.build = os.path.abspath(args.build)
        self.root = os.path.abspath(args.gputrace or args.build)
        self.gputrace = os.path.join(self.root, "bin", "gputrace")
        self.work = args.work or tempfile.mkdtemp(prefix="gpu_check_")
        os.makedirs(self.work, exist_ok=True)
        self.python = args.python or sys.executable
        self.nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        self.quick = args.quick
        self.log = open(os.path.join(self.work, "gpu_check.log"), "a")
        self._progs = {}

    # ---- environment and processes ----

    def env(self, **extra):
        """The environment of a traced or untraced program: no GPUTRACE_* or
        LD_PRELOAD from the caller; on the stand-in, its runtime first."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD",
                                                              "NVTX_INJECTION64_PATH")}
        if self.mode == "standin":
            lib = os.path.join(self.build, "standin", "13")
            env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"]
                                            if env.get("LD_LIBRARY_PATH") else "")
        env["GPUTRACE_QUIET"] = "1"
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run(self, cmd, env=None, timeout=300, check_rc=None):
        t0 = time.time()
        p = subprocess.run(cmd, env=env or self.env(), capture_output=True, text=True,
                           timeout=timeout)
        self.log.write("$ %s  (rc %d, %.1f s)\n%s%s\n" % (" ".join(cmd), p.returncode,
                                                         time.time() - t0, p.stdout[-4000:],
                                                         p.stderr[-4000:]))
        self.log.flush()
        if check_rc is not None and p.returncode != check_rc:
            raise CheckError("%s exited %d (expected %d): %s" % (
                os.path.basename(cmd[0]), p.returncode, check_rc,
                (p.stderr or p.stdout)[-600:].strip()))
        return p

    def record(self, args, name, timeout=300, check_rc=0, **env):
        """gputrace record; returns (completed process, trace path)."""
        out = os.path.join(self.work, name + ".gtrace")
        if os.path.exists(out):
            os.unlink(out)
        p = self.run([self.gputrace, "record", "-q", "-o", out, "--"] + list(args),
                     self.env(**env), timeout=timeout, check_rc=check_rc)
        return p, out

    def gt(self, *args, timeout=300):
        return self.run([self.gputrace] + list(args), env=self.env(), timeout=timeout,
                        check_rc=0).stdout

    def dump(self, trace):
        return [json.loads(l) for l in self.gt("dump", "--json", trace).splitlines()]

    # ---- programs ----

    def program(self, name, source, *flags):
        """An nvcc-built program: on the stand-in the build's copy (CMake built
        it), on a GPU built here with the machine's nvcc (-cudart shared unless
        flags say otherwise), once."""
        if name in self._progs:
            return self._progs[name]
        built = os.path.join(self.build, "tests", "cuda", name)
        if self.mode == "standin" and os.path.exists(built):
            path = built
        else:
            path = os.path.join(self.work, "progs", name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            cmd = [self.nvcc] + list(flags) + ["-o", path, os.path.join(REPO, source)]
            if self.mode == "gpu":
                cmd[1:1] = ["-arch=native"]
            self.run(cmd, env=dict(os.environ), timeout=600, check_rc=0)
        self._progs[name] = path
        return path


# ---- reading traces ----

def calls(events, kind=None, pid=None):
    return [e for e in events if (kind is None or e["kind"] == kind) and
            (pid is None or e["pid"] == pid)]


def window(events, marks):
    """(pid, start_ns, end_ns) between the host-to-device marker copies of
    tests/gpu/torch_loop.py: the end of the first, the start of the second."""
    found = {}
    for e in events:
        if e["kind"] == "memcpy" and e.get("dir") == "HtoD" and e["bytes"] in marks:
            found.setdefault(e["bytes"], e)
    if len(found) != 2:
        raise CheckError("marker copies %s not both in the trace (found %s)" % (
            marks, sorted(found)))
    start, end = found[marks[0]], found[marks[1]]
    return start["pid"], start["ts_ns"] + start["dur_ns"], end["ts_ns"]


def in_window(events, win, kind=None):
    pid, lo, hi = win
    return [e for e in events if e["pid"] == pid and lo <= e["ts_ns"] < hi and
            (kind is None or e["kind"] == kind)]


def expected_counts(source):
    """The `expect: kind=N ...` line of a test program's header comment."""
    with open(os.path.join(REPO, source)) as f:
        for line in f:
            m = re.search(r"expect:\s*(.*)$", line)
            if m and line.startswith("//"):
                return {k: int(v) for k, v in (t.split("=") for t in m.group(1).split())}
    raise CheckError("%s has no expect: line" % source)


def mask_pointers(text):
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)


def result(name, status, measured, expected, detail=""):
    return {"name": name, "status": status, "measured": measured, "expected": expected,
            "detail": detail}


# ---- device, output ----

def gpu_present():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    p = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return p.returncode == 0 and "GPU" in p.stdout


def device_info(mode):
    if mode != "gpu":
        return ("CPU stand-in runtime (no GPU)" if mode == "standin" else "no GPU found",
                "none")
    p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                        "--format=csv,noheader"], capture_output=True, text=True)
    name, _, driver = p.stdout.splitlines()[0].partition(",")
    return name.strip(), driver.strip()


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def markdown(report):
    lines = ["| check | status | measured | expected | detail |",
             "|---|---|---|---|---|"]
    for c in report["checks"]:
        cells = [c["name"], c["status"], fmt(c["measured"]), fmt(c["expected"]),
                 c["detail"]]
        lines.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ")
                                       for x in cells) + " |")
    head = "%s mode, %s, driver %s, %s" % (report["mode"], report["device"],
                                           report["driver"], report["date"])
    return head + "\n\n" + "\n".join(lines) + "\n"


def parse_args():
    p = argparse.ArgumentParser(prog="gpu-check.sh", description=__doc__.split("\n")[0])
    p.add_argument("--standin", action="store_true",
                   help="run the checks that need no hardware on the CPU stand-in")
    p.add_argument("-o", "--output", help="results as JSON")
    p.add_argument("--md", help="results as a Markdown table (default: OUTPUT with .md)")
    p.add_argument("--build", default=os.path.join(REPO, "build"),
                   help="build directory (stand-in runtime, test programs; default build/)")
    p.add_argument("--gputrace", help="an unpacked bundle or build directory holding "
                   "bin/gputrace and lib/libgputrace.so (default: --build)")
    p.add_argument("--only", help="comma-separated check names (prefixes) to run")
    p.add_argument("--work", help="directory for programs, traces and logs (default: a "
                   "new temporary directory)")
    p.add_argument("--python", help="python3 with PyTorch (default: this one)")
    p.add_argument("--quick", action="store_true", help="fewer repetitions in timings")
    p.add_argument("--require-run", type=int, default=0, metavar="N",
                   help="fail unless at least N checks ran (were not skipped)")
    return p.parse_args()


def main():
    args = parse_args()
    import gpu_checks
    mode = "standin" if args.standin else ("gpu" if gpu_present() else "none")
    device, driver = device_info(mode)
    report = {"device": device, "driver": driver, "mode": mode,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "checks": []}
    ctx = None
    if mode != "none":
        ctx = Ctx(args, mode)
        if not os.access(ctx.gputrace, os.X_OK):
            sys.exit("gpu-check: no gputrace at %s (build first, or pass --gputrace DIR)" %
                     ctx.gputrace)
    else:
        print("gpu-check: no GPU found (nvidia-smi -L); every check skipped "
              "(--standin runs them on the CPU stand-in)", file=sys.stderr)
    only = [s for s in (args.only or "").split(",") if s]
    for check in gpu_checks.CHECKS:
        if only and not any(check.name.startswith(o) for o in only):
            continue
        t0 = time.time()
        if mode == "none" or (mode == "standin" and not check.standin):
            why = "no GPU" if mode == "none" else "needs a GPU: " + check.needs
            res = [result(check.name, "skip", None, None, why)]
        else:
            try:
                res = check.run(ctx)
            except (CheckError, subprocess.TimeoutExpired, OSError, KeyError,
                    ValueError) as e:
                res = [result(check.name, "fail", None, None, "%s: %s" % (
                    type(e).__name__, e))]
        for r in res:
            report["checks"].append(r)
            print("%-28s %-4s %5.1fs  %s" % (r["name"], r["status"], time.time() - t0,
                                             fmt(r["measured"])[:100]), flush=True)
    text = markdown(report)
    print("\n" + text)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    md = args.md or (re.sub(r"\.json$", "", args.output) + ".md" if args.output else None)
    if md:
        with open(md, "w") as f:
            f.write(text)
    failed = [c["name"] for c in report["checks"] if c["status"] == "fail"]
    ran = sum(1 for c in report["checks"] if c["status"] != "skip")
    if ran < args.require_run:
        print("gpu-check: %d checks ran, fewer than --require-run %d" % (
            ran, args.require_run), file=sys.stderr)
        failed.append("require-run")
    if ctx:
        print("gpu-check: work directory %s" % ctx.work, file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    # Run as the module gpu_checks imports, so both see one CheckError class.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_check
    gpu_check.main()
