"""ml_dtypes arrays (bfloat16, float8, float8e8m0, int4/uint4, int2/uint2, float4e2m1) in and
out of the Python binding: sub-byte types are packed several per byte in the engine and unpacked
on the way back; a round trip through Identity returns the same bits."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

CASES = [
    (ml_dtypes.bfloat16, TensorProto.BFLOAT16),
    (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN),
    (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ),
    (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2),
    (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ),
    (ml_dtypes.int4, TensorProto.INT4),
    (ml_dtypes.uint4, TensorProto.UINT4),
    (ml_dtypes.float4_e2m1fn, TensorProto.FLOAT4E2M1),
    (ml_dtypes.float8_e8m0fnu, TensorProto.FLOAT8E8M0),
    (ml_dtypes.int2, TensorProto.INT2),
    (ml_dtypes.uint2, TensorProto.UINT2),
]


@pytest.mark.parametrize("dtype,onnx_type", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (0,), (1, 1, 7)])
def test_identity_round_trip_keeps_the_bits(dtype, onnx_type, shape):
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", onnx_type, list(shape))],
                          [helper.make_tensor_value_info("y", onnx_type, list(shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = 11
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(np.float32).astype(dtype)
    (y,) = rt.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    mask = 0x0F if dtype in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.float4_e2m1fn) else 0xFF
    if dtype in (ml_dtypes.int2, ml_dtypes.uint2):
        mask = 0x03
    bits = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint8
    np.testing.assert_array_equal(y.view(bits) & mask, x.view(bits) & mask)


def test_cast_to_int4_matches_the_reference_evaluator():
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT4)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT4, [7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    x = np.array([-9, -8, -1.5, 0, 2.5, 7, 12], np.float32)
    (y,) = rt.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    (ref,) = ReferenceEvaluator(m).run(None, {"x": x})
    assert y.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(y.astype(np.int8), ref.astype(np.int8))


@pytest.mark.parametrize("dtype,onnx_type", [(np.float16, TensorProto.FLOAT16),
                                             (ml_dtypes.bfloat16, TensorProto.BFLOAT16)], ids=["float16", "bfloat16"])
def test_matmul_16_bit_floats_accumulate_in_float(dtype, onnx_type):
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "g",
                          [helper.make_tensor_value_info("a", onnx_type, [2, 3, 8]),
                           helper.make_tensor_value_info("b", onnx_type, [8, 5])],
                          [helper.make_tensor_value_info("y", onnx_type, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 8)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((8, 5)).astype(np.float32).astype(dtype)
    (y,) = rt.InferenceSession(m.SerializeToString()).run(None, {"a": a, "b": b})
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))
