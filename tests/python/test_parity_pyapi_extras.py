"""The rest of onnxruntime 1.31's Python surface (issue 14), each test run on
onnxruntime and onyxruntime through the `rt` fixture: sparse tensors (COO,
CSR, block sparse) in and out of values and `run`, sparse initializers;
DLPack both ways; external initializers in and out; ORT_LOAD_CONFIG_FROM_MODEL;
OrtMemoryInfo.create_v2; OrtArenaCfg's keys; LoRA adapters; the session
methods onnxruntime has for devices we lack. Where onyxruntime deliberately
differs the test branches on is_ort(rt) and says why.
"""

import importlib
import os
import subprocess
import sys
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import is_ort

OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
DENSE = np.array([[0, 1, 0, 0], [2, 0, 0, 3], [0, 0, 0, 4]], np.float32)
B = np.arange(8, dtype=np.float32).reshape(4, 2)


def _C(rt):
    return importlib.import_module(rt.__name__ + ".capi._pybind_state")


def _cpu(rt):
    return rt.OrtDevice.make("cpu", 0)


def _model(nodes, inputs, outputs, initializers=(), sparse_initializers=(), metadata=None):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers), sparse_initializer=list(sparse_initializers))
    m = helper.make_model(g, opset_imports=OPSETS, ir_version=8)
    for k, v in (metadata or {}).items():
        m.metadata_props.add(key=k, value=v)
    return m


def _sparse_matmul_model(**attrs):
    return _model([helper.make_node("SparseToDenseMatMul", ["A", "B"], ["Y"], domain="com.microsoft", **attrs)],
                  [helper.make_sparse_tensor_value_info("A", TensorProto.FLOAT, [3, 4]),
                   helper.make_tensor_value_info("B", TensorProto.FLOAT, [2, 4] if attrs.get("transB") else [4, 2])],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]).SerializeToString()


def _coo(rt, dense=DENSE, two_d=False):
    rows, cols = np.nonzero(dense)
    idx = np.stack([rows, cols], 1).astype(np.int64) if two_d else np.flatnonzero(dense).astype(np.int64)
    return rt.SparseTensor.sparse_coo_from_numpy(list(dense.shape), dense[dense != 0], idx, _cpu(rt))


def _csr(rt, dense=DENSE):
    inner = np.nonzero(dense)[1].astype(np.int64)
    outer = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int64)
    return rt.SparseTensor.sparse_csr_from_numpy(list(dense.shape), dense[dense != 0], inner, outer, _cpu(rt))


# ---- sparse tensors ------------------------------------------------------------

def test_sparse_coo(rt):
    st = _coo(rt)
    assert st.format() == rt.OrtSparseFormat.ORT_SPARSE_COO
    assert int(st.format()) == 1
    assert st.dense_shape() == [3, 4]
    assert st.data_type() == "sparse_tensor(float)"
    assert st.device_name() == "cpu"
    np.testing.assert_array_equal(st.values(), [1, 2, 3, 4])
    np.testing.assert_array_equal(st.as_coo_view().indices(), [1, 4, 7, 11])
    st2 = _coo(rt, two_d=True)
    np.testing.assert_array_equal(st2.as_coo_view().indices(), [[0, 1], [1, 0], [1, 3], [2, 3]])


def test_sparse_csr(rt):
    st = _csr(rt)
    assert st.format() == rt.OrtSparseFormat.ORT_SPARSE_CSRC
    np.testing.assert_array_equal(st.values(), [1, 2, 3, 4])
    np.testing.assert_array_equal(st.as_csrc_view().inner(), [1, 0, 3, 3])
    np.testing.assert_array_equal(st.as_csrc_view().outer(), [0, 1, 3, 4])


def test_sparse_block(rt):
    C = _C(rt)
    dev = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
    vals = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    idx = np.array([[0, 1], [1, 0]], np.int32)
    st = C.SparseTensor.blocksparse_from_numpy([4, 4], vals, idx, dev)
    assert st.format == C.OrtSparseFormat.ORT_SPARSE_BLOCK_SPARSE
    assert st.dense_shape() == [4, 4]
    np.testing.assert_array_equal(st.values(), vals)
    if not is_ort(rt):
        # onnxruntime's get_blocksparse_data reads the int32 indices as int64
        # and raises "Tensor type mismatch"; ours returns them.
        np.testing.assert_array_equal(st.get_blocksparse_data().indices(), idx)
        np.testing.assert_array_equal(rt.SparseTensor(st).as_blocksparse_view().indices(), idx)


def test_sparse_values_share_memory(rt):
    vals = np.array([1, 2], np.float32)
    st = rt.SparseTensor.sparse_coo_from_numpy([3, 4], vals, np.array([1, 5], np.int64), _cpu(rt))
    v = st.values()
    assert not v.flags.owndata
    if not is_ort(rt):
        assert v.ctypes.data == vals.ctypes.data  # the caller's array itself


def test_sparse_ortvalue(rt):
    ov = rt.OrtValue.ort_value_from_sparse_tensor(_coo(rt))
    assert ov.is_sparse_tensor() and not ov.is_tensor() and ov.has_value()
    assert ov.data_type() == "sparse_tensor(float)"
    assert ov.shape() == [3, 4]
    back = ov.as_sparse_tensor()
    np.testing.assert_array_equal(back.values(), [1, 2, 3, 4])
    with pytest.raises(RuntimeError, match="Only OrtValues that are Tensors are convertible to Numpy objects"
                       if is_ort(rt) else "not a tensor"):
        ov.numpy()
    with pytest.raises(RuntimeError, match="This OrtValue does not contain SparseTensor"):
        rt.OrtValue.ortvalue_from_numpy(DENSE).as_sparse_tensor()


