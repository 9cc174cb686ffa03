"""QLinearConv and ConvInteger where the int8 GEMM's rows are output positions
(providers/cpu/quantization/qlinear_conv.cc: groups of >= 8 input and >= 16
output channels; x channels-last, taps read in place or gathered, w packed at
session creation when constant), on every SIMD path of int8gemm (AVX-512 VNNI,
AVX2, portable; ONYX_CPU_ISA caps it): ConvInteger against int64 numpy bit for
bit, QLinearConv against the float32 requantization of those sums (bit for
bit) and onnx.reference and onnxruntime (a step at most), across 1-3 spatial
dims, strides, dilations, asymmetric pads, groups, channel counts that are and
are not multiples of 4, zero points of 0 and not, int8 and uint8 on both sides,
and w both an initializer and a graph input."""

import itertools
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

_E = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int32: TensorProto.INT32,
      np.float32: TensorProto.FLOAT}

# xs, ws and attributes; all but the last two take the position-row path.
CASES = [
    dict(xs=(2, 16, 7, 9), ws=(20, 16, 3, 3), pads=[1, 1, 1, 1]),                      # taps by address
    dict(xs=(1, 40, 9, 11), ws=(80, 40, 3, 3), pads=[1, 1, 1, 1]),                     # transposes of 16 x 64 blocks
    dict(xs=(1, 12, 11, 10), ws=(70, 12, 3, 2), strides=[2, 1], dilations=[2, 2], pads=[2, 0, 1, 3]),
    dict(xs=(1, 24, 5, 6), ws=(130, 24, 1, 1)),                                         # 1x1, packed rows
    dict(xs=(2, 8, 6, 5), ws=(16, 8, 1, 1)),                                            # 1x1, rows by address
    dict(xs=(1, 32, 6, 6), ws=(40, 16, 3, 3), group=2, pads=[1, 1, 1, 1]),
    dict(xs=(1, 10, 6, 7), ws=(17, 10, 3, 3), pads=[0, 1, 1, 0]),                       # Cg % 4 != 0: gathered
    dict(xs=(2, 16, 13), ws=(16, 16, 3), strides=[2], pads=[1, 2]),                     # 1-D
    dict(xs=(1, 8, 4, 5, 3), ws=(16, 8, 2, 3, 2), pads=[1, 0, 1, 0, 1, 1]),             # 3-D
    dict(xs=(1, 3, 9, 9), ws=(64, 3, 3, 3), strides=[2, 2]),                            # few channels: other path
    dict(xs=(1, 16, 5, 5), ws=(16, 2, 3, 3), group=8, pads=[1, 1, 1, 1]),              # grouped narrow: other path
]
PAIRS = [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8), (np.int8, np.uint8)]
ZP_KINDS = ["zero", "x_only", "tensor", "channel"]  # x_only: w's zero points 0 (the folded correction)


def _q(rng, shape, t):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(t)


def _attrs(case):
    return {k: v for k, v in case.items() if k not in ("xs", "ws")}


def _model(op, feeds, out_type, constants, dynamic=False):
    names = list(feeds)
    inputs = [helper.make_tensor_value_info(n, _E[feeds[n].dtype.type], None if dynamic else feeds[n].shape)
              for n in names if n not in constants]
    inits = [numpy_helper.from_array(feeds[n], n) for n in names if n in constants]
    return names, inputs, inits


def _make(op, feeds, out_type, constants, attrs, dynamic=False):
    names, inputs, inits = _model(op, feeds, out_type, constants, dynamic)
    node = helper.make_node(op, names, ["y"], **attrs)
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", out_type, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, {n: v for n, v in feeds.items() if n not in constants}


def _ours(model, feeds):
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    first = sess.run(None, feeds)[0]
    np.testing.assert_array_equal(first, sess.run(None, feeds)[0])  # packed weights serve every run
    return first


