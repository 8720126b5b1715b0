#!/usr/bin/env bash
# test.sh — install dependencies, check formatting, build, and run the whole
# suite three ways:
#   1. -Wall -Wextra -Werror, every test (ctest);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (collector, CLI and unit
#      tests; the shim, which lives inside uninstrumented programs, gets UBSan);
#   3. ThreadSanitizer on the lock-free ring and registry tests, on the
#      unit tests that read through a session (its decompression threads),
#      on percentiles split over two threads (test_util) and on the
#      collector's symbolizer queue (test_symq) and on the native unwinder's
#      rule cache, 4 threads at once (test_unwind).
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

# Formatting: every C source and header as the repo's .clang-format lays it
# out (clang-format 14; tables it would mangle are marked `clang-format off`).
echo "== formatting (clang-format --dry-run --Werror) =="
fmt=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$fmt" ] || { echo "test.sh: clang-format (14) not found" >&2; exit 1; }
git ls-files -z '*.c' '*.h' | xargs -0 "$fmt" --dry-run --Werror

echo "== build and test (-Werror) =="
run_suite build ""
[ "${1:-}" = "--quick" ] && exit 0
echo "== AddressSanitizer + UndefinedBehaviorSanitizer =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite build-asan "" -DGPUTRACE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
echo "== ThreadSanitizer (ring, registry, session, percentiles, symbolizer queue, unwinder) =="
TSAN_OPTIONS=halt_on_error=1 run_suite build-tsan \
  "-R ^(test_ring|test_registry|test_session|test_alloc|test_report_rules|test_leaks|test_util|test_symq|test_unwind)$" \
  -DGPUTRACE_SANITIZE=thread \
  -DCMAKE_BUILD_TYPE=Debug
