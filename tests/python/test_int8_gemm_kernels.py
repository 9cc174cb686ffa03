"""The integer matrix products on int8gemm (providers/cpu/quantization/int8_gemm.h)
at sizes that cross its blocks (64-column panels, 4-value K groups, 4/6-row
tiles, 256-value K passes), with B a constant initializer (packed once when the
session is made) and a graph input (packed per run): MatMulInteger,
QLinearMatMul and ConvInteger against int64 numpy, bit for bit, and against
onnxruntime where it implements the types."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyxruntime as rt

_E = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32,
      np.float32: TensorProto.FLOAT}
RNG = np.random.default_rng(11)
PAIRS = [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8), (np.int8, np.uint8)]


def _q(shape, t):
    info = np.iinfo(t)
    return RNG.integers(info.min, info.max, shape, endpoint=True).astype(t)


def _model(op, feeds, out_type, constants, opset=13, **attrs):
    names = list(feeds)
    node = helper.make_node(op, names, ["y"], name="qnode", **attrs)
    inputs = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], feeds[n].shape) for n in names
              if n not in constants]
    inits = [numpy_helper.from_array(feeds[n], n) for n in names if n in constants]
    g = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString(), {n: v for n, v in feeds.items() if n not in constants}


def _ours(model, feeds):
    sess = rt.InferenceSession(model, providers=["CPUExecutionProvider"])
    first = sess.run(None, feeds)[0]
    again = sess.run(None, feeds)[0]  # the packed weights serve every run
    np.testing.assert_array_equal(first, again)
    return first


def _mm_ref(a, b, za, zb):
    a64 = a.astype(np.int64) - np.asarray(za, np.int64).reshape(-1, 1)
    b64 = b.astype(np.int64) - np.asarray(zb, np.int64).reshape(1, -1)
    return np.matmul(a64, b64)


@pytest.mark.parametrize("ta,tb", PAIRS)
@pytest.mark.parametrize("M,K,N", [(1, 3, 1), (3, 17, 64), (17, 255, 65), (70, 600, 130), (6, 4, 200)])
@pytest.mark.parametrize("const_b", [True, False])
@pytest.mark.parametrize("per_channel", [False, True])
def test_matmul_integer_exact(ta, tb, M, K, N, const_b, per_channel):
    a, b = _q((M, K), ta), _q((K, N), tb)
    za = _q(M if per_channel else (), ta)
    zb = _q(N if per_channel else (), tb)
    feeds = {"a": a, "b": b, "za": za, "zb": zb}
    model, f = _model("MatMulInteger", feeds, TensorProto.INT32, {"b", "zb"} if const_b else set(), opset=10)
    y = _ours(model, f)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, _mm_ref(a, b, np.broadcast_to(za, (M,)), np.broadcast_to(zb, (N,))))


@pytest.mark.parametrize("M,K,N", [(70, 600, 130), (128, 768, 64), (7, 16, 65), (13, 20, 3)])
@pytest.mark.parametrize("za_per_row", [False, True])
@pytest.mark.parametrize("const_b", [True, False])
def test_matmul_integer_symmetric_b(M, K, N, za_per_row, const_b):
    """B int8 with zero point 0 (quantize_dynamic's weights), A uint8: A read in place (K whole groups of 4)
    and A's zero point in the accumulators' starting values (one per tensor) or corrected after (per row)."""
    a, b = _q((M, K), np.uint8), _q((K, N), np.int8)
    za = _q(M if za_per_row else (), np.uint8)
    feeds = {"a": a, "b": b, "za": za, "zb": np.array(0, np.int8)}
    model, f = _model("MatMulInteger", feeds, TensorProto.INT32, {"b", "zb"} if const_b else set(), opset=10)
    np.testing.assert_array_equal(_ours(model, f), _mm_ref(a, b, np.broadcast_to(za, (M,)), np.zeros(N)))


@pytest.mark.parametrize("const_b", [True, False])
def test_matmul_integer_batched_and_broadcast_b(const_b):
    a = _q((2, 3, 5, 70), np.uint8)
    b = _q((3, 70, 66), np.int8)
    feeds = {"a": a, "b": b, "za": np.array(9, np.uint8), "zb": np.array(-4, np.int8)}
    model, f = _model("MatMulInteger", feeds, TensorProto.INT32, {"b"} if const_b else set(), opset=10)
    y = _ours(model, f)
    ref = np.matmul(a.astype(np.int64) - 9, b.astype(np.int64) + 4)
    np.testing.assert_array_equal(y, ref)
    if not const_b:
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(y, sess.run(None, f)[0])


@pytest.mark.parametrize("ta,tb", PAIRS)
@pytest.mark.parametrize("const_b", [True, False])
def test_qlinear_matmul_matches_onnxruntime(ta, tb, const_b):
    M, K, N = 37, 300, 90
    a, b = _q((M, K), ta), _q((K, N), tb)
    feeds = {"a": a, "a_scale": np.array(0.02, np.float32), "a_zero_point": _q((), ta),
             "b": b, "b_scale": np.array(0.01, np.float32), "b_zero_point": _q((), tb),
             "y_scale": np.array(3.0, np.float32), "y_zero_point": _q((), ta)}
    model, f = _model("QLinearMatMul", feeds, _E[ta], {"b", "b_scale", "b_zero_point"} if const_b else set(),
                      opset=10)
    y = _ours(model, f)
    acc = _mm_ref(a, b, np.full(M, feeds["a_zero_point"]), np.full(N, feeds["b_zero_point"]))
    mult = np.float32(0.02) * np.float32(0.01) / np.float32(3.0)
    info = np.iinfo(ta)
    # Requantized in float as onnxruntime does: float(acc) * mult rounded to float.
    ref = np.clip(np.rint(acc.astype(np.float32) * mult) + int(feeds["y_zero_point"]), info.min, info.max).astype(ta)
    np.testing.assert_array_equal(y, ref)
    try:
        theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, f)[0]
    except Exception:  # onnxruntime lacks some type pairs
        return
    np.testing.assert_array_equal(y, theirs)


@pytest.mark.parametrize("tx,tw", PAIRS)
@pytest.mark.parametrize("shape", [
    dict(xs=(2, 24, 9, 10), ws=(70, 24, 3, 3), pads=[1, 1, 1, 1]),                 # K = 216, 90 positions
    dict(xs=(1, 300, 5, 5), ws=(3, 300, 1, 1)),                                     # pointwise, K = 300
    dict(xs=(1, 12, 11, 11), ws=(12, 4, 3, 3), group=3, strides=[2, 2], pads=[2, 1, 0, 1]),
])
def test_conv_integer_exact(tx, tw, shape):
    x, w = _q(shape["xs"], tx), _q(shape["ws"], tw)
    zx, zw = _q((), tx), _q((), tw)
    attrs = {k: v for k, v in shape.items() if k not in ("xs", "ws")}
    feeds = {"x": x, "w": w, "x_zero_point": zx, "w_zero_point": zw}
    model, f = _model("ConvInteger", feeds, TensorProto.INT32, {"w", "w_zero_point"}, opset=10, **attrs)
    y = _ours(model, f)
    # Reference: float64 convolution of the exact differences, padding = zero point.
    group = attrs.get("group", 1)
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides = attrs.get("strides", [1, 1])
    xd = np.pad(x.astype(np.int64) - int(zx), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    wd = w.astype(np.int64) - int(zw)
    N, C, H, W = xd.shape
    M, Cg, kh, kw = wd.shape
    oh, ow = (H - kh) // strides[0] + 1, (W - kw) // strides[1] + 1
    ref = np.zeros((N, M, oh, ow), np.int64)
    Mg = M // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xd[:, g * Cg:(g + 1) * Cg, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
                ref[:, g * Mg:(g + 1) * Mg] += np.einsum("nchw,mc->nmhw", patch, wd[g * Mg:(g + 1) * Mg, :, i, j])
    np.testing.assert_array_equal(y, ref)
