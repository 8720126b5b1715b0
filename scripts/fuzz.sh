#!/usr/bin/env bash
# fuzz.sh — a timed libFuzzer session on each fuzz target (clang,
# -fsanitize=fuzzer,address,undefined): the trace reader, the ring consumer,
# and the ring consumer while a second thread mutates the ring (concurrent).
# New inputs that add coverage go to build-fuzz/corpus/<target>; crashes to
# build-fuzz/crashes/. Record hours fuzzed and crashes found in
# docs/validation.md.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET=300]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
scripts/deps.sh
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DGPUTRACE_FUZZ=ON \
  -DGPUTRACE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_trace_reader fuzz_ring fuzz_ring_concurrent >/dev/null
mkdir -p build-fuzz/crashes
for t in trace_reader ring ring_concurrent; do
  seeds=${t%_concurrent} # the concurrent mode starts from the ring seeds
  mkdir -p "build-fuzz/corpus/$t"
  echo "== fuzz_$t for ${secs}s ==" >&2
  build-fuzz/bin/fuzz_$t -max_total_time="$secs" -max_len=65536 -timeout=10 \
    -artifact_prefix=build-fuzz/crashes/"$t"- "build-fuzz/corpus/$t" \
    "tests/fuzz/corpus/$seeds" 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|ERROR|SUMMARY" | tail -3
done
ls build-fuzz/crashes
