"""InferenceSession.run's fast path (one SessionRunTensors call per run for
numeric numpy feeds) against onnxruntime, onnx.reference and the general path
(lists, non-contiguous arrays), plus the C entry's own checks of bad inputs."""

import threading

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def _mixed_model():
    """a float [N,3] + bias (overridable initializer); b int64 [N] * 2;
    c bool negated; d float16 identity; e bfloat16 identity; big float [N, 8192]."""
    bias = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "bias")
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    nodes = [
        helper.make_node("Add", ["a", "bias"], ["a_out"]),
        helper.make_node("Mul", ["b", "two"], ["b_out"]),
        helper.make_node("Not", ["c"], ["c_out"]),
        helper.make_node("Identity", ["d"], ["d_out"]),
        helper.make_node("Identity", ["e"], ["e_out"]),
        helper.make_node("Relu", ["big"], ["big_out"]),
    ]
    inputs = [_vi("a", TensorProto.FLOAT, ["N", 3]), _vi("b", TensorProto.INT64, ["N"]),
              _vi("c", TensorProto.BOOL, None), _vi("d", TensorProto.FLOAT16, None),
              _vi("e", TensorProto.BFLOAT16, None), _vi("big", TensorProto.FLOAT, ["N", 8192]),
              _vi("bias", TensorProto.FLOAT, [3])]
    outputs = [_vi("a_out", TensorProto.FLOAT, None), _vi("b_out", TensorProto.INT64, None),
               _vi("c_out", TensorProto.BOOL, None), _vi("d_out", TensorProto.FLOAT16, None),
               _vi("e_out", TensorProto.BFLOAT16, None), _vi("big_out", TensorProto.FLOAT, None)]
    return _model(nodes, inputs, outputs, [bias, two])


def _mixed_feed(n=2, seed=0):
    rng = np.random.RandomState(seed)
    return {
        "a": rng.randn(n, 3).astype(np.float32),
        "b": rng.randint(-50, 50, size=n).astype(np.int64),
        "c": rng.rand(2, 3, 1, 2, 1, 1, 2, 1, 3) > 0.5,  # rank 9: beyond the preallocated shape entries
        "d": rng.randn(n, 4).astype(np.float16),
        "e": rng.randn(5).astype(ml_dtypes.bfloat16),
        "big": rng.randn(n, 8192).astype(np.float32),  # 64 KiB per row: the zero-copy output path
    }


@pytest.fixture(scope="module", params=["compiled", "python"])
def fast_path(request, onyx):
    """Every test runs on both forms of the fast path: the C extension
    (_onyx_fast, built with the package and required to load here) and the
    pure-Python one that stands in where it cannot."""
    try:
        from onyxruntime.capi import _fastrun
    except ImportError:  # ONYX_TEST_SELF_CHECK: onnxruntime has neither
        if request.param == "python":
            pytest.skip("onnxruntime has no pure-Python fast path")
        yield request.param
        return
    saved = _fastrun._onyx_fast
    if request.param == "compiled" and saved is None:
        pytest.fail("onyxruntime.capi._onyx_fast (the compiled run path) did not load")
    if request.param == "python":
        _fastrun._onyx_fast = None
    try:
        yield request.param
    finally:
        _fastrun._onyx_fast = saved


@pytest.fixture(autouse=True)
def _on_each_path(fast_path):
    return fast_path


@pytest.fixture(scope="module")
def mixed(onyx, fast_path):
    model = _mixed_model()
    return model, onyx.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_mixed_types_match_onnxruntime_and_reference(mixed):
    model, sess = mixed
    feed = _mixed_feed()
    got = sess.run(None, feed)
    ref = ReferenceEvaluator(model).run(None, feed)
    _assert_same(got, [np.asarray(r) for r in ref])


