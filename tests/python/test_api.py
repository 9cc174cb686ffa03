"""The onyxruntime Python API against a small model built here with onnx.helper.

Each expectation is what onnxruntime does (run with ONYX_TEST_SELF_CHECK=1 to
check the tests against it); the few places where onyxruntime deliberately
differs are marked and skipped under the self-check.
"""

import pathlib
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

W = np.array([[1, -1], [2, 0.5], [-3, 1], [0.25, 2]], dtype=np.float32)
B = np.array([0.5, -1.0], dtype=np.float32)


def _api_model_bytes():
    """Y = Relu(X @ W + b) with X [N, 4]; Z2 = Z + Z with Z [3, K]; S_out = Identity(S).
    W is also a graph input (an overridable initializer)."""
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["XW"]),
        helper.make_node("Add", ["XW", "b"], ["XWb"]),
        helper.make_node("Relu", ["XWb"], ["Y"]),
        helper.make_node("Add", ["Z", "Z"], ["Z2"]),
        helper.make_node("Identity", ["S"], ["S_out"]),
    ]
    inputs = [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4]),
        helper.make_tensor_value_info("Z", TensorProto.FLOAT, [3, "K"]),
        helper.make_tensor_value_info("S", TensorProto.STRING, [None]),
        helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 2]),
    ]
    outputs = [
        helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 2]),
        helper.make_tensor_value_info("Z2", TensorProto.FLOAT, [3, "K"]),
        helper.make_tensor_value_info("S_out", TensorProto.STRING, [None]),
    ]
    graph = helper.make_graph(nodes, "api_graph", inputs, outputs,
                              [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "b")],
                              doc_string="graph doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8,
                              producer_name="onyx-api-test", doc_string="model doc", domain="test.domain",
                              model_version=5)
    helper.set_model_props(model, {"author": "tests", "k": "v"})
    return model.SerializeToString()