@pytest.mark.parametrize("fmt", ["coo2d", "csr"])
@pytest.mark.parametrize("attrs", [{}, {"alpha": 2.0}, {"transB": 1}])
def test_sparse_input_runs(rt, fmt, attrs):
    st = _coo(rt, two_d=True) if fmt == "coo2d" else _csr(rt)
    b = B.T.copy() if attrs.get("transB") else B
    if is_ort(rt) and attrs.get("transB"):
        # onnxruntime's shape inference ignores transB here and refuses the
        # model ("Incompatible dimensions for matrix multiplication").
        with pytest.raises(Exception, match="Incompatible dimensions"):
            rt.InferenceSession(_sparse_matmul_model(**attrs), providers=["CPUExecutionProvider"])
        return
    sess = rt.InferenceSession(_sparse_matmul_model(**attrs), providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].type == "sparse_tensor(float)"
    out = sess.run(None, {"A": rt.OrtValue.ort_value_from_sparse_tensor(st), "B": b})[0]
    np.testing.assert_allclose(out, attrs.get("alpha", 1.0) * DENSE @ B)
    ov = sess.run_with_ort_values(None, {"A": rt.OrtValue.ort_value_from_sparse_tensor(st),
                                         "B": rt.OrtValue.ortvalue_from_numpy(b)})[0]
    np.testing.assert_allclose(ov.numpy(), attrs.get("alpha", 1.0) * DENSE @ B)


