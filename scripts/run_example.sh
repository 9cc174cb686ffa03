#!/usr/bin/env bash
# The README's example command: installs what is missing, builds everything,
# generates the bundled example model (ResNet-50 style, seeded weights) and
# runs it with onyx_run, printing outputs and latency.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ONYX_BUILD_DIR:-$ROOT/build}"
MODEL_DIR="${ONYX_MODEL_DIR:-$BUILD/models}"
MODEL="${1:-resnet50}"
bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh"
"$ROOT/.venv/bin/python" "$ROOT/tests/models/generate.py" --out "$MODEL_DIR" --only "$MODEL"
"$BUILD/onyx_run" "$MODEL_DIR/$MODEL.onnx" --dim batch=1 --dim sequence=128 --repeat 20 --warmup 3
