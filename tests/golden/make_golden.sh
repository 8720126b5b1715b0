#!/bin/sh
# make_golden.sh COMMIT [BUILD [PROGRAM [ARGS...]]] — record
# tests/golden/vN-COMMIT-PROGRAM.gtrace with the shim, collector, stand-in
# runtime and tests/cuda/PROGRAM.cu (default basic) of an older COMMIT (built
# from `git archive` in a temporary folder: no worktree), run with ARGS, then
# write the expected output of this build (BUILD, default build) with
# check_golden.py --update. The program runs as ./PROGRAM from a folder of
# its own, so the trace names no build path of ours but the shim's.
set -eu
commit=$1
build=$(cd "${2:-build}" && pwd)
prog=${3:-basic}
[ $# -gt 3 ] && shift 3 || set --
repo=$(git rev-parse --show-toplevel)
short=$(git -C "$repo" rev-parse --short=7 "$commit")
version=$(git -C "$repo" show "$short:include/gputrace/trace_file.h" |
  sed -n 's/^#define GT_FILE_VERSION \([0-9]*\)u.*/\1/p')
tmp=$(mktemp -d /tmp/gt_golden_make.XXXXXX)
git -C "$repo" archive "$short" | tar -x -C "$tmp"
cmake -S "$tmp" -B "$tmp/b" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$tmp/b" -j2 --target gputrace gputrace-collector gputrace_shim gputrace_cudart13
mkdir -p "$tmp/run/lib"
nvcc -cudart shared -o "$tmp/run/$prog" "$tmp/tests/cuda/$prog.cu"
cp -a "$tmp/b/standin/13/." "$tmp/run/lib/"
out="$repo/tests/golden/v$version-$short-$prog.gtrace"
(cd "$tmp/run" && env -i PATH=/usr/bin:/bin HOME="$HOME" LD_LIBRARY_PATH="$tmp/run/lib" \
  GPUTRACE_QUIET=1 "$tmp/b/bin/gputrace" record -q -o "$prog.gtrace" -- "./$prog" "$@")
cp "$tmp/run/$prog.gtrace" "$out"
chmod 644 "$out"
rm -rf "$tmp"
python3 "$repo/tests/golden/check_golden.py" "$build" --update
echo "recorded $out"
