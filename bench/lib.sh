# lib.sh — helpers the bench scripts source (after cd to the repo root).

# median: the median of numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# fastest: the smallest of numbers on stdin, one per line.
fastest() { sort -g | head -1; }

# built BUILD FILE...: exit 2, naming the build to make, unless every FILE
# (a program or library of that build) is there.
built() {
  local build=$1 f
  shift
  for f; do
    [ -x "$f" ] || { echo "bench: build first (cmake --build $build)" >&2; exit 2; }
  done
}

# need_time: GNU time at /usr/bin/time (peak RSS), from Debian's time package.
need_time() {
  [ -x /usr/bin/time ] || { echo "bench: needs /usr/bin/time (Debian's time package)" >&2; exit 2; }
}

# ring_drops TEXT: the records dropped (ring full) that record's closing
# lines in TEXT count, 0 when they name none.
ring_drops() {
  sed -n 's/.*: \([0-9]*\) records dropped (ring full).*/\1/p' <<<"$1" | grep . || echo 0
}

# collector_cpu TEXT: the collector's CPU seconds that record's closing
# lines in TEXT give.
collector_cpu() {
  sed -n 's/.*collector CPU \([0-9.]*\) s.*/\1/p' <<<"$1"
}

# summary_drops TEXT: the records dropped that `dump --summary`'s TEXT counts.
summary_drops() {
  awk '/^records:/ {print $6}' <<<"$1"
}

# scratch: a temporary directory in $tmp, removed when the script exits.
scratch() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
