#!/usr/bin/env bash
# instructions.sh — what tracing adds to a launch, in instructions: exact
# counts where bench/run.sh's nanoseconds move with the machine's noise.
# Runs bench/launch_loop (N launches after its 10,000 warm-up ones, on the
# CPU stand-in with its simulation off) under valgrind's callgrind, once
# untraced and once per setting, and prints the instructions per launch the
# setting adds: the inclusive counts of the kernel stub and of the
# __cudaPushCallConfiguration the <<<>>> calls first (the hooks and
# whatever they call, slow paths and sampled stacks included, and the
# runtime) over the launches, less the untraced run's.
# Settings: floor, floor_shared (bench/floor_shim.c), hook (device timing
# off), default.
# Usage: bench/instructions.sh [LAUNCHES=20000] [BUILD=build]
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}
build=${2:-build}
prog=$build/bench/launch_loop
command -v valgrind >/dev/null || { echo "bench: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
. bench/lib.sh # built, scratch
built "$build" "$prog"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE
scratch
launches=$((n + 10000))

# per_launch CALLGRIND_OUT: the instructions per launch of the kernel stub
# and of the __cudaPushCallConfiguration before it (both inclusive: the
# shim's push hook, which tail-calls the runtime's, or the runtime's own),
# since a <<<>>> calls the push from the launching line, outside the stub
per_launch() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" |
    awk -v l="$launches" '
      /__device_stub__Z12empty_kernelv/ && !stub {gsub(",", "", $1); stub = $1}
      /__cudaPushCallConfiguration/ && !push {gsub(",", "", $1); push = $1}
      END {print (stub + push) / l}'
}
cg() { # NAME [LD_PRELOAD]: an untraced run
  env ${2:+LD_PRELOAD="$2"} valgrind --tool=callgrind --callgrind-out-file="$tmp/$1.out" \
    "$prog" "$n" >/dev/null 2>"$tmp/$1.err"
}

cg untraced
cg floor "$PWD/$build/bench/libfloor_shim.so"
cg floor_shared "$PWD/$build/bench/libfloor_shared.so"
for s in hook default; do
  env=(GPUTRACE_QUIET=1)
  [ $s = hook ] && env+=(GPUTRACE_GPU_TIMING=off)
  "$build/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- \
    env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$tmp/$s.out" "$prog" "$n" \
    >/dev/null 2>"$tmp/$s.err"
done
base=$(per_launch "$tmp/untraced.out")
printf '| %-27s | %13s | %11s |\n' "setting ($launches launches)" "instr/launch" "added"
printf '|%s|%s|%s|\n' "-----------------------------" "---------------" "-------------"
for s in untraced floor floor_shared hook default; do
  v=$(per_launch "$tmp/$s.out")
  printf '| %-27s | %13.1f | %11.1f |\n' "$s" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN {print a - b}')"
done