def test_sparse_output_is_the_sparse_input(rt):
    # A graph output that is a sparse input comes back sparse, as fed.
    g = helper.make_graph([helper.make_node("SparseToDenseMatMul", ["A", "B"], ["Y"], domain="com.microsoft")], "g",
                          [helper.make_sparse_tensor_value_info("A", TensorProto.FLOAT, [3, 4]),
                           helper.make_tensor_value_info("B", TensorProto.FLOAT, [4, 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
                           helper.make_sparse_tensor_value_info("A", TensorProto.FLOAT, [3, 4])])
    sess = rt.InferenceSession(helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    assert [o.type for o in sess.get_outputs()] == ["tensor(float)", "sparse_tensor(float)"]
    feed = rt.OrtValue.ort_value_from_sparse_tensor(_coo(rt, two_d=True))
    y, a = sess.run_with_ort_values(None, {"A": feed, "B": rt.OrtValue.ortvalue_from_numpy(B)})
    np.testing.assert_allclose(y.numpy(), DENSE @ B)
    assert a.is_sparse_tensor() and a.data_type() == "sparse_tensor(float)"
    np.testing.assert_array_equal(a.as_sparse_tensor().values(), [1, 2, 3, 4])
    np.testing.assert_array_equal(a.as_sparse_tensor().as_coo_view().indices(), [[0, 1], [1, 0], [1, 3], [2, 3]])
    y, a = sess.run(None, {"A": feed, "B": B})
    np.testing.assert_allclose(y, DENSE @ B)
    assert type(a).__name__ == "SparseTensor" and a.dense_shape() == [3, 4]  # the C-level class, as onnxruntime
    np.testing.assert_array_equal(a.values(), [1, 2, 3, 4])


def test_sparse_linear_coo_into_matmul(rt):
    sess = rt.InferenceSession(_sparse_matmul_model(), providers=["CPUExecutionProvider"])
    feed = rt.OrtValue.ort_value_from_sparse_tensor(_coo(rt))
    if is_ort(rt):
        # onnxruntime's SparseToDenseMatMul takes only 2-D COO indices.
        with pytest.raises(Exception, match="Expecting COO 2-D indices shape"):
            sess.run(None, {"A": feed, "B": B})
        return
    np.testing.assert_allclose(sess.run(None, {"A": feed, "B": B})[0], DENSE @ B)


def test_sparse_input_bad_feeds(rt):
    sess = rt.InferenceSession(_sparse_matmul_model(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):
        sess.run(None, {"A": DENSE, "B": B})  # a dense array for a sparse input
    wrong = rt.SparseTensor.sparse_coo_from_numpy([3, 4], np.array([1.0], np.float64), np.array([[0, 1]], np.int64),
                                                  _cpu(rt))
    with pytest.raises(Exception):
        sess.run(None, {"A": rt.OrtValue.ort_value_from_sparse_tensor(wrong), "B": B})
    out = sess.run(None, {"A": rt.OrtValue.ort_value_from_sparse_tensor(_csr(rt)), "B": B})[0]
    np.testing.assert_allclose(out, DENSE @ B)  # still usable


@pytest.mark.parametrize("make,text", [
    (lambda rt: rt.SparseTensor.sparse_coo_from_numpy([3, 4], np.array([1, 2], np.float32),
                                                      np.array([20, 1], np.int64), _cpu(rt)), "out of range"),
    (lambda rt: rt.SparseTensor.sparse_coo_from_numpy([3, 4], np.array([1, 2], np.float32),
                                                      np.array([5, 1], np.int64), _cpu(rt)), "sorted"),
    (lambda rt: rt.SparseTensor.sparse_coo_from_numpy([3, 4], np.array([1, 2], np.float32),
                                                      np.array([[0, 1], [5, 0]], np.int64), _cpu(rt)), "out of range"),
    (lambda rt: rt.SparseTensor.sparse_csr_from_numpy([3, 4], np.array([1, 2], np.float32),
                                                      np.array([1, 9], np.int64), np.array([0, 1, 2, 2], np.int64),
                                                      _cpu(rt)), "out of range"),
    (lambda rt: rt.SparseTensor.sparse_csr_from_numpy([3, 4], np.array([1, 2], np.float32),
                                                      np.array([3, 1], np.int64), np.array([0, 2, 2, 2], np.int64),
                                                      _cpu(rt)), "sorted"),
])
def test_sparse_bad_indices(rt, make, text):
    if is_ort(rt):
        # onnxruntime takes these as they are (and later reads outside the
        # values or builds a wrong tensor); onyxruntime refuses them.
        make(rt)
        return
    with pytest.raises(RuntimeError, match=text):
        make(rt)


@pytest.mark.parametrize("args,text", [
    (([3, 4], np.array([1, 2], np.float32), np.array([1], np.int64)), "Index size: 1 must be equal to or twice"),
])
def test_sparse_bad_shapes_both(rt, args, text):
    with pytest.raises(RuntimeError) as e:
        rt.SparseTensor.sparse_coo_from_numpy(*args, _cpu(rt))
    if is_ort(rt):
        assert text in str(e.value)
    else:
        assert "COO indices of shape [1] must be [2] or [2,2]" in str(e.value)


def test_sparse_to_cuda_refused(rt):
    with pytest.raises(RuntimeError, match="Cuda is not available in this build"):
        _coo(rt).to_cuda(_cpu(rt))


def test_sparse_initializer_densified(rt):
    rows = np.flatnonzero(DENSE).astype(np.int64)
    sp = helper.make_sparse_tensor(numpy_helper.from_array(DENSE[DENSE != 0], "W"),
                                   numpy_helper.from_array(rows, "W_idx"), [3, 4])
    m = _model([helper.make_node("Add", ["X", "W"], ["Y"])], [helper.make_tensor_value_info("X", 1, [3, 4])],
               [helper.make_tensor_value_info("Y", 1, [3, 4])], sparse_initializers=[sp])
    sess = rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": np.ones((3, 4), np.float32)})[0], DENSE + 1)


def test_sparse_initializer_bad_index(rt, tmp_path):
    sp = helper.make_sparse_tensor(numpy_helper.from_array(np.array([1, 2], np.float32), "W"),
                                   numpy_helper.from_array(np.array([3, 99], np.int64), "W_idx"), [3, 4])
    m = _model([helper.make_node("Add", ["X", "W"], ["Y"])], [helper.make_tensor_value_info("X", 1, [3, 4])],
               [helper.make_tensor_value_info("Y", 1, [3, 4])], sparse_initializers=[sp])
    with pytest.raises(Exception) as e:
        rt.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    if not is_ort(rt):
        assert "sparse initializer 'W'" in str(e.value) and "99" in str(e.value)


# ---- DLPack ---------------------------------------------------------------------

def test_dlpack_to_numpy_shares_memory(rt):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = rt.OrtValue.ortvalue_from_numpy(x)
    assert v.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(v)
    assert a.ctypes.data == v.data_ptr()
    np.testing.assert_array_equal(a, x)
    del v
    np.testing.assert_array_equal(a, x)  # the capsule keeps the value alive


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint8, np.uint16, np.float16,
                                   np.complex64])
def test_dlpack_from_numpy_shares_memory(rt, dtype):
    x = (np.arange(12) % 7).astype(dtype).reshape(3, 4)
    if is_ort(rt) and dtype == np.complex64:
        with pytest.raises(RuntimeError, match="Unsupported code 5"):  # onnxruntime lacks complex DLPack
            rt.OrtValue.from_dlpack(x)
        return
    v = rt.OrtValue.from_dlpack(x)
    assert v.data_ptr() == x.ctypes.data
    assert v.shape() == [3, 4]
    np.testing.assert_array_equal(v.numpy(), x)
    x[0, 0] = 5
    assert v.numpy()[0, 0] == 5


def test_dlpack_bool(rt):
    b = np.array([True, False, True])
    if is_ort(rt):
        # numpy 2 exports bool as kDLBool (code 6), which onnxruntime refuses.
        with pytest.raises(RuntimeError, match="Unsupported code 6"):
            rt.OrtValue.from_dlpack(b)
        return
    v = rt.OrtValue.from_dlpack(b)
    assert v.data_type() == "tensor(bool)"
    np.testing.assert_array_equal(v.numpy(), b)


def test_dlpack_round_trip_and_run(rt):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    v = rt.OrtValue.ortvalue_from_numpy(x)
    C = _C(rt)
    w = rt.OrtValue(C.OrtValue.from_dlpack(v._ortvalue.to_dlpack(), False)) if is_ort(rt) else \
        rt.OrtValue.from_dlpack(v.to_dlpack())
    assert w.data_ptr() == v.data_ptr()
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2, 3])],
                          [helper.make_tensor_value_info("Y", 1, [2, 3])])
    sess = rt.InferenceSession(helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": w})[0], np.maximum(x, 0))


def test_dlpack_capsule_consumed_twice(rt):
    C = _C(rt)
    cap = np.arange(4, dtype=np.float32).__dlpack__()
    C.OrtValue.from_dlpack(cap, False)
    with pytest.raises(TypeError, match="from_dlpack expected a valid DLPack capsule named 'dltensor'"):
        C.OrtValue.from_dlpack(cap, False)
    with pytest.raises(Exception):
        rt.OrtValue.from_dlpack(3)


def test_dlpack_uint8_flag(rt):
    C = _C(rt)
    assert C.is_dlpack_uint8_tensor(np.arange(3, dtype=np.uint8).__dlpack__())
    assert not C.is_dlpack_uint8_tensor(np.arange(3, dtype=np.int32).__dlpack__())


def test_dlpack_vector(rt):
    C = _C(rt)
    vec = C.OrtValueVector()
    x = np.arange(3, dtype=np.float32)
    vec.push_back(rt.OrtValue.ortvalue_from_numpy(x)._get_c_value() if not is_ort(rt)
                  else rt.OrtValue.ortvalue_from_numpy(x)._ortvalue)
    caps = vec.to_dlpacks(None)
    np.testing.assert_array_equal(C.OrtValue.from_dlpack(caps[0], False).numpy(), x)
    got = vec.to_dlpacks(lambda cap: C.OrtValue.from_dlpack(cap, False).numpy())
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(C.OrtValue.from_dlpack(vec.dlpack_at(0), False).numpy(), x)


def test_dlpack_torch_if_installed(rt):
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32)
    v = rt.OrtValue.from_dlpack(t)
    assert v.data_ptr() == t.data_ptr()
    back = torch.from_dlpack(v)
    assert back.data_ptr() == t.data_ptr()