def _conv_int64(x, w, zx, zw, attrs):
    """sum (x - zx) * (w - zw[m]) over each output's window, in int64; padding reads as zx."""
    nd = x.ndim - 2
    group = attrs.get("group", 1)
    strides = attrs.get("strides", [1] * nd)
    dil = attrs.get("dilations", [1] * nd)
    pads = attrs.get("pads", [0] * (2 * nd))
    xd = np.pad(x.astype(np.int64) - np.int64(zx), [(0, 0), (0, 0)] + [(pads[j], pads[j + nd]) for j in range(nd)])
    wd = w.astype(np.int64) - np.asarray(zw, np.int64).reshape((-1,) + (1,) * (nd + 1))
    M, Cg = w.shape[:2]
    ks = w.shape[2:]
    out = [(xd.shape[2 + j] - dil[j] * (ks[j] - 1) - 1) // strides[j] + 1 for j in range(nd)]
    Mg = M // group
    y = np.zeros((x.shape[0], M) + tuple(out), np.int64)
    for g in range(group):
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(slice(tap[j] * dil[j], tap[j] * dil[j] + strides[j] * (out[j] - 1) + 1, strides[j])
                       for j in range(nd))
            patch = xd[(slice(None), slice(g * Cg, (g + 1) * Cg)) + sl]
            wt = wd[(slice(g * Mg, (g + 1) * Mg), slice(None)) + tap]
            y[:, g * Mg:(g + 1) * Mg] += np.einsum("nc...,mc->nm...", patch, wt)
    return y


def _zero_points(rng, kind, t, M):
    if kind in ("zero", "x_only"):
        return np.array(0, t), np.zeros(M, t)
    if kind == "tensor":
        return _q(rng, (), t), None
    return None, _q(rng, (M,), t)


def _check_conv_integer(case, tx, tw, zp_kind, const_w, seed):
    rng = np.random.default_rng(seed)
    c = CASES[case]
    x, w = _q(rng, c["xs"], tx), _q(rng, c["ws"], tw)
    M = c["ws"][0]
    zx = _q(rng, (), tx) if zp_kind != "zero" else np.array(0, tx)
    zw_t, zw_c = _zero_points(rng, zp_kind, tw, M)
    zw = zw_c if zw_c is not None else zw_t
    feeds = {"x": x, "w": w, "x_zero_point": zx, "w_zero_point": zw}
    model, f = _make("ConvInteger", feeds, TensorProto.INT32, {"w", "w_zero_point"} if const_w else {"w_zero_point"},
                     _attrs(c))
    y = _ours(model, f)
    want = _conv_int64(x, w, zx, np.broadcast_to(zw, (M,)), _attrs(c))
    assert y.dtype == np.int32 and y.shape == want.shape
    np.testing.assert_array_equal(y, want)


def _check_qlinear_conv(case, tx, tw, per_channel, const_w, seed, use_ort=True):
    rng = np.random.default_rng(seed)
    c = CASES[case]
    M = c["ws"][0]
    # Per-channel weights with zero points of 0 (onnxruntime's rule); per tensor: any.
    w_scale = rng.uniform(0.002, 0.02, M).astype(np.float32) if per_channel else np.array(0.01, np.float32)
    w_zp = np.zeros(M, tw) if per_channel else _q(rng, (), tw)
    feeds = {"x": _q(rng, c["xs"], tx), "x_scale": np.array(0.03, np.float32), "x_zero_point": _q(rng, (), tx),
             "w": _q(rng, c["ws"], tw), "w_scale": w_scale, "w_zero_point": w_zp,
             "y_scale": np.array(0.7, np.float32), "y_zero_point": _q(rng, (), tx),
             "B": rng.integers(-20000, 20000, M).astype(np.int32)}
    model, f = _make("QLinearConv", feeds, _E[tx], {"w", "w_scale", "w_zero_point", "B"} if const_w else {"B"},
                     _attrs(c))
    y = _ours(model, f)
    # Bit for bit onnxruntime's rule: the exact sums plus the bias, times
    # x_scale * w_scale[m] / y_scale, all in float32, rounded half to even.
    acc = _conv_int64(feeds["x"], feeds["w"], feeds["x_zero_point"], np.broadcast_to(w_zp, (M,)), _attrs(c))
    mult = (np.float32(0.03) * w_scale.astype(np.float32) / np.float32(0.7)).astype(np.float32)
    mult = np.broadcast_to(mult, (M,)).reshape((1, M) + (1,) * (acc.ndim - 2))
    bias = feeds["B"].astype(np.int64).reshape((1, M) + (1,) * (acc.ndim - 2))
    v = np.rint((acc + bias).astype(np.float32) * mult) + np.float32(feeds["y_zero_point"])
    info = np.iinfo(tx)
    np.testing.assert_array_equal(y, np.clip(v, info.min, info.max).astype(tx))
    # onnx's reference (the product in double: one step apart at most where
    # float rounds the other way); it expands per-channel scales for 2-D only.
    if not per_channel or len(c["xs"]) == 4:
        ref = ReferenceEvaluator(model).run(None, f)[0]
        assert y.dtype == ref.dtype and y.shape == ref.shape
        assert np.abs(y.astype(np.int64) - ref.astype(np.int64)).max(initial=0) <= 1
    if use_ort:
        try:
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime lacks some type pairs
            if "NOT_IMPLEMENTED" not in str(e):
                raise
            return
        theirs = sess.run(None, f)[0]
        # onnxruntime rounds the float product its own way: one step at most.
        assert np.abs(y.astype(np.int64) - theirs.astype(np.int64)).max(initial=0) <= 1


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("tx,tw", PAIRS)
@pytest.mark.parametrize("zp_kind", ZP_KINDS)
@pytest.mark.parametrize("const_w", [True, False])
def test_conv_integer_exact(case, tx, tw, zp_kind, const_w):
    _check_conv_integer(case, tx, tw, zp_kind, const_w, seed=case * 7 + 1)


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("const_w", [True, False])
def test_qlinear_conv_matches_reference(case, tx, tw, per_channel, const_w):
    _check_qlinear_conv(case, tx, tw, per_channel, const_w, seed=case * 5 + 3)


def _every_case():
    for case in range(len(CASES)):
        for tx, tw in PAIRS:
            for zp_kind in ZP_KINDS:
                _check_conv_integer(case, tx, tw, zp_kind, True, seed=case)
        for tx, tw in [(np.uint8, np.int8), (np.int8, np.int8)]:
            _check_qlinear_conv(case, tx, tw, True, case % 2 == 0, seed=case, use_ort=False)


@pytest.mark.parametrize("isa", ["avx2", "baseline"])
def test_narrower_simd_paths(isa):
    # The same onyxruntime package as this process, in a fresh interpreter
    # (the path is read once, when the library loads).
    paths = [os.path.dirname(os.path.dirname(os.path.abspath(rt.__file__))), os.path.dirname(os.path.abspath(__file__))]
    code = ("import sys; sys.path[:0] = %r; import test_qlinear_conv_paths as t; t._every_case(); "
            "print(t.rt.__file__)" % paths)
    env = dict(os.environ, ONYX_CPU_ISA=isa)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == os.path.abspath(rt.__file__), (r.stdout, rt.__file__)


def test_bad_inputs_leave_the_session_usable():
    rng = np.random.default_rng(5)
    x, w = _q(rng, (1, 16, 6, 6), np.uint8), _q(rng, (32, 16, 3, 3), np.int8)
    feeds = {"x": x, "w": w, "x_zero_point": np.array(3, np.uint8), "w_zero_point": np.array(0, np.int8)}
    model, f = _make("ConvInteger", feeds, TensorProto.INT32, {"w", "w_zero_point"}, {"pads": [1, 1, 1, 1]},
                     dynamic=True)
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match=r"ConvInteger: input 0 \(x\) \[1,8,6,6\] has 8 channels"):
        sess.run(None, {"x": _q(rng, (1, 8, 6, 6), np.uint8), "x_zero_point": f["x_zero_point"]})
    with pytest.raises(Exception, match=r"ConvInteger: input 2 \(x_zero_point\) of shape \[2\]"):
        sess.run(None, {"x": x, "x_zero_point": np.array([1, 2], np.uint8)})
    y = sess.run(None, f)[0]
    np.testing.assert_array_equal(y, _conv_int64(x, w, 3, np.zeros(32), {"pads": [1, 1, 1, 1]}))
