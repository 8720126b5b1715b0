"""docs/kubernetes.md's manifests: each ```yaml block parsed with a YAML
parser (python3-yaml, and npm `yaml` agreeing with it), each object checked
against the Kubernetes API schema of its kind (npm `kubernetes-models`,
installed into <build>/npm-k8s, by tests/kubernetes/validate.mjs) and a
deliberately broken copy refused by it; and the fields the page relies on:
the sidecar's `gputrace collect` command line runs as written (paths moved
here), its socket directory is the application's GPUTRACE_SOCKET_DIR on
the same volume, LD_PRELOAD names the shim the init container copies in,
the scrape annotations name the collector's --prometheus port, the pod
shares one process namespace and one uid (the DaemonSet: hostPID, the
traced pod on the same hostPath directories and uid).

Exits 77 (ctest: skipped, SKIP_RETURN_CODE) when npm cannot reach its
registry to install the schema, after the other checks passed."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import promrun
from gtest import *

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "kubernetes.md")
VALIDATE = os.path.join(ROOT, "tests", "kubernetes", "validate.mjs")
CACHE = os.path.join(BUILD, "npm-k8s")
PACKAGES = {"kubernetes-models": "5.1.0", "yaml": "2.9.1"}
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ENETUNREACH", "ECONNRESET",
           "network", "getaddrinfo")


def manifests(text):
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S)
    return [d for b in blocks for d in yaml.safe_load_all(b)]


def named(objects, kind, name):
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    eq(len(found), 1, "%s %s in the page" % (kind, name))
    return found[0]


def collect_args(container):
    """The sidecar's `gputrace collect` options, as {option: value}."""
    cmd = container["command"]
    eq((cmd[0].endswith("/bin/gputrace"), cmd[1]), (True, "collect"), "the collector's command")
    return dict(zip(cmd[2::2], cmd[3::2]))


def mounts(container):
    return {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}


def env_of(container):
    return {e["name"]: e["value"] for e in container.get("env", [])}


def volume(spec, name):
    return [v for v in spec["volumes"] if v["name"] == name][0]


def check_scrape(annotations, collector, args):
    port = args["--prometheus"].rsplit(":", 1)[1]
    eq((annotations["prometheus.io/scrape"], annotations["prometheus.io/port"],
        annotations["prometheus.io/path"]), ("true", port, "/metrics"), "scrape annotations")
    eq([p["containerPort"] for p in collector["ports"]], [int(port)], "the metrics port")


def check_app(app, sock_dir, sock_volume, bundle_volume):
    env = env_of(app)
    eq(env["GPUTRACE_SOCKET_DIR"], sock_dir, "the application's GPUTRACE_SOCKET_DIR")
    eq(mounts(app).get(sock_dir), sock_volume, "the socket directory's volume in the app")
    shim = env["LD_PRELOAD"]
    eq(shim.endswith("/lib/libgputrace.so"), True, "LD_PRELOAD names the shim")
    root = shim[:-len("/lib/libgputrace.so")]
    eq(mounts(app).get(root), bundle_volume, "the bundle's volume in the app")


def check_pod(pod):
    spec = pod["spec"]
    eq(spec.get("shareProcessNamespace"), True, "one process namespace")
    eq(isinstance(spec["securityContext"].get("runAsUser"), int), True, "one uid")
    sidecars = [c for c in spec["initContainers"] if c.get("restartPolicy") == "Always"]
    copiers = [c for c in spec["initContainers"] if c.get("restartPolicy") != "Always"]
    eq((len(sidecars), len(copiers), len(spec["containers"])), (1, 1, 1), "containers")
    coll, copier, app = sidecars[0], copiers[0], spec["containers"][0]
    args = collect_args(coll)
    sock_dir = args["--socket-dir"]
    sock_volume = mounts(coll)[sock_dir]
    eq("emptyDir" in volume(spec, sock_volume), True, "the socket directory is an emptyDir")
    eq(coll["startupProbe"]["exec"]["command"], ["test", "-S", sock_dir + "/collector.sock"],
       "the startup probe waits for the socket")
    (target, bundle_volume), = mounts(copier).items()
    eq(copier["command"], ["cp", "-a", "/opt/gputrace/.", target + "/"], "the bundle copied")
    eq("emptyDir" in volume(spec, bundle_volume), True, "the bundle's volume is an emptyDir")
    check_app(app, sock_dir, sock_volume, bundle_volume)
    check_scrape(pod["metadata"]["annotations"], coll, args)
    return coll