# ---- external initializers ------------------------------------------------------

W = np.arange(6, dtype=np.float32).reshape(2, 3)


def _add_w_model(external_dir=None):
    m = _model([helper.make_node("Add", ["X", "W"], ["Y"])], [helper.make_tensor_value_info("X", 1, [2, 3])],
               [helper.make_tensor_value_info("Y", 1, [2, 3])], [numpy_helper.from_array(W, "W")])
    if external_dir is not None:
        onnx.external_data_helper.convert_model_to_external_data(m, all_tensors_to_one_file=True, location="w.bin",
                                                                 size_threshold=0)
        path = os.path.join(external_dir, "m.onnx")
        onnx.save(m, path)
        return m, path
    return m


def test_add_external_initializers(rt, tmp_path):
    m, path = _add_w_model(str(tmp_path))
    so = rt.SessionOptions()
    so.add_external_initializers(["W"], [rt.OrtValue.ortvalue_from_numpy(W * 10)])
    sess = rt.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": np.zeros((2, 3), np.float32)})[0], W * 10)
    # From bytes, the external data is never looked for: the caller gives it.
    sess = rt.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": np.zeros((2, 3), np.float32)})[0], W * 10)
    with pytest.raises(Exception):  # same shape or nothing
        wrong = rt.SessionOptions()
        wrong.add_external_initializers(["W"], [rt.OrtValue.ortvalue_from_numpy(np.zeros((3, 2), np.float32))])
        rt.InferenceSession(path, wrong, providers=["CPUExecutionProvider"])
    bad = rt.SessionOptions()
    bad.add_external_initializers(["Q"], [rt.OrtValue.ortvalue_from_numpy(W)])
    with pytest.raises(Exception, match="Q"):
        rt.InferenceSession(path, bad, providers=["CPUExecutionProvider"])
    with pytest.raises(RuntimeError, match="equal length"):
        so.add_external_initializers(["W", "Z"], [rt.OrtValue.ortvalue_from_numpy(W)])


