"""onnx's node conformance tests, run through onyxruntime.backend.

onnx.backend.test.BackendTest drives our backend (prepare + BackendRep.run)
over every onnx node test whose graph uses only operators listed in
IMPLEMENTED_OPS (what providers/cpu registers), in the default domain.
Tests that fail for a known reason are listed, with that reason, in
expected_failures.txt and run as expected failures: a listed test that starts
passing fails the suite, so the list cannot go stale silently.

Only the CPU variant of each test is collected; the other thousands of onnx
tests (operators we lack, CUDA, model zoo downloads) are dropped rather than
reported as skipped.
"""

import os
import re
import warnings

import pytest

with warnings.catch_warnings():
    # onnx's test-case generators print numpy overflow warnings while building
    # their reference data; they say nothing about the backend.
    warnings.simplefilter("ignore")
    from onnx.backend.test import BackendTest
    from onnx.backend.test.loader import load_model_tests

    node_cases = load_model_tests(kind="node")

import onyxruntime.backend as backend

# Operators registered by providers/cpu/<family>/register.cc, by family.
IMPLEMENTED_OPS = {
    "math": [
        "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
        "And", "Or", "Xor", "Not", "Max", "Min", "Sum", "Mean",
        "Abs", "Ceil", "Cos", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "LeakyRelu", "Log", "Neg",
        "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Softplus", "Sqrt", "Tanh",
        "Clip", "Where", "Softmax", "LogSoftmax", "Gemm", "MatMul",
    ],
    "nn": [
        "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "BatchNormalization",
        "LayerNormalization",
    ],
    "reduction": [
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
        "ReduceL2", "ReduceLogSumExp", "ArgMax", "ArgMin",
    ],
    "tensor": [
        "Cast", "Concat", "Constant", "ConstantOfShape", "Expand", "Gather", "Reshape", "Flatten", "Squeeze",
        "Unsqueeze", "Identity", "Dropout", "Shape", "Size", "Slice", "Transpose",
    ],
    "random": [
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial",
    ],
    "sequence": [
        "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength",
        "ConcatFromSequence", "SplitToSequence", "Optional", "OptionalHasElement", "OptionalGetElement",
    ],
}
_FAMILY_OF_OP = {op: fam for fam, ops in IMPLEMENTED_OPS.items() for op in ops}
# Ops keyed by their name as it appears in test names ("reduce_sum" -> "reducesum").
_OPS_BY_KEY = sorted(((op.lower(), op) for op in _FAMILY_OF_OP), key=lambda kv: -len(kv[0]))

EXPECTED_FAILURES_FILE = os.path.join(os.path.dirname(__file__), "expected_failures.txt")


def _ops_of(case):
    return [(n.domain, n.op_type) for n in case.model.graph.node]


def _selected(case):
    ops = _ops_of(case)
    return bool(ops) and all(domain in ("", "ai.onnx") and op in _FAMILY_OF_OP for domain, op in ops)


def _family(case):
    # An "_expanded" test spells one operator out in several: attribute it to
    # the operator its name is about, not to whatever node comes first.
    key = case.name[len("test_"):].replace("_", "")
    for op_key, op in _OPS_BY_KEY:
        if key.startswith(op_key):
            return _FAMILY_OF_OP[op]
    return _FAMILY_OF_OP[_ops_of(case)[0][1]]


def _read_expected_failures(path):
    """{test name: reason} from lines 'test_name  # reason'."""
    expected = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            body, _, reason = line.partition("#")
            name = body.strip()
            if not name:
                continue
            if not reason.strip():
                raise ValueError("%s:%d: %s has no '# reason'" % (path, lineno, name))
            expected[name] = reason.strip()
    return expected


SELECTED = sorted(case.name + "_cpu" for case in node_cases if _selected(case))
FAMILY_OF_TEST = {case.name + "_cpu": _family(case) for case in node_cases if _selected(case)}
EXPECTED_FAILURES = _read_expected_failures(EXPECTED_FAILURES_FILE)

_stale = sorted(set(EXPECTED_FAILURES) - set(SELECTED))
if _stale:
    raise ValueError("expected_failures.txt names tests that are not selected (renamed, or the operator left "
                     "IMPLEMENTED_OPS?): %s" % ", ".join(_stale))

_backend_test = BackendTest(backend, __name__)
_backend_test.include("^(%s)$" % "|".join(re.escape(n) for n in SELECTED))
# ONYX_CONFORMANCE_NO_XFAIL=1 runs the listed tests as ordinary ones, to see
# their current errors when revising the list.
if EXPECTED_FAILURES and os.environ.get("ONYX_CONFORMANCE_NO_XFAIL", "") in ("", "0"):
    _backend_test.xfail("^(%s)$" % "|".join(re.escape(n) for n in EXPECTED_FAILURES))

OnnxBackendNodeModelTest = _backend_test.test_cases["OnnxBackendNodeModelTest"]
for _name in [n for n in vars(OnnxBackendNodeModelTest) if n.startswith("test_") and n not in FAMILY_OF_TEST]:
    delattr(OnnxBackendNodeModelTest, _name)


def test_selection_is_not_empty():
    """Guards against a filter bug silently selecting nothing."""
    assert len(SELECTED) > 100
    assert set(FAMILY_OF_TEST.values()) == set(IMPLEMENTED_OPS)
