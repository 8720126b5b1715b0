#!/usr/bin/env bash
# run.sh — launch overhead of tracing, traced vs untraced in one run.
# Runs bench/launch_loop (empty-kernel launches on the CPU stand-in runtime
# with its timeline simulation off, so the runtime itself costs little)
# REPS times untraced and REPS times under `gputrace record`, alternating,
# and prints the medians, the added ns per launch, and the records the
# collector dropped (it must keep up at the default ring size).
# Usage: bench/run.sh [REPS=7] [LAUNCHES=1000000] [BUILD=build]
# BENCH_PROG=build/bench/driver_loop measures driver launches instead
# (cuLaunchKernel found through cuGetProcAddress, as cuBLAS/NCCL do).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-7}
n=${2:-1000000}
build=${3:-build}
prog=${BENCH_PROG:-$build/bench/launch_loop}
[ -x "$prog" ] || { echo "bench: build first (cmake --build $build)" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
# The hook path alone: device timing (on by default) is measured by
# bench/devtime.sh; set GPUTRACE_GPU_TIMING to measure another mode here.
export GPUTRACE_GPU_TIMING=${GPUTRACE_GPU_TIMING:-off}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. bench/lib.sh # median
untraced=() traced=() drops=() records=()
for ((i = 1; i <= reps; i++)); do
  untraced+=("$("$prog" "$n" | awk '{print $2}')")
  out=$("$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- "$prog" "$n")
  traced+=("$(echo "$out" | awk '{print $2}')")
  summary=$("$build/bin/gputrace" dump --summary "$tmp/t.gtrace")
  drops+=("$(echo "$summary" | awk '/^records:/ {print $6}')")
  records+=("$(echo "$summary" | awk '$1 == "launch" {print $2}')")
done
mu=$(printf '%s\n' "${untraced[@]}" | median)
mt=$(printf '%s\n' "${traced[@]}" | median)
md=$(printf '%s\n' "${drops[@]}" | sort -g | tail -1)
printf '%-38s %s\n' "launches per run" "$n"
printf '%-38s %s\n' "runs (each way)" "$reps"
printf '%-38s %s\n' "untraced ns/launch (runs)" "${untraced[*]}"
printf '%-38s %s\n' "traced ns/launch (runs)" "${traced[*]}"
printf '%-38s %s\n' "launch records in trace (runs)" "${records[*]}"
printf '%-38s %s\n' "dropped records (runs)" "${drops[*]}"
printf '| %-28s | %12s |\n' "metric" "median"
printf '|%s|%s|\n' "------------------------------" "--------------"
printf '| %-28s | %12.1f |\n' "untraced ns/launch" "$mu"
printf '| %-28s | %12.1f |\n' "traced ns/launch" "$mt"
printf '| %-28s | %12.1f |\n' "added ns/launch" "$(awk -v a="$mt" -v b="$mu" "BEGIN {print a - b}")"
printf '| %-28s | %12s |\n' "max dropped records" "$md"
