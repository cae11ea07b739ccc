#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build torch2pprof, convert the
# bundled sample trace and show the profile's top entries with go tool pprof.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target torch2pprof
sample=testdata/real/kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz
build/torch2pprof convert "$sample" build/sample.pb.gz
echo "Converted $sample -> build/sample.pb.gz"
echo "\$ go tool pprof -top build/sample.pb.gz | head -20"
go tool pprof -top build/sample.pb.gz 2>/dev/null | head -20
