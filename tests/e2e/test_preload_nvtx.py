"""Plain LD_PRELOAD (the shim starts the collector itself) and NVTX ranges
received through NVTX injection."""
import os
import subprocess
from gtest import *


def test_plain_preload_starts_collector():
    out = os.path.join(TMP, "preload.gtrace")
    p = run([prog("forked")], base_env(LD_PRELOAD=SHIM, GPUTRACE_OUTPUT=out), check_rc=0)
    events = wait_for_trace(out, traced_pid_count=2)
    eq(count(events, kind="launch"), 11, "launches of parent and child")
    eq(len({e["pid"] for e in events if e["kind"] not in ("metric", "note")}), 2,
       "two processes")


def test_plain_preload_default_output_name():
    cwd = os.path.join(TMP, "cwd")
    os.makedirs(cwd, exist_ok=True)
    p = subprocess.Popen([prog("basic")], env=base_env(LD_PRELOAD=SHIM), cwd=cwd,
                         stdout=subprocess.PIPE, text=True)
    stdout, _ = p.communicate(timeout=60)
    eq((p.returncode, stdout), (0, "basic: 0 failures\n"), "program result")
    path = os.path.join(cwd, "gputrace-%d.gtrace" % p.pid)
    events = wait_for_trace(path, traced_pid_count=1)
    eq(count(events, kind="launch"), 15, "launches")


def test_nvtx_ranges():
    p, out = record([prog("nvtx")])
    events = dump(out)
    nv = select(events, kind="nvtx")
    pushes = [(e["api"], e["message"], e["depth"]) for e in nv if e["op"] == "push"]
    eq(pushes[:2], [("nvtxRangePushA", "request", 0), ("nvtxRangePushA", "decode", 1)],
       "first request's pushes and depths")
    eq(by(select(nv, op="push"), "message"), {"request": 5, "decode": 5, "batch": 1}, "pushes")
    eq(count(nv, op="pop"), 11, "pops")
    eq([(e["api"], e["message"]) for e in select(nv, op="mark")], [("nvtxMarkA", "checkpoint")],
       "mark")
    start, end = select(nv, op="start"), select(nv, op="end")
    eq((len(start), len(end)), (1, 1), "start/end")
    eq(start[0]["range_id"], end[0]["range_id"], "start/end range id")
    eq(start[0]["message"], "warmup", "start message")
    batch = select(nv, message="batch")[0]
    eq(batch["api"], "nvtxDomainRangePushEx", "domain push api")
    if batch["domain"] == "0x0":
        raise AssertionError("domain push recorded without its domain")
    eq(count(events, kind="launch"), 11, "launches")
    # launches lie inside their ranges (timestamps nest): the first request
    # range holds 2 launches, its nested decode range 1
    def launches_between(start, end):
        return len([e for e in select(events, kind="launch") if start <= e["ts_ns"] <= end])
    req, dec = select(nv, message="request")[0]["ts_ns"], select(nv, message="decode")[0]["ts_ns"]
    pops = [e["ts_ns"] for e in select(nv, op="pop")]
    eq(launches_between(req, pops[1]), 2, "launches in the first request range")
    eq(launches_between(dec, pops[0]), 1, "launches in the first decode range")


main([test_plain_preload_starts_collector, test_plain_preload_default_output_name,
      test_nvtx_ranges])
