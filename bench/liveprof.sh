#!/usr/bin/env bash
# liveprof.sh — what live pprof profiles (record --pprof-dir) cost the
# collector: the same workloads recorded with and without them, alternating,
# REPS runs each, medians. Workloads on the stand-in (simulation off): a
# launch storm (bench/launch_loop, LAUNCHES empty launches from one thread)
# and an allocation loop with stacks (bench/alloc_loop, 200,000 malloc/free
# pairs 30 frames deep). Prints, per workload and setting, the collector's
# CPU seconds (its own summary line), ns per collector record, the program's
# ns per call, dropped records and the profiles written.
# Usage: bench/liveprof.sh [REPS=5] [LAUNCHES=1000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-1000000}; build=${3:-build}
gputrace=$build/bin/gputrace
. bench/lib.sh # median, built, scratch, collector_cpu, summary_drops
built "$build" "$gputrace" "$build/bench/launch_loop" "$build/bench/alloc_loop"
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE GPUTRACE_PPROF_DIR
scratch

declare -A cpu per_rec prog_ns drops files
run() { # key pprof(0|1) cmd...: one recorded run
  local key=$1 live=$2 opts=() out
  shift 2
  rm -rf "$tmp/p" "$tmp/t.gtrace"
  [ "$live" = 1 ] && mkdir "$tmp/p" && opts=(--pprof-dir "$tmp/p" --pprof-every 1s)
  out=$("$gputrace" record --force -o "$tmp/t.gtrace" "${opts[@]}" -- "$@" 2>&1)
  local c r
  c=$(collector_cpu "$out")
  r=$(sed -n 's/^gputrace: \([0-9]*\) records.*/\1/p' <<<"$out")
  cpu[$key]+="$c "
  per_rec[$key]+="$(awk -v c="$c" -v r="$r" 'BEGIN {print c * 1e9 / r}') "
  prog_ns[$key]+="$(awk '$1 ~ /^ns_per_/ {print $2}' <<<"$out") "
  drops[$key]+="$(summary_drops "$("$gputrace" dump --summary "$tmp/t.gtrace")") "
  files[$key]+="$(ls "$tmp/p" 2>/dev/null | grep -c '\.pb\.gz$' || true) "
}
for ((i = 1; i <= reps; i++)); do
  for live in 0 1; do
    run "launch$live" $live "$build/bench/launch_loop" "$n"
    run "alloc$live" $live "$build/bench/alloc_loop" 200000 30
  done
done
for k in launch0 launch1 alloc0 alloc1; do
  printf '%-10s cpu(s) %s| ns/rec %s| prog ns %s| drops %s| profiles %s\n' "$k" \
    "${cpu[$k]}" "${per_rec[$k]}" "${prog_ns[$k]}" "${drops[$k]}" "${files[$k]}"
done
med() { printf '%s\n' $1 | median; }
printf '| %-44s | %9s | %9s | %9s | %6s | %8s |\n' "workload, setting (median of $reps)" \
  "coll. s" "ns/rec" "prog ns" "drops" "profiles"
printf '|%s|%s|%s|%s|%s|%s|\n' "----------------------------------------------" \
  "-----------" "-----------" "-----------" "--------" "----------"
for w in launch alloc; do
  for live in 0 1; do
    k=$w$live
    label="$w storm"
    [ $w = alloc ] && label="alloc loop (stacks)"
    [ $live = 1 ] && label="$label, --pprof-every 1s" || label="$label, no live profiles"
    printf '| %-44s | %9.3f | %9.1f | %9.1f | %6s | %8s |\n' "$label" "$(med "${cpu[$k]}")" \
      "$(med "${per_rec[$k]}")" "$(med "${prog_ns[$k]}")" \
      "$(printf '%s\n' ${drops[$k]} | sort -g | tail -1)" "$(med "${files[$k]}")"
  done
done
