"""More of onnxruntime 1.31's Python surface, checked against onnxruntime
itself (issue 14): import paths (capi._pybind_state, OrtValueVector,
check_and_normalize_provider_args), OrtValue extras (tensor_size_in_bytes,
ortvalue_from_numpy_with_onnx_type with void arrays, __array__,
_get_c_value), RunOptions run config entries, InferenceSession.run_async,
get_input/output_memory_infos, OrtDevice, and the texts of unknown providers
and get_build_info.

Every test runs on onnxruntime and onyxruntime through the `rt` fixture;
where onyxruntime deliberately differs the test branches on is_ort(rt) and a
comment says why.
"""

import importlib
import threading
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import is_ort


def _relu_model():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = _relu_model()
X = (np.arange(6, dtype=np.float32) - 3).reshape(2, 3)


def _pkg(rt):
    return rt.__name__


def _session(rt, threads=0):
    so = rt.SessionOptions()
    so.intra_op_num_threads = threads
    return rt.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])


# ---- 1. import paths --------------------------------------------------------

def test_pybind_state_module_imports(rt):
    C = importlib.import_module(_pkg(rt) + ".capi._pybind_state")
    C11 = importlib.import_module(_pkg(rt) + ".capi.onnxruntime_pybind11_state")
    for name in ["OrtValueVector", "OrtDevice", "OrtValue", "OrtMemoryInfo", "RunOptions", "SessionOptions",
                 "InferenceSession", "SessionIOBinding", "InvalidArgument", "Fail", "get_available_providers",
                 "get_build_info", "set_seed", "GraphOptimizationLevel", "ExecutionMode", "OrtMemType",
                 "OrtAllocatorType", "OrtArenaCfg"]:
        assert hasattr(C, name), name
        assert getattr(C, name) is getattr(C11, name), name
    # The C-level OrtDevice: device-type codes as static methods.
    assert (C.OrtDevice.cpu(), C.OrtDevice.gpu(), C.OrtDevice.cuda(), C.OrtDevice.npu(), C.OrtDevice.fpga(),
            C.OrtDevice.dml(), C.OrtDevice.cann(), C.OrtDevice.webgpu(), C.OrtDevice.default_memory()) == \
        (0, 1, 1, 3, 2, 4, 3, 1, 0)
    d = C.OrtDevice(1, 0, 0x10DE, 3)
    assert (d.device_type(), d.mem_type(), d.vendor_id(), d.device_id()) == (1, 0, 0x10DE, 3)
    d = C.OrtDevice(0, 0, 2)
    assert (d.device_type(), d.vendor_id(), d.device_id()) == (0, 0, 2)


def test_ortvalue_vector(rt):
    C = importlib.import_module(_pkg(rt) + ".capi._pybind_state")
    vec = C.OrtValueVector()
    assert len(vec) == 0
    b = rt.OrtValue.ortvalue_from_numpy(np.array([True, False]))
    f = rt.OrtValue.ortvalue_from_numpy(X)
    vec.push_back(f._get_c_value())
    vec.push_back(b._get_c_value())
    vec.reserve(4)
    vec.shrink_to_fit()
    assert len(vec) == 2
    assert vec.element_type_at(0) == TensorProto.FLOAT
    assert vec.element_type_at(1) == TensorProto.BOOL
    assert vec.bool_tensor_indices() == [1]
    np.testing.assert_array_equal(vec[0].numpy(), X)
    assert [v.shape() for v in vec] == [[2, 3], [2]]
    with pytest.raises(IndexError):
        vec[5]
    with pytest.raises(IndexError):
        vec.element_type_at(7)
    with pytest.raises(TypeError):
        vec.push_back(3)


