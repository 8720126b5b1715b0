#!/usr/bin/env bash
# pystacks.sh — cost of a stack capture with Python frames per allocation/free:
# bench/py_alloc_loop.py's cudaMalloc/cudaFree pairs through ctypes from a
# DEPTH-deep Python call chain, GIL released (CDLL: frames read by
# preload/pyframes.c) and held (PyDLL: frames from the C API), untraced and
# traced with GPUTRACE_STACKS=none and =alloc (native frames from cached unwind
# rules, and from backtrace(): GPUTRACE_UNWIND=backtrace), alternating, REPS
# times (stand-in, timeline off); prints fastest and median ns per call and
# each capture's cost (traced less stacks=none).
# Usage: bench/pystacks.sh [REPS=5] [PAIRS=20000] [DEPTH=20] [BUILD=build] [PYTHON=python3]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-20000}; depth=${3:-20}; build=${4:-build}; py=${5:-python3}
. bench/lib.sh # median, fastest, built, scratch
built "$build" "$build/bin/gputrace"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
loop() { "$py" bench/py_alloc_loop.py "$n" "$depth" "$1" | awk '{print $2}'; }
traced() { GPUTRACE_STACKS=$2 GPUTRACE_UNWIND=$3 "$build/bin/gputrace" record -q -o \
  "$tmp/s.gtrace" --force -- "$py" bench/py_alloc_loop.py "$n" "$depth" "$1" | awk '{print $2}'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN {print a - b}'; }
printf '%s, %s pairs, %s Python frames deep\n' "$("$py" -V 2>&1)" "$n" "$depth"
printf '| %-8s | %-7s | %9s | %11s | %12s | %12s | %14s | %14s |\n' "GIL" "" "untraced" \
  "stacks=none" "cached rules" "backtrace()" "capture, cached" "capture, bt()"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' "----------" "---------" "-----------" "-------------" \
  "--------------" "--------------" "----------------" "----------------"
for gil in released held; do
  plain=() none=() cached=() bt=()
  for ((i = 1; i <= reps; i++)); do
    plain+=("$(loop $gil)"); none+=("$(traced $gil none cached)")
    cached+=("$(traced $gil alloc cached)"); bt+=("$(traced $gil alloc backtrace)")
  done
  for how in fastest median; do
    p=$(printf '%s\n' "${plain[@]}" | $how); nn=$(printf '%s\n' "${none[@]}" | $how)
    c=$(printf '%s\n' "${cached[@]}" | $how); b=$(printf '%s\n' "${bt[@]}" | $how)
    printf '| %-8s | %-7s | %9.1f | %11.1f | %12.1f | %12.1f | %15.1f | %14.1f |\n' "$gil" \
      "$how" "$p" "$nn" "$c" "$b" "$(sub "$c" "$nn")" "$(sub "$b" "$nn")"
  done
done
