#!/usr/bin/env bash
# pystacks.sh — cost of a stack capture with Python frames per allocation/free:
# bench/py_alloc_loop.py's cudaMalloc/cudaFree pairs through ctypes from a
# DEPTH-deep Python call chain, GIL released (CDLL: frames read by
# preload/pyframes.c) and held (PyDLL: frames from the C API), untraced and
# traced with GPUTRACE_STACKS=none and =alloc, alternating, REPS times (stand-in,
# timeline off); prints medians and the capture's cost per call.
# Usage: bench/pystacks.sh [REPS=5] [PAIRS=20000] [DEPTH=20] [BUILD=build] [PYTHON=python3]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-20000}; depth=${3:-20}; build=${4:-build}; py=${5:-python3}
[ -x "$build/bin/gputrace" ] || { echo "bench: build first (cmake --build $build)" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. bench/lib.sh # median
loop() { "$py" bench/py_alloc_loop.py "$n" "$depth" "$1" | awk '{print $2}'; }
traced() { GPUTRACE_STACKS=$2 "$build/bin/gputrace" record -q -o "$tmp/s.gtrace" -- \
  "$py" bench/py_alloc_loop.py "$n" "$depth" "$1" | awk '{print $2}'; }
printf '%s, %s pairs, %s Python frames deep\n' "$("$py" -V 2>&1)" "$n" "$depth"
printf '| %-8s | %10s | %14s | %15s | %13s |\n|%s|%s|%s|%s|%s|\n' "GIL" "untraced" \
  "stacks=none" "stacks=alloc" "capture" "----------" "------------" "----------------" \
  "-----------------" "---------------"
for gil in released held; do
  plain=() none=() alloc=()
  for ((i = 1; i <= reps; i++)); do
    plain+=("$(loop $gil)"); none+=("$(traced $gil none)"); alloc+=("$(traced $gil alloc)")
  done
  mp=$(printf '%s\n' "${plain[@]}" | median); mn=$(printf '%s\n' "${none[@]}" | median)
  ma=$(printf '%s\n' "${alloc[@]}" | median)
  printf '| %-8s | %10.1f | %14.1f | %15.1f | %13.1f |\n' "$gil" "$mp" "$mn" "$ma" \
    "$(awk -v a="$ma" -v b="$mn" 'BEGIN {print a - b}')"
done