def test_check_and_normalize_provider_args(rt):
    mod = importlib.import_module(_pkg(rt) + ".capi.onnxruntime_inference_collection")
    f = mod.check_and_normalize_provider_args
    avail = ["CPUExecutionProvider"]
    assert f(None, None, avail) == ([], [])
    assert f(["CPUExecutionProvider"], None, avail) == (["CPUExecutionProvider"], [{}])
    assert f([("CPUExecutionProvider", {"a": 1, 2: True})], None, avail) == \
        (["CPUExecutionProvider"], [{"a": "1", "2": "True"}])
    assert f(["CPUExecutionProvider"], [{"x": 1.5}], avail) == (["CPUExecutionProvider"], [{"x": "1.5"}])
    with pytest.warns(UserWarning, match="Specified provider 'FooEP' is not in available provider names"):
        assert f(["FooEP"], None, avail) == (["FooEP"], [{}])
    with pytest.warns(UserWarning, match="Duplicate provider 'CPUExecutionProvider' encountered, ignoring."):
        assert f([("CPUExecutionProvider", {"a": "1"}), "CPUExecutionProvider"], None, avail) == \
            (["CPUExecutionProvider"], [{"a": "1"}])
    bad = [
        (({"CPUExecutionProvider"}, None), "'providers' should be a sequence."),
        ((["CPUExecutionProvider"], {"a": 1}), "'provider_options' should be a sequence."),
        ((["CPUExecutionProvider"], [{}, {}]),
         "'providers' and 'provider_options' should be the same length if both are given."),
        (([("CPUExecutionProvider", {})], [{}]),
         "Only string values for 'providers' are supported if 'provider_options' is given."),
        ((["CPUExecutionProvider"], ["x"]), "'provider_options' values must be dicts."),
        (([("CPUExecutionProvider",)], None), "'providers' values must be either strings or (string, dict) tuples."),
        (([3], None), "'providers' values must be either strings or (string, dict) tuples."),
    ]
    for args, text in bad:
        with pytest.raises(ValueError) as e:
            f(*args, avail)
        assert str(e.value) == text


# ---- 2. OrtValue --------------------------------------------------------------

def test_tensor_size_in_bytes(rt):
    OV = rt.OrtValue
    assert OV.ortvalue_from_numpy(X).tensor_size_in_bytes() == 24
    assert OV.ortvalue_from_numpy(np.zeros((0, 3), np.float32)).tensor_size_in_bytes() == 0
    assert OV.ortvalue_from_numpy(np.zeros(5, bool)).tensor_size_in_bytes() == 5
    assert OV.ortvalue_from_numpy(np.zeros(3, np.float64)).tensor_size_in_bytes() == 24
    assert OV.ortvalue_from_shape_and_type([5], TensorProto.INT4).tensor_size_in_bytes() == 3
    assert OV.ortvalue_from_shape_and_type([2, 2], TensorProto.BFLOAT16).tensor_size_in_bytes() == 8


def test_array_protocol_shares_memory(rt):
    x = X.copy()
    v = rt.OrtValue.ortvalue_from_numpy(x)
    a = np.asarray(v)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert a.__array_interface__["data"][0] == v.data_ptr()
    assert np.asarray(v, copy=False).__array_interface__["data"][0] == v.data_ptr()
    c = np.array(v)  # np.array copies by default
    assert c.__array_interface__["data"][0] != v.data_ptr()
    np.testing.assert_array_equal(c, x)
    d = np.asarray(v, dtype=np.float64)
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, x.astype(np.float64))
    assert type(v._get_c_value()).__name__ == "OrtValue"


@pytest.mark.parametrize("onnx_type,array,expect", [
    (TensorProto.FLOAT16, np.array([0x3F80, 0x4000], np.uint16), np.array([1.875, 2.0], np.float16)),
    (TensorProto.FLOAT, np.array([1], np.uint32), np.array([1], np.uint32).view(np.float32)),
    (TensorProto.FLOAT16, np.zeros(3, dtype="V2"), np.zeros(3, np.float16)),
    (TensorProto.FLOAT, np.frombuffer(np.array([1, 2, 3], np.float32).tobytes(), dtype="V4"),
     np.array([1, 2, 3], np.float32)),
])
def test_from_numpy_with_onnx_type_reinterprets_bytes(rt, onnx_type, array, expect):
    v = rt.OrtValue.ortvalue_from_numpy_with_onnx_type(array, onnx_type)
    assert v.element_type() == onnx_type
    assert v.shape() == list(array.shape)
    assert v.data_ptr() == array.ctypes.data  # no copy
    np.testing.assert_array_equal(v.numpy(), expect)


