"""onnxruntime's quantized com.microsoft operators that onnxruntime.quantization
writes in QOperator format (QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QGemm) and the float FusedGemm of its optimizer:
int8 and uint8, each against a numpy model of onnxruntime's formula (float32
arithmetic, round half to even, saturation) and against onnxruntime itself
(within one quantization step: its x86 kernels order a few float operations
differently); bad inputs name the node and the input."""

import os

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

RNG = np.random.default_rng(8)
F32 = np.float32
_E = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
      np.int32: TensorProto.INT32, np.float64: TensorProto.DOUBLE}


def _model(op, inputs, feeds, inits=(), domain="com.microsoft", **attrs):
    """One node `op` named "qnode"; names in `inits` become initializers
    (as onnxruntime.quantization writes scales and zero points); "" skips an
    optional input."""
    node = helper.make_node(op, inputs, ["Y"], name="qnode", domain=domain, **attrs)
    ins = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], feeds[n].shape) for n in dict.fromkeys(inputs)
           if n and n not in inits]
    init = [numpy_helper.from_array(feeds[n], n) for n in dict.fromkeys(inputs) if n in inits]
    g = helper.make_graph([node], "g", ins, [helper.make_empty_tensor_value_info("Y")], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString(), {n: feeds[n] for n in dict.fromkeys(inputs) if n and n not in inits}


def _run(lib, model, feeds):
    return lib.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(model, feeds, want, ort_steps=1):
    """Ours equals the numpy formula exactly and onnxruntime within `ort_steps`."""
    ours = _run(rt, model, feeds)
    assert ours.dtype == want.dtype and ours.shape == want.shape, (ours.dtype, want.dtype, ours.shape, want.shape)
    np.testing.assert_array_equal(ours, want)
    theirs = _run(ort, model, feeds)
    assert theirs.dtype == ours.dtype and theirs.shape == ours.shape
    diff = np.abs(ours.astype(np.int64) - theirs.astype(np.int64)).max(initial=0)
    assert diff <= ort_steps, diff
    return ours


def _err(model, feeds, *words):
    with pytest.raises(Exception) as ei:
        _run(rt, model, feeds)
    for w in ("qnode",) + words:
        assert w in str(ei.value), str(ei.value)


def _q(shape, t):
    info = np.iinfo(t)
    return RNG.integers(info.min, info.max + 1, shape).astype(t)


def _zp(t):
    return np.array(RNG.integers(-10, 10) if t == np.int8 else RNG.integers(118, 138), t)


def _sat(v, t):
    info = np.iinfo(t)
    return np.clip(np.rint(v), info.min, info.max).astype(t)


# --- QLinearAdd, QLinearMul ---

def _binary_ref(op, a, sa, za, b, sb, zb, sc, zc, t):
    a32, b32 = a.astype(F32), b.astype(F32)
    if op == "QLinearAdd":
        rac, rbc = F32(sa / sc), F32(sb / sc)
        fixed = F32(zc) - (rac * F32(za) + rbc * F32(zb))
        v = (fixed + a32 * rac) + b32 * rbc
    else:
        prod = (a.astype(np.int32) - np.int32(za)) * (b.astype(np.int32) - np.int32(zb))
        v = prod.astype(F32) * F32(F32(sa * sb) / sc) + F32(zc)
    return _sat(v, t)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((1, 3, 1), (2, 1, 5)), ((5,), ())])
def test_qlinear_binary(op, t, shapes):
    a, b = _q(shapes[0], t), _q(shapes[1], t)
    sa, sb, sc = F32(0.031), F32(0.017), F32(0.05 if op == "QLinearAdd" else 0.4)
    za, zb, zc = _zp(t), _zp(t), _zp(t)
    feeds = {"a": a, "sa": np.array(sa), "za": za, "b": b, "sb": np.array(sb), "zb": zb,
             "sc": np.array(sc), "zc": zc}
    model, f = _model(op, list(feeds), feeds, inits=("sa", "za", "sb", "zb", "sc", "zc"))
    _check(model, f, _binary_ref(op, a, sa, za, b, sb, zb, sc, zc, t))


