#!/bin/sh
# check_vtype.sh CC INCLUDE_DIR — options.h's value type check: the table of
# tests/unit/options_vtype.c compiles, and the same table with an int given
# to a size option (-DGT_PLANT_WRONG_VTYPE) fails at the _Generic (GCC:
# "selector of type 'int *' is not compatible with any association").
cc=$1 inc=$2 src=$(dirname "$0")/options_vtype.c
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" -c "$src" -o "$out/ok.o" || {
  echo "FAIL: the matching table does not compile"; exit 1; }
if "$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" -DGT_PLANT_WRONG_VTYPE -c "$src" \
  -o "$out/planted.o" 2>"$out/err"; then
  echo "FAIL: an int given to GT_OPT_SIZE compiled"; exit 1
fi
line=$(grep -m1 -E "generic association|not compatible with any association" "$out/err")
[ -n "$line" ] || { echo "FAIL: not the type check's error:"; cat "$out/err"; exit 1; }
echo "planted wrong value type refused: $line"