@pytest.mark.parametrize("onnx_type,array", [
    (TensorProto.BFLOAT16, np.array([0x3F80, 0x4000], np.uint16)),
    (TensorProto.BFLOAT16, np.zeros(3, dtype="V2")),
    (TensorProto.FLOAT8E4M3FN, np.array([0x38, 0x40], np.uint8)),
    (TensorProto.FLOAT8E5M2, np.zeros(4, dtype="V1")),
    (TensorProto.INT4, np.array([0x21, 0x43], np.uint8)),
])
def test_from_numpy_with_onnx_type_types_numpy_lacks(rt, onnx_type, array):
    v = rt.OrtValue.ortvalue_from_numpy_with_onnx_type(array, onnx_type)
    assert v.element_type() == onnx_type
    assert v.shape() == list(array.shape)
    assert v.data_ptr() == array.ctypes.data
    if not is_ort(rt):
        # onnxruntime has no numpy type for these (RuntimeError); ml_dtypes
        # gives onyxruntime one, and the bits must be the array's.
        out = v.numpy()
        if onnx_type != TensorProto.INT4:
            assert out.tobytes() == array.tobytes()
        else:
            np.testing.assert_array_equal(out.astype(np.int8), [1, 2])  # the first byte, low nibble first


def test_from_numpy_with_onnx_type_runs(rt):
    # A bfloat16 value made from uint16 bits feeds a model's bfloat16 input.
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["Y"], to=TensorProto.FLOAT)], "g",
        [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    bits = np.array([0x3F80, 0xC040], np.uint16)  # 1.0, -3.0
    v = rt.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, TensorProto.BFLOAT16)
    np.testing.assert_array_equal(sess.run(None, {"X": v})[0], [1.0, -3.0])


def test_from_numpy_with_onnx_type_bad_input(rt):
    f = rt.OrtValue.ortvalue_from_numpy_with_onnx_type
    with pytest.raises(RuntimeError, match="Items size in the incoming array: 4 specified by onnxtype: 2"):
        f(X, TensorProto.BFLOAT16)
    with pytest.raises(RuntimeError, match="Items size in the incoming array: 3 specified by onnxtype: 2"):
        f(np.zeros(3, dtype="V3"), TensorProto.BFLOAT16)
    with pytest.raises(RuntimeError, match="Not a valid ONNX Tensor data type: 99"):
        f(np.zeros(2, np.uint16), 99)
    with pytest.raises(RuntimeError, match="tensor type 0 is not supported"):
        f(np.zeros(2, np.uint16), 0)
    with pytest.raises(TypeError):
        f([1, 2], TensorProto.BFLOAT16)
    with pytest.raises(RuntimeError):
        f(np.array(["a"]), TensorProto.STRING)


def test_void_array_refused_where_onnxruntime_refuses_it(rt):
    # Without an ONNX type a void array means nothing: both refuse it.
    with pytest.raises(RuntimeError):
        rt.OrtValue.ortvalue_from_numpy(np.zeros(3, dtype="V2"))


# ---- 3. RunOptions config entries ---------------------------------------------

def test_run_config_entries(rt):
    ro = rt.RunOptions()
    ro.add_run_config_entry("foo.bar", "1")
    assert ro.get_run_config_entry("foo.bar") == "1"
    ro.add_run_config_entry("foo.bar", "2")  # overwritten
    assert ro.get_run_config_entry("foo.bar") == "2"
    ro.add_run_config_entry("k" * 1024, "v" * 5000)
    assert ro.get_run_config_entry("k" * 1024) == "v" * 5000
    with pytest.raises(RuntimeError) as e:
        ro.get_run_config_entry("nope")
    assert str(e.value) == "RunOptions does not have configuration with key: nope"
    for key in ["", "k" * 1025]:
        with pytest.raises(RuntimeError) as e:
            ro.add_run_config_entry(key, "v")
        assert str(e.value) == "Config key is empty or longer than maximum length 1024"
    with pytest.raises(TypeError):
        ro.add_run_config_entry(1, "b")
    if is_ort(rt):
        # onnxruntime ignores keys it does not know.
        out = _session(rt).run(None, {"X": X}, ro)[0]
        np.testing.assert_array_equal(out, np.maximum(X, 0))
    else:
        # Refused by name rather than dropped (a misspelt key would be); the
        # session stays usable.
        sess = _session(rt)
        with pytest.raises(Exception, match="run config entry '(foo.bar|k+)' is not a key onnxruntime or this engine "
                                            "defines"):
            sess.run(None, {"X": X}, ro)
        np.testing.assert_array_equal(sess.run(None, {"X": X})[0], np.maximum(X, 0))


