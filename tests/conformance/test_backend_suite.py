"""The whole ONNX backend test suite of the pinned onnx, run through onyxruntime.backend.

Every `_cpu` test of the node, simple, pytorch-converted and pytorch-operator
sets is collected (only the model-zoo set, which downloads models, stays out).
Nothing is filtered by operator: a test whose operator we lack fails like any
other. Tests that fail for a known reason are listed with that reason in
expected_failures.txt and run as expected failures; a listed test that passes
fails the suite (strict xfail), so the list cannot go stale silently.

The run ends with one line, `conformance: P passed of T (X%)`, where T counts
every collected test and an expected failure counts as not passed.

ONYX_CONFORMANCE_BACKEND=onnxruntime runs the same tests on onnxruntime with no
expected failures (tests/bench/conformance_onnxruntime.py prints that figure).
ONYX_CONFORMANCE_DEVICE=CUDA runs the `_cuda` variants instead (the backend on
CUDAExecutionProvider, nodes without a CUDA kernel on the CPU), with the same
list of expected failures; tests/cuda/device_check.sh runs it on a GPU machine.
ONYX_CONFORMANCE_NO_XFAIL=1 runs the listed tests as ordinary ones, to see their
current errors when revising the list (tests/conformance/update_expected_failures.py).
"""

import importlib
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expected import EXPECTED_FAILURES_FILE, read_expected_failures  # noqa: E402

with warnings.catch_warnings():
    # onnx's test-case generators print numpy warnings while building their
    # reference data; they say nothing about the backend.
    warnings.simplefilter("ignore")
    from onnx.backend.test import BackendTest

BACKEND_NAME = os.environ.get("ONYX_CONFORMANCE_BACKEND", "onyxruntime")
backend = importlib.import_module(BACKEND_NAME + ".backend")

# BackendTest's classes, by the suite name the summary prints.
SUITES = {
    "OnnxBackendNodeModelTest": "node",
    "OnnxBackendSimpleModelTest": "simple",
    "OnnxBackendPyTorchConvertedModelTest": "pytorch-converted",
    "OnnxBackendPyTorchOperatorModelTest": "pytorch-operator",
}


DEVICE_SUFFIX = "_cuda" if os.environ.get("ONYX_CONFORMANCE_DEVICE", "CPU").upper() == "CUDA" else "_cpu"

_backend_test = BackendTest(backend, __name__)
SUITE_OF_TEST = {}
for _cls_name, _suite in SUITES.items():
    for _name in vars(_backend_test.test_cases[_cls_name]):
        if _name.startswith("test_") and _name.endswith(DEVICE_SUFFIX):
            SUITE_OF_TEST[_name] = _suite
SELECTED = sorted(SUITE_OF_TEST)
_backend_test.include("^(%s)$" % "|".join(re.escape(n) for n in SELECTED))

EXPECTED_FAILURES = {}
if BACKEND_NAME == "onyxruntime":
    EXPECTED_FAILURES = read_expected_failures(EXPECTED_FAILURES_FILE)
    if DEVICE_SUFFIX != "_cpu":
        EXPECTED_FAILURES = {n[: -len("_cpu")] + DEVICE_SUFFIX: why for n, why in EXPECTED_FAILURES.items()}
    _stale = sorted(set(EXPECTED_FAILURES) - set(SELECTED))
    if _stale:
        raise ValueError("expected_failures.txt names tests the suite does not have: %s" % ", ".join(_stale))
    if EXPECTED_FAILURES and os.environ.get("ONYX_CONFORMANCE_NO_XFAIL", "") in ("", "0"):
        _backend_test.xfail("^(%s)$" % "|".join(re.escape(n) for n in EXPECTED_FAILURES))

for _cls_name in SUITES:
    _cls = _backend_test.test_cases[_cls_name]
    for _name in [n for n in vars(_cls) if n.startswith("test_") and n not in SUITE_OF_TEST]:
        delattr(_cls, _name)
    globals()[_cls_name] = _cls
del _cls  # pytest would collect the last suite twice under this name


def test_the_whole_suite_is_collected():
    """Guards against a filter silently dropping tests: onnx 1.23.2 has 2024."""
    assert len(SELECTED) >= 2000
    assert set(SUITE_OF_TEST.values()) == set(SUITES.values())
