#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB) from build/. With --check (as root, on a
# machine it may change, as CI is): installs it with apt, runs the installed command,
# man page and a find_package consumer against /usr, and removes it again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
(cd build && cpack -G DEB >/dev/null)
deb=$(ls build/torch2pprof_*.deb)
echo "torch2pprof: built $deb"
[ "${1:-}" = "--check" ] || exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "./$deb" >/dev/null
trap 'apt-get remove -y -qq torch2pprof >/dev/null' EXIT
/usr/bin/torch2pprof --version
MANPAGER=cat man torch2pprof | grep -q "EXIT STATUS"
consumer=$(mktemp -d)
cmake -S tests/consumer -B "$consumer" >/dev/null
cmake --build "$consumer" >/dev/null
"$consumer/consumer" testdata/real/torch211/lm_train.pt.trace.json.gz "$consumer/out.pb.gz" | head -2
go tool pprof -top "$consumer/out.pb.gz" | head -1
rm -rf "$consumer"
echo "torch2pprof: $deb installs with apt; the command, man page and find_package work from /usr"
