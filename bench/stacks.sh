#!/usr/bin/env bash
# stacks.sh — cost of a native stack capture per allocation/free: 200,000
# cudaMalloc/cudaFree pairs from a 30-frame-deep call chain on the stand-in
# (timeline off), traced with GPUTRACE_STACKS=none and =alloc in one run,
# alternating, REPS times; prints medians and the difference per call.
# Usage: bench/stacks.sh [REPS=5] [PAIRS=200000] [DEPTH=30] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-200000}; depth=${3:-30}; build=${4:-build}
prog=$build/bench/alloc_loop
[ -x "$prog" ] || { echo "bench: build first (cmake --build $build)" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh # median
run() { GPUTRACE_STACKS=$1 "$build/bin/gputrace" record -q --force -o "$tmp/s.gtrace" -- "$prog" "$n" "$depth" | awk '{print $2}'; }
none=() alloc=() plain=()
for ((i = 1; i <= reps; i++)); do
  plain+=("$("$prog" "$n" "$depth" | awk '{print $2}')")
  none+=("$(run none)")
  alloc+=("$(run alloc)")
done
mp=$(printf '%s\n' "${plain[@]}" | median); mn=$(printf '%s\n' "${none[@]}" | median)
ma=$(printf '%s\n' "${alloc[@]}" | median)
printf '%-34s %s\n' "pairs x depth" "$n x $depth" "untraced ns/call (runs)" "${plain[*]}" \
  "traced, no stacks (runs)" "${none[*]}" "traced, stacks (runs)" "${alloc[*]}"
printf '| %-30s | %10s |\n|%s|%s|\n' "metric (median)" "ns" "--------------------------------" "------------"
printf '| %-30s | %10.1f |\n' "untraced per call" "$mp" "traced, GPUTRACE_STACKS=none" "$mn" \
  "traced, GPUTRACE_STACKS=alloc" "$ma" \
  "stack capture per call" "$(awk -v a="$ma" -v b="$mn" 'BEGIN {print a - b}')"
