#!/usr/bin/env bash
# chrome.sh — export throughput and peak memory of `gputrace chrome`.
# Generates two traces of RECORDS records with gputrace-gen-trace (bench/gen_trace.c:
# an inference server's mix of launches, copies, syncs, allocations and NVTX ranges
# on 4 threads; the second also with a DEVICE record per launch, copy and memset),
# then exports each REPS times to /dev/null (reading, model and formatting: the
# CPU cost), to a file (plus the page cache / disk) and to .json.gz. Prints each
# run's wall time and peak RSS (/usr/bin/time), then a table of medians.
# Usage: bench/chrome.sh [REPS=3] [RECORDS=10000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
n=${2:-10000000}
build=${3:-build}
gt=$build/bin/gputrace
gen=$build/bin/gputrace-gen-trace
. bench/lib.sh # median, built, need_time, scratch
built "$build" "$gt" "$gen"
need_time
scratch

"$gen" "$tmp/host.gtrace" "$n"
"$gen" "$tmp/device.gtrace" "$n" --device
printf '| %-22s | %9s | %9s | %8s | %10s | %10s | %8s | %9s |\n' case records events \
  "wall s" "records/s" "events/s" "RSS MB" "output MB"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------------------ ----------- ----------- \
  ---------- ------------ ------------ ---------- -----------
for trace in host device; do
  in=$tmp/$trace.gtrace
  # events written (from the export's metadata) and the JSON size, once
  "$gt" chrome "$in" -o "$tmp/out.json" --force --warn-mb 0
  events=$(tail -c 600 "$tmp/out.json" | sed -n 's/.*"events":\([0-9]*\).*/\1/p')
  json_mb=$(($(stat -c %s "$tmp/out.json") / 1000000))
  rm -f "$tmp/out.json"
  for mode in null file gzip; do
    case $mode in
      null) out=- ;;
      file) out=$tmp/out.json ;;
      gzip) out=$tmp/out.json.gz ;;
    esac
    walls=() rss=()
    for ((i = 1; i <= reps; i++)); do
      /usr/bin/time -f '%e %M' -o "$tmp/time" "$gt" chrome "$in" -o "$out" --force --warn-mb 0 >/dev/null
      read -r w m <"$tmp/time"
      walls+=("$w") rss+=("$m")
      echo "  $trace/$mode run $i: ${w} s, peak RSS ${m} KB" >&2
    done
    size=$json_mb
    [ "$mode" = gzip ] && size="$(($(stat -c %s "$out") / 1000000)) (gz)"
    rm -f "$tmp/out.json" "$tmp/out.json.gz"
    w=$(printf '%s\n' "${walls[@]}" | median)
    m=$(printf '%s\n' "${rss[@]}" | median)
    printf '| %-22s | %9s | %9s | %8.2f | %10.0f | %10.0f | %8.1f | %9s |\n' \
      "$trace -> $mode" "$n" "$events" "$w" "$(awk -v n="$n" -v w="$w" 'BEGIN {print n / w}')" \
      "$(awk -v n="$events" -v w="$w" 'BEGIN {print n / w}')" \
      "$(awk -v m="$m" 'BEGIN {print m / 1024}')" "$size"
  done
done
