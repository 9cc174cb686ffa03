"""float16 and bfloat16 in Gemm, MaxPool/AveragePool/GlobalMaxPool/
GlobalAveragePool, BatchNormalization, LayerNormalization and ArgMax/ArgMin:
each runs its float code on the widened inputs (accumulating in float) and
rounds once, so it must match the float32 result (onnx's reference on the
widened inputs) rounded to the 16-bit type, and onnxruntime where it has the
16-bit kernel."""

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.helper import np_dtype_to_tensor_dtype
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

RNG = np.random.default_rng(17)
HALVES = [np.float16, ml_dtypes.bfloat16]


def _model(op, feeds, out_elems, opset, **attrs):
    names = list(feeds)
    node = helper.make_node(op, names, [f"y{i}" for i in range(len(out_elems))], name="h", **attrs)
    ins = [helper.make_tensor_value_info(n, np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()]
    outs = [helper.make_tensor_value_info(f"y{i}", e, None) for i, e in enumerate(out_elems)]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for([m.opset_import[0]])
    return m


def _check(op, feeds, opset, out_elems=None, idx_out=(), **attrs):
    """Runs `op` on 16-bit `feeds`; compares with the float32 reference
    rounded to the same type (and onnxruntime when it takes the type)."""
    half = next(iter(feeds.values())).dtype
    elem = np_dtype_to_tensor_dtype(half)
    out_elems = out_elems or [elem]
    m = _model(op, feeds, out_elems, opset, **attrs)
    ours = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    f32 = {k: v.astype(np.float32) if v.dtype == half else v for k, v in feeds.items()}
    m32 = _model(op, f32, [TensorProto.FLOAT if e == elem else e for e in out_elems], opset, **attrs)
    ref = ReferenceEvaluator(m32).run(None, f32)
    for i, (o, r) in enumerate(zip(ours, ref)):
        if i in idx_out or o.dtype == np.int64:
            np.testing.assert_array_equal(o, r)
            continue
        if out_elems[i] == TensorProto.FLOAT:  # statistics kept in float (LayerNormalization's Mean)
            assert o.dtype == np.float32
            np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-5)
            continue
        assert o.dtype == half, (o.dtype, half)
        # One rounding of the float result: at most one unit in the last place.
        ulp = 2.0 ** -10 if half == np.float16 else 2.0 ** -7
        np.testing.assert_allclose(o.astype(np.float32), r.astype(half).astype(np.float32),
                                   rtol=2 * ulp, atol=2 * ulp)
    try:
        theirs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime lacks many 16-bit CPU kernels
        if "NOT_IMPLEMENTED" in str(e) or "Type Error" in str(e) or "type" in str(e).lower():
            return ours
        raise
    for o, t in zip(ours, theirs):
        if o.dtype == np.int64:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o.astype(np.float32), t.astype(np.float32), rtol=1e-2, atol=1e-2)
    return ours


def _r(shape, dtype):
    return RNG.standard_normal(shape).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 0), (0, 1)])
def test_gemm(dtype, trans_a, trans_b):
    a = _r((8, 5) if not trans_a else (5, 8), dtype)
    b = _r((5, 7) if not trans_b else (7, 5), dtype)
    c = _r((1, 7), dtype)
    _check("Gemm", {"a": a, "b": b, "c": c}, 13, transA=trans_a, transB=trans_b, alpha=0.5, beta=2.0)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pools(dtype, op):
    x = _r((2, 3, 9, 8), dtype)
    # bfloat16 joins the pools' types in opset 22.
    _check(op, {"x": x}, 19 if dtype == np.float16 else 22, kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])


@pytest.mark.parametrize("dtype", HALVES)
def test_maxpool_indices(dtype):
    x = _r((1, 2, 6, 6), dtype)
    _check("MaxPool", {"x": x}, 12 if dtype == np.float16 else 22,
           out_elems=[np_dtype_to_tensor_dtype(np.dtype(dtype)), TensorProto.INT64],
           kernel_shape=[2, 2], strides=[2, 2])


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool"])
def test_global_pools(dtype, op):
    _check(op, {"x": _r((2, 4, 5, 6), dtype)}, 1 if dtype == np.float16 else 22)


@pytest.mark.parametrize("dtype", HALVES)
def test_batchnorm(dtype):
    c = 4
    feeds = {"x": _r((2, c, 3, 3), dtype), "s": _r((c,), dtype), "b": _r((c,), dtype), "m": _r((c,), dtype),
             "v": (np.abs(_r((c,), np.float32)) + 0.5).astype(dtype)}
    _check("BatchNormalization", feeds, 15)


@pytest.mark.parametrize("dtype", HALVES)
def test_layernorm(dtype):
    x = _r((3, 4, 16), dtype)
    feeds = {"x": x, "s": _r((16,), dtype), "b": _r((16,), dtype)}
    _check("LayerNormalization", feeds, 17, out_elems=[np_dtype_to_tensor_dtype(np.dtype(dtype)), TensorProto.FLOAT,
                                                       TensorProto.FLOAT], axis=-1)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("select_last_index", [0, 1])
def test_arg_reduce(dtype, op, select_last_index):
    x = RNG.integers(-3, 4, (4, 5, 6)).astype(np.float32).astype(dtype)  # many ties
    _check(op, {"x": x}, 13, out_elems=[TensorProto.INT64], axis=1, keepdims=0, select_last_index=select_last_index)


def test_batchnorm_mixed_types_training():
    # Opset 15: X float16, scale/B float16, mean/var (and running stats) float.
    c = 3
    x = _r((4, c, 5), np.float16)
    feeds = {"x": x, "s": _r((c,), np.float16), "b": _r((c,), np.float16), "m": _r((c,), np.float32),
             "v": np.abs(_r((c,), np.float32)) + 0.5}
    node = helper.make_node("BatchNormalization", list(feeds), ["y", "rm", "rv"], training_mode=1, name="h")
    ins = [helper.make_tensor_value_info(n, np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None),
            helper.make_tensor_value_info("rm", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("rv", TensorProto.FLOAT, None)]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", 15)])
    m.ir_version = 8
    y, rm, rv = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert y.dtype == np.float16 and rm.dtype == np.float32 and rv.dtype == np.float32
    xf = x.astype(np.float64)
    mean, var = xf.mean(axis=(0, 2)), xf.var(axis=(0, 2))
    want = (xf - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * feeds["s"].astype(np.float64)[:, None] + \
        feeds["b"].astype(np.float64)[:, None]
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=3e-3, atol=3e-3)
    np.testing.assert_allclose(rm, feeds["m"] * 0.9 + mean * 0.1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rv, feeds["v"] * 0.9 + var * 0.1, rtol=1e-5, atol=1e-5)