def _identity_model_bytes(elem_type):
    graph = helper.make_graph([helper.make_node("Identity", ["I"], ["O"])], "identity",
                              [helper.make_tensor_value_info("I", elem_type, ["n"])],
                              [helper.make_tensor_value_info("O", elem_type, ["n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return model.SerializeToString()


def _heavy_model_bytes(size=512, depth=8):
    """A chain of MatMuls long enough (tens of ms or more) to observe the GIL."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
    nodes, prev = [], "X"
    for i in range(depth):
        nodes.append(helper.make_node("MatMul", [prev, "W"], ["H%d" % i]))
        prev = "H%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["Y"]))
    graph = helper.make_graph(nodes, "heavy", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [size, size])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [size, size])],
                              [numpy_helper.from_array(w, "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = _api_model_bytes()


def _is_ort(onyx):
    return onyx.__name__ == "onnxruntime"


def _feed(n=2, k=5, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "X": rng.standard_normal((n, 4)).astype(np.float32),
        "Z": rng.standard_normal((3, k)).astype(np.float32),
        "S": np.array(["a", "bé", ""], dtype=object),
    }


def _expected(feed, w=W):
    return [np.maximum(feed["X"] @ w + B, 0), feed["Z"] + feed["Z"], feed["S"]]


def _assert_outputs(out, feed, w=W):
    exp = _expected(feed, w)
    assert len(out) == 3
    np.testing.assert_allclose(out[0], exp[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[1], exp[1])
    assert out[2].dtype == object and list(out[2]) == list(exp[2])


@pytest.fixture(scope="module")
def sess(onyx):
    return onyx.InferenceSession(MODEL, providers=["CPUExecutionProvider"])


def _check_usable(sess):
    feed = _feed(seed=99)
    _assert_outputs(sess.run(None, feed), feed)


# ---------------------------------------------------------------- running


def test_run_all_outputs(sess):
    feed = _feed()
    _assert_outputs(sess.run(None, feed), feed)
    _assert_outputs(sess.run([], feed), feed)
    assert sess.run(None, feed)[0].dtype == np.float32


def test_run_selected_outputs_in_requested_order(sess):
    feed = _feed()
    z2, y = sess.run(["Z2", "Y"], feed)
    np.testing.assert_array_equal(z2, feed["Z"] * 2)
    np.testing.assert_allclose(y, _expected(feed)[0], rtol=1e-5, atol=1e-6)


def test_symbolic_dims_take_any_size(sess):
    for n, k in [(1, 1), (7, 3), (0, 2)]:
        feed = _feed(n, k)
        out = sess.run(None, feed)
        assert out[0].shape == (n, 2) and out[1].shape == (3, k)
        _assert_outputs(out, feed)


def test_overridable_initializer_can_be_fed(sess):
    feed = _feed()
    w2 = np.ones((4, 2), dtype=np.float32)
    _assert_outputs(sess.run(None, dict(feed, W=w2)), feed, w2)
    _assert_outputs(sess.run(None, feed), feed)  # the initializer is back afterwards


def test_list_input_is_converted_to_the_declared_type(sess):
    feed = _feed()
    feed_list = dict(feed, X=feed["X"].tolist())
    _assert_outputs(sess.run(None, feed_list), feed)


def test_load_from_path_and_pathlike(onyx, tmp_path):
    path = tmp_path / "api.onnx"
    path.write_bytes(MODEL)
    for p in (str(path), pathlib.Path(path)):
        s = onyx.InferenceSession(p, providers=["CPUExecutionProvider"])
        _check_usable(s)


# ---------------------------------------------------------------- metadata


def test_inputs_outputs(sess):
    ins = sess.get_inputs()
    assert [i.name for i in ins] == ["X", "Z", "S"]
    assert [i.type for i in ins] == ["tensor(float)", "tensor(float)", "tensor(string)"]
    assert [i.shape for i in ins] == [["N", 4], [3, "K"], [None]]
    outs = sess.get_outputs()
    assert [o.name for o in outs] == ["Y", "Z2", "S_out"]
    assert [o.type for o in outs] == ["tensor(float)", "tensor(float)", "tensor(string)"]
    assert [o.shape for o in outs] == [["N", 2], [3, "K"], [None]]
    over = sess.get_overridable_initializers()
    assert [(o.name, o.type, o.shape) for o in over] == [("W", "tensor(float)", [4, 2])]
    assert str(ins[0]) == "NodeArg(name='X', type='tensor(float)', shape=['N', 4])"
    assert type(ins[0]).__name__ == "NodeArg"


def test_unknown_rank_shape_is_empty_list(onyx):
    graph = helper.make_graph([helper.make_node("Relu", ["I"], ["O"])], "g",
                              [helper.make_tensor_value_info("I", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("O", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    s = onyx.InferenceSession(model.SerializeToString())
    assert s.get_inputs()[0].shape == []
    np.testing.assert_array_equal(s.run(None, {"I": np.array([-1, 2], np.float32)})[0], [0, 2])


def test_modelmeta(sess):
    m = sess.get_modelmeta()
    assert type(m).__name__ == "ModelMetadata"
    assert m.producer_name == "onyx-api-test"
    assert m.graph_name == "api_graph"
    assert m.domain == "test.domain"
    assert m.description == "model doc"
    assert m.graph_description == "graph doc"
    assert m.version == 5
    assert m.custom_metadata_map == {"author": "tests", "k": "v"}


# ---------------------------------------------------------------- providers and library


def test_library_functions(onyx):
    assert "CPUExecutionProvider" in onyx.get_available_providers()
    assert onyx.get_available_providers()[-1] == "CPUExecutionProvider"
    assert "CUDAExecutionProvider" in onyx.get_all_providers()
    assert set(onyx.get_available_providers()) <= set(onyx.get_all_providers())
    assert onyx.get_device() in ("CPU", "GPU")
    assert isinstance(onyx.get_version_string(), str) and onyx.get_version_string() == onyx.__version__
    assert isinstance(onyx.get_build_info(), str) and onyx.get_build_info()


def test_providers(onyx, sess):
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    s = onyx.InferenceSession(MODEL, providers=[("CPUExecutionProvider", {})])
    assert s.get_providers() == ["CPUExecutionProvider"]
    s = onyx.InferenceSession(MODEL)
    assert s.get_providers()[-1] == "CPUExecutionProvider"
    s.set_providers(["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    _check_usable(s)
    with pytest.raises(ValueError):
        onyx.InferenceSession(MODEL, providers=[42], enable_fallback=0)
    with pytest.raises(ValueError):
        onyx.InferenceSession(MODEL, providers=["CPUExecutionProvider"], provider_options=[{}, {}],
                              enable_fallback=0)


def test_unknown_provider_warns_and_falls_back(onyx, capsys):
    with pytest.warns(UserWarning, match="Specified provider 'FooExecutionProvider' is not in available "
                                         "provider names.Available providers: "):
        s = onyx.InferenceSession(MODEL, providers=["FooExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert "Falling back to ['CPUExecutionProvider'] and retrying." in capsys.readouterr().out
    _check_usable(s)


def test_unknown_provider_without_fallback_raises(onyx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="FooExecutionProvider"):
            onyx.InferenceSession(MODEL, providers=["FooExecutionProvider"], enable_fallback=0)


def test_known_but_unavailable_provider_is_skipped(onyx):
    missing = [p for p in onyx.get_all_providers() if p not in onyx.get_available_providers()]
    if "CUDAExecutionProvider" not in missing:
        pytest.skip("CUDA is available here")
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        s = onyx.InferenceSession(MODEL, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]


# ---------------------------------------------------------------- options


def test_graph_optimization_level_and_execution_mode_values(onyx):
    L = onyx.GraphOptimizationLevel
    assert [(m, int(getattr(L, m).value)) for m in
            ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_LAYOUT", "ORT_ENABLE_ALL")] == [
        ("ORT_DISABLE_ALL", 0), ("ORT_ENABLE_BASIC", 1), ("ORT_ENABLE_EXTENDED", 2), ("ORT_ENABLE_LAYOUT", 3),
        ("ORT_ENABLE_ALL", 99)]
    assert int(onyx.ExecutionMode.ORT_SEQUENTIAL.value) == 0
    assert int(onyx.ExecutionMode.ORT_PARALLEL.value) == 1


def test_session_options(onyx):
    so = onyx.SessionOptions()
    assert so.intra_op_num_threads == 0 and so.inter_op_num_threads == 0
    assert so.graph_optimization_level == onyx.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert so.execution_mode == onyx.ExecutionMode.ORT_SEQUENTIAL
    assert so.log_severity_level == -1 and so.log_verbosity_level == 0 and so.logid == ""
    assert so.enable_profiling is False
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = onyx.ExecutionMode.ORT_PARALLEL
    assert so.execution_mode == onyx.ExecutionMode.ORT_PARALLEL
    # Both runtimes run it with their parallel executor.
    _check_usable(onyx.InferenceSession(MODEL, sess_options=so, providers=["CPUExecutionProvider"]))
    so.execution_mode = onyx.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    so.logid = "api-test"
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(RuntimeError, match="does not have configuration with key: absent.key"):
        so.get_session_config_entry("absent.key")
    s = onyx.InferenceSession(MODEL, sess_options=so, providers=["CPUExecutionProvider"])
    got = s.get_session_options()
    assert got.intra_op_num_threads == 1 and got.inter_op_num_threads == 1
    assert got.graph_optimization_level == onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert got.logid == "api-test" and got.log_severity_level == 3
    assert got.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    _check_usable(s)
    for level in onyx.GraphOptimizationLevel.__members__.values():
        so.graph_optimization_level = level
        _check_usable(onyx.InferenceSession(MODEL, sess_options=so))


def test_unknown_session_option_attribute_is_an_error(onyx):
    with pytest.raises(AttributeError):
        onyx.SessionOptions().no_such_option = 1


def test_run_options(onyx, sess):
    ro = onyx.RunOptions()
    assert ro.log_severity_level == -1 and ro.log_verbosity_level == 0 and ro.logid == ""
    assert ro.terminate is False and ro.only_execute_path_to_fetches is False
    ro.logid = "tagged-run"
    ro.log_severity_level = 2
    assert ro.logid == "tagged-run"
    feed = _feed()
    _assert_outputs(sess.run(None, feed, ro), feed)
    ro.terminate = True
    assert ro.terminate is True
    from_state = sys.modules[onyx.__name__ + ".capi.onnxruntime_pybind11_state"]
    # onnxruntime reports FAIL; our C API documents RUNTIME_EXCEPTION for this.
    expected = from_state.Fail if _is_ort(onyx) else from_state.RuntimeException
    with pytest.raises(expected, match="terminate flag"):
        sess.run(None, feed, ro)
    ro.terminate = False
    _assert_outputs(sess.run(None, feed, ro), feed)


# ---------------------------------------------------------------- errors


def _state(onyx):
    return sys.modules[onyx.__name__ + ".capi.onnxruntime_pybind11_state"]


def test_exception_classes(onyx):
    import importlib

    mod = importlib.import_module(onyx.__name__ + ".capi.onnxruntime_pybind11_state")
    for name in ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
                 "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail"]:
        cls = getattr(mod, name)
        assert cls.__mro__[1:] == (Exception, BaseException, object), name
    if not _is_ort(onyx):
        from onyxruntime.capi.onnxruntime_pybind11_state import InvalidArgument  # noqa: F401 - the documented import


def test_bad_path_is_no_such_file(onyx, tmp_path):
    with pytest.raises(_state(onyx).NoSuchFile, match="NO_SUCHFILE"):
        onyx.InferenceSession(str(tmp_path / "missing.onnx"))


def test_garbage_bytes_is_invalid_protobuf(onyx):
    with pytest.raises(_state(onyx).InvalidProtobuf, match="INVALID_PROTOBUF"):
        onyx.InferenceSession(b"\x08\x07garbage that is not a model\xff\xff\xff")


def test_bad_model_type_is_type_error(onyx):
    with pytest.raises(TypeError):
        onyx.InferenceSession(12345)


def _prefix(onyx):
    return "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : " if _is_ort(onyx) else "[OnyxRuntimeError] : 2 : INVALID_ARGUMENT : "


def test_unknown_input_name(onyx, sess):
    with pytest.raises(_state(onyx).InvalidArgument) as e:
        sess.run(None, dict(_feed(), nope=np.zeros(1, np.float32)))
    assert str(e.value).startswith(_prefix(onyx)) and "nope" in str(e.value)
    _check_usable(sess)


def test_missing_input(sess):
    feed = _feed()
    del feed["Z"]
    with pytest.raises(ValueError) as e:
        sess.run(None, feed)
    assert str(e.value) == "Required inputs (['Z']) are missing from input feed (['X', 'S'])."
    _check_usable(sess)


def test_wrong_dtype(onyx, sess):
    feed = _feed()
    feed["X"] = feed["X"].astype(np.float64)
    with pytest.raises(_state(onyx).InvalidArgument) as e:
        sess.run(None, feed)
    assert str(e.value).startswith(_prefix(onyx))
    assert "tensor(double)" in str(e.value) and "tensor(float)" in str(e.value)
    _check_usable(sess)


def test_wrong_rank(onyx, sess):
    feed = _feed()
    feed["X"] = np.zeros((2, 4, 1), np.float32)
    with pytest.raises(_state(onyx).InvalidArgument, match="Invalid rank for input: X"):
        sess.run(None, feed)
    _check_usable(sess)


def test_wrong_dim_message(onyx, sess):
    feed = _feed()
    feed["Z"] = np.zeros((1, 5), np.float32)
    with pytest.raises(_state(onyx).InvalidArgument) as e:
        sess.run(None, feed)
    tail = "Got invalid dimensions for input: Z for the following indices\n index: 0 Got: 1 Expected: 3\n Please fix either the inputs"
    assert str(e.value).startswith(_prefix(onyx) + tail)
    if not _is_ort(onyx):  # seed 000's wording; onnxruntime 1.31 says "inputs/outputs"
        assert str(e.value) == _prefix(onyx) + tail + " or the model."
    _check_usable(sess)


def test_unknown_output_name(onyx, sess):
    with pytest.raises(_state(onyx).InvalidArgument, match="nope"):
        sess.run(["nope"], _feed())
    _check_usable(sess)


def test_unsupported_feed_object(sess):
    with pytest.raises(RuntimeError, match="Unable to handle object of type"):
        sess.run(None, dict(_feed(), X=1.5))
    _check_usable(sess)


def test_profiling_writes_chrome_trace_with_one_event_per_node(onyx, tmp_path):
    import json

    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof_")
    prof_sess = onyx.InferenceSession(MODEL, sess_options=so, providers=["CPUExecutionProvider"])
    assert prof_sess.get_profiling_start_time_ns() > 0
    runs = 3
    for _ in range(runs):
        prof_sess.run(None, _feed())
    path = prof_sess.end_profiling()
    assert path.startswith(str(tmp_path / "prof_")) and path.endswith(".json")
    with open(path) as f:
        events = json.load(f)  # valid JSON, Chrome-trace event list
    node_events = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    import onnx

    n_nodes = len(onnx.load_from_string(MODEL).graph.node)
    assert len(node_events) == n_nodes * runs
    for e in node_events:
        assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0
        assert e["args"]["provider"] == "CPUExecutionProvider"
        assert e["args"]["op_name"]
        assert e["args"]["input_type_shape"] and e["args"]["output_type_shape"]


def test_end_profiling_without_profiling_returns_empty(onyx, sess):
    assert sess.end_profiling() == ""


# ---------------------------------------------------------------- numpy in / out


def test_output_is_a_zero_copy_view(onyx, sess):
    y = sess.run(["Y"], _feed())[0]
    assert not y.flags.owndata and y.base is not None
    if _is_ort(onyx):
        return
    holder = y.base
    while isinstance(holder, np.ndarray):
        holder = holder.base
    # The array reads the library's buffer in place, and its base owns it.
    assert holder.__array_interface__["data"][0] == y.__array_interface__["data"][0]
    view = y[1:]
    del y
    np.testing.assert_allclose(view, _expected(_feed())[0][1:], rtol=1e-5, atol=1e-6)


def test_output_outlives_session(onyx):
    s = onyx.InferenceSession(MODEL)
    feed = _feed()
    out = s.run(None, feed)
    del s
    _assert_outputs(out, feed)


def test_input_is_read_not_written(sess):
    feed = _feed()
    before = {k: v.copy() for k, v in feed.items()}
    out = sess.run(None, feed)
    for k in feed:
        np.testing.assert_array_equal(feed[k], before[k])
    feed["X"][:] = 1000.0  # a later change of the input does not reach the results
    _assert_outputs(out, before)


def test_non_contiguous_inputs_are_copied_not_misread(onyx, sess):
    feed = _feed(n=3)
    wide = np.zeros((3, 8), np.float32)
    wide[:, ::2] = feed["X"]
    strided = dict(feed, X=wide[:, ::2])
    assert not strided["X"].flags.c_contiguous
    _assert_outputs(sess.run(None, strided), feed)
    fortran = dict(feed, X=np.asfortranarray(feed["X"]), Z=feed["Z"].T.copy().T)
    _assert_outputs(sess.run(None, fortran), feed)
    reversed_rows = dict(feed, X=feed["X"][::-1][::-1])
    _assert_outputs(sess.run(None, reversed_rows), feed)


def test_big_endian_input_is_converted(onyx, sess):
    if _is_ort(onyx):
        pytest.skip("onnxruntime misreads non-native byte order")
    feed = _feed()
    _assert_outputs(sess.run(None, dict(feed, X=feed["X"].astype(">f4"))), feed)


def test_string_tensors_both_ways(onyx):
    s = onyx.InferenceSession(_identity_model_bytes(TensorProto.STRING))
    for arr in (np.array(["a", "bé", "", "long string " * 10]), np.array(["x", "y"], dtype=object),
                np.array([["p", "q"], ["r", "s"]])):
        out = s.run(None, {"I": arr.reshape(-1)})[0]
        assert out.dtype == object
        assert list(out) == [str(v) for v in arr.reshape(-1)]
        assert all(isinstance(v, str) for v in out)


DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
          np.int64, np.uint64, np.bool_]
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
             np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16,
             np.uint16: TensorProto.UINT16, np.int32: TensorProto.INT32, np.uint32: TensorProto.UINT32,
             np.int64: TensorProto.INT64, np.uint64: TensorProto.UINT64, np.bool_: TensorProto.BOOL}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes_round_trip(onyx, dtype):
    s = onyx.InferenceSession(_identity_model_bytes(ONNX_TYPE[dtype]))
    if dtype is np.bool_:
        x = np.array([True, False, True])
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = np.array([info.min, 0, 1, info.max], dtype=dtype)
    else:
        x = np.array([-1.5, 0.0, 3.25, np.inf], dtype=dtype)
    out = s.run(None, {"I": x})[0]
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, x)


# ---------------------------------------------------------------- threads


def test_concurrent_runs_on_one_session(sess):
    feeds = [_feed(n=5, k=4, seed=i) for i in range(8)]
    expected = [sess.run(None, f) for f in feeds]
    results, errors = {}, []

    def worker(t):
        try:
            for r in range(10):
                i = (t + r) % len(feeds)
                results[(t, r)] = (i, sess.run(None, feeds[i]))
        except Exception as e:  # reported below, not swallowed
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert len(results) == 40
    for i, out in results.values():
        for a, b in zip(out, expected[i]):
            np.testing.assert_array_equal(a, b)


def test_run_releases_the_gil(onyx):
    s = onyx.InferenceSession(_heavy_model_bytes())
    x = np.ones((512, 512), np.float32)
    started, done = threading.Event(), threading.Event()
    observed = {}

    def worker():
        started.set()
        s.run(None, {"X": x})
        done.set()

    old = sys.getswitchinterval()
    # With a huge switch interval a thread holding the GIL is never preempted,
    # so the main thread can only run during the call if the call released it.
    sys.setswitchinterval(30.0)
    try:
        t0 = time.perf_counter()
        th = threading.Thread(target=worker)
        th.start()
        started.wait()
        observed["done_when_main_resumed"] = done.is_set()
        th.join()
        elapsed = time.perf_counter() - t0
    finally:
        sys.setswitchinterval(old)
    assert not observed["done_when_main_resumed"], "the main thread was blocked for the whole run (%.3fs)" % elapsed


def test_profile_of_a_real_model_has_one_event_per_executed_node(onyx, model_files, tmp_path):
    import json

    import onnx

    path = model_files.path("mobilenetv2")
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "mnv2_")
    # Unoptimized, so the executed nodes are exactly the model's.
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = onyx.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    sess.run(None, {sess.get_inputs()[0].name: x})
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    nodes = onnx.load(path, load_external_data=False).graph.node
    kernel = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    assert sorted(e["name"] for e in kernel) == sorted(n.name + "_kernel_time" for n in nodes)
    assert {e["args"]["op_name"] for e in kernel} == {n.op_type for n in nodes}
    session_events = {e["name"] for e in events if e.get("cat") == "Session"}
    assert "session_initialization" in session_events and "model_run" in session_events
    if not _is_ort(onyx):
        assert {"model_loading", "graph_optimization"} <= session_events
