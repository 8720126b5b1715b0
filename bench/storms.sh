#!/usr/bin/env bash
# storms.sh — does the collector keep up with the hook at default settings?
# Two storms, REPS runs each, on an idle machine and then beside a busy loop
# at nice 0 (a loaded 2-core machine: the program, the collector and the
# loop share two cores), alternating: PAIRS cudaMalloc/cudaFree pairs with
# GPUTRACE_STACKS=none (bench/alloc_loop, the densest record stream a
# program makes: one record per call, no unwinding) and LAUNCHES launches
# (bench/launch_loop, device timing at its default); each at the defaults
# (a full sub-ring waits for the collector) and with GPUTRACE_FULL_WAIT_US=0
# (it drops at once), alternating. Prints per run the records per second the
# program made, the records dropped (ring full) and the collector's CPU
# seconds, and the load average before and after.
# Usage: bench/storms.sh [REPS=3] [PAIRS=4000000] [LAUNCHES=1000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}; pairs=${2:-4000000}; launches=${3:-1000000}; build=${4:-build}
aprog=$build/bench/alloc_loop lprog=$build/bench/launch_loop gt=$build/bin/gputrace
. bench/lib.sh # built, scratch, ring_drops, collector_cpu
built "$build" "$aprog" "$lprog" "$gt"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
busy=""
stop_busy() { [ -z "$busy" ] || kill "$busy" 2>/dev/null || true; busy=""; }
trap 'stop_busy; rm -rf "$tmp"' EXIT

# One storm: "records/s dropped collector-CPU-s" from the program's own
# ns per call and record's closing lines.
storm() {
  local out ns calls
  out=$("$gt" record --force -o "$tmp/s.gtrace" -- "$@" 2>&1)
  ns=$(awk '/^ns_per_(call|launch)/ {print $2}' <<<"$out")
  calls=$(sed -n 's/^gputrace: \([0-9]*\) records,.*/\1/p' <<<"$out")
  printf '%.1fM %s %s\n' "$(awk -v ns="$ns" 'BEGIN {print 1e3 / ns}')" \
    "$(ring_drops "$out")" \
    "$(collector_cpu "$out")"
  [ -n "$calls" ] || { echo "storms: record said no closing line: $out" >&2; exit 1; }
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
row() { printf '%-5s %-9s %-34s %-10s %-9s %s\n' "$@"; }
row load full storm "records/s" dropped "collector CPU s"
for load in idle busy; do
  if [ "$load" = busy ]; then
    nice -n 0 sh -c 'while :; do :; done' &
    busy=$!
  fi
  for ((i = 1; i <= reps; i++)); do
    for wait in 50000 0; do
      full=$([ "$wait" = 0 ] && echo drop || echo wait)
      read -r rate drop cpu <<<"$(GPUTRACE_FULL_WAIT_US=$wait GPUTRACE_STACKS=none \
        storm "$aprog" "$pairs" 30)"
      row "$load" "$full" "alloc, stacks=none, $pairs pairs" "$rate" "$drop" "$cpu"
      read -r rate drop cpu <<<"$(GPUTRACE_FULL_WAIT_US=$wait storm "$lprog" "$launches")"
      row "$load" "$full" "launches, defaults, $launches" "$rate" "$drop" "$cpu"
    done
  done
  stop_busy
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
