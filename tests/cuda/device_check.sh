#!/usr/bin/env bash
# One call on a GPU machine (the device machine): checks the CUDA provider
# and prints a small benchmark against onnxruntime-gpu / torch where present.
#
#   bash tests/cuda/device_check.sh [tests] [conformance] [bench] [bench16]   # default: the first three
#   (tests includes tests/cuda/iobinding_profile.py; bench16: the float16 models)
#
# Each phase has its own time limit (tests 150 s, conformance 200 s, bench
# 240 s; ONYX_DEVICE_T_TESTS / _T_CONF / _T_BENCH override them) so one call
# fits the device machine's 10 minutes per command. ONYX_DEVICE_BENCH_ARGS
# passes arguments to bench_cuda.py (e.g. "--models resnet50 --batches 1").
#
# The device machine has no protobuf, OpenBLAS, ICU... and no package
# registry, so carry the wheel (it bundles those, and the CUDA provider
# library), built on the build machine with:
#   ONYX_BUILD_DIR=$PWD/build ONYX_WHEEL_NO_BUILD=1 .venv/bin/python -m pip wheel --no-deps -w build/dist .
# and cffi for the device's Python 3.12 (it has none) into .whl/:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 -d .whl cffi==2.1.1 pycparser
# then run(carry=["build/dist", ".whl"], command="bash tests/cuda/device_check.sh").
# The wheel is installed (--no-deps) into a temporary folder used as
# ONYX_PYTHONPATH; without build/dist, build/python is used as it is. The
# device's Python (ONYX_DEVICE_PYTHON, default python3) needs numpy, cffi,
# onnx and pytest; torch and onnxruntime-gpu are optional (benchmark peers).
# cuBLAS/cuDNN come from /usr/local/cuda or torch's nvidia-* pip packages:
# their lib folders are put on ONYX_CUDA_LIB_DIRS below. The provider is built
# with CUDA 13 (static runtime): the driver must be r580 or newer (printed
# below; an older one shows as "driver version is insufficient").
# Writes its logs to $OUT (or /tmp) when set.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${ONYX_DEVICE_PYTHON:-$(command -v python3)}"
LOGS="${OUT:-/tmp}/cuda_device_check"
mkdir -p "$LOGS"
WHEEL="$(ls "$ROOT"/build/dist/onyxruntime-*.whl 2>/dev/null | head -1)"
# The device's Python has no cffi: carry its wheels in .whl/ (cp312; see the
# README's "CUDA execution provider") and they are installed beside ours.
EXTRA_WHEELS="$(ls "$ROOT"/.whl/*.whl 2>/dev/null)"
if [ -z "${ONYX_PYTHONPATH:-}" ] && [ -n "$WHEEL" ]; then
  SITE="$(mktemp -d)/site"
  # shellcheck disable=SC2086
  "$PY" -m pip install -q --no-deps --no-index --target "$SITE" "$WHEEL" $EXTRA_WHEELS \
    || { echo "cannot install $WHEEL $EXTRA_WHEELS"; exit 1; }
  export ONYX_PYTHONPATH="$SITE"
fi
export ONYX_PYTHONPATH="${ONYX_PYTHONPATH:-$ROOT/build/python}"
echo "onyxruntime from: $ONYX_PYTHONPATH"
PYTHONPATH="$ONYX_PYTHONPATH" "$PY" -c "import numpy, cffi, onnx, pytest" || { echo "the device Python lacks numpy, cffi, onnx or pytest"; exit 1; }
# torch's bundled CUDA libraries (nvidia/*/lib in site-packages)
NV_DIRS="$("$PY" - <<'PYEOF' 2>/dev/null
import glob, os, site, sys
dirs = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    dirs += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
print(":".join(dirs))
PYEOF
)"
export ONYX_CUDA_LIB_DIRS="${ONYX_CUDA_LIB_DIRS:+$ONYX_CUDA_LIB_DIRS:}$NV_DIRS"
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -3
echo "ONYX_CUDA_LIB_DIRS=$ONYX_CUDA_LIB_DIRS"
echo "== provider availability"
PYTHONPATH="$ONYX_PYTHONPATH" "$PY" - <<'PYEOF'
import onyxruntime as rt
from onyxruntime.capi import _providers
print("available:", rt.get_available_providers())
print("reason if not:", _providers.unavailable_reason("CUDAExecutionProvider"))
PYEOF
PHASES="${*:-tests conformance bench}"
# Per-phase limits (seconds), overridable so one call fits the lease.
T_TESTS="${ONYX_DEVICE_T_TESTS:-150}"; T_CONF="${ONYX_DEVICE_T_CONF:-200}"; T_BENCH="${ONYX_DEVICE_T_BENCH:-240}"
# A hung kernel costs one test, not the phase (pytest-timeout), and the
# conformance suite spreads over the machine's cores (pytest-xdist), where the
# device's Python has them.
PYTEST_EXTRA=()
"$PY" -c "import pytest_timeout" 2>/dev/null && PYTEST_EXTRA+=(-p timeout --timeout=60)
CONF_EXTRA=()
"$PY" -c "import xdist" 2>/dev/null && CONF_EXTRA+=(-n "${ONYX_DEVICE_CONF_WORKERS:-6}")
rc=0
if [[ " $PHASES " == *" tests "* ]]; then
  echo "== pytest tests/python/test_cuda_provider.py"
  timeout "$T_TESTS" "$PY" -m pytest "$ROOT/tests/python/test_cuda_provider.py" -q -p no:cacheprovider -rs \
    "${PYTEST_EXTRA[@]}" 2>&1 \
    | tee "$LOGS/pytest.txt" | tail -30
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  echo "== IOBinding with device inputs and outputs: host copies in a CUDA profile"
  PYTHONPATH="$ONYX_PYTHONPATH" timeout 60 "$PY" "$ROOT/tests/cuda/iobinding_profile.py" 2>&1 | grep -v Warning \
    | tee "$LOGS/iobinding_profile.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
if [[ " $PHASES " == *" conformance "* ]]; then
  echo "== ONNX backend suite on CUDA (ONYX_CONFORMANCE_DEVICE=CUDA; CPU's expected failures)"
  ONYX_CONFORMANCE_DEVICE=CUDA timeout "$T_CONF" "$PY" -m pytest "$ROOT/tests/conformance" -q -p no:cacheprovider \
    -o xfail_strict=false "${PYTEST_EXTRA[@]}" "${CONF_EXTRA[@]}" 2>&1 | tee "$LOGS/conformance_cuda.txt" | grep -E "^conformance:|passed|failed" | tail -3
  grep -E "^FAILED" "$LOGS/conformance_cuda.txt" | head -40
fi
if [[ " $PHASES " == *" bench "* ]]; then
  echo "== benchmark (onyx CUDA vs onnxruntime CUDA vs torch)"
  PYTHONPATH="$ONYX_PYTHONPATH" timeout "$T_BENCH" "$PY" "$ROOT/tests/cuda/bench_cuda.py" ${ONYX_DEVICE_BENCH_ARGS:-} 2>&1 | tee "$LOGS/bench.txt" || rc=1
fi
if [[ " $PHASES " == *" bench16 "* ]]; then
  echo "== benchmark, float16 models"
  PYTHONPATH="$ONYX_PYTHONPATH" timeout 240 "$PY" "$ROOT/tests/cuda/bench_cuda.py" --fp16 2>&1 \
    | tee "$LOGS/bench16.txt" || rc=1
fi
exit $rc
