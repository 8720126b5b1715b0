#!/bin/sh
# check_abi.sh LIB MAJOR REQUIRED_LIST [REAL_LIBCUDART]
# Checks the stand-in's ELF interface: soname, every exported symbol in the
# libcudart.so.MAJOR version node, every required API symbol present, no
# PLT/GOT relocation against an exported CUDA symbol (internal calls must not
# be interposable, like the real libcudart), no sanitizer runtime, and (when
# the real library is given) no export the real library lacks.
set -u
lib=$1 major=$2 required=$3 real=${4:-}
node="libcudart.so.$major"
fail=0
err() { echo "FAIL $*"; fail=1; }

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "$node" ] || err "soname '$soname', want '$node'"
echo "soname: $soname"

# Defined dynamic symbols with their version (objdump -T: version is the
# second-to-last column; the version node itself is listed as an ABS symbol).
exports=$(objdump -T "$lib" | awk '$0 ~ /^[0-9a-f]+ / && $0 !~ /\*UND\*/ && $NF != v {print $(NF-1), $NF}' v="$node")
count=$(printf '%s\n' "$exports" | grep -c .)
echo "exported symbols: $count"
bad=$(printf '%s\n' "$exports" | awk -v v="$node" '$1 != v && $1 != "(" v ")" {print}')
[ -z "$bad" ] || err "symbols outside version node $node: $bad"
names=$(printf '%s\n' "$exports" | awk '{print $2}' | sort)
nonapi=$(printf '%s\n' "$names" | grep -v -E '^(__)?cuda' || true)
[ -z "$nonapi" ] || err "non-CUDA exports: $nonapi"

for s in $(cat "$required"); do
  printf '%s\n' "$names" | grep -qx "$s" || err "missing $s"
done

relocs=$(readelf -r --wide "$lib" | awk '{print $5}' | grep -E '^(__)?cuda' || true)
[ -z "$relocs" ] || err "relocations against exported CUDA symbols (PLT/GOT): $relocs"

if nm -D "$lib" | grep -q -E '__(asan|ubsan)_'; then err "sanitizer symbols in $lib"; fi

if [ -n "$real" ] && [ -f "$real" ]; then
  realnames=$(objdump -T "$real" | awk '$0 !~ /\*UND\*/ {print $NF}' | sort -u)
  for s in $names; do
    printf '%s\n' "$realnames" | grep -qx "$s" || err "$s is not exported by $real"
  done
fi
[ $fail -eq 0 ] && echo "PASSED"
exit $fail
