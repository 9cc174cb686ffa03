"""onnxruntime's com.microsoft contrib operators that its transformer optimizer
and quantization tool write into saved models: each against a numpy model of
the operator (onnx.reference has none of them) and against onnxruntime itself;
bad inputs name the node and the input."""

import math

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

_E = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
      np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32}


def _model(op, inputs, feeds, n_out=1, inits=(), **attrs):
    """One com.microsoft node `op` named "cnode"; inputs named in `inits` are
    initializers, the rest graph inputs; "" skips an optional input."""
    node = helper.make_node(op, inputs, ["Y%d" % i for i in range(n_out)], name="cnode", domain="com.microsoft",
                            **attrs)
    ins = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], feeds[n].shape) for n in inputs
           if n and n not in inits]
    init = [numpy_helper.from_array(feeds[n], n) for n in inputs if n in inits]
    outs = [helper.make_empty_tensor_value_info("Y%d" % i) for i in range(n_out)]
    g = helper.make_graph([node], "g", ins, outs, init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString(), {n: feeds[n] for n in inputs if n and n not in inits}


def _run(lib, model, feeds):
    return lib.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def _err(model, feeds):
    with pytest.raises(Exception) as ei:
        _run(rt, model, feeds)
    return str(ei.value)


# --- Gelu, BiasGelu, FastGelu, QuickGelu ---

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu_ref(op, x, b=None, alpha=1.702):
    z = x.astype(np.float64) + (b.astype(np.float64) if b is not None else 0.0)
    if op in ("Gelu", "BiasGelu"):
        return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))
    if op == "FastGelu":
        return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3)))
    alpha = float(np.float32(alpha))  # the attribute is a float
    return z / (1.0 + np.exp(-alpha * z))


# float: the float kernels use fast_math's erf/tanh/exp (errors ~1e-7
# relative) and onnxruntime MLAS's; a few float ulps apart. float16: one half
# ulp of the result (2^-11 relative) plus rounding of the widened input.
_TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-12),
        np.float16: dict(rtol=2e-3, atol=2e-3)}

_GELU_CASES = [
    ("Gelu", False, {}), ("BiasGelu", True, {}), ("FastGelu", False, {}), ("FastGelu", True, {}),
    ("QuickGelu", False, {}), ("QuickGelu", False, {"alpha": 1.0}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("op,bias,attrs", _GELU_CASES)
def test_gelu_family_matches_reference_and_onnxruntime(op, bias, attrs, dtype):
    rng = np.random.default_rng(7)
    # 3*5*700 elements: several blocks and threads, a bias period that does
    # not divide the block.
    x = rng.uniform(-6, 6, (3, 5, 700)).astype(dtype)
    x.flat[:4] = [0.0, -0.0, 20.0, -20.0]
    feeds = {"X": x}
    names = ["X"]
    if bias:
        feeds["B"] = rng.uniform(-1, 1, (700,)).astype(dtype)
        names.append("B")
    model, f = _model(op, names, feeds, **attrs)
    (ours,) = _run(rt, model, f)
    assert ours.dtype == dtype and ours.shape == x.shape
    want = _gelu_ref(op, x, feeds.get("B"), attrs.get("alpha", 1.702))
    np.testing.assert_allclose(ours.astype(np.float64), want, **_TOL[dtype])
    if dtype == np.float64:
        if op in ("Gelu", "BiasGelu"):
            return  # onnxruntime has no double Gelu/BiasGelu on CPU
        # onnxruntime's double FastGelu/QuickGelu are good to float precision only.
        tol = _TOL[np.float32]
    else:
        tol = _TOL[dtype]
    (theirs,) = _run(ort, model, f)
    np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64), **tol)


def test_gelu_family_empty_and_scalar():
    for op in ("Gelu", "QuickGelu", "FastGelu"):
        for shape in [(0, 4), ()]:
            x = np.full(shape, 0.5, np.float32)
            model, f = _model(op, ["X"], {"X": x})
            (ours,) = _run(rt, model, f)
            assert ours.shape == shape
            np.testing.assert_allclose(ours, _gelu_ref(op, x).astype(np.float32), rtol=1e-5)


def test_gelu_family_bad_bias_names_node_and_input():
    x = np.ones((2, 3, 4), np.float32)
    model, f = _model("BiasGelu", ["X", "B"], {"X": x, "B": np.ones((5,), np.float32)})
    msg = _err(model, f)
    assert "cnode" in msg and "BiasGelu" in msg and "(B)" in msg and "[5]" in msg and "4" in msg
    model, f = _model("FastGelu", ["X", "B"], {"X": x, "B": np.ones((3, 4), np.float32)})
    msg = _err(model, f)
    assert "cnode" in msg and "(bias)" in msg and "[3,4]" in msg.replace(" ", "")
    model, f = _model("FastGelu", ["X", "B"], {"X": np.array(1.0, np.float32),
                                               "B": np.ones((1,), np.float32)})
    msg = _err(model, f)
    assert "cnode" in msg and "scalar" in msg
