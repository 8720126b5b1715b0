#!/usr/bin/env bash
# html.sh — time, peak memory and page size of `gputrace html`.
# Generates a trace of RECORDS records with gputrace-gen-trace --device
# (bench/gen_trace.c: an inference server's mix of launches, copies, syncs,
# allocations and NVTX ranges on 4 threads, a DEVICE record per launch, copy and
# memset), then writes its page REPS times. Prints each run's wall time and peak
# RSS (/usr/bin/time -v) and the page's size, then the medians.
# Usage: bench/html.sh [REPS=3] [RECORDS=20000000] [BUILD=build] [TRACE]
# (TRACE: an existing trace to use instead of generating one)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
n=${2:-20000000}
build=${3:-build}
gt=$build/bin/gputrace
gen=$build/bin/gputrace-gen-trace
. bench/lib.sh # median, built, need_time, scratch
built "$build" "$gt" "$gen"
need_time
scratch

trace=${4:-}
if [ -z "$trace" ]; then
  trace=$tmp/run.gtrace
  "$gen" "$trace" "$n" --device
fi
printf '%-4s %9s %9s %10s\n' run "wall s" "RSS MiB" "page KB"
for i in $(seq "$reps"); do
  /usr/bin/time -v "$gt" html "$trace" -o "$tmp/run.html" --force 2>"$tmp/time.txt" ||
    { cat "$tmp/time.txt" >&2; exit 1; }
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time.txt" |
    awk -F: '{print (NF == 3 ? $1 * 3600 + $2 * 60 + $3 : $1 * 60 + $2)}')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
  kb=$((($(stat -c %s "$tmp/run.html") + 999) / 1000))
  printf '%-4s %9.2f %9.1f %10d\n' "$i" "$wall" "$(echo "$rss / 1024" | bc -l)" "$kb"
  echo "$wall" >>"$tmp/walls"
  echo "$rss" >>"$tmp/rss"
done
printf 'median: %.2f s, %.1f MiB peak RSS, %d KB page (%s)\n' "$(median <"$tmp/walls")" \
  "$(echo "$(median <"$tmp/rss") / 1024" | bc -l)" "$kb" "$trace"
