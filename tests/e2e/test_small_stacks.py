"""The shim on small stacks (docs/stack-budget.md), with every hook family
of tests/cuda/small_stacks.cu: memory, copy, launch, sync, objects (streams
and events), graph (a capture instantiated and launched), driver, nvtx.

- Measured: each family's deepest use of a painted makecontext stack,
  untraced and traced (default settings, and GPUTRACE_STACKS=all, which
  takes every call's stack): the shim adds at most BUDGET bytes to any
  family, and the process's first traced call (the shim's start-up runs in
  it) at most STARTUP_BUDGET more than the untraced first call.
- Run: 50 calls of every family on an 8 KiB coroutine stack, then 50 from
  a SIGUSR1 handler on a sigaltstack of 4 KiB beyond the kernel's signal
  frame (pages around both PROT_NONE: an overflow faults), traced under
  both settings: the program's output is the untraced one and the trace
  holds every call.
The budget holds for the build users run (optimized, unsanitized); a Debug
or sanitized build's frames are larger: there the figures are printed, and
only the run is checked."""
from gtest import *

BUDGET = 1024
STARTUP_BUDGET = 6 * 1024
FAMILIES = ["memory", "copy", "launch", "sync", "objects", "graph", "driver", "nvtx"]
# calls in a run: each family once on the main stack, 50 times on the
# coroutine, 50 times in the handler
RUN_CALLS = {("alloc", "cudaMalloc"): 2 * 101, ("alloc", "cudaMallocHost"): 101,
             ("memcpy", "cudaMemcpy"): 101, ("launch", "__cudaLaunchKernel"): 2 * 101,
             ("graph", "cudaStreamBeginCapture"): 101, ("launch", "cudaGraphLaunch"): 101,
             ("sync", "cudaStreamSynchronize"): 3 * 101, ("alloc", "cuMemAlloc_v2"): 101,
             ("nvtx", "nvtxRangePushA"): 101}


def measured(text):
    uses = {}
    for line in text.splitlines():
        if line == "measure: done":
            continue
        name, used = line.split()
        uses[name] = int(used)
    eq(sorted(uses), sorted(FAMILIES + ["startup"]), "families measured")
    return uses


def budget_applies():
    return (cmake_cache("CMAKE_BUILD_TYPE") in ("", "RelWithDebInfo", "Release") and
            cmake_cache("GPUTRACE_SANITIZE") == "")


def test_budget():
    plain = measured(run([prog("small_stacks"), "measure"], base_env(), check_rc=0).stdout)
    for stacks in ("alloc", "all"):
        p, _ = record([prog("small_stacks"), "measure"], GPUTRACE_STACKS=stacks)
        traced = measured(p.stdout)
        over = {f: traced[f] - plain[f] for f in FAMILIES}
        print("GPUTRACE_STACKS=%s: bytes the shim adds: %s; start-up %d" %
              (stacks, over, traced["startup"] - plain["startup"]))
        if not budget_applies():
            print("(a %s build, sanitizers %r: the budget is not checked)" %
                  (cmake_cache("CMAKE_BUILD_TYPE") or "default", cmake_cache("GPUTRACE_SANITIZE")))
            continue
        for f in FAMILIES:
            if over[f] > BUDGET:
                raise AssertionError("GPUTRACE_STACKS=%s: %s uses %d B of stack traced, %d "
                                     "untraced: %d over the budget of %d" %
                                     (stacks, f, traced[f], plain[f], over[f], BUDGET))
        if traced["startup"] - plain["startup"] > STARTUP_BUDGET:
            raise AssertionError("start-up uses %d B of stack traced, %d untraced" %
                                 (traced["startup"], plain["startup"]))


def test_small_stacks_run():
    plain = run([prog("small_stacks"), "run"], base_env(), check_rc=0)
    eq(plain.stdout, "run: 0 failures\n", "untraced output")
    for stacks in ("alloc", "all"):
        p, out = record([prog("small_stacks"), "run"], GPUTRACE_STACKS=stacks)
        eq(p.stdout, plain.stdout, "output traced, GPUTRACE_STACKS=%s" % stacks)
        events = dump(out)
        for (kind, api), n in RUN_CALLS.items():
            eq(count(events, kind=kind, api=api), n,
               "%s records, GPUTRACE_STACKS=%s" % (api, stacks))
        eq(ring_drops(events), 0, "records dropped")


if __name__ == "__main__":
    main([test_budget, test_small_stacks_run])