def test_add_external_initializers_from_files_in_memory(rt, tmp_path):
    m, path = _add_w_model(str(tmp_path))
    buf = np.fromfile(tmp_path / "w.bin", dtype=np.uint8)
    os.rename(tmp_path / "w.bin", tmp_path / "moved.bin")  # only memory has it now
    so = rt.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["w.bin"], [buf], [len(buf)])
    x = np.ones((2, 3), np.float32)
    for source in (path, m.SerializeToString()):
        sess = rt.InferenceSession(source, so, providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(sess.run(None, {"X": x})[0], W + 1)
    with pytest.raises(Exception):  # without the file in memory
        rt.InferenceSession(path, providers=["CPUExecutionProvider"])
    short = rt.SessionOptions()
    short.add_external_initializers_from_files_in_memory(["w.bin"], [bytes(8)], [8])
    with pytest.raises(Exception):
        rt.InferenceSession(path, short, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("threshold", [0, 1024])
def test_optimized_model_external_initializers(rt, tmp_path, threshold):
    big = np.arange(600, dtype=np.float32).reshape(2, 300)
    small = np.ones((2, 300), np.float32)[:, :3].copy()
    m = _model([helper.make_node("Add", ["X", "BIG"], ["T"]), helper.make_node("ReduceSum", ["T"], ["S"], keepdims=1),
                helper.make_node("Add", ["S", "SMALL"], ["Y"])],
               [helper.make_tensor_value_info("X", 1, [2, 300])], [helper.make_tensor_value_info("Y", 1, None)],
               [numpy_helper.from_array(big, "BIG"), numpy_helper.from_array(small, "SMALL")])
    so = rt.SessionOptions()
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "opt.bin")
    so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", str(threshold))
    x = np.ones((2, 300), np.float32)
    want = rt.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert os.path.getsize(tmp_path / "opt.bin") >= big.nbytes
    saved = onnx.load(str(tmp_path / "opt.onnx"), load_external_data=False)
    locations = {t.name: t.data_location for t in saved.graph.initializer}
    assert locations["BIG"] == TensorProto.EXTERNAL
    assert locations["SMALL"] == (TensorProto.EXTERNAL if threshold == 0 else TensorProto.DEFAULT)
    again = rt.InferenceSession(str(tmp_path / "opt.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(again.run(None, {"X": x})[0], want)


def test_ort_load_config_from_model(rt, tmp_path):
    # A child process, since the variable is read from the environment.
    m = _model([helper.make_node("Relu", ["X"], ["Y"])], [helper.make_tensor_value_info("X", 1, [2])],
               [helper.make_tensor_value_info("Y", 1, [2])],
               metadata={"ort_config": '{"session_options": {"intra_op_num_threads": 2, "enable_profiling": 1, '
                                       '"graph_optimization_level": 1, "unknown_key": "x"}}'})
    bad = _model([helper.make_node("Relu", ["X"], ["Y"])], [helper.make_tensor_value_info("X", 1, [2])],
                 [helper.make_tensor_value_info("Y", 1, [2])],
                 metadata={"ort_config": '{"session_options": {"execution_mode": 7}}'})
    onnx.save(m, str(tmp_path / "m.onnx"))
    onnx.save(bad, str(tmp_path / "bad.onnx"))
    script = (
        "import sys, numpy as np\n"
        "sys.path[:0] = %r\n"
        "import %s as rt\n"
        "so = rt.SessionOptions(); so.profile_file_prefix = %r\n"
        "s = rt.InferenceSession(%r, so, providers=['CPUExecutionProvider'])\n"
        "print('OUT', s.run(None, {'X': np.array([-1, 2], np.float32)})[0].tolist())\n"
        "print('PROFILE', bool(s.end_profiling()))\n"
        "try:\n"
        "    rt.InferenceSession(%r, providers=['CPUExecutionProvider']); print('BAD ok')\n"
        "except Exception as e:\n"
        "    print('BAD', e)\n"
    ) % (sys.path, rt.__name__, str(tmp_path / "prof"), str(tmp_path / "m.onnx"), str(tmp_path / "bad.onnx"))
    env = dict(os.environ, ORT_LOAD_CONFIG_FROM_MODEL="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                         cwd=str(tmp_path))
    assert "OUT [0.0, 2.0]" in out.stdout, out.stdout + out.stderr
    assert "PROFILE True" in out.stdout  # enable_profiling came from the model
    assert "Unsupported execution_mode value in ORT config: 7" in out.stdout


# ---- memory info and arena config --------------------------------------------------

def test_memory_info_create_v2(rt):
    M = rt.OrtMemoryInfo
    v = M.create_v2("Cpu", rt.OrtMemoryInfoDeviceType.CPU, 0, 0, rt.OrtDeviceMemoryType.DEFAULT, 0,
                    rt.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    assert (v.name, v.device_id, int(v.mem_type), int(v.allocator_type), int(v.device_mem_type), v.device_vendor_id) \
        == ("Cpu", 0, 0, 0, 0, 0)
    v = M.create_v2("Cpu", rt.OrtMemoryInfoDeviceType.CPU, 0, 0, rt.OrtDeviceMemoryType.HOST_ACCESSIBLE, 64,
                    rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    assert v.mem_type == rt.OrtMemType.CPU_OUTPUT and v.device_mem_type == rt.OrtDeviceMemoryType.HOST_ACCESSIBLE
    v = M.create_v2("Cuda", rt.OrtMemoryInfoDeviceType.GPU, 0x10DE, 1, rt.OrtDeviceMemoryType.DEFAULT, 0,
                    rt.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    assert (v.device_vendor_id, v.device_id) == (0x10DE, 1)
    for mt in (rt.OrtMemType.DEFAULT, rt.OrtMemType.CPU_INPUT, rt.OrtMemType.CPU_OUTPUT):
        old = M("Cpu", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, mt)
        assert old.device_mem_type == rt.OrtDeviceMemoryType.DEFAULT and old.device_vendor_id == 0
    assert M("Cuda", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT).device_vendor_id == 0x10DE
    assert dict(rt.OrtDeviceMemoryType.__members__) .keys() == {"DEFAULT", "HOST_ACCESSIBLE"}


def test_arena_cfg_keys(rt):
    c = rt.OrtArenaCfg({"max_mem": 0, "initial_growth_chunk_size_bytes": 1024, "max_power_of_two_extend_bytes": 2048,
                        "arena_extend_strategy": 1})
    assert (c.initial_growth_chunk_size_bytes, c.max_power_of_two_extend_bytes, c.max_mem,
            c.arena_extend_strategy, c.initial_chunk_size_bytes) == (1024, 2048, 0, 1, -1)
    with pytest.raises(RuntimeError, match="Invalid OrtArenaCfg option: foo"):
        rt.OrtArenaCfg({"foo": 1})
    mi = rt.OrtMemoryInfo("Cpu", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT)
    rt.create_and_register_allocator(mi, c)


# ---- LoRA adapters ----------------------------------------------------------------

def _lora_model():
    # Y = X @ (W + A @ B): A and B are inputs with initializers (zeros) that an adapter replaces.
    return _model([helper.make_node("MatMul", ["A", "B"], ["AB"]), helper.make_node("Add", ["W", "AB"], ["WW"]),
                   helper.make_node("MatMul", ["X", "WW"], ["Y"])],
                  [helper.make_tensor_value_info("X", 1, [1, 4]), helper.make_tensor_value_info("A", 1, [4, 2]),
                   helper.make_tensor_value_info("B", 1, [2, 3])],
                  [helper.make_tensor_value_info("Y", 1, [1, 3])],
                  [numpy_helper.from_array(np.ones((4, 3), np.float32), "W"),
                   numpy_helper.from_array(np.zeros((4, 2), np.float32), "A"),
                   numpy_helper.from_array(np.zeros((2, 3), np.float32), "B")]).SerializeToString()


def _write_adapter(rt, path, a, b, adapter_version=2, model_version=3):
    fmt = rt.AdapterFormat()
    fmt.set_adapter_version(adapter_version)
    fmt.set_model_version(model_version)
    fmt.set_parameters({"A": rt.OrtValue.ortvalue_from_numpy(a), "B": rt.OrtValue.ortvalue_from_numpy(b)})
    fmt.export_adapter(str(path))


def _ab(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((4, 2)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)


def test_adapter_format_round_trip(rt, tmp_path):
    a, b = _ab(0)
    _write_adapter(rt, tmp_path / "x.onnx_adapter", a, b)
    fmt = rt.AdapterFormat.read_adapter(str(tmp_path / "x.onnx_adapter"))
    assert (fmt.get_format_version(), fmt.get_adapter_version(), fmt.get_model_version()) == (1, 2, 3)
    params = fmt.get_parameters()
    np.testing.assert_array_equal(params["A"].numpy(), a)
    np.testing.assert_array_equal(params["B"].numpy(), b)


@pytest.mark.parametrize("writer", ["onnxruntime", "onyxruntime"])
def test_adapter_files_cross_read(rt, tmp_path, writer, onyx):
    # A file either package writes, the other reads.
    other = importlib.import_module("onnxruntime") if writer == "onnxruntime" else onyx
    a, b = _ab(1)
    _write_adapter(other, tmp_path / "x.onnx_adapter", a, b, 7, 9)
    fmt = rt.AdapterFormat.read_adapter(str(tmp_path / "x.onnx_adapter"))
    assert (fmt.get_adapter_version(), fmt.get_model_version()) == (7, 9)
    np.testing.assert_array_equal(fmt.get_parameters()["B"].numpy(), b)


def test_lora_run_replaces_for_that_run_only(rt, tmp_path):
    sess = rt.InferenceSession(_lora_model(), providers=["CPUExecutionProvider"])
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    base = sess.run(None, {"X": x})[0]
    np.testing.assert_allclose(base, x @ np.ones((4, 3)))
    outs = {}
    for k in (1, 2):
        a, b = _ab(k)
        _write_adapter(rt, tmp_path / ("%d.onnx_adapter" % k), a, b)
        adapter = rt.LoraAdapter()
        adapter.Load(str(tmp_path / ("%d.onnx_adapter" % k)))
        ro = rt.RunOptions()
        ro.add_active_adapter(adapter)
        outs[k] = (adapter, x @ (np.ones((4, 3)) + a @ b))
        np.testing.assert_allclose(sess.run(None, {"X": x}, ro)[0], outs[k][1], rtol=1e-5)
    np.testing.assert_array_equal(sess.run(None, {"X": x})[0], base)
    # Concurrent runs with different adapters each see their own.
    errors = []

    def worker(k):
        ro = rt.RunOptions()
        ro.add_active_adapter(outs[k][0])
        try:
            for _ in range(20):
                np.testing.assert_allclose(sess.run(None, {"X": x}, ro)[0], outs[k][1], rtol=1e-5)
                np.testing.assert_array_equal(sess.run(None, {"X": x})[0], base)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (1, 2, 1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_lora_bad_files(rt, tmp_path):
    a, b = _ab(3)
    _write_adapter(rt, tmp_path / "x.onnx_adapter", a, b)
    data = (tmp_path / "x.onnx_adapter").read_bytes()
    (tmp_path / "cut.onnx_adapter").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.onnx_adapter").write_bytes(b"not an adapter at all")
    for name in ("cut.onnx_adapter", "junk.onnx_adapter", "missing.onnx_adapter"):
        with pytest.raises(Exception):
            rt.LoraAdapter().Load(str(tmp_path / name))
    # A parameter the model lacks fails the run, naming it; the session stays usable.
    fmt = rt.AdapterFormat()
    fmt.set_parameters({"NOPE": rt.OrtValue.ortvalue_from_numpy(a)})
    fmt.export_adapter(str(tmp_path / "nope.onnx_adapter"))
    adapter = rt.LoraAdapter()
    adapter.Load(str(tmp_path / "nope.onnx_adapter"))
    ro = rt.RunOptions()
    ro.add_active_adapter(adapter)
    sess = rt.InferenceSession(_lora_model(), providers=["CPUExecutionProvider"])
    x = np.ones((1, 4), np.float32)
    with pytest.raises(Exception) as e:
        sess.run(None, {"X": x}, ro)
    assert "NOPE" in str(e.value)
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], x @ np.ones((4, 3)))


def test_lora_from_bytes(onyx, tmp_path):
    # An onyxruntime extension: an adapter from the bytes of its file.
    a, b = _ab(4)
    _write_adapter(onyx, tmp_path / "x.onnx_adapter", a, b)
    adapter = onyx.LoraAdapter.from_bytes((tmp_path / "x.onnx_adapter").read_bytes())
    ro = onyx.RunOptions()
    ro.add_active_adapter(adapter)
    sess = onyx.InferenceSession(_lora_model(), providers=["CPUExecutionProvider"])
    x = np.ones((1, 4), np.float32)
    np.testing.assert_allclose(sess.run(None, {"X": x}, ro)[0], x @ (np.ones((4, 3)) + a @ b), rtol=1e-5)
    with pytest.raises(Exception, match="truncated|not an onnxruntime adapter"):
        onyx.LoraAdapter.from_bytes((tmp_path / "x.onnx_adapter").read_bytes()[:40])


# ---- session methods for devices we lack ---------------------------------------------

def test_session_device_methods(rt):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2])],
                          [helper.make_tensor_value_info("Y", 1, [2])])
    sess = rt.InferenceSession(helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    assert sess.get_tuning_results() == []
    assert sess.set_tuning_results([]) is None
    assert sess.release_captured_graph(0) is None
    v = sess.create_ortvalue_from_shape_and_type([2, 3], np.float32, "cpu")
    assert v.shape() == [2, 3] and v.data_type() == "tensor(float)"
    C = _C(rt)
    feeds, fetches = C.OrtValueVector(), C.OrtValueVector()
    x = np.array([-1, 2], np.float32)
    xv = rt.OrtValue.ortvalue_from_numpy(x)
    feeds.push_back(xv._ortvalue if is_ort(rt) else xv)
    sess.run_with_ortvaluevector(rt.RunOptions(), ["X"], feeds, ["Y"], fetches, [C.OrtDevice(0, 0, 0)])
    assert len(fetches) == 1
    np.testing.assert_array_equal(fetches[0].numpy(), [0, 2])


def test_provider_graph_assignment_info(rt):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["T"], name="r"), helper.make_node("Neg", ["T"], ["Y"])],
                          "g", [helper.make_tensor_value_info("X", 1, [2])], [helper.make_tensor_value_info("Y", 1, [2])])
    model = helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString()
    so = rt.SessionOptions()
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    info = rt.InferenceSession(model, so, providers=["CPUExecutionProvider"]).get_provider_graph_assignment_info()
    assert [sg.ep_name for sg in info] == ["CPUExecutionProvider"] * 2
    nodes = [n for sg in info for n in sg.get_nodes()]
    assert [(n.op_type, n.domain) for n in nodes] == [("Relu", ""), ("Neg", "")]
    assert nodes[0].name == "r"
    assert nodes[1].name == ("" if is_ort(rt) else "Neg_1")  # onyxruntime names unnamed nodes
    C = _C(rt)
    plain = rt.InferenceSession(model, providers=["CPUExecutionProvider"])
    with pytest.raises(C.Fail, match="session.record_ep_graph_assignment_info' must be set to"):
        plain.get_provider_graph_assignment_info()


def test_ep_devices(rt):
    devices = rt.get_ep_devices()
    cpu = [d for d in devices if d.ep_name == "CPUExecutionProvider"]
    assert len(cpu) == 1
    d = cpu[0]
    assert d.device.type == rt.OrtHardwareDeviceType.CPU
    assert d.device.vendor_id in (0x1022, 0x8086, 0x13B5, 0) and isinstance(d.device.vendor, str)
    assert d.ep_options == {} and "version" in d.ep_metadata
    assert d.memory_info(rt.OrtDeviceMemoryType.DEFAULT) is None
    with pytest.raises(RuntimeError):
        d.create_sync_stream()
    g = helper.make_graph([helper.make_node("Add", ["X", "Z"], ["Y"])], "g",
                          [helper.make_tensor_value_info("X", 1, [2]), helper.make_tensor_value_info("Z", 1, [2])],
                          [helper.make_tensor_value_info("Y", 1, [2])])
    sess = rt.InferenceSession(helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    eps = sess.get_input_epdevices()
    assert len(eps) == 2 and all(e.ep_name == "CPUExecutionProvider" for e in eps)


def test_add_provider_and_policies(rt):
    so = rt.SessionOptions()
    assert not so.has_providers()
    so.add_provider("CPUExecutionProvider", {})
    assert so.has_providers()
    with pytest.raises(RuntimeError, match="Unknown Provider Type: FooEP"):
        rt.SessionOptions().add_provider("FooEP", {})
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2])],
                          [helper.make_tensor_value_info("Y", 1, [2])])
    model = helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString()
    x = np.array([-1, 3], np.float32)
    for make in (lambda o: o.add_provider("CPUExecutionProvider", {}),
                 lambda o: o.add_provider_for_devices([d for d in rt.get_ep_devices()
                                                       if d.ep_name == "CPUExecutionProvider"], {}),
                 lambda o: o.set_provider_selection_policy(rt.OrtExecutionProviderDevicePolicy.PREFER_CPU)):
        so = rt.SessionOptions()
        make(so)
        sess = rt.InferenceSession(model, so)
        assert "CPUExecutionProvider" in sess.get_providers()
        np.testing.assert_array_equal(sess.run(None, {"X": x})[0], [0, 3])


