"""OrtValue and InferenceSession.run_with_ort_values, checked against onnxruntime.

Every test runs twice: once on onnxruntime (the oracle) and once on
onyxruntime, through the `rt` fixture. Where onyxruntime deliberately differs
the test branches on `_is_ort(rt)` and a comment says why; everything else
must behave the same in both.
"""

import gc

import numpy as np
import pytest
from onnx import TensorProto, helper


from conftest import is_ort as _is_ort


def _model(op="Add"):
    """Y = X op X for float X[2, 3]; S_out = Identity(S) for strings."""
    nodes = [helper.make_node(op, ["X", "X"], ["Y"]), helper.make_node("Identity", ["S"], ["S_out"])]
    graph = helper.make_graph(
        nodes, "ortvalue",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("S", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("S_out", TensorProto.STRING, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = _model()
X = np.arange(6, dtype=np.float32).reshape(2, 3)
S = np.array(["ab", "c"], dtype=object)


# ---- ortvalue_from_numpy ----------------------------------------------------

def test_from_numpy_describes_the_array(rt):
    v = rt.OrtValue.ortvalue_from_numpy(X)
    assert isinstance(v, rt.OrtValue)
    assert v.device_name() == "cpu"
    assert v.shape() == [2, 3]
    assert v.data_type() == "tensor(float)"
    # onnxruntime returns the onnx.TensorProto code, not a numpy type.
    assert v.element_type() == TensorProto.FLOAT
    assert v.is_tensor() is True
    assert v.has_value() is True
    np.testing.assert_array_equal(v.numpy(), X)
    assert v.numpy().dtype == np.float32


def test_from_numpy_is_zero_copy_for_c_contiguous_arrays(rt):
    x = X.copy()
    v = rt.OrtValue.ortvalue_from_numpy(x)
    assert v.data_ptr() == x.ctypes.data
    view = v.numpy()
    assert np.shares_memory(view, x)
    x[0, 0] = 42.0
    assert v.numpy()[0, 0] == 42.0


def test_from_numpy_keeps_the_array_alive(rt):
    v = rt.OrtValue.ortvalue_from_numpy(np.arange(1000, dtype=np.float64))
    gc.collect()
    np.testing.assert_array_equal(v.numpy(), np.arange(1000, dtype=np.float64))


@pytest.mark.parametrize("make", [
    lambda: np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],   # strided
    lambda: np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
    lambda: np.arange(12, dtype=np.float32).reshape(3, 4).T,
], ids=["strided", "fortran", "transposed"])
def test_non_contiguous_arrays_are_copied_not_misread(rt, make):
    x = make()
    v = rt.OrtValue.ortvalue_from_numpy(x)
    assert v.shape() == list(x.shape)
    np.testing.assert_array_equal(v.numpy(), x)
    assert v.data_ptr() != x.ctypes.data


def test_big_endian_array_is_converted(rt):
    x = np.arange(3, dtype=">f4")
    v = rt.OrtValue.ortvalue_from_numpy(x)
    if _is_ort(rt):
        # onnxruntime wraps the bytes as they are, so the values come out
        # byte-swapped (garbage); onyxruntime converts to native order first.
        pytest.skip("onnxruntime misreads non-native byte order")
    np.testing.assert_array_equal(v.numpy(), [0, 1, 2])


DTYPES = [
    (np.float32, "float", 1), (np.uint8, "uint8", 2), (np.int8, "int8", 3), (np.uint16, "uint16", 4),
    (np.int16, "int16", 5), (np.int32, "int32", 6), (np.int64, "int64", 7), (np.bool_, "bool", 9),
    (np.float16, "float16", 10), (np.float64, "double", 11), (np.uint32, "uint32", 12), (np.uint64, "uint64", 13),
]


@pytest.mark.parametrize("dtype,name,code", DTYPES, ids=[d[1] for d in DTYPES])
def test_dtypes(rt, dtype, name, code):
    x = (np.arange(6) % 3).astype(dtype).reshape(3, 2)
    v = rt.OrtValue.ortvalue_from_numpy(x)
    assert v.data_type() == "tensor(%s)" % name
    assert v.element_type() == code
    out = v.numpy()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, x)


def test_scalar_and_empty_tensors(rt):
    s = rt.OrtValue.ortvalue_from_numpy(np.array(2.5, dtype=np.float32))
    assert s.shape() == []
    assert s.numpy().shape == () and s.numpy() == 2.5
    e = rt.OrtValue.ortvalue_from_numpy(np.zeros((0, 3), dtype=np.float32))
    assert e.shape() == [0, 3]
    assert e.numpy().shape == (0, 3)
    assert e.data_ptr() == 0


@pytest.mark.parametrize("obj", [[1.0, 2.0], np.float32(3.0), 3.0], ids=["list", "numpy-scalar", "float"])
def test_from_numpy_needs_an_ndarray(rt, obj):
    with pytest.raises(RuntimeError):
        rt.OrtValue.ortvalue_from_numpy(obj)


def test_string_arrays(rt):
    if _is_ort(rt):
        # onnxruntime cannot make an OrtValue from strings; onyxruntime copies
        # them into a string tensor, since run() takes string arrays anyway.
        with pytest.raises(RuntimeError, match="non-string"):
            rt.OrtValue.ortvalue_from_numpy(S)
        return
    v = rt.OrtValue.ortvalue_from_numpy(S)
    assert v.data_type() == "tensor(string)"
    assert v.element_type() == TensorProto.STRING
    assert list(v.numpy()) == ["ab", "c"]
    with pytest.raises(RuntimeError):
        v.data_ptr()  # no flat element buffer to point at


# ---- ortvalue_from_shape_and_type --------------------------------------------

@pytest.mark.parametrize("element_type", [np.float32, np.dtype(np.float32), "float32", TensorProto.FLOAT],
                         ids=["numpy-type", "dtype", "name", "onnx-int"])
def test_from_shape_and_type(rt, element_type):
    v = rt.OrtValue.ortvalue_from_shape_and_type([2, 4], element_type)
    assert v.shape() == [2, 4]
    assert v.data_type() == "tensor(float)"
    assert v.element_type() == TensorProto.FLOAT
    assert v.device_name() == "cpu"
    assert v.is_tensor() and v.has_value()
    assert v.data_ptr() != 0


def test_from_shape_and_type_tuple_shape_and_int64(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type((3,), np.int64)
    assert v.shape() == [3] and v.data_type() == "tensor(int64)" and v.element_type() == TensorProto.INT64


def test_numpy_of_library_memory_is_a_writable_view(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type([3], np.float32)
    a = v.numpy()
    a[:] = [1, 2, 3]
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3])
    assert a.ctypes.data == v.data_ptr()


def test_bfloat16_numpy_view(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type([2], TensorProto.BFLOAT16)
    assert v.data_type() == "tensor(bfloat16)"
    assert v.element_type() == TensorProto.BFLOAT16
    if rt.__name__ == "onnxruntime":
        # onnxruntime has no numpy view for bfloat16.
        with pytest.raises(RuntimeError):
            v.numpy()
        return
    # onyxruntime gives an ml_dtypes.bfloat16 view of the library's memory.
    import ml_dtypes

    a = v.numpy()
    assert a.dtype == np.dtype(ml_dtypes.bfloat16) and a.shape == (2,)
    a[:] = [1.5, -2.0]
    np.testing.assert_array_equal(v.numpy().astype(np.float32), [1.5, -2.0])


@pytest.mark.parametrize("shape,element_type", [([2, -1], np.float32), ([2], 99)], ids=["negative-dim", "bad-type"])
def test_from_shape_and_type_bad_input(rt, shape, element_type):
    with pytest.raises(Exception):  # RuntimeError (onnxruntime), InvalidArgument (onyxruntime)
        rt.OrtValue.ortvalue_from_shape_and_type(shape, element_type)


# ---- devices -------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cuda", "gpu", "foo", "CPU"])
def test_unknown_or_absent_device_is_an_error(rt, device):
    # onnxruntime raises RuntimeError for devices its package lacks and a
    # plain Exception for names it does not know; onyxruntime raises
    # RuntimeError for all, which still satisfies `except Exception`.
    with pytest.raises(Exception) as e1:
        rt.OrtValue.ortvalue_from_numpy(X, device, 0)
    with pytest.raises(Exception) as e2:
        rt.OrtValue.ortvalue_from_shape_and_type([2], np.float32, device, 0)
    if not _is_ort(rt):
        # onnxruntime's CUDA message does not name the device; ours always does.
        for e in (e1, e2):
            assert isinstance(e.value, RuntimeError)
            assert "'%s'" % device in str(e.value)


def test_cpu_device_id_is_accepted(rt):
    assert rt.OrtValue.ortvalue_from_numpy(X, "cpu", 1).device_name() == "cpu"


# ---- update_inplace -------------------------------------------------------------

def test_update_inplace_copies_into_the_same_buffer(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    ptr = v.data_ptr()
    v.update_inplace(X)
    assert v.data_ptr() == ptr
    np.testing.assert_array_equal(v.numpy(), X)


def test_update_inplace_writes_through_to_a_wrapped_array(rt):
    x = np.zeros((2, 3), dtype=np.float32)
    v = rt.OrtValue.ortvalue_from_numpy(x)
    v.update_inplace(X)
    np.testing.assert_array_equal(x, X)


def test_update_inplace_reads_non_contiguous_sources_correctly(rt):
    src = np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]
    v = rt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    v.update_inplace(src)
    np.testing.assert_array_equal(v.numpy(), src)


def test_update_inplace_from_another_ortvalue(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    v.update_inplace(rt.OrtValue.ortvalue_from_numpy(X))
    np.testing.assert_array_equal(v.numpy(), X)


def test_update_inplace_rejects_non_arrays(rt):
    v = rt.OrtValue.ortvalue_from_shape_and_type([3], np.float32)
    with pytest.raises(TypeError):
        v.update_inplace([1.0, 2.0, 3.0])


@pytest.mark.parametrize("bad", [np.ones((3, 2), np.float32), np.ones(6, np.float32), np.ones((2, 3), np.float64),
                                 np.ones((2, 3), np.int32)], ids=["transposed-shape", "flat", "float64", "int32"])
def test_update_inplace_requires_same_shape_and_dtype(rt, bad):
    v = rt.OrtValue.ortvalue_from_numpy(np.zeros((2, 3), np.float32))
    if _is_ort(rt):
        # onnxruntime copies the raw bytes whatever the shape or dtype (a
        # float64 source turns into garbage floats); onyxruntime refuses.
        v.update_inplace(bad)
        return
    with pytest.raises(ValueError, match="update_inplace"):
        v.update_inplace(bad)
    np.testing.assert_array_equal(v.numpy(), 0)  # left untouched


def test_update_inplace_on_a_read_only_array(rt):
    x = np.zeros(3, dtype=np.float32)
    x.flags.writeable = False
    v = rt.OrtValue.ortvalue_from_numpy(x)
    if _is_ort(rt):
        # onnxruntime writes into memory numpy marked read-only.
        v.update_inplace(np.ones(3, np.float32))
        return
    with pytest.raises(ValueError, match="read-only"):
        v.update_inplace(np.ones(3, np.float32))
    assert not v.numpy().flags.writeable
    np.testing.assert_array_equal(x, 0)


# ---- sessions ---------------------------------------------------------------------

def test_run_accepts_ortvalues_as_inputs(rt):
    sess = rt.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
    y, s = sess.run(None, {"X": rt.OrtValue.ortvalue_from_numpy(X), "S": S})
    np.testing.assert_array_equal(y, X + X)
    assert list(s) == ["ab", "c"]


def test_run_with_ort_values_returns_ortvalues(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    x = rt.OrtValue.ortvalue_from_numpy(X)
    for names in (None, [], ["Y"]):
        outs = sess.run_with_ort_values(names, {"X": x})
        assert isinstance(outs, list) and len(outs) == 1
        out = outs[0]
        assert isinstance(out, rt.OrtValue)
        assert out.device_name() == "cpu"
        assert out.shape() == [2, 3]
        assert out.data_type() == "tensor(float)"
        np.testing.assert_array_equal(out.numpy(), X * X)


def test_run_with_ort_values_and_run_options(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    ro = rt.RunOptions()
    ro.logid = "ortvalue-test"
    (out,) = sess.run_with_ort_values(["Y"], {"X": rt.OrtValue.ortvalue_from_numpy(X)}, ro)
    np.testing.assert_array_equal(out.numpy(), X * X)


def test_output_ortvalue_outlives_its_session(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    (out,) = sess.run_with_ort_values(None, {"X": rt.OrtValue.ortvalue_from_numpy(X)})
    del sess
    gc.collect()
    np.testing.assert_array_equal(out.numpy(), X * X)


def test_run_with_ort_values_needs_ortvalues(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    # onnxruntime fails with an AttributeError from inside its wrapper;
    # onyxruntime raises a TypeError naming the input.
    with pytest.raises((TypeError, AttributeError)):
        sess.run_with_ort_values(None, {"X": X})


def test_wrong_element_type_ortvalue_is_invalid_argument(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    bad = rt.OrtValue.ortvalue_from_numpy(X.astype(np.float64))
    for call in (lambda: sess.run(None, {"X": bad}), lambda: sess.run_with_ort_values(None, {"X": bad})):
        with pytest.raises(Exception) as e:
            call()
        assert type(e.value).__name__ == "InvalidArgument"
        assert "tensor(double)" in str(e.value)


def test_missing_input_and_unknown_output(rt):
    sess = rt.InferenceSession(_mul_model(), providers=["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="missing"):
        sess.run_with_ort_values(None, {})
    with pytest.raises(Exception) as e:
        sess.run_with_ort_values(["nope"], {"X": rt.OrtValue.ortvalue_from_numpy(X)})
    assert type(e.value).__name__ == "InvalidArgument"


def _mul_model():
    """Y = X * X for float X[2, 3]."""
    graph = helper.make_graph([helper.make_node("Mul", ["X", "X"], ["Y"])], "mul",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
