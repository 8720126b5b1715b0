#!/usr/bin/env bash
# flight.sh — what the flight recorder (record --flight-recorder) costs the
# collector against writing the trace to a file: a launch storm
# (bench/launch_loop, LAUNCHES empty launches on the stand-in, simulation
# off) and an allocation storm (tests/cuda/flight LAUNCHES/5: per round an
# allocation, three launches, a free) recorded both ways, alternating, REPS
# runs each, medians of the ring drops and of the
# collector's CPU (its closing line) and peak RSS (GNU time around it; the
# window's memfd pages are not in it: the flight recorder's closing line
# says how much it kept). Then one snapshot of a full window: tests/cuda/
# flight (a paused loop of launches) under --flight-recorder WINDOW, the
# time `gputrace snapshot` takes, whole and cut by --last halfway through
# the run (two passes over the window: flight.c), and what it wrote.
# Usage: bench/flight.sh [REPS=5] [LAUNCHES=1000000] [BUILD=build] [WINDOW=64MiB]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-1000000}; build=${3:-build}; window=${4:-64MiB}
gputrace=$build/bin/gputrace
. bench/lib.sh # median, built, need_time, scratch, ring_drops, collector_cpu
built "$build" "$gputrace" "$build/bench/launch_loop" "$build/tests/cuda/flight"
need_time
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE GPUTRACE_PPROF_DIR GPUTRACE_FLIGHT_RECORDER
scratch
printf '#!/bin/sh\nexec /usr/bin/time -f "collector_maxrss_kb %%M" %s "$@"\n' \
  "$PWD/$build/bin/gputrace-collector" >"$tmp/collector"
chmod +x "$tmp/collector"

declare -A cpu rss kept drops
one() { # key workload record-options...: one recorded storm
  local key=$1 work=$2 out prog=("$build/bench/launch_loop" "$n")
  shift 2
  [ "$work" = alloc ] && prog=("$build/tests/cuda/flight" $((n / 5)))
  rm -f "$tmp/t.gtrace"
  out=$(GPUTRACE_COLLECTOR=$tmp/collector "$gputrace" record --force -o "$tmp/t.gtrace" "$@" \
    -- "${prog[@]}" 2>&1 <<<"" || true)
  drops[$key]+="$(ring_drops "$out") "
  cpu[$key]+="$(collector_cpu "$out") "
  rss[$key]+="$(awk '$1 == "collector_maxrss_kb" {print $2 / 1024}' <<<"$out") "
  kept[$key]+="$(sed -n 's/.* \([0-9.]*\) MiB kept in memory.*/\1/p' <<<"$out") "
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= reps; i++)); do
  for work in launch alloc; do
    one "file $work" $work
    one "flight $work" $work --flight-recorder "$window"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { printf '%s\n' $1 | median; }
printf '| %-46s | %13s | %13s | %14s | %13s |\n' "program, output (median of $reps)" \
  "collector CPU" "collector RSS" "kept in memory" "ring drops"
printf '|%s|%s|%s|%s|%s|\n' "------------------------------------------------" \
  "--------------:" "--------------:" "---------------:" "--------------:"
for work in launch alloc; do
  for mode in file flight; do
    k="$mode $work"
    label="launch_loop $n"
    [ $work = alloc ] && label="flight $((n / 5)) (allocs too)"
    printf '| %-46s | %11s s | %9s MiB | %14s | %13s |\n' \
      "$label, $([ $mode = file ] && echo file || echo "--flight-recorder $window")" \
      "$(med "${cpu[$k]}")" "$(med "${rss[$k]}")" \
      "$([ $mode = file ] && echo - || echo "$(med "${kept[$k]}") MiB")" "$(med "${drops[$k]}")"
  done
done

# Snapshots of a full window: a paused program, its recorder asked REPS
# times, whole and cut (--last) halfway through the program's run, alternating.
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
rounds=$((n * 2))
exec 3> >(cat >/dev/null)
began=$(mono)
coproc FLIGHT { "$gputrace" record --flight-recorder "$window" -o "$tmp/f.gtrace" \
  -- "$build/tests/cuda/flight" "$rounds" 2>"$tmp/rec.err"; }
while read -r line <&"${FLIGHT[0]}"; do [[ $line == "flight: paused" ]] && break; done
paused=$(mono)
sleep 1
pid=$(sed -n 's/.*flight recorder in collector \([0-9]*\).*/\1/p' "$tmp/rec.err")
declare -A took said
for ((i = 1; i <= reps; i++)); do
  for mode in whole cut; do
    args=()
    [ $mode = cut ] && args=(--last "$(($(mono) - (began + paused) / 2))ns")
    start=$(date +%s.%N)
    "$gputrace" snapshot --force "${args[@]}" -o "$tmp/snap.gtrace" "$pid" 2>"$tmp/snap.err"
    end=$(date +%s.%N)
    took[$mode]+="$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}') "
    said[$mode]=$(sed 's/^gputrace snapshot: //' "$tmp/snap.err")
  done
done
echo >&"${FLIGHT[1]}"
wait "$FLIGHT_PID" || true
for mode in whole cut; do
  echo "snapshot ($mode) of a paused tests/cuda/flight $rounds under --flight-recorder" \
    "$window: median $(med "${took[$mode]}") s of ${took[$mode]}; last: ${said[$mode]}"
done
