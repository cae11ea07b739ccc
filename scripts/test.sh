#!/usr/bin/env bash
# Quick start, step 2: build and run every test — unit tests, end-to-end tests read
# back by go tool pprof, the style check, the fuzz seeds — then again under
# AddressSanitizer and UndefinedBehaviorSanitizer, then everything that runs threads
# under ThreadSanitizer, then the libFuzzer target replays its seeds and fuzzes for 60
# seconds. T2P_SKIP_SANITIZERS=1 / T2P_SKIP_FUZZ=1 skip those passes; --quick skips both
# (the build and every test once: the loop while working). ctest's labels pick a part:
# `cd build && ctest -L unit` (or e2e, style; -LE slow leaves out the long e2e tests).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  --quick) export T2P_SKIP_SANITIZERS=1 T2P_SKIP_FUZZ=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTORCH2PPROF_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# The tests and the package step run with PATH holding only what a fresh machine has once
# install-deps.sh ran: a tool they call that it does not install fails here, on any machine.
scripts/with-installed-path.sh bash -c "cd build && ctest --output-on-failure -j $jobs"
pkg=$(mktemp -d)
scripts/with-installed-path.sh cpack --config build/CPackConfig.cmake -G DEB -B "$pkg" >/dev/null
rm -rf "$pkg"

if [ "${T2P_SKIP_SANITIZERS:-0}" != 1 ]; then
  # The sanitizer build also covers zlib, the inflater where ISA-L is absent.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTORCH2PPROF_SANITIZE=ON -DTORCH2PPROF_WERROR=ON \
    -DTORCH2PPROF_ISAL=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure -j "$jobs")

  # ThreadSanitizer: the unit tests (the executor, the parse pool, every stage at several
  # thread counts), the fuzz seeds (two-thread loads against one) and the same output at
  # 1, 2 and 8 threads on every sample trace.
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORCH2PPROF_TSAN=ON -DTORCH2PPROF_WERROR=ON \
    >/dev/null
  cmake --build build-tsan -j "$jobs"
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  (cd build-tsan && ctest --output-on-failure -j "$jobs" -E '^(e2e_|clang_format)' &&
    ctest --output-on-failure -R '^e2e_same_output$')
fi

if [ "${T2P_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTORCH2PPROF_FUZZ=ON -DBUILD_TESTING=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-fuzz -j "$jobs"
  (cd build-fuzz && ctest --output-on-failure)
  corpus=$(mktemp -d)
  build-fuzz/fuzz/fuzz_convert "$corpus" testdata/convert tests/bad_inputs fuzz/regressions \
    -max_len=65536 -timeout=10 -rss_limit_mb=4096 -max_total_time=60 -print_final_stats=1 2>&1 | tail -n 12
  rm -rf "$corpus"
fi
