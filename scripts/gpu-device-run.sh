#!/usr/bin/env bash
# gpu-device-run.sh — the whole of scripts/gpu-check.sh in one call of the
# lent GPU (the `device` tool: at most 10 minutes a call, ~15 minutes of
# device time a session, and only a few files come back from $OUT), run from
# the repository root there with the bundle carried:
#
#   scripts/bundle.sh      # here; then, on the device (carry the tarball):
#   scripts/gpu-device-run.sh [PART...]
#
# Parts, most urgent first, each time-boxed (SIGINT at its limit; what it
# finished stays in its log): torch (graphs, torch_counts, device_timing,
# torch_memory: one profiler reference run serves them all), programs
# (programs, static_cudart, leaks, nvml), overhead (--quick). Default: all
# three, about 6 minutes on an H200. Everything comes back as one file,
# $OUT/gpu-results.tgz: per part its JSON, Markdown, console output and
# gpu_check.log, and the traces of the torch part for reading here.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-out}
B=/tmp/gt; rm -rf $B; mkdir -p $B "$out"
tar xzf build/gputrace-*-linux-x86_64.tar.gz -C $B || exit 2
G=$(echo $B/gputrace-*)
R=/tmp/gpu-results; rm -rf $R; mkdir -p $R/traces
{ nvidia-smi; nvcc --version; python3 -c 'import sys, torch; print(sys.version, torch.__version__)'; } \
  > $R/machine.txt 2>&1
part() { # name, seconds, checks, extra options
  local name=$1 limit=$2 checks=$3; shift 3
  local t0=$(date +%s)
  timeout -s INT -k 10 "$limit" scripts/gpu-check.sh --gputrace "$G" --work /tmp/w_$name \
    --only "$checks" "$@" -o $R/$name.json > $R/$name.out 2>&1
  echo "$name: exit $? after $(( $(date +%s) - t0 )) s" | tee -a $R/parts.txt
  cp /tmp/w_$name/gpu_check.log $R/$name.log 2>/dev/null
}
for p in "${@:-torch programs overhead}"; do
  for q in $p; do
    case $q in
    torch) part torch 240 graphs,torch_counts,device_timing,torch_memory ;;
    programs) part programs 90 programs,static_cudart,leaks,nvml ;;
    overhead) part overhead 200 overhead --quick ;;
    *) echo "gpu-device-run.sh: unknown part $q (torch, programs, overhead)" >&2; exit 2 ;;
    esac
  done
done
cp /tmp/w_torch/*.gtrace $R/traces/ 2>/dev/null
tar czf "$out/gpu-results.tgz" -C /tmp gpu-results
