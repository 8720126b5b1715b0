"""The call sites of blocking copies and synchronizes, named by default:
with no environment variable (GPUTRACE_STACKS unset) every copy, memset and
synchronize carries its call site's stack (taken at the site's first call),
so report's pageable_memcpy and sync_memcpy findings cite each copy line of
samples/infer.cu with its exact count, and the sync table names the
synchronize's line. Before, these records had stacks only under
GPUTRACE_STACKS=all, and the findings cited no site. `record --stacks none`
sets GPUTRACE_STACKS for the program: then none."""
from gtest import *

INFER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "samples", "infer.cu")


def line_of(text):
    """The line of samples/infer.cu where the statement holding `text` starts."""
    src = open(INFER).read().splitlines()
    at = [i for i, l in enumerate(src, 1) if text in l]
    eq(len(at), 1, "lines holding %r" % text)
    i = at[0]
    while not src[i - 1].lstrip().startswith("check("):
        i -= 1
    return i


def findings(trace):
    rep = json.loads(run([GPUTRACE, "report", "--json", trace], base_env(), check_rc=0).stdout)
    return {f["rule"]: f for f in rep["findings"]}, rep


def test_copy_and_sync_sites_by_default():
    _, trace = record([prog("infer"), "20"])
    f, rep = findings(trace)
    want = sorted(["main at infer.cu:%d ×20" % line_of('"copy output"'),
                   "main at infer.cu:%d ×20" % line_of('"copy input"'),
                   "main at infer.cu:%d ×1" % line_of('"load weights"')])
    for rule in ("pageable_memcpy", "sync_memcpy"):
        sites = f[rule]["evidence"].get("call_sites")
        eq(sorted(sites.split("; ")) if sites else None, want, rule + " call sites")
    sync = [s for s in rep["sync_sites"]]
    eq([s["site"] for s in sync], ["main at infer.cu:%d" % line_of('"synchronize"')],
       "synchronize sites")
    events = dump(trace)
    for kind in ("memcpy", "sync"):
        calls = select(events, kind=kind)
        eq([c for c in calls if not c.get("stack_id")], [], kind + " calls without a stack")


def test_record_stacks_option():
    out = os.path.join(TMP, "stacks_none.gtrace")
    run([GPUTRACE, "record", "-q", "--force", "--stacks", "none", "-o", out, "--",
         prog("infer"), "2"], base_env(), check_rc=0)
    events = dump(out)
    eq(count(events, kind="stack"), 0, "stacks under record --stacks none")
    eq(len(select(events, kind="memcpy")), 5, "copies")


if __name__ == "__main__":
    main([test_copy_and_sync_sites_by_default, test_record_stacks_option])
