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


# --- MatMulIntegerToFloat, DynamicQuantizeMatMul ---

def _dynq_u8(a):
    """DynamicQuantizeLinear's uint8 quantization of the whole tensor."""
    lo, hi = min(float(a.min(initial=0)), 0.0), max(float(a.max(initial=0)), 0.0)
    scale = np.float32(1.0) if hi == lo else np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zp = np.float32(np.rint(np.clip(np.float32(0) - np.float32(lo) / scale, 0, 255)))
    q = np.clip(np.rint(a.astype(np.float32) / scale) + zp, 0, 255)
    return q.astype(np.int64) - int(zp), scale


def _int_mm_ref(a_shift, b, bzp, a_scale, b_scale, bias):
    acc = np.matmul(a_shift.astype(np.int64), b.astype(np.int64) - np.asarray(bzp, np.int64))
    y = acc.astype(np.float64) * (np.float32(a_scale) * np.asarray(b_scale, np.float32)).astype(np.float64)
    return y + (bias.astype(np.float64) if bias is not None else 0.0)


_MM_CASES = [
    # A shape, B shape, per-column, zero points, bias
    ((4, 16), (16, 8), False, True, True),
    ((2, 3, 16), (16, 8), True, True, True),
    ((2, 3, 16), (16, 8), True, False, False),
    ((16,), (16, 5), False, True, False),
    ((2, 5, 7), (2, 7, 3), False, False, True),
]


def _int_mm_feeds(rng, ashape, bshape, per_col, zps, bias, atype, btype):
    N = bshape[-1]
    bi = np.iinfo(btype)
    f = {"B": rng.integers(bi.min, bi.max + 1, bshape).astype(btype),
         "bs": (rng.uniform(0.01, 0.05, (N,)) if per_col else np.array(0.02)).astype(np.float32)}
    if zps:
        f["bz"] = rng.integers(bi.min // 2, bi.max // 2 + 1, (N,) if per_col else ()).astype(btype)
    if bias:
        f["bias"] = rng.standard_normal((N,)).astype(np.float32)
    if atype is not None:
        ai = np.iinfo(atype)
        f["A"] = rng.integers(ai.min, ai.max + 1, ashape).astype(atype)
        f["as"] = np.array(0.03, np.float32)
        if zps:
            f["az"] = np.array(ai.min // 2 + 7, atype)
    else:
        f["A"] = rng.uniform(-3, 2, ashape).astype(np.float32)
    return f


@pytest.mark.parametrize("atype,btype", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("ashape,bshape,per_col,zps,bias", _MM_CASES)
def test_matmul_integer_to_float_matches_reference_and_onnxruntime(ashape, bshape, per_col, zps, bias, atype, btype):
    rng = np.random.default_rng(5)
    f = _int_mm_feeds(rng, ashape, bshape, per_col, zps, bias, atype, btype)
    names = ["A", "B", "as", "bs", "az" if zps else "", "bz" if zps else "", "bias" if bias else ""]
    while names[-1] == "":
        names.pop()
    model, feeds = _model("MatMulIntegerToFloat", names, f, inits=("B", "bs", "bz", "bias"))
    (ours,) = _run(rt, model, feeds)
    want = _int_mm_ref(f["A"].astype(np.int64) - int(f.get("az", 0)), f["B"], f.get("bz", 0), f["as"], f["bs"],
                       f.get("bias"))
    # Exact int32 sums times one float scale: a float rounding or two.
    assert ours.dtype == np.float32 and ours.shape == want.shape
    np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-5)
    (theirs,) = _run(ort, model, feeds)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("btype", [np.int8, np.uint8])
@pytest.mark.parametrize("ashape,bshape,per_col,zps,bias", _MM_CASES[:4])
def test_dynamic_quantize_matmul_matches_reference_and_onnxruntime(ashape, bshape, per_col, zps, bias, btype):
    rng = np.random.default_rng(9)
    f = _int_mm_feeds(rng, ashape, bshape, per_col, zps, bias, None, btype)
    names = ["A", "B", "bs", "bz" if zps else "", "bias" if bias else ""]
    while names[-1] == "":
        names.pop()
    model, feeds = _model("DynamicQuantizeMatMul", names, f, inits=("B", "bs", "bz", "bias"))
    (ours,) = _run(rt, model, feeds)
    a_shift, a_scale = _dynq_u8(f["A"])
    want = _int_mm_ref(a_shift, f["B"], f.get("bz", 0), a_scale, f["bs"], f.get("bias"))
    np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-5)
    (theirs,) = _run(ort, model, feeds)
    # The same integers; onnxruntime may round a value lying on a
    # quantization half-step the other way (one step of A, a_scale * |B|).
    step = float(a_scale) * float(np.abs(f["bs"]).max()) * 255 * 2
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=step)
    assert np.mean(np.abs(ours - theirs) < 1e-4) > 0.9


