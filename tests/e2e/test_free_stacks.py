"""A free's stack: by default a free that succeeds carries its
call site's stack (the one taken at the site's first free, as a launch's),
not an unwinding of its own, so frees cost a lookup; each line's count stays
exact, a free that fails takes its own stack, allocations all keep theirs,
and leaks are unchanged. --stacks alloc+free takes every free's own stack
(before: the default). tests/cuda/free_sites.cu: release() frees every block
at line 16, called from from_a() (line 21) and from_b() (line 26), N times
each; bad_free() (line 30) frees a pointer never allocated; keep() (line 34)
leaks 4096 bytes."""
import collections

from gtest import *

N = 50
RELEASE, FROM_A, FROM_B, BAD, KEEP = 16, 21, 26, 30, 34


def by_stack(trace):
    """{kind: Counter of (api, result, the stack's lines in free_sites.cu)}."""
    recs = dump(trace)
    lines = {}
    for r in recs:
        if r["kind"] == "frame" and r["file"].endswith("/free_sites.cu"):
            lines[r["ip"]] = r["line"]
    stacks = {r["id"]: tuple(lines[e] for e in r["entries"] if e in lines)
              for r in recs if r["kind"] == "stack"}
    out = collections.defaultdict(collections.Counter)
    for r in calls(recs):
        if r["kind"] in ("alloc", "free"):
            out[r["kind"]][(r["result"], stacks.get(r.get("stack_id", 0), ()))] += 1
    return out


def check_allocs_and_leak(got, trace):
    eq(dict(got["alloc"]), {(0, (FROM_A, 40)): N, (0, (FROM_B, 41)): N,
                            (0, (KEEP, 44)): 1}, "allocations by stack")
    d = json.loads(run([GPUTRACE, "leaks", "--json", trace], base_env(), check_rc=0).stdout)
    eq([(g["bytes"], g["stack"][0]["line"]) for g in d["leaks"]], [(4096, KEEP)], "the leak")


def test_frees_carry_their_call_sites_stack():
    p, trace = record([prog("free_sites"), str(N)])
    eq(p.stdout, "free_sites: %d pairs, bad free 1\n" % (2 * N), "the program's output")
    got = by_stack(trace)
    check_allocs_and_leak(got, trace)
    # Every successful free is release()'s line with its site's first caller
    # (from_a, main's line 40); the failed one has its own stack.
    eq(dict(got["free"]), {(0, (RELEASE, FROM_A, 40)): 2 * N, (1, (BAD, 43)): 1},
       "frees by stack")


def test_alloc_free_takes_each_frees_stack():
    p, trace = record([prog("free_sites"), str(N)], GPUTRACE_STACKS="alloc+free")
    got = by_stack(trace)
    check_allocs_and_leak(got, trace)
    eq(dict(got["free"]), {(0, (RELEASE, FROM_A, 40)): N, (0, (RELEASE, FROM_B, 41)): N,
                           (1, (BAD, 43)): 1}, "frees by stack")
    p = run([GPUTRACE, "record", "-q", "--stacks", "alloc+free", "-o",
             os.path.join(TMP, "opt.gtrace"), "--", prog("free_sites"), "2"], base_env(),
            check_rc=0)
    eq(sum(by_stack(os.path.join(TMP, "opt.gtrace"))["free"].values()), 5,
       "record --stacks alloc+free: the frees")


def test_stacks_none_gives_frees_none():
    _, trace = record([prog("free_sites"), str(N)], GPUTRACE_STACKS="none")
    got = by_stack(trace)
    eq(dict(got["free"]), {(0, ()): 2 * N, (1, ()): 1}, "frees by stack")


if __name__ == "__main__":
    main([test_frees_carry_their_call_sites_stack, test_alloc_free_takes_each_frees_stack,
          test_stacks_none_gives_frees_none])