@pytest.mark.parametrize("value", ["cpu:0", "", "cpu", "cpu:0;cpu:0"])
def test_arena_shrinkage_key_accepted(rt, value):
    ro = rt.RunOptions()
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", value)
    sess = _session(rt)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(None, {"X": X}, ro)[0], np.maximum(X, 0))


@pytest.mark.parametrize("value,text", [
    ("gpu:0", "Did not find an arena based allocator registered for device-id combination in the memory arena "
              "shrink list: gpu:0"),
    ("cpu:1", "Did not find an arena based allocator registered for device-id combination in the memory arena "
              "shrink list: cpu:1"),
    ("cuda:0", "Unsupported device specified in the memory arena shrink list: cuda"),
    ("bogus:1", "Unsupported device specified in the memory arena shrink list: bogus"),
])
def test_arena_shrinkage_bad_device(rt, value, text):
    ro = rt.RunOptions()
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", value)
    sess = _session(rt)
    C = importlib.import_module(_pkg(rt) + ".capi._pybind_state")
    with pytest.raises(C.InvalidArgument) as e:
        sess.run(None, {"X": X}, ro)
    assert text in str(e.value)
    # The session stays usable.
    np.testing.assert_array_equal(sess.run(None, {"X": X})[0], np.maximum(X, 0))


# ---- 3. run_async ---------------------------------------------------------------

class _Waiter:
    def __init__(self):
        self.event = threading.Event()
        self.calls = []

    def __call__(self, results, user_data, err):
        self.calls.append((results, user_data, err, threading.current_thread() is threading.main_thread()))
        self.event.set()

    def wait(self):
        assert self.event.wait(30), "run_async callback never came"
        self.event.clear()
        return self.calls[-1]


def test_run_async_delivers_results_on_another_thread(rt):
    sess = _session(rt, threads=2)
    w = _Waiter()
    data = {"tag": 1}
    assert sess.run_async(None, {"X": X}, w, data) is None
    results, user_data, err, on_main = w.wait()
    assert err == ""
    assert user_data is data
    assert not on_main
    assert len(results) == 1
    np.testing.assert_array_equal(results[0], np.maximum(X, 0))
    # With output names, an OrtValue feed and run options.
    ro = rt.RunOptions()
    ro.logid = "async"
    sess.run_async(["Y"], {"X": rt.OrtValue.ortvalue_from_numpy(X)}, w, 7, ro)
    results, user_data, err, _ = w.wait()
    assert (err, user_data) == ("", 7)
    np.testing.assert_array_equal(results[0], np.maximum(X, 0))


def test_run_async_many_at_once(rt):
    sess = _session(rt, threads=3)
    lock = threading.Lock()
    got = {}
    done = threading.Event()
    n = 16

    def cb(results, i, err):
        with lock:
            got[i] = (results, err)
            if len(got) == n:
                done.set()

    for i in range(n):
        sess.run_async(None, {"X": X * i}, cb, i)
    assert done.wait(60)
    for i in range(n):
        results, err = got[i]
        assert err == ""
        np.testing.assert_array_equal(results[0], np.maximum(X * i, 0))


def test_run_async_errors_reach_the_callback(rt):
    sess = _session(rt, threads=2)
    w = _Waiter()
    sess.run_async(["Y"], {"X": X.astype(np.float64)}, w, 42)
    results, user_data, err, _ = w.wait()
    assert results == [] and user_data == 42
    assert "Unexpected input data type. Actual: (tensor(double)) , expected: (tensor(float))" in err
    sess.run_async(["Z"], {"X": X}, w, 43)
    results, user_data, err, _ = w.wait()
    assert (results, user_data, err) == ([], 43, "Invalid output name: Z")
    # The session stays usable.
    sess.run_async(None, {"X": X}, w, 44)
    results, _, err, _ = w.wait()
    assert err == ""
    np.testing.assert_array_equal(results[0], np.maximum(X, 0))


