"""Range as a kernel (not its function body's Loop): every type against
onnxruntime bit for bit (values are built by repeated addition, as the body's
Loop and onnxruntime build them) and against onnx's reference evaluator; bad
inputs are refused naming the input; the saved optimized model keeps one Range
node and no Loop."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onyxruntime as rt

TYPES = [np.float32, np.float64, np.int16, np.int32, np.int64]
CASES = [(0, 10, 3), (10, 0, -3), (1, 1, 1), (5, 2, 1), (-3, 3, 2), (0, 1000, 7), (7, -100, -9)]
FLOAT_CASES = [(0.5, 7.3, 0.7), (1.0, 0.0, -0.1), (-2.25, 40.0, 0.1)]


def _model(np_t, opset=17):
    dt = helper.np_dtype_to_tensor_dtype(np.dtype(np_t))
    ins = [helper.make_tensor_value_info(n, dt, []) for n in ("start", "limit", "delta")]
    g = helper.make_graph([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")], "g", ins,
                          [helper.make_tensor_value_info("y", dt, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _feeds(np_t, a, b, c):
    return {"start": np.array(a, np_t), "limit": np.array(b, np_t), "delta": np.array(c, np_t)}


@pytest.mark.parametrize("np_t", TYPES, ids=lambda t: np.dtype(t).name)
def test_range_matches_onnxruntime_and_reference(np_t):
    m = _model(np_t)
    ours = rt.InferenceSession(m.SerializeToString())
    theirs = ort.InferenceSession(m.SerializeToString())
    ref = ReferenceEvaluator(m)
    cases = CASES + (FLOAT_CASES if np.dtype(np_t).kind == "f" else [])
    for a, b, c in cases:
        f = _feeds(np_t, a, b, c)
        y = ours.run(None, f)[0]
        z = theirs.run(None, f)[0]
        assert y.dtype == np.dtype(np_t) and y.shape == z.shape, (a, b, c)
        np.testing.assert_array_equal(y, z)
        np.testing.assert_allclose(y, ref.run(None, f)[0], rtol=1e-5, atol=1e-5)


def test_range_runs_as_one_kernel_not_a_loop(tmp_path):
    so = rt.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    rt.InferenceSession(_model(np.int64).SerializeToString(), so)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "opt.onnx")).graph.node]
    assert ops == ["Range"]


@pytest.mark.parametrize(
    "np_t,feeds,needle",
    [
        (np.float32, (0, 3, 0), "input 2 (delta) must not be 0"),
        (np.int64, (0, 3, 0), "input 2 (delta) must not be 0"),
        (np.float32, (0, np.inf, 1), "too many"),
        (np.float32, (0, np.nan, 1), "give no length"),
        (np.int64, (-(2**62), 2**62, 1), "too many"),
    ],
)
def test_range_bad_inputs_name_the_input_and_session_survives(np_t, feeds, needle):
    s = rt.InferenceSession(_model(np_t).SerializeToString())
    with pytest.raises(Exception) as e:
        s.run(None, _feeds(np_t, *feeds))
    assert needle in str(e.value) and "range" in str(e.value)
    assert s.run(None, _feeds(np_t, 0, 4, 2))[0].tolist() == [0, 2]


def test_range_non_scalar_input_is_named():
    m = _model(np.float32)
    m.graph.input[1].type.tensor_type.shape.dim.add().dim_value = 2
    s = rt.InferenceSession(m.SerializeToString())
    with pytest.raises(Exception, match=r"input 1 \(limit\) must be a scalar"):
        s.run(None, {"start": np.array(0, np.float32), "limit": np.array([3, 4], np.float32),
                     "delta": np.array(1, np.float32)})
