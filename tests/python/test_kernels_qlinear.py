"""QLinearMatMul (10, 21), QLinearConv (10) and ConvInteger (10): int8/uint8
data, per-tensor and per-channel scales and zero points, bias, groups, pads,
strides, dilations, auto_pad, 1-D to 3-D convolutions, batch broadcasting,
against onnx.reference.ReferenceEvaluator (exact) and onnxruntime (within one
quantization step, where it has the kernel); bad inputs name node and input."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(11)
_E = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32,
      np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, ml_dtypes.bfloat16: TensorProto.BFLOAT16}


def _model(op, feeds, opset, out_elem, **attrs):
    names = list(feeds)
    node = helper.make_node(op, [n if feeds[n] is not None else "" for n in names], ["y"], name="q", **attrs)
    ins = [helper.make_tensor_value_info(n, _E[v.dtype.type], v.shape) for n, v in feeds.items() if v is not None]
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", out_elem, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for([m.opset_import[0]])
    return m, {n: v for n, v in feeds.items() if v is not None}


def _ours(m, feeds):
    return rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(m, feeds, use_ort=True, use_ref=True):
    y = _ours(m, feeds)
    if use_ref:
        ref = ReferenceEvaluator(m).run(None, feeds)[0]
        assert y.dtype == ref.dtype and y.shape == ref.shape, (y.dtype, ref.dtype, y.shape, ref.shape)
        np.testing.assert_array_equal(y, ref)
    if use_ort:
        try:
            sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime lacks some type combinations
            if "NOT_IMPLEMENTED" not in str(e):
                raise
            return y
        theirs = sess.run(None, feeds)[0]
        assert y.dtype == theirs.dtype and y.shape == theirs.shape
        # onnxruntime rounds the float product its own way: one step at most.
        assert np.abs(y.astype(np.int64) - theirs.astype(np.int64)).max(initial=0) <= 1
    return y


def _q(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def _zp(dtype, n=None):
    lo, hi = (-20, 20) if dtype == np.int8 else (100, 150)
    return RNG.integers(lo, hi, n if n is not None else ()).astype(dtype) if n is not None else \
        np.array(RNG.integers(lo, hi), dtype)


# --------------------------------------------------------------------------
# QLinearMatMul


@pytest.mark.parametrize("ta", [np.uint8, np.int8])
@pytest.mark.parametrize("tb", [np.uint8, np.int8])
@pytest.mark.parametrize("ty", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((4, 8), (8, 5)), ((2, 3, 8), (2, 8, 5)), ((3, 1, 4, 6), (2, 6, 7)),
                                    ((6,), (6, 3)), ((2, 4, 6), (6,))])
def test_qlinear_matmul(ta, tb, ty, shapes):
    sa, sb = shapes
    feeds = {"a": _q(sa, ta), "a_scale": np.array(0.05, np.float32), "a_zero_point": _zp(ta),
             "b": _q(sb, tb), "b_scale": np.array(0.02, np.float32), "b_zero_point": _zp(tb),
             "y_scale": np.array(3.0, np.float32), "y_zero_point": _zp(ty)}
    m, f = _model("QLinearMatMul", feeds, 10, _E[ty])
    _check(m, f)


def test_qlinear_matmul_per_column_b():
    M, K, N = 5, 16, 7
    feeds = {"a": _q((M, K), np.uint8), "a_scale": np.array(0.05, np.float32), "a_zero_point": _zp(np.uint8),
             "b": _q((K, N), np.int8), "b_scale": RNG.uniform(0.01, 0.05, N).astype(np.float32),
             "b_zero_point": np.zeros(N, np.int8), "y_scale": np.array(2.0, np.float32),
             "y_zero_point": _zp(np.uint8)}
    m, f = _model("QLinearMatMul", feeds, 10, TensorProto.UINT8)
    _check(m, f)


def test_qlinear_matmul_per_row_a_and_y():
    # Per-row a and y scales: onnx's reference broadcasts [M] against [N] (it
    # cannot), so the expected values are written out.
    M, K, N = 4, 6, 3
    a, b = _q((M, K), np.uint8), _q((K, N), np.uint8)
    a_s, a_z = RNG.uniform(0.01, 0.1, M).astype(np.float32), RNG.integers(100, 150, M).astype(np.uint8)
    y_s, y_z = RNG.uniform(1, 2, M).astype(np.float32), RNG.integers(100, 150, M).astype(np.uint8)
    b_s, b_z = np.array(0.03, np.float32), np.array(128, np.uint8)
    feeds = {"a": a, "a_scale": a_s, "a_zero_point": a_z, "b": b, "b_scale": b_s, "b_zero_point": b_z,
             "y_scale": y_s, "y_zero_point": y_z}
    m, f = _model("QLinearMatMul", feeds, 10, TensorProto.UINT8)
    y = _ours(m, f)
    acc = (a.astype(np.int64) - a_z[:, None].astype(np.int64)) @ (b.astype(np.int64) - int(b_z))
    mult = (a_s * b_s / y_s).astype(np.float32)
    want = np.clip(np.rint(acc.astype(np.float32) * mult[:, None]) + y_z[:, None], 0, 255).astype(np.uint8)  # float, as onnxruntime
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("st", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_qlinear_matmul_opset21_scale_types(st):
    feeds = {"a": _q((3, 2, 8), np.int8), "a_scale": np.array([0.0625], st), "a_zero_point": np.array([3], np.int8),
             "b": _q((3, 8, 5), np.int8), "b_scale": np.array([0.03125], st), "b_zero_point": np.array([-2], np.int8),
             "y_scale": np.array([0.7], st), "y_zero_point": np.array([5], np.int8)}
    m, f = _model("QLinearMatMul", feeds, 21, TensorProto.INT8)
    # onnxruntime's QLinearMatMul takes float scales only.
    _check(m, f, use_ort=st == np.float32)


def test_qlinear_matmul_large_matches_reference():
    feeds = {"a": _q((64, 256), np.uint8), "a_scale": np.array(0.01, np.float32), "a_zero_point": _zp(np.uint8),
             "b": _q((256, 96), np.int8), "b_scale": np.array(0.004, np.float32), "b_zero_point": _zp(np.int8),
             "y_scale": np.array(0.5, np.float32), "y_zero_point": _zp(np.uint8)}
    _check(*_model("QLinearMatMul", feeds, 10, TensorProto.UINT8))


def _qmm_feeds(**over):
    f = {"a": _q((2, 4), np.uint8), "a_scale": np.array(0.1, np.float32), "a_zero_point": np.array(1, np.uint8),
         "b": _q((4, 3), np.uint8), "b_scale": np.array(0.1, np.float32), "b_zero_point": np.array(1, np.uint8),
         "y_scale": np.array(0.1, np.float32), "y_zero_point": np.array(1, np.uint8)}
    f.update(over)
    return f


def _fails(op, feeds, opset, out_elem, *words, **attrs):
    m, f = _model(op, feeds, opset, out_elem, **attrs)
    sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as e:
        sess.run(None, f)
    for w in ("'q'",) + words:
        assert w in str(e.value), str(e.value)


def test_qlinear_matmul_bad_inputs():
    u8 = TensorProto.UINT8
    _fails("QLinearMatMul", _qmm_feeds(b=_q((5, 3), np.uint8)), 10, u8, "input 0 (a)", "input 3 (b)", "differ")
    _fails("QLinearMatMul", _qmm_feeds(y_scale=np.array(0.0, np.float32)), 10, u8, "input 6 (y_scale)", "> 0")
    _fails("QLinearMatMul", _qmm_feeds(b_scale=np.ones(4, np.float32)), 10, u8, "input 4 (b_scale)", "length 3")
    _fails("QLinearMatMul", _qmm_feeds(a_zero_point=np.ones((2, 2), np.uint8)), 10, u8, "input 2 (a_zero_point)",
           "[2,2]")


# --------------------------------------------------------------------------
# QLinearConv and ConvInteger

_CONV_CASES = [
    dict(xs=(1, 3, 7, 7), ws=(4, 3, 3, 3)),
    dict(xs=(2, 4, 6, 5), ws=(6, 2, 3, 2), group=2, pads=[1, 0, 1, 2], strides=[2, 1]),
    dict(xs=(1, 3, 9, 9), ws=(2, 3, 3, 3), dilations=[2, 2], auto_pad="SAME_UPPER"),
    dict(xs=(1, 2, 8), ws=(3, 2, 3), strides=[2], pads=[1, 1]),
    dict(xs=(1, 2, 4, 4, 4), ws=(2, 2, 2, 2, 2), auto_pad="VALID"),
    dict(xs=(2, 8, 5, 5), ws=(8, 1, 3, 3), group=8, pads=[1, 1, 1, 1]),
    dict(xs=(1, 16, 6, 6), ws=(8, 16, 1, 1)),
]


def _conv_attrs(case):
    return {k: v for k, v in case.items() if k not in ("xs", "ws")}


@pytest.mark.parametrize("case", range(len(_CONV_CASES)))
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv(case, tx, tw, per_channel):
    c = _CONV_CASES[case]
    M = c["ws"][0]
    w_scale = RNG.uniform(0.005, 0.02, M).astype(np.float32) if per_channel else np.array(0.01, np.float32)
    # onnxruntime takes per-channel weights with zero points of 0 only.
    w_zp = np.zeros(M, tw) if per_channel else _zp(tw)
    feeds = {"x": _q(c["xs"], tx), "x_scale": np.array(0.02, np.float32), "x_zero_point": _zp(tx),
             "w": _q(c["ws"], tw), "w_scale": w_scale, "w_zero_point": w_zp,
             "y_scale": np.array(0.3, np.float32), "y_zero_point": _zp(tx),
             "B": RNG.integers(-2000, 2000, M).astype(np.int32)}
    m, f = _model("QLinearConv", feeds, 10, _E[tx], **_conv_attrs(c))
    # onnx's reference expands per-channel scales for 2-D convolutions only;
    # onnxruntime refuses dilations with SAME padding. Each checks the rest.
    _check(m, f, use_ref=not per_channel or len(c["xs"]) == 4, use_ort="dilations" not in c)


def test_qlinear_conv_without_bias_and_per_channel_zero_points():
    M = 3
    feeds = {"x": _q((1, 2, 5, 5), np.uint8), "x_scale": np.array(0.02, np.float32),
             "x_zero_point": np.array(128, np.uint8), "w": _q((M, 2, 3, 3), np.uint8),
             "w_scale": np.array([0.01, 0.02, 0.03], np.float32),
             "w_zero_point": np.array([120, 128, 135], np.uint8), "y_scale": np.array(0.5, np.float32),
             "y_zero_point": np.array(128, np.uint8), "B": None}
    m, f = _model("QLinearConv", feeds, 10, TensorProto.UINT8, pads=[1, 1, 1, 1])
    _check(m, f, use_ort=False)


@pytest.mark.parametrize("case", range(len(_CONV_CASES)))
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8), (np.int8, np.uint8)])
def test_conv_integer(case, tx, tw):
    c = _CONV_CASES[case]
    feeds = {"x": _q(c["xs"], tx), "w": _q(c["ws"], tw), "x_zero_point": _zp(tx), "w_zero_point": _zp(tw)}
    m, f = _model("ConvInteger", feeds, 10, TensorProto.INT32, **_conv_attrs(c))
    _check(m, f, use_ort=tx == np.uint8 and tw == np.uint8 and len(c["xs"]) == 4 and "dilations" not in c)


def test_conv_integer_optional_and_per_channel_zero_points():
    x, w = _q((1, 2, 5, 5), np.uint8), _q((3, 2, 2, 2), np.uint8)
    m, f = _model("ConvInteger", {"x": x, "w": w}, 10, TensorProto.INT32)
    _check(m, f)
    feeds = {"x": x, "w": w, "x_zero_point": np.array(3, np.uint8), "w_zero_point": np.array([1, 2, 3], np.uint8)}
    m, f = _model("ConvInteger", feeds, 10, TensorProto.INT32)
    _check(m, f, use_ort=False)


def test_qlinear_conv_bad_inputs():
    def feeds(**over):
        f = {"x": _q((1, 2, 5, 5), np.uint8), "x_scale": np.array(0.02, np.float32),
             "x_zero_point": np.array(128, np.uint8), "w": _q((3, 2, 3, 3), np.uint8),
             "w_scale": np.array(0.01, np.float32), "w_zero_point": np.array(128, np.uint8),
             "y_scale": np.array(0.5, np.float32), "y_zero_point": np.array(128, np.uint8),
             "B": np.zeros(3, np.int32)}
        f.update(over)
        return f
    u8 = TensorProto.UINT8
    _fails("QLinearConv", feeds(w=_q((3, 3, 3, 3), np.uint8)), 10, u8, "input 0 (x)", "input 3 (w)", "channels")
    _fails("QLinearConv", feeds(B=np.zeros(4, np.int32)), 10, u8, "input 8 (B)", "[4]")
    _fails("QLinearConv", feeds(w_scale=np.ones(2, np.float32)), 10, u8, "input 4 (w_scale)", "length 3")
    _fails("QLinearConv", feeds(y_scale=np.array(-1.0, np.float32)), 10, u8, "input 6 (y_scale)", "> 0")
    _fails("QLinearConv", feeds(x_zero_point=np.array([1, 2], np.uint8)), 10, u8, "input 2 (x_zero_point)")
    _fails("QLinearConv", feeds(x=_q((1, 2, 2, 2), np.uint8)), 10, u8, "smaller than")


def test_conv_integer_bad_inputs():
    i32 = TensorProto.INT32
    _fails("ConvInteger", {"x": _q((1, 2, 5), np.uint8), "w": _q((3, 2, 2, 2), np.uint8)}, 10, i32, "input 0 (x)",
           "input 1 (w)", "rank")
    _fails("ConvInteger", {"x": _q((1, 2, 5, 5), np.uint8), "w": _q((3, 2, 2, 2), np.uint8),
                           "x_zero_point": None, "w_zero_point": np.array([1, 2], np.uint8)}, 10, i32,
           "input 3 (w_zero_point)", "length 3")


def test_conv_integer_sums_stay_exact_past_float_precision():
    # 1000 products of 255 * -255 sum to -65025000, beyond float's 2^24.
    x = np.full((1, 1000, 2, 2), 255, np.uint8)
    w = np.full((2, 1000, 1, 1), -128, np.int8)
    feeds = {"x": x, "w": w, "x_zero_point": np.array(0, np.uint8), "w_zero_point": np.array(127, np.int8)}
    y = _check(*_model("ConvInteger", feeds, 10, TensorProto.INT32), use_ort=False)
    assert (y == -65025000).all()
    feeds = {"x": _q((1, 1000, 3, 3), np.uint8), "w": _q((4, 1000, 2, 2), np.int8),
             "x_zero_point": np.array(7, np.uint8), "w_zero_point": np.array(-3, np.int8)}
    _check(*_model("ConvInteger", feeds, 10, TensorProto.INT32), use_ort=False)


def test_qlinear_matmul_long_k_exact():
    feeds = {"a": _q((3, 1500), np.uint8), "a_scale": np.array(0.01, np.float32), "a_zero_point": _zp(np.uint8),
             "b": _q((1500, 4), np.int8), "b_scale": np.array(0.001, np.float32), "b_zero_point": _zp(np.int8),
             "y_scale": np.array(2.0, np.float32), "y_zero_point": _zp(np.uint8)}
    _check(*_model("QLinearMatMul", feeds, 10, TensorProto.UINT8))
