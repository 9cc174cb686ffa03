#!/usr/bin/env bash
# Configures and builds everything into build/ (ninja + ccache). Safe to rerun.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ONYX_BUILD_DIR:-$ROOT/build}"
TYPE="${ONYX_BUILD_TYPE:-Release}"
# Paths inside the tree hash relative to it, so a fresh clone reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
bash "$ROOT/scripts/deps_onnx.sh"
if [ ! -f "$BUILD/build.ninja" ]; then
  "$ROOT/.venv/bin/cmake" -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE="$TYPE" \
        -DONYX_PYTHON="$ROOT/.venv/bin/python" ${ONYX_CMAKE_ARGS:-}
fi
"$ROOT/.venv/bin/cmake" --build "$BUILD" -j"${ONYX_JOBS:-$(nproc)}"
# The Python package as users get it: a wheel of this build, installed into the project venv.
bash "$ROOT/scripts/install_wheel.sh"
