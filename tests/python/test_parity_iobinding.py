"""IOBinding and run_with_iobinding, checked against onnxruntime.

Every test runs on onnxruntime and on onyxruntime (the `rt` fixture). Where
onyxruntime deliberately differs, the test branches on is_ort(rt) and says why.
"""

import gc

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import is_ort


def _model():
    """Y = X * X and Z = X + B for float X[n, 2] (n free), B an overridable initializer."""
    b = helper.make_tensor("B", TensorProto.FLOAT, [2], [10.0, 20.0])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["X", "X"], ["Y"]), helper.make_node("Add", ["X", "B"], ["Z"])],
        "iobinding",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 2]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["n", 2]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["n", 2])],
        [b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = _model()
X = np.arange(6, dtype=np.float32).reshape(3, 2)


@pytest.fixture
def sess(rt):
    return rt.InferenceSession(MODEL, providers=["CPUExecutionProvider"])


def test_bind_cpu_input_and_runtime_allocated_output(rt, sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    (y,) = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(y, X * X)
    (ov,) = binding.get_outputs()
    assert isinstance(ov, rt.OrtValue)
    assert ov.device_name() == "cpu" and ov.shape() == [3, 2]
    np.testing.assert_array_equal(ov.numpy(), X * X)


def test_outputs_before_any_run(rt, sess):
    binding = sess.io_binding()
    assert binding.get_outputs() == []
    assert binding.copy_outputs_to_cpu() == []
    binding.bind_output("Y")
    (placeholder,) = binding.get_outputs()
    assert not placeholder.is_tensor() and not placeholder.has_value()
    if not is_ort(rt):
        # onnxruntime crashes the process copying an output not yet produced;
        # onyxruntime says so.
        with pytest.raises(RuntimeError, match="output 'Y' has not been produced yet"):
            binding.copy_outputs_to_cpu()


def test_dynamic_shape_outputs_follow_each_run(rt, sess):
    binding = sess.io_binding()
    binding.bind_output("Y")
    for n in (1, 4, 2):
        x = np.full((n, 2), n, dtype=np.float32)
        if is_ort(rt):
            # onnxruntime keeps the first run's output bound as a fixed buffer,
            # so a new shape needs bind_output again; onyxruntime allocates an
            # output bound to a device afresh at every run.
            binding.bind_output("Y")
        binding.bind_cpu_input("X", x)
        sess.run_with_iobinding(binding)
        assert binding.get_outputs()[0].shape() == [n, 2]
        np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], x * x)


def test_preallocated_output_is_written_in_place(sess):
    y = np.zeros((3, 2), dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_input("X", "cpu", 0, np.float32, list(X.shape), X.ctypes.data)
    binding.bind_output("Y", "cpu", 0, np.float32, list(y.shape), y.ctypes.data)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(y, X * X)
    # The output OrtValue is the bound memory itself: no copy was made.
    assert binding.get_outputs()[0].data_ptr() == y.ctypes.data


def test_element_type_as_tensorproto_int(sess):
    y = np.zeros((3, 2), dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_input("X", "cpu", 0, TensorProto.FLOAT, [3, 2], X.ctypes.data)
    binding.bind_output("Y", "cpu", 0, TensorProto.FLOAT, [3, 2], y.ctypes.data)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(y, X * X)


def test_bind_ortvalues(rt, sess):
    x = rt.OrtValue.ortvalue_from_numpy(X)
    y = rt.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32)
    binding = sess.io_binding()
    binding.bind_ortvalue_input("X", x)
    binding.bind_ortvalue_output("Y", y)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(y.numpy(), X * X)
    assert binding.get_outputs()[0].data_ptr() == y.data_ptr()


def test_ortvalue_freed_while_bound_stays_valid(rt, sess):
    """The binding keeps what it was given alive: dropping the caller's
    references must not make the run read freed memory."""
    binding = sess.io_binding()
    binding.bind_ortvalue_input("X", rt.OrtValue.ortvalue_from_numpy(X.copy()))
    y = rt.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32)
    binding.bind_ortvalue_output("Y", y)
    del y
    gc.collect()
    # Fill the heap with other data where the freed buffers would have been.
    junk = [np.full((3, 2), -1.0, dtype=np.float32) for _ in range(100)]
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X * X)
    del junk


def test_non_contiguous_cpu_input_is_copied_not_misread(sess):
    wide = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = wide[:, ::2]
    assert not x.flags.c_contiguous
    binding = sess.io_binding()
    binding.bind_cpu_input("X", x)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], x * x)


def test_overridable_initializer_can_be_bound(rt, sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    if is_ort(rt):
        # onnxruntime binds graph inputs only ("Failed to find NodeArg"), though
        # run() accepts the same name; onyxruntime binds whatever run() accepts.
        with pytest.raises(RuntimeError, match="Failed to find NodeArg with name: B"):
            binding.bind_cpu_input("B", np.array([1.0, 2.0], dtype=np.float32))
        return
    binding.bind_cpu_input("B", np.array([1.0, 2.0], dtype=np.float32))
    binding.bind_output("Z")
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X + np.array([1.0, 2.0], dtype=np.float32))