def check_daemonset(ds, pod):
    tmpl = ds["spec"]["template"]
    eq(ds["spec"]["selector"]["matchLabels"], tmpl["metadata"]["labels"], "the selector")
    spec = tmpl["spec"]
    eq(spec.get("hostPID"), True, "the node's process namespace")
    coll, = spec["containers"]
    args = collect_args(coll)
    host = lambda s, name: volume(s, name)["hostPath"]["path"]
    sock_host = host(spec, mounts(coll)[args["--socket-dir"]])
    init, = spec["initContainers"]
    bundle_host = [host(spec, n) for p, n in mounts(init).items() if p.endswith("/opt/gputrace")]
    eq(len(bundle_host), 1, "the init container's bundle volume")
    app, = pod["spec"]["containers"]
    sock_dir = env_of(app)["GPUTRACE_SOCKET_DIR"]
    check_app(app, sock_dir, mounts(app)[sock_dir],
              mounts(app)[env_of(app)["LD_PRELOAD"][:-len("/lib/libgputrace.so")]])
    eq(host(pod["spec"], mounts(app)[sock_dir]), sock_host, "the pod's socket hostPath")
    eq(host(pod["spec"], [n for p, n in mounts(app).items()
                          if env_of(app)["LD_PRELOAD"].startswith(p + "/")][0]),
       bundle_host[0], "the pod's bundle hostPath")
    eq(pod["spec"]["securityContext"]["runAsUser"], spec["securityContext"]["runAsUser"],
       "the pod runs as the collector's uid")
    script = init["command"][-1]
    for path in [p for p in mounts(init) if p != "/host/opt/gputrace"]:
        if path not in script:
            raise AssertionError("the init container leaves %s root's: %s" % (path, script))
    check_scrape(tmpl["metadata"]["annotations"], coll, args)
    return coll


def run_collect_as_written(coll):
    """The sidecar's command line, its paths and port moved here, runs and
    stops on SIGTERM with status 0."""
    args = collect_args(coll)
    moved = {"--socket-dir": os.path.join(TMP, "k8s_sock"),
             "-o": os.path.join(TMP, "k8s_%d.gtrace" % len(os.listdir(TMP))),
             "--prometheus": "127.0.0.1:%d" % promrun.free_port()}
    argv = [GPUTRACE, "collect"] + [x for k, v in args.items() for x in (k, moved.get(k, v))]
    p = subprocess.Popen(argv, env=base_env(), stderr=subprocess.PIPE, text=True)
    sock = os.path.join(moved["--socket-dir"], "collector.sock")
    try:
        deadline = time.time() + 20
        while not os.path.exists(sock) and p.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        eq((os.path.exists(sock), p.poll()), (True, None), "%s listening" % " ".join(argv))
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        eq(p.returncode, 0, "%s after SIGTERM (stderr: %s)" % (" ".join(argv), err))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_fields_the_page_relies_on():
    objects = manifests(open(DOC).read())
    eq(sorted((o["kind"], o["metadata"]["name"]) for o in objects),
       [("DaemonSet", "gputrace-collector"), ("Pod", "inference"), ("Pod", "inference-on-node")],
       "the page's objects")
    run_collect_as_written(check_pod(named(objects, "Pod", "inference")))
    run_collect_as_written(check_daemonset(named(objects, "DaemonSet", "gputrace-collector"),
                                           named(objects, "Pod", "inference-on-node")))


def install_schema():
    def installed(name):
        try:
            with open(os.path.join(CACHE, "node_modules", name, "package.json")) as f:
                return json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            return None
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise AssertionError("%s is not installed (scripts/deps.sh installs it)" % tool)
    if all(installed(n) == v for n, v in PACKAGES.items()):
        return True
    os.makedirs(CACHE, exist_ok=True)
    p = subprocess.run(["npm", "install", "--prefix", CACHE, "--no-audit", "--no-fund",
                        "--no-save"] + ["%s@%s" % nv for nv in PACKAGES.items()],
                       capture_output=True, text=True, timeout=600)
    if p.returncode == 0 and all(installed(n) == v for n, v in PACKAGES.items()):
        return True
    out = p.stdout + p.stderr
    if any(word in out for word in OFFLINE):
        print("SKIP: npm cannot reach its registry to install kubernetes-models:\n" + out)
        return False
    raise AssertionError("npm install kubernetes-models failed:\n" + out)


def validate(md):
    script = os.path.join(CACHE, "validate.mjs")  # beside node_modules: its imports resolve
    shutil.copyfile(VALIDATE, script)
    return subprocess.run(["node", script, md], capture_output=True, text=True, timeout=120)


SKIPPED = []


def test_schema():
    if not install_schema():
        SKIPPED.append("schema")
        return
    p = validate(DOC)
    eq((p.returncode, p.stderr), (0, ""), "kubernetes-models on docs/kubernetes.md")
    lines = p.stdout.splitlines()
    eq(lines[:-1], ["valid Pod inference", "valid DaemonSet gputrace-collector",
                    "valid Pod inference-on-node"], "objects validated")
    eq(json.loads(lines[-1]), manifests(open(DOC).read()), "npm yaml and python3-yaml agree")
    broken = os.path.join(TMP, "broken.md")
    with open(broken, "w") as f:  # a port as a string: the schema wants an integer
        f.write(open(DOC).read().replace("containerPort: 9400", "containerPort: \"9400\"", 1))
    p = validate(broken)
    eq(p.returncode, 1, "a broken manifest's status")
    if "invalid Pod inference" not in p.stderr or "containerPort" not in p.stderr:
        raise AssertionError("the broken manifest: " + p.stderr)


try:  # a failure above wins over a skipped schema check
    main([test_fields_the_page_relies_on, test_schema])
except SystemExit as done:
    sys.exit(77 if done.code == 0 and SKIPPED else done.code)
