"""Allocation stacks where a thread's stacks repeat: the shim replays a
thread's last walk when the stack words it read are unchanged
(preload/unwind.c) and then gives the last stack's id again without
hashing (preload/stacks.c). Every allocation must still get exactly its own
stack: tests/cuda/stack_reuse.cu allocates at take() (line 24) from site_a
(line 28) and site_b (line 32) in the pattern a a a b (site_b at the same
stack pointer as site_a: only a return address differs), from main and two
threads; from site_a 0, 1 and 2 frames further down (deeper(), lines 45/47);
and once more in a forked child whose first stack is its parent's last
(the child's table is its own: the id must be one it wrote)."""
import collections

from gtest import *

N = 60
TAKE, A, B, PAT_A, PAT_B, DEEP_A, DEEP_IN = 24, 28, 32, 38, 40, 45, 47
THREAD, MAIN_PAT, MAIN_DEEP, FORK_LOOP = 52, 57, 58, 64


def allocs_by_stack(trace):
    """{pid: Counter of the allocation stacks' lines in stack_reuse.cu},
    and the allocations whose stack id no STACK record of their process has."""
    recs = dump(trace)
    lines = {r["ip"]: r["line"] for r in recs
             if r["kind"] == "frame" and r["file"].endswith("/stack_reuse.cu")}
    stacks = {(r["pid"], r["id"]): tuple(lines[e] for e in r["entries"] if e in lines)
              for r in recs if r["kind"] == "stack"}
    got, orphans = collections.defaultdict(collections.Counter), 0
    for r in calls(recs):
        if r["kind"] == "alloc":
            key = (r["pid"], r.get("stack_id", 0))
            orphans += key not in stacks
            got[r["pid"]][stacks.get(key, ())] += 1
    return got, orphans


def test_each_allocation_keeps_its_own_stack():
    p, trace = record([prog("stack_reuse"), str(N)])
    eq(p.stdout, "stack_reuse: %d allocations, child 0\n" % (15 * N + 1), "the output")
    got, orphans = allocs_by_stack(trace)
    eq(orphans, 0, "allocations whose stack id their process never wrote")
    eq(len(got), 2, "processes")
    parent, child = sorted(got.values(), key=lambda c: -sum(c.values()))
    eq(dict(parent), {
        (TAKE, A, PAT_A, MAIN_PAT): 3 * N,
        (TAKE, B, PAT_B, MAIN_PAT): N,
        (TAKE, A, PAT_A, THREAD): 6 * N,
        (TAKE, B, PAT_B, THREAD): 2 * N,
        (TAKE, A, DEEP_A, MAIN_DEEP): N,
        (TAKE, A, DEEP_A, DEEP_IN, MAIN_DEEP): N,
        (TAKE, A, DEEP_A, DEEP_IN, DEEP_IN, MAIN_DEEP): N,
        (TAKE, A, FORK_LOOP): 1,
    }, "the parent's allocations by stack")
    eq(dict(child), {(TAKE, A, FORK_LOOP): 1}, "the child's allocation's stack")


if __name__ == "__main__":
    main([test_each_allocation_keeps_its_own_stack])