def test_simple_model_matches_onnxruntime(onyx):
    w = np.random.RandomState(3).randn(16, 4).astype(np.float32)
    model = _model([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                   [_vi("x", TensorProto.FLOAT, ["N", 16])], [_vi("y", TensorProto.FLOAT, ["N", 4])],
                   [numpy_helper.from_array(w, "w")])
    data = model.SerializeToString()
    mine = onyx.InferenceSession(data, providers=["CPUExecutionProvider"])
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n in (1, 3, 0):
        x = np.random.RandomState(n).randn(n, 16).astype(np.float32)
        got, want = mine.run(None, {"x": x}), theirs.run(None, {"x": x})
        assert got[0].shape == want[0].shape
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def test_outputs_own_their_memory_and_are_writable(mixed):
    _, sess = mixed
    feed = _mixed_feed()
    first = sess.run(None, feed)
    keep = [a.copy() for a in first]
    for a in first:
        assert a.flags.writeable and a.flags.c_contiguous
    a_out = first[0]
    a_out += 1  # writing an output must not touch the next run's results
    second = sess.run(None, feed)
    _assert_same(second, keep)
    # The large (zero-copy) output stays valid after everything else is gone.
    big = second[5]
    del first, second
    np.testing.assert_array_equal(big, keep[5])


def test_selected_and_repeated_outputs(mixed):
    _, sess = mixed
    feed = _mixed_feed()
    full = sess.run(None, feed)
    got = sess.run(["big_out", "a_out", "a_out"], feed)
    np.testing.assert_array_equal(got[0], full[5])
    np.testing.assert_array_equal(got[1], full[0])
    np.testing.assert_array_equal(got[2], full[0])
    got[1][0, 0] = 1234.0
    assert got[2][0, 0] != 1234.0
    got = sess.run(("b_out",), feed)
    np.testing.assert_array_equal(got[0], feed["b"] * 2)


def test_overridable_initializer_feed(mixed):
    _, sess = mixed
    feed = _mixed_feed()
    feed["bias"] = np.array([10, 20, 30], np.float32)
    got = sess.run(["a_out"], feed)
    np.testing.assert_allclose(got[0], feed["a"] + feed["bias"])


def test_general_path_inputs_give_the_same_results(mixed):
    _, sess = mixed
    feed = _mixed_feed()
    want = sess.run(None, feed)
    strided = dict(feed)
    wide = np.zeros((feed["a"].shape[0], 6), np.float32)
    wide[:, ::2] = feed["a"]
    strided["a"] = wide[:, ::2]  # not contiguous
    assert not strided["a"].flags.c_contiguous
    strided["b"] = feed["b"].tolist()  # a list, converted to the declared int64
    swapped = feed["d"].astype(feed["d"].dtype.newbyteorder(">"))
    strided["d"] = swapped  # big-endian
    _assert_same(sess.run(None, strided), want)


def test_zero_sized_and_scalar_inputs(onyx):
    model = _model([helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Neg", ["s"], ["t"])],
                   [_vi("x", TensorProto.FLOAT, None), _vi("s", TensorProto.INT32, [])],
                   [_vi("y", TensorProto.FLOAT, None), _vi("t", TensorProto.INT32, [])])
    sess = onyx.InferenceSession(model.SerializeToString())
    y, t = sess.run(None, {"x": np.zeros((3, 0, 2), np.float32), "s": np.array(7, np.int32)})
    assert y.shape == (3, 0, 2) and y.dtype == np.float32
    assert t.shape == () and t == -7


def test_errors_name_the_input(mixed, onyx):
    _, sess = mixed
    feed = _mixed_feed()
    bad = dict(feed, a=feed["a"].astype(np.float64))
    with pytest.raises(Exception, match=r"tensor\(double\).*input 'a'"):
        sess.run(None, bad)
    bad = dict(feed, a=np.zeros((2, 4), np.float32))
    with pytest.raises(Exception, match=r"dimensions for input: a"):
        sess.run(None, bad)
    bad = dict(feed)
    del bad["b"]
    with pytest.raises(ValueError, match=r"Required inputs \(\['b'\]\) are missing"):
        sess.run(None, bad)
    with pytest.raises(Exception, match=r"Invalid input name: nope"):
        sess.run(None, dict(feed, nope=np.zeros(1, np.float32)))
    with pytest.raises(Exception, match=r"Invalid output name: nope"):
        sess.run(["nope"], feed)
    with pytest.raises(TypeError):
        sess.run("a_out", feed)
    # The session is still usable.
    assert sess.run(["a_out"], feed)[0].shape == (2, 3)


def test_terminate_flag_through_run_options(mixed, onyx):
    _, sess = mixed
    ro = onyx.RunOptions()
    ro.terminate = True
    with pytest.raises(Exception, match=r"terminate flag"):
        sess.run(None, _mixed_feed(), ro)
    ro.terminate = False
    assert len(sess.run(None, _mixed_feed(), ro)) == 6


def test_concurrent_runs_get_their_own_results(mixed):
    _, sess = mixed
    errors = []

    def work(seed):
        try:
            for i in range(30):
                feed = _mixed_feed(n=1 + (seed + i) % 3, seed=seed * 100 + i)
                got = sess.run(["a_out", "b_out", "big_out"], feed)
                np.testing.assert_allclose(got[0], feed["a"] + np.array([1, 2, 3], np.float32))
                np.testing.assert_array_equal(got[1], feed["b"] * 2)
                np.testing.assert_array_equal(got[2], np.maximum(feed["big"], 0))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _c_api():
    from onyxruntime.capi._ffi import api, ffi
    return api, ffi


def test_c_entry_refuses_bad_tensor_args(mixed, onyx):
    if not hasattr(onyx, "capi") or not hasattr(onyx.capi, "_ffi"):
        pytest.skip("onyxruntime C API only")
    api, ffi = _c_api()
    from onyxruntime.capi._ffi import status_to_exception
    _, sess = mixed
    handle = sess._sess
    x = np.zeros((2, 3), np.float32)
    buf = ffi.from_buffer(x)
    dims = ffi.new("int64_t[]", [2, 3])
    args = ffi.new("OnyxTensorArg[1]")
    args[0].data, args[0].data_bytes, args[0].shape, args[0].rank, args[0].type = buf, 24, dims, 2, 1
    results = ffi.new("OnyxTensorResult[6]")

    def error(indices, data_bytes=24, elem=1, rank=2):
        args[0].data_bytes, args[0].type, args[0].rank = data_bytes, elem, rank
        idx = ffi.new("size_t[]", indices)
        st = api.SessionRunTensors(handle, ffi.NULL, idx, args, 1, ffi.NULL, 6, results)
        assert st != ffi.NULL
        return str(status_to_exception(st))

    assert "input_indices[0] = 99 is out of range (the model has 6 inputs and 1 overridable" in error([99])
    assert "input 'a': buffer of 20 bytes does not match shape [2,3]" in error([0], data_bytes=20)
    assert "input 'a': string tensors cannot wrap caller memory" in error([0], elem=8)
    assert "input 'a': unknown tensor element type 77" in error([0], elem=77)
    assert "Missing Input: b, c, d, e, big" in error([0])
    # Index 6 is the overridable initializer 'bias' ([3]), fed a [2,3] tensor.
    assert "Invalid rank for input: bias Got: 2 Expected: 1" in error([6])


def test_the_path_under_test_is_the_one_running(mixed, fast_path, onyx):
    if not hasattr(onyx, "capi") or not hasattr(mixed[1], "_fast"):
        pytest.skip("onnxruntime under ONYX_TEST_SELF_CHECK")
    assert (mixed[1]._fast._c is not None) == (fast_path == "compiled")


def test_sequence_and_optional_outputs_beside_tensors(onyx):
    # Values the compiled path does not convert itself come back as Python's path builds them.
    nodes = [helper.make_node("SequenceConstruct", ["x", "x"], ["seq"]), helper.make_node("Neg", ["x"], ["y"]),
             helper.make_node("Optional", ["x"], ["opt"])]
    model = _model(nodes, [_vi("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [2]),
                    _vi("y", TensorProto.FLOAT, [2]),
                    helper.make_value_info("opt", helper.make_optional_type_proto(
                        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))], opset=18)
    sess = onyx.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([1.5, -2.0], np.float32)
    seq, y, opt = sess.run(None, {"x": x})
    assert isinstance(seq, list) and len(seq) == 2
    np.testing.assert_array_equal(seq[1], x)
    np.testing.assert_array_equal(y, -x)
    np.testing.assert_array_equal(opt, x)
    (y2,) = sess.run(["y"], {"x": x})
    np.testing.assert_array_equal(y2, -x)


def test_import_parses_no_cdef_and_sets_up_the_process():
    """The cffi declarations come pre-parsed (cffi's out-of-line ABI module
    built with the package), so an import loads no C parser; and the process's
    one-time set-up (ONNX's schemas) is done by the import's environment, as
    onnxruntime's import does, not by the first session."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, onyxruntime\n"
        "from onyxruntime.capi import _ffi\n"
        "assert 'pycparser' not in sys.modules and 'cffi.cparser' not in sys.modules, sorted(sys.modules)\n"
        "assert type(_ffi.ffi).__module__ == '_cffi_backend', type(_ffi.ffi)\n"
        "assert _ffi._env is not None\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.environ.get("ONYX_PYTHONPATH", "") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
