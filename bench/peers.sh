#!/usr/bin/env bash
# peers.sh — gputrace beside the peers a user would choose instead, measured
# for real in one sitting, contenders alternated run by run (stand-in
# runtime, timeline off); prints every run, then the fastest (the code's
# cost) and the median (what a busy machine pays), and the load average
# before and after (these 2-core machines share their cores):
#   launches (bench/launch_loop LAUNCHES): untraced; the floor shim
#     (bench/floor_shim.c: two rdtsc and a 64-byte store); gputrace record
#     with device timing off (the hook and the ring) and at its defaults;
#     an LTTng-UST tracepoint of the floor's payload (bench/lttng_shim.c,
#     built here against Debian's liblttng-ust-dev) under a live session
#     (lttng-sessiond, the event enabled), with the events it discarded;
#   allocations (bench/alloc_loop PAIRS DEPTH: cudaMalloc/cudaFree pairs
#     DEPTH frames deep; the stand-in allocates with posix_memalign and frees
#     with free, which heaptrack hooks): untraced, gputrace record (default
#     stacks), heaptrack (Debian's), ns added per call (PAIRS 4 M by
#     default: heaptrack's cost per call falls with the run's length, from
#     ~1,000 ns at 200,000 pairs to ~290 at 4-5 M, its start-up amortized;
#     a short run flatters gputrace);
#   analyzers, on a trace of EVENTS allocation events from each tool (the
#     same loop, EVENTS / 2 pairs, made once): heaptrack_print (its default
#     report) and gputrace leaks (its default report), seconds, M events/s
#     and peak RSS;
#   bytes on disk per allocation event of each tool's trace: that loop's,
#     and its mixed workload's (alloc_loop PAIRS DEPTH mixed: four call
#     sites, seven sizes, eight blocks live), EVENTS events each.
# Debian's heaptrack, liblttng-ust-dev and lttng-tools are installed by apt
# when missing (as root, or with sudo).
# Usage: bench/peers.sh [REPS=5] [LAUNCHES=1000000] [PAIRS=4000000] [DEPTH=30]
#        [EVENTS=10000000] [BUILD=build]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}; launches=${2:-1000000}; pairs=${3:-4000000}; depth=${4:-30}
events=${5:-10000000}; build=${6:-build}
lprog=$build/bench/launch_loop aprog=$build/bench/alloc_loop gt=$build/bin/gputrace
floor=$PWD/$build/bench/libfloor_shim.so
. bench/lib.sh # median, fastest, built, need_time, scratch
built "$build" "$lprog" "$aprog" "$gt" "$floor"
need_time
missing=()
command -v heaptrack >/dev/null || missing+=(heaptrack)
command -v lttng >/dev/null || missing+=(lttng-tools)
[ -e /usr/include/lttng/tracepoint.h ] || missing+=(liblttng-ust-dev)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export LD_LIBRARY_PATH=$PWD/$build/standin/13 GPUTRACE_STANDIN_TIMELINE=0
scratch
cc -O2 -shared -fPIC -Ibench -o "$tmp/liblttng_shim.so" bench/lttng_shim.c -llttng-ust -ldl

# A live LTTng session for the tracepoint (a session daemon started here
# when none runs, and stopped at the end).
session=gputrace-peers-$$ started_sessiond=""
lttng_end() {
  lttng destroy "$session" >/dev/null 2>&1 || true
  [ -z "$started_sessiond" ] || kill "$started_sessiond" 2>/dev/null || true
  rm -rf "$tmp"
}
trap lttng_end EXIT
if ! lttng list >/dev/null 2>&1; then
  lttng-sessiond >/dev/null 2>&1 &
  started_sessiond=$!
  for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
fi
lttng create "$session" --output="$tmp/lttng" >/dev/null
lttng enable-event -u 'gputrace_bench:launch' >/dev/null
lttng start >/dev/null

