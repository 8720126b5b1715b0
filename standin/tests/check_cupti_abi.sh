#!/bin/sh
# check_cupti_abi.sh LIB REAL_LIBCUPTI
# The stand-in libcupti's ELF interface: soname libcupti.so.13, every export
# in the version node libcupti.so.13, and (when the real library is given)
# no export the real library lacks, with the same version.
set -u
lib=$1 real=${2:-}
fail=0
err() { echo "FAIL $*"; fail=1; }
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libcupti.so.13" ] || err "soname '$soname'"
ours=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort)
echo "exported functions: $(printf '%s\n' "$ours" | grep -c .)"
bad=$(printf '%s\n' "$ours" | grep -v '@@libcupti.so.13$' || true)
[ -z "$bad" ] || err "outside the version node: $bad"
if [ -n "$real" ] && [ -f "$real" ]; then
  theirs=$(nm -D --defined-only "$real" | awk '$2 == "T" {print $3}' | sort)
  extra=$(printf '%s\n' "$ours" | while read -r s; do
    printf '%s\n' "$theirs" | grep -qxF "$s" || echo "$s"; done)
  [ -z "$extra" ] || err "not exported by $real: $extra"
else
  echo "no real libcupti: subset check skipped"
fi
[ $fail -eq 0 ] && echo "ok"
exit $fail