def test_qlinear_add_saturates_and_omitted_zero_points():
    a = np.array([120, -128, 0, 127], np.int8)
    b = np.array([120, -128, 1, -1], np.int8)
    feeds = {"a": a, "sa": np.array(F32(1.0)), "b": b, "sb": np.array(F32(1.0)), "sc": np.array(F32(1.0))}
    model, f = _model("QLinearAdd", ["a", "sa", "", "b", "sb", "", "sc", ""], feeds, inits=("sa", "sb", "sc"))
    y = _run(rt, model, f)
    np.testing.assert_array_equal(y, np.array([127, -128, 1, 126], np.int8))
    # onnxruntime's type inference refuses int8 without zero points: compare with explicit zeros.
    z = np.array(0, np.int8)
    feeds.update(za=z, zb=z, zc=z)
    model, f = _model("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], feeds,
                      inits=("sa", "sb", "sc", "za", "zb", "zc"))
    np.testing.assert_array_equal(y, _run(ort, model, f))


def test_qlinear_binary_bad_inputs():
    t = np.uint8
    base = {"a": _q((2, 3), t), "sa": np.array(F32(0.1)), "za": np.array(1, t), "b": _q((2, 3), t),
            "sb": np.array(F32(0.1)), "zb": np.array(1, t), "sc": np.array(F32(0.1)), "zc": np.array(1, t)}
    names = list(base)
    bad = dict(base, b=_q((2, 4), t))
    _err(*_model("QLinearAdd", names, bad), "QLinearAdd", "[2,3]", "[2,4]")
    bad = dict(base, b=_q((2, 3), np.int8), zb=np.array(1, np.int8))
    _err(*_model("QLinearMul", names, bad), "input 3 (B)", "int8")
    bad = dict(base, sc=np.array(F32(0.0)))
    _err(*_model("QLinearAdd", names, bad), "input 6 (C_scale)", "> 0")
    bad = dict(base, sa=np.ones(3, F32))
    _err(*_model("QLinearAdd", names, bad), "input 1 (A_scale)", "scalar")
    bad = dict(base, zb=np.array(1, np.int8))
    _err(*_model("QLinearAdd", names, bad), "input 5 (B_zero_point)", "int8")
    bad = dict(base, sa=np.array(1, np.int32))
    _err(*_model("QLinearAdd", names, bad), "input 1 (A_scale)", "int32")


# --- QLinearSigmoid, QLinearLeakyRelu ---

def _table_ref(op, x, sx, zx, sy, zy, t, alpha=0.01):
    v = F32(sx) * (x.astype(np.int32) - np.int32(zx)).astype(F32)
    if op == "QLinearSigmoid":
        f = (1.0 / (1.0 + np.exp(-v.astype(np.float64)))).astype(F32)
    else:
        f = np.where(v >= 0, v, v * F32(alpha)).astype(F32)
    return _sat(f / F32(sy) + F32(zy), t)


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_qlinear_lookup_ops(op, t):
    x = np.arange(np.iinfo(t).min, np.iinfo(t).max + 1).astype(t).reshape(4, 64)
    sx, zx = F32(0.05), _zp(t)
    sy, zy = (F32(1 / 256), np.array(0 if t == np.uint8 else -128, t)) if op == "QLinearSigmoid" else (F32(0.04), _zp(t))
    attrs = {"alpha": 0.2} if op == "QLinearLeakyRelu" else {}
    feeds = {"x": x, "sx": np.array(sx), "zx": zx, "sy": np.array(sy), "zy": zy}
    model, f = _model(op, list(feeds), feeds, inits=("sx", "zx", "sy", "zy"), **attrs)
    want = _table_ref(op, x, sx, zx, sy, zy, t, alpha=0.2)
    ours = _run(rt, model, f)
    # Sigmoid: our float exp and numpy's double one may straddle a rounding tie.
    assert np.abs(ours.astype(int) - want.astype(int)).max() <= (1 if op == "QLinearSigmoid" else 0)
    theirs = _run(ort, model, f)
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1


def test_qlinear_lookup_bad_inputs():
    t = np.uint8
    feeds = {"x": _q((3,), t), "sx": np.array(F32(0.1)), "zx": np.array(1, t), "sy": np.array(F32(-1.0)),
             "zy": np.array(1, t)}
    _err(*_model("QLinearSigmoid", list(feeds), feeds), "input 3 (Y_scale)", "> 0")
    feeds = dict(feeds, sy=np.array(F32(0.1)), zx=np.array([1, 2], t))
    _err(*_model("QLinearLeakyRelu", list(feeds), feeds), "input 2 (X_zero_point)", "scalar")


# --- QLinearSoftmax ---

