#!/usr/bin/env bash
# leaks.sh — throughput and peak memory of `gputrace leaks --json` and
# `gputrace flame` on a generated trace of EVENTS records (one session over
# the file each: allocations, frees and NVTX ranges in time order), REPS
# runs, medians.
# Usage: bench/leaks.sh [REPS=3] [EVENTS=10000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # median, built, scratch
reps=${1:-3}; n=${2:-10000000}; build=${3:-build}
gt=$build/bin/gputrace; gen=$build/bin/gputrace-gen-trace
built "$build" "$gt" "$gen"
scratch
"$gen" "$tmp/t.gtrace" "$n" --seed 1
printf '| %-22s | %8s | %10s | %8s |\n|%s|%s|%s|%s|\n' "command (median of $reps)" seconds \
  "M events/s" "RSS MiB" "------------------------" "----------" "------------" "----------"
for cmd in "leaks --json" "flame --allocated"; do
  secs=() rss=()
  for ((i = 1; i <= reps; i++)); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$gt" $cmd "$tmp/t.gtrace" >/dev/null
    read -r s m <"$tmp/time"; secs+=("$s"); rss+=("$m")
  done
  ms=$(printf '%s\n' "${secs[@]}" | median); mr=$(printf '%s\n' "${rss[@]}" | median)
  printf '| %-22s | %8.2f | %10.1f | %8.1f |\n' "$cmd" "$ms" \
    "$(awk -v n="$n" -v s="$ms" 'BEGIN {print n / s / 1e6}')" "$(awk -v k="$mr" 'BEGIN {print k / 1024}')"
done
