#!/usr/bin/env bash
# bundle.sh — a relocatable gputrace for machines that lack its build
# dependencies (GPU boxes): build/gputrace-<version>-linux-x86_64.tar.gz with
#   bin/gputrace, bin/gputrace-collector, lib/libgputrace.so, and in lib/
#   every shared library those load that is not part of glibc (libdw, libelf,
#   libzstd, libmicrohttpd, libstdc++ and what they pull in), found with the
#   dynamic loader (ldd), not from a hand-written list; and the man page and
#   bash completion the build generates from the option tables (share/).
# The executables carry DT_RPATH $ORIGIN/../lib and each bundled library
# $ORIGIN (patchelf): DT_RPATH, unlike RUNPATH, is searched before
# LD_LIBRARY_PATH and for indirect dependencies too, so the collector keeps its
# own libzstd even in a program's environment that points elsewhere. The shim
# links nothing beyond glibc (preload/CMakeLists.txt), so the traced program
# never gets a bundled library; it finds its collector at ../bin. Debug
# information is stripped from the copies (symbols stay).
#
# A bundle runs with the glibc it was built on or a newer one. --root ROOT
# builds it in a Debian 11 (bullseye, glibc 2.31) root instead, with that
# release's libraries: the bundle then runs in Debian 11, Ubuntu 20.04 and
# newer images alike (tests/bundle/test_old_glibc.py runs it there). ROOT is
# made with debootstrap from Debian's registry when it does not exist (about
# a minute, 400 MB; needs root); the tracked sources are copied into it.
#
# Usage: scripts/bundle.sh [--build-dir DIR] [--no-build] [--root ROOT] [-o TARBALL]
#   default: a Release build in build-release/, the tarball in build/.
#   --no-build packages what DIR already holds (the tests use it).
# Status: 0 written; 2 bad usage or a build missing; 3 ROOT could not be
# made (no root privileges, no debootstrap, the registry unreachable); 1 else.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-release
do_build=1
out=""
in_root=""
while (($#)); do
  case $1 in
  --build-dir) build=$2; shift 2 ;;
  --no-build) do_build=0; shift ;;
  --root) in_root=$2; shift 2 ;;
  -o) out=$2; shift 2 ;;
  *) echo "bundle.sh: unknown option $1 (see the header of scripts/bundle.sh)" >&2; exit 2 ;;
  esac
