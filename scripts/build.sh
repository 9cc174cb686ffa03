#!/usr/bin/env bash
# Configures and builds everything into build/ (ninja + ccache). Safe to rerun.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ONYX_BUILD_DIR:-$ROOT/build}"
TYPE="${ONYX_BUILD_TYPE:-Release}"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE="$TYPE" \
        -DONYX_PYTHON="$ROOT/.venv/bin/python" ${ONYX_CMAKE_ARGS:-}
fi
cmake --build "$BUILD" -j"${ONYX_JOBS:-$(nproc)}"