def test_run_async_bad_arguments_raise(rt):
    sess = _session(rt, threads=2)
    w = _Waiter()
    with pytest.raises(ValueError, match=r"Required inputs \(\['X'\]\) are missing from input feed \(\[\]\)."):
        sess.run_async(["Y"], {}, w, None)
    C = importlib.import_module(_pkg(rt) + ".capi._pybind_state")
    one = _session(rt, threads=1)
    with pytest.raises(C.InvalidArgument, match="intra op thread pool must have at least one thread for RunAsync"):
        one.run_async(["Y"], {"X": X}, w, None)
    assert w.calls == []
    np.testing.assert_array_equal(one.run(None, {"X": X})[0], np.maximum(X, 0))


def test_run_async_session_dropped_before_callback(rt):
    # The session object may go away while its run is in flight: the run
    # still completes and the callback still comes.
    w = _Waiter()
    sess = _session(rt, threads=2)
    sess.run_async(None, {"X": X}, w, "gone")
    del sess
    results, user_data, err, _ = w.wait()
    assert (user_data, err) == ("gone", "")
    np.testing.assert_array_equal(results[0], np.maximum(X, 0))


# ---- 3. memory infos and OrtDevice ------------------------------------------------

def test_memory_infos(rt):
    sess = _session(rt)
    ins, outs = sess.get_input_memory_infos(), sess.get_output_memory_infos()
    assert len(ins) == 1 and len(outs) == 1
    for mi in ins + outs:
        assert mi.name == "Cpu"
        assert mi.device_id == 0
        assert int(mi.mem_type) == 0
        assert int(mi.allocator_type) == int(rt.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    so = rt.SessionOptions()
    so.enable_cpu_mem_arena = False
    sess = rt.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
    assert int(sess.get_input_memory_infos()[0].allocator_type) == int(rt.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)


def test_ort_device(rt):
    d = rt.OrtDevice.make("cpu", 0)
    assert (d.device_type(), d.device_id(), d.device_mem_type(), d.device_vendor_id()) == (0, 0, 0, 0)
    d = rt.OrtDevice.make("cuda", 1)
    assert (d.device_type(), d.device_id(), d.device_vendor_id()) == (1, 1, 0x10DE)
    d = rt.OrtDevice.make("gpu", 2)
    assert (d.device_type(), d.device_id(), d.device_vendor_id()) == (1, 2, 0)
    d = rt.OrtDevice.make("gpu", 0, 0x8086)
    assert d.device_vendor_id() == 0x8086
    assert rt.OrtDevice.make("npu", 0).device_type() == 3
    assert rt.OrtDevice.make("dml", 0).device_vendor_id() == 0x1414
    for bad in ["foo", "CPU"]:
        with pytest.raises(Exception) as e:
            rt.OrtDevice.make(bad, 0)
        assert str(e.value) == "Unsupported device type: " + bad
    with pytest.raises(ValueError, match="needs to be of type"):
        rt.OrtDevice(3)


# ---- 4. messages -----------------------------------------------------------------

def test_unknown_provider_message(rt):
    sess = _session(rt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for providers in (["FooProvider"], ["CPUExecutionProvider", "FooProvider"]):
            with pytest.raises(RuntimeError) as e:
                sess.set_providers(providers)
            assert str(e.value) == "Unknown Provider Type: FooProvider"
        if not is_ort(rt):
            # onnxruntime leaves the session without its C object after a
            # failed set_providers (run raises AttributeError); onyxruntime
            # keeps the previous session.
            np.testing.assert_array_equal(sess.run(None, {"X": X})[0], np.maximum(X, 0))
        with pytest.raises(RuntimeError, match="Unknown Provider Type: FooProvider"):
            rt.InferenceSession(MODEL, providers=["FooProvider"], enable_fallback=0) if not is_ort(rt) else \
                sess.set_providers(["FooProvider"])


def test_build_info(rt):
    info = rt.get_build_info()
    assert "Build Info: " in info and "build type=" in info
    if not is_ort(rt):
        assert info.startswith("Build Info: ")
