#!/usr/bin/env bash
# report.sh — throughput and peak memory of `gputrace report` on large traces.
# Writes a synthetic inference-server trace of EVENTS records with
# gputrace-gen-trace (once per size, kept in the temp dir of the run), then
# runs `gputrace report --json` REPS times on it — and on the same trace with
# DEVICE records (--device) — and prints the medians: seconds, events/s, peak
# RSS. For scale it also times `gputrace dump --summary` (the session alone:
# decompression threads, record loop and layers, no analysis).
# Usage: bench/report.sh [REPS=5] [EVENTS=10000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
n=${2:-10000000}
build=${3:-build}
gt=$build/bin/gputrace
gen=$build/bin/gputrace-gen-trace
. bench/lib.sh # median, built, need_time, scratch
built "$build" "$gt" "$gen"
need_time
scratch

# run LABEL CMD...: REPS runs; prints "label median_s events/s median_rss_mib runs"
run() {
  local label=$1 secs=() rss=()
  shift
  for ((i = 1; i <= reps; i++)); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null
    read -r s m <"$tmp/time"
    secs+=("$s")
    rss+=("$m")
  done
  local ms mr
  ms=$(printf '%s\n' "${secs[@]}" | median)
  mr=$(printf '%s\n' "${rss[@]}" | median)
  printf '| %-34s | %8.2f | %10.1f | %8.0f | %s\n' "$label" "$ms" \
    "$(awk -v n="$n" -v s="$ms" 'BEGIN {print n / s / 1e6}')" "$(awk -v k="$mr" 'BEGIN {print k / 1024}')" \
    "${secs[*]}"
}

"$gen" "$tmp/cpu.gtrace" "$n" --seed 1
"$gen" "$tmp/dev.gtrace" "$n" --seed 1 --device
printf 'events per trace: %s; runs each: %s; trace sizes: %s, %s bytes\n' "$n" "$reps" \
  "$(stat -c %s "$tmp/cpu.gtrace")" "$(stat -c %s "$tmp/dev.gtrace")"
printf '| %-34s | %8s | %10s | %8s | %s\n' "command (median of runs)" "seconds" "M events/s" \
  "RSS MiB" "runs (s)"
run "dump --summary (session alone)" "$gt" dump --summary "$tmp/cpu.gtrace"
run "report --json" "$gt" report --json "$tmp/cpu.gtrace"
run "report --json, DEVICE records" "$gt" report --json "$tmp/dev.gtrace"
run "report (text)" "$gt" report "$tmp/cpu.gtrace"
