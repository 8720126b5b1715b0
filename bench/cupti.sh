#!/usr/bin/env bash
# cupti.sh — the default mode's candidates side by side (docs/devtime.md,
# docs/PERFORMANCE.md "CUPTI against events"): bench/launch_loop's
# empty-kernel launches on the stand-in runtime WITH its timeline (the
# stand-in libcupti needs one), each launch spending LAUNCH_NS on the host
# as on an H200 (GPUTRACE_STANDIN_LAUNCH_HOST_NS, default 4000), synchronized
# every 64 launches (the queue never fills); untraced, then traced with
# GPUTRACE_GPU_TIMING=off, events and cupti, each with default (adaptive)
# sampling and with every launch timed (SAMPLE=1), alternating, REPS times.
# Prints the fastest and the median ns per launch of each mode, what each
# adds over timing off (fastest over fastest, median over median), the
# DEVICE records and DEVICE drops of the last run, and the load average.
# Usage: bench/cupti.sh [REPS=5] [LAUNCHES=100000] [LAUNCH_NS=4000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
n=${2:-100000}
launch_ns=${3:-4000}
build=${4:-build}
prog=$build/bench/launch_loop
. bench/lib.sh # median, built, scratch
built "$build" "$prog"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=1 \
  GPUTRACE_STANDIN_LAUNCH_HOST_NS=$launch_ns GPUTRACE_STANDIN_KERNEL_BASE_NS=2000
scratch
modes=(off events events_all cupti cupti_all)
declare -A ns timed drops
untraced=()
traced() {
  local mode=$1 timing=${1%_all} sample=auto
  [ "$mode" != "${mode%_all}" ] && sample=1
  local out
  out=$(GPUTRACE_GPU_TIMING=$timing GPUTRACE_GPU_TIMING_SAMPLE=$sample \
    GPUTRACE_GPU_TIMING_EVENTS=1048576 \
    "$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- "$prog" "$n" 1 64)
  ns[$mode]+="$(echo "$out" | awk '$1 == "ns_per_launch" {print $2}') "
  local summary
  summary=$("$build/bin/gputrace" dump --summary "$tmp/t.gtrace")
  timed[$mode]="$(echo "$summary" | awk '$1 == "device" {d = $2} END {print d + 0}')"
  drops[$mode]="$(echo "$summary" | sed -n 's/^dropped by kind:.*device \([0-9]*\).*/\1/p' |
    awk '{d = $1} END {print d + 0}')"
}
for ((i = 1; i <= reps; i++)); do
  untraced+=("$("$prog" "$n" 1 64 | awk '$1 == "ns_per_launch" {print $2}')")
  for m in "${modes[@]}"; do traced "$m"; done
done
printf '%-22s %18s %18s %9s %9s\n' mode "ns/launch f/med" "added f/med" DEVICE dropped
fu=$(printf '%s\n' "${untraced[@]}" | fastest)
mu=$(printf '%s\n' "${untraced[@]}" | median)
printf '%-22s %18s\n' untraced "$fu / $mu"
foff=$(printf '%s\n' ${ns[off]} | fastest)
moff=$(printf '%s\n' ${ns[off]} | median)
for m in "${modes[@]}"; do
  f=$(printf '%s\n' ${ns[$m]} | fastest)
  med=$(printf '%s\n' ${ns[$m]} | median)
  printf '%-22s %18s %18s %9s %9s\n' "$m" "$f / $med" \
    "$(printf '%.0f / %.0f' "$(echo "$f - $foff" | bc -l)" "$(echo "$med - $moff" | bc -l)")" \
    "${timed[$m]}" "${drops[$m]}"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
