#!/usr/bin/env bash
# run.sh — launch overhead of tracing, in one run: bench/launch_loop (empty
# kernel launches on the CPU stand-in runtime with its timeline simulation
# off, so the runtime itself costs little; the program times its own loop)
# REPS times each, alternating, under four settings:
#   untraced;
#   floor: bench/floor_shim (two rdtsc and a 64-byte thread-local store per
#     launch — the least any hook can add: gputrace's goal);
#   floor, shared: the same store into the next line of a 64 MiB shared
#     memfd stream (libfloor_shared: where a tracer's records must go for
#     its consumer to read them; no consumer), for reference;
#   hook path: gputrace record with device timing off;
#   default: gputrace record with default settings (adaptive device timing,
#     sampled launch stacks);
#   no stacks: the default without launch stacks (GPUTRACE_STACKS=none): the
#     difference is what sampled launch stacks cost.
# Prints the medians, the ns each adds per launch over untraced, and the
# records the collector dropped (it must keep up at the default ring size).
# Usage: bench/run.sh [REPS=7] [LAUNCHES=1000000] [BUILD=build]
# BENCH_PROG=build/bench/driver_loop measures driver launches instead
# (cuLaunchKernel found through cuGetProcAddress, as cuBLAS/NCCL do).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-7}
n=${2:-1000000}
build=${3:-build}
prog=${BENCH_PROG:-$build/bench/launch_loop}
floor=$PWD/$build/bench/libfloor_shim.so
floor_shared=$PWD/$build/bench/libfloor_shared.so
. bench/lib.sh # median, built, scratch, summary_drops
built "$build" "$prog" "$floor" "$floor_shared"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE
scratch

declare -A ns drops records
traced() { # setting env... : ns per launch, dropped and recorded launches
  local setting=$1 out summary
  shift
  out=$("$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- env "$@" "$prog" "$n")
  summary=$("$build/bin/gputrace" dump --summary "$tmp/t.gtrace")
  drops[$setting]+="$(summary_drops "$summary") "
  records[$setting]+="$(echo "$summary" | awk '$1 == "launch" {print $2}') "
  ns[$setting]+="$(echo "$out" | awk '{print $2}') "
}
for ((i = 1; i <= reps; i++)); do
  ns[untraced]+="$("$prog" "$n" | awk '{print $2}') "
  ns[floor]+="$(LD_PRELOAD=$floor "$prog" "$n" | awk '{print $2}') "
  ns[floor_shared]+="$(LD_PRELOAD=$floor_shared "$prog" "$n" | awk '{print $2}') "
  traced hook GPUTRACE_GPU_TIMING=off
  traced default GPUTRACE_QUIET=1
  traced nostacks GPUTRACE_STACKS=none
done
mu=$(printf '%s\n' ${ns[untraced]} | median)
printf '%-34s %s\n' "launches per run, runs each way" "$n, $reps"
for s in untraced floor floor_shared hook default nostacks; do
  printf '%-34s %s\n' "$s ns/launch (runs)" "${ns[$s]}"
done
for s in hook default nostacks; do
  printf '%-34s %s\n' "$s: launch records (runs)" "${records[$s]}"
  printf '%-34s %s\n' "$s: dropped records (runs)" "${drops[$s]}"
done
printf '| %-36s | %9s | %9s |\n' "setting (median of $reps)" "ns/launch" "added ns"
printf '|%s|%s|%s|\n' "--------------------------------------" "-----------" "-----------"
for s in untraced floor floor_shared hook default nostacks; do
  m=$(printf '%s\n' ${ns[$s]} | median)
  printf '| %-36s | %9.1f | %9.1f |\n' "$s" "$m" "$(awk -v a="$m" -v b="$mu" 'BEGIN {print a - b}')"
done
printf '| %-36s | %9s | %9s |\n' "max dropped records (hook, default)" \
  "$(printf '%s\n' ${drops[hook]} | sort -g | tail -1)" \
  "$(printf '%s\n' ${drops[default]} | sort -g | tail -1)"
