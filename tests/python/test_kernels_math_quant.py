"""CPU kernels for math, bitwise, quantization and normalization operators:
trigonometric and hyperbolic functions, IsNaN/IsInf, Bitwise*, BitShift,
PRelu, Hardmax, Det, QuantizeLinear/DequantizeLinear, MatMulInteger,
DynamicQuantizeLinear (a kernel of its own, two vectorized passes),
InstanceNormalization, LpNormalization, LRN. Each model runs through
onyxruntime and is compared with onnx.reference.ReferenceEvaluator and, where
it supports the opset and types, onnxruntime."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt


def _model(node, inputs, outputs, opset):
    graph = helper.make_graph([node], "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 8
    return m


def _vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def _ours(model, feeds):
    return rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _ort_or_none(model):
    # onnxruntime lacks some of these kernels (float16/double trigonometry,
    # BitShift on 16-bit types, newer opsets); the reference still checks those.
    try:
        return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime's own exception types
        if "NOT_IMPLEMENTED" in str(e) or "opset" in str(e).lower():
            return None
        raise


def _check(model, feeds, *, use_ort=True, use_ref=True, rtol=1e-6, atol=1e-6, exact=False):
    ours = _ours(model, feeds)
    refs = [ReferenceEvaluator(model).run(None, feeds)] if use_ref else []
    if use_ort:
        theirs = _ort_or_none(model)
        if theirs is not None:
            refs.append(theirs.run(None, feeds))
    for ref in refs:
        for o, r in zip(ours, ref):
            r = np.asarray(r)
            assert o.shape == r.shape, (o.shape, r.shape)
            assert o.dtype == r.dtype, (o.dtype, r.dtype)
            if exact or o.dtype.kind in "biu" or o.dtype.itemsize == 1:
                np.testing.assert_array_equal(o.view(np.uint8) if o.dtype.itemsize == 1 and o.dtype.kind == "V"
                                              else o, r.view(np.uint8) if r.dtype.itemsize == 1 and r.dtype.kind == "V"
                                              else r)
            else:
                np.testing.assert_allclose(o.astype(np.float64), r.astype(np.float64), rtol=rtol, atol=atol,
                                           equal_nan=True)
    return ours


def _fails_at_run(model, feeds, *words):
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as e:
        sess.run(None, feeds)
    for w in words:
        assert w in str(e.value), str(e.value)
    return str(e.value)


RNG = np.random.default_rng(0)

# --------------------------------------------------------------------------
# Unary trigonometric / hyperbolic functions

_TRIG = {
    "Acos": (7, lambda n: RNG.uniform(-1, 1, n)),
    "Asin": (7, lambda n: RNG.uniform(-1, 1, n)),
    "Atan": (7, lambda n: RNG.uniform(-10, 10, n)),
    "Tan": (7, lambda n: RNG.uniform(-1.5, 1.5, n)),
    "Acosh": (9, lambda n: RNG.uniform(1, 10, n)),
    "Asinh": (9, lambda n: RNG.uniform(-10, 10, n)),
    "Atanh": (9, lambda n: RNG.uniform(-0.99, 0.99, n)),
    "Sinh": (9, lambda n: RNG.uniform(-5, 5, n)),
    "Cosh": (9, lambda n: RNG.uniform(-5, 5, n)),
}


@pytest.mark.parametrize("op", sorted(_TRIG))
@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE),
                                        (np.float16, TensorProto.FLOAT16)])
def test_trig(op, dtype, elem):
    since, gen = _TRIG[op]
    x = gen((3, 4)).astype(dtype)
    for opset in (since, 22):
        m = _model(helper.make_node(op, ["x"], ["y"], name="t"), [_vi("x", elem, [3, 4])], [_vi("y", elem, [3, 4])],
                   opset)
        tol = 1e-3 if dtype == np.float16 else 1e-6
        _check(m, {"x": x}, use_ort=dtype != np.float16 or op in ("Sinh", "Cosh"), rtol=tol, atol=tol)


def test_trig_out_of_domain_gives_nan():
    m = _model(helper.make_node("Acos", ["x"], ["y"]), [_vi("x", TensorProto.FLOAT, [3])],
               [_vi("y", TensorProto.FLOAT, [3])], 7)
    y = _ours(m, {"x": np.array([2.0, np.nan, 1.0], np.float32)})[0]
    assert np.isnan(y[0]) and np.isnan(y[1]) and y[2] == 0


# --------------------------------------------------------------------------
# IsNaN / IsInf

_SPECIALS = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 1e300, -1e300, 3.0])


@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE),
                                        (np.float16, TensorProto.FLOAT16)])
@pytest.mark.parametrize("opset", [10, 13, 20])
def test_isnan(dtype, elem, opset):
    with np.errstate(over="ignore"):
        x = _SPECIALS.astype(dtype)
    m = _model(helper.make_node("IsNaN", ["x"], ["y"]), [_vi("x", elem, [8])], [_vi("y", TensorProto.BOOL, [8])],
               opset)
    _check(m, {"x": x})


@pytest.mark.parametrize("dtype,elem", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)])
@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf(dtype, elem, pos, neg):
    with np.errstate(over="ignore"):
        x = _SPECIALS.astype(dtype)
    m = _model(helper.make_node("IsInf", ["x"], ["y"], detect_positive=pos, detect_negative=neg),
               [_vi("x", elem, [8])], [_vi("y", TensorProto.BOOL, [8])], 10)
    y = _check(m, {"x": x})[0]
    # 1e300 is finite in double and overflows to inf only as float.
    assert y[5] == (dtype == np.float32 and bool(pos))


@pytest.mark.parametrize("op", ["IsNaN", "IsInf"])
def test_classify_float8(op):
    x = np.array([0.0, 1.0, -2.0, np.nan, np.inf, -np.inf], np.float32).astype(ml_dtypes.float8_e5m2)
    m = _model(helper.make_node(op, ["x"], ["y"]), [_vi("x", TensorProto.FLOAT8E5M2, [6])],
               [_vi("y", TensorProto.BOOL, [6])], 20)
    y = _ours(m, {"x": x})[0]
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0]
    np.testing.assert_array_equal(y, ref)


# --------------------------------------------------------------------------
# Bitwise operators and BitShift

_INTS = [(np.int8, TensorProto.INT8), (np.int16, TensorProto.INT16), (np.int32, TensorProto.INT32),
         (np.int64, TensorProto.INT64), (np.uint8, TensorProto.UINT8), (np.uint16, TensorProto.UINT16),
         (np.uint32, TensorProto.UINT32), (np.uint64, TensorProto.UINT64)]


def _ints(dtype, shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype,elem", _INTS)
@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((), (2, 2))])
def test_bitwise_binary(op, dtype, elem, sa, sb):
    m = _model(helper.make_node(op, ["a", "b"], ["c"]), [_vi("a", elem, list(sa)), _vi("b", elem, list(sb))],
               [_vi("c", elem, None)], 18)
    _check(m, {"a": _ints(dtype, sa), "b": _ints(dtype, sb)})


@pytest.mark.parametrize("dtype,elem", _INTS)
def test_bitwise_not(dtype, elem):
    m = _model(helper.make_node("BitwiseNot", ["a"], ["c"]), [_vi("a", elem, [3, 4])], [_vi("c", elem, [3, 4])], 18)
    _check(m, {"a": _ints(dtype, (3, 4))})


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype,elem", _INTS[4:])
def test_bitshift_unsigned(direction, dtype, elem):
    bits = np.dtype(dtype).itemsize * 8
    x = _ints(dtype, (2, 5))
    y = np.array([0, 1, 3, bits - 1, 2], dtype)  # broadcast along the last dim
    m = _model(helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction),
               [_vi("x", elem, [2, 5]), _vi("y", elem, [5])], [_vi("z", elem, [2, 5])], 11)
    _check(m, {"x": x, "y": y})


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_bitshift_opset28_out_of_range_and_signed(dtype):
    bits = np.dtype(dtype).itemsize * 8
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    signed = np.dtype(dtype).kind == "i"
    x = np.array([5, -6, 7, -8, 1, -1] if signed else [5, 6, 7, 8, 1, 255], dtype)
    y = np.array([1, 1, bits, bits + 3, -1 if signed else 0, 2], dtype)
    for direction in ("LEFT", "RIGHT"):
        m = _model(helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction),
                   [_vi("x", elem, [6]), _vi("y", elem, [6])], [_vi("z", elem, [6])], 28)
        z = _ours(m, {"x": x, "y": y})[0]
        expect = []
        for xv, yv in zip(x.tolist(), y.tolist()):
            if yv < 0 or yv >= bits:
                expect.append(-1 if direction == "RIGHT" and xv < 0 else 0)
            elif direction == "LEFT":
                expect.append(np.array(xv << yv).astype(np.int64).astype(dtype).item())
            else:
                expect.append(xv >> yv)
        np.testing.assert_array_equal(z, np.array(expect).astype(dtype))


def test_bitshift_signed_refused_before_opset28():
    m = _model(helper.make_node("BitShift", ["x", "y"], ["z"], direction="LEFT"),
               [_vi("x", TensorProto.INT32, [2]), _vi("y", TensorProto.INT32, [2])],
               [_vi("z", TensorProto.INT32, [2])], 11)
    with pytest.raises(Exception):
        rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def test_bitwise_bad_broadcast_names_node():
    m = _model(helper.make_node("BitwiseAnd", ["a", "b"], ["c"], name="band"),
               [_vi("a", TensorProto.INT32, None), _vi("b", TensorProto.INT32, None)],
               [_vi("c", TensorProto.INT32, None)], 18)
    _fails_at_run(m, {"a": np.zeros((2, 3), np.int32), "b": np.zeros((4,), np.int32)}, "band", "INVALID_ARGUMENT")


# --------------------------------------------------------------------------
# PRelu

@pytest.mark.parametrize("xs,ss", [((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), ()), ((2, 3, 4), (1,)),
                                   ((2, 3, 4), (2, 3, 4))])
@pytest.mark.parametrize("opset", [7, 9, 16])
def test_prelu(xs, ss, opset):
    x = RNG.standard_normal(xs).astype(np.float32)
    s = RNG.standard_normal(ss).astype(np.float32)
    m = _model(helper.make_node("PRelu", ["x", "s"], ["y"]),
               [_vi("x", TensorProto.FLOAT, list(xs)), _vi("s", TensorProto.FLOAT, list(ss))],
               [_vi("y", TensorProto.FLOAT, list(xs))], opset)
    _check(m, {"x": x, "s": s})


@pytest.mark.parametrize("dtype,elem", [(np.int32, TensorProto.INT32), (np.int64, TensorProto.INT64),
                                        (np.float64, TensorProto.DOUBLE), (np.float16, TensorProto.FLOAT16)])
def test_prelu_types(dtype, elem):
    x = (RNG.standard_normal((3, 4)) * 5).astype(dtype)
    s = np.array([2, -3, 1, 0], dtype)
    m = _model(helper.make_node("PRelu", ["x", "s"], ["y"]), [_vi("x", elem, [3, 4]), _vi("s", elem, [4])],
               [_vi("y", elem, [3, 4])], 16)
    _check(m, {"x": x, "s": s}, use_ort=dtype not in (np.int64, np.float16), rtol=1e-3)


def test_prelu_slope_must_broadcast_to_x():
    m = _model(helper.make_node("PRelu", ["x", "s"], ["y"], name="pr"),
               [_vi("x", TensorProto.FLOAT, None), _vi("s", TensorProto.FLOAT, None)],
               [_vi("y", TensorProto.FLOAT, None)], 16)
    _fails_at_run(m, {"x": np.zeros((3,), np.float32), "s": np.zeros((2, 3), np.float32)}, "pr", "input 1")


# --------------------------------------------------------------------------
# Hardmax

@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2])
def test_hardmax(opset, axis):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    x[0, 1, 2] = x[0, 1, 3]  # a tie: the first wins
    attrs = {} if axis is None else {"axis": axis}
    m = _model(helper.make_node("Hardmax", ["x"], ["y"], **attrs), [_vi("x", TensorProto.FLOAT, [2, 3, 4])],
               [_vi("y", TensorProto.FLOAT, [2, 3, 4])], opset)
    # onnx's reference ignores the opset (always per axis, default -1), so
    # opsets 1-12 (flattened at axis, default 1) are checked against onnxruntime.
    y = _check(m, {"x": x}, use_ref=opset >= 13)[0]
    if opset < 13:
        ax = 1 if axis is None else axis % 3
        assert y.reshape(int(np.prod(x.shape[:ax])), -1).sum(axis=1).tolist() == [1.0] * int(np.prod(x.shape[:ax]))


def test_hardmax_ties_pick_first():
    x = np.array([[1, 3, 3, 2]], np.float32)
    m = _model(helper.make_node("Hardmax", ["x"], ["y"]), [_vi("x", TensorProto.FLOAT, [1, 4])],
               [_vi("y", TensorProto.FLOAT, [1, 4])], 13)
    np.testing.assert_array_equal(_check(m, {"x": x})[0], [[0, 1, 0, 0]])


def test_hardmax_bad_axis_names_node():
    m = _model(helper.make_node("Hardmax", ["x"], ["y"], name="hm", axis=0),
               [_vi("x", TensorProto.FLOAT, None)], [_vi("y", TensorProto.FLOAT, None)], 13)
    # Rank 0 input has no axis 0.
    _fails_at_run(m, {"x": np.array(1.0, np.float32)}, "hm")


# --------------------------------------------------------------------------
# Det

@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 2, 2), (1, 1), (5, 5)])
def test_det(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    m = _model(helper.make_node("Det", ["x"], ["y"]), [_vi("x", TensorProto.FLOAT, list(shape))],
               [_vi("y", TensorProto.FLOAT, None)], 11)
    _check(m, {"x": x}, rtol=1e-4, atol=1e-5)


def test_det_singular_and_double():
    x = np.array([[[1, 2], [2, 4]], [[0, 1], [1, 0]]], np.float64)
    m = _model(helper.make_node("Det", ["x"], ["y"]), [_vi("x", TensorProto.DOUBLE, [2, 2, 2])],
               [_vi("y", TensorProto.DOUBLE, [2])], 22)
    np.testing.assert_allclose(_check(m, {"x": x}, use_ort=False)[0], [0.0, -1.0])


def test_det_not_square_names_node_and_input():
    m = _model(helper.make_node("Det", ["x"], ["y"], name="dt"), [_vi("x", TensorProto.FLOAT, None)],
               [_vi("y", TensorProto.FLOAT, None)], 11)
    _fails_at_run(m, {"x": np.zeros((2, 3), np.float32)}, "dt", "input 0", "INVALID_ARGUMENT")


# --------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear

def _q_model(x_elem, x_shape, s_shape, z_elem, opset, out_elem=None, s_elem=TensorProto.FLOAT, **attrs):
    ins = [_vi("x", x_elem, list(x_shape)), _vi("s", s_elem, list(s_shape))]
    names = ["x", "s"]
    if z_elem is not None:
        ins.append(_vi("z", z_elem, list(s_shape)))
        names.append("z")
    out = out_elem if out_elem is not None else (z_elem if z_elem is not None else TensorProto.UINT8)
    return _model(helper.make_node("QuantizeLinear", names, ["y"], name="q", **attrs), ins,
                  [_vi("y", out, list(x_shape))], opset)


def _dq_model(x_elem, x_shape, s_shape, with_z, opset, s_elem=TensorProto.FLOAT, out_elem=None, **attrs):
    ins = [_vi("x", x_elem, list(x_shape)), _vi("s", s_elem, list(s_shape))]
    names = ["x", "s"]
    if with_z:
        ins.append(_vi("z", x_elem, list(s_shape)))
        names.append("z")
    return _model(helper.make_node("DequantizeLinear", names, ["y"], name="dq", **attrs), ins,
                  [_vi("y", out_elem or s_elem, list(x_shape))], opset)


_QINT = [(np.uint8, TensorProto.UINT8, 10), (np.int8, TensorProto.INT8, 10), (np.uint16, TensorProto.UINT16, 21),
         (np.int16, TensorProto.INT16, 21)]


@pytest.mark.parametrize("dtype,elem,since", _QINT)
def test_quantize_per_tensor_ties_and_saturation(dtype, elem, since):
    info = np.iinfo(dtype)
    # Ties (0.5, 1.5, 2.5, -0.5, -1.5) go to even; far values saturate.
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e9, -1e9, 3.2, -7.7, 100.0, -100.0, 0.0], np.float32)
    for opset in sorted({since, 13, 19, 21, 23} - set(range(since))):
        m = _q_model(TensorProto.FLOAT, x.shape, (), elem, opset)
        z = np.array(3 if info.min == 0 else -2, dtype)
        y = _check(m, {"x": x, "s": np.array(1.0, np.float32), "z": z}, use_ort=opset <= 21)[0]
        assert y[5] == info.max and y[6] == info.min


@pytest.mark.parametrize("dtype,elem", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
def test_quantize_8bit_long_runs_match_reference(dtype, elem):
    # Long enough for the vector loops (16 floats at a time) and their tails:
    # ties, values far out of range and random values, against onnx.reference
    # and onnxruntime; infinities saturate and NaN gives the zero point
    # (both undefined in the reference, which casts them to int32).
    rng = np.random.default_rng(3)
    special = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 127.5, 128.5, -128.5, 254.5, 255.5, 1e8, -1e8, 0.0, -0.0],
                       np.float32)
    x = np.concatenate([special, (rng.standard_normal(1000) * 80).astype(np.float32),
                        np.round(rng.standard_normal(300) * 100).astype(np.float32) + 0.5])
    rng.shuffle(x)
    z = np.array(7 if dtype == np.uint8 else -3, dtype)
    m = _q_model(TensorProto.FLOAT, x.shape, (), elem, 13)
    _check(m, {"x": x, "s": np.array(1.0, np.float32), "z": z})
    _check(m, {"x": x, "s": np.array(0.37, np.float32), "z": z})
    xn = x.copy()
    xn[::37] = np.nan
    xn[5::37] = np.inf
    xn[6::37] = -np.inf
    y = _ours(m, {"x": xn, "s": np.array(0.37, np.float32), "z": z})[0]
    info = np.iinfo(dtype)
    assert (y[::37] == z).all() and (y[5::37] == info.max).all() and (y[6::37] == info.min).all()


@pytest.mark.parametrize("dtype,elem", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
def test_dequantize_8bit_long_runs_match_reference(dtype, elem):
    # Every code, in runs long enough for the vector loop and its tail.
    info = np.iinfo(dtype)
    x = np.concatenate([np.arange(info.min, info.max + 1), np.arange(info.max, info.min + 40, -1)]).astype(dtype)
    m = _dq_model(elem, x.shape, (), True, 21)
    for s, z in [(0.37, 7), (1e-3, -3 if info.min < 0 else 200), (3.0, 0)]:
        _check(m, {"x": x, "s": np.array(s, np.float32), "z": np.array(z, dtype)}, exact=True)


@pytest.mark.parametrize("axis", [1, -2, 0, 2])
def test_quantize_dequantize_per_axis(axis):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32) * 50
    n = x.shape[axis]
    s = RNG.uniform(0.1, 1.0, n).astype(np.float32)
    z = RNG.integers(-10, 10, n).astype(np.int8)
    m = _q_model(TensorProto.FLOAT, x.shape, (n,), TensorProto.INT8, 13, axis=axis)
    q = _check(m, {"x": x, "s": s, "z": z})[0]
    for opset in (13, 19):  # onnx's reference has DequantizeLinear from 19 only
        dm = _dq_model(TensorProto.INT8, x.shape, (n,), True, opset, axis=axis)
        _check(dm, {"x": q, "s": s, "z": z}, use_ref=opset >= 19)


@pytest.mark.parametrize("block,axis,xs", [(2, 1, (3, 4)), (3, 1, (3, 7)), (2, 0, (5, 3)), (4, -1, (2, 2, 8))])
def test_quantize_dequantize_blocked(block, axis, xs):
    x = (RNG.standard_normal(xs) * 20).astype(np.float32)
    ss = list(xs)
    ss[axis] = -(-xs[axis] // block)
    s = RNG.uniform(0.1, 1.0, ss).astype(np.float32)
    z = RNG.integers(0, 20, ss).astype(np.uint8)
    m = _q_model(TensorProto.FLOAT, xs, ss, TensorProto.UINT8, 21, axis=axis, block_size=block)
    q = _check(m, {"x": x, "s": s, "z": z})[0]
    dm = _dq_model(TensorProto.UINT8, xs, ss, True, 21, axis=axis, block_size=block)
    _check(dm, {"x": q, "s": s, "z": z})


def test_quantize_blocked_bad_scale_shape_names_node_and_input():
    m = _model(helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="qb", axis=1, block_size=2),
               [_vi("x", TensorProto.FLOAT, None), _vi("s", TensorProto.FLOAT, None)],
               [_vi("y", TensorProto.UINT8, None)], 21)
    _fails_at_run(m, {"x": np.zeros((3, 4), np.float32), "s": np.ones((3, 3), np.float32)}, "qb", "input 1",
                  "INVALID_ARGUMENT")


def test_quantize_per_axis_wrong_length_names_node_and_input():
    m = _model(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="qa", axis=1),
               [_vi("x", TensorProto.FLOAT, None), _vi("s", TensorProto.FLOAT, None), _vi("z", TensorProto.INT8, None)],
               [_vi("y", TensorProto.INT8, None)], 13)
    _fails_at_run(m, {"x": np.zeros((3, 4), np.float32), "s": np.ones(3, np.float32), "z": np.zeros(3, np.int8)},
                  "qa", "input 1")
    _fails_at_run(m, {"x": np.zeros((3, 4), np.float32), "s": np.ones(4, np.float32), "z": np.zeros(2, np.int8)},
                  "qa", "input 2")


def test_quantize_output_dtype_without_zero_point():
    x = np.array([-3.4, 0.5, 1.5, 300.0], np.float32)
    m = _q_model(TensorProto.FLOAT, x.shape, (), None, 21, out_elem=TensorProto.INT16,
                 output_dtype=TensorProto.INT16)
    np.testing.assert_array_equal(_check(m, {"x": x, "s": np.array(0.01, np.float32)})[0],
                                  [-340, 50, 150, 30000])
    m = _q_model(TensorProto.FLOAT, x.shape, (), None, 13)
    np.testing.assert_array_equal(_check(m, {"x": x, "s": np.array(1.0, np.float32)})[0], [0, 0, 2, 255])


def test_quantize_float16_input_and_scale():
    x = (RNG.standard_normal(10) * 10).astype(np.float16)
    m = _q_model(TensorProto.FLOAT16, x.shape, (), TensorProto.INT8, 19, s_elem=TensorProto.FLOAT16)
    _check(m, {"x": x, "s": np.array(0.3, np.float16), "z": np.array(1, np.int8)})


_F8 = [(ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN), (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ),
       (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2), (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ)]


@pytest.mark.parametrize("dtype,elem", _F8)
@pytest.mark.parametrize("saturate", [1, 0])
def test_quantize_float8(dtype, elem, saturate):
    x = np.array([0.0, 1.0, -2.5, 0.3, 1e6, -1e6, 100.0, 1e-9, np.inf, -np.inf], np.float32)
    m = _q_model(TensorProto.FLOAT, x.shape, (), elem, 19, saturate=saturate)
    y = _ours(m, {"x": x, "s": np.array(2.0, np.float32), "z": np.zeros((), dtype)})[0]
    assert y.dtype == dtype
    ref = ReferenceEvaluator(m).run(None, {"x": x, "s": np.array(2.0, np.float32), "z": np.zeros((), dtype)})[0]
    np.testing.assert_array_equal(y.view(np.uint8), ref.view(np.uint8))


@pytest.mark.parametrize("dtype,elem", _F8)
def test_dequantize_float8(dtype, elem):
    x = np.array([0.0, 1.0, -2.5, 0.375, 448.0 if "e4m3" in str(dtype) else 57344.0], np.float32).astype(dtype)
    m = _dq_model(elem, x.shape, (), False, 19)
    _check(m, {"x": x, "s": np.array(0.5, np.float32)}, use_ort=False)


@pytest.mark.parametrize("dtype,elem,since", [
    (ml_dtypes.int4, TensorProto.INT4, 21), (ml_dtypes.uint4, TensorProto.UINT4, 21),
    (ml_dtypes.int2, TensorProto.INT2, 25), (ml_dtypes.uint2, TensorProto.UINT2, 25)],
    ids=["int4", "uint4", "int2", "uint2"])
def test_quantize_dequantize_packed_integers(dtype, elem, since):
    signed = elem in (TensorProto.INT4, TensorProto.INT2)
    # 9 values: the last byte is partly used (two or four per byte).
    x = np.array([-9.0, -8.0, -0.5, 0.5, 1.5, 2.5, 7.0, 8.0, 20.0], np.float32)
    if elem in (TensorProto.INT2, TensorProto.UINT2):
        x = x / 4
    m = _q_model(TensorProto.FLOAT, x.shape, (), elem, since)
    z = np.array(0 if signed else 1, dtype)
    y = _ours(m, {"x": x, "s": np.array(1.0, np.float32), "z": z})[0]
    ref = ReferenceEvaluator(m).run(None, {"x": x, "s": np.array(1.0, np.float32), "z": z})[0]
    np.testing.assert_array_equal(y.astype(np.int32), ref.astype(np.int32))
    dm = _dq_model(elem, x.shape, (), True, since)
    d = _ours(dm, {"x": y, "s": np.array(0.5, np.float32), "z": z})[0]
    np.testing.assert_array_equal(d, (ref.astype(np.float32) - float(z)) * 0.5)


@pytest.mark.parametrize("dtype,elem,since", _QINT + [(np.int32, TensorProto.INT32, 10)])
def test_dequantize_integers(dtype, elem, since):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2], dtype)
    with_z = dtype != np.int32
    feeds = {"x": x, "s": np.array(0.25, np.float32)}
    if with_z:
        feeds["z"] = np.array(1, dtype)
    for opset in sorted({since, 13, 19, 21} - set(range(since))):
        _check(_dq_model(elem, x.shape, (), with_z, opset), feeds, use_ref=opset >= 19)


def test_dequantize_output_dtype():
    x = np.array([0, 10, 255], np.uint8)
    m = _dq_model(TensorProto.UINT8, x.shape, (), False, 23, out_elem=TensorProto.FLOAT16,
                  output_dtype=TensorProto.FLOAT16)
    np.testing.assert_array_equal(_ours(m, {"x": x, "s": np.array(0.5, np.float32)})[0],
                                  np.array([0, 5, 127.5], np.float16))


def test_dequantize_half_scale():
    x = np.array([0, 10, 255], np.uint8)
    m = _dq_model(TensorProto.UINT8, x.shape, (), False, 19, s_elem=TensorProto.FLOAT16)
    _check(m, {"x": x, "s": np.array(0.5, np.float16)})


def test_dequantize_zero_point_type_mismatch_names_node():
    m = _model(helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dqz"),
               [_vi("x", TensorProto.UINT8, None), _vi("s", TensorProto.FLOAT, None), _vi("z", TensorProto.UINT8, None)],
               [_vi("y", TensorProto.FLOAT, None)], 13)
    _fails_at_run(m, {"x": np.zeros((2, 3), np.uint8), "s": np.ones((2,), np.float32), "z": np.zeros(2, np.uint8)},
                  "dqz", "input 1")


# --------------------------------------------------------------------------
# MatMulInteger, DynamicQuantizeLinear

@pytest.mark.parametrize("ta,tb", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
@pytest.mark.parametrize("sa,sb", [((4, 3), (3, 2)), ((2, 4, 3), (3, 5)), ((2, 1, 4, 3), (3, 3, 2)), ((3,), (3, 2)),
                                   ((4, 3), (3,))])
@pytest.mark.parametrize("zp", ["none", "scalar", "vector"])
def test_matmul_integer(ta, tb, sa, sb, zp):
    ea = helper.np_dtype_to_tensor_dtype(np.dtype(ta))
    eb = helper.np_dtype_to_tensor_dtype(np.dtype(tb))
    a = _ints(ta, sa)
    b = _ints(tb, sb)
    ins = [_vi("a", ea, list(sa)), _vi("b", eb, list(sb))]
    names = ["a", "b"]
    feeds = {"a": a, "b": b}
    if zp != "none":
        M = sa[-2] if len(sa) > 1 else 1
        N = sb[-1] if len(sb) > 1 else 1
        za = _ints(ta, (M,) if zp == "vector" and len(sa) == 2 else ())
        zb = _ints(tb, (N,) if zp == "vector" and len(sb) == 2 else ())
        ins += [_vi("za", ea, list(za.shape)), _vi("zb", eb, list(zb.shape))]
        names += ["za", "zb"]
        feeds.update(za=za, zb=zb)
    m = _model(helper.make_node("MatMulInteger", names, ["y"]), ins, [_vi("y", TensorProto.INT32, None)], 10)
    ours = _ours(m, feeds)[0]
    af = a.astype(np.int64) - (feeds["za"].astype(np.int64).reshape(-1, 1) if "za" in feeds and feeds["za"].ndim
                               else feeds.get("za", 0))
    bf = b.astype(np.int64) - feeds.get("zb", np.int64(0)).astype(np.int64)
    np.testing.assert_array_equal(ours, np.matmul(af, bf).astype(np.int32))
    if ta == np.uint8 and zp != "vector":  # onnxruntime: uint8 A only, one-element zero points only
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_array_equal(ours, theirs)


def test_matmul_integer_bad_zero_point_names_node_and_input():
    m = _model(helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"], name="mmi"),
               [_vi("a", TensorProto.UINT8, None), _vi("b", TensorProto.UINT8, None),
                _vi("za", TensorProto.UINT8, None)], [_vi("y", TensorProto.INT32, None)], 10)
    _fails_at_run(m, {"a": np.zeros((4, 3), np.uint8), "b": np.zeros((3, 2), np.uint8), "za": np.zeros(3, np.uint8)},
                  "mmi", "input 2")


def _dql_model(shape):
    m = helper.make_model(helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"], name="dql")], "g",
        [_vi("x", TensorProto.FLOAT, shape)],
        [_vi("y", TensorProto.UINT8, shape), _vi("s", TensorProto.FLOAT, []), _vi("z", TensorProto.UINT8, [])]),
        opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 8
    return m


def test_dynamic_quantize_linear():
    x = np.array([[-3.5, 0.0, 1.2], [2.75, 7.0, -0.1]], np.float32)
    _check(_dql_model([2, 3]), {"x": x}, rtol=1e-6)


# Lengths around the SIMD widths (4, 8, 16 floats) so the vector bodies and
# their tails both run; ranges all positive, all negative and mixed, and
# values exactly halfway between two steps (round half to even).
# 100003: several chunks of the range and quantize passes, split over threads.
@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 33, 1000, 4099, 100003])
@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "halves"])
def test_dynamic_quantize_linear_vector_paths(n, kind):
    if kind == "mixed":
        x = RNG.standard_normal(n).astype(np.float32) * 3
    elif kind == "positive":
        x = RNG.uniform(0.5, 4.0, n).astype(np.float32)
    elif kind == "negative":
        x = -RNG.uniform(0.5, 4.0, n).astype(np.float32)
    else:
        x = (np.arange(n, dtype=np.float32) % 256 - 128) + 0.5  # scale 1: .5 steps tie
        x[0] = -128.0
        x[-1] = 127.0 if n > 1 else x[-1]
    _check(_dql_model([n]), {"x": x}, rtol=1e-6)


@pytest.mark.parametrize("n", [64, 131])
def test_dynamic_quantize_linear_extremes_at_every_position(n):
    """The range pass keeps several accumulators (16 floats each on AVX-512):
    the minimum and the maximum, put at each position in turn, must be found
    in every lane of every accumulator and in the tail."""
    sess = rt.InferenceSession(_dql_model([n]).SerializeToString(), providers=["CPUExecutionProvider"])
    base = RNG.uniform(-1.0, 1.0, n).astype(np.float32)
    for pos in range(n):
        x = base.copy()
        x[pos] = 50.0
        x[(pos * 7 + 3) % n] = -20.0 if (pos * 7 + 3) % n != pos else x[pos]
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        scale = np.float32(np.float32(hi) - np.float32(lo)) / np.float32(255)
        zp = np.clip(np.rint(np.float32(-np.float32(lo) / scale)), 0, 255)
        y, s, z = sess.run(None, {"x": x})
        assert s == scale and z == zp, (pos, s, scale, z, zp)
        want = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(y, want, err_msg="position %d" % pos)


def test_dynamic_quantize_linear_all_zero_scale_one_like_onnxruntime():
    x = np.zeros((3, 5), np.float32)
    y, s, z = _ours(_dql_model([3, 5]), {"x": x})
    ref = ort.InferenceSession(_dql_model([3, 5]).SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    assert (y == 0).all() and s == ref[1] and z == ref[2] == 0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_dynamic_quantize_linear_non_finite_names_index_in_a_later_chunk(bad):
    x = np.ones(100000, np.float32)
    x[77777] = bad
    with pytest.raises(Exception, match="index 77777"):
        _ours(_dql_model([100000]), {"x": x})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_dynamic_quantize_linear_non_finite_names_index(bad):
    x = np.ones(40, np.float32)
    x[23] = bad
    msg = _fails_at_run(_dql_model([40]), {"x": x}, "dql", "DynamicQuantizeLinear", "input 0 (x)", "flat index 23")
    sess = rt.InferenceSession(_dql_model([40]).SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"x": np.ones(40, np.float32)})[2] == 0, msg  # the session stays usable


# --------------------------------------------------------------------------
# InstanceNormalization, LpNormalization, LRN

@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 5), (2, 4)])
@pytest.mark.parametrize("opset", [6, 22])
def test_instance_norm(shape, opset):
    x = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
    C = shape[1]
    m = _model(helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3),
               [_vi("x", TensorProto.FLOAT, list(shape)), _vi("s", TensorProto.FLOAT, [C]),
                _vi("b", TensorProto.FLOAT, [C])], [_vi("y", TensorProto.FLOAT, list(shape))], opset)
    _check(m, {"x": x, "s": RNG.standard_normal(C).astype(np.float32), "b": RNG.standard_normal(C).astype(np.float32)},
           use_ort=opset <= 21 and len(shape) >= 3, rtol=1e-4, atol=1e-5)  # onnxruntime wants rank >= 3


def test_instance_norm_bad_scale_names_node_and_input():
    m = _model(helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="inorm"),
               [_vi("x", TensorProto.FLOAT, None), _vi("s", TensorProto.FLOAT, None), _vi("b", TensorProto.FLOAT, None)],
               [_vi("y", TensorProto.FLOAT, None)], 6)
    _fails_at_run(m, {"x": np.zeros((2, 3, 4), np.float32), "s": np.ones(2, np.float32), "b": np.ones(3, np.float32)},
                  "inorm", "input 1")


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_lp_normalization(p, axis):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    m = _model(helper.make_node("LpNormalization", ["x"], ["y"], p=p, axis=axis),
               [_vi("x", TensorProto.FLOAT, [3, 4])], [_vi("y", TensorProto.FLOAT, [3, 4])], 1)
    # onnx's reference raises x to p without abs (p=1 sums signed values).
    _check(m, {"x": x}, use_ref=p == 2, rtol=1e-5)


def test_lp_normalization_zero_norm_gives_zero():
    m = _model(helper.make_node("LpNormalization", ["x"], ["y"], p=2, axis=1),
               [_vi("x", TensorProto.FLOAT, [2, 3])], [_vi("y", TensorProto.FLOAT, [2, 3])], 1)
    with np.errstate(invalid="ignore"):  # the reference divides before it masks
        y = _check(m, {"x": np.array([[3, 0, 4], [0, 0, 0]], np.float32)})[0]
    np.testing.assert_allclose(y, [[0.6, 0, 0.8], [0, 0, 0]])


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_lrn(size):
    x = RNG.standard_normal((2, 5, 3, 3)).astype(np.float32)
    m = _model(helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.01, beta=0.6, bias=2.0),
               [_vi("x", TensorProto.FLOAT, [2, 5, 3, 3])], [_vi("y", TensorProto.FLOAT, [2, 5, 3, 3])], 13)
    # onnx's reference walks the batch dim instead of channels; onnxruntime
    # takes odd sizes only, so the even one is checked against the formula.
    ours = _check(m, {"x": x}, use_ref=False, use_ort=size % 2 == 1, rtol=1e-5)[0]
    c1, c2 = (size - 1) // 2, -(-(size - 1) // 2)
    sq = np.stack([np.sum(x[:, max(0, c - c1):min(5, c + c2 + 1)] ** 2, axis=1) for c in range(5)], axis=1)
    np.testing.assert_allclose(ours, x / (2.0 + 0.01 / size * sq) ** 0.6, rtol=1e-5)


# --------------------------------------------------------------------------
# LpPool, GlobalLpPool

@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 2], "strides": [2, 1], "p": 3},
    {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "p": 1},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
    {"kernel_shape": [2, 2], "dilations": [2, 1]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
])
def test_lp_pool(attrs):
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    m = _model(helper.make_node("LpPool", ["x"], ["y"], **attrs), [_vi("x", TensorProto.FLOAT, [2, 3, 5, 6])],
               [_vi("y", TensorProto.FLOAT, None)], 18)
    # onnx's reference scales padded windows by kernel size / taps inside.
    _check(m, {"x": x}, use_ref="pads" not in attrs and "auto_pad" not in attrs and "ceil_mode" not in attrs,
           rtol=1e-5, atol=1e-6)


def test_lp_pool_opset1_float_p_and_1d():
    x = RNG.standard_normal((1, 2, 7)).astype(np.float32)
    m = _model(helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3], p=2.0), [_vi("x", TensorProto.FLOAT, [1, 2, 7])],
               [_vi("y", TensorProto.FLOAT, None)], 1)
    y = _ours(m, {"x": x})[0]
    expect = np.sqrt(np.stack([np.sum(x[..., i:i + 3] ** 2, axis=-1) for i in range(5)], axis=-1))
    np.testing.assert_allclose(y, expect, rtol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 6), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool(shape, p):
    x = RNG.standard_normal(shape).astype(np.float32)
    m = _model(helper.make_node("GlobalLpPool", ["x"], ["y"], p=p), [_vi("x", TensorProto.FLOAT, list(shape))],
               [_vi("y", TensorProto.FLOAT, None)], 2)
    # onnx's reference has no GlobalLpPool: onnxruntime and the formula check it.
    y = _check(m, {"x": x}, use_ref=False, rtol=1e-5)[0]
    expect = np.sum(np.abs(x.reshape(shape[0], shape[1], -1).astype(np.float64)) ** p, axis=-1) ** (1.0 / p)
    np.testing.assert_allclose(y.reshape(shape[0], shape[1]), expect, rtol=1e-5)


def test_lp_pool_rank_mismatch_names_node_and_input():
    m = _model(helper.make_node("LpPool", ["x"], ["y"], name="lpp", kernel_shape=[2, 2]),
               [_vi("x", TensorProto.FLOAT, None)], [_vi("y", TensorProto.FLOAT, None)], 18)
    _fails_at_run(m, {"x": np.zeros((1, 2, 5), np.float32)}, "lpp", "input 0")