def test_int_matmul_to_float_bad_inputs_name_node_and_input():
    rng = np.random.default_rng(1)
    f = _int_mm_feeds(rng, (4, 16), (16, 8), True, True, True, np.uint8, np.int8)
    bad = [
        (dict(f, bs=np.ones(5, np.float32)), ["(b_scale)", "[5]", "8"]),
        (dict(f, bz=np.ones(3, np.int8)), ["(b_zero_point)", "[3]"]),
        (dict(f, bz=np.ones(8, np.uint8)), ["(b_zero_point)", "uint8"]),
        (dict(f, bias=np.ones(7, np.float32)), ["(bias)", "[7]"]),
        # caught at load by the shape rule, which names the shapes
        (dict(f, B=np.ones((15, 8), np.int8)), ["innerdimensions", "[15,8]", "[4,16]"]),
        (dict(f, **{"as": np.ones(2, np.float32)}), ["(a_scale)", "[2]"]),
        (dict(f, bs=np.array([np.inf] * 8, np.float32)), ["(b_scale)", "inf"]),
    ]
    for feeds, parts in bad:
        model, fd = _model("MatMulIntegerToFloat", ["A", "B", "as", "bs", "az", "bz", "bias"], feeds)
        msg = _err(model, fd).replace(" ", "")
        for p in ["cnode", "MatMulIntegerToFloat"] + parts:
            assert p.replace(" ", "") in msg, (p, msg)
    g = _int_mm_feeds(rng, (4, 16), (16, 8), False, False, False, None, np.int8)
    a = g["A"].copy()
    a[1, 2] = np.nan
    model, fd = _model("DynamicQuantizeMatMul", ["A", "B", "bs"], dict(g, A=a))
    msg = _err(model, fd)
    assert "cnode" in msg and "(A)" in msg and "nan" in msg


def test_quantize_dynamic_mlp_saved_by_onnxruntime_optimizer(tmp_path):
    """quantize_dynamic writes DynamicQuantizeLinear + MatMulInteger + Cast + Mul;
    onnxruntime's optimizer fuses those into com.microsoft ops
    (MatMulIntegerToFloat / DynamicQuantizeMatMul) in the model it saves. Both
    models run here and match onnxruntime within the quantization step."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((32, 64)) * 0.2).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((64, 16)) * 0.2).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["h2"]),
             helper.make_node("Relu", ["h2"], ["h3"]), helper.make_node("MatMul", ["h3", "w2"], ["y"])]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], [w1, b1, w2])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    src, q, opt = tmp_path / "mlp.onnx", tmp_path / "mlp_q.onnx", tmp_path / "mlp_q_opt.onnx"
    import onnx
    onnx.save(m, str(src))
    quantize_dynamic(str(src), str(q), weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(opt)
    ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
    ops = {(n.domain, n.op_type) for n in onnx.load(str(opt)).graph.node}
    assert any(d == "com.microsoft" for d, _ in ops), ops
    x = rng.standard_normal((4, 32)).astype(np.float32)
    flt = _run(ort, str(src), {"x": x})[0]
    for path in (q, opt):
        (ours,) = _run(rt, str(path), {"x": x})
        (theirs,) = _run(ort, str(path), {"x": x})
        # One uint8 step of an activation can flip where onnxruntime rounds a
        # half-step differently: bounded by a few quantization steps of y.
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-2)
        assert np.abs(ours - flt).max() < 0.1 * np.abs(flt).max()


# ---------------------------------------------------------------------------
# FusedMatMul: alpha * op(A) x op(B), op swapping the last two dims.

def _np_fused(a, b, alpha, ta, tb):
    if ta and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if tb and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return alpha * np.matmul(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("a_shape,b_shape,ta,tb", [
    ((3, 4), (4, 5), 0, 0), ((4, 3), (4, 5), 1, 0), ((3, 4), (5, 4), 0, 1), ((4, 3), (5, 4), 1, 1),
    ((2, 6, 3, 4), (2, 6, 5, 4), 0, 1),  # attention scores Q x K^T
    ((2, 1, 4, 3), (6, 4, 5), 1, 0),     # broadcast batch dims
    ((4,), (5, 4), 0, 1),                # 1-D A: transA has nothing to swap
    ((2, 3, 4), (5, 4), 0, 1),           # batched A against one transposed B (read in place)
    ((2, 40, 64), (2, 48, 64), 0, 1),    # big enough for the packed SGEMM, B read in place
])
@pytest.mark.parametrize("alpha", [1.0, 0.125])
def test_fused_matmul_matches_onnxruntime(a_shape, b_shape, ta, tb, alpha):
    rng = np.random.default_rng(3)
    feeds = {"A": rng.standard_normal(a_shape).astype(np.float32), "B": rng.standard_normal(b_shape).astype(np.float32)}
    model, f = _model("FusedMatMul", ["A", "B"], feeds, alpha=alpha, transA=ta, transB=tb)
    (got,) = _run(rt, model, f)
    want = _np_fused(feeds["A"], feeds["B"], alpha, ta, tb)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # float32 GEMM against a double product
    (ort_y,) = _run(ort, model, f)
    assert got.shape == ort_y.shape
    np.testing.assert_allclose(got, ort_y, rtol=1e-5, atol=1e-5)


def test_fused_matmul_float16_through_float():
    rng = np.random.default_rng(4)
    feeds = {"A": rng.standard_normal((2, 3, 8)).astype(np.float16), "B": rng.standard_normal((2, 5, 8)).astype(np.float16)}
    model, f = _model("FusedMatMul", ["A", "B"], feeds, alpha=0.5, transB=1)
    (got,) = _run(rt, model, f)
    assert got.dtype == np.float16
    want = _np_fused(feeds["A"], feeds["B"], 0.5, 0, 1)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)  # one float16 rounding


def test_fused_matmul_bad_inputs_name_the_node():
    feeds = {"A": np.zeros((3, 4), np.float32), "B": np.zeros((3, 5), np.float32)}
    model, f = _model("FusedMatMul", ["A", "B"], feeds, transA=0)
    msg = _err(model, f)
    assert "cnode" in msg and "FusedMatMul" in msg, msg
    model, f = _model("FusedMatMul", ["A", "B"], {"A": np.zeros((2, 3, 4), np.float32),
                                                  "B": np.zeros((2, 4, 5), np.float32)}, transBatchA=1)
    msg = _err(model, f)
    assert "transBatchA" in msg and "cnode" in msg, msg
