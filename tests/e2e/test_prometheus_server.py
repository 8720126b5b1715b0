"""A real Prometheus server (Debian package prometheus), started on loopback
and ready before the traced run starts, scrapes the collector's /metrics
during the run; queries through its
HTTP API return the launch count and a histogram_quantile of the API
latency histogram (the P99 of cudaDeviceSynchronize). Bounded (every wait has a deadline, the
server is killed at the end); exits 77 (ctest SKIP) without the server."""
import json
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from promrun import *

ITER = 4000


def query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (port, urllib.parse.quote(q))
    p = subprocess.run(["curl", "-sf", "--max-time", "5", url], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    res = json.loads(p.stdout)["data"]["result"]
    return float(res[0]["value"][1]) if res else None


def ready(port, server, timeout=60):
    """Wait for the server's /-/ready before the traced run starts: on a
    loaded machine it can take seconds to start, and the run (about 9 s)
    is all the time it has to scrape (CI once saw it start too late and
    query nothing)."""
    deadline = time.time() + timeout
    while time.time() < deadline and server.poll() is None:
        p = subprocess.run(["curl", "-sf", "--max-time", "2",
                            "http://127.0.0.1:%d/-/ready" % port], capture_output=True)
        if p.returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError("Prometheus not ready after %d s (exit %s)" % (timeout, server.poll()))


def quantile(prom_port, proc):
    """histogram_quantile over the scraped API histogram, once the server has
    two scrapes to take a rate from."""
    q = ('histogram_quantile(0.99, sum by (le) (rate(gputrace_api_seconds_bucket'
         '{job="gputrace",api="cudaDeviceSynchronize"}[5s])))')
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        got = query(prom_port, q)
        if got is not None and got == got:  # not NaN
            return got
        time.sleep(0.2)
    raise AssertionError("Prometheus answered no histogram_quantile")


def test_server_scrapes_launches():
    port, prom_port = free_port(), free_port()
    cfg = os.path.join(TMP, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 200ms\n  scrape_timeout: 150ms\n"
                "scrape_configs:\n  - job_name: gputrace\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % port)
    log = open(os.path.join(TMP, "prometheus.log"), "w")
    server = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                               "--storage.tsdb.path=" + os.path.join(TMP, "tsdb"),
                               "--web.listen-address=127.0.0.1:%d" % prom_port],
                              stdout=log, stderr=log)
    proc = None
    try:
        ready(prom_port, server)
        proc, out = start(ITER, port)
        got, deadline = None, time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            got = query(prom_port, 'gputrace_kernel_launches_total{job="gputrace"}')
            if got:
                break
            time.sleep(0.2)
        if not got:
            rc = proc.poll()
            raise AssertionError("Prometheus returned no launch count (see %s; the run: %s)" %
                                 (log.name, "running" if rc is None else "exit %d, stderr %r"
                                  % (rc, proc.stderr.read()[-1000:])))
        text, m = scrape_until(port, proc, lambda m: True)
        now = value(m, "gputrace_kernel_launches_total")
        if not (0 < got <= now <= ITER and got == int(got)):
            raise AssertionError("Prometheus says %r launches, the endpoint %r" % (got, now))
        p99 = quantile(prom_port, proc)
        bounds = sorted(float(dict(k[1])["le"]) for k in m
                        if k[0] == "gputrace_api_seconds_bucket"
                        and dict(k[1])["api"] == "cudaDeviceSynchronize")
        if not 0 < p99 <= bounds[-2]:
            raise AssertionError("P99 of cudaDeviceSynchronize: %r s" % p99)
        finish(proc, timeout=120)
        proc = None
        eq(count(dump(out), kind="launch"), ITER, "launches in the trace")
    finally:
        if proc:
            proc.kill()
            proc.wait()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


if __name__ == "__main__":
    if not shutil.which("prometheus"):
        print("SKIP: no Prometheus server (Debian package prometheus) installed")
        sys.exit(SKIP)
    main([test_server_scrapes_launches])
