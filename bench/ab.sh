#!/usr/bin/env bash
# ab.sh — two builds' launch hook side by side: bench/launch_loop and the
# stand-in runtime of build B (one program, one runtime, so only the shim
# and its collector differ) recorded REPS times by build A's gputrace and
# by build B's, alternating run by run (and which goes first), an untraced
# run before each, under one setting. Prints each run's ns per launch and,
# per build, the ns added over the untraced runs' median: fastest and
# median run. For a change to the hot path measured against the commit
# before it (build A from a worktree: git worktree add /tmp/a REV &&
# cmake -S /tmp/a -B /tmp/a/build && cmake --build /tmp/a/build).
# AB_RUN=BUILD takes the program and stand-in from BUILD instead of B (for a
# B that is only a copy of a build's bin/ and lib/).
# Usage: bench/ab.sh BUILD_A BUILD_B [REPS=15] [LAUNCHES=1000000] [SETTING=hook]
# SETTING: hook (device timing off), default, nostacks (GPUTRACE_STACKS=none).
# BENCH_PROG=B/bench/driver_loop measures driver launches instead (as run.sh).
# AB_PIN=1 runs the program on CPU 0 and record (so its collector) on CPU 1:
# unpinned, a run lands now and then with both on one CPU (+30 ns a launch
# here), and those runs move the medians by more than the 1 ns looked for.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/ab.sh BUILD_A BUILD_B [REPS] [LAUNCHES] [SETTING]" >&2; exit 2; }
a=$1 b=$2 reps=${3:-15} n=${4:-1000000} setting=${5:-hook}
run=${AB_RUN:-$b}
prog=${BENCH_PROG:-$run/bench/launch_loop}
. bench/lib.sh # median, fastest, built, scratch, summary_drops
built "$a" "$a/bin/gputrace"
built "$b" "$b/bin/gputrace"
built "$run" "$prog"
case $setting in
hook) env=(GPUTRACE_GPU_TIMING=off) ;;
default) env=(GPUTRACE_QUIET=1) ;;
nostacks) env=(GPUTRACE_STACKS=none) ;;
*) echo "bench: unknown setting '$setting' (hook, default, nostacks)" >&2; exit 2 ;;
esac
on0=() on1=()
[ "${AB_PIN:-0}" = 1 ] && on0=(taskset -c 0) on1=(taskset -c 1)
export LD_LIBRARY_PATH=$PWD/$run/standin/13 GPUTRACE_STANDIN_TIMELINE=0
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE
scratch

declare -A ns
dropped=0
traced() { # BUILD: ns per launch of one recorded run; its drops added up
  local out d
  out=$("${on1[@]}" "$1/bin/gputrace" record -q --force -o "$tmp/t.gtrace" -- \
    env "${env[@]}" "${on0[@]}" "$prog" "$n")
  d=$(summary_drops "$("$1/bin/gputrace" dump --summary "$tmp/t.gtrace")")
  dropped=$((dropped + d))
  echo "$out" | awk '{print $2}'
}
for ((i = 1; i <= reps; i++)); do # A first in odd rounds, B in even ones
  for s in $( ((i % 2)) && echo a b || echo b a); do
    ns[untraced]+="$("${on0[@]}" "$prog" "$n" | awk '{print $2}') "
    ns[$s]+="$(traced "$([ $s = a ] && echo "$a" || echo "$b")") "
  done
done
mu=$(printf '%s\n' ${ns[untraced]} | median)
printf '%-24s %s\n' "untraced (runs)" "${ns[untraced]}" "A $a (runs)" "${ns[a]}" "B $b (runs)" "${ns[b]}"
printf '| %-30s | %14s | %13s |\n' "$setting, $n launches, $reps runs" "added, fastest" "added, median"
printf '|%s|%s|%s|\n' "--------------------------------" "----------------" "---------------"
for s in a b; do
  f=$(printf '%s\n' ${ns[$s]} | fastest)
  m=$(printf '%s\n' ${ns[$s]} | median)
  printf '| %-30s | %14.1f | %13.1f |\n' "${s^^}: $([ $s = a ] && echo "$a" || echo "$b")" \
    "$(awk -v x="$f" -v u="$mu" 'BEGIN {print x - u}')" "$(awk -v x="$m" -v u="$mu" 'BEGIN {print x - u}')"
done
printf 'untraced median %s ns; records dropped in all traced runs: %s; pinned: %s; load average: %s\n' \
  "$mu" "$dropped" "${AB_PIN:-0}" "$(cut -d' ' -f1-3 /proc/loadavg)"
