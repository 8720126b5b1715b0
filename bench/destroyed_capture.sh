#!/usr/bin/env bash
# destroyed_capture.sh — what a capture ended by cudaStreamDestroy leaves on
# the launch path (issue 41: the shim kept it open, so every later launch
# took the hooks' general form): bench/launch_loop on the CPU stand-in
# runtime (timeline off), traced on the hook path (device timing off), REPS
# times each, alternating, clean and after a destroyed capture
# (launch_loop's "destroyed-capture"), under this build's gputrace and, when
# BEFORE names another build (the code before the fix), under that one's.
# Each run launches in batches of 256 (a sync between them, untimed) and
# reports its mean and its fastest batch's ns per launch (the code's cost,
# less the preemptions of a busy machine). Prints, per setting, the fastest
# and the median over the runs of both, and the ratio of the destroyed-
# capture figure to the clean one per build (1.00: no cost).
# Usage: BEFORE=../main/build bench/destroyed_capture.sh [REPS=9] [LAUNCHES=1000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-9}
n=${2:-1000000}
build=${3:-build}
before=${BEFORE:-}
prog=$build/bench/launch_loop
. bench/lib.sh # median, fastest, built, scratch
built "$build" "$prog" "$build/bin/gputrace"
[ -z "$before" ] || built "$before" "$before/bin/gputrace"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0 GPUTRACE_GPU_TIMING=off
scratch

declare -A ns best
builds=(after)
[ -z "$before" ] || builds+=(before)
run() { # label gputrace clean|destroyed-capture
  local label=$1 gputrace=$2 out
  shift 2
  out=$("$gputrace" record -q --force -o "$tmp/t.gtrace" -- "$prog" "$n" 1 256 "$@")
  ns[$label]+="$(echo "$out" | awk '$1 == "ns_per_launch" {print $2}') "
  best[$label]+="$(echo "$out" | awk '$1 == "best_batch_ns" {print $2}') "
}
for ((i = 1; i <= reps; i++)); do
  for b in "${builds[@]}"; do
    g=$build/bin/gputrace
    [ "$b" = after ] || g=$before/bin/gputrace
    run "$b clean" "$g" clean
    run "$b destroyed" "$g" destroyed-capture
  done
done
printf '%-34s %s\n' "launches per run, runs each way" "$n, $reps"
for b in "${builds[@]}"; do
  for s in clean destroyed; do
    printf '%-34s %s\n' "$b $s ns/launch (runs)" "${ns[$b $s]}"
    printf '%-34s %s\n' "$b $s fastest batch (runs)" "${best[$b $s]}"
  done
done
stat() { printf '%s\n' $2 | $1; } # fastest|median "numbers"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf '| %-6s | %-9s | %-13s | %-13s | %-14s | %-13s |\n' build setting \
  "mean: fastest" "mean: median" "batch: fastest" "batch: median"
printf '|%s|%s|%s|%s|%s|%s|\n' -------- ----------- --------------- --------------- \
  ---------------- ---------------
for b in "${builds[@]}"; do
  for s in clean destroyed; do
    printf '| %-6s | %-9s | %13.1f | %13.1f | %14.1f | %13.1f |\n' "$b" "$s" \
      "$(stat fastest "${ns[$b $s]}")" "$(stat median "${ns[$b $s]}")" \
      "$(stat fastest "${best[$b $s]}")" "$(stat median "${best[$b $s]}")"
  done
  printf '| %-6s | %-9s | %13s | %13s | %14s | %13s |\n' "$b" "ratio" \
    "$(ratio "$(stat fastest "${ns[$b destroyed]}")" "$(stat fastest "${ns[$b clean]}")")" \
    "$(ratio "$(stat median "${ns[$b destroyed]}")" "$(stat median "${ns[$b clean]}")")" \
    "$(ratio "$(stat fastest "${best[$b destroyed]}")" "$(stat fastest "${best[$b clean]}")")" \
    "$(ratio "$(stat median "${best[$b destroyed]}")" "$(stat median "${best[$b clean]}")")"
done