def test_rebinding_replaces_and_outputs_keep_their_order(sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", np.zeros((1, 2), dtype=np.float32))
    binding.bind_cpu_input("X", X)
    binding.bind_output("Z")
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    z, y = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(y, X * X)
    np.testing.assert_array_equal(z, X + np.array([10.0, 20.0], dtype=np.float32))


def test_copy_outputs_to_cpu_is_independent_of_the_bound_buffer(sess):
    y = np.zeros((3, 2), dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y", "cpu", 0, np.float32, [3, 2], y.ctypes.data)
    sess.run_with_iobinding(binding)
    (copied,) = binding.copy_outputs_to_cpu()
    y[:] = -1
    np.testing.assert_array_equal(copied, X * X)


def test_clear_bindings(sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    binding.clear_binding_inputs()
    with pytest.raises(RuntimeError, match="Missing Input: X"):
        sess.run_with_iobinding(binding)
    binding.bind_cpu_input("X", X)
    binding.clear_binding_outputs()
    assert binding.get_outputs() == []
    # Both refuse a run with nothing to produce.
    with pytest.raises(RuntimeError, match="At least one output should be requested"):
        sess.run_with_iobinding(binding)


def test_synchronize_is_accepted(sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.synchronize_inputs()
    binding.bind_output("Y")
    sess.run_with_iobinding(binding)
    binding.synchronize_outputs()
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X * X)


def test_run_options_reach_the_run(rt, sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    ro = rt.RunOptions()
    ro.terminate = True
    with pytest.raises(RuntimeError, match="[Tt]erminate"):
        sess.run_with_iobinding(binding, ro)
    ro.terminate = False
    sess.run_with_iobinding(binding, ro)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X * X)


def test_binding_belongs_to_its_session(rt, sess):
    other = rt.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    with pytest.raises(ValueError, match="IOBinding must be used with the session that created it"):
        other.run_with_iobinding(binding)


# ---- bad input ----------------------------------------------------------------


def test_unknown_input_name(rt, sess):
    with pytest.raises(RuntimeError):
        sess.io_binding().bind_cpu_input("nope", X)


def test_unknown_output_name(rt, sess):
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    if is_ort(rt):
        # onnxruntime accepts the name and fails only at the run.
        binding.bind_output("nope")
        with pytest.raises(RuntimeError):
            sess.run_with_iobinding(binding)
    else:
        # onyxruntime names the fault where it is made, listing the outputs.
        with pytest.raises(RuntimeError, match="no output named 'nope'.*outputs: Y, Z"):
            binding.bind_output("nope")


def test_preallocated_output_of_wrong_shape(sess):
    y = np.zeros((4, 2), dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y", "cpu", 0, np.float32, [4, 2], y.ctypes.data)
    with pytest.raises(RuntimeError, match=r"(shape \{4,2\}|\[4,2\])"):
        sess.run_with_iobinding(binding)
    assert not y.any()  # nothing was written to the wrong-sized buffer


def test_preallocated_output_of_wrong_type(sess):
    y = np.zeros((3, 2), dtype=np.float64)
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y", "cpu", 0, np.float64, [3, 2], y.ctypes.data)
    with pytest.raises(RuntimeError, match="double"):
        sess.run_with_iobinding(binding)


def test_input_of_wrong_type_or_rank(sess):
    binding = sess.io_binding()
    binding.bind_output("Y")
    x64 = X.astype(np.float64)
    binding.bind_input("X", "cpu", 0, np.float64, [3, 2], x64.ctypes.data)
    with pytest.raises(RuntimeError, match=r"Unexpected input data type"):
        sess.run_with_iobinding(binding)
    binding.bind_input("X", "cpu", 0, np.float32, [3, 2, 1], X.ctypes.data)
    with pytest.raises(RuntimeError, match="Invalid rank for input: X"):
        sess.run_with_iobinding(binding)


@pytest.mark.parametrize("element_type", [TensorProto.BFLOAT16, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E4M3FN])
def test_types_without_numpy_dtype_bind_by_tensorproto_int(sess, element_type):
    """Seed 003: bfloat16 / float8 buffers bind by their TensorProto code; this
    model wants float, so the run names the type it got."""
    raw = np.zeros(6, dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_input("X", "cpu", 0, element_type, [3, 2], raw.ctypes.data)
    binding.bind_output("Y")
    name = {TensorProto.BFLOAT16: "bfloat16", TensorProto.FLOAT8E5M2: "float8e5m2",
            TensorProto.FLOAT8E4M3FN: "float8e4m3fn"}[element_type]
    with pytest.raises(RuntimeError, match=r"(?i)tensor\(%s\)" % name):
        sess.run_with_iobinding(binding)


def test_device_the_build_lacks(rt, sess):
    binding = sess.io_binding()
    with pytest.raises(RuntimeError):
        binding.bind_input("X", "cuda", 0, np.float32, [3, 2], X.ctypes.data)
    if is_ort(rt):
        # onnxruntime's CPU package records an output 'cuda' binding and fails later.
        binding.bind_output("Y", "cuda")
    else:
        # onyxruntime refuses at once: there is no CUDA memory to allocate it in.
        with pytest.raises(RuntimeError, match="no 'cuda' support|'cuda': CUDA is not available here"):
            binding.bind_output("Y", "cuda")


def test_bind_output_buffer_needs_type_and_shape(sess):
    y = np.zeros((3, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="`element_type` and `shape`"):
        sess.io_binding().bind_output("Y", "cpu", 0, np.float32, None, y.ctypes.data)


def test_run_with_iobinding_needs_a_binding(sess):
    with pytest.raises((TypeError, AttributeError)):
        sess.run_with_iobinding(None)


def test_binding_outlives_its_session(rt):
    """A binding keeps its session alive: dropping the session object first
    must not crash the next run."""
    sess = rt.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_cpu_input("X", X)
    binding.bind_output("Y")
    run = sess.run_with_iobinding
    del sess
    gc.collect()
    run(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], X * X)


def test_session_io_binding_class_is_exported(rt):
    assert hasattr(rt, "IOBinding") and hasattr(rt, "SessionIOBinding")
