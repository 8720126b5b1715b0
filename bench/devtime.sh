#!/usr/bin/env bash
# devtime.sh — what device timing (docs/devtime.md) adds per launch, in one
# run: bench/launch_loop (empty-kernel launches on the CPU stand-in runtime,
# timeline simulation off, so the runtime itself costs little and every
# event completes at once) untraced, then traced with GPUTRACE_GPU_TIMING=off,
# =events and =events with GPUTRACE_GPU_TIMING_SAMPLE=16, alternating, REPS
# times each. Prints the medians, the ns each mode adds per launch over
# tracing with timing off, how many launches got a DEVICE record, and how
# many DEVICE records are missing (dropped: the launch went untimed because
# the event pool ran dry, or the ring was full) and launch records dropped.
# `events` runs with a pool as large as the run (GPUTRACE_GPU_TIMING_EVENTS),
# so that every launch takes the timed path however far the resolver thread
# falls behind this launch rate (millions a second); `sample16` with the
# default pool.
# Usage: bench/devtime.sh [REPS=7] [LAUNCHES=1000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-7}
n=${2:-1000000}
build=${3:-build}
prog=$build/bench/launch_loop
. bench/lib.sh # median, built, scratch
built "$build" "$prog"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
modes=(off events sample16)
declare -A ns timed untimed ldrops
untraced=()
traced() { # mode -> ns per launch; records DEVICE and untimed counts
  local mode=$1 timing=events sample=1 events=65536
  [ "$mode" = off ] && timing=off
  [ "$mode" = sample16 ] && sample=16
  [ "$mode" = events ] && events=$(((n + 10000) * 2 < 4194304 ? (n + 10000) * 2 : 4194304))
  local out
  out=$(GPUTRACE_GPU_TIMING=$timing GPUTRACE_GPU_TIMING_SAMPLE=$sample \
    GPUTRACE_GPU_TIMING_EVENTS=$events \
    "$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- "$prog" "$n")
  ns[$mode]+="$(echo "$out" | awk '{print $2}') "
  local summary
  summary=$("$build/bin/gputrace" dump --summary "$tmp/t.gtrace")
  timed[$mode]+="$(echo "$summary" | awk '$1 == "device" {d = $2} END {print d + 0}') "
  untimed[$mode]+="$(echo "$summary" | sed -n 's/^dropped by kind:.*device \([0-9]*\).*/\1/p' |
    awk '{d = $1} END {print d + 0}') "
  ldrops[$mode]+="$(echo "$summary" | sed -n 's/^dropped by kind:.*launch \([0-9]*\).*/\1/p' |
    awk '{d = $1} END {print d + 0}') "
}
for ((i = 1; i <= reps; i++)); do
  untraced+=("$("$prog" "$n" | awk '{print $2}')")
  for m in "${modes[@]}"; do traced "$m"; done
done
mu=$(printf '%s\n' "${untraced[@]}" | median)
printf '%-34s %s\n' "launches per run" "$n"
printf '%-34s %s\n' "runs (each way)" "$reps"
printf '%-34s %s\n' "untraced ns/launch (runs)" "${untraced[*]}"
for m in "${modes[@]}"; do
  printf '%-34s %s\n' "$m: ns/launch (runs)" "${ns[$m]}"
  printf '%-34s %s\n' "$m: DEVICE records (runs)" "${timed[$m]}"
  printf '%-34s %s\n' "$m: DEVICE dropped (runs)" "${untimed[$m]}"
  printf '%-34s %s\n' "$m: launch records dropped (runs)" "${ldrops[$m]}"
done
moff=$(echo "${ns[off]}" | tr ' ' '\n' | grep . | median)
printf '| %-36s | %12s |\n' "metric (medians)" "ns/launch"
printf '|%s|%s|\n' "--------------------------------------" "--------------"
printf '| %-36s | %12.1f |\n' "untraced" "$mu"
printf '| %-36s | %12.1f |\n' "traced, GPUTRACE_GPU_TIMING=off" "$moff"
for m in events sample16; do
  med=$(echo "${ns[$m]}" | tr ' ' '\n' | grep . | median)
  label="traced, events (every launch)"
  [ "$m" = sample16 ] && label="traced, events, 1 launch in 16"
  printf '| %-36s | %12.1f |\n' "$label" "$med"
  printf '| %-36s | %12.1f |\n' "  added over timing off" "$(awk -v a="$med" -v b="$moff" 'BEGIN {print a - b}')"
done
