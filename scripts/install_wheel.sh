#!/usr/bin/env bash
# Builds the onyxruntime wheel from the current build (pyproject.toml,
# packaging/python/onyx_build_backend.py: the package, libonyxruntime.so and
# the shared libraries it needs, RUNPATH $ORIGIN) into build/dist and installs
# it into the project venv, so `import onyxruntime` works there without
# PYTHONPATH. Does nothing when the installed wheel came from the same files.
# ONYX_VENV picks another venv; ONYX_INSTALL_WHEEL=0 skips this step.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ONYX_BUILD_DIR:-$ROOT/build}"
VENV="${ONYX_VENV:-$ROOT/.venv}"
[ "${ONYX_INSTALL_WHEEL:-1}" = "0" ] && exit 0
STAGE="$BUILD/python/onyxruntime"
STAMP="$VENV/.onyxruntime-wheel-stamp"
# What the wheel would hold: the staged package's files, the bundling code, the metadata.
sum="$( (cd "$STAGE" && find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum;
        sha256sum "$ROOT/pyproject.toml" "$ROOT/packaging/python/onyx_build_backend.py") | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$sum" ] && "$VENV/bin/python" -c "import onyxruntime" 2>/dev/null; then
  exit 0
fi
DIST="$BUILD/dist"
rm -rf "$DIST"; mkdir -p "$DIST"
ONYX_BUILD_DIR="$BUILD" ONYX_WHEEL_NO_BUILD=1 \
  "$VENV/bin/python" -m pip wheel -q --no-deps --no-cache-dir -w "$DIST" "$ROOT"
WHEEL="$(ls "$DIST"/onyxruntime-*.whl)"
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps --no-cache-dir "$WHEEL"
echo "$sum" > "$STAMP"
echo "installed $(basename "$WHEEL") into $VENV"