@pytest.mark.parametrize("view", [lambda a: a[:, ::2], lambda a: a.T])
def test_dlpack_strided_refused(rt, view):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(RuntimeError, match="contiguous"):
        rt.OrtValue.from_dlpack(view(x))
    # The array is untouched and still usable.
    np.testing.assert_array_equal(rt.OrtValue.from_dlpack(x).numpy(), x)


def test_dlpack_capsules_released(rt):
    # Capsules dropped unconsumed, consumed by numpy, or consumed by an
    # OrtValue: each frees what it holds exactly once (no crash, no leak of
    # the values they keep alive).
    import gc
    import weakref

    x = np.arange(1000, dtype=np.float32)
    for _ in range(50):
        v = rt.OrtValue.ortvalue_from_numpy(x)
        cap = v.to_dlpack() if not is_ort(rt) else v._ortvalue.to_dlpack()
        del cap
        a = np.from_dlpack(v)
        del v
        assert a[999] == 999
        del a
        w = rt.OrtValue.from_dlpack(np.arange(10, dtype=np.int64))
        assert w.numpy()[9] == 9
        del w
    gc.collect()
    if not is_ort(rt):
        v = rt.OrtValue.ortvalue_from_numpy(x)
        ref = weakref.ref(v)
        a = np.from_dlpack(v)
        del v
        gc.collect()
        assert ref() is not None  # the consumer's array keeps it
        del a
        gc.collect()
        assert ref() is None


