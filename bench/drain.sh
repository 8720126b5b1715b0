#!/usr/bin/env bash
# drain.sh — the collector's per-record costs apart from any traced program
# (bench/drain_bench.c): reading and converting compact launches out of a
# 32 MiB ring, the same with a producer thread writing at once, and zstd on
# the converted records as the trace writer does it, converting a record's
# TSC ticks to ns (collector/tsc.c), and the live metrics' work per launch
# (collector/prom_work.c). REPS runs, medians.
# Usage: bench/drain.sh [REPS=5] [RECORDS=20000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; n=${2:-20000000}; build=${3:-build}
prog=$build/bin/gputrace-drain-bench
. bench/lib.sh # median, built
built "$build" "$prog"
read_rate=() live_rate=() zstd_rate=() tsc_rate=() prom_rate=()
for ((i = 1; i <= reps; i++)); do
  out=$("$prog" "$n")
  read_rate+=("$(awk '$1 == "read" {print $2}' <<<"$out")")
  live_rate+=("$(awk '$1 == "live" {print $2}' <<<"$out")")
  zstd_rate+=("$(awk '$1 == "zstd" {print $2}' <<<"$out")")
  tsc_rate+=("$(awk '$1 == "tsc" {print $2}' <<<"$out")")
  prom_rate+=("$(awk '$1 == "prom" {print $2}' <<<"$out")")
done
printf '| %-52s | %12s |\n|%s|%s|\n' "M records/s (median of $reps, $n records)" "M/s" \
  "------------------------------------------------------" "--------------"
printf '| %-52s | %12.1f |\n' "ring read + conversion to struct gt_record" \
  "$(printf '%s\n' "${read_rate[@]}" | median)"
printf '| %-52s | %12.1f |\n' "the same, a producer writing at once" \
  "$(printf '%s\n' "${live_rate[@]}" | median)"
printf '| %-52s | %12.1f |\n' "zstd (the writer's level) of the converted records" \
  "$(printf '%s\n' "${zstd_rate[@]}" | median)"
printf '| %-52s | %12.1f |\n' "TSC ticks to ns (start and duration) along the line" \
  "$(printf '%s\n' "${tsc_rate[@]}" | median)"
printf '| %-52s | %12.1f |\n' "live metrics (4 launches, then a DEVICE at 1 in 4)" \
  "$(printf '%s\n' "${prom_rate[@]}" | median)"
