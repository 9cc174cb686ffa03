#!/usr/bin/env bash
# One call on a GPU machine (the device machine): checks the CUDA provider
# and prints a small benchmark against onnxruntime-gpu / torch where present.
#
#   bash tests/cuda/device_check.sh            # from the repository root
#
# Needs the build carried from the build machine (build/ with
# build/python/onyxruntime/libonyxruntime_providers_cuda.so) and a Python with
# numpy, onnx, pytest (torch and onnxruntime-gpu optional). cuBLAS comes from
# /usr/local/cuda or torch's nvidia-* pip packages: their lib folders are put
# on ONYX_CUDA_LIB_DIRS below. Writes its logs to $OUT (or /tmp) when set.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${ONYX_DEVICE_PYTHON:-$(command -v python3)}"
LOGS="${OUT:-/tmp}/cuda_device_check"
mkdir -p "$LOGS"
export ONYX_PYTHONPATH="${ONYX_PYTHONPATH:-$ROOT/build/python}"
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
rc=0
echo "== pytest tests/python/test_cuda_provider.py"
"$PY" -m pytest "$ROOT/tests/python/test_cuda_provider.py" -q -p no:cacheprovider -rs 2>&1 | tee "$LOGS/pytest.txt" | tail -30
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
echo "== ONNX backend suite on CUDA (ONYX_CONFORMANCE_DEVICE=CUDA; CPU's expected failures)"
ONYX_CONFORMANCE_DEVICE=CUDA timeout 900 "$PY" -m pytest "$ROOT/tests/conformance" -q -p no:cacheprovider \
  -o xfail_strict=false 2>&1 | tee "$LOGS/conformance_cuda.txt" | grep -E "^conformance:|passed|failed" | tail -3
grep -E "^FAILED" "$LOGS/conformance_cuda.txt" | head -40
echo "== benchmark (onyx CUDA vs onnxruntime CUDA vs torch)"
PYTHONPATH="$ONYX_PYTHONPATH" timeout 300 "$PY" "$ROOT/tests/cuda/bench_cuda.py" 2>&1 | tee "$LOGS/bench.txt" || rc=1
exit $rc
