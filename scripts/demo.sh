#!/usr/bin/env bash
# demo.sh — install dependencies, build, trace the bundled sample inference
# program (samples/infer.cu) on the CPU stand-in runtime, and print the
# reports. The stand-in simulates a GPU's timeline on the CPU (see
# docs/standin.md); on a machine with a GPU, drop LD_LIBRARY_PATH below.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j "$(nproc)" >/dev/null

trace=build/demo.gtrace
echo "== gputrace record -o $trace -- infer 20 ==" >&2
LD_LIBRARY_PATH=$PWD/build/standin/13 build/bin/gputrace record --force -o "$trace" -- \
  build/tests/cuda/infer 20
for cmd in "dump --summary" "report" "leaks"; do
  echo
  echo "== gputrace $cmd $trace =="
  build/bin/gputrace $cmd "$trace"
done
echo
echo "== gputrace chrome -o build/demo.json $trace (open it in ui.perfetto.dev) =="
build/bin/gputrace chrome --force -o build/demo.json "$trace"
