#!/usr/bin/env bash
# Builds ONNX's C++ library (operator schemas, shape inference, function
# bodies, inliner, checker) from the pinned onnx source distribution on PyPI,
# once, into $ONYX_DEPS_DIR/onnx-<version>/install. The engine links its static
# libraries (PIC, hidden symbols, lite protobuf from Debian's shared library)
# and takes the generated onnx-ml.pb from it, so one descriptor serves both.
# Needs CMake >= 3.26: the `cmake` package of the project venv. Safe to rerun.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
VERSION="$(sed -n 's/^onnx==\([0-9.]*\).*/\1/p' "$ROOT/scripts/requirements.txt")"
DEPS="${ONYX_DEPS_DIR:-$ROOT/.deps}"
DIR="$DEPS/onnx-$VERSION"
INSTALL="$DIR/install"
# The build recipe itself is part of the stamp: change a flag, rebuild.
RECIPE="$(sha1sum "${BASH_SOURCE[0]}" | cut -c1-12)"
STAMP="$INSTALL/.onyx-stamp"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$RECIPE" ]; then
  exit 0
fi
mkdir -p "$DIR"
if [ ! -f "$DIR/onnx-$VERSION.tar.gz" ]; then
  echo "deps: downloading the onnx $VERSION source distribution"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary onnx \
    "onnx==$VERSION" -d "$DIR"
fi
rm -rf "$DIR/src" "$DIR/build" "$INSTALL"
mkdir -p "$DIR/src"
tar xzf "$DIR/onnx-$VERSION.tar.gz" -C "$DIR/src" --strip-components=1
CMAKE="$VENV/bin/cmake"
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$DIR"
fi
echo "deps: building onnx $VERSION's C++ library (a few minutes, once)"
"$CMAKE" -S "$DIR/src" -B "$DIR/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$INSTALL" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DCMAKE_CXX_VISIBILITY_PRESET=hidden -DCMAKE_VISIBILITY_INLINES_HIDDEN=ON \
  -DONNX_ML=1 -DONNX_USE_LITE_PROTO=ON -DONNX_USE_PROTOBUF_SHARED_LIBS=ON \
  -DONNX_BUILD_TESTS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_WERROR=OFF -DPython3_EXECUTABLE="$VENV/bin/python" "${LAUNCHER[@]}" >"$DIR/configure.log" 2>&1 \
  || { tail -30 "$DIR/configure.log"; exit 1; }
"$CMAKE" --build "$DIR/build" -j"${ONYX_JOBS:-$(nproc)}" >"$DIR/build.log" 2>&1 \
  || { tail -40 "$DIR/build.log"; exit 1; }
"$CMAKE" --install "$DIR/build" >/dev/null
echo "$RECIPE" >"$STAMP"
echo "deps: onnx $VERSION installed in $INSTALL"