def _softmax_ref(x, sx, sy, zy, t, axis, opset):
    x = np.moveaxis(x, axis, -1) if opset >= 13 else x
    shape = x.shape
    d = shape[-1] if opset >= 13 else int(np.prod(shape[axis:]))
    rows = x.reshape(-1, d).astype(np.int32)
    shift = max(0.0, np.log(np.finfo(F32).max / d) - 5.0) / float(sx)
    table = np.exp((np.arange(256, dtype=np.float64) - 255 + shift) * float(sx)).astype(F32)
    mult = F32(np.floor(F32(1.0) / F32(sy)))
    out = np.empty(rows.shape, t)
    for r in range(rows.shape[0]):
        e = table[rows[r] - rows[r].max() + 255]
        s = F32(0)
        for v in e:  # sequential float32 sum, as onnxruntime
            s = F32(s + v)
        out[r] = _sat(np.rint(e * mult / s) + F32(zy), t)
    out = out.reshape(shape)
    return np.moveaxis(out, -1, axis) if opset >= 13 else out


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("shape,axis,opset", [((2, 3, 16), -1, 13), ((2, 5, 4), 1, 13), ((2, 3, 4), 1, 12),
                                              ((4, 12), -1, 11)])
def test_qlinear_softmax(t, shape, axis, opset):
    x = _q(shape, t)
    sx, zx = F32(0.08), _zp(t)
    sy, zy = F32(1 / 256), np.array(0 if t == np.uint8 else -128, t)
    feeds = {"x": x, "sx": np.array(sx), "zx": zx, "sy": np.array(sy), "zy": zy}
    model, f = _model("QLinearSoftmax", list(feeds), feeds, inits=("sx", "zx", "sy", "zy"), axis=axis, opset=opset)
    want = _softmax_ref(x, sx, sy, zy, t, axis if axis >= 0 else axis + len(shape), opset)
    ours = _run(rt, model, f)
    np.testing.assert_array_equal(ours, want)
    # onnxruntime wraps int8 results above 127 (1.0 with zero point -128) to -128; we saturate.
    theirs = _run(ort, model, f)
    ok = np.abs(ours.astype(int) - theirs.astype(int)) <= 1
    if t == np.int8:
        ok |= (ours == 127) & (theirs == -128)
    assert ok.all()


def test_qlinear_softmax_needs_opset_attribute():
    t = np.uint8
    feeds = {"x": _q((2, 3), t), "sx": np.array(F32(0.1)), "zx": np.array(1, t), "sy": np.array(F32(1 / 256)),
             "zy": np.array(0, t)}
    model, f = _model("QLinearSoftmax", list(feeds), feeds, axis=-1)
    with pytest.raises(Exception) as ei:
        _run(rt, model, f)
    assert "opset" in str(ei.value)
    model, f = _model("QLinearSoftmax", list(feeds), feeds, axis=3, opset=13)
    _err(model, f, "axis 3")


# --- QLinearConcat ---

@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_qlinear_concat(t, axis):
    xs = [_q((2, 3, 4), t), _q((2, 3, 4), t), _q((2, 3, 4), t)]
    sy, zy = F32(0.05), _zp(t)
    # The second input is quantized like Y (copied as is); the others are requantized.
    params = [(F32(0.03), _zp(t)), (sy, zy), (F32(0.11), _zp(t))]
    feeds = {"sy": np.array(sy), "zy": zy}
    names = ["sy", "zy"]
    for k, (x, (s, z)) in enumerate(zip(xs, params)):
        feeds.update({"x%d" % k: x, "s%d" % k: np.array(s), "z%d" % k: z})
        names += ["x%d" % k, "s%d" % k, "z%d" % k]
    model, f = _model("QLinearConcat", names, feeds, inits=[n for n in names if not n.startswith("x")], axis=axis)
    parts = [_sat(np.rint((s * (x.astype(np.int32) - np.int32(z)).astype(F32)) / sy) + F32(zy), t) if k != 1 else x
             for k, (x, (s, z)) in enumerate(zip(xs, params))]
    _check(model, f, np.concatenate(parts, axis=axis))


def test_qlinear_concat_bad_inputs():
    t = np.uint8
    feeds = {"sy": np.array(F32(0.1)), "zy": np.array(1, t), "x0": _q((2, 3), t), "s0": np.array(F32(0.1)),
             "z0": np.array(1, t), "x1": _q((3, 3), t), "s1": np.array(F32(0.1)), "z1": np.array(1, t)}
    # Declared shapes: refused when the session loads (shape inference), naming both shapes.
    _err(*_model("QLinearConcat", list(feeds), feeds, axis=1), "differs", "[2,3]", "[3,3]")
    feeds = dict(feeds, x1=_q((2, 3), np.int8), z1=np.array(1, np.int8))
    _err(*_model("QLinearConcat", list(feeds), feeds, axis=1), "inputs 2 and 5", "int8")
    feeds = dict(feeds, x1=_q((2, 3), t), z1=np.array(1, t), s1=np.ones(2, F32))
    _err(*_model("QLinearConcat", list(feeds), feeds, axis=1), "input 6 (X1_scale)", "scalar")