def test_c_level_session_iobinding(rt):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2, 3])],
                          [helper.make_tensor_value_info("Y", 1, [2, 3])])
    sess = rt.InferenceSession(helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString(),
                               providers=["CPUExecutionProvider"])
    C = _C(rt)
    binding = sess.io_binding()
    c = binding._iobinding  # the C-level SessionIOBinding
    assert type(c).__name__ == "SessionIOBinding"
    cpu = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
    x = (np.arange(6, dtype=np.float32) - 3).reshape(2, 3)
    y = np.zeros((2, 3), np.float32)
    c.bind_input("X", cpu, np.float32, [2, 3], x.ctypes.data)
    c.bind_output("Y", cpu, np.float32, [2, 3], y.ctypes.data)
    c.synchronize_inputs()
    sess.run_with_iobinding(binding)
    c.synchronize_outputs()
    np.testing.assert_array_equal(y, np.maximum(x, 0))  # written in place
    outs = c.get_outputs()
    assert type(outs).__name__ == "OrtValueVector" and len(outs) == 1
    np.testing.assert_array_equal(outs[0].numpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(c.copy_outputs_to_cpu()[0], np.maximum(x, 0))
    c.clear_binding_outputs()
    c.bind_output("Y", cpu)  # allocated by each run
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(c.copy_outputs_to_cpu()[0], np.maximum(x, 0))
    c.clear_binding_inputs()
    xv = rt.OrtValue.ortvalue_from_numpy(x * 2)
    c.bind_ortvalue_input("X", xv._ortvalue if is_ort(rt) else xv)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(c.copy_outputs_to_cpu()[0], np.maximum(x * 2, 0))


def test_global_thread_pools(rt, tmp_path):
    # Process-wide and irreversible: in a child process.
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2])],
                          [helper.make_tensor_value_info("Y", 1, [2])])
    onnx.save(helper.make_model(g, opset_imports=OPSETS, ir_version=8), str(tmp_path / "m.onnx"))
    script = (
        "import sys, threading, numpy as np\n"
        "sys.path[:0] = %r\n"
        "import %s as rt\n"
        "so = rt.SessionOptions(); so.use_per_session_threads = False\n"
        "assert so.use_per_session_threads is False\n"
        "try:\n"
        "    rt.InferenceSession(%r, so, providers=['CPUExecutionProvider'], enable_fallback=0)\n"
        "    print('NOPOOL ok')\n"
        "except Exception as e:\n"
        "    print('NOPOOL', e)\n"
        "rt.set_global_thread_pool_sizes(2, 1)\n"
        "try:\n"
        "    rt.set_global_thread_pool_sizes(3, 1)\n"
        "except Exception as e:\n"
        "    print('AGAIN', e)\n"
        "so.intra_op_num_threads = 4\n"
        "a = rt.InferenceSession(%r, so, providers=['CPUExecutionProvider'])\n"
        "b = rt.InferenceSession(%r, so, providers=['CPUExecutionProvider'])\n"
        "x = np.array([-1, 2], np.float32)\n"
        "print('OUT', a.run(None, {'X': x})[0].tolist(), b.run(None, {'X': x})[0].tolist())\n"
        "done = threading.Event(); got = []\n"
        "a.run_async(None, {'X': x}, lambda r, u, e: (got.append((r[0].tolist(), e)), done.set()), None)\n"
        "done.wait(30); print('ASYNC', got)\n"
    ) % (sys.path, rt.__name__, *(str(tmp_path / "m.onnx"),) * 3)
    # The script ends right after its async run's callback: the process must
    # still exit (the callback's thread finishing while Python shuts down).
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=str(tmp_path))
    assert "When the session is not configured to use per session threadpools, the env must be created with" \
        in out.stdout, out.stdout + out.stderr
    assert "AGAIN" in out.stdout and "Global thread pools have already been created, cannot replace them" in out.stdout
    assert "OUT [0.0, 2.0] [0.0, 2.0]" in out.stdout, out.stdout + out.stderr
    assert "ASYNC [([0.0, 2.0], '')]" in out.stdout, out.stdout + out.stderr


