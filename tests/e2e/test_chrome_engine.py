"""gputrace chrome exports read by an importer we did not write: Chrome
DevTools' trace engine (npm @paulirish/trace_engine, installed here into
<build>/npm-cache), driven by tests/chrome/engine_check.mjs. It fails on an
exception (events without a name), on anything the engine logs with
console.error (Begin/End mismatches), and when the engine does not see every
slice and flow arrow of the file.

Exits 77 (ctest: skipped, SKIP_RETURN_CODE) only when npm cannot reach its
registry to install the engine; a missing node or npm is a failure
(scripts/deps.sh installs them)."""
import os
import shutil
import subprocess
import sys

import test_chrome as tc
from gtest import *

ENGINE_VERSION = "0.0.65"  # the engine's API is not stable: the one checked
CACHE = os.path.join(BUILD, "npm-cache")
ENGINE = os.path.join(CACHE, "node_modules", "@paulirish", "trace_engine")
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chrome", "engine_check.mjs")
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ENETUNREACH", "ECONNRESET",
           "network", "getaddrinfo")


def installed_version():
    try:
        import json
        with open(os.path.join(ENGINE, "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def install_engine():
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise AssertionError("%s is not installed (scripts/deps.sh installs it)" % tool)
    if installed_version() == ENGINE_VERSION:
        return
    os.makedirs(CACHE, exist_ok=True)
    p = subprocess.run(["npm", "install", "--prefix", CACHE, "--no-audit", "--no-fund",
                        "--no-save", "@paulirish/trace_engine@" + ENGINE_VERSION],
                       capture_output=True, text=True, timeout=600)
    if p.returncode == 0 and installed_version() == ENGINE_VERSION:
        return
    out = p.stdout + p.stderr
    if any(word in out for word in OFFLINE):
        print("SKIP: npm cannot reach its registry to install @paulirish/trace_engine:\n" + out)
        sys.exit(77)
    raise AssertionError("npm install @paulirish/trace_engine failed:\n" + out)


def exports():
    """A JSON export of each kind of trace the other tests check."""
    files = []

    def add(trace, name, *args):
        out = os.path.join(TMP, name)
        tc.chrome(trace, "-o", out, *args)
        files.append(out)

    for program, args in (("basic", []), ("threads", ["200"]), ("nvtx", []),
                          ("graph_decode", []), ("forked", [])):
        _, trace = record([prog(program)] + args)
        add(trace, program + ".json")
    add(trace, "forked_window.json", "--from", "1ms", "--to", "1s")
    add(tc.synth("device", tc.DEVICE_SCRIPT), "device.json")
    add(tc.synth("ties", tc.TIES_SCRIPT), "ties.json")
    add(tc.gen("gen", 50000, "--device", "--threads", "3"), "gen.json.gz")
    return files


def test_devtools_trace_engine():
    install_engine()
    files = exports()
    p = subprocess.run(["node", CHECK, ENGINE] + files, capture_output=True, text=True,
                       timeout=600)
    print(p.stdout, end="")
    if p.returncode != 0:
        raise AssertionError("the DevTools trace engine rejected an export:\n%s%s" %
                             (p.stdout, p.stderr))


if __name__ == "__main__":
    main([test_devtools_trace_engine])
