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


# --- SkipLayerNormalization ---

def _skip_ln_ref(x, skip, gamma, beta, bias, eps):
    s = x.astype(np.float64) + skip.astype(np.float64) + (bias.astype(np.float64) if bias is not None else 0.0)
    mean = s.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(((s - mean) ** 2).mean(-1, keepdims=True) + eps)
    y = (s - mean) * inv * gamma.astype(np.float64) + (beta.astype(np.float64) if beta is not None else 0.0)
    return [y, mean, inv, s]


_SLN_CASES = [
    # input shape, skip shape, beta, bias, outputs
    ((2, 5, 64), (2, 5, 64), True, True, 4),
    ((2, 5, 64), (1, 5, 64), True, False, 4),
    ((2, 5, 64), (5, 64), False, True, 3),
    ((7, 33), (7, 33), True, True, 2),
    ((3, 4, 768), (3, 4, 768), True, True, 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("xs,ss,beta,bias,n_out", _SLN_CASES)
def test_skip_layer_norm_matches_reference_and_onnxruntime(xs, ss, beta, bias, n_out, dtype):
    rng = np.random.default_rng(11)
    H = xs[-1]
    f = {"X": (rng.standard_normal(xs) * 3 + 1).astype(dtype), "S": rng.standard_normal(ss).astype(dtype),
         "G": rng.uniform(0.5, 1.5, (H,)).astype(dtype)}
    if beta:
        f["Be"] = rng.standard_normal((H,)).astype(dtype)
    if bias:
        f["Bi"] = rng.standard_normal((H,)).astype(dtype)
    names = ["X", "S", "G", "Be" if beta else "", "Bi" if bias else ""]
    while names[-1] == "":
        names.pop()
    model, feeds = _model("SkipLayerNormalization", names, f, n_out=n_out, epsilon=1e-5)
    ours = _run(rt, model, feeds)
    theirs = _run(ort, model, feeds)
    want = _skip_ln_ref(f["X"], f["S"], f["G"], f.get("Be"), f.get("Bi"), 1e-5)
    stat_shape = xs[:-1] + (1,)
    # float: float32 sums of up to 768 terms, ~1e-6 relative. float16: the
    # outputs are rounded to half (2^-11 relative) of values up to ~5.
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=4e-3, atol=8e-3)
    for i in range(n_out):
        want_shape = stat_shape if i in (1, 2) else xs
        want_type = np.float32 if i in (1, 2) else dtype
        assert ours[i].shape == want_shape and ours[i].dtype == want_type, i
        np.testing.assert_allclose(ours[i].astype(np.float64), want[i], **tol, err_msg="output %d" % i)
        np.testing.assert_allclose(ours[i].astype(np.float64), theirs[i].astype(np.float64), **tol,
                                   err_msg="output %d vs onnxruntime" % i)


def test_skip_layer_norm_declared_output_types():
    x = np.ones((2, 3, 4), np.float32)
    f = {"X": x, "S": x, "G": np.ones(4, np.float32)}
    model, _ = _model("SkipLayerNormalization", ["X", "S", "G"], f, n_out=4)
    outs = rt.InferenceSession(model, providers=["CPUExecutionProvider"]).get_outputs()
    assert [o.type for o in outs] == ["tensor(float)"] * 4
    assert [list(o.shape) for o in outs] == [[2, 3, 4], [2, 3, 1], [2, 3, 1], [2, 3, 4]]


def test_skip_layer_norm_bad_inputs_name_node_and_input():
    x = np.ones((2, 3, 4), np.float32)
    g = np.ones(4, np.float32)
    cases = [
        ({"X": x, "S": np.ones((2, 2, 4), np.float32), "G": g}, ["X", "S", "G"], ["(skip)", "[2,2,4]"]),
        ({"X": x, "S": x, "G": np.ones(5, np.float32)}, ["X", "S", "G"], ["(gamma)", "[5]", "4"]),
        ({"X": x, "S": x, "G": g, "Be": np.ones((1, 4), np.float32)}, ["X", "S", "G", "Be"], ["(beta)", "[1,4]"]),
        ({"X": x, "S": x, "G": g, "Bi": np.ones(3, np.float32)}, ["X", "S", "G", "", "Bi"], ["(bias)", "[3]"]),
        ({"X": np.ones(4, np.float32), "S": np.ones(4, np.float32), "G": g}, ["X", "S", "G"], ["(input)", "2-D"]),
    ]
    for f, names, parts in cases:
        model, feeds = _model("SkipLayerNormalization", names, f)
        msg = _err(model, feeds).replace(" ", "")
        for p in ["cnode"] + parts:
            assert p.replace(" ", "") in msg, (p, msg)
