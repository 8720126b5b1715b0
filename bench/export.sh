#!/usr/bin/env bash
# export.sh — throughput, peak memory and output size of `gputrace export`
# (SQLite, then CSV) on a generated trace of RECORDS records with device
# times (bench/gen_trace.c --device, 4 threads): records/s, seconds, peak
# RSS (/usr/bin/time -v), output size; RUNS runs of each format, the
# fastest and the median given; then one more run of each, untimed, for
# its peak anonymous memory (RssAnon read every 20 ms): peak RSS also
# counts the database pages SQLite maps to build the indexes (page cache
# the file has anyway, not the export's own memory).
# With BASE (another build directory, e.g. one of the commit before), each
# run of BUILD alternates with one of BASE's on the same trace, so that
# both see the same load (the other's row is marked "base").
# Usage: bench/export.sh [RECORDS=20000000] [BUILD=build] [FORMATS="sqlite csv"]
#                        [RUNS=1] [BASE=]
# Figures go in docs/PERFORMANCE.md (gputrace export), with this command
# and the load average (printed at the start and at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000000}; build=${2:-build}; formats=${3:-sqlite csv}; runs=${4:-1}; base=${5:-}
gen=$build/bin/gputrace-gen-trace
. bench/lib.sh # built, need_time, scratch
built "$build" "$build/bin/gputrace" "$gen"
[ -z "$base" ] || built "$base" "$base/bin/gputrace"
need_time
scratch
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$gen" "$tmp/t.gtrace" "$n" --threads 4 --device
printf 'trace: %d records, %.1f MB\n' "$n" "$(du -k "$tmp/t.gtrace" | awk '{print $1 / 1000}')"
printf '| %-12s | %3s | %8s | %10s | %9s | %10s | %12s |\n|%s|%s|%s|%s|%s|%s|%s|\n' \
  format run seconds "M rec/s" "RSS MiB" "output MB" rows "--------------" "-----" \
  "----------" "------------" "-----------" "------------" "--------------"
: >"$tmp/secs"
one() { # one() LABEL BUILD FORMAT RUN
  local out=$tmp/t.$3
  /usr/bin/time -v -o "$tmp/time" "$2/bin/gputrace" export --format "$3" -o "$out" \
    "$tmp/t.gtrace" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  local secs rss rows mb
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
           for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$tmp/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2 / 1024}' "$tmp/time")
  rows=$(sed -n 's/.*MB, \([0-9]*\) rows.*/\1/p' "$tmp/err")
  mb=$(du -sk "$out" | awk '{print $1 / 1000}')
  printf '| %-12s | %3d | %8.2f | %10.2f | %9.1f | %10.1f | %12s |\n' "$1" "$4" "$secs" \
    "$(awk -v n="$n" -v s="$secs" 'BEGIN {print n / s / 1e6}')" "$rss" "$mb" "$rows"
  echo "$1 $secs" >>"$tmp/secs"
  rm -rf "$out"
}
anon() { # anon LABEL BUILD FORMAT: the untimed run's peak RssAnon
  local out=$tmp/t.$3 pid kb peak=0 k v state=
  "$2/bin/gputrace" export --format "$3" -o "$out" "$tmp/t.gtrace" 2>"$tmp/err" &
  pid=$!
  while [ -r "/proc/$pid/status" ] && [ "${state:-}" != Z ]; do
    while read -r k v _; do
      [ "$k" != State: ] || state=$v
      [ "$k" != RssAnon: ] || kb=$v
    done <"/proc/$pid/status" 2>/dev/null || true
    [ -z "${kb:-}" ] || [ "$kb" -le "$peak" ] || peak=$kb
    sleep 0.02
  done
  wait "$pid" || { cat "$tmp/err" >&2; exit 1; }
  printf '%-12s peak anonymous memory %.1f MiB\n' "$1" "$(awk -v k="$peak" 'BEGIN {print k / 1024}')"
  rm -rf "$out"
}
for fmt in $formats; do
  for r in $(seq 1 "$runs"); do
    [ -z "$base" ] || one "$fmt base" "$base" "$fmt" "$r"
    one "$fmt" "$build" "$fmt" "$r"
  done
done
for fmt in $formats; do
  [ -z "$base" ] || anon "$fmt base" "$base" "$fmt" >>"$tmp/anon"
  anon "$fmt" "$build" "$fmt" >>"$tmp/anon"
done
echo
awk -v n="$n" '{k = $1 (NF > 2 ? " " $2 : ""); s[k] = s[k] " " $NF}
  END {for (k in s) {m = split(substr(s[k], 2), v, " ");
         for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) {t = v[i]; v[i] = v[j]; v[j] = t}
         med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
         printf "%-12s fastest %.2f s (%.2f M rec/s), median %.2f s (%.2f M rec/s), %d runs\n",
           k, v[1], n / v[1] / 1e6, med, n / med / 1e6, m}}' "$tmp/secs" | sort
cat "$tmp/anon"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
