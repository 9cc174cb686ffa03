#!/usr/bin/env bash
# Installs everything the build and the tests need: Debian packages and a
# project venv with pinned Python packages. Safe to run more than once.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

DEB_PKGS=(cmake ninja-build ccache g++ pkg-config libprotobuf-dev protobuf-compiler
          libopenblas-dev libgtest-dev valgrind python3-venv
          libicu-dev libre2-dev
          libjpeg-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev libstb-dev
          patchelf default-jdk-headless libjna-java junit4
          mono-mcs nunit-console libnunit-cil-dev abigail-tools
          clang libclang-rt-14-dev llvm)  # sanitizer builds and libFuzzer (scripts/sanitize.sh)
missing=()
for p in "${DEB_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
REQ="$ROOT/scripts/requirements.txt"
STAMP="$VENV/.req-stamp"
if [ ! -f "$STAMP" ] || ! cmp -s "$REQ" "$STAMP"; then
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$STAMP"
fi
