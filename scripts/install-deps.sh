#!/usr/bin/env bash
# Installs, from Debian's packages, whatever torch2pprof needs to build and test
# that this machine lacks, and torch 2.13.0 (CPU) into .venv for the live tests. Safe to
# run again: it does nothing when all is there.
set -euo pipefail

packages=(
  g++ make cmake pkg-config git                      # toolchain; git stamps the version
  ninja-build                                        # the wheel: pip install . runs CMake with Ninja (else pip fetches it)
  libsimdjson-dev nlohmann-json3-dev                 # JSON: event stream, small documents
  libprotobuf-dev protobuf-compiler zlib1g-dev       # the tests' pprof decoder, gzip
  libisal-dev                                        # ISA-L's igzip: inflates .json.gz 2-3x as fast as zlib
  libcli11-dev libgtest-dev libbenchmark-dev         # command line, unit tests, micro-benchmarks
  golang-go python3 python3-markdown                 # end-to-end tests: go tool pprof, the reference model, markdown
  python3-venv python3-dev                           # .venv: torch for the live tests; Python.h for Inductor (torch.compile)
  chromium fonts-dejavu-core                         # end-to-end tests: the HTML report in a real browser
  man-db dpkg-dev file                               # man -l for the man page's test; cpack's dpkg-shlibdeps, file
  clang-format                                       # style check
  clang libclang-rt-14-dev                           # libFuzzer
  time                                               # /usr/bin/time -v for the benchmark's peak RSS
)

# --list: the packages, one a line (scripts/with-installed-path.sh reads them).
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

install_packages() {
  echo "torch2pprof: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "torch2pprof: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || install_packages

# The live tests record real traces with torch (tests/live/record.py): the CPU build of
# torch 2.13.0 in .venv, from the package index (a bare `torch` would be a multi-GB CUDA
# build). The tests find it there (CMake's T2P_TORCH_PYTHON).
cd "$(dirname "$0")/.."
if ! .venv/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
  echo "torch2pprof: installing torch==2.13.0 (CPU) into .venv for the live tests" >&2
  python3 -m venv .venv
  .venv/bin/python3 -m pip install -q --disable-pip-version-check torch==2.13.0 numpy
fi