# --- QLinearAveragePool, QLinearGlobalAveragePool ---

def _avgpool_ref(xf, k, s, pads, include_pad):
    n, c, h, w = xf.shape
    ph, pw = pads[0], pads[1]
    oh = (h + pads[0] + pads[2] - k[0]) // s[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow), F32)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - ph, j * s[1] - pw
            h1, w1 = min(h0 + k[0], h), min(w0 + k[1], w)
            hs, ws = max(h0, 0), max(w0, 0)
            acc = np.zeros((n, c), F32)
            for hh in range(hs, h1):
                for ww in range(ws, w1):
                    acc = acc + xf[:, :, hh, ww]
            cnt = k[0] * k[1] if include_pad else (h1 - hs) * (w1 - ws)
            out[:, :, i, j] = acc / F32(cnt)
    return out


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("case", [dict(k=[3, 3], s=[2, 2], pads=[1, 1, 1, 1], include=0),
                                  dict(k=[2, 2], s=[2, 2], pads=[0, 0, 0, 0], include=0),
                                  dict(k=[3, 3], s=[1, 1], pads=[1, 1, 1, 1], include=1)])
def test_qlinear_average_pool(t, case):
    x = _q((2, 3, 7, 7), t)
    sx, zx, sy, zy = F32(0.02), _zp(t), F32(0.015), _zp(t)
    feeds = {"x": x, "sx": np.array(sx), "zx": zx, "sy": np.array(sy), "zy": zy}
    model, f = _model("QLinearAveragePool", list(feeds), feeds, inits=("sx", "zx", "sy", "zy"),
                      kernel_shape=case["k"], strides=case["s"], pads=case["pads"],
                      count_include_pad=case["include"])
    xf = sx * (x.astype(np.int32) - np.int32(zx)).astype(F32)
    avg = _avgpool_ref(xf, case["k"], case["s"], case["pads"], case["include"])
    _check(model, f, _sat(avg / sy + F32(zy), t))


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(t, channels_last):
    x = _q((2, 5, 4, 3) if not channels_last else (2, 4, 3, 5), t)
    sx, zx, sy, zy = F32(0.02), _zp(t), F32(0.004), _zp(t)
    feeds = {"x": x, "sx": np.array(sx), "zx": zx, "sy": np.array(sy), "zy": zy}
    model, f = _model("QLinearGlobalAveragePool", list(feeds), feeds, inits=("sx", "zx", "sy", "zy"),
                      channels_last=channels_last)
    axes = (2, 3) if not channels_last else (1, 2)
    n = 12
    sums = x.astype(np.int64).sum(axis=axes, keepdims=True) - np.int64(zx) * n
    info = np.iinfo(t)
    v = np.clip(sums.astype(F32) * F32(sx / F32(sy * F32(n))), info.min - int(zy), info.max - int(zy))
    _check(model, f, (np.rint(v) + int(zy)).astype(t))


def test_qlinear_pool_bad_inputs():
    t = np.uint8
    feeds = {"x": _q((1, 2, 4, 4), t), "sx": np.array(F32(0.1)), "zx": np.array(1, np.int8),
             "sy": np.array(F32(0.1)), "zy": np.array(1, t)}
    _err(*_model("QLinearGlobalAveragePool", list(feeds), feeds), "input 2 (x_zero_point)", "int8")
    feeds = dict(feeds, zx=np.array(1, t), sy=np.array(F32(0.0)))
    _err(*_model("QLinearAveragePool", list(feeds), feeds, kernel_shape=[2, 2]), "input 3 (y_scale)", "> 0")
    feeds = dict(feeds, sy=np.array(F32(0.1)), x=_q((4, 4), t))
    _err(*_model("QLinearGlobalAveragePool", list(feeds), feeds), "input 0 (X)", "rank")


# --- QGemm ---

def _qgemm_ref(a, sa, za, b, sb, zb, c, sy, zy, alpha, ta, tb):
    A = (a.T if ta else a).astype(np.int64) - int(za)
    B = (b.T if tb else b).astype(np.int64) - zb.astype(np.int64)
    acc = A @ B
    if c is not None:
        acc = acc + c
    mult = F32(alpha) * F32(sa) * sb.astype(F32)
    if sy is not None:
        mult = mult / F32(sy)
    v = acc.astype(F32) * mult
    if zy is None:
        return v.astype(F32)
    info = np.iinfo(zy.dtype)
    return (np.rint(np.clip(v, info.min - int(zy), info.max - int(zy))) + int(zy)).astype(zy.dtype)


