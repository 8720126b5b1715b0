#!/usr/bin/env bash
# rolling.sh — always-on recording of a server with a big graph cache: the
# test program tests/cuda/graph_cache (100 graphs of 5,000 nodes captured at
# start-up and kept, then 20,000 steady launches over ~8 s, graph 0 launched
# every 1,000) recorded with --max-size 4MiB (1 MiB files, the default roll
# size), REPS runs per build, builds alternating. Prints per build the files
# the run wrote (kept + deleted), the bytes written and per record, the
# collector's CPU seconds (its summary line), and the steady launches the
# kept set holds (named: `report --json`), medians.
# Usage: bench/rolling.sh [REPS=3] [BUILD=build] [OTHER_BUILD]
#   OTHER_BUILD: a second build to compare (e.g. one of main), run with the
#   same program (BUILD's).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}; build=${2:-build}; other=${3:-}
prog=$build/tests/cuda/graph_cache
. bench/lib.sh # median, built, scratch, collector_cpu
built "$build" "$build/bin/gputrace" "$prog"
[ -z "$other" ] || built "$other" "$other/bin/gputrace"
export LD_LIBRARY_PATH=$PWD/$build/standin/13
unset GPUTRACE_GPU_TIMING GPUTRACE_GPU_TIMING_SAMPLE
scratch

declare -A files bytes per_rec cpu kept
run() { # build: one recorded run
  local b=$1 out
  rm -f "$tmp"/c.*.gtrace
  out=$("$b/bin/gputrace" record -o "$tmp/c.gtrace" --max-size 4MiB -- \
    "$prog" 100 5000 20000 40000 2>&1)
  local deleted written
  deleted=$(sed -n 's/.* \([0-9]*\) oldest files of .*/\1/p' <<<"$out")
  written=$(sed -n 's/^gputrace: [0-9]* records, \([0-9]*\) bytes.*/\1/p' <<<"$out")
  files[$b]+="$(($(ls "$tmp"/c.*.gtrace | wc -l) + ${deleted:-0})) "
  bytes[$b]+="$written "
  per_rec[$b]+="$(sed -n 's/.*bytes (\([0-9.]*\) bytes\/record).*/\1/p' <<<"$out") "
  cpu[$b]+="$(collector_cpu "$out") "
  kept[$b]+="$("$b/bin/gputrace" report --json "$tmp/c.gtrace" 2>/dev/null | python3 -c '
import json, sys
print(sum(k["launches"] for k in json.load(sys.stdin)["kernels"] if k["kernel"] == "tick(int)"))') "
}
for ((i = 1; i <= reps; i++)); do
  for b in $build $other; do
    run "$b"
  done
done
med() { printf '%s\n' $1 | median; }
printf '| %-24s | %6s | %12s | %9s | %8s | %13s |\n' "build (median of $reps)" files \
  "bytes" "B/record" "coll. s" "steady kept"
printf '|%s|%s|%s|%s|%s|%s|\n' "--------------------------" "--------" "--------------" \
  "-----------" "----------" "---------------"
for b in $build $other; do
  printf '| %-24s | %6s | %12s | %9s | %8s | %7s/20000 |\n' "$b" "$(med "${files[$b]}")" \
    "$(med "${bytes[$b]}")" "$(med "${per_rec[$b]}")" "$(med "${cpu[$b]}")" \
    "$(med "${kept[$b]}")"
  echo "  runs: files ${files[$b]}| bytes ${bytes[$b]}| cpu ${cpu[$b]}| kept ${kept[$b]}" >&2
done
