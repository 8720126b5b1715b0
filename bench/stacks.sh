#!/usr/bin/env bash
# stacks.sh — cost of a native stack capture per allocation/free: PAIRS
# cudaMalloc/cudaFree pairs from a DEPTH-deep call chain on the stand-in
# (timeline off), untraced and traced with GPUTRACE_STACKS=none, with stacks
# from cached unwind rules (GPUTRACE_UNWIND=cached, the default: each
# allocation's own stack, each free its call site's), the same with every
# free's own (GPUTRACE_STACKS=alloc+free), and from backtrace()
# (GPUTRACE_UNWIND=backtrace), alternating, REPS times; prints the runs,
# then the fastest (the code's cost) and the median (what a busy machine
# pays) per call, each capture's cost (traced less stacks=none) and what
# tracing adds (traced less untraced, the figure heaptrack is measured by).
# Usage: bench/stacks.sh [REPS=5] [PAIRS=200000] [DEPTH=30] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-200000}; depth=${3:-30}; build=${4:-build}
prog=$build/bench/alloc_loop
. bench/lib.sh # median, fastest, built, scratch
built "$build" "$prog"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
run() { GPUTRACE_STACKS=$1 GPUTRACE_UNWIND=$2 "$build/bin/gputrace" record -q --force \
  -o "$tmp/s.gtrace" -- "$prog" "$n" "$depth" | awk '{print $2}'; }
plain=() none=() cached=() frees=() bt=()
for ((i = 1; i <= reps; i++)); do
  plain+=("$("$prog" "$n" "$depth" | awk '{print $2}')")
  none+=("$(run none cached)")
  cached+=("$(run alloc cached)")
  frees+=("$(run alloc+free cached)")
  bt+=("$(run alloc backtrace)")
done
printf '%-36s %s\n' "pairs x depth" "$n x $depth" "untraced ns/call (runs)" "${plain[*]}" \
  "traced, no stacks (runs)" "${none[*]}" "traced, cached rules (runs)" "${cached[*]}" \
  "traced, alloc+free (runs)" "${frees[*]}" "traced, backtrace() (runs)" "${bt[*]}"
stat() { printf '%s\n' "$@" | $how; }
printf '| %-34s | %10s | %10s |\n|%s|%s|%s|\n' "ns per call" "fastest" "median" \
  "------------------------------------" "------------" "------------"
for how in fastest median; do
  eval "p_$how=\$(stat \"\${plain[@]}\") n_$how=\$(stat \"\${none[@]}\")"
  eval "c_$how=\$(stat \"\${cached[@]}\") b_$how=\$(stat \"\${bt[@]}\")"
  eval "f_$how=\$(stat \"\${frees[@]}\")"
done
row() { printf '| %-34s | %10.1f | %10.1f |\n' "$1" "$2" "$3"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN {print a - b}'; }
row "untraced" "$p_fastest" "$p_median"
row "traced, GPUTRACE_STACKS=none" "$n_fastest" "$n_median"
row "traced, stacks, cached rules" "$c_fastest" "$c_median"
row "traced, alloc+free, cached rules" "$f_fastest" "$f_median"
row "traced, stacks, backtrace()" "$b_fastest" "$b_median"
row "capture, cached rules" "$(sub "$c_fastest" "$n_fastest")" "$(sub "$c_median" "$n_median")"
row "capture, alloc+free" "$(sub "$f_fastest" "$n_fastest")" "$(sub "$f_median" "$n_median")"
row "added, default (traced - untraced)" "$(sub "$c_fastest" "$p_fastest")" "$(sub "$c_median" "$p_median")"
row "added, alloc+free" "$(sub "$f_fastest" "$p_fastest")" "$(sub "$f_median" "$p_median")"
row "capture, backtrace()" "$(sub "$b_fastest" "$n_fastest")" "$(sub "$b_median" "$n_median")"
