#!/usr/bin/env bash
# peers.sh — gputrace beside a peer that runs here: `ltrace -e
# __cudaLaunchKernel` on the same launch loop (stand-in runtime, timeline
# off), untraced vs gputrace vs ltrace in one run, REPS times each; prints
# medians of ns per launch. ltrace is fetched by apt if missing.
# Usage: bench/peers.sh [REPS=3] [LAUNCHES=20000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}; n=${2:-20000}; build=${3:-build}
prog=$build/bench/launch_loop
. bench/lib.sh # median, built, scratch
built "$build" "$prog"
if ! command -v ltrace >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq ltrace >/dev/null
fi
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
plain=() ours=() lt=()
for ((i = 1; i <= reps; i++)); do
  plain+=("$("$prog" "$n" | awk '{print $2}')")
  ours+=("$("$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- "$prog" "$n" | awk '{print $2}')")
  lt+=("$(ltrace -e __cudaLaunchKernel -o "$tmp/lt.txt" "$prog" "$n" | awk '{print $2}')")
done
printf '| %-34s | %14s |\n|%s|%s|\n' "ns per launch (median of $reps, $n launches)" "ns" \
  "------------------------------------" "----------------"
for row in "untraced:${plain[*]}" "gputrace record:${ours[*]}" "ltrace -e __cudaLaunchKernel:${lt[*]}"; do
  printf '| %-34s | %14.1f |\n' "${row%%:*}" "$(tr ' ' '\n' <<<"${row#*:}" | median)"
done