def test_dlpack_device_we_lack(rt):
    # A capsule of an OpenCL tensor (device type 4) with no deleter. (CUDA
    # capsules are taken where CUDA is usable: test_cuda_provider.py.)
    import ctypes

    if is_ort(rt):
        pytest.skip("onnxruntime aborts the process on this capsule (terminate: 'A dlpack structure must have a "
                    "deleter')")

    class Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class Tensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32), ("dtype", DType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]

    class Managed(ctypes.Structure):
        _fields_ = [("dl_tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    shape = (ctypes.c_int64 * 1)(4)
    buf = (ctypes.c_float * 4)()
    m = Managed()
    m.dl_tensor.data, m.dl_tensor.device, m.dl_tensor.ndim = ctypes.addressof(buf), Device(4, 0), 1
    m.dl_tensor.dtype, m.dl_tensor.shape = DType(2, 32, 1), shape
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = new(ctypes.addressof(m), b"dltensor", None)
    C = _C(rt)
    with pytest.raises(RuntimeError, match="DLPack device type 4"):
        C.OrtValue.from_dlpack(cap, False)
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert name(cap) == b"dltensor"  # refused, so not consumed


def test_adapter_reader_survives_corruption(onyx, tmp_path):
    # Every truncation and a few thousand byte flips of a valid file: a clean
    # error or a valid adapter, never a crash or a read outside the buffer.
    a, b = _ab(5)
    _write_adapter(onyx, tmp_path / "x.onnx_adapter", a, b)
    data = (tmp_path / "x.onnx_adapter").read_bytes()
    for n in range(len(data)):
        with pytest.raises(Exception):
            onyx.LoraAdapter.from_bytes(data[:n])
    rng = np.random.default_rng(0)
    for _ in range(3000):
        mutated = bytearray(data)
        for pos in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            mutated[pos] = int(rng.integers(0, 256))
        try:
            onyx.LoraAdapter.from_bytes(bytes(mutated))
        except Exception as e:  # noqa: BLE001
            assert "adapter" in str(e)


def test_load_cancellation_flag(rt):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", 1, [2])],
                          [helper.make_tensor_value_info("Y", 1, [2])])
    model = helper.make_model(g, opset_imports=OPSETS, ir_version=8).SerializeToString()
    C = _C(rt)
    so = rt.SessionOptions()
    so.set_load_cancellation_flag(True)
    with pytest.raises(C.ModelLoadCanceled, match="MODEL_LOAD_CANCELED"):
        rt.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    so.set_load_cancellation_flag(False)
    sess = rt.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"X": np.array([-1, 2], np.float32)})[0], [0, 2])