per() { awk '/^ns_per_(launch|call)/ {print $2}'; } # the loop's own figure
rec() { "$gt" record -q --force -o "$1" -- "${@:2}" | per; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
plain=() flo=() gt_off=() gt_def=() tp=()
for ((i = 1; i <= reps; i++)); do
  plain+=("$("$lprog" "$launches" | per)")
  flo+=("$(LD_PRELOAD=$floor "$lprog" "$launches" | per)")
  gt_off+=("$(GPUTRACE_GPU_TIMING=off rec "$tmp/l.gtrace" "$lprog" "$launches")")
  gt_def+=("$(rec "$tmp/l.gtrace" "$lprog" "$launches")")
  tp+=("$(LD_PRELOAD=$tmp/liblttng_shim.so "$lprog" "$launches" | per)")
  # lttng stop waits for the consumer daemon to flush those events: left
  # running, it takes a core from the next runs (gputrace's two then read
  # +120-140 ns a launch instead of +26).
  lttng stop "$session" >/dev/null
  lttng start "$session" >/dev/null
done
lttng stop "$session" >/dev/null
discarded=$(lttng list "$session" 2>/dev/null | awk '/[Dd]iscarded events:/ {s += $NF} END {print s + 0}')
aplain=() agt=() aheap=()
for ((i = 1; i <= reps; i++)); do
  aplain+=("$("$aprog" "$pairs" "$depth" | per)")
  agt+=("$(rec "$tmp/a.gtrace" "$aprog" "$pairs" "$depth")")
  rm -f "$tmp"/h.*
  aheap+=("$(heaptrack -o "$tmp/h" "$aprog" "$pairs" "$depth" 2>/dev/null | per)")
done
rm -f "$tmp"/h.*
heaptrack -o "$tmp/h" "$aprog" $((events / 2)) "$depth" >/dev/null 2>&1
rec "$tmp/a.gtrace" "$aprog" $((events / 2)) "$depth" >/dev/null
# Bytes on disk per event: that loop, and its mixed workload (four sites,
# seven sizes, eight blocks live: bench/alloc_loop.cu).
heaptrack -o "$tmp/mixed" "$aprog" $((events / 2)) "$depth" mixed >/dev/null 2>&1
rec "$tmp/m.gtrace" "$aprog" $((events / 2)) "$depth" mixed >/dev/null
per_event() { awk -v b="$(stat -c %s "$@")" -v n="$events" 'BEGIN {printf "%.4f", b / n}'; }
disk_pair="$(per_event "$tmp/a.gtrace") $(per_event "$tmp"/h.*)"
disk_mixed="$(per_event "$tmp/m.gtrace") $(per_event "$tmp"/mixed.*)"
rm -f "$tmp"/mixed.* "$tmp/m.gtrace"
tprint=() tleaks=() rprint=() rleaks=()
for ((i = 1; i <= reps; i++)); do
  /usr/bin/time -f "%e %M" -o "$tmp/time" heaptrack_print "$tmp"/h.* >/dev/null
  read -r s m <"$tmp/time"; tprint+=("$s"); rprint+=("$m")
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$gt" leaks "$tmp/a.gtrace" >/dev/null
  read -r s m <"$tmp/time"; tleaks+=("$s"); rleaks+=("$m")
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

printf '%-34s %s\n' "load average before" "$load_before" "launches (runs, ns/launch)" "" \
  "  untraced" "${plain[*]}" "  floor shim" "${flo[*]}" "  gputrace, timing off" "${gt_off[*]}" \
  "  gputrace, defaults" "${gt_def[*]}" "  LTTng-UST tracepoint" "${tp[*]}" \
  "allocations (runs, ns/call)" "" "  untraced" "${aplain[*]}" "  gputrace" "${agt[*]}" \
  "  heaptrack" "${aheap[*]}" "analyzers (runs, s)" "" "  heaptrack_print" "${tprint[*]}" \
  "  gputrace leaks" "${tleaks[*]}"
st() { printf '%s\n' "${@:2}" | $1; }
added() { # NAME BASE-ARRAY-NAME ARRAY-NAME: fastest and median, less the base's
  local -n base=$2 runs=$3
  printf '| %-40s | %10.1f | %10.1f |\n' "$1" \
    "$(awk -v a="$(st fastest "${runs[@]}")" -v b="$(st fastest "${base[@]}")" 'BEGIN {print a - b}')" \
    "$(awk -v a="$(st median "${runs[@]}")" -v b="$(st median "${base[@]}")" 'BEGIN {print a - b}')"
}
table() { # TITLE UNIT BASE-ARRAY-NAME: the header and the untraced row
  local -n base=$3
  printf '\n| %-40s | %10s | %10s |\n|%s|%s|%s|\n' "$1" fastest median \
    "------------------------------------------" "------------" "------------"
  printf '| %-40s | %10.1f | %10.1f |\n' "untraced (ns per $2)" "$(st fastest "${base[@]}")" \
    "$(st median "${base[@]}")"
}
table "added ns per launch ($launches launches, $reps runs)" launch plain
added "floor shim" plain flo
added "gputrace record, device timing off" plain gt_off
added "gputrace record, defaults" plain gt_def
added "LTTng-UST tracepoint, live session" plain tp
echo "LTTng-UST: $discarded events discarded over the $reps runs ($((reps * launches)) fired)"
table "added ns per call ($pairs pairs, $depth deep)" call aplain
added "gputrace record (default stacks)" aplain agt
added "heaptrack" aplain aheap
printf '\n| %-40s | %8s | %8s | %12s | %8s |\n|%s|%s|%s|%s|%s|\n' \
  "analyzer, $events allocation events" fastest median "M events/s" "RSS MiB" \
  "------------------------------------------" "----------" "----------" "--------------" \
  "----------"
for a in "heaptrack_print:tprint:rprint" "gputrace leaks:tleaks:rleaks"; do
  IFS=: read -r name t r <<<"$a"
  local_t="$t[@]" local_r="$r[@]"
  f=$(st fastest "${!local_t}") m=$(st median "${!local_t}") rm=$(st median "${!local_r}")
  printf '| %-40s | %8.3f | %8.3f | %12.1f | %8.1f |\n' "$name" "$f" "$m" \
    "$(awk -v n="$events" -v s="$f" 'BEGIN {print (s > 0 ? n / s / 1e6 : 0)}')" \
    "$(awk -v k="$rm" 'BEGIN {print k / 1024}')"
done
printf '\n| %-40s | %10s | %10s |\n|%s|%s|%s|\n' \
  "bytes per event on disk, $events events" gputrace heaptrack \
  "------------------------------------------" "------------" "------------"
read -r g h <<<"$disk_pair"
printf '| %-40s | %10s | %10s |\n' "pair loop ($depth deep)" "$g" "$h"
read -r g h <<<"$disk_mixed"
printf '| %-40s | %10s | %10s |\n' "mixed: 4 sites, 7 sizes, 8 live" "$g" "$h"
echo "load average after: $load_after"
