#!/usr/bin/env bash
# deps.sh — install what gputrace needs to build and test, from Debian's
# packages. Installs only what is missing; safe to run again.
# The CUDA 13 toolkit (nvcc, headers, libcudart) is expected at
# /usr/local/cuda (or CUDA_HOME); it is not a Debian package.
set -euo pipefail

packages=(build-essential cmake pkg-config libzstd-dev zstd zlib1g-dev libdw-dev libelf-dev
          libprotobuf-c-dev protobuf-c-compiler golang-go # gputrace pprof and go tool pprof
          python3 python3-dev clang clang-format # python3-dev: CPython's headers, for test_pyframes_layout
          python3-yaml # docs/kubernetes.md's manifests parsed (tests/e2e/test_kubernetes.py)
          patchelf util-linux procps # scripts/bundle.sh and its test (unshare, pgrep)
          man-db groff-base # the man page's test: man -l renders it, groff -ww checks it
          libmicrohttpd-dev curl # live metrics (--prometheus) and their test
          tmux # gputrace top's test drives it in an 80x24 terminal
          chromium # gputrace html's test opens the page in it, headless
          libsqlite3-dev sqlite3 # gputrace export --format sqlite and its test
          debootstrap binutils) # the shim in a Debian 11 root (tests/bundle/test_old_glibc.py); objdump
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# node and npm run Chrome DevTools' trace engine over `gputrace chrome` output
# (tests/e2e/test_chrome_engine.py). They may come from elsewhere (NodeSource's
# nodejs bundles npm and conflicts with Debian's npm): install only if absent.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# promtool and a Prometheus server check the live metrics (tests/e2e/test_prometheus*.py);
# the tests skip those checks only when Debian's prometheus package cannot be had.
if ((${#missing[@]})) || ! command -v promtool >/dev/null; then
  $SUDO apt-get update -qq
  if ! command -v promtool >/dev/null && apt-cache show prometheus >/dev/null 2>&1; then
    missing+=(prometheus)
  fi
fi
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
if [ ! -x "$nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "deps: no CUDA toolkit (nvcc) at ${CUDA_HOME:-/usr/local/cuda}: the stand-in runtime" \
       "and the end-to-end tests need it (set CUDA_HOME)" >&2
  exit 1
fi
