"""SessionOptions attributes and module-level functions, checked against onnxruntime.

Each test runs on onnxruntime and on onyxruntime (the `rt` fixture); where
onyxruntime deliberately differs the test branches on is_ort(rt) and says why.
Besides round-tripping each attribute, the tests check that it does what it
says in the engine.
"""

import gc
import os

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from conftest import is_ort


def _chain_model(n=8, size=256 * 1024, denotation=None):
    """X[batch, size] -> n chained Relu/Neg nodes -> Y, and V = X + W (W[size] an initializer)."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", size])
    if denotation:
        x.type.tensor_type.shape.dim[0].denotation = denotation
    nodes, prev = [], "X"
    for i in range(n):
        op = "Relu" if i % 2 == 0 else "Neg"
        nodes.append(helper.make_node(op, [prev], ["T%d" % i], name="n%d" % i))
        prev = "T%d" % i
    nodes.append(helper.make_node("Identity", [prev], ["Y"], name="out"))
    nodes.append(helper.make_node("Add", ["X", "W"], ["V"], name="addw"))
    graph = helper.make_graph(
        nodes, "chain", [x],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", size]),
         helper.make_tensor_value_info("V", TensorProto.FLOAT, ["batch", size])],
        [numpy_helper.from_array(np.arange(size, dtype=np.float32), "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = _chain_model(size=4)
X = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
W = np.arange(4, dtype=np.float32)


def _expected_y(x, n=8):
    y = x
    for i in range(n):
        y = np.maximum(y, 0) if i % 2 == 0 else -y
    return y


def _run(rt, so, model=MODEL, x=X):
    sess = rt.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return sess, sess.run(None, {"X": x})


# ---- attribute defaults and round trips ------------------------------------------

DEFAULTS = {
    "log_severity_level": -1, "log_verbosity_level": 0, "logid": "", "enable_mem_pattern": True,
    "enable_mem_reuse": True, "enable_cpu_mem_arena": True, "use_deterministic_compute": False,
    "optimized_model_filepath": "", "inter_op_num_threads": 0, "intra_op_num_threads": 0,
    "enable_profiling": False, "profile_file_prefix": "onnxruntime_profile_",
}


def test_defaults(rt):
    so = rt.SessionOptions()
    for name, value in DEFAULTS.items():
        assert getattr(so, name) == value, name
    assert so.execution_order == rt.ExecutionOrder.DEFAULT
    assert so.execution_mode == rt.ExecutionMode.ORT_SEQUENTIAL
    assert so.graph_optimization_level == rt.GraphOptimizationLevel.ORT_ENABLE_ALL


@pytest.mark.parametrize("name,value", [
    ("enable_mem_pattern", False), ("enable_mem_reuse", False), ("enable_cpu_mem_arena", False),
    ("use_deterministic_compute", True), ("log_severity_level", 3), ("log_verbosity_level", 2),
    ("logid", "my-session"), ("intra_op_num_threads", 1), ("inter_op_num_threads", 1),
])
def test_set_and_read_back_and_run(rt, name, value):
    so = rt.SessionOptions()
    setattr(so, name, value)
    assert getattr(so, name) == value
    sess, (y, v) = _run(rt, so)
    np.testing.assert_array_equal(y, _expected_y(X))
    np.testing.assert_array_equal(v, X + W)
    assert getattr(sess.get_session_options(), name) == value


def test_execution_order_enum(rt):
    assert [int(m) for m in (rt.ExecutionOrder.DEFAULT, rt.ExecutionOrder.PRIORITY_BASED,
                             rt.ExecutionOrder.MEMORY_EFFICIENT)] == [0, 1, 2]


@pytest.mark.parametrize("order", ["DEFAULT", "PRIORITY_BASED", "MEMORY_EFFICIENT"])
def test_execution_orders_give_the_same_results(rt, order):
    so = rt.SessionOptions()
    so.execution_order = getattr(rt.ExecutionOrder, order)
    if order == "MEMORY_EFFICIENT" and is_ort(rt):
        # onnxruntime's inference package refuses it ("not enabled for
        # non-training build"); onyxruntime implements it for inference.
        with pytest.raises(Exception, match="Memory efficient topological order"):
            rt.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
        return
    _, (y, v) = _run(rt, so)
    np.testing.assert_array_equal(y, _expected_y(X))
    np.testing.assert_array_equal(v, X + W)


def test_bad_attribute_values(rt):
    so = rt.SessionOptions()
    with pytest.raises(TypeError):
        so.execution_order = "fast"
    with pytest.raises(TypeError):
        so.enable_mem_reuse = "yes"
    with pytest.raises(TypeError):
        so.optimized_model_filepath = 3


# ---- free dimension overrides ----------------------------------------------------


def test_free_dimension_override_by_name(rt):
    so = rt.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 1)
    sess, (y, _) = _run(rt, so)
    assert sess.get_inputs()[0].shape == [1, 4]
    np.testing.assert_array_equal(y, _expected_y(X))
    with pytest.raises(Exception, match="Got invalid dimensions for input: X"):
        sess.run(None, {"X": np.zeros((2, 4), np.float32)})


def test_free_dimension_override_by_denotation(rt):
    model = _chain_model(size=4, denotation="DATA_BATCH")
    so = rt.SessionOptions()
    so.add_free_dimension_override_by_denotation("DATA_BATCH", 1)
    sess, (y, _) = _run(rt, so, model)
    assert sess.get_inputs()[0].shape == [1, 4]


def test_free_dimension_override_that_matches_nothing_changes_nothing(rt):
    so = rt.SessionOptions()
    so.add_free_dimension_override_by_name("sequence", 7)
    sess, _ = _run(rt, so)
    assert sess.get_inputs()[0].shape == ["batch", 4]


# ---- add_initializer -------------------------------------------------------------


def test_add_initializer_replaces_the_models(rt):
    w = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    wv = rt.OrtValue.ortvalue_from_numpy(w)  # onnxruntime needs the caller to hold it
    so = rt.SessionOptions()
    so.add_initializer("W", wv)
    _, (_, v) = _run(rt, so)
    np.testing.assert_array_equal(v, X + w)


def test_add_initializer_keeps_its_value_alive(rt):
    if is_ort(rt):
        pytest.skip("onnxruntime does not keep the OrtValue alive: dropping it crashes the process")
    so = rt.SessionOptions()
    so.add_initializer("W", rt.OrtValue.ortvalue_from_numpy(np.array([5.0, 6.0, 7.0, 8.0], np.float32)))
    gc.collect()
    _ = [np.full(4, -1.0, np.float32) for _ in range(100)]  # reuse any freed memory
    _, (_, v) = _run(rt, so)
    np.testing.assert_array_equal(v, X + np.array([5.0, 6.0, 7.0, 8.0], np.float32))


def test_add_initializer_needs_an_ortvalue(rt):
    with pytest.raises(RuntimeError, match="must be an OrtValue"):
        rt.SessionOptions().add_initializer("W", np.ones(3, np.float32))


def test_add_initializer_of_wrong_shape(rt):
    so = rt.SessionOptions()
    wv = rt.OrtValue.ortvalue_from_numpy(np.ones(3, np.float32))
    so.add_initializer("W", wv)
    # onnxruntime fails at the run (a broadcast error in Add); onyxruntime at
    # session creation, naming the initializer and both shapes.
    with pytest.raises(Exception, match=None if is_ort(rt) else r"'W' is float\[3\] but the model's .* float\[4\]"):
        _run(rt, so)


def test_add_initializer_for_an_unknown_name(rt):
    so = rt.SessionOptions()
    wv = rt.OrtValue.ortvalue_from_numpy(np.ones(4, np.float32))
    so.add_initializer("nope", wv)
    if is_ort(rt):
        # onnxruntime silently ignores it.
        _run(rt, so)
    else:
        # onyxruntime refuses a value that would be silently unused.
        with pytest.raises(Exception, match="no initializer named 'nope'"):
            _run(rt, so)


# ---- logging ----------------------------------------------------------------------


def test_verbose_session_logs_to_stderr_with_its_logid(rt, capfd):
    so = rt.SessionOptions()
    so.log_severity_level = 0
    so.logid = "parity-log-id"
    _run(rt, so)
    err = capfd.readouterr().err
    assert "parity-log-id" in err


def test_error_severity_keeps_stderr_quiet(rt, capfd):
    so = rt.SessionOptions()
    so.log_severity_level = 3
    so.logid = "quiet-log-id"
    _run(rt, so)
    assert "quiet-log-id" not in capfd.readouterr().err


def test_default_logger_severity(rt, capfd):
    rt.set_default_logger_severity(0)
    try:
        so = rt.SessionOptions()
        so.logid = "default-severity-id"
        _run(rt, so)
        assert "default-severity-id" in capfd.readouterr().err
    finally:
        rt.set_default_logger_severity(2)
    so = rt.SessionOptions()
    so.logid = "default-severity-id2"
    _run(rt, so)
    assert "default-severity-id2" not in capfd.readouterr().err


@pytest.mark.parametrize("bad", [-1, 5])
def test_default_logger_severity_range(rt, bad):
    with pytest.raises(RuntimeError):
        rt.set_default_logger_severity(bad)


def test_default_logger_verbosity(rt):
    rt.set_default_logger_verbosity(1)
    rt.set_default_logger_verbosity(0)
    with pytest.raises(TypeError):
        rt.set_default_logger_verbosity("x")


# ---- module functions ---------------------------------------------------------------


def test_telemetry_switches(rt):
    # Both runtimes take the calls and return nothing; ours records the
    # setting in the engine (nothing is ever sent), read back through the C API.
    def engine_setting():
        if is_ort(rt):
            return None
        from onyxruntime.capi._ffi import api, check, ffi

        out = ffi.new("int*")
        check(api.GetTelemetryEnabled(out))
        return out[0]

    assert rt.disable_telemetry_events() is None
    assert engine_setting() in (None, 0)
    assert rt.enable_telemetry_events() is None
    assert engine_setting() in (None, 1)
    rt.disable_telemetry_events()
    assert engine_setting() in (None, 0)


def test_set_seed_argument(rt):
    rt.set_seed(123)
    rt.set_seed(-5)
    with pytest.raises(TypeError):
        rt.set_seed(1.5)


def test_device_and_build_info(rt):
    assert rt.get_device() == "CPU"
    assert isinstance(rt.get_build_info(), str) and rt.get_build_info()
    assert rt.has_collective_ops() is False


def test_arena_cfg_and_memory_info(rt):
    cfg = rt.OrtArenaCfg(0, -1, -1, -1)
    assert (cfg.max_mem, cfg.arena_extend_strategy, cfg.initial_chunk_size_bytes, cfg.max_dead_bytes_per_chunk) == \
        (0, -1, -1, -1)
    cfg = rt.OrtArenaCfg({"max_mem": 1 << 20, "arena_extend_strategy": 1})
    assert cfg.max_mem == 1 << 20 and cfg.arena_extend_strategy == 1
    info = rt.OrtMemoryInfo("Cpu", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT)
    assert info.name == "Cpu" and info.device_id == 0
    assert rt.OrtMemType.CPU == rt.OrtMemType.CPU_OUTPUT


def test_create_and_register_allocator_shared_by_sessions(rt):
    info = rt.OrtMemoryInfo("Cpu", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT)
    rt.create_and_register_allocator(info, rt.OrtArenaCfg(0, -1, -1, -1))
    so = rt.SessionOptions()
    so.add_session_config_entry("session.use_env_allocators", "1")
    for _ in range(2):
        _, (y, _) = _run(rt, so)
        np.testing.assert_array_equal(y, _expected_y(X))


def test_create_and_register_allocator_for_a_device_the_build_lacks(rt):
    info = rt.OrtMemoryInfo("Cuda", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT)
    with pytest.raises(RuntimeError, match="Error when creating and registering allocator"):
        rt.create_and_register_allocator(info, rt.OrtArenaCfg(0, -1, -1, -1))


# ---- what the memory options do in the engine (onyxruntime only) ------------------
#
# onnxruntime's arena limit and planner differ (it rounds chunks, pre-plans a
# pattern), so these observe onyxruntime's allocator: an env allocator whose
# max_mem a run can only stay under when intermediates are freed as it goes.


@pytest.fixture
def onyx_only(rt):
    if is_ort(rt):
        pytest.skip("observes onyxruntime's own allocator accounting")
    return rt


def _limited_session(rt, max_mem, **attrs):
    info = rt.OrtMemoryInfo("Cpu", rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, rt.OrtMemType.DEFAULT)
    rt.create_and_register_allocator(info, rt.OrtArenaCfg(max_mem, -1, -1, -1))
    so = rt.SessionOptions()
    so.add_session_config_entry("session.use_env_allocators", "1")
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    for k, v in attrs.items():
        setattr(so, k, v)
    return rt.InferenceSession(_chain_model(n=8, size=256 * 1024), so)


def test_env_allocator_limit_is_enforced(onyx_only):
    rt = onyx_only
    x = np.ones((1, 256 * 1024), np.float32)  # 1 MiB per intermediate
    sess = _limited_session(rt, 4 << 20)
    np.testing.assert_array_equal(sess.run(["Y"], {"X": x})[0], _expected_y(x))
    small = _limited_session(rt, 512 << 10)
    with pytest.raises(Exception, match="limit \\(max_mem\\) of 524288 bytes"):
        small.run(["Y"], {"X": x})


def test_mem_reuse_off_keeps_every_intermediate(onyx_only):
    rt = onyx_only
    x = np.ones((1, 256 * 1024), np.float32)
    # 8 intermediates of 1 MiB: with reuse two or three are live at once,
    # without it all eight are, which a 4 MiB allocator cannot hold.
    sess = _limited_session(rt, 4 << 20, enable_mem_reuse=False)
    with pytest.raises(Exception, match="max_mem"):
        sess.run(["Y"], {"X": x})
    sess = _limited_session(rt, 4 << 20, enable_mem_reuse=True)
    np.testing.assert_array_equal(sess.run(["Y"], {"X": x})[0], _expected_y(x))


# ---- options the engine acts on (issue 12: no option stored and ignored) ----------


def _thread_count():
    return len(os.listdir("/proc/self/task"))


def _matmul_model(width=64, dtype=np.float32):
    w = numpy_helper.from_array(np.ones((width, width), dtype), "W")
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"])], "mm",
                              [helper.make_tensor_value_info("X", elem, ["N", width])],
                              [helper.make_tensor_value_info("Y", elem, ["N", width])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


@pytest.mark.parametrize("n", [1, 3])
def test_intra_op_num_threads_sizes_the_engines_pool(rt, n):
    """Observed in the process, not read back from Python: a pool of n threads
    counts the caller, so n - 1 new threads live as long as the session."""
    so = rt.SessionOptions()
    so.intra_op_num_threads = n
    gc.collect()
    before = _thread_count()
    sess, (y, _) = _run(rt, so)
    np.testing.assert_array_equal(y, _expected_y(X))
    assert _thread_count() - before == n - 1
    del sess
    gc.collect()
    assert _thread_count() == before


def _wide_model(branches=4, depth=2, width=32):
    """Independent MatMul+Tanh chains from X, summed: Y = sum_b f_b(X)."""
    nodes, inits, outs = [], [], []
    rng = np.random.default_rng(0)
    for b in range(branches):
        cur = "X"
        for d in range(depth):
            w = "W%d_%d" % (b, d)
            inits.append(numpy_helper.from_array((rng.standard_normal((width, width)) * 0.1).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [cur, w], ["M%d_%d" % (b, d)]))
            nodes.append(helper.make_node("Tanh", ["M%d_%d" % (b, d)], ["A%d_%d" % (b, d)]))
            cur = "A%d_%d" % (b, d)
        outs.append(cur)
    nodes.append(helper.make_node("Sum", outs, ["Y"]))
    graph = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("X", 1, ["N", width])],
                              [helper.make_tensor_value_info("Y", 1, ["N", width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


@pytest.mark.parametrize("mode,inter,new_threads", [
    ("ORT_SEQUENTIAL", 0, 0), ("ORT_SEQUENTIAL", 4, 0), ("ORT_PARALLEL", 1, 0), ("ORT_PARALLEL", 3, 2),
])
def test_execution_mode_and_inter_op_threads_are_honoured(rt, mode, inter, new_threads):
    """Observed in the process: ORT_PARALLEL with inter_op_num_threads=n starts
    an inter-op pool of n - 1 threads (the caller is the n-th); with
    ORT_SEQUENTIAL inter_op_num_threads is ignored, as in onnxruntime. Results
    equal the reference either way."""
    model = _wide_model()
    so = rt.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = inter
    so.execution_mode = getattr(rt.ExecutionMode, mode)
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    gc.collect()
    before = _thread_count()
    sess = rt.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    assert _thread_count() - before == new_threads
    x = np.random.default_rng(1).standard_normal((5, 32)).astype(np.float32)
    expect = ReferenceEvaluator(onnx.load_from_string(model)).run(None, {"X": x})[0]
    for _ in range(3):
        np.testing.assert_allclose(sess.run(None, {"X": x})[0], expect, rtol=1e-5, atol=1e-5)
    del sess
    gc.collect()
    assert _thread_count() == before


def test_provider_options_are_refused_by_name(onyx_only):
    rt = onyx_only
    with pytest.raises(Exception, match="provider option 'use_arena' of CPUExecutionProvider is not supported"):
        rt.InferenceSession(MODEL, providers=[("CPUExecutionProvider", {"use_arena": "1"})])
    rt.InferenceSession(MODEL, providers=[("CPUExecutionProvider", {})])


def test_openblas_threads_follow_the_session_that_runs(onyx_only):
    """OpenBLAS's count is process-wide; each session's GEMMs use its own
    intra_op_num_threads, whichever session was created last."""
    import ctypes

    blas = ctypes.CDLL("libopenblas.so.0")  # the instance the engine loaded
    rt = onyx_only
    sessions = {}
    # double: float GEMMs mostly run on the engine's own SGEMM and pool.
    for n in (1, 2):
        so = rt.SessionOptions()
        so.intra_op_num_threads = n
        sessions[n] = rt.InferenceSession(_matmul_model(dtype=np.float64), so, providers=["CPUExecutionProvider"])
    x = np.ones((8, 64), np.float64)
    for n in (1, 2, 1, 2):
        (y,) = sessions[n].run(None, {"X": x})
        assert (y == 64).all()
        assert blas.openblas_get_num_threads() == n
