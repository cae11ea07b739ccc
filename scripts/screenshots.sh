#!/bin/sh
# Retakes the README's and docs/reference.md's pictures in headless Chromium, with the
# end-to-end tests that check those pages (the same shots ctest writes to build/tests/),
# and puts them in docs/. Run after a change to a page; commit the PNGs it changes.
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/torch2pprof}
[ -x "$bin" ] || { echo "screenshots.sh: build first (scripts/setup.sh), or give the binary" >&2; exit 2; }
python3 tests/e2e/timeline_e2e.py --binary "$bin" --testdata testdata \
  --screenshot docs/timeline.png --sites-screenshot docs/memory_sites.png
python3 tests/e2e/compare_html_e2e.py --binary "$bin" --testdata testdata --screenshot docs/compare.png
python3 tests/e2e/flame_e2e.py --binary "$bin" --testdata testdata --no-shared --screenshot docs/flame_graph.png
python3 tests/e2e/html_e2e.py --binary "$bin" --testdata testdata --screenshots docs
