#!/usr/bin/env bash
# gpu-check.sh — gputrace against the ground truth of a GPU: exact call counts
# and output of the project's programs, a statically linked runtime seen
# through the driver hooks, PyTorch (eager, torch.compile, CUDA graphs)
# against torch.profiler, device times, leaks against compute-sanitizer, NVML
# against nvidia-smi, overhead. Checks and references: tests/gpu/gpu_checks.py.
#
#   scripts/gpu-check.sh -o r.json                   # on a GPU machine
#   scripts/gpu-check.sh --standin -o r.json         # no GPU: the CPU stand-in
#   scripts/gpu-check.sh --gputrace DIR ...          # an unpacked bundle
#
# Writes r.json and r.md (a Markdown table); exits 1 when a check failed, 0
# with every check skipped on a machine without a GPU and without --standin.
# Needs python3 (with PyTorch for the PyTorch checks), nvcc on a GPU machine,
# and a build directory (--build, default build/) in --standin mode.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$here/tests/gpu/gpu_check.py" "$@"