@pytest.mark.parametrize("ta,tb", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("trans", [(0, 0), (0, 1), (1, 0)])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("quantized_out", [True, False])
def test_qgemm(ta, tb, trans, per_column, quantized_out):
    M, K, N = 5, 37, 6
    a = _q((K, M) if trans[0] else (M, K), ta)
    b = _q((N, K) if trans[1] else (K, N), tb)
    sa, za = F32(0.02), _zp(ta)
    sb = (RNG.uniform(0.005, 0.02, N) if per_column else np.array(0.01)).astype(F32)
    zb = (np.zeros(N, tb) if per_column else np.array(0, tb)) if tb == np.int8 else \
        (np.full(N, 128, tb) if per_column else np.array(128, tb))
    c = RNG.integers(-2000, 2000, (N,)).astype(np.int32)
    sy, zy = (F32(0.3), _zp(ta)) if quantized_out else (None, None)
    feeds = {"a": a, "sa": np.array(sa), "za": za, "b": b, "sb": sb, "zb": zb, "c": c}
    names = ["a", "sa", "za", "b", "sb", "zb", "c"]
    if quantized_out:
        feeds.update({"sy": np.array(sy), "zy": zy})
        names += ["sy", "zy"]
    model, f = _model("QGemm", names, feeds, inits=[n for n in names if n != "a"], alpha=1.0,
                      transA=trans[0], transB=trans[1])
    want = _qgemm_ref(a, sa, za, b, sb, zb, c, sy, zy, 1.0, trans[0], trans[1])
    if quantized_out:
        _check(model, f, want)
    else:
        ours = _run(rt, model, f)
        np.testing.assert_array_equal(ours, want)
        np.testing.assert_allclose(ours, _run(ort, model, f), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cshape", [(), (1, 6), (5, 1), (5, 6)])
def test_qgemm_bias_shapes_and_alpha(cshape):
    a, b = _q((5, 8), np.uint8), _q((8, 6), np.int8)
    c = RNG.integers(-500, 500, cshape).astype(np.int32)
    feeds = {"a": a, "sa": np.array(F32(0.05)), "za": np.array(130, np.uint8), "b": b, "sb": np.array(F32(0.02)),
             "zb": np.array(0, np.int8), "c": c, "sy": np.array(F32(0.25)), "zy": np.array(120, np.uint8)}
    model, f = _model("QGemm", list(feeds), feeds, inits=("sa", "za", "sb", "zb", "sy", "zy"), alpha=0.5)
    _check(model, f, _qgemm_ref(a, 0.05, 130, b, np.array(F32(0.02)), np.array(0, np.int8), c, F32(0.25),
                                np.array(120, np.uint8), 0.5, 0, 0))


def test_qgemm_bad_inputs():
    a, b = _q((5, 8), np.uint8), _q((8, 6), np.int8)
    base = {"a": a, "sa": np.array(F32(0.05)), "za": np.array(130, np.uint8), "b": b, "sb": np.array(F32(0.02)),
            "zb": np.array(0, np.int8), "c": np.zeros(6, np.int32), "sy": np.array(F32(0.25)),
            "zy": np.array(120, np.uint8)}
    names = list(base)
    _err(*_model("QGemm", names, dict(base, b=_q((7, 6), np.int8))), "input 0 (A)", "input 3 (B)", "[7,6]")
    _err(*_model("QGemm", names, dict(base, sb=np.ones(5, F32))), "input 4 (b_scale)", "length 6")
    _err(*_model("QGemm", names, dict(base, c=np.zeros(6, np.float32))), "input 6 (C)", "int32")
    _err(*_model("QGemm", names, dict(base, c=np.zeros(4, np.int32))), "input 6 (C)", "[5,6]")
    _err(*_model("QGemm", names, dict(base, za=np.array(1, np.int8))), "input 2 (a_zero_point)", "int8")
    _err(*_model("QGemm", names, dict(base, sy=np.array(F32(0.0)))), "input 7 (y_scale)", "> 0")


# --- FusedGemm ---

_ACTS = {
    "Relu": (lambda v, p: np.maximum(v, 0), {}),
    "LeakyRelu": (lambda v, p: np.where(v >= 0, v, v * p["activation_alpha"]), {"activation_alpha": 0.1}),
    "Tanh": (lambda v, p: np.tanh(v), {}),
    "Sigmoid": (lambda v, p: 1 / (1 + np.exp(-v)), {}),
    "HardSigmoid": (lambda v, p: np.clip(v * p["activation_alpha"] + p["activation_beta"], 0, 1),
                    {"activation_alpha": 0.3, "activation_beta": 0.4}),
    "Elu": (lambda v, p: np.where(v >= 0, v, 0.7 * (np.exp(v) - 1)), {"activation_alpha": 0.7}),
    "Softsign": (lambda v, p: v / (1 + np.abs(v)), {}),
}


@pytest.mark.parametrize("act", list(_ACTS))
@pytest.mark.parametrize("trans", [(0, 0), (1, 1)])
def test_fused_gemm(act, trans):
    M, K, N = 4, 9, 5
    a = RNG.standard_normal((K, M) if trans[0] else (M, K)).astype(F32)
    b = RNG.standard_normal((N, K) if trans[1] else (K, N)).astype(F32)
    c = RNG.standard_normal((N,)).astype(F32)
    fn, params = _ACTS[act]
    feeds = {"a": a, "b": b, "c": c}
    model, f = _model("FusedGemm", ["a", "b", "c"], feeds, inits=("b", "c"), alpha=0.7, beta=1.3, transA=trans[0],
                      transB=trans[1], activation=act, **params)
    A = a.T if trans[0] else a
    B = b.T if trans[1] else b
    want = fn(0.7 * (A.astype(np.float64) @ B) + 1.3 * c, params)
    ours = _run(rt, model, f)
    assert ours.dtype == np.float32 and ours.shape == (M, N)
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, _run(ort, model, f), rtol=1e-5, atol=1e-5)


def test_fused_gemm_bad_activation():
    feeds = {"a": np.ones((2, 3), F32), "b": np.ones((3, 2), F32)}
    model, f = _model("FusedGemm", ["a", "b"], feeds, activation="Gelu")
    with pytest.raises(Exception) as ei:
        _run(rt, model, f)
    assert "qnode" in str(ei.value) and "Gelu" in str(ei.value)


# --- QuantizeLinear / DequantizeLinear per-tensor float paths (the QDQ models' hot loop) ---

@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_quantize_linear_per_tensor_ties_saturation_nan(t):
    from onnx.reference import ReferenceEvaluator
    scale = F32(0.5)
    x = np.concatenate([np.arange(-300, 300, 0.25, dtype=F32),  # every tie x / scale = k + 0.5
                        np.array([np.nan, np.inf, -np.inf, 1e30, -1e30], F32),
                        RNG.standard_normal(5000).astype(F32) * 40]).astype(F32)
    zp = _zp(t)
    feeds = {"x": x, "s": np.array(scale), "z": zp}
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="qnode")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", _E[t], x.shape)],
                          [numpy_helper.from_array(np.array(scale), "s"), numpy_helper.from_array(zp, "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    ours = _run(rt, m.SerializeToString(), {"x": x})
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    # (The reference casts to int32 before clipping, so values past int32 wrap there: compared apart.)
    normal = np.abs(x) < 1e9
    np.testing.assert_array_equal(ours[normal], want[normal])
    # NaN quantizes to the zero point; infinities and huge values saturate.
    assert ours[np.isnan(x)][0] == zp
    info = np.iinfo(t)
    assert (ours[x > 1e9] == info.max).all() and (ours[x < -1e9] == info.min).all()
    y = _run(rt, *_model("DequantizeLinear", ["q", "s", "z"], {"q": ours, "s": np.array(scale), "z": zp},
                         inits=("s", "z"), domain=""))
    np.testing.assert_array_equal(y, (ours.astype(F32) - F32(zp)) * scale)


# --- the exact integer product behind MatMulInteger, QLinearMatMul, MatMulIntegerToFloat ---
# (providers/cpu/quantization/int8_gemm.cc: uint8 x int8 with zero points
# applied through row and column sums, on AVX-512 VNNI, AVX2 or portable code;
# ONYX_CPU_ISA caps the path). Every path must give numpy's int64 product.

_INT_MM_SHAPES = [((7, 37), (37, 45)), ((3, 5, 4), (4, 33)), ((2, 1, 9, 130), (3, 130, 17)), ((64,), (64, 70)),
                  ((33, 1030), (1030, 31))]


def _matmul_integer_cases():
    rng = np.random.default_rng(21)
    for ta in (np.uint8, np.int8):
        for tb in (np.uint8, np.int8):
            for sa, sb in _INT_MM_SHAPES:
                ia, ib = np.iinfo(ta), np.iinfo(tb)
                a = rng.integers(ia.min, ia.max + 1, sa).astype(ta)
                b = rng.integers(ib.min, ib.max + 1, sb).astype(tb)
                m = sa[-2] if len(sa) > 1 else 1
                za = rng.integers(ia.min, ia.max + 1, (m,) if len(sa) > 1 else ()).astype(ta)
                zb = rng.integers(ib.min, ib.max + 1, (sb[-1],)).astype(tb)
                yield a, za, b, zb


def _check_matmul_integer_exact():
    for a, za, b, zb in _matmul_integer_cases():
        feeds = {"a": a, "b": b, "za": za, "zb": zb}
        zam = za.astype(np.int64).reshape(-1, 1) if za.ndim else np.int64(za)
        want = np.matmul(a.astype(np.int64) - zam, b.astype(np.int64) - zb.astype(np.int64))
        # B fed at run time, and B a 2-D initializer (packed once when the session is made).
        for inits in (("za", "zb"), ("za", "zb", "b")) if b.ndim == 2 else (("za", "zb"),):
            model, f = _model("MatMulInteger", ["a", "b", "za", "zb"], feeds, inits=inits, domain="")
            ours = _run(rt, model, f)
            assert ours.dtype == np.int32 and ours.shape == want.shape
            np.testing.assert_array_equal(ours, want)


def test_matmul_integer_exact_every_type_and_tail():
    _check_matmul_integer_exact()


@pytest.mark.parametrize("isa", ["avx2", "baseline"])
def test_matmul_integer_exact_on_narrower_paths(isa):
    import os
    import subprocess
    import sys
    # The same onyxruntime package as this process (conftest puts the build's first on sys.path).
    paths = [os.path.dirname(os.path.dirname(os.path.abspath(rt.__file__))), os.path.dirname(os.path.abspath(__file__))]
    code = ("import sys; sys.path[:0] = %r; import test_kernels_qlinear_contrib as t; "
            "t._check_matmul_integer_exact(); print(t.rt.__file__)" % paths)
    env = dict(os.environ, ONYX_CPU_ISA=isa)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == os.path.abspath(rt.__file__), (r.stdout, rt.__file__)


# --- MatMulNBits (blockwise 2/4/8-bit weights, as onnxruntime's MatMulNBitsQuantizer writes) ---

def _nbits_pack(codes, bits):
    """codes [..., n] of `bits` bits -> bytes, low bits first."""
    per = 8 // bits
    pad = (-codes.shape[-1]) % per
    c = np.concatenate([codes, np.zeros(codes.shape[:-1] + (pad,), codes.dtype)], -1).astype(np.uint8)
    c = c.reshape(c.shape[:-1] + (-1, per))
    out = np.zeros(c.shape[:-1], np.uint8)
    for t in range(per):
        out |= (c[..., t] << (bits * t)).astype(np.uint8)
    return out


def _nbits_case(rng, K, N, bits, block, zp_kind, dtype=np.float32):
    kb = (K + block - 1) // block
    codes = rng.integers(0, 2 ** bits, (N, kb * block)).astype(np.uint8)
    codes[:, K:] = 0
    B = _nbits_pack(codes.reshape(N, kb, block), bits)  # [N, kb, blob]
    scales = rng.uniform(0.01, 0.1, (N, kb)).astype(dtype)
    zq = rng.integers(0, 2 ** bits, (N, kb)).astype(np.uint8)
    if zp_kind == "packed":
        zp, zvals = _nbits_pack(zq, bits).reshape(-1), zq.astype(np.float64)
    elif zp_kind == "float":
        zf = rng.uniform(0, 2 ** bits - 1, (N, kb)).astype(dtype)
        zp, zvals = zf.reshape(-1), zf.astype(np.float64)
    else:
        zp, zvals = None, np.full((N, kb), 2.0 ** (bits - 1))
    w = (codes[:, :K].astype(np.float64) - np.repeat(zvals, block, 1)[:, :K]) * \
        np.repeat(scales.astype(np.float64), block, 1)[:, :K]  # [N, K]
    return B, scales.reshape(-1), zp, w


@pytest.mark.parametrize("bits", [4, 8, 2])
@pytest.mark.parametrize("zp_kind", ["packed", "float", "none"])
@pytest.mark.parametrize("shape", [((3, 64), 32, 16), ((2, 5, 100), 48, 32), ((1, 40), 33, 16)])
def test_matmul_nbits(bits, zp_kind, shape):
    ashape, N, block = shape
    K = ashape[-1]
    rng = np.random.default_rng(bits * 7 + len(zp_kind))
    B, scales, zp, w = _nbits_case(rng, K, N, bits, block, zp_kind)
    a = rng.standard_normal(ashape).astype(F32)
    bias = rng.standard_normal(N).astype(F32)
    feeds = {"a": a, "b": B, "s": scales, "bias": bias}
    names = ["a", "b", "s", "", "", "bias"]
    if zp is not None:
        feeds["z"] = zp
        names[3] = "z"
    model, f = _model("MatMulNBits", names, feeds, inits=("b", "s", "z", "bias"), K=K, N=N, bits=bits,
                      block_size=block)
    want = a.astype(np.float64) @ w.T + bias
    ours = _run(rt, model, f)
    assert ours.dtype == np.float32 and ours.shape == want.shape
    # float32 sums of K products of values up to ~100: a few float ulps of the largest output.
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(want).max())))
    try:
        theirs = _run(ort, model, f)
    except Exception as e:  # noqa: BLE001 - onnxruntime's CPU kernel lacks some bit widths
        assert "NOT_IMPLEMENTED" in str(e) or "not supported" in str(e).lower() or "bits" in str(e), str(e)
        return
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_matmul_nbits_float16():
    rng = np.random.default_rng(4)
    K, N, block = 64, 24, 32
    B, scales, zp, w = _nbits_case(rng, K, N, 4, block, "packed", np.float16)
    a = rng.standard_normal((3, K)).astype(np.float16)
    feeds = {"a": a, "b": B, "s": scales, "z": zp}
    model, f = _model("MatMulNBits", ["a", "b", "s", "z"], feeds, inits=("b", "s", "z"), K=K, N=N, bits=4,
                      block_size=block)
    ours = _run(rt, model, f)
    assert ours.dtype == np.float16
    np.testing.assert_allclose(ours.astype(np.float64), a.astype(np.float64) @ w.T, rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(ours.astype(np.float64), _run(ort, model, f).astype(np.float64), rtol=1e-2, atol=1e-2)


def test_matmul_nbits_bad_inputs():
    rng = np.random.default_rng(1)
    B, scales, zp, _ = _nbits_case(rng, 64, 16, 4, 32, "packed")
    base = {"a": rng.standard_normal((2, 64)).astype(F32), "b": B, "s": scales, "z": zp}
    names = ["a", "b", "s", "z"]
    _err(*_model("MatMulNBits", names, dict(base, a=np.ones((2, 60), F32)), K=64, N=16, bits=4, block_size=32),
         "input 0 (A)", "K = 64")
    _err(*_model("MatMulNBits", names, dict(base, s=scales[:-1]), K=64, N=16, bits=4, block_size=32),
         "input 2 (scales)", "32")
    _err(*_model("MatMulNBits", names, dict(base, z=zp[:-1]), K=64, N=16, bits=4, block_size=32),
         "input 3 (zero_points)")
    _err(*_model("MatMulNBits", names, base, K=64, N=16, bits=4, block_size=24), "block_size", "24")
    _err(*_model("MatMulNBits", names, dict(base, b=B[:, :1]), K=64, N=16, bits=4, block_size=32), "input 1 (B)",
         "[16,1,16]")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("b_shape", [(3, 50000), (1,), (3, 1), (50000,)])
def test_qlinear_add_bit_for_bit_with_onnxruntime(dtype, b_shape):
    # Many scale pairs, so that many sums land near a rounding tie: onyx
    # rounds in the order of onnxruntime's kernel (fma on AVX2), not just
    # by the same formula.
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    for trial in range(12):
        a = rng.integers(info.min, info.max + 1, (3, 50000)).astype(dtype)
        b = rng.integers(info.min, info.max + 1, b_shape).astype(dtype)
        params = [np.float32(rng.uniform(0.01, 0.2)), dtype(rng.integers(info.min // 2, info.max // 2)),
                  np.float32(rng.uniform(0.01, 0.2)), dtype(rng.integers(info.min // 2, info.max // 2)),
                  np.float32(rng.uniform(0.05, 0.3)), dtype(rng.integers(info.min // 2, info.max // 2))]
        names = ["as", "az", "bs", "bz", "cs", "cz"]
        inits = [numpy_helper.from_array(np.array(v), n) for n, v in zip(names, params)]
        node = helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                                domain="com.microsoft")
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", t, a.shape),
                                            helper.make_tensor_value_info("b", t, b.shape)],
                              [helper.make_tensor_value_info("c", t, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        data = m.SerializeToString()
        feeds = {"a": a, "b": b}
        ours = rt.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        if os.environ.get("ONYX_CPU_ISA") == "baseline":
            # onyx then follows onnxruntime's SSE2 kernel, this onnxruntime runs its AVX2 one.
            assert np.abs(ours.astype(np.int32) - theirs).max() <= 1
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg="trial %d" % trial)
