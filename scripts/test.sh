#!/usr/bin/env bash
# test.sh — install dependencies, build, and run the whole suite three ways:
#   1. -Wall -Wextra -Werror, every test (ctest);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (collector, CLI and unit
#      tests; the shim, which lives inside uninstrumented programs, gets UBSan);
#   3. ThreadSanitizer on the lock-free ring and registry tests.
# Usage: scripts/test.sh [--quick]   (--quick: step 1 only)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

jobs=$(nproc)
run_suite() { # build-dir, ctest args, cmake args...
  local dir=$1 ctest_args=$2
  shift 2
  cmake -S . -B "$dir" -DGPUTRACE_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" >/dev/null
  (cd "$dir" && ctest --output-on-failure -j 2 $ctest_args)
}

echo "== build and test (-Werror) =="
run_suite build ""
[ "${1:-}" = "--quick" ] && exit 0
echo "== AddressSanitizer + UndefinedBehaviorSanitizer =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite build-asan "" -DGPUTRACE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
echo "== ThreadSanitizer (ring, registry) =="
TSAN_OPTIONS=halt_on_error=1 run_suite build-tsan "-R test_ring|test_registry" -DGPUTRACE_SANITIZE=thread \
  -DCMAKE_BUILD_TYPE=Debug