done
version=$(sed -n 's/^project(gputrace VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
out=${out:-build/gputrace-$version-linux-x86_64.tar.gz}

# What building needs in the root: Debian 11's compiler, CMake and -dev packages.
ROOT_PACKAGES=gcc,g++,libc6-dev,make,cmake,pkg-config,libzstd-dev,libdw-dev,libelf-dev,libmicrohttpd-dev,libprotobuf-c-dev,protobuf-c-compiler,libsqlite3-dev,patchelf,python3
if [ -n "$in_root" ]; then
  if [ ! -x "$in_root/usr/bin/cmake" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
      echo "bundle.sh: making $in_root needs root and debootstrap (scripts/deps.sh)" >&2
      exit 3
    fi
    rm -rf "$in_root.new"
    mkdir -p "$(dirname "$in_root")"
    if ! debootstrap --variant=minbase --include="$ROOT_PACKAGES" bullseye "$in_root.new" \
      http://deb.debian.org/debian >"$in_root.log" 2>&1; then
      echo "bundle.sh: debootstrap bullseye failed (Debian's registry unreachable?):" \
        "$(tail -1 "$in_root.log")" >&2
      rm -rf "$in_root.new"
      exit 3
    fi
    mv "$in_root.new" "$in_root"
  fi
  src=/tmp/gputrace-src
  rm -rf "$in_root$src" "$in_root/tmp/gputrace-build" "$in_root/tmp/gputrace.tar.gz"
  mkdir -p "$in_root$src"
  git ls-files -z | tar -c --null -T - | tar -x -C "$in_root$src"
  # /proc and /dev for the build's tools (ldd, process substitution), in a
  # mount namespace of its own: nothing stays mounted
  unshare -m sh -c "mount --bind /proc '$in_root/proc' && mount --bind /dev '$in_root/dev' &&
    exec chroot '$in_root' env -i PATH=/usr/bin:/bin HOME=/tmp bash $src/scripts/bundle.sh \
      --build-dir /tmp/gputrace-build -o /tmp/gputrace.tar.gz"
  mkdir -p "$(dirname "$out")"
  cp "$in_root/tmp/gputrace.tar.gz" "$out"
  echo "$out: built in $in_root ($(chroot "$in_root" ldd --version | head -1))"
  exit 0
fi
command -v patchelf >/dev/null || { echo "bundle.sh: needs patchelf (scripts/deps.sh)" >&2; exit 2; }

if ((do_build)); then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)" --target gputrace gputrace-collector gputrace_shim \
    gputrace_docs >/dev/null
fi
docs=(share/man/man1/gputrace.1 share/bash-completion/completions/gputrace)
for f in bin/gputrace bin/gputrace-collector lib/libgputrace.so "${docs[@]}"; do
  [ -f "$build/$f" ] || { echo "bundle.sh: $build/$f missing (build first)" >&2; exit 2; }
done

stage=$(mktemp -d)
stage=$(readlink -f "$stage")
trap 'rm -rf "$stage"' EXIT
name=gputrace-$version-linux-x86_64
root=$stage/$name
mkdir -p "$root/bin" "$root/lib"
cp "$build/bin/gputrace" "$build/bin/gputrace-collector" "$root/bin/"
cp "$build/lib/libgputrace.so" "$root/lib/"
for f in "${docs[@]}"; do
  mkdir -p "$root/$(dirname "$f")"
  cp "$build/$f" "$root/$f"
done

# glibc's own libraries stay the target system's: the files of Debian's libc6
# package (ld.so, libc, libm, libpthread, libdl, librt, ...), or by name.
is_glibc() {
  local base
  base=$(basename "$1")
  case $base in
  ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | \
    librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnss_*.so.* | \
    libBrokenLocale.so.* | libc_malloc_debug.so.* | libthread_db.so.*) return 0 ;;
  esac
  return 1
}
deps() { # the resolved paths of every library an object loads, in a bare environment
  env -i PATH=/usr/bin:/bin ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
}
for obj in "$root"/bin/* "$root"/lib/libgputrace.so; do
  deps "$obj"
done | sort -u | while read -r lib; do
  is_glibc "$lib" || cp -L "$lib" "$root/lib/"
done

# The shim goes into other programs: it must need nothing we would bundle.
shim_deps=$(deps "$root/lib/libgputrace.so" | while read -r l; do is_glibc "$l" || echo "$l"; done)
if [ -n "$shim_deps" ]; then
  echo "bundle.sh: libgputrace.so needs non-glibc libraries: $shim_deps" >&2
  exit 1
fi

chmod u+w "$root"/lib/*
for f in "$root"/bin/*; do
  strip --strip-debug "$f"
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$f"
done
for f in "$root"/lib/*; do
  strip --strip-debug "$f"
  [ "$(basename "$f")" = libgputrace.so ] || patchelf --force-rpath --set-rpath '$ORIGIN' "$f"
done

# Every non-glibc library must now resolve inside the bundle, whatever the
# environment says.
bad=0
for obj in "$root"/bin/* "$root"/lib/*; do
  while read -r lib; do
    is_glibc "$lib" && continue
    lib=$(readlink -f "$lib")
    case $lib in "$root"/lib/*) ;; *) echo "bundle.sh: $obj loads $lib from outside" >&2; bad=1 ;; esac
  done < <(deps "$obj")
done
((bad == 0)) || exit 1

# The commands' names from gputrace's own list (its --help), not by hand.
others=$("$root/bin/gputrace" --help | sed -n 's/^  \([a-z]\{1,\}\) .*/\1/p' |
  grep -vx 'record\|report' | paste -sd, - | sed 's/,/, /g')
[ -n "$others" ] || { echo "bundle.sh: no command list from bin/gputrace" >&2; exit 1; }
cat >"$root/README" <<EOF
gputrace $version — a profiler for CUDA programs (no code change needed)

  bin/gputrace record -o run.gtrace -- python serve.py
  bin/gputrace report run.gtrace        # also: $others
  LD_PRELOAD=\$PWD/lib/libgputrace.so GPUTRACE_OUTPUT=run.gtrace python serve.py

bin/gputrace --help lists the commands and their options; all of it:
  man -l share/man/man1/gputrace.1
Bash completion: source share/bash-completion/completions/gputrace
(or copy it to ~/.local/share/bash-completion/completions/).

Runs from wherever it is unpacked: the libraries it needs are in lib/.
EOF
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out" "$name"
size=$(stat -c %s "$out")
limit=$((32 << 20))
if ((size > limit)); then
  echo "bundle.sh: $out is $size bytes, over the 32 MiB limit" >&2
  exit 1
fi
echo "$out ($((size / 1024)) KiB, $(ls "$root/lib" | wc -l) libraries)"
