"""Live metrics: `gputrace record --prometheus 127.0.0.1:PORT` serves
/metrics during the run (tests/cuda/steady: launch + sync + 2 ms sleep per
iteration); fetched with curl, parsed, checked against the scripted NVML
readings and the trace, and validated by `promtool check metrics` (skipped
with a message when promtool is not installed)."""
import subprocess
from promrun import *

ITER = 1000


def test_metrics_during_run():
    port = free_port()
    proc, out = start(ITER, port)
    try:
        text, m = scrape_until(port, proc, lambda m: (value(m, "gputrace_kernel_launches_total") or 0) >= 50
                               and value(m, "gputrace_gpu_temperature_celsius", gpu="1") is not None)
        _, types = parse(text)
        for name, typ in (("gputrace_kernel_launches_total", "counter"),
                          ("gputrace_api_calls_total", "counter"),
                          ("gputrace_api_seconds", "histogram"),
                          ("gputrace_memcpy_bytes_total", "counter"),
                          ("gputrace_device_memory_bytes", "gauge"),
                          ("gputrace_events_dropped_total", "counter"),
                          ("gputrace_gpu_utilization_percent", "gauge"),
                          ("gputrace_gpu_memory_used_bytes", "gauge"),
                          ("gputrace_gpu_temperature_celsius", "gauge"),
                          ("gputrace_gpu_power_watts", "gauge")):
            eq(types.get(name), typ, "TYPE of " + name)
        launches = value(m, "gputrace_kernel_launches_total")
        if not 50 <= launches < ITER:
            raise AssertionError("launches mid-run: %r" % launches)
        eq(value(m, "gputrace_api_calls_total", api="__cudaLaunchKernel"), launches,
           "launch calls = launches in one snapshot")
        eq(value(m, "gputrace_api_seconds_count", api="__cudaLaunchKernel"), launches, "histogram count")
        eq(value(m, "gputrace_api_seconds_bucket", api="__cudaLaunchKernel", le="+Inf"), launches,
           "histogram +Inf bucket")
        eq(value(m, "gputrace_events_dropped_total"), 0, "nothing dropped")
        eq(value(m, "gputrace_memcpy_bytes_total", dir="HtoD"), 0, "steady copies nothing")
        for gpu, util, used, temp, watts in (("0", 30, 8000, 70, 200), ("1", 60, 5000, 50, 75.5)):
            eq((value(m, "gputrace_gpu_utilization_percent", gpu=gpu),
                value(m, "gputrace_gpu_memory_used_bytes", gpu=gpu),
                value(m, "gputrace_gpu_temperature_celsius", gpu=gpu),
                value(m, "gputrace_gpu_power_watts", gpu=gpu)), (util, used, temp, watts),
               "NVML gauges of GPU " + gpu)
        # counters only grow
        _, later = scrape_until(port, proc, lambda x: value(x, "gputrace_kernel_launches_total") > launches)
        promtool_check(text)
    finally:
        finish(proc)
    events = dump(out)
    eq(count(events, kind="launch"), ITER, "launches in the trace")


def test_graph_runs_live():
    """graph_decode replays a captured step of 5 kernels and a host function:
    in every snapshot, launches = the 19 eager ones (warm-up: 3 steps of 5
    kernels and a host function; one busy kernel) + 6 per graph launch; the
    6 captured calls ran nothing and are not launches."""
    port = free_port()
    out = os.path.join(TMP, "prom_graphs.gtrace")
    proc = subprocess.Popen([GPUTRACE, "record", "-q", "--prometheus", "127.0.0.1:%d" % port,
                             "-o", out, "--", prog("graph_decode"), "20000", "5"],
                            env=base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        _, m = scrape_until(port, proc, lambda m: (value(m, "gputrace_api_calls_total",
                                                         api="cudaGraphLaunch") or 0) >= 10)
        graphs = value(m, "gputrace_api_calls_total", api="cudaGraphLaunch")
        eq(value(m, "gputrace_kernel_launches_total"), 19 + 6 * graphs,
           "launches in a snapshot with %d graph launches" % graphs)
    finally:
        finish(proc)


def test_bad_address():
    p = run([GPUTRACE, "record", "-q", "--prometheus", "nonsense", "-o", TMP + "/bad.gtrace", "--",
             prog("steady"), "1"], base_env())
    eq(p.returncode, 2, "record with a bad --prometheus address")


if __name__ == "__main__":
    main([test_graph_runs_live, test_metrics_during_run, test_bad_address])
